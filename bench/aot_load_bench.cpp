//===- aot_load_bench.cpp - How fast a .mdlc artifact is ready to call ----===//
//
//   aot-load-bench [--runs N] NAME=ARTIFACT.mdlc,WEIGHTS.safetensors,INPUT.npy ...
//
// For each artifact, prints min and median over N runs (default 20) of:
//   - load, fresh process: LoadedArtifact::load (map, verify the checksum,
//     magic, version, host, link the object, look up the entry) as the first
//     thing a new process does (this binary re-run with --child);
//   - first call after that load (weights bound beforehand);
//   - load, warm process: the same load repeated in one process;
//   - steady call: later calls of the same loaded artifact.
// The binary links the loader and runtime only: no MLIR, no front end.
// A cuda artifact runs where MODELC_CUDA says (the driver, or `emulate`: its
// kernels then come from the kernel cache the first build filled); its first
// call also copies the weights to the GPU.
//
//===----------------------------------------------------------------------===//

#include "aot/ArtifactLoader.h"

#include "runtime/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

namespace cl = llvm::cl;
using namespace modelc;

static cl::OptionCategory toolOptions("aot-load-bench options");
static cl::list<std::string> cases(cl::cat(toolOptions), cl::Positional, cl::OneOrMore,
                                   cl::desc("NAME=ARTIFACT,WEIGHTS,INPUT"));
static cl::opt<unsigned> runs(cl::cat(toolOptions), "runs", cl::init(20),
                              cl::desc("Runs per figure"));
static cl::opt<bool> child(cl::cat(toolOptions), "child", cl::Hidden,
                           cl::desc("Load the one case once; print load and first-call ms"));

namespace {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Case {
  std::string name, artifact, weights, input;
};

llvm::Expected<Case> parseCase(llvm::StringRef spec) {
  auto [name, files] = spec.split('=');
  llvm::SmallVector<llvm::StringRef, 3> parts;
  files.split(parts, ',');
  if (name.empty() || parts.size() != 3)
    return llvm::createStringError("expected NAME=ARTIFACT,WEIGHTS,INPUT, got '" + spec + "'");
  return Case{name.str(), parts[0].str(), parts[1].str(), parts[2].str()};
}

/// Everything a call needs, loaded and bound.
struct Ready {
  std::unique_ptr<aot::LoadedArtifact> artifact;
  runtime::LoadedWeights weights;
  runtime::Tensor input;
};

llvm::Expected<Ready> prepare(const Case &c, double *loadMs) {
  std::optional<runtime::SafeTensorsFile> file;
  if (auto opened = runtime::SafeTensorsFile::open(c.weights))
    file = std::move(*opened);
  else
    return opened.takeError();
  llvm::Expected<runtime::Tensor> input = runtime::readNpy(c.input);
  if (!input)
    return input.takeError();
  Clock::time_point start = Clock::now();
  auto artifact = aot::LoadedArtifact::load(c.artifact);
  if (!artifact)
    return artifact.takeError();
  *loadMs = msSince(start);
  auto weights = (*artifact)->bindWeights(*file);
  if (!weights)
    return weights.takeError();
  // The input arrives where the signature wants it (host bytes, labelled).
  const aot::EntryFn *fn = (*artifact)->findFn("forward");
  runtime::Tensor x = *input;
  if (fn && !fn->params.empty() && fn->params[0].device != x.device())
    x = runtime::Tensor::borrow(x.dtype(), x.shape(), x.data(),
                                std::make_shared<runtime::Tensor>(*input), fn->params[0].device);
  return Ready{std::move(*artifact), std::move(*weights), std::move(x)};
}

llvm::Expected<double> timeCall(const Ready &ready) {
  Clock::time_point start = Clock::now();
  auto out = ready.artifact->call("forward", ready.weights, {ready.input});
  if (!out)
    return out.takeError();
  return msSince(start);
}

struct Stats {
  double min = 0, median = 0;
};

Stats stats(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return {values.front(), values[values.size() / 2]};
}

int fail(llvm::Error err) {
  llvm::errs() << "aot-load-bench: " << llvm::toString(std::move(err)) << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Only this tool's options in --help, not every LLVM option linked in.
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv, "Load time of .mdlc artifacts\n");
  std::vector<Case> parsed;
  for (const std::string &spec : cases) {
    llvm::Expected<Case> c = parseCase(spec);
    if (!c)
      return fail(c.takeError());
    parsed.push_back(std::move(*c));
  }

  if (child) {
    double loadMs = 0;
    llvm::Expected<Ready> ready = prepare(parsed.front(), &loadMs);
    if (!ready)
      return fail(ready.takeError());
    llvm::Expected<double> callMs = timeCall(*ready);
    if (!callMs)
      return fail(callMs.takeError());
    llvm::outs() << llvm::format("%.4f %.4f\n", loadMs, *callMs);
    return 0;
  }

  std::string self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&fail);
  llvm::outs() << llvm::format("%-10s %-24s %10s %10s\n", "model", "figure (ms)", "min", "median");
  for (const Case &c : parsed) {
    std::vector<double> freshLoads, firstCalls, warmLoads, steadyCalls;
    llvm::SmallString<128> output;
    if (std::error_code ec = llvm::sys::fs::createTemporaryFile("aot-load", "txt", output))
      return fail(llvm::errorCodeToError(ec));
    for (unsigned r = 0; r < runs; ++r) {
      std::string spec = c.name + "=" + c.artifact + "," + c.weights + "," + c.input;
      llvm::StringRef args[] = {self, "--child", spec};
      std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(output),
                                                    std::nullopt};
      std::string error;
      if (llvm::sys::ExecuteAndWait(self, args, std::nullopt, redirects, 0, 0, &error) != 0)
        return fail(llvm::createStringError("child run failed " + error));
      auto text = llvm::MemoryBuffer::getFile(output);
      double load = 0, call = 0;
      if (!text || sscanf((*text)->getBufferStart(), "%lf %lf", &load, &call) != 2)
        return fail(llvm::createStringError("child run printed no timings"));
      freshLoads.push_back(load);
      firstCalls.push_back(call);
    }
    llvm::sys::fs::remove(output);
    std::optional<Ready> keep;
    for (unsigned r = 0; r < runs; ++r) {
      double load = 0;
      llvm::Expected<Ready> ready = prepare(c, &load);
      if (!ready)
        return fail(ready.takeError());
      warmLoads.push_back(load);
      keep = std::move(*ready);
    }
    for (unsigned r = 0; r < runs; ++r) {
      llvm::Expected<double> call = timeCall(*keep);
      if (!call)
        return fail(call.takeError());
      steadyCalls.push_back(*call);
    }
    auto row = [&](llvm::StringRef figure, std::vector<double> values) {
      Stats s = stats(std::move(values));
      llvm::outs() << llvm::format("%-10s %-24s %10.3f %10.3f\n", c.name.c_str(),
                                   figure.str().c_str(), s.min, s.median);
    };
    row("load, fresh process", freshLoads);
    row("first call after load", firstCalls);
    row("load, warm process", warmLoads);
    row("steady call", steadyCalls);
  }
  return 0;
}
