//===- PerformanceTest.cpp - Parsing a large generated model --------------===//
//
// A 10,000-line file of realistic models (device-generic, state, submodels,
// fns with expressions) must parse quickly: the whole `modelc check` budget
// is 200 ms. The bound asserted here is loose (shared CI machines are
// noisy); it catches pathological regressions such as every file falling
// back to full-LL prediction. The measured time is printed.
//
//===----------------------------------------------------------------------===//
#include "ParseTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>

using namespace modelc::test;

namespace {

std::string generateModels(unsigned lines) {
  std::string text = "import std.nn\n\n";
  unsigned count = 2;
  for (unsigned i = 1; count < lines; ++i) {
    std::string block = R"mdl(/// Block {0}: a residual MLP.
model Block{0}<D: device>(in: int, hidden: int, out: int, p: float = 0.1) {
  /// Scale of the skip path.
  param scale{0}: f32[out] @ D
  buffer mean: f32[in] @ cpu = zeros([in])
  fc1 = nn.Linear(in, hidden)
  fc2 = nn.Linear(hidden, out)
  norm = nn.LayerNorm(in)
  fn forward(x: f32[B, in] @ D) -> f32[B, out] @ D {
    let h = relu(fc1(norm(x - mean.to(D))))
    let g: f32[B, hidden] @ D = dropout(h * 0.5 + h ** 2, p)
    let y = fc2(g) @ eye(out) + scale{0}
    y = where(y > 0.0 and not (y < -1.5), y, y * 2)
    return log_softmax(y[:, 0:out] + x[:, 1:{1}].sum(dim: 1, keepdim: true), dim: 1)
  }
  fn encode(x: f32[B, in * 2 + 1] @ D, n: int) -> f32[B, hidden] @ D {
    let z = cast(x, f16)
    for layer in layers { z = layer(z) }
    return gelu(fc1(reshape(z, [-1, in])))
  }
}

)mdl";
    // formatv would read the braces of the language as its own.
    for (size_t at; (at = block.find("{0}")) != std::string::npos;)
      block.replace(at, 3, std::to_string(i));
    block.replace(block.find("{1}"), 3, std::to_string(i % 7 + 2));
    text += block;
    count += 22;
  }
  return text;
}

double cpuMilliseconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec * 1e-6;
}

TEST(PerformanceTest, TenThousandLines) {
  std::string text = generateModels(10000);
  ASSERT_GE(std::count(text.begin(), text.end(), '\n'), 10000);
  double best = 1e9;
  for (int run = 0; run < 5; ++run) {
    double start = cpuMilliseconds();
    auto parsed = parse(text);
    best = std::min(best, cpuMilliseconds() - start);
    ASSERT_TRUE(parsed->diagnostics().empty()) << parsed->diagnostics().front();
    ASSERT_EQ(parsed->module->models.size(), 455u);
  }
  std::printf("10,000 lines (%zu bytes): best of 5 is %.1f ms CPU\n", text.size(), best);
  EXPECT_LT(best, 1000.0);
}

TEST(PerformanceTest, TenThousandLinesWithAnErrorAtTheEnd) {
  // The error pass (recovery, diagnostics) must not be much slower than
  // the clean one: an editor sends a file with an error on most keystrokes.
  std::string text = generateModels(10000) + "model Broken { fn f( }\n";
  double best = 1e9;
  for (int run = 0; run < 3; ++run) {
    double start = cpuMilliseconds();
    auto parsed = parse(text);
    best = std::min(best, cpuMilliseconds() - start);
    ASSERT_EQ(parsed->codes(), std::vector<std::string>{"E0001"});
    ASSERT_EQ(parsed->module->models.size(), 456u);
  }
  std::printf("10,000 lines with an error at the end: best of 3 is %.1f ms CPU\n", best);
  EXPECT_LT(best, 1500.0);
}

} // namespace
