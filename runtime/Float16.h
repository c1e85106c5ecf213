//===- Float16.h - IEEE half and bfloat16 <-> float conversions -*- C++ -*-===//
//
// The runtime stores f16 and bf16 elements as their raw 16-bit patterns.
// These conversions are exact in the widening direction and round to
// nearest, ties to even, in the narrowing direction; NaN stays NaN (quiet)
// and infinities and signed zeros are preserved.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_FLOAT16_H
#define MODELC_RUNTIME_FLOAT16_H

#include <cstdint>

namespace modelc::runtime {

/// Widens IEEE 754 binary16 bits to a float (exact, subnormals included).
float halfBitsToFloat(uint16_t bits);
/// Narrows a float to IEEE 754 binary16 bits, round to nearest even;
/// values too large for half become infinity.
uint16_t floatToHalfBits(float value);

/// Widens bfloat16 bits to a float (exact: bf16 is the top half of a float).
float bfloat16BitsToFloat(uint16_t bits);
/// Narrows a float to bfloat16 bits, round to nearest even.
uint16_t floatToBFloat16Bits(float value);

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_FLOAT16_H
