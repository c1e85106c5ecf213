//===- CompiledModelTest.cpp - compile once, call many times, from threads ===//

#include "exec/CompiledModel.h"

#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

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

TEST(CompiledModelTest, OneCompilationServesEveryBatchFromManyThreads) {
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  Compilation c(options);
  c.addBuffer("net.mdl", kSource);
  ASSERT_TRUE(c.check());
  auto model =
      mlirgen::instantiateModel(*c.program(), "Net", "in=16,hidden=32,out=5", sema::Device::cpu());
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  std::vector<runtime::NamedTensor> tensors = {{"fc1.weight", pattern({32, 16}, 1)},
                                               {"fc1.bias", pattern({32}, 2)},
                                               {"fc2.weight", pattern({5, 32}, 3)},
                                               {"fc2.bias", pattern({5}, 4)}};
  llvm::Expected<std::string> bytes = runtime::serializeSafeTensors(tensors);
  ASSERT_TRUE(bool(bytes));
  auto file = runtime::SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(*bytes, "net.safetensors"));
  ASSERT_TRUE(bool(file));
  std::optional<runtime::LoadedWeights> weights = bindModelWeights(*model, *file, c.diagnostics());
  ASSERT_TRUE(weights.has_value());

  auto compiled = CompiledModel::create(*c.program(), c.sourceMgr(), *model, std::move(*weights),
                                        CompileModelOptions(), c.diagnostics());
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  ASSERT_TRUE(*compiled != nullptr);
  const CompiledModel &net = **compiled;

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

} // namespace
