//===- ConcurrencyTest.cpp - One compiled model called from many threads --===//

#include "ApiTestSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

using namespace modelc::api;
using namespace modelc::api::test;

namespace {

constexpr int kThreads = 8;
constexpr int kCallsPerThread = 6;

/// Each thread calls the same Function with its own batch size and inputs;
/// every output must equal the single-threaded output, bit for bit.
TEST(ApiConcurrency, EightThreadsShareOneCompiledModel) {
  Function forward = compiledReferenceMlp();

  std::vector<Tensor> inputs;
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < kThreads; ++t) {
    int64_t batch = 1 + t;
    Result<Tensor> x = Tensor::fromValues<float>({batch, 784}, mlpInput(batch, unsigned(t)));
    ASSERT_TRUE(x);
    Result<Tensor> y = forward.call({*x});
    ASSERT_TRUE(y) << y.errorText();
    inputs.push_back(*x);
    expected.push_back(*y->toVector<float>());
  }

  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCallsPerThread; ++call) {
        // Every other call also passes a wrong input: diagnostics are per call.
        if (call % 2) {
          Result<Tensor> bad = forward.call({*Tensor::zeros(DType::F64, {2, 784})});
          if (bad || bad.diagnostics().at(0).code != "E0603")
            failures[size_t(t)].push_back("a bad input was not reported as E0603");
        }
        Result<Tensor> y = forward.call({inputs[size_t(t)]});
        if (!y) {
          failures[size_t(t)].push_back(y.errorText());
          continue;
        }
        if (*y->toVector<float>() != expected[size_t(t)])
          failures[size_t(t)].push_back("call " + std::to_string(call) + " differs");
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[size_t(t)].empty())
        << "thread " << t << ": " << failures[size_t(t)].front();
}

/// Reentrancy rests on the cpu pipeline keeping no mutable state in
/// globals: every global of the lowered module must be a constant.
TEST(ApiConcurrency, CompiledCodeHasNoMutableGlobals) {
  if (!std::ifstream(MODELC_DRIVER))
    GTEST_SKIP() << "the modelc driver is not built";
  struct Case {
    const char *file, *model, *args;
  };
  for (Case c : {Case{"examples/mlp.mdl", "Mlp", "in=784,hidden=256,out=10"},
                 Case{"examples/lenet5.mdl", "LeNet5", ""},
                 Case{"examples/mlp_block.mdl", "MlpBlock", "dim=256,hidden=1024"}}) {
    std::string command = std::string(MODELC_DRIVER) + " emit --stage=llvm " + sourcePath(c.file) +
                          " --model " + c.model +
                          (*c.args ? std::string(" --args ") + c.args : "") + " 2>&1";
    std::string text;
    int status = runCommand(command, text);
    ASSERT_EQ(status, 0) << command << "\n" << text.substr(0, 2000);
    ASSERT_NE(text.find("llvm.func"), std::string::npos) << text.substr(0, 2000);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("llvm.mlir.global") != std::string::npos) {
        EXPECT_NE(line.find(" constant "), std::string::npos) << c.file << ": " << line;
      }
    }
  }
}

} // namespace
