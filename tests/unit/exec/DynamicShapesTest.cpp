//===- DynamicShapesTest.cpp - mdl with `?` dims, JIT-compiled once -------===//
//
// `modelc run` specialises every symbolic dim to its inputs, but a model
// compiled once (CompiledModel) keeps them dynamic. These tests compile mdl
// modules with `?` dims and call them with several run-time shapes: slicing,
// reshapes and batched matmuls with two dynamic dims (the mlp_block crash),
// creation ops sized at run time, and broadcasting, whose run-time check
// stops a call whose extents break the checker's assumptions.
//
//===----------------------------------------------------------------------===//

#include "jit/Jit.h"
#include "jit/MemRef.h"

#include <gtest/gtest.h>

#include <csignal>
#include <numeric>

using modelc::jit::JitModule;
using modelc::jit::OwnedMemRef;

namespace {

std::unique_ptr<JitModule> compile(const std::string &source) {
  auto compiled = JitModule::compileSource(source);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return nullptr;
  }
  return std::move(*compiled);
}

template <typename T, int N> void iota(OwnedMemRef<T, N> &m) {
  std::iota(m.values().begin(), m.values().end(), T(0));
}

TEST(DynamicShapesTest, LinearOverTwoDynamicDims) {
  // [B, T, 4] @ [4, 3] + bias: the matmul folds B*T into rows and expands
  // them back, an expand_shape with two `?` in one group.
  auto module = compile(R"mlir(
func.func @f(%x: tensor<?x?x4xf32, #mdl.device<cpu>>, %w: tensor<4x3xf32, #mdl.device<cpu>>,
             %b: tensor<3xf32, #mdl.device<cpu>>) -> tensor<?x?x3xf32, #mdl.device<cpu>> {
  %0 = mdl.matmul %x, %w : tensor<?x?x4xf32, #mdl.device<cpu>>, tensor<4x3xf32, #mdl.device<cpu>> -> tensor<?x?x3xf32, #mdl.device<cpu>>
  %1 = mdl.add %0, %b : tensor<?x?x3xf32, #mdl.device<cpu>>, tensor<3xf32, #mdl.device<cpu>> -> tensor<?x?x3xf32, #mdl.device<cpu>>
  return %1 : tensor<?x?x3xf32, #mdl.device<cpu>>
}
)mlir");
  ASSERT_TRUE(module);
  for (auto [batch, time] : {std::pair<int64_t, int64_t>{2, 3}, {1, 5}}) {
    OwnedMemRef<float, 3> x({batch, time, 4}), y({batch, time, 3});
    OwnedMemRef<float, 2> w({4, 3});
    OwnedMemRef<float, 1> b({3});
    iota(x);
    iota(w);
    b.values() = {0.5f, -1.0f, 2.0f};
    ASSERT_FALSE(module->call("f", {x.get(), w.get(), b.get(), y.get()}));
    for (int64_t row = 0; row < batch * time; ++row)
      for (int64_t j = 0; j < 3; ++j) {
        float expected = b[size_t(j)];
        for (int64_t k = 0; k < 4; ++k)
          expected += x[size_t(row * 4 + k)] * w[size_t(k * 3 + j)];
        EXPECT_FLOAT_EQ(y[size_t(row * 3 + j)], expected) << "row " << row << " col " << j;
      }
  }
}

TEST(DynamicShapesTest, SliceAndIndexDynamicDims) {
  // x[-2:, 1:3] and x[-1] on a [?, 4] input.
  auto module = compile(R"mlir(
func.func @tail(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %0 = mdl.slice %x {starts = array<i64: -2, 1>, ends = array<i64: 9223372036854775807, 3>,
                     steps = array<i64: 1, 1>, index_dims = array<i64>}
      : tensor<?x4xf32> -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
func.func @last(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %0 = mdl.slice %x {starts = array<i64: -1, 0>, ends = array<i64: 0, 9223372036854775807>,
                     steps = array<i64: 1, 1>, index_dims = array<i64: 0>}
      : tensor<?x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({5, 4}), tail({2, 2});
  OwnedMemRef<float, 1> last({4});
  iota(x);
  ASSERT_FALSE(module->call("tail", {x.get(), tail.get()}));
  EXPECT_EQ(tail.values(), (std::vector<float>{13, 14, 17, 18}));
  ASSERT_FALSE(module->call("last", {x.get(), last.get()}));
  EXPECT_EQ(last.values(), (std::vector<float>{16, 17, 18, 19}));

  // A one-row input: the slice is clamped to the rows that exist.
  OwnedMemRef<float, 2> one({1, 4}), oneTail({1, 2});
  iota(one);
  ASSERT_FALSE(module->call("tail", {one.get(), oneTail.get()}));
  EXPECT_EQ(oneTail.values(), (std::vector<float>{1, 2}));
}

TEST(DynamicShapesTest, UnsqueezeAndCreationWithRunTimeSizes) {
  // unsqueeze of [?, ?] and zeros([B, T]) + 1, sized by tensor.dim.
  auto module = compile(R"mlir(
func.func @f(%x: tensor<?x?xf32, #mdl.device<cpu>>) -> tensor<?x1x?xf32, #mdl.device<cpu>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?xf32, #mdl.device<cpu>>
  %t = tensor.dim %x, %c1 : tensor<?x?xf32, #mdl.device<cpu>>
  %ones = mdl.ones(%b, %t) : tensor<?x?xf32, #mdl.device<cpu>>
  %sum = mdl.add %x, %ones : tensor<?x?xf32, #mdl.device<cpu>>, tensor<?x?xf32, #mdl.device<cpu>> -> tensor<?x?xf32, #mdl.device<cpu>>
  %0 = mdl.reshape %sum : tensor<?x?xf32, #mdl.device<cpu>> -> tensor<?x1x?xf32, #mdl.device<cpu>>
  return %0 : tensor<?x1x?xf32, #mdl.device<cpu>>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({2, 3});
  OwnedMemRef<float, 3> y({2, 1, 3});
  iota(x);
  ASSERT_FALSE(module->call("f", {x.get(), y.get()}));
  EXPECT_EQ(y.values(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

const char *kBroadcast = R"mlir(
func.func @f(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %0 = mdl.add %x, %y : tensor<?x3xf32>, tensor<?x3xf32> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @g(%x: tensor<?x3xf32>, %y: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = mdl.mul %x, %y : tensor<?x3xf32>, tensor<1x3xf32> -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
)mlir";

TEST(DynamicShapesTest, BroadcastOfDynamicDims) {
  auto module = compile(kBroadcast);
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({4, 3}), y({4, 3}), out({4, 3});
  iota(x);
  iota(y);
  ASSERT_FALSE(module->call("f", {x.get(), y.get(), out.get()}));
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(out[i], 2.0f * float(i));
  // A static 1 stretches over a dynamic dim.
  OwnedMemRef<float, 2> row({1, 3});
  row.values() = {1, 10, 100};
  ASSERT_FALSE(module->call("g", {x.get(), row.get(), out.get()}));
  EXPECT_EQ(out[4], 40.0f);
  EXPECT_EQ(out[11], 1100.0f);
}

TEST(DynamicShapesDeathTest, MismatchedDynamicExtentsStopTheCall) {
  // The checker only lets `?` meet an equal `?`: extents that differ at run
  // time would read past the smaller operand, so the call stops instead.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto module = compile(kBroadcast);
  ASSERT_TRUE(module);
  OwnedMemRef<float, 2> x({2, 3}), y({3, 3}), out({2, 3});
  // cf.assert prints its message with puts (stdout) and aborts.
  EXPECT_EXIT((void)module->call("f", {x.get(), y.get(), out.get()}),
              testing::KilledBySignal(SIGABRT), "");
}

} // namespace
