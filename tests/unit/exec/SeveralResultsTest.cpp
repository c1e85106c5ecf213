//===- SeveralResultsTest.cpp - entry fns that return a tuple -------------===//

#include "exec/CompiledModel.h"

#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace modelc;
using namespace modelc::exec;

namespace {

// Logits and their mean cross-entropy: two results of different ranks.
constexpr const char *kSource = R"mdl(
model Head<D: device>(n: int, k: int) {
  param weight: f32[k, n]
  fn forward(x: f32[B, n] @ D, y: i64[B] @ D) -> (f32[B, k] @ D, f32[] @ D) {
    let logits = x @ weight.T
    return logits, cross_entropy(logits, y)
  }
  fn logits(x: f32[B, n] @ D) -> f32[B, k] @ D {
    return x @ weight.T
  }
}
)mdl";

struct Fixture {
  Compilation compilation{[] {
    CompileOptions options;
    options.stdlibDir = MODELC_STDLIB_DIR;
    return options;
  }()};
  std::optional<mlirgen::ConcreteModel> model;
  std::optional<runtime::SafeTensorsFile> file;

  // weight[j][p] = (j + 1) * (p - 1) / 4 for k = 3, n = 2.
  bool setUp() {
    compilation.addBuffer("head.mdl", kSource);
    if (!compilation.check())
      return false;
    auto instance =
        mlirgen::instantiateModel(*compilation.program(), "Head", "n=2,k=3", sema::Device::cpu());
    if (!instance) {
      llvm::consumeError(instance.takeError());
      return false;
    }
    model = std::move(*instance);
    runtime::Tensor weight = runtime::Tensor::zeros(runtime::DType::F32, {3, 2});
    llvm::MutableArrayRef<float> w = weight.mutableValues<float>();
    for (int j = 0; j < 3; ++j)
      for (int p = 0; p < 2; ++p)
        w[size_t(j * 2 + p)] = float(j + 1) * float(p - 1) / 4.0f;
    llvm::Expected<std::string> bytes =
        runtime::serializeSafeTensors(std::vector<runtime::NamedTensor>{{"weight", weight}});
    if (!bytes) {
      llvm::consumeError(bytes.takeError());
      return false;
    }
    auto opened = runtime::SafeTensorsFile::fromBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(*bytes, "head.safetensors"));
    if (!opened) {
      llvm::consumeError(opened.takeError());
      return false;
    }
    file = std::move(*opened);
    return true;
  }

  std::unique_ptr<CompiledModel> compile(llvm::StringRef fn) {
    std::optional<runtime::LoadedWeights> weights =
        bindModelWeights(*model, *file, compilation.diagnostics());
    if (!weights)
      return nullptr;
    CompileModelOptions options;
    options.fnName = fn.str();
    auto compiled = CompiledModel::create(*compilation.program(), compilation.sourceMgr(), *model,
                                          std::move(*weights), options, compilation.diagnostics());
    if (!compiled) {
      llvm::consumeError(compiled.takeError());
      return nullptr;
    }
    return std::move(*compiled);
  }
};

std::vector<EntryInput> inputs() {
  runtime::Tensor x = runtime::Tensor::zeros(runtime::DType::F32, {2, 2});
  llvm::MutableArrayRef<float> xs = x.mutableValues<float>();
  xs[0] = 1.0f, xs[1] = 2.0f, xs[2] = -1.0f, xs[3] = 0.5f;
  runtime::Tensor y = runtime::Tensor::zeros(runtime::DType::I64, {2});
  y.mutableValues<int64_t>()[0] = 2;
  y.mutableValues<int64_t>()[1] = 0;
  return {{x, runtime::Device::cpu(), "x"}, {y, runtime::Device::cpu(), "y"}};
}

TEST(SeveralResultsTest, EveryResultComesBackInOrder) {
  Fixture f;
  ASSERT_TRUE(f.setUp());
  std::unique_ptr<CompiledModel> head = f.compile("forward");
  ASSERT_NE(head, nullptr);
  DiagnosticEngine diags(f.compilation.sourceMgr());
  auto results = head->callResults(inputs(), diags);
  ASSERT_TRUE(results && *results)
      << (results ? "diagnostics" : llvm::toString(results.takeError()));
  ASSERT_EQ((*results)->size(), 2u);
  const runtime::Tensor &logits = (**results)[0];
  const runtime::Tensor &loss = (**results)[1];
  ASSERT_EQ(logits.shape(), (llvm::ArrayRef<int64_t>{2, 3}));
  EXPECT_EQ(loss.rank(), 0u);

  // The reference, in double: logits[i][j] = sum_p x[i][p] * w[j][p].
  const double x[2][2] = {{1, 2}, {-1, 0.5}};
  const int64_t y[2] = {2, 0};
  double expectedLoss = 0;
  for (int i = 0; i < 2; ++i) {
    double row[3], top = -1e300;
    for (int j = 0; j < 3; ++j) {
      row[j] = 0;
      for (int p = 0; p < 2; ++p)
        row[j] += x[i][p] * (j + 1) * (p - 1) / 4.0;
      EXPECT_NEAR(logits.values<float>()[size_t(i * 3 + j)], row[j], 1e-6) << i << "," << j;
      top = std::max(top, row[j]);
    }
    double sum = 0;
    for (double v : row)
      sum += std::exp(v - top);
    expectedLoss += top + std::log(sum) - row[y[i]];
  }
  EXPECT_NEAR(loss.values<float>()[0], expectedLoss / 2, 1e-6);

  // call() is for one result: it says to take them all.
  auto single = head->call(inputs(), diags);
  ASSERT_FALSE(bool(single));
  EXPECT_NE(llvm::toString(single.takeError()).find("returns 2 results"), std::string::npos);
}

TEST(SeveralResultsTest, OneResultIsAVectorOfOne) {
  Fixture f;
  ASSERT_TRUE(f.setUp());
  std::unique_ptr<CompiledModel> logits = f.compile("logits");
  ASSERT_NE(logits, nullptr);
  DiagnosticEngine diags(f.compilation.sourceMgr());
  std::vector<EntryInput> in = inputs();
  in.pop_back();
  auto results = logits->callResults(in, diags);
  ASSERT_TRUE(results && *results);
  ASSERT_EQ((*results)->size(), 1u);
  auto single = logits->call(in, diags);
  ASSERT_TRUE(single && *single);
  EXPECT_EQ((*single)->values<float>(), (**results)[0].values<float>());
}

} // namespace
