//===- HalfConversions.h - f16/bf16 <-> f32 bit conversions -----*- C++ -*-===//
//
// The one definition of how f16 and bf16 bits widen to float and how a float
// rounds to them, for every back end: the cpu runtime (runtime/Float16.cpp
// calls these), and every generated CUDA translation unit, whose prelude
// (compiler/cudagen/KernelSource.cpp) embeds this file verbatim, so NVRTC and
// the CPU emulator compile exactly these functions. Widening is exact;
// narrowing rounds to nearest, ties to even (as PyTorch's and CUDA's
// __float2half_rn / __float2bfloat16_rn); NaN stays a quiet NaN with its top
// payload bits, infinities and signed zeros are kept, floats too large for
// f16 become infinity.
//
// Plain C++ that compiles as host code, as NVRTC device code and against
// runtime/cuda/emulator/cuda_emulation.h (integer arithmetic only, no
// hardware conversion instructions: the emulator and the GPU give the same
// bits).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_HALFCONVERSIONS_H
#define MODELC_RUNTIME_HALFCONVERSIONS_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define MDL_HALF_FN static __host__ __device__ __forceinline__
#define MDL_FLOAT_BITS(x) __float_as_uint(x)
#define MDL_BITS_FLOAT(x) __uint_as_float(x)
#elif defined(MODELC_CUDA_EMULATION_H)
#define MDL_HALF_FN static inline
#define MDL_FLOAT_BITS(x) __float_as_uint(x)
#define MDL_BITS_FLOAT(x) __uint_as_float(x)
#else
#include <stdint.h>
#include <string.h>
static inline uint32_t mdl_float_bits(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits;
}
static inline float mdl_bits_float(uint32_t bits) {
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}
#define MDL_HALF_FN static inline
#define MDL_FLOAT_BITS(x) mdl_float_bits(x)
#define MDL_BITS_FLOAT(x) mdl_bits_float(x)
#endif

// IEEE binary16 bits to float, exact (subnormals included).
MDL_HALF_FN float mdl_f16_bits_to_float(uint16_t bits) {
  uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) // infinity or NaN; the payload moves up unchanged
    return MDL_BITS_FLOAT(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in float
    float magnitude = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -magnitude : magnitude;
  }
  // normal: rebias the exponent from 15 to 127
  return MDL_BITS_FLOAT(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// float to IEEE binary16 bits, round to nearest even; too large is infinity.
MDL_HALF_FN uint16_t mdl_float_to_f16_bits(float value) {
  uint32_t bits = MDL_FLOAT_BITS(value);
  uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: keep the top payload bits, force quiet
    return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  // 65520 is halfway between 65504 (the largest half) and 2^16; the tie goes
  // to the even neighbour, infinity.
  if (magnitude >= 0x477ff000u)
    return (uint16_t)(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) { // normal half range, >= 2^-14
    uint32_t rebiased = magnitude - 0x38000000u;
    rebiased += 0xfffu + ((rebiased >> 13) & 1u); // round to nearest even
    return (uint16_t)(sign | (rebiased >> 13));
  }
  // at most 2^-25, half the smallest subnormal: the tie goes to zero
  if (magnitude <= 0x33000000u)
    return sign;
  // subnormal half: count units of 2^-24, rounding to nearest even
  uint32_t exponent = magnitude >> 23; // 102 ... 112
  uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent; // 14 ... 24
  uint32_t units = significand >> shift;
  uint32_t remainder = significand & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (units & 1u)))
    ++units;
  return (uint16_t)(sign | units);
}

// bfloat16 bits to float, exact: bf16 is the top half of a float.
MDL_HALF_FN float mdl_bf16_bits_to_float(uint16_t bits) {
  return MDL_BITS_FLOAT((uint32_t)bits << 16);
}

// float to bfloat16 bits, round to nearest even.
MDL_HALF_FN uint16_t mdl_float_to_bf16_bits(float value) {
  uint32_t bits = MDL_FLOAT_BITS(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: truncate, force quiet
    return (uint16_t)((bits >> 16) | 0x0040u);
  bits += 0x7fffu + ((bits >> 16) & 1u); // round to nearest even
  return (uint16_t)(bits >> 16);
}

#undef MDL_HALF_FN
#undef MDL_FLOAT_BITS
#undef MDL_BITS_FLOAT

#endif // MODELC_RUNTIME_HALFCONVERSIONS_H
