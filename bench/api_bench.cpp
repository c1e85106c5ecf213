//===- api_bench.cpp - time Function::call of the embedding API -----------===//
//
// The path an embedding application calls (include/modelc): compile the
// file, instantiate, load the weights, compile `forward` once (symbolic
// dims stay dynamic, as the API keeps them), then time `Function::call`:
// input checks, descriptors, output allocation and the compiled code.
// Linked against libmodelc only. Same protocol as modelc-bench, for
// bench/cpu_vs_pytorch.py:
//
//   modelc-api-bench FILE.mdl MODEL ARGS WEIGHTS INPUT.f32 DIM... --output OUT.f32
//                    [--threads N] [--warmup N] [--device cuda:N] [--tf32]
//   stdin: `time N` -> one line of N per-call times in nanoseconds; `quit`
//
// With --device cuda:N (for bench/gpu_vs_pytorch.py) the model is
// instantiated there, the input is copied to the GPU once, and each timed
// call is `call` plus reading the result back to the host (the read waits
// for the GPU), as the PyTorch side times forward + `.cpu()`; --tf32 is
// CompileOptions::tf32 (f32 matmuls and convolutions on TF32 tensor cores).
//
// ARGS is `in=784,hidden=256` (ints, or a dtype: `dtype=bf16`) or `-`; INPUT.f32 holds the input's
// float32 values, row-major, of shape DIM...
//
//===----------------------------------------------------------------------===//

#include "modelc/modelc.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "modelc-api-bench: %s\n", message.c_str());
  std::exit(1);
}

template <typename T> T check(modelc::api::Result<T> result, const std::string &what) {
  if (!result)
    fail(std::string(what) + ":\n" + result.errorText());
  return std::move(result).value();
}

modelc::api::ModelArgs parseArgs(const std::string &text) {
  modelc::api::ModelArgs args;
  if (text == "-")
    return args;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      fail("model argument without '=': " + item);
    std::string value = item.substr(eq + 1);
    // An int, or a dtype such as `bf16` (which the API takes as a string).
    bool isInt = !value.empty() && value.find_first_not_of("-0123456789") == std::string::npos;
    if (isInt)
      args.emplace_back(item.substr(0, eq), std::stoll(value));
    else
      args.emplace_back(item.substr(0, eq), value);
  }
  return args;
}

/// oneDNN (OpenMP) and OpenBLAS threads, as torch.set_num_threads.
void setLibraryThreads(int threads) {
  // modelc loads OpenBLAS on first use (jit/OpenBlasLibrary.h), which then
  // reads its thread count from here; one loaded already takes the call below.
  setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  using SetThreads = void (*)(int);
  for (const char *name : {"openblas_set_num_threads", "omp_set_num_threads"})
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, name)))
      set(threads);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> positional;
  std::string outputPath;
  int threads = 1;
  int warmup = 20;
  std::string deviceName = "cpu";
  modelc::api::CompileOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--output" && i + 1 < argc)
      outputPath = argv[++i];
    else if (arg == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (arg == "--device" && i + 1 < argc)
      deviceName = argv[++i];
    else if (arg == "--tf32")
      options.tf32 = true;
    else if (arg == "--warmup" && i + 1 < argc)
      warmup = std::max(1, std::atoi(argv[++i]));
    else
      positional.push_back(arg);
  }
  if (positional.size() < 6)
    fail("usage: modelc-api-bench FILE.mdl MODEL ARGS WEIGHTS INPUT.f32 DIM... "
         "[--output OUT.f32] [--threads N] [--warmup N] [--device cuda:N] [--tf32]");
  modelc::api::Device device = check(modelc::api::Device::parse(deviceName), "--device");
  bool onHost = deviceName == "cpu";
  setLibraryThreads(threads);
  std::vector<int64_t> shape;
  for (size_t i = 5; i < positional.size(); ++i)
    shape.push_back(std::stoll(positional[i]));
  size_t numel = 1;
  for (int64_t d : shape)
    numel *= size_t(d);
  std::vector<float> values(numel);
  std::ifstream input(positional[4], std::ios::binary);
  if (!input.read(reinterpret_cast<char *>(values.data()), std::streamsize(numel * sizeof(float))))
    fail("cannot read " + positional[4]);

  auto start = std::chrono::steady_clock::now();
  auto program = check(modelc::api::Program::compileFile(positional[0], options), "compile");
  auto model =
      check(program.instantiate(positional[1], device, parseArgs(positional[2])), "instantiate");
  modelc::api::Status loaded = model.loadWeights(positional[3]);
  if (!loaded)
    fail("weights:\n" + loaded.errorText());
  auto forward = check(model.compile("forward"), "compile forward");
  double compileMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto x = check(modelc::api::Tensor::borrowHost(modelc::api::DType::F32, shape, values.data()),
                 "input");
  if (!onHost)
    x = check(x.to(device), "input to " + deviceName);
  std::vector<modelc::api::Tensor> inputs = {x};
  modelc::api::Tensor y;
  std::vector<char> readBack;
  // One forward as timed: on a GPU the result is read back, which waits.
  auto forwardOnce = [&] {
    y = check(forward.call(inputs), "call");
    if (onHost)
      return;
    readBack.resize(y.nbytes());
    modelc::api::Status read = y.copyToHost(readBack.data(), readBack.size());
    if (!read)
      fail("read-back:\n" + read.errorText());
  };
  for (int i = 0; i < warmup; ++i)
    forwardOnce();
  if (!outputPath.empty()) {
    auto out = check(y.toVector<float>(), "output");
    std::ofstream file(outputPath, std::ios::binary);
    file.write(reinterpret_cast<const char *>(out.data()),
               std::streamsize(out.size() * sizeof(float)));
  }
  // How the warm forwards ran on a GPU (graph, GEMMs on cuBLASLt or not), as
  // a JSON string.
  std::string report;
  for (char c : forward.runReport()) {
    if (c == '"' || c == '\\')
      report += '\\';
    report += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  std::printf("{\"compile_ms\": %.3f, \"run_report\": \"%s\"}\n", compileMs, report.c_str());
  std::fflush(stdout);

  std::string command;
  std::vector<int64_t> times;
  while (std::cin >> command) {
    if (command == "quit")
      break;
    if (command != "time")
      fail("unknown command '" + command + "'");
    int count = 0;
    std::cin >> count;
    times.assign(size_t(std::max(count, 0)), 0);
    for (int64_t &t : times) {
      auto callStart = std::chrono::steady_clock::now();
      forwardOnce();
      t = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                               callStart)
              .count();
    }
    std::string line;
    for (size_t i = 0; i < times.size(); ++i)
      line += (i ? " " : "") + std::to_string(times[i]);
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  return 0;
}
