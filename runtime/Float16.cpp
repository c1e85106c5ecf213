//===- Float16.cpp - IEEE half and bfloat16 <-> float conversions ---------===//
//
// Bit-level conversions: a tensor of millions of elements is converted in a
// loop, so these avoid llvm::APFloat (the unit tests check them against
// APFloat for every 16-bit pattern).
//
//===----------------------------------------------------------------------===//
#include "runtime/Float16.h"

#include <bit>
#include <cmath>

namespace modelc::runtime {

float halfBitsToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) // Infinity or NaN; the payload moves up unchanged.
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) { // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  // Normal: rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToHalfBits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  auto sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffffu;

  if (magnitude > 0x7f800000u) // NaN: keep the top payload bits, force quiet.
    return sign | 0x7e00 | uint16_t((magnitude >> 13) & 0x3ff);
  // 65520 is halfway between 65504 (largest half) and 2^16; ties go to the
  // even neighbour, which is infinity.
  if (magnitude >= 0x477ff000u)
    return sign | 0x7c00;
  if (magnitude >= 0x38800000u) { // Normal half range, >= 2^-14.
    uint32_t rebiased = magnitude - 0x38000000u;
    rebiased += 0xfff + ((rebiased >> 13) & 1); // Round to nearest even.
    return sign | uint16_t(rebiased >> 13);
  }
  // At most 2^-25, half the smallest subnormal: ties to even give zero.
  if (magnitude <= 0x33000000u)
    return sign;
  // Subnormal half: count units of 2^-24, rounding to nearest even.
  uint32_t exponent = magnitude >> 23; // 102 ... 112
  uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - exponent; // 14 ... 24
  uint32_t units = significand >> shift;
  uint32_t remainder = significand & ((1u << shift) - 1);
  uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (units & 1)))
    ++units;
  return sign | uint16_t(units);
}

float bfloat16BitsToFloat(uint16_t bits) { return std::bit_cast<float>(uint32_t(bits) << 16); }

uint16_t floatToBFloat16Bits(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: truncate and force quiet.
    return uint16_t((bits >> 16) | 0x0040);
  bits += 0x7fff + ((bits >> 16) & 1); // Round to nearest even.
  return uint16_t(bits >> 16);
}

} // namespace modelc::runtime
