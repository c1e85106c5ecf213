//===- JitNNTest.cpp - JIT numerics of the neural-network primitives ------===//

#include "JitTestUtils.h"

#include <numeric>

using namespace modelc::jit;
using namespace modelc::jit::test;

namespace {

TEST(JitNNTest, GroupedStridedPaddedConv2dWithBias) {
  // input [1, 4, 5, 5], weight [6, 2, 3, 3], groups 2, stride 2, padding 1.
  auto module = compileOrFail(R"mlir(
func.func @conv(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>)
    -> tensor<1x6x3x3xf32> {
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>,
                              dilation = array<i64: 1, 1>, groups = 2}
      : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>
  return %0 : tensor<1x6x3x3xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 4> x({1, 4, 5, 5}), w({6, 2, 3, 3}), y({1, 6, 3, 3});
  OwnedMemRef<float, 1> b({6});
  fillRandom(x.values(), 20);
  fillRandom(w.values(), 21);
  fillRandom(b.values(), 22);
  ASSERT_FALSE(module->call("conv", {x.get(), w.get(), b.get(), y.get()}));

  std::vector<float> expected(6 * 9);
  for (int oc = 0; oc < 6; ++oc)
    for (int oh = 0; oh < 3; ++oh)
      for (int ow = 0; ow < 3; ++ow) {
        float acc = b[oc];
        int group = oc / 3;
        for (int c = 0; c < 2; ++c)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int ih = oh * 2 - 1 + kh, iw = ow * 2 - 1 + kw;
              if (ih < 0 || ih >= 5 || iw < 0 || iw >= 5)
                continue;
              int ic = group * 2 + c;
              acc += x[(ic * 5 + ih) * 5 + iw] * w[((oc * 2 + c) * 3 + kh) * 3 + kw];
            }
        expected[(oc * 3 + oh) * 3 + ow] = acc;
      }
  expectNear(y.values(), expected, 1e-5f);
}

/// Direct NCHW convolution with zero padding.
std::vector<float> referenceConv(const std::vector<float> &x, const std::vector<float> &w,
                                 const std::vector<float> &bias, int n, int c, int h, int wd, int o,
                                 int k, int stride, int pad, int dil, int oh, int ow) {
  std::vector<float> y(static_cast<size_t>(n * o * oh * ow));
  for (int b = 0; b < n; ++b)
    for (int oc = 0; oc < o; ++oc)
      for (int i = 0; i < oh; ++i)
        for (int j = 0; j < ow; ++j) {
          float acc = bias[oc];
          for (int ic = 0; ic < c; ++ic)
            for (int kh = 0; kh < k; ++kh)
              for (int kw = 0; kw < k; ++kw) {
                int ih = i * stride - pad + kh * dil, iw = j * stride - pad + kw * dil;
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd)
                  continue;
                acc += x[((b * c + ic) * h + ih) * wd + iw] * w[((oc * c + ic) * k + kh) * k + kw];
              }
          y[((b * o + oc) * oh + i) * ow + j] = acc;
        }
  return y;
}

// Ungrouped: lowered as im2col + matmul (OpenBLAS), with a dynamic batch.
TEST(JitNNTest, DilatedConv2dThroughMatmul) {
  auto module = compileOrFail(R"mlir(
func.func @conv(%x: tensor<?x3x9x9xf32>, %w: tensor<5x3x3x3xf32>, %b: tensor<5xf32>)
    -> tensor<?x5x7x7xf32> {
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
                              dilation = array<i64: 2, 2>, groups = 1}
      : (tensor<?x3x9x9xf32>, tensor<5x3x3x3xf32>, tensor<5xf32>) -> tensor<?x5x7x7xf32>
  return %0 : tensor<?x5x7x7xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 4> x({2, 3, 9, 9}), w({5, 3, 3, 3}), y({2, 5, 7, 7});
  OwnedMemRef<float, 1> b({5});
  fillRandom(x.values(), 23);
  fillRandom(w.values(), 24);
  fillRandom(b.values(), 25);
  ASSERT_FALSE(module->call("conv", {x.get(), w.get(), b.get(), y.get()}));
  expectNear(y.values(),
             referenceConv(x.values(), w.values(), b.values(), 2, 3, 9, 9, 5, 3, 1, 1, 2, 7, 7),
             1e-5f);
}

TEST(JitNNTest, MaxAndAveragePooling) {
  auto module = compileOrFail(R"mlir(
func.func @maxp(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = mdl.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>,
                          padding = array<i64: 0, 0>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
func.func @avgp(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x1x1xf32> {
  %0 = mdl.adaptive_avg_pool2d %x : tensor<1x1x4x4xf32> -> tensor<1x1x1x1xf32>
  return %0 : tensor<1x1x1x1xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 4> x({1, 1, 4, 4}), maxOut({1, 1, 2, 2}), avgOut({1, 1, 1, 1});
  std::iota(x.values().begin(), x.values().end(), 0.0f);
  ASSERT_FALSE(module->call("maxp", {x.get(), maxOut.get()}));
  ASSERT_FALSE(module->call("avgp", {x.get(), avgOut.get()}));
  expectNear(maxOut.values(), {5, 7, 13, 15}, 0);
  expectNear(avgOut.values(), {7.5f}, 1e-6f);
}

TEST(JitNNTest, LayerNormOverLastDim) {
  auto module = compileOrFail(R"mlir(
func.func @ln(%x: tensor<?x6xf32>, %w: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<?x6xf32> {
  %0 = mdl.layer_norm %x weight %w bias %b {normalized_rank = 1, epsilon = 1.0e-5}
      : (tensor<?x6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({3, 6}), y({3, 6});
  OwnedMemRef<float, 1> w({6}), b({6});
  fillRandom(x.values(), 30);
  fillRandom(w.values(), 31);
  fillRandom(b.values(), 32);
  ASSERT_FALSE(module->call("ln", {x.get(), w.get(), b.get(), y.get()}));
  std::vector<float> expected(18);
  for (int i = 0; i < 3; ++i) {
    double mean = 0, var = 0;
    for (int j = 0; j < 6; ++j)
      mean += x[i * 6 + j] / 6.0;
    for (int j = 0; j < 6; ++j)
      var += (x[i * 6 + j] - mean) * (x[i * 6 + j] - mean) / 6.0;
    for (int j = 0; j < 6; ++j)
      expected[i * 6 + j] =
          static_cast<float>((x[i * 6 + j] - mean) / std::sqrt(var + 1e-5) * w[j] + b[j]);
  }
  expectNear(y.values(), expected, 1e-5f);
}

TEST(JitNNTest, SoftmaxAlongDimZeroAndLogSoftmax) {
  auto module = compileOrFail(R"mlir(
func.func @sm(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0 = mdl.softmax %x {dim = 0} : tensor<3x2xf32>
  %1 = mdl.log_softmax %x {dim = 1} : tensor<3x2xf32>
  return %0, %1 : tensor<3x2xf32>, tensor<3x2xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({3, 2}), s({3, 2}), ls({3, 2});
  x.values() = {1, 2, 3, 4, 5, 100};
  ASSERT_FALSE(module->call("sm", {x.get(), s.get(), ls.get()}));
  float d0 = std::exp(1.0f) + std::exp(3.0f) + std::exp(5.0f);
  EXPECT_NEAR(s[0], std::exp(1.0f) / d0, 1e-6f);
  EXPECT_NEAR(s[4], std::exp(5.0f) / d0, 1e-6f);
  EXPECT_NEAR(s[5], 1.0f, 1e-6f); // exp(100) overflows without the max shift
  EXPECT_NEAR(ls[0], 1.0f - std::log(std::exp(1.0f) + std::exp(2.0f)), 1e-5f);
  EXPECT_NEAR(ls[4], -95.0f, 1e-4f);
}

TEST(JitNNTest, ReductionsWithKeepdimAndGelu) {
  auto module = compileOrFail(R"mlir(
func.func @r(%x: tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>) {
  %0 = mdl.mean %x {dims = array<i64: 1>, keepdim = true} : tensor<2x3xf32> -> tensor<2x1xf32>
  %1 = mdl.reduce_max %x {dims = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  %2 = mdl.gelu %x : tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x1xf32>, tensor<3xf32>, tensor<2x3xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({2, 3}), mean({2, 1}), gelu({2, 3});
  OwnedMemRef<float, 1> max({3});
  x.values() = {1, -2, 3, 4, 5, -6};
  ASSERT_FALSE(module->call("r", {x.get(), mean.get(), max.get(), gelu.get()}));
  expectNear(mean.values(), {2.0f / 3.0f, 1.0f}, 1e-6f);
  expectNear(max.values(), {4, 5, 3}, 0);
  for (int i = 0; i < 6; ++i)
    EXPECT_NEAR(gelu[i], 0.5f * x[i] * (1.0f + std::erf(x[i] / std::sqrt(2.0f))), 1e-5f);
}

TEST(JitNNTest, EmbeddingAndWeightedCrossEntropy) {
  auto module = compileOrFail(R"mlir(
func.func @emb(%w: tensor<4x2xf32>, %i: tensor<3xi64>) -> tensor<3x2xf32> {
  %0 = mdl.embedding %w, %i : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @ce(%x: tensor<2x3xf32>, %t: tensor<2xi64>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = mdl.cross_entropy %x, %t weight %w : (tensor<2x3xf32>, tensor<2xi64>, tensor<3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> w({4, 2}), e({3, 2});
  OwnedMemRef<int64_t, 1> idx({3});
  w.values() = {0, 1, 10, 11, 20, 21, 30, 31};
  idx.values() = {3, 0, 2};
  ASSERT_FALSE(module->call("emb", {w.get(), idx.get(), e.get()}));
  expectNear(e.values(), {30, 31, 0, 1, 20, 21}, 0);

  OwnedMemRef<float, 2> x({2, 3});
  OwnedMemRef<int64_t, 1> t({2});
  OwnedMemRef<float, 1> cw({3});
  OwnedMemRef<float, 0> loss;
  x.values() = {1, 2, 3, 0.5f, -1, 2};
  t.values() = {2, 0};
  cw.values() = {2, 1, 0.5f};
  ASSERT_FALSE(module->call("ce", {x.get(), t.get(), cw.get(), loss.get()}));
  auto logProb = [&](int row, int cls) {
    float sum = 0;
    for (int j = 0; j < 3; ++j)
      sum += std::exp(x[row * 3 + j]);
    return x[row * 3 + cls] - std::log(sum);
  };
  float expected = -(0.5f * logProb(0, 2) + 2.0f * logProb(1, 0)) / (0.5f + 2.0f);
  EXPECT_NEAR(loss[0], expected, 1e-5f);
}

TEST(JitNNTest, ShapeOpsConcatTransposeReshape) {
  auto module = compileOrFail(R"mlir(
func.func @s(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<4x2xf32> {
  %0 = mdl.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %1 = mdl.transpose %0 {dim0 = 0, dim1 = 1} : tensor<2x4xf32> -> tensor<4x2xf32>
  %2 = mdl.reshape %1 : tensor<4x2xf32> -> tensor<8xf32>
  %3 = mdl.reshape %2 : tensor<8xf32> -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> a({2, 3}), b({2, 1}), out({4, 2});
  a.values() = {1, 2, 3, 4, 5, 6};
  b.values() = {7, 8};
  ASSERT_FALSE(module->call("s", {a.get(), b.get(), out.get()}));
  expectNear(out.values(), {1, 4, 2, 5, 3, 6, 7, 8}, 0);
}

TEST(JitNNTest, RandnIsDeterministicAndStandardNormal) {
  auto module = compileOrFail(R"mlir(
func.func @r(%n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = mdl.randn(%n) {seed = 7} : tensor<?xf32>
  %1 = mdl.randn(%n) {seed = 7} : tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
)mlir");
  ASSERT_TRUE(module);
  // An index argument is passed by value: the packed call takes its address.
  const int64_t n = 20000;
  OwnedMemRef<float, 1> first({n}), second({n});
  auto fn = module->lookup("r");
  ASSERT_TRUE(static_cast<bool>(fn)) << llvm::toString(fn.takeError());
  using Fn = void (*)(int64_t, StridedMemRefType<float, 1> *, StridedMemRefType<float, 1> *);
  reinterpret_cast<Fn> (*fn)(n, first.get(), second.get());
  EXPECT_EQ(first.values(), second.values());
  double mean = 0, sq = 0;
  for (float v : first.values()) {
    mean += v / n;
    sq += double(v) * v / n;
  }
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(std::sqrt(sq - mean * mean), 1.0, 0.03);
}

} // namespace
