//===- Float16.cpp - IEEE half and bfloat16 <-> float conversions ---------===//
//
// Bit-level conversions: a tensor of millions of elements is converted in a
// loop, so these avoid llvm::APFloat (the unit tests check them against
// APFloat for every 16-bit pattern). The bit manipulation itself is
// runtime/HalfConversions.h, which the generated CUDA code embeds too, so
// the cpu and every GPU (emulated or real) round the same way.
//
//===----------------------------------------------------------------------===//
#include "runtime/Float16.h"

#include "runtime/HalfConversions.h"

namespace modelc::runtime {

float halfBitsToFloat(uint16_t bits) { return mdl_f16_bits_to_float(bits); }

uint16_t floatToHalfBits(float value) { return mdl_float_to_f16_bits(value); }

float bfloat16BitsToFloat(uint16_t bits) { return mdl_bf16_bits_to_float(bits); }

uint16_t floatToBFloat16Bits(float value) { return mdl_float_to_bf16_bits(value); }

} // namespace modelc::runtime
