//===- RunCommand.cpp - `modelc run FILE --model M --weights W --input X` -===//
//
// Instantiates a model, binds its weights from a .safetensors file, checks
// each .npy input against the entry fn's signature, JIT-compiles the fn for
// the cpu, runs it and writes the result as .npy (or prints a summary).
// Exit codes as for `check`: 0 ran, 1 the model, weights or inputs have
// errors, 2 bad command line or unreadable file.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ModelOptions.h"

#include "exec/Executor.h"
#include "runtime/Npy.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand runCommand("run", "Run a model's entry fn on the cpu with weights and inputs");

namespace {

cl::opt<std::string> fileOpt(cl::Positional, cl::Required, cl::desc("FILE"), cl::sub(runCommand),
                             cl::cat(driverCategory()));
cl::opt<std::string> modelOpt("model", cl::value_desc("NAME"), cl::desc("The model to run"),
                              cl::Required, cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> argsOpt("args", cl::value_desc("NAME=VALUE,..."),
                             cl::desc("The model's value arguments, e.g. in=784,hidden=256"),
                             cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> deviceOpt("device", cl::value_desc("DEVICE"),
                               cl::desc("Device for every device parameter and, unless an input "
                                        "says otherwise, the inputs (default cpu)"),
                               cl::init("cpu"), cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> fnOpt("fn", cl::value_desc("NAME"), cl::desc("Entry fn (default forward)"),
                           cl::init("forward"), cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> weightsOpt("weights", cl::value_desc("FILE.safetensors"),
                                cl::desc("Every param and buffer, by state_dict name (needed "
                                         "unless the model has no state)"),
                                cl::sub(runCommand), cl::cat(driverCategory()));
cl::list<std::string> inputOpts("input", cl::value_desc("FILE.npy[@DEVICE]"),
                                cl::desc("One input of the entry fn, in order; repeat for each"),
                                cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> outputOpt("output", cl::value_desc("FILE.npy"),
                               cl::desc("Write the result here (default: print a summary)"),
                               cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<bool> noBlasOpt("no-blas", cl::desc("Lower f32 matmul to loops instead of OpenBLAS"),
                        cl::sub(runCommand), cl::cat(driverCategory()));
cl::list<std::string> importDirs("I", cl::Prefix, cl::value_desc("DIR"),
                                 cl::desc("Search DIR for imported modules"), cl::sub(runCommand),
                                 cl::cat(driverCategory()));
cl::opt<std::string> stdlibOpt("stdlib", cl::value_desc("DIR"),
                               cl::desc("Where `import std.*` is found"), cl::sub(runCommand),
                               cl::cat(driverCategory()));
cl::opt<ColorChoice>
    colorOpt("color", cl::desc("When to colour diagnostics"),
             cl::values(clEnumValN(ColorChoice::Auto, "auto", "when stderr is a terminal"),
                        clEnumValN(ColorChoice::Always, "always", "always"),
                        clEnumValN(ColorChoice::Never, "never", "never")),
             cl::init(ColorChoice::Auto), cl::sub(runCommand), cl::cat(driverCategory()));

/// Prints `f32[4, 10] @ cpu` and the first values, for runs without --output.
void printSummary(const runtime::Tensor &t) {
  llvm::outs() << t.str() << "\n";
  int64_t shown = std::min<int64_t>(t.numel(), 16);
  runtime::Shape index(t.rank(), 0);
  for (int64_t i = 0; i < shown; ++i) {
    llvm::outs() << (i ? " " : "") << llvm::format("%.6g", t.getAsDouble(index));
    for (int64_t d = int64_t(t.rank()) - 1; d >= 0; --d) {
      if (++index[d] < t.shape()[d])
        break;
      index[d] = 0;
    }
  }
  llvm::outs() << (t.numel() > shown ? " ...\n" : "\n");
}

} // namespace

int runRun() {
  ModelOptions options{fileOpt, modelOpt,   argsOpt,   deviceOpt,
                       fnOpt,   importDirs, stdlibOpt, colorOpt};
  bool color = shouldColorStderr(colorOpt);
  int exitCode = ExitClean;
  std::optional<LoadedModel> loaded = loadModel(options, /*needModel=*/true, exitCode);
  if (!loaded)
    return exitCode;
  Compilation &compilation = *loaded->compilation;
  const mlirgen::ConcreteModel &model = *loaded->model;
  DiagnosticEngine &diags = compilation.diagnostics();

  // Read every file before anything runs: I/O problems are exit code 2.
  llvm::Expected<runtime::Device> defaultDevice = runtime::parseDevice(deviceOpt);
  if (!defaultDevice) {
    reportDriverError(llvm::toString(defaultDevice.takeError()), color);
    return ExitUsageOrIO;
  }
  std::vector<exec::EntryInput> inputs;
  for (const std::string &spec : inputOpts) {
    auto [path, placement] = llvm::StringRef(spec).rsplit('@');
    exec::EntryInput input;
    input.device = *defaultDevice;
    if (!placement.empty()) {
      llvm::Expected<runtime::Device> device = runtime::parseDevice(placement);
      if (!device) {
        reportDriverError("--input " + spec + ": " + llvm::toString(device.takeError()), color);
        return ExitUsageOrIO;
      }
      input.device = *device;
    }
    llvm::Expected<runtime::Tensor> tensor = runtime::readNpy(path);
    if (!tensor) {
      reportDriverError(llvm::toString(tensor.takeError()), color);
      return ExitUsageOrIO;
    }
    input.tensor = std::move(*tensor);
    input.source = path.str();
    inputs.push_back(std::move(input));
  }

  std::optional<runtime::LoadedWeights> weights;
  if (weightsOpt.empty()) {
    if (!model.concrete.state.empty()) {
      reportDriverError("model '" + model.model().name + "' has " +
                            std::to_string(model.concrete.state.size()) +
                            " param(s) and buffer(s); give them with `--weights FILE`",
                        color);
      return ExitUsageOrIO;
    }
    weights.emplace();
  } else {
    llvm::Expected<runtime::SafeTensorsFile> file = runtime::SafeTensorsFile::open(weightsOpt);
    if (!file) {
      reportDriverError(llvm::toString(file.takeError()), color);
      return ExitUsageOrIO;
    }
    weights = exec::bindModelWeights(model, *file, diags);
  }

  std::optional<runtime::Tensor> output;
  if (weights) {
    exec::RunOptions runOptions;
    runOptions.fnName = fnOpt;
    runOptions.useBlas = !noBlasOpt;
    llvm::Expected<std::optional<runtime::Tensor>> result =
        exec::runModel(*compilation.program(), compilation.sourceMgr(), model, *weights, inputs,
                       runOptions, diags);
    if (!result) {
      reportDriverError(llvm::toString(result.takeError()), color);
      return ExitErrorsFound;
    }
    output = std::move(*result);
  }
  if (!output) {
    printDiagnostics(diags, compilation.sourceMgr(), color);
    return ExitErrorsFound;
  }
  if (outputOpt.empty()) {
    printSummary(*output);
    return ExitClean;
  }
  if (llvm::Error err = runtime::writeNpy(outputOpt, *output)) {
    reportDriverError(llvm::toString(std::move(err)), color);
    return ExitUsageOrIO;
  }
  return ExitClean;
}

} // namespace modelc::driver
