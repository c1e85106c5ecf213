//===- FakeCublasLt.h - What the fake cuBLASLt records ---------*- C++ -*-===//
//
// The calls tests/unit/cuda/FakeCublasLt.cpp was given, as plain data: the
// descriptors it saw, so tests check what modelc asked cuBLASLt for as well
// as the numbers it computed. Read with modelc_fake_cublaslt_last() and
// modelc_fake_cublaslt_matmuls() (looked up with dlsym).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_TESTS_UNIT_CUDA_FAKECUBLASLT_H
#define MODELC_TESTS_UNIT_CUDA_FAKECUBLASLT_H

#include <cstddef>
#include <cstdint>

namespace modelc::fake {

/// One cublasLtMatmul call, as enqueued.
struct LtCall {
  int computeType = 0, scaleType = 0;
  int transA = 0, transB = 0;
  uint32_t epilogue = 0;
  int biasType = -1;
  int aType = 0, bType = 0, cType = 0, dType = 0;
  uint64_t aRows = 0, aCols = 0, bRows = 0, bCols = 0, cRows = 0, cCols = 0;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0, strideD = 0;
  float alpha = 0, beta = 0;
  uint64_t a = 0, b = 0, c = 0, d = 0, bias = 0, workspace = 0;
  size_t workspaceBytes = 0;
  uint64_t algorithm = 0; ///< the heuristic's rank of the algorithm used
  void *stream = nullptr;
  bool captured = false; ///< enqueued while its stream was being captured
};

} // namespace modelc::fake

#endif // MODELC_TESTS_UNIT_CUDA_FAKECUBLASLT_H
