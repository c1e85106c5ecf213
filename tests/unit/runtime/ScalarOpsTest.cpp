//===- ScalarOpsTest.cpp - runtime/ScalarOps.h against independent references ===//
//
// The functions every back end's ops mean (the CUDA prelude embeds them) are
// checked here as host code: integer ops against 128-bit arithmetic, floats
// against the IEEE cases they must get right.
//
//===----------------------------------------------------------------------===//

#include "runtime/ScalarOps.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace {

constexpr int64_t Min = std::numeric_limits<int64_t>::min();
constexpr int64_t Max = std::numeric_limits<int64_t>::max();

const std::vector<int64_t> &interesting() {
  static const std::vector<int64_t> values = {
      Min, Min + 1, -1000000007, -7, -3, -2, -1, 0, 1, 2, 3, 7, 64, 1000000007, Max - 1, Max};
  return values;
}

/// Wraps a 128-bit value to int64_t (two's complement).
int64_t wrap(__int128 value) { return int64_t(uint64_t((unsigned __int128)value)); }

__int128 floorDiv128(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

TEST(ScalarOps, FloorDivisionIsPythonsWithZeroForZeroDivisors) {
  for (int64_t a : interesting())
    for (int64_t b : interesting()) {
      int64_t want = b == 0 ? 0 : wrap(floorDiv128(a, b));
      EXPECT_EQ(mdl_floordiv(a, b), want) << a << " / " << b;
    }
  EXPECT_EQ(mdl_floordiv(-7, 2), -4);
  EXPECT_EQ(mdl_floordiv(7, -2), -4);
  EXPECT_EQ(mdl_floordiv(Min, -1), Min);
}

TEST(ScalarOps, RemainderHasTheDivisorsSignAndNeverTraps) {
  for (int64_t a : interesting())
    for (int64_t b : interesting()) {
      int64_t want = b == 0 ? 0 : wrap(__int128(a) - floorDiv128(a, b) * __int128(b));
      EXPECT_EQ(mdl_irem(a, b), want) << a << " % " << b;
      // a == (a / b) * b + a % b, wrapping, wherever b != 0.
      if (b != 0) {
        EXPECT_EQ(uint64_t(mdl_floordiv(a, b)) * uint64_t(b) + uint64_t(mdl_irem(a, b)),
                  uint64_t(a));
      }
    }
  EXPECT_EQ(mdl_irem(-7, 3), 2);
  EXPECT_EQ(mdl_irem(7, -3), -2);
  EXPECT_EQ(mdl_irem(Min, -1), 0);
}

TEST(ScalarOps, IntegerPowerWrapsAndHandlesNegativeExponents) {
  for (int64_t base : interesting())
    for (int64_t exponent = 0; exponent <= 130; ++exponent) {
      unsigned __int128 want = 1;
      for (int64_t i = 0; i < exponent; ++i)
        want = (want * (unsigned __int128)(uint64_t)base) & ~uint64_t(0);
      EXPECT_EQ(mdl_ipow(base, exponent), int64_t(uint64_t(want))) << base << " ** " << exponent;
    }
  EXPECT_EQ(mdl_ipow(1, -5), 1);
  EXPECT_EQ(mdl_ipow(-1, -5), -1);
  EXPECT_EQ(mdl_ipow(-1, -4), 1);
  EXPECT_EQ(mdl_ipow(0, -1), 0);
  EXPECT_EQ(mdl_ipow(2, -1), 0);
  EXPECT_NE(mdl_ipow(3, Max), 0) << "an odd power is odd, also wrapped";
  EXPECT_EQ(mdl_ipow(-1, Max), -1);
  EXPECT_EQ(mdl_ipow(2, Max), 0);
}

TEST(ScalarOps, NegationAndAbsWrap) {
  EXPECT_EQ(mdl_ineg(Min), Min);
  EXPECT_EQ(mdl_iabs(Min), Min);
  EXPECT_EQ(mdl_ineg(5), -5);
  EXPECT_EQ(mdl_iabs(-5), 5);
  // A narrower type's result is the cast of the 64-bit one.
  EXPECT_EQ(int32_t(mdl_ineg(std::numeric_limits<int32_t>::min())),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(int32_t(mdl_floordiv(std::numeric_limits<int32_t>::min(), -1)),
            std::numeric_limits<int32_t>::min());
}

TEST(ScalarOps, FloatMaxMinPropagateNanAndOrderZeros) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(mdl_max(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(mdl_max(1.0f, nan)));
  EXPECT_TRUE(std::isnan(mdl_min(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(mdl_min(1.0, double(nan))));
  EXPECT_FALSE(std::signbit(mdl_max(-0.0f, 0.0f)));
  EXPECT_FALSE(std::signbit(mdl_max(0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(mdl_min(0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(mdl_min(-0.0, 0.0)));
  EXPECT_EQ(mdl_max(2.0f, -3.0f), 2.0f);
  EXPECT_EQ(mdl_min(2.0f, -3.0f), -3.0f);
}

TEST(ScalarOps, FloatRemainderHasTheDivisorsSign) {
  EXPECT_EQ(mdl_rem(-7.0f, 3.0f), 2.0f);
  EXPECT_EQ(mdl_rem(7.0f, -3.0f), -2.0f);
  EXPECT_EQ(mdl_rem(7.5, 2.0), 1.5);
  constexpr double Inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(mdl_rem(-3.5, Inf), Inf); // Python: -3.5 % inf == inf
  EXPECT_TRUE(std::isnan(mdl_rem(1.0f, 0.0f)));
}

TEST(ScalarOps, GeluSiluSigmoid) {
  for (double x : {-4.0, -1.0, -0.25, 0.0, 0.5, 3.0}) {
    EXPECT_NEAR(mdl_gelu(x), 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))), 1e-15);
    EXPECT_NEAR(mdl_gelu(float(x)), 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))), 1e-6);
    EXPECT_NEAR(mdl_sigmoid(x), 1 / (1 + std::exp(-x)), 1e-15);
    EXPECT_NEAR(mdl_silu(float(x)), x / (1 + std::exp(-x)), 1e-6);
  }
}

TEST(ScalarOps, RandnIsAStandardNormalOfSeedAndIndexOnly) {
  uint32_t seed = mdl_randn_seed(5);
  EXPECT_EQ(seed, uint32_t(5u * 0x9E3779B9u + 0x85EBCA6Bu));
  double sum = 0, squares = 0;
  constexpr int N = 200000;
  for (int i = 0; i < N; ++i) {
    float v = mdl_randn(seed, i);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    squares += double(v) * v;
  }
  double mean = sum / N, variance = squares / N - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(variance, 1.0, 0.02);
  EXPECT_EQ(mdl_randn(seed, 12345), mdl_randn(seed, 12345));
  EXPECT_NE(mdl_randn(seed, 1), mdl_randn(mdl_randn_seed(6), 1));
}

} // namespace
