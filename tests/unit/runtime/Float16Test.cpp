//===- Float16Test.cpp - f16/bf16 conversions against llvm::APFloat -------===//
#include "runtime/Float16.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

using namespace modelc::runtime;
using llvm::APFloat;
using llvm::APInt;

namespace {

float widenWithAPFloat(const llvm::fltSemantics &semantics, uint16_t bits) {
  APFloat value(semantics, APInt(16, bits));
  bool losesInfo = false;
  value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &losesInfo);
  return value.convertToFloat();
}

uint16_t narrowWithAPFloat(const llvm::fltSemantics &semantics, float input) {
  APFloat value(input);
  bool losesInfo = false;
  value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
  return uint16_t(value.bitcastToAPInt().getZExtValue());
}

/// Every 16-bit pattern widens exactly as APFloat widens it.
void checkAllWidenings(float (*widen)(uint16_t), const llvm::fltSemantics &semantics) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float ours = widen(uint16_t(bits));
    float reference = widenWithAPFloat(semantics, uint16_t(bits));
    if (std::isnan(reference)) {
      ASSERT_TRUE(std::isnan(ours)) << "bits " << bits;
      ASSERT_EQ(std::signbit(ours), std::signbit(reference)) << "bits " << bits;
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(ours), std::bit_cast<uint32_t>(reference))
          << "bits " << bits;
    }
  }
}

/// Narrowing matches APFloat's round-to-nearest-even on a spread of float
/// patterns (every 4099th one) and on every float within 8 ulps of each
/// 16-bit value and of each midpoint between neighbours, where rounding is
/// decided.
void checkNarrowings(uint16_t (*narrow)(float), float (*widen)(uint16_t),
                     const llvm::fltSemantics &semantics) {
  auto check = [&](uint32_t floatBits) {
    float input = std::bit_cast<float>(floatBits);
    uint16_t ours = narrow(input);
    if (std::isnan(input)) {
      ASSERT_TRUE(std::isnan(widen(ours))) << "float bits " << floatBits;
      return;
    }
    ASSERT_EQ(ours, narrowWithAPFloat(semantics, input)) << "float bits " << floatBits;
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099)
    check(uint32_t(bits));
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = widen(uint16_t(bits));
    if (!std::isfinite(value))
      continue;
    float next = widen(uint16_t(bits + 1));
    uint32_t centres[] = {std::bit_cast<uint32_t>(value),
                          std::bit_cast<uint32_t>(float((double(value) + double(next)) / 2))};
    for (uint32_t centre : centres)
      for (uint32_t delta = 0; delta < 8; ++delta) {
        check(centre + delta);
        check(centre - delta);
      }
  }
}

} // namespace

TEST(Float16Test, HalfWidensExactlyForEveryPattern) {
  checkAllWidenings(halfBitsToFloat, APFloat::IEEEhalf());
}

TEST(Float16Test, BFloat16WidensExactlyForEveryPattern) {
  checkAllWidenings(bfloat16BitsToFloat, APFloat::BFloat());
}

TEST(Float16Test, HalfNarrowingRoundsToNearestEven) {
  checkNarrowings(floatToHalfBits, halfBitsToFloat, APFloat::IEEEhalf());
}

TEST(Float16Test, BFloat16NarrowingRoundsToNearestEven) {
  checkNarrowings(floatToBFloat16Bits, bfloat16BitsToFloat, APFloat::BFloat());
}

TEST(Float16Test, HalfEdgeCases) {
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);   // Largest finite half.
  EXPECT_EQ(floatToHalfBits(65519.996f), 0x7bff); // Just below the midpoint.
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00);   // The midpoint rounds to infinity.
  EXPECT_EQ(floatToHalfBits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001); // Smallest subnormal.
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000); // Tie to even: zero.
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14)), 0x0400); // Smallest normal.
  EXPECT_EQ(halfBitsToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfBitsToFloat(0xc000), -2.0f);
  uint16_t nan = floatToHalfBits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(halfBitsToFloat(nan)));
  // A signalling NaN whose payload lives only in the low bits stays NaN.
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(std::bit_cast<float>(0x7f800001u)))));
}

TEST(Float16Test, BFloat16EdgeCases) {
  EXPECT_EQ(floatToBFloat16Bits(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16BitsToFloat(0x3f80), 1.0f);
  EXPECT_EQ(floatToBFloat16Bits(std::numeric_limits<float>::max()), 0x7f80); // Rounds up to inf.
  EXPECT_TRUE(
      std::isnan(bfloat16BitsToFloat(floatToBFloat16Bits(std::bit_cast<float>(0x7f800001u)))));
  EXPECT_EQ(floatToBFloat16Bits(-0.0f), 0x8000);
}
