//===- LtReference.h - What cublasLtMatmul computes, in float64 -*- C++ -*-===//
//
// One strided-batched cuBLASLt product on host memory, the reference the
// fake libcublasLt (FakeCublasLt.cpp) runs and the tests that stand in for
// cuBLASLt on the emulator (tests/unit/cudagen/ExamplesTest.cpp) call:
//
//   D[i] = act(alpha * op(A[i]) op(B[i]) + beta * C[i] + bias),  i < batch
//
// column-major, every element of type CUDA_R_32F, CUDA_R_16F or
// CUDA_R_16BF (runtime/HalfConversions.h rounds), the epilogue as a
// cublasLtEpilogue_t value (GELU is cuBLASLt's tanh approximation), f32
// inputs rounded to TF32 first when `tf32`.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_TESTS_UNIT_CUDA_LTREFERENCE_H
#define MODELC_TESTS_UNIT_CUDA_LTREFERENCE_H

#include "runtime/HalfConversions.h"
#include "runtime/cuda/CublasLtApi.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace modelc::fake {

/// A strided-batched matrix in memory: element (row, col) of batch b is at
/// base + (b * stride + col * ld + row) elements.
struct LtMatrixView {
  int type = cuda::blaslt::CUDA_R_32F;
  uint64_t base = 0;
  int64_t ld = 0, stride = 0;
};

inline size_t ltElementSize(int type) { return type == cuda::blaslt::CUDA_R_32F ? 4 : 2; }

inline double ltLoad(int type, uint64_t base, int64_t index) {
  const char *p = reinterpret_cast<const char *>(uintptr_t(base)) + index * ltElementSize(type);
  if (type == cuda::blaslt::CUDA_R_32F) {
    float value;
    std::memcpy(&value, p, 4);
    return value;
  }
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return type == cuda::blaslt::CUDA_R_16F ? mdl_f16_bits_to_float(bits)
                                          : mdl_bf16_bits_to_float(bits);
}

inline void ltStore(int type, uint64_t base, int64_t index, double value) {
  char *p = reinterpret_cast<char *>(uintptr_t(base)) + index * ltElementSize(type);
  float narrowed = float(value);
  if (type == cuda::blaslt::CUDA_R_32F) {
    std::memcpy(p, &narrowed, 4);
    return;
  }
  uint16_t bits = type == cuda::blaslt::CUDA_R_16F ? mdl_float_to_f16_bits(narrowed)
                                                   : mdl_float_to_bf16_bits(narrowed);
  std::memcpy(p, &bits, 2);
}

/// cvt.rna.tf32.f32: nearest with a 10-bit mantissa, ties away from zero.
inline double ltToTf32(double value) {
  float x = float(value);
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7f800000u) != 0x7f800000u)
    bits = (bits + 0x1000u) & 0xffffe000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

inline double ltGeluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/// D = act(alpha * op(A) op(B) + beta * C + bias) for `batch` matrices of
/// m x n (op(A) m x k); C is read only when beta != 0, the bias (m values of
/// `biasType`) only with a bias epilogue.
inline void computeLtProduct(bool transA, bool transB, uint64_t m, uint64_t n, uint64_t k,
                             int64_t batch, const LtMatrixView &a, const LtMatrixView &b,
                             const LtMatrixView &c, const LtMatrixView &d, double alpha,
                             double beta, uint64_t bias, int biasType, uint32_t epilogue,
                             bool tf32) {
  using namespace cuda::blaslt;
  auto input = [&](const LtMatrixView &x, int64_t i, uint64_t row, uint64_t col) {
    double value = ltLoad(x.type, x.base, i * x.stride + int64_t(col) * x.ld + int64_t(row));
    return tf32 ? ltToTf32(value) : value;
  };
  bool addBias = epilogue & uint32_t(CUBLASLT_EPILOGUE_BIAS);
  uint32_t activation = epilogue & ~uint32_t(CUBLASLT_EPILOGUE_BIAS);
  for (int64_t i = 0; i < batch; ++i)
    for (uint64_t row = 0; row < m; ++row)
      for (uint64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (uint64_t p = 0; p < k; ++p)
          sum += (transA ? input(a, i, p, row) : input(a, i, row, p)) *
                 (transB ? input(b, i, col, p) : input(b, i, p, col));
        double value = alpha * sum;
        if (beta != 0)
          value += beta * ltLoad(c.type, c.base, i * c.stride + int64_t(col) * c.ld + int64_t(row));
        if (addBias)
          value += ltLoad(biasType, bias, int64_t(row));
        if (activation == uint32_t(CUBLASLT_EPILOGUE_RELU))
          value = value > 0 ? value : 0;
        else if (activation == uint32_t(CUBLASLT_EPILOGUE_GELU))
          value = ltGeluTanh(value);
        ltStore(d.type, d.base, i * d.stride + int64_t(col) * d.ld + int64_t(row), value);
      }
}

} // namespace modelc::fake

#endif // MODELC_TESTS_UNIT_CUDA_LTREFERENCE_H
