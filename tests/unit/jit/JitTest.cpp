//===- JitTest.cpp - JIT basics: matmul, MLP, errors ----------------------===//

#include "JitTestUtils.h"

using namespace modelc::jit;
using namespace modelc::jit::test;

namespace {

const char *kMatmul = R"mlir(
func.func @mm(%a: tensor<?x?xf32, #mdl.device<cpu>>, %b: tensor<?x?xf32, #mdl.device<cpu>>)
    -> tensor<?x?xf32, #mdl.device<cpu>> {
  %0 = mdl.matmul %a, %b : tensor<?x?xf32, #mdl.device<cpu>>, tensor<?x?xf32, #mdl.device<cpu>>
       -> tensor<?x?xf32, #mdl.device<cpu>>
  return %0 : tensor<?x?xf32, #mdl.device<cpu>>
}
)mlir";

class MatmulTest : public ::testing::TestWithParam<bool> {};

TEST_P(MatmulTest, MatchesReferenceOnOddShapes) {
  JitOptions options;
  options.useBlas = GetParam();
  auto module = compileOrFail(kMatmul, options);
  ASSERT_TRUE(module);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {3, 5, 7}, {64, 33, 17}}) {
    OwnedMemRef<float, 2> a({m, k}), b({k, n}), c({m, n});
    fillRandom(a.values(), 1);
    fillRandom(b.values(), 2);
    ASSERT_FALSE(module->call("mm", {a.get(), b.get(), c.get()}));
    expectNear(c.values(), referenceMatmul(a.values(), b.values(), m, k, n), 1e-4f);
  }
}

INSTANTIATE_TEST_SUITE_P(BlasAndLoops, MatmulTest, ::testing::Values(true, false));

TEST(JitTest, BatchedMatmulBroadcastsBatchDims) {
  auto module = compileOrFail(R"mlir(
func.func @bmm(%a: tensor<2x3x4xf32>, %b: tensor<1x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = mdl.matmul %a, %b : tensor<2x3x4xf32>, tensor<1x4x5xf32> -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
)mlir");
  ASSERT_TRUE(module);
  OwnedMemRef<float, 3> a({2, 3, 4}), b({1, 4, 5}), c({2, 3, 5});
  fillRandom(a.values(), 3);
  fillRandom(b.values(), 4);
  ASSERT_FALSE(module->call("bmm", {a.get(), b.get(), c.get()}));
  for (int batch = 0; batch < 2; ++batch) {
    std::vector<float> slice(a.values().begin() + batch * 12, a.values().begin() + batch * 12 + 12);
    std::vector<float> expected = referenceMatmul(slice, b.values(), 3, 4, 5);
    std::vector<float> actual(c.values().begin() + batch * 15,
                              c.values().begin() + batch * 15 + 15);
    expectNear(actual, expected, 1e-5f);
  }
}

// 64 products of 32x64 by 64x32 (attention's shape at batch 16, 4 heads):
// enough work that the threads share the matrices (BlasRuntime.cpp).
TEST(JitTest, ManyBatchedProductsAreAllComputed) {
  auto module = compileOrFail(R"mlir(
func.func @bmm(%a: tensor<?x32x64xf32>, %b: tensor<?x64x32xf32>) -> tensor<?x32x32xf32> {
  %0 = mdl.matmul %a, %b : tensor<?x32x64xf32>, tensor<?x64x32xf32> -> tensor<?x32x32xf32>
  return %0 : tensor<?x32x32xf32>
}
)mlir");
  ASSERT_TRUE(module);
  const int64_t count = 64;
  OwnedMemRef<float, 3> a({count, 32, 64}), b({count, 64, 32}), c({count, 32, 32});
  fillRandom(a.values(), 5);
  fillRandom(b.values(), 6);
  ASSERT_FALSE(module->call("bmm", {a.get(), b.get(), c.get()}));
  for (int64_t i = 0; i < count; ++i) {
    std::vector<float> ai(a.values().begin() + i * 2048, a.values().begin() + (i + 1) * 2048);
    std::vector<float> bi(b.values().begin() + i * 2048, b.values().begin() + (i + 1) * 2048);
    std::vector<float> ci(c.values().begin() + i * 1024, c.values().begin() + (i + 1) * 1024);
    SCOPED_TRACE("matrix " + std::to_string(i));
    expectNear(ci, referenceMatmul(ai, bi, 32, 64, 32), 1e-4f);
  }
}

// x[B,4] -> Linear(4,8) -> ReLU -> Linear(8,3) -> softmax, batch size dynamic.
const char *kMlp = R"mlir(
!x = tensor<?x4xf32, #mdl.device<cpu>>
!h = tensor<?x8xf32, #mdl.device<cpu>>
!y = tensor<?x3xf32, #mdl.device<cpu>>
func.func @mlp(%x: !x, %w1: tensor<4x8xf32, #mdl.device<cpu>>, %b1: tensor<8xf32, #mdl.device<cpu>>,
               %w2: tensor<8x3xf32, #mdl.device<cpu>>, %b2: tensor<3xf32, #mdl.device<cpu>>) -> !y {
  %0 = mdl.matmul %x, %w1 : !x, tensor<4x8xf32, #mdl.device<cpu>> -> !h
  %1 = mdl.add %0, %b1 : !h, tensor<8xf32, #mdl.device<cpu>> -> !h
  %2 = mdl.relu %1 : !h
  %3 = mdl.matmul %2, %w2 : !h, tensor<8x3xf32, #mdl.device<cpu>> -> !y
  %4 = mdl.add %3, %b2 : !y, tensor<3xf32, #mdl.device<cpu>> -> !y
  %5 = mdl.softmax %4 {dim = 1} : !y
  return %5 : !y
}
)mlir";

TEST(JitTest, MlpMatchesReference) {
  auto module = compileOrFail(kMlp);
  ASSERT_TRUE(module);
  const int64_t batch = 5;
  OwnedMemRef<float, 2> x({batch, 4}), w1({4, 8}), w2({8, 3}), y({batch, 3});
  OwnedMemRef<float, 1> b1({8}), b2({3});
  fillRandom(x.values(), 10);
  fillRandom(w1.values(), 11);
  fillRandom(b1.values(), 12);
  fillRandom(w2.values(), 13);
  fillRandom(b2.values(), 14);
  ASSERT_FALSE(module->call("mlp", {x.get(), w1.get(), b1.get(), w2.get(), b2.get(), y.get()}));

  std::vector<float> h = referenceMatmul(x.values(), w1.values(), batch, 4, 8);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < 8; ++j)
      h[i * 8 + j] = std::max(0.0f, h[i * 8 + j] + b1[j]);
  std::vector<float> logits = referenceMatmul(h, w2.values(), batch, 8, 3);
  std::vector<float> expected(batch * 3);
  for (int64_t i = 0; i < batch; ++i) {
    float max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < 3; ++j)
      max = std::max(max, logits[i * 3 + j] + b2[j]);
    for (int64_t j = 0; j < 3; ++j)
      sum += std::exp(logits[i * 3 + j] + b2[j] - max);
    for (int64_t j = 0; j < 3; ++j)
      expected[i * 3 + j] = std::exp(logits[i * 3 + j] + b2[j] - max) / sum;
  }
  expectNear(y.values(), expected, 1e-5f);
}

TEST(JitTest, CudaTensorsAreRejectedByTheCpuBackEnd) {
  auto compiled = JitModule::compileSource(R"mlir(
func.func @f(%a: tensor<4xf32, #mdl.device<cuda:0>>) -> tensor<4xf32, #mdl.device<cuda:0>> {
  %0 = mdl.relu %a : tensor<4xf32, #mdl.device<cuda:0>>
  return %0 : tensor<4xf32, #mdl.device<cuda:0>>
}
)mlir");
  ASSERT_FALSE(compiled);
  std::string message = llvm::toString(compiled.takeError());
  EXPECT_NE(message.find("cannot lower a tensor on cuda:0"), std::string::npos) << message;
}

TEST(JitTest, VerifierErrorsAreReported) {
  auto compiled = JitModule::compileSource(R"mlir(
func.func @f(%a: tensor<4xf32, #mdl.device<cpu>>, %b: tensor<4xf32, #mdl.device<cuda:0>>)
    -> tensor<4xf32, #mdl.device<cpu>> {
  %0 = mdl.add %a, %b : tensor<4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cuda:0>>
       -> tensor<4xf32, #mdl.device<cpu>>
  return %0 : tensor<4xf32, #mdl.device<cpu>>
}
)mlir");
  ASSERT_FALSE(compiled);
  std::string message = llvm::toString(compiled.takeError());
  EXPECT_NE(message.find("mixes devices"), std::string::npos) << message;
}

TEST(JitTest, EmptyModuleCompilesToNothing) {
  auto compiled = JitModule::compileSource("");
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  llvm::Error error = (*compiled)->call("f", {});
  EXPECT_TRUE(static_cast<bool>(error)) << "an empty module has no fn to call";
  llvm::consumeError(std::move(error));
}

TEST(JitTest, GarbageInputIsAnErrorNotACrash) {
  for (const char *source : {"func.func @f(", "}}}", "mdl.relu", "\x01\x02\xff"}) {
    auto compiled = JitModule::compileSource(source);
    ASSERT_FALSE(bool(compiled)) << "garbage compiled: " << source;
    EXPECT_FALSE(llvm::toString(compiled.takeError()).empty()) << source;
  }
}

TEST(JitTest, UnknownFunctionIsAnError) {
  auto module = compileOrFail(kMatmul);
  ASSERT_TRUE(module);
  llvm::Error error = module->call("nope", {});
  EXPECT_TRUE(static_cast<bool>(error));
  llvm::consumeError(std::move(error));
}

} // namespace

namespace {

// x @ W.T with W in PyTorch's [out, in] layout: no copy, BLAS transposes.
TEST(JitTest, MatmulWithTransposedWeight) {
  for (bool useBlas : {true, false}) {
    JitOptions options;
    options.useBlas = useBlas;
    auto module = compileOrFail(R"mlir(
func.func @linear(%x: tensor<?x6xf32>, %w: tensor<4x6xf32>) -> tensor<?x4xf32> {
  %wt = mdl.transpose %w {dim0 = 0, dim1 = 1} : tensor<4x6xf32> -> tensor<6x4xf32>
  %0 = mdl.matmul %x, %wt : tensor<?x6xf32>, tensor<6x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
)mlir",
                                options);
    ASSERT_TRUE(module);
    OwnedMemRef<float, 2> x({3, 6}), w({4, 6}), y({3, 4});
    fillRandom(x.values(), 40);
    fillRandom(w.values(), 41);
    ASSERT_FALSE(module->call("linear", {x.get(), w.get(), y.get()}));
    std::vector<float> wt(24);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 6; ++j)
        wt[j * 4 + i] = w[i * 6 + j];
    expectNear(y.values(), referenceMatmul(x.values(), wt, 3, 6, 4), 1e-5f);
  }
}

} // namespace
