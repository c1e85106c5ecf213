//===- cuda_compile.cpp - Kernel compile/load times and emulator speed ----===//
//
// For LeNet-5 and the transformer MLP block (dim 1024, hidden 4096), the
// device plan's CUDA C++ is compiled by NVRTC to a CUBIN for sm_90:
//   cold: a fresh, empty on-disk kernel cache (NVRTC runs, the entry is
//         written);
//   warm: a new cache object over that directory (the process memo is empty,
//         so the entry is read from disk and checked), as a new modelc
//         process would see it.
// Then the reference models run on the CPU emulator: host compile of the
// kernels (cold cache), and forwards per second.
//
//   cuda_compile_bench [--runs N]
//
// Prints a table with min and median of N runs. Not a test: targets (cold
// LeNet-5 < 1 s, warm < 10 ms) are printed next to the figures.
//
//===----------------------------------------------------------------------===//

#include "cudaexec/JitCpuRegions.h"
#include "exec/CudaModel.h"
#include "sema/Compilation.h"

#include "runtime/cuda/Nvrtc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using namespace modelc;

namespace {

struct BenchModel {
  const char *label;
  const char *file;
  const char *model;
  const char *args;
  std::vector<int64_t> inputShape;
  bool nvrtc;   ///< time NVRTC on its kernels
  bool emulate; ///< time forwards on the emulator
};

struct Stats {
  double min = 0, median = 0;
};

Stats stats(std::vector<double> samples) {
  llvm::sort(samples);
  return {samples.front(), samples[samples.size() / 2]};
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void fail(const llvm::Twine &message) {
  llvm::errs() << "cuda_compile_bench: " << message << "\n";
  std::exit(1);
}

template <typename T> T check(llvm::Expected<T> value, const llvm::Twine &what) {
  if (!value)
    fail(what + ": " + llvm::toString(value.takeError()));
  return std::move(*value);
}

std::string freshDirectory() {
  llvm::SmallString<128> path;
  if (std::error_code error = llvm::sys::fs::createUniqueDirectory("modelc-bench-cache", path))
    fail("cannot create a cache directory: " + error.message());
  return path.str().str();
}

/// The model compiled and planned for cuda:0.
struct Planned {
  std::unique_ptr<Compilation> compilation;
  mlirgen::ConcreteModel model;
  cudagen::DevicePlan plan;
};

Planned planFor(const BenchModel &bench) {
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  Planned planned;
  planned.compilation = std::make_unique<Compilation>(options);
  Compilation &compilation = *planned.compilation;
  std::string file = std::string(MODELC_SOURCE_DIR) + "/" + bench.file;
  if (!compilation.addFile(file) || !compilation.check())
    fail(std::string("cannot check ") + file);
  planned.model = check(mlirgen::instantiateModel(*compilation.program(), bench.model, bench.args,
                                                  sema::Device::cuda(0)),
                        bench.model);
  auto plan = check(exec::planModel(*compilation.program(), compilation.sourceMgr(), planned.model,
                                    "forward", compilation.diagnostics()),
                    "planning");
  if (!plan)
    fail(std::string("diagnostics while planning ") + bench.model);
  planned.plan = std::move(*plan);
  return planned;
}

size_t kernelCount(const cudagen::DevicePlan &plan) {
  size_t count = 0;
  for (const cudagen::DeviceCode &code : plan.devices)
    count += cuda::findKernelNames(code.source).size();
  return count;
}

/// Seconds to compile every translation unit of `plan` through `cache`.
double compileAll(const cuda::Nvrtc &nvrtc, const cudagen::DevicePlan &plan,
                  cuda::KernelCache &cache) {
  double start = now();
  for (const cudagen::DeviceCode &code : plan.devices) {
    cuda::NvrtcRequest request;
    request.source = code.source;
    request.name = "bench.cu";
    request.arch = "sm_90";
    request.output = cuda::NvrtcOutput::CUBIN;
    check(nvrtc.compileCached(request, cache), "NVRTC");
  }
  return now() - start;
}

void printRow(llvm::StringRef what, Stats s, llvm::StringRef unit, double scale,
              llvm::StringRef target) {
  llvm::outs() << llvm::format("  %-52s %10.3f %10.3f %-4s %s\n", what.str().c_str(), s.min * scale,
                               s.median * scale, unit.str().c_str(), target.str().c_str());
}

} // namespace

int main(int argc, char **argv) {
  int runs = 5;
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));

  const BenchModel models[] = {
      {"LeNet-5", "examples/lenet5.mdl", "LeNet5", "", {4, 1, 28, 28}, true, true},
      {"MLP block (dim 1024, hidden 4096)",
       "examples/mlp_block.mdl",
       "MlpBlock",
       "dim=1024,hidden=4096",
       {2, 8, 1024},
       true,
       false},
      {"MLP (784-256-10)",
       "examples/mlp.mdl",
       "Mlp",
       "in=784,hidden=256,out=10",
       {4, 784},
       false,
       true},
      {"MLP block (dim 256, hidden 1024)",
       "examples/mlp_block.mdl",
       "MlpBlock",
       "dim=256,hidden=1024",
       {2, 8, 256},
       false,
       true},
  };

  llvm::outs() << "runs: " << runs << "; figures: min, median\n";
  llvm::Expected<cuda::Nvrtc &> found = cuda::Nvrtc::get();
  if (!found)
    fail("NVRTC: " + llvm::toString(found.takeError()));
  cuda::Nvrtc &nvrtc = *found;
  {
    // NVRTC's first compile in a process loads its builtins: measured on its
    // own so the rows below are per-model costs.
    cuda::KernelCache cache(std::nullopt);
    cuda::NvrtcRequest request;
    request.source = "extern \"C\" __global__ void warm_up(float *x) { x[0] = 1.0f; }";
    request.arch = "sm_90";
    request.output = cuda::NvrtcOutput::CUBIN;
    double start = now();
    check(nvrtc.compileCached(request, cache), "NVRTC warm-up");
    llvm::outs() << llvm::format("NVRTC %d.%d, first compile in the process: %.1f ms\n",
                                 nvrtc.version().major, nvrtc.version().minor,
                                 (now() - start) * 1e3);
  }

  llvm::outs() << llvm::format("\n  %-52s %10s %10s\n", "NVRTC -> CUBIN sm_90", "min", "median");
  for (const BenchModel &bench : models) {
    if (!bench.nvrtc)
      continue;
    Planned planned = planFor(bench);
    std::vector<double> cold, warm;
    for (int run = 0; run < runs; ++run) {
      std::string directory = freshDirectory();
      cuda::KernelCache empty(directory);
      cold.push_back(compileAll(nvrtc, planned.plan, empty));
      cuda::KernelCache reopened(directory);
      warm.push_back(compileAll(nvrtc, planned.plan, reopened));
      if (reopened.stats().diskHits != planned.plan.devices.size())
        fail("the warm load missed the disk cache");
      llvm::sys::fs::remove_directories(directory);
    }
    std::string label =
        std::string(bench.label) + ", " + std::to_string(kernelCount(planned.plan)) + " kernels";
    bool lenet = llvm::StringRef(bench.model) == "LeNet5";
    printRow(label + ": cold (empty cache)", stats(cold), "ms", 1e3,
             lenet ? "(target < 1000 ms)" : "");
    printRow(label + ": warm (disk cache hit)", stats(warm), "ms", 1e3, "(target < 10 ms)");
  }

  llvm::outs() << llvm::format("\n  %-52s %10s %10s\n", "CPU emulator (2 emulated GPUs)", "min",
                               "median");
  for (const BenchModel &bench : models) {
    if (!bench.emulate)
      continue;
    Planned planned = planFor(bench);
    std::string directory = freshDirectory();
    cuda::KernelCache cache(directory);
    cuda::Emulator emulator(cuda::EmulatorOptions::fromEnvironment(), &cache);
    std::unique_ptr<cuda::CudaBackend> backend = cuda::makeEmulatorBackend(emulator);
    cudaexec::PlanOptions options;
    options.backends = [&](int) -> llvm::Expected<cuda::CudaBackend &> { return *backend; };
    options.cpuRegions = cudaexec::jitCpuRegions();
    auto executor = check(cudaexec::PlanExecutor::compile(planned.plan, options), "compile");
    std::vector<runtime::Tensor> state;
    for (const sema::InstantiatedState &s : planned.model.concrete.state) {
      runtime::Shape shape;
      for (sema::Dim d : s.type.shape.dims)
        shape.push_back(d.asConstant().value_or(1));
      state.push_back(runtime::Tensor::zeros(runtime::DType::F32, shape));
    }
    if (llvm::Error error = executor->bindState(state))
      fail(llvm::toString(std::move(error)));
    runtime::Tensor input = runtime::Tensor::zeros(runtime::DType::F32, bench.inputShape);
    check(executor->run({input}), "warm-up forward");
    std::vector<double> perForward;
    for (int run = 0; run < runs; ++run) {
      double start = now();
      check(executor->run({input}), "forward");
      perForward.push_back(now() - start);
    }
    Stats s = stats(perForward);
    printRow(
        std::string(bench.label) + ": host compile of the kernels (cold)",
        {executor->prepareTimes().kernelLoadSeconds, executor->prepareTimes().kernelLoadSeconds},
        "s", 1, "");
    // Fastest forward = most forwards per second.
    llvm::outs() << llvm::format("  %-52s %10.1f %10.1f fwd/s\n",
                                 (std::string(bench.label) + ": forwards per second").c_str(),
                                 1 / s.min, 1 / s.median);
    llvm::sys::fs::remove_directories(directory);
  }
  return 0;
}
