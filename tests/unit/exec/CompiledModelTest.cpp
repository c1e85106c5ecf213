//===- CompiledModelTest.cpp - compile once, call many times, from threads ===//

#include "exec/CompiledModel.h"

#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"
#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace modelc;
using namespace modelc::exec;

namespace {

constexpr const char *kSource = R"mdl(
import std.nn

model Net<D: device>(in: int, hidden: int, out: int) {
  fc1 = nn.Linear(in, hidden)
  fc2 = nn.Linear(hidden, out)

  fn forward(x: f32[B, in] @ D) -> f32[B, out] @ D {
    return log_softmax(fc2(relu(fc1(x))), dim: 1)
  }
}
)mdl";

runtime::Tensor pattern(llvm::ArrayRef<int64_t> shape, unsigned seed) {
  runtime::Tensor t = runtime::Tensor::zeros(runtime::DType::F32, shape);
  uint32_t state = seed * 2654435761u + 7;
  for (float &v : t.mutableValues<float>()) {
    state = state * 1664525u + 1013904223u;
    v = float(state >> 8) / float(1 << 24) - 0.5f;
  }
  return t;
}

/// `model`'s forward compiled with `tensors` as its weights; null (after a
/// test failure) when something fails.
std::unique_ptr<CompiledModel> compileWith(Compilation &c, const mlirgen::ConcreteModel &model,
                                           const std::vector<runtime::NamedTensor> &tensors) {
  llvm::Expected<std::string> bytes = runtime::serializeSafeTensors(tensors);
  if (!bytes) {
    ADD_FAILURE() << llvm::toString(bytes.takeError());
    return nullptr;
  }
  auto file = runtime::SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(*bytes, "weights.safetensors"));
  if (!file) {
    ADD_FAILURE() << llvm::toString(file.takeError());
    return nullptr;
  }
  std::optional<runtime::LoadedWeights> weights = bindModelWeights(model, *file, c.diagnostics());
  if (!weights) {
    ADD_FAILURE() << "the weights do not bind";
    return nullptr;
  }
  auto compiled = CompiledModel::create(*c.program(), c.sourceMgr(), model, std::move(*weights),
                                        CompileModelOptions(), c.diagnostics());
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return nullptr;
  }
  EXPECT_TRUE(*compiled != nullptr) << "diagnostics";
  return std::move(*compiled);
}

CompileOptions netOptions() {
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  return options;
}

/// kSource's Net (16 -> 32 -> 5) checked in `c` and compiled with pattern
/// weights; null (after a test failure) when something fails.
std::unique_ptr<CompiledModel> compileNet(Compilation &c) {
  c.addBuffer("net.mdl", kSource);
  if (!c.check()) {
    ADD_FAILURE() << "net.mdl does not check";
    return nullptr;
  }
  auto model =
      mlirgen::instantiateModel(*c.program(), "Net", "in=16,hidden=32,out=5", sema::Device::cpu());
  if (!model) {
    ADD_FAILURE() << llvm::toString(model.takeError());
    return nullptr;
  }
  return compileWith(c, *model,
                     {{"fc1.weight", pattern({32, 16}, 1)},
                      {"fc1.bias", pattern({32}, 2)},
                      {"fc2.weight", pattern({5, 32}, 3)},
                      {"fc2.bias", pattern({5}, 4)}});
}

TEST(CompiledModelTest, OneCompilationServesEveryBatchFromManyThreads) {
  Compilation c(netOptions());
  std::unique_ptr<CompiledModel> compiled = compileNet(c);
  ASSERT_TRUE(compiled != nullptr);
  const CompiledModel &net = *compiled;

  constexpr int kThreads = 8;
  std::vector<EntryInput> inputs;
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back({pattern({1 + t, 16}, 100 + unsigned(t)), runtime::Device::cpu(), "x"});
    DiagnosticEngine diags(c.sourceMgr());
    auto y = net.call({inputs.back()}, diags);
    ASSERT_TRUE(y && *y) << (y ? "diagnostics" : llvm::toString(y.takeError()));
    ASSERT_EQ((*y)->shape(), (llvm::ArrayRef<int64_t>{1 + t, 5}));
    llvm::ArrayRef<float> values = (*y)->values<float>();
    expected.emplace_back(values.begin(), values.end());
  }

  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int call = 0; call < 20; ++call) {
        DiagnosticEngine diags(c.sourceMgr());
        auto y = net.call({inputs[size_t(t)]}, diags);
        if (!y) {
          llvm::consumeError(y.takeError());
          ++mismatches[size_t(t)];
          continue;
        }
        llvm::ArrayRef<float> values = (*y)->values<float>();
        if (!*y || std::vector<float>(values.begin(), values.end()) != expected[size_t(t)])
          ++mismatches[size_t(t)];
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;

  // A bad input is reported per call, into the caller's engine.
  DiagnosticEngine diags(c.sourceMgr());
  EntryInput wrong{runtime::Tensor::zeros(runtime::DType::F32, {2, 15}), runtime::Device::cpu(),
                   "x"};
  auto bad = net.call({wrong}, diags);
  ASSERT_TRUE(bool(bad));
  EXPECT_FALSE(bad->has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].code(), "E0604");
}

// A call reuses the binding of the call before it only for inputs of the
// same dtypes, devices and shapes: after a good call, an input of the same
// shape but another dtype is still checked (and refused), and another batch
// binds its own result shape.
TEST(CompiledModelTest, TheLastBindingServesOnlyTheSameInputs) {
  Compilation c(netOptions());
  std::unique_ptr<CompiledModel> net = compileNet(c);
  ASSERT_TRUE(net != nullptr);
  auto call = [&](runtime::Tensor x, DiagnosticEngine &diags) {
    return net->call({EntryInput{std::move(x), runtime::Device::cpu(), "x"}}, diags);
  };
  for (int round = 0; round < 2; ++round) {
    DiagnosticEngine diags(c.sourceMgr());
    auto y = call(pattern({3, 16}, 5), diags);
    ASSERT_TRUE(y && *y) << (y ? "diagnostics" : llvm::toString(y.takeError()));
    EXPECT_EQ((*y)->shape(), (llvm::ArrayRef<int64_t>{3, 5}));

    DiagnosticEngine wrongDiags(c.sourceMgr());
    auto wrong = call(runtime::Tensor::zeros(runtime::DType::F64, {3, 16}), wrongDiags);
    ASSERT_TRUE(bool(wrong));
    EXPECT_FALSE(wrong->has_value());
    ASSERT_EQ(wrongDiags.diagnostics().size(), 1u);
    EXPECT_EQ(wrongDiags.diagnostics()[0].code(), "E0603");

    auto other = call(pattern({7, 16}, 6), diags);
    ASSERT_TRUE(other && *other);
    EXPECT_EQ((*other)->shape(), (llvm::ArrayRef<int64_t>{7, 5}));
  }
}

// A batch norm after a conv folds into the conv's weights: that work reads
// the state alone, so it runs once, when the model is compiled, and every
// call reads the folded weights.
TEST(CompiledModelTest, StateOnlyWorkIsPreparedOnceAndReadByEveryCall) {
  constexpr const char *kConvBn = R"mdl(
import std.nn

model ConvBn<D: device>() {
  conv = nn.Conv2d(1, 2, 1, bias: false)
  bn = nn.BatchNorm2d(2)

  fn forward(x: f32[B, 1, 2, 2] @ D) -> f32[B, 2, 2, 2] @ D {
    return bn(conv(x))
  }
}
)mdl";
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  Compilation c(options);
  c.addBuffer("convbn.mdl", kConvBn);
  ASSERT_TRUE(c.check());
  auto model = mlirgen::instantiateModel(*c.program(), "ConvBn", "", sema::Device::cpu());
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());

  // The split: the scaled weights [2, 1, 1, 1] and the shift [2].
  mlir::DialectRegistry registry;
  jit::registerJitDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlirgen::buildModule(
      context, *c.program(), c.sourceMgr(), *model, "forward", c.diagnostics());
  ASSERT_TRUE(bool(module));
  auto specs = hoistStatePreparation(*module, "forward", unsigned(model->concrete.state.size()));
  ASSERT_TRUE(bool(specs)) << llvm::toString(specs.takeError());
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].shape, (runtime::Shape{2, 1, 1, 1}));
  EXPECT_EQ((*specs)[1].shape, (runtime::Shape{2}));

  const float w[2] = {0.5f, -2.0f}, gamma[2] = {1.5f, 0.25f}, beta[2] = {0.1f, -0.3f},
              mean[2] = {0.2f, -1.0f}, var[2] = {4.0f, 0.5f};
  std::vector<runtime::NamedTensor> tensors = {
      {"conv.weight", runtime::Tensor::fromValues<float>({2, 1, 1, 1}, w)},
      {"bn.weight", runtime::Tensor::fromValues<float>({2}, gamma)},
      {"bn.bias", runtime::Tensor::fromValues<float>({2}, beta)},
      {"bn.running_mean", runtime::Tensor::fromValues<float>({2}, mean)},
      {"bn.running_var", runtime::Tensor::fromValues<float>({2}, var)}};
  std::unique_ptr<CompiledModel> compiled = compileWith(c, *model, tensors);
  ASSERT_TRUE(compiled != nullptr);

  for (int64_t batch : {1, 3, 1}) {
    runtime::Tensor x = pattern({batch, 1, 2, 2}, unsigned(batch));
    DiagnosticEngine diags(c.sourceMgr());
    auto y = compiled->call({{x, runtime::Device::cpu(), "x"}}, diags);
    ASSERT_TRUE(y && *y) << (y ? "diagnostics" : llvm::toString(y.takeError()));
    llvm::ArrayRef<float> in = x.values<float>(), out = (*y)->values<float>();
    ASSERT_EQ(out.size(), size_t(batch * 8));
    for (int64_t b = 0; b < batch; ++b)
      for (int o = 0; o < 2; ++o)
        for (int p = 0; p < 4; ++p) {
          double conv = double(w[o]) * in[size_t(b * 4 + p)];
          double want = (conv - mean[o]) / std::sqrt(double(var[o]) + 1e-5) * gamma[o] + beta[o];
          EXPECT_NEAR(out[size_t((b * 2 + o) * 4 + p)], want, 1e-5)
              << "batch " << batch << " image " << b << " channel " << o;
        }
  }
}

} // namespace
