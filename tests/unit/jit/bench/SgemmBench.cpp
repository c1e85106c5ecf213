//===- SgemmBench.cpp - GFLOP/s of JIT-compiled mdl.matmul vs OpenBLAS ----===//
//
// Usage: modelc_sgemm_bench [size...]   (default 256 512 1024)
// For a fair single-thread figure run it as
//   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 modelc_sgemm_bench
// It prints, per square size, the best of several runs for: the JIT with the
// BLAS rewrite, the JIT with plain loops (small sizes only), and a direct
// cblas_sgemm call; then the median time of an MLP 784-256-10 forward.
//
//===----------------------------------------------------------------------===//

#include "jit/Jit.h"
#include "jit/MemRef.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

using namespace modelc::jit;

namespace {

template <typename Fn> double bestSeconds(Fn &&fn, int repeats) {
  fn(); // warm-up
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

std::string matmulSource(int64_t n) {
  return llvm::formatv(R"(
func.func @mm(%a: tensor<{0}x{0}xf32>, %b: tensor<{0}x{0}xf32>) -> tensor<{0}x{0}xf32> {{
  %0 = mdl.matmul %a, %b : tensor<{0}x{0}xf32>, tensor<{0}x{0}xf32> -> tensor<{0}x{0}xf32>
  return %0 : tensor<{0}x{0}xf32>
})",
                       n)
      .str();
}

double jitGflops(int64_t n, bool useBlas, int repeats) {
  JitOptions options;
  options.useBlas = useBlas;
  auto module = JitModule::compileSource(matmulSource(n), options);
  if (!module) {
    llvm::errs() << llvm::toString(module.takeError());
    std::exit(1);
  }
  OwnedMemRef<float, 2> a({n, n}, 0.5f), b({n, n}, 0.25f), c({n, n});
  double seconds = bestSeconds(
      [&] {
        if (llvm::Error error = (*module)->call("mm", {a.get(), b.get(), c.get()})) {
          llvm::errs() << llvm::toString(std::move(error));
          std::exit(1);
        }
      },
      repeats);
  if (c[0] != 0.125f * n) {
    llvm::errs() << "wrong result: " << c[0] << "\n";
    std::exit(1);
  }
  return 2.0 * n * n * n / seconds / 1e9;
}

double blasGflops(int64_t n, int repeats) {
  OwnedMemRef<float, 2> a({n, n}, 0.5f), b({n, n}, 0.25f), c({n, n});
  int size = static_cast<int>(n);
  double seconds = bestSeconds(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0f,
                    a.values().data(), size, b.values().data(), size, 0.0f, c.values().data(),
                    size);
      },
      repeats);
  return 2.0 * n * n * n / seconds / 1e9;
}

/// Median microseconds of one forward of MLP 784-256-10 (Linear, ReLU,
/// Linear), the model of notes/peers.md, at `batch`.
double mlpMicros(int64_t batch) {
  const char *source = R"(
func.func @mlp(%x: tensor<?x784xf32>, %w1: tensor<784x256xf32>, %b1: tensor<256xf32>,
               %w2: tensor<256x10xf32>, %b2: tensor<10xf32>) -> tensor<?x10xf32> {
  %0 = mdl.matmul %x, %w1 : tensor<?x784xf32>, tensor<784x256xf32> -> tensor<?x256xf32>
  %1 = mdl.add %0, %b1 : tensor<?x256xf32>, tensor<256xf32> -> tensor<?x256xf32>
  %2 = mdl.relu %1 : tensor<?x256xf32>
  %3 = mdl.matmul %2, %w2 : tensor<?x256xf32>, tensor<256x10xf32> -> tensor<?x10xf32>
  %4 = mdl.add %3, %b2 : tensor<?x10xf32>, tensor<10xf32> -> tensor<?x10xf32>
  return %4 : tensor<?x10xf32>
})";
  auto module = JitModule::compileSource(source);
  if (!module) {
    llvm::errs() << llvm::toString(module.takeError());
    std::exit(1);
  }
  OwnedMemRef<float, 2> x({batch, 784}, 0.01f), w1({784, 256}, 0.01f), w2({256, 10}, 0.01f),
      y({batch, 10});
  OwnedMemRef<float, 1> b1({256}, 0.1f), b2({10}, 0.1f);
  std::vector<double> times;
  for (int i = 0; i < 200; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error error =
            (*module)->call("mlp", {x.get(), w1.get(), b1.get(), w2.get(), b2.get(), y.get()})) {
      llvm::errs() << llvm::toString(std::move(error));
      std::exit(1);
    }
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty())
    sizes = {256, 512, 1024};
  llvm::outs() << llvm::formatv("{0,6} {1,14} {2,14} {3,14}\n", "n", "jit+blas", "jit loops",
                                "cblas_sgemm");
  for (int64_t n : sizes) {
    int repeats = n <= 512 ? 10 : 5;
    double blas = blasGflops(n, repeats);
    double jit = jitGflops(n, true, repeats);
    std::string loops = n <= 512 ? llvm::formatv("{0:F1}", jitGflops(n, false, 2)).str() : "-";
    llvm::outs() << llvm::formatv("{0,6} {1,14:F1} {2,14} {3,14:F1}\n", n, jit, loops, blas);
  }
  llvm::outs() << "\nMLP 784-256-10 forward, median us:";
  for (int64_t batch : {1, 64, 256})
    llvm::outs() << llvm::formatv("  batch {0}: {1:F1}", batch, mlpMicros(batch));
  llvm::outs() << "\n";
  return 0;
}
