//===- ConvRuntimeTest.cpp - modelc_conv2d against a direct convolution ---===//
//
// Calls the runtime entry point compiled convs use (oneDNN when built with
// it) with descriptors built here, and compares with a convolution computed
// in the test.
//
//===----------------------------------------------------------------------===//

#include "jit/ConvRuntime.h"

#include "JitTestUtils.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <thread>

using namespace modelc::jit;
using namespace modelc::jit::test;

namespace {

struct ConvCase {
  int64_t batch, groups, inPerGroup, height, width, outPerGroup, kh, kw;
  int64_t stride[2], pad[2], dilation[2];

  int64_t channels() const { return groups * inPerGroup; }
  int64_t outChannels() const { return groups * outPerGroup; }
  int64_t outExtent(int d, int64_t in, int64_t k) const {
    return (in + 2 * pad[d] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
  }
  int64_t outHeight() const { return outExtent(0, height, kh); }
  int64_t outWidth() const { return outExtent(1, width, kw); }
};

/// y[n, o, i, j] = init[n, o, i, j] + sum over the group's input channels and
/// the window, zero outside the input. All arrays contiguous NCHW / OIHW.
std::vector<float> directConv(const ConvCase &cc, const std::vector<float> &x,
                              const std::vector<float> &w, std::vector<float> y) {
  int64_t oh = cc.outHeight(), ow = cc.outWidth();
  for (int64_t n = 0; n < cc.batch; ++n)
    for (int64_t o = 0; o < cc.outChannels(); ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          int64_t group = o / cc.outPerGroup;
          for (int64_t c = 0; c < cc.inPerGroup; ++c)
            for (int64_t a = 0; a < cc.kh; ++a)
              for (int64_t b = 0; b < cc.kw; ++b) {
                int64_t ih = i * cc.stride[0] - cc.pad[0] + a * cc.dilation[0];
                int64_t iw = j * cc.stride[1] - cc.pad[1] + b * cc.dilation[1];
                if (ih < 0 || ih >= cc.height || iw < 0 || iw >= cc.width)
                  continue;
                int64_t ic = group * cc.inPerGroup + c;
                acc += double(x[((n * cc.channels() + ic) * cc.height + ih) * cc.width + iw]) *
                       w[((o * cc.inPerGroup + c) * cc.kh + a) * cc.kw + b];
              }
          y[((n * cc.outChannels() + o) * oh + i) * ow + j] += float(acc);
        }
  return y;
}

template <int Rank> UnrankedMemRefType<float> unranked(OwnedMemRef<float, Rank> &m) {
  return {Rank, m.get()};
}

/// Calls the runtime entry point as compiled code does.
template <int Rank>
void callConv(OwnedMemRef<float, Rank> &in, OwnedMemRef<float, Rank> &w,
              OwnedMemRef<float, Rank> &out, const ConvCase &cc) {
  auto inU = unranked(in), wU = unranked(w), outU = unranked(out);
  modelc_conv2d_ciface(&inU, &wU, &outU, cc.stride[0], cc.stride[1], cc.pad[0], cc.pad[1],
                       cc.dilation[0], cc.dilation[1]);
}

/// Runs the runtime on contiguous operands (rank 4, or rank 5 when grouped)
/// with `init` in the output, and compares with directConv.
void checkConv(const ConvCase &cc, bool withInit, float tolerance = 1e-4f) {
  int64_t oh = cc.outHeight(), ow = cc.outWidth();
  // Grouped operands are rank 5: [N, G, C/G, H, W], [G, O/G, C/G, KH, KW].
  OwnedMemRef<float, 5> x({cc.batch, cc.groups, cc.inPerGroup, cc.height, cc.width}),
      w({cc.groups, cc.outPerGroup, cc.inPerGroup, cc.kh, cc.kw}),
      y({cc.batch, cc.groups, cc.outPerGroup, oh, ow});
  fillRandom(x.values(), 1);
  fillRandom(w.values(), 2);
  if (withInit)
    fillRandom(y.values(), 3); // a bias broadcast in compiled code; anything here
  std::vector<float> expected = directConv(cc, x.values(), w.values(), y.values());
  if (cc.groups != 1) {
    callConv(x, w, y, cc);
  } else {
    // One group: the same data as rank 4.
    OwnedMemRef<float, 4> x4({cc.batch, cc.channels(), cc.height, cc.width}),
        w4({cc.outChannels(), cc.inPerGroup, cc.kh, cc.kw}),
        y4({cc.batch, cc.outChannels(), oh, ow});
    x4.values() = x.values();
    w4.values() = w.values();
    y4.values() = y.values();
    callConv(x4, w4, y4, cc);
    y.values() = y4.values();
  }
  expectNear(y.values(), expected, tolerance);
}

TEST(ConvRuntimeTest, PlainUnitStride) {
  checkConv({2, 1, 3, 8, 8, 4, 3, 3, {1, 1}, {0, 0}, {1, 1}}, false);
}

TEST(ConvRuntimeTest, AccumulatesIntoTheOutput) {
  checkConv({2, 1, 3, 8, 8, 4, 3, 3, {1, 1}, {0, 0}, {1, 1}}, true);
}

TEST(ConvRuntimeTest, PaddedStridedOddSizes) {
  checkConv({3, 1, 5, 11, 7, 7, 3, 5, {2, 3}, {1, 2}, {1, 1}}, true);
}

TEST(ConvRuntimeTest, Dilated) {
  checkConv({1, 1, 2, 13, 9, 3, 3, 3, {1, 1}, {2, 1}, {2, 3}}, true);
}

TEST(ConvRuntimeTest, Grouped) {
  checkConv({2, 3, 2, 9, 9, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}}, true);
}

TEST(ConvRuntimeTest, DepthwiseStridedDilated) {
  checkConv({2, 8, 1, 10, 12, 1, 3, 3, {2, 2}, {2, 2}, {2, 2}}, false);
}

TEST(ConvRuntimeTest, LeNetShapesAtBatch64) {
  checkConv({64, 1, 1, 32, 32, 6, 5, 5, {1, 1}, {0, 0}, {1, 1}}, true);
  checkConv({64, 1, 6, 14, 14, 16, 5, 5, {1, 1}, {0, 0}, {1, 1}}, true);
}

// modelc_conv2d_epilogue: padding given to the primitive, the bias as its
// bias, the output overwritten (NaNs in it must not leak), then ReLU or
// GELU as post-ops; and with kConvAccumulate, the old output added first.
TEST(ConvRuntimeTest, EpilogueBiasActivationOverwriteOrAccumulate) {
  for (bool accumulate : {false, true})
    for (int64_t activation : {int64_t(2), int64_t(3)})     // ReLU, GELU
      for (int64_t inChannels : {int64_t(1), int64_t(6)}) { // plain and blocked layouts
        ConvCase cc{3, 1, inChannels, 12, 12, 16, 5, 5, {1, 1}, {2, 2}, {1, 1}};
        int64_t oh = cc.outHeight(), ow = cc.outWidth();
        OwnedMemRef<float, 4> x({cc.batch, inChannels, 12, 12}), w({16, inChannels, 5, 5}),
            y({cc.batch, 16, oh, ow}), bias4({1, 1, 1, 16});
        fillRandom(x.values(), 6);
        fillRandom(w.values(), 7);
        fillRandom(bias4.values(), 8);
        std::vector<float> init(y.values().size(), 0.0f);
        if (accumulate)
          fillRandom(init, 9);
        // In place: the descriptor points at this buffer.
        if (accumulate)
          std::copy(init.begin(), init.end(), y.values().begin());
        else
          std::fill(y.values().begin(), y.values().end(), NAN);
        std::vector<float> expected = directConv(cc, x.values(), w.values(), init);
        for (size_t i = 0; i < expected.size(); ++i) {
          double v = double(expected[i]) + bias4.values()[(i / size_t(oh * ow)) % 16];
          expected[i] = float(activation == 2 ? std::max(v, 0.0)
                                              : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
        }
        auto inU = unranked(x), wU = unranked(w), outU = unranked(y);
        // The bias is read as a contiguous rank-1 buffer; a rank-4 view of
        // the same 16 floats works as well for the test.
        auto biasU = unranked(bias4);
        modelc_conv2d_epilogue_ciface(&inU, &wU, &outU, &biasU, 1, 1, 2, 2, 1, 1,
                                      kConvBias | (accumulate ? int64_t(kConvAccumulate) : 0),
                                      activation);
        expectNear(y.values(), expected, 1e-4f);
      }
}

// kConvConstantWeights: the weights' copy in oneDNN's layout is made on the
// first call and read by the next ones, even when the buffer's values change
// (the caller promises they do not), until forgetConstantWeights drops it.
TEST(ConvRuntimeTest, ConstantWeightsAreReorderedOnceUntilForgotten) {
  ConvCase cc{2, 1, 16, 8, 8, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}};
  OwnedMemRef<float, 4> x({2, 16, 8, 8}), w({32, 16, 3, 3}), y({2, 32, 8, 8});
  fillRandom(x.values(), 11);
  fillRandom(w.values(), 12);
  std::vector<float> zeros(y.values().size(), 0.0f);
  std::vector<float> first = directConv(cc, x.values(), w.values(), zeros);
  auto run = [&] {
    auto inU = unranked(x), wU = unranked(w), outU = unranked(y);
    modelc_conv2d_epilogue_ciface(&inU, &wU, &outU, &outU, 1, 1, 1, 1, 1, 1, kConvConstantWeights,
                                  0);
    return y.values();
  };
  expectNear(run(), first, 1e-4f);
  fillRandom(w.values(), 13); // breaks the promise, to see the kept copy
  std::vector<float> second = directConv(cc, x.values(), w.values(), zeros);
  std::vector<float> stale = run();
  size_t bytes = w.values().size() * sizeof(float);
  if (forgetConstantWeights(w.values().data(), bytes) == 0)
    GTEST_SKIP() << "no oneDNN in this build: the weights are read in place";
  expectNear(stale, first, 1e-4f);
  expectNear(run(), second, 1e-4f);
  EXPECT_EQ(forgetConstantWeights(w.values().data(), bytes), 1u);
  EXPECT_EQ(forgetConstantWeights(w.values().data(), bytes), 0u);
}

// modelc_conv2d_pool: the conv (bias, activation) and a max pool in one
// call, the conv's output never written out: plain and blocked inputs,
// floor-mode extents with a leftover row, overlapping windows.
TEST(ConvRuntimeTest, ConvThenMaxPoolInOneCall) {
  // `rows`: modelc's own kernel pools in the call (RowConv.h) where it
  // applies (stride 1), oneDNN's pooling where not.
  for (const char *layout : {"auto", "onednn", "rows"}) {
    SCOPED_TRACE(layout);
    ::setenv("MODELC_CONV_LAYOUT", layout, 1);
    struct PoolCase {
      ConvCase conv;
      int64_t kernel, stride;
      int64_t activation; // 0: none, 2: ReLU
    };
    const PoolCase cases[] = {
        {{3, 1, 1, 28, 28, 6, 5, 5, {1, 1}, {2, 2}, {1, 1}}, 2, 2, 2},  // LeNet conv1
        {{2, 1, 6, 11, 11, 16, 5, 5, {1, 1}, {0, 0}, {1, 1}}, 2, 2, 2}, // 7x7 -> 3x3
        {{2, 1, 4, 16, 16, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}}, 3, 2, 0},  // overlapping
    };
    for (const PoolCase &pc : cases) {
      const ConvCase &cc = pc.conv;
      int64_t oh = cc.outHeight(), ow = cc.outWidth();
      int64_t ph = (oh - pc.kernel) / pc.stride + 1, pw = (ow - pc.kernel) / pc.stride + 1;
      int64_t channels = cc.outChannels();
      OwnedMemRef<float, 4> x({cc.batch, cc.channels(), cc.height, cc.width}),
          w({channels, cc.inPerGroup, cc.kh, cc.kw}), bias4({1, 1, 1, channels}),
          pooled({cc.batch, channels, ph, pw});
      fillRandom(x.values(), 11);
      fillRandom(w.values(), 12);
      fillRandom(bias4.values(), 13);
      std::fill(pooled.values().begin(), pooled.values().end(), NAN);
      std::vector<float> conv = directConv(
          cc, x.values(), w.values(), std::vector<float>(size_t(cc.batch * channels * oh * ow)));
      for (size_t i = 0; i < conv.size(); ++i) {
        conv[i] += bias4.values()[(i / size_t(oh * ow)) % size_t(channels)];
        if (pc.activation == 2)
          conv[i] = std::max(conv[i], 0.0f);
      }
      std::vector<float> expected;
      for (int64_t n = 0; n < cc.batch; ++n)
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t i = 0; i < ph; ++i)
            for (int64_t j = 0; j < pw; ++j) {
              float best = -INFINITY;
              for (int64_t a = 0; a < pc.kernel; ++a)
                for (int64_t b = 0; b < pc.kernel; ++b)
                  best = std::max(best,
                                  conv[size_t(((n * channels + c) * oh + i * pc.stride + a) * ow +
                                              j * pc.stride + b)]);
              expected.push_back(best);
            }
      auto inU = unranked(x), wU = unranked(w), outU = unranked(pooled), biasU = unranked(bias4);
      modelc_conv2d_pool_ciface(&inU, &wU, &outU, &biasU, cc.stride[0], cc.stride[1], cc.pad[0],
                                cc.pad[1], cc.dilation[0], cc.dilation[1], kConvBias, pc.activation,
                                pc.kernel, pc.kernel, pc.stride, pc.stride);
      expectNear(pooled.values(), expected, 1e-4f);
    }
  }
  ::unsetenv("MODELC_CONV_LAYOUT");
}

// Forced, modelc's own row kernel is what runs a stride-1 conv (LeNet's
// first) and computes it; a strided conv is not its to run.
TEST(ConvRuntimeTest, RowsRunUnitStrideConvs) {
  ::setenv("MODELC_CONV_LAYOUT", "rows", 1);
  checkConv({2, 1, 1, 28, 28, 6, 5, 5, {1, 1}, {2, 2}, {1, 1}}, true);
  std::string kernel = lastCreatedConvKernel();
  checkConv({2, 1, 3, 11, 11, 8, 3, 3, {2, 2}, {1, 1}, {1, 1}}, false);
  ::unsetenv("MODELC_CONV_LAYOUT");
  if (kernel.empty())
    GTEST_SKIP() << "no oneDNN in this build: the conv entries name no kernel";
  EXPECT_EQ(kernel.rfind("rows:", 0), 0u) << kernel;
  EXPECT_NE(lastCreatedConvKernel().rfind("rows:", 0), 0u) << lastCreatedConvKernel();
}

// Every layout the runtime can choose between (MODELC_CONV_LAYOUT forces
// one) computes the same conv: oneDNN's pick and the channel-blocked ones,
// plain and grouped, with accumulation.
TEST(ConvRuntimeTest, EveryLayoutChoiceAgrees) {
  for (const char *layout : {"onednn", "nChw16c", "nChw8c", "winograd", "rows", "auto"}) {
    SCOPED_TRACE(layout);
    ::setenv("MODELC_CONV_LAYOUT", layout, 1);
    checkConv({2, 1, 16, 9, 9, 32, 3, 3, {2, 2}, {1, 1}, {1, 1}}, true);
    checkConv({3, 1, 16, 10, 7, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}}, false);
    checkConv({2, 1, 6, 14, 14, 16, 5, 5, {1, 1}, {0, 0}, {1, 1}}, false);
    checkConv({2, 2, 8, 8, 8, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}}, true);
  }
  ::unsetenv("MODELC_CONV_LAYOUT");
}

// Winograd (fewer multiplications for 3x3 stride-1 convs) is a candidate
// where oneDNN has a kernel for it (AVX-512): forced, it is what runs, and
// it computes the conv within the parity tolerance, bias and ReLU included.
TEST(ConvRuntimeTest, WinogradRunsThreeByThreeConvsWhereTheCpuHasIt) {
  ::setenv("MODELC_CONV_LAYOUT", "winograd", 1);
  checkConv({1, 1, 64, 8, 8, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}}, true);
  std::string kernel = lastCreatedConvKernel();
  ::unsetenv("MODELC_CONV_LAYOUT");
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (!avx512)
    GTEST_SKIP() << "no AVX-512: oneDNN has no Winograd kernel here (ran " << kernel << ")";
  EXPECT_NE(kernel.find("wino"), std::string::npos) << kernel;
}

// mdl-conv-to-runtime keeps a tensor between convs in nChw16c: the input
// reordered once (modelc_to_blocked16) for two convs, the first conv's output
// written blocked (kConvDstBlocked16) and read so by the second
// (kConvSrcBlocked16). Every layout choice gives what NCHW gives, and the
// intermediate really is nChw16c. A weight with stride 0 over its output
// channels, which oneDNN rejects, takes the loops through their blocked
// copies.
TEST(ConvRuntimeTest, BlockedChainsMatchThePlainLayout) {
  for (bool broadcastWeights : {false, true})
    for (const char *layout : {"auto", "onednn", "nChw16c", "nChw8c", "winograd", "rows"}) {
      SCOPED_TRACE(std::string(layout) + (broadcastWeights ? " broadcast weights" : ""));
      ::setenv("MODELC_CONV_LAYOUT", layout, 1);
      OwnedMemRef<float, 4> x({2, 16, 9, 9}), w1({32, 16, 3, 3}), w2({16, 32, 3, 3}),
          bias({1, 1, 1, 32}), plain1({2, 32, 9, 9}), plain2({2, 16, 9, 9}), x16({2, 16, 9, 9}),
          blocked1({2, 32, 9, 9}), out2({2, 16, 9, 9}), side({2, 32, 9, 9});
      fillRandom(x.values(), 11);
      fillRandom(w1.values(), 12);
      fillRandom(w2.values(), 13);
      fillRandom(bias.values(), 14);
      if (broadcastWeights) {
        std::fill(w1.values().begin() + 16 * 9, w1.values().end(), 0.0f);
        w1.get()->strides[0] = 0; // every output channel has channel 0's filter
      }
      auto xU = unranked(x), w1U = unranked(w1), w2U = unranked(w2), biasU = unranked(bias),
           p1U = unranked(plain1), p2U = unranked(plain2), x16U = unranked(x16),
           b1U = unranked(blocked1), o2U = unranked(out2), sideU = unranked(side);
      // NCHW throughout: relu(conv1(x) + bias), then conv2 of that.
      modelc_conv2d_epilogue_ciface(&xU, &w1U, &p1U, &biasU, 1, 1, 1, 1, 1, 1, kConvBias, 2);
      modelc_conv2d_epilogue_ciface(&p1U, &w2U, &p2U, &p2U, 1, 1, 1, 1, 1, 1, 0, 0);
      // Blocked between: x once for two readers, conv1's output for conv2.
      modelc_to_blocked16_ciface(&xU, &x16U);
      modelc_conv2d_epilogue_ciface(&x16U, &w1U, &b1U, &biasU, 1, 1, 1, 1, 1, 1,
                                    kConvBias | kConvSrcBlocked16 | kConvDstBlocked16, 2);
      modelc_conv2d_epilogue_ciface(&b1U, &w2U, &o2U, &o2U, 1, 1, 1, 1, 1, 1, kConvSrcBlocked16, 0);
      modelc_conv2d_epilogue_ciface(&x16U, &w1U, &sideU, &biasU, 1, 1, 1, 1, 1, 1,
                                    kConvBias | kConvSrcBlocked16, 2);
      // Kernels that sum in different orders: 1e-5 of the result's scale
      // (conv2's sums reach ~50 with broadcast weights).
      auto expectClose = [](const std::vector<float> &actual, const std::vector<float> &expected) {
        float scale = 1.0f;
        for (float v : expected)
          scale = std::max(scale, std::fabs(v));
        expectNear(actual, expected, 1e-5f * scale);
      };
      expectClose(out2.values(), plain2.values());
      expectClose(side.values(), plain1.values());
      // (n, c, y, x) of the blocked intermediate is at nChw16c's offset.
      std::vector<float> reread(plain1.values().size());
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 32; ++c)
          for (int64_t i = 0; i < 81; ++i)
            reread[size_t((n * 32 + c) * 81 + i)] =
                blocked1.values()[size_t(((n * 2 + c / 16) * 81 + i) * 16 + c % 16)];
      expectNear(reread, plain1.values(), 1e-4f);
    }
  ::unsetenv("MODELC_CONV_LAYOUT");
}

// A mid-size conv (1M-16M multiply-adds) that overwrites its output has its
// thread count measured on its first call by running it both ways on the
// call's own operands, and again on its 64th call: those calls and the
// others must still give the conv.
TEST(ConvRuntimeTest, MeasuredThreadCountKeepsTheResult) {
  ConvCase cc{8, 1, 16, 16, 16, 32, 3, 3, {1, 1}, {0, 0}, {1, 1}}; // 7.2M MACs
  int64_t oh = cc.outHeight(), ow = cc.outWidth();
  OwnedMemRef<float, 4> x({8, 16, 16, 16}), w({32, 16, 3, 3}), y({8, 32, oh, ow});
  fillRandom(x.values(), 21);
  fillRandom(w.values(), 22);
  std::vector<float> expected =
      directConv(cc, x.values(), w.values(), std::vector<float>(y.values().size(), 0.0f));
  for (int call = 0; call < 66; ++call) {
    std::fill(y.values().begin(), y.values().end(), NAN);
    auto inU = unranked(x), wU = unranked(w), outU = unranked(y);
    modelc_conv2d_epilogue_ciface(&inU, &wU, &outU, &outU, 1, 1, 0, 0, 1, 1, 0, 0);
    expectNear(y.values(), expected, 1e-4f);
  }
}

// An input that is a view (every other channel of a larger buffer): the
// runtime must honour its strides.
TEST(ConvRuntimeTest, StridedInputView) {
  ConvCase cc{2, 1, 3, 6, 6, 2, 3, 3, {1, 1}, {1, 1}, {1, 1}};
  OwnedMemRef<float, 4> wide({2, 6, 6, 6}), w({2, 3, 3, 3}), y({2, 2, 6, 6});
  fillRandom(wide.values(), 4);
  fillRandom(w.values(), 5);
  std::vector<float> x(2 * 3 * 36);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < 36; ++i)
        x[(n * 3 + c) * 36 + i] = wide[(n * 6 + 2 * c) * 36 + i];
  std::vector<float> expected = directConv(cc, x, w.values(), y.values());
  wide.get()->sizes[1] = 3;
  wide.get()->strides[1] = 2 * 36;
  callConv(wide, w, y, cc);
  expectNear(y.values(), expected, 1e-4f);
}

// Overlapping strides (a broadcast input, stride 0 over the batch) are
// rejected by oneDNN; the runtime must fall back to its loop.
TEST(ConvRuntimeTest, BroadcastInputFallsBackToTheLoop) {
  ConvCase cc{3, 1, 2, 5, 5, 2, 3, 3, {1, 1}, {0, 0}, {1, 1}};
  OwnedMemRef<float, 4> one({1, 2, 5, 5}), w({2, 2, 3, 3}), y({3, 2, 3, 3});
  fillRandom(one.values(), 7);
  fillRandom(w.values(), 8);
  std::vector<float> x;
  for (int64_t n = 0; n < 3; ++n)
    x.insert(x.end(), one.values().begin(), one.values().end());
  std::vector<float> expected = directConv(cc, x, w.values(), y.values());
  one.get()->sizes[0] = 3;
  one.get()->strides[0] = 0;
  callConv(one, w, y, cc);
  expectNear(y.values(), expected, 1e-4f);
}

// Compiled models are called from several threads at once (the embedding
// API allows it): the cached primitive must give each call its own result.
// A thread keeps its oneDNN memory objects per cached conv and points them
// at each call's buffers: calls of one shape on two live sets of buffers
// each read and write their own.
TEST(ConvRuntimeTest, CallsOfOneShapeUseTheirOwnBuffers) {
  ConvCase cc{1, 1, 64, 16, 16, 128, 3, 3, {2, 2}, {1, 1}, {1, 1}};
  OwnedMemRef<float, 4> inA({1, 64, 16, 16}), inB({1, 64, 16, 16}), w({128, 64, 3, 3}),
      outA({1, 128, 8, 8}), outB({1, 128, 8, 8});
  fillRandom(inA.values(), 1);
  fillRandom(inB.values(), 2);
  fillRandom(w.values(), 3);
  for (int round = 0; round < 2; ++round) {
    std::fill(outA.values().begin(), outA.values().end(), 0.0f);
    std::fill(outB.values().begin(), outB.values().end(), 0.0f);
    callConv(inA, w, outA, cc);
    callConv(inB, w, outB, cc);
    std::vector<float> zeros(outA.values().size());
    expectNear(outA.values(), directConv(cc, inA.values(), w.values(), zeros), 1e-4f);
    expectNear(outB.values(), directConv(cc, inB.values(), w.values(), zeros), 1e-4f);
  }
}

TEST(ConvRuntimeTest, ConcurrentCallsAgree) {
  ConvCase cc{4, 1, 6, 14, 14, 16, 5, 5, {1, 1}, {0, 0}, {1, 1}};
  std::vector<float> w(16 * 6 * 25);
  fillRandom(w, 6);
  constexpr int kThreads = 8;
  std::vector<std::vector<float>> inputs(kThreads), outputs(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    inputs[t].resize(4 * 6 * 14 * 14);
    fillRandom(inputs[t], 100 + t);
    outputs[t].assign(4 * 16 * 10 * 10, 0.0f);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      OwnedMemRef<float, 4> in({4, 6, 14, 14}), wt({16, 6, 5, 5}), out({4, 16, 10, 10});
      in.values() = inputs[t];
      wt.values() = w;
      for (int repeat = 0; repeat < 20; ++repeat) {
        std::fill(out.values().begin(), out.values().end(), 0.0f);
        callConv(in, wt, out, cc);
      }
      outputs[t] = out.values();
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    expectNear(outputs[t], directConv(cc, inputs[t], w, std::vector<float>(4 * 16 * 100)), 1e-4f);
}

} // namespace
