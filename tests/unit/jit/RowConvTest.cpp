//===- RowConvTest.cpp - modelc's own row conv against a float64 conv -----===//
//
// RowConv.h's kernel called directly, on the AVX-512 tiles and on the
// portable loops: LeNet's first conv, rows wider than one tile (several
// column chunks), output channels split into unequal tiles, accumulation,
// activations in the tile (ReLU) and after it (GELU), strided input and
// weight views, and the fused max pooling (2x2 on its vector path, 3x3 on
// the loops) with NaN propagating through it.
//
//===----------------------------------------------------------------------===//

#include "jit/RowConv.h"

#include "JitTestUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace modelc::jit;

namespace {

struct Case {
  int64_t batch, channels, height, width, outChannels, kh, kw, pad[2];
  bool accumulate;
  bool bias;
  EpilogueStep activation;        // End: none
  int64_t poolKernel, poolStride; // 0: no pooling
  /// Reads the input and the weights through views with these element
  /// strides along W and KW (1: contiguous).
  int64_t inputWStride = 1, weightWStride = 1;

  int64_t outHeight() const { return height + 2 * pad[0] - kh + 1; }
  int64_t outWidth() const { return width + 2 * pad[1] - kw + 1; }
  int64_t pooledHeight() const { return (outHeight() - poolKernel) / poolStride + 1; }
  int64_t pooledWidth() const { return (outWidth() - poolKernel) / poolStride + 1; }
};

float activate(EpilogueStep step, double x) {
  if (step == EpilogueStep::End)
    return float(x);
  return applyActivation(step, float(x));
}

float maxNan(float a, float b) { return std::isnan(a) || a > b ? a : b; }

/// Runs `c` through rowConv and compares every written element with the
/// conv computed in double. `nanAt` >= 0 puts a NaN into that input element.
void expectConv(const Case &c, unsigned seed, int64_t nanAt = -1) {
  int64_t oh = c.outHeight(), ow = c.outWidth();
  std::vector<float> x(size_t(c.batch * c.channels * c.height * c.width * c.inputWStride)),
      w(size_t(c.outChannels * c.channels * c.kh * c.kw * c.weightWStride)),
      bias(size_t(c.outChannels)), out(size_t(c.batch * c.outChannels * oh * ow));
  test::fillRandom(x, seed);
  test::fillRandom(w, seed + 1);
  test::fillRandom(bias, seed + 2);
  test::fillRandom(out, seed + 3);
  if (nanAt >= 0)
    x[size_t(nanAt * c.inputWStride)] = std::numeric_limits<float>::quiet_NaN();
  auto xAt = [&](int64_t n, int64_t ch, int64_t y, int64_t col) {
    return x[size_t((((n * c.channels + ch) * c.height + y) * c.width + col) * c.inputWStride)];
  };
  auto wAt = [&](int64_t o, int64_t ch, int64_t i, int64_t j) {
    return w[size_t((((o * c.channels + ch) * c.kh + i) * c.kw + j) * c.weightWStride)];
  };
  std::vector<float> expected(out.size());
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o = 0; o < c.outChannels; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t col = 0; col < ow; ++col) {
          size_t at = size_t(((n * c.outChannels + o) * oh + y) * ow + col);
          double sum = c.accumulate ? out[at] : 0.0;
          for (int64_t ch = 0; ch < c.channels; ++ch)
            for (int64_t i = 0; i < c.kh; ++i)
              for (int64_t j = 0; j < c.kw; ++j) {
                int64_t iy = y + i - c.pad[0], ix = col + j - c.pad[1];
                if (iy >= 0 && iy < c.height && ix >= 0 && ix < c.width)
                  sum += double(xAt(n, ch, iy, ix)) * wAt(o, ch, i, j);
              }
          if (c.bias)
            sum += bias[size_t(o)];
          expected[at] = activate(c.activation, sum);
        }

  RowConvProblem p;
  p.input = {x.data(),
             {c.batch, c.channels, c.height, c.width},
             {c.channels * c.height * c.width * c.inputWStride, c.height * c.width * c.inputWStride,
              c.width * c.inputWStride, c.inputWStride}};
  p.weight = {w.data(),
              {c.outChannels, c.channels, c.kh, c.kw},
              {c.channels * c.kh * c.kw * c.weightWStride, c.kh * c.kw * c.weightWStride,
               c.kw * c.weightWStride, c.weightWStride}};
  p.output = {
      out.data(), {c.batch, c.outChannels, oh, ow}, {c.outChannels * oh * ow, oh * ow, ow, 1}};
  p.pad[0] = c.pad[0];
  p.pad[1] = c.pad[1];
  p.accumulate = c.accumulate;
  p.bias = c.bias ? bias.data() : nullptr;
  if (c.activation != EpilogueStep::End) {
    p.activations.steps[0] = c.activation;
    p.activations.stepCount = 1;
  }
  std::vector<float> pooled;
  if (c.poolKernel > 0) {
    int64_t ph = c.pooledHeight(), pw = c.pooledWidth();
    pooled.assign(size_t(c.batch * c.outChannels * ph * pw), -7.0f);
    p.poolKernel[0] = p.poolKernel[1] = c.poolKernel;
    p.poolStride[0] = p.poolStride[1] = c.poolStride;
    p.pooled = {
        pooled.data(), {c.batch, c.outChannels, ph, pw}, {c.outChannels * ph * pw, ph * pw, pw, 1}};
    p.output.data = nullptr; // only its dims are read
  }
  ASSERT_TRUE(rowConvApplies(p));
  rowConv(p);

  if (c.poolKernel == 0) {
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_NEAR(out[i], expected[i], 1e-5f * (1.0f + std::fabs(expected[i]))) << "at " << i;
    return;
  }
  int64_t ph = c.pooledHeight(), pw = c.pooledWidth();
  int nans = 0;
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o = 0; o < c.outChannels; ++o)
      for (int64_t y = 0; y < ph; ++y)
        for (int64_t col = 0; col < pw; ++col) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t i = 0; i < c.poolKernel; ++i)
            for (int64_t j = 0; j < c.poolKernel; ++j)
              best = maxNan(
                  best, expected[size_t(((n * c.outChannels + o) * oh + y * c.poolStride + i) * ow +
                                        col * c.poolStride + j)]);
          float got = pooled[size_t(((n * c.outChannels + o) * ph + y) * pw + col)];
          if (std::isnan(best)) {
            ++nans;
            ASSERT_TRUE(std::isnan(got))
                << "pooled (" << n << ", " << o << ", " << y << ", " << col << ") is " << got;
            continue;
          }
          ASSERT_NEAR(got, best, 1e-5f * (1.0f + std::fabs(best)))
              << "pooled (" << n << ", " << o << ", " << y << ", " << col << ")";
        }
  if (nanAt >= 0) {
    EXPECT_GT(nans, 0) << "the NaN reached no pooled output";
  }
}

class RowConvTest : public test::BothIsasTest {};

constexpr EpilogueStep kNone = EpilogueStep::End, kRelu = EpilogueStep::Relu,
                       kGelu = EpilogueStep::Gelu;

TEST_P(RowConvTest, LeNetFirstConv) {
  expectConv({3, 1, 28, 28, 6, 5, 5, {2, 2}, false, true, kRelu, 0, 0}, 1);
}

// 70 columns: a 64-column chunk and a 6-column one; 8 output channels: two
// tiles of 4; 11: tiles of 6 and 5.
TEST_P(RowConvTest, WideRowsAndUnequalChannelTiles) {
  expectConv({2, 3, 5, 70, 8, 3, 3, {1, 1}, false, false, kNone, 0, 0}, 5);
  expectConv({1, 2, 6, 17, 11, 3, 2, {0, 1}, false, true, kNone, 0, 0}, 9);
}

TEST_P(RowConvTest, AccumulatesAndAppliesActivationsAfterTheTile) {
  expectConv({2, 3, 7, 9, 5, 3, 3, {1, 1}, true, true, kGelu, 0, 0}, 13);
  expectConv({2, 3, 7, 9, 5, 3, 3, {1, 1}, true, false, kRelu, 0, 0}, 17);
}

TEST_P(RowConvTest, StridedInputAndWeightViews) {
  Case c{2, 3, 8, 12, 7, 3, 3, {1, 1}, false, true, kRelu, 0, 0};
  c.inputWStride = 2;
  c.weightWStride = 3;
  expectConv(c, 21);
}

// 2x2 stride 2 on the vector path (a conv width of 27 leaves an odd column
// out; 40 pooled columns take a full and a partial vector), 3x3 stride 2 on
// the loops; a NaN in the input reaches the pooled outputs over it.
TEST_P(RowConvTest, FusedMaxPooling) {
  expectConv({3, 1, 28, 27, 6, 5, 5, {2, 2}, false, true, kRelu, 2, 2}, 25);
  expectConv({2, 2, 10, 82, 4, 3, 3, {1, 1}, false, true, kNone, 2, 2}, 29);
  expectConv({2, 3, 11, 13, 5, 3, 3, {0, 0}, false, false, kGelu, 3, 2}, 33);
  expectConv({2, 1, 28, 28, 6, 5, 5, {2, 2}, false, true, kNone, 2, 2}, 37, /*nanAt=*/300);
  expectConv({2, 3, 11, 13, 5, 3, 3, {0, 0}, false, false, kNone, 3, 2}, 41, /*nanAt=*/50);
}

TEST(RowConvAppliesTest, OnlyUnitStridesUndilatedAndUnitStrideRows) {
  std::vector<float> data(4096);
  RowConvProblem p;
  p.input = {data.data(), {1, 2, 8, 8}, {128, 64, 8, 1}};
  p.weight = {data.data(), {4, 2, 3, 3}, {18, 9, 3, 1}};
  p.output = {data.data(), {1, 4, 6, 6}, {144, 36, 6, 1}};
  EXPECT_TRUE(rowConvApplies(p));
  RowConvProblem strided = p;
  strided.stride[1] = 2;
  EXPECT_FALSE(rowConvApplies(strided));
  RowConvProblem dilated = p;
  dilated.dilation[0] = 2;
  EXPECT_FALSE(rowConvApplies(dilated));
  RowConvProblem columnMajor = p;
  columnMajor.output.strides[3] = 6;
  EXPECT_FALSE(rowConvApplies(columnMajor));
  RowConvProblem wrongExtent = p;
  wrongExtent.output.sizes[3] = 5;
  EXPECT_FALSE(rowConvApplies(wrongExtent));
  RowConvProblem pooledAccumulating = p;
  pooledAccumulating.accumulate = true;
  pooledAccumulating.poolKernel[0] = pooledAccumulating.poolKernel[1] = 2;
  pooledAccumulating.poolStride[0] = pooledAccumulating.poolStride[1] = 2;
  pooledAccumulating.pooled = {data.data(), {1, 4, 3, 3}, {36, 9, 3, 1}};
  EXPECT_FALSE(rowConvApplies(pooledAccumulating));
  pooledAccumulating.accumulate = false;
  EXPECT_TRUE(rowConvApplies(pooledAccumulating));
  pooledAccumulating.pooled.sizes[3] = 4; // windows past the conv's width
  EXPECT_FALSE(rowConvApplies(pooledAccumulating));
}

} // namespace

INSTANTIATE_TEST_SUITE_P(BothIsas, RowConvTest, ::testing::Values(false, true), test::isaName);
