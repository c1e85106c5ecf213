//===- ScalarOps.h - What each mdl op computes on one element ---*- C++ -*-===//
//
// The scalar meaning of mdl's elementwise ops, written once for every back
// end. The CUDA prelude (compiler/cudagen/KernelSource.cpp) embeds this file
// verbatim, so NVRTC and the CPU emulator compile exactly these functions into
// every kernel; the cpu back end (compiler/lower/ElementwiseLowering.cpp)
// builds the same computation from arith ops and is held to these functions
// by tests (tests/unit/runtime/ScalarOpsTest.cpp against independent
// references, tests/lit/cuda/semantics.test cpu against emulated GPU).
// MdlOps.td documents each op's meaning with a pointer here.
//
// Plain C++ that compiles as host code, as NVRTC device code and against
// runtime/cuda/emulator/cuda_emulation.h. Integer functions take and return
// int64_t; a narrower type's result is the int64_t result cast back, which
// wraps exactly as the same computation in the narrower type would.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_SCALAROPS_H
#define MODELC_RUNTIME_SCALAROPS_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define MDL_SCALAR static __host__ __device__ __forceinline__
#else
#include <math.h>
#include <stdint.h>
#define MDL_SCALAR static inline
#endif

// Integer `/`: floor division (Python's `//`), so a == (a / b) * b + a % b.
// x / 0 is 0 and MIN / -1 wraps to MIN: bad data must not kill the process.
MDL_SCALAR int64_t mdl_floordiv(int64_t a, int64_t b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return (int64_t)(0ull - (uint64_t)a);
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Integer `%`: Python's modulo, the result has the sign of the divisor.
// x % 0 is 0 (as x / 0) and x % -1 is 0 (MIN % -1 included: C's % traps).
MDL_SCALAR int64_t mdl_irem(int64_t a, int64_t b) {
  if (b == 0 || b == -1)
    return 0;
  int64_t r = a % b;
  return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

// Float `%`: fmod adjusted to the sign of the divisor (Python's %).
MDL_SCALAR float mdl_rem(float a, float b) {
  float r = fmodf(a, b);
  return r != 0.0f && ((r < 0.0f) != (b < 0.0f)) ? r + b : r;
}
MDL_SCALAR double mdl_rem(double a, double b) {
  double r = fmod(a, b);
  return r != 0.0 && ((r < 0.0) != (b < 0.0)) ? r + b : r;
}

// Integer `**`: repeated multiplication, wrapping; a negative exponent gives
// the integer part of 1 / base^-e: 1 for base 1, +-1 for base -1, else 0
// (0 ** -n included: no trap).
MDL_SCALAR int64_t mdl_ipow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return base == 1 ? 1 : (base == -1 ? ((exponent & 1) ? -1 : 1) : 0);
  uint64_t result = 1, factor = (uint64_t)base;
  for (; exponent > 0; exponent >>= 1, factor *= factor)
    if (exponent & 1)
      result *= factor;
  return (int64_t)result;
}

// Integer `-x` and `abs(x)`: two's complement, so -MIN and abs(MIN) are MIN.
MDL_SCALAR int64_t mdl_ineg(int64_t x) { return (int64_t)(0ull - (uint64_t)x); }
MDL_SCALAR int64_t mdl_iabs(int64_t x) { return x < 0 ? mdl_ineg(x) : x; }

// Float `max`/`min` (and relu = max(x, 0)): NaN propagates and -0 < +0, as
// PyTorch's maximum/minimum and LLVM's maximumf/minimumf.
MDL_SCALAR float mdl_max(float a, float b) {
  return a != a ? a : (b != b ? b : (a > b ? a : (b > a ? b : (signbit(a) ? b : a))));
}
MDL_SCALAR double mdl_max(double a, double b) {
  return a != a ? a : (b != b ? b : (a > b ? a : (b > a ? b : (signbit(a) ? b : a))));
}
MDL_SCALAR float mdl_min(float a, float b) {
  return a != a ? a : (b != b ? b : (a < b ? a : (b < a ? b : (signbit(a) ? a : b))));
}
MDL_SCALAR double mdl_min(double a, double b) {
  return a != a ? a : (b != b ? b : (a < b ? a : (b < a ? b : (signbit(a) ? a : b))));
}

// sigmoid(x) = 1 / (1 + exp(-x)); silu(x) = x * sigmoid(x).
MDL_SCALAR float mdl_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
MDL_SCALAR double mdl_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
MDL_SCALAR float mdl_silu(float x) { return x * mdl_sigmoid(x); }
MDL_SCALAR double mdl_silu(double x) { return x * mdl_sigmoid(x); }

// gelu: the exact (erf) form, (0.5 x)(1 + erf(x / sqrt 2)), PyTorch's default.
MDL_SCALAR float mdl_gelu(float x) {
  return (0.5f * x) * (1.0f + erff(x * 0.70710678118654752440f));
}
MDL_SCALAR double mdl_gelu(double x) { return (0.5 * x) * (1.0 + erf(x * 0.70710678118654752440)); }
// gelu with approximate="tanh" (no mdl op reaches it yet).
MDL_SCALAR float mdl_gelu_tanh(float x) {
  return (0.5f * x) * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}
MDL_SCALAR double mdl_gelu_tanh(double x) {
  return (0.5 * x) * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

// randn: a pure function of (seed, row-major element index), independent of
// how the work is scheduled. The seed is mixed once (mdl_randn_seed); each
// element hashes (2i) and (2i + 1) with lowbias32, takes the top 24 bits of
// each as a uniform in (0, 1] and draws sqrt(-2 ln u1) * cos(2 pi u2) in f32
// (Box-Muller).
MDL_SCALAR uint32_t mdl_randn_seed(int64_t seed) {
  return (uint32_t)seed * 0x9E3779B9u + 0x85EBCA6Bu;
}
MDL_SCALAR uint32_t mdl_hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
MDL_SCALAR float mdl_uniform(uint32_t hash) {
  return ((float)(hash >> 8) + 1.0f) * (1.0f / 16777216.0f);
}
MDL_SCALAR float mdl_randn(uint32_t mixedSeed, int64_t index) {
  uint32_t twice = (uint32_t)index << 1;
  float radius = sqrtf(-2.0f * logf(mdl_uniform(mdl_hash32(twice ^ mixedSeed))));
  float angle = 6.28318530717958647692f * mdl_uniform(mdl_hash32((twice | 1u) ^ mixedSeed));
  return radius * cosf(angle);
}

#undef MDL_SCALAR

#endif // MODELC_RUNTIME_SCALAROPS_H
