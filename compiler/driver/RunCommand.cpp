//===- RunCommand.cpp - `modelc run FILE --model M --weights W --input X` -===//
//
// Instantiates a model, binds its weights from a .safetensors file, checks
// each .npy input against the entry fn's signature, JIT-compiles the fn for
// the cpu (or, for a model placed on cuda:N, runs its device plan on real or
// emulated GPUs), runs it and writes the result as .npy (or prints a
// summary; one .npy per result of an entry fn that returns several). Exit
// codes as for `check`: 0 ran, 1 the model, weights or inputs
// have errors, 2 bad command line, unreadable file, or a GPU this machine
// cannot provide (no driver, no such GPU, no NVRTC).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ModelOptions.h"
#include "RunArtifact.h"

#include "exec/Executor.h"
#include "runtime/Npy.h"
#include "runtime/cuda/CudaError.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand runCommand("run", "Run a model's entry fn on the cpu with weights and inputs");

namespace {

cl::opt<std::string> fileOpt(cl::Positional, cl::desc("FILE"), cl::sub(runCommand),
                             cl::cat(driverCategory()));
cl::opt<std::string> modelOpt("model", cl::value_desc("NAME"),
                              cl::desc("The model to run (default: the file's one model whose "
                                       "arguments are all given or defaulted)"),
                              cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> argsOpt(
    "args", cl::value_desc("NAME=VALUE,..."),
    cl::desc("The model's value arguments, e.g. in=784,hidden=256,bias=false,activation=gelu"),
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
cl::list<std::string> inputOpts("input", cl::value_desc("FILE.npy[@DEVICE] | VALUE"),
                                cl::desc("One input of the entry fn, in order; repeat for each. "
                                         "A scalar parameter (int, float, bool) takes a value "
                                         "(`--input 0.5`) or a rank-0 .npy"),
                                cl::sub(runCommand), cl::cat(driverCategory()));
cl::list<std::string> outputOpts("output", cl::value_desc("FILE.npy"),
                                 cl::desc("Write the result here (default: print a summary); "
                                          "an entry fn with several results takes one "
                                          "`--output` per result, in order"),
                                 cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<std::string> cudaOpt("cuda", cl::value_desc("emulate|driver"),
                             cl::desc("How cuda:N runs: on real GPUs through the driver (default; "
                                      "MODELC_CUDA=emulate changes it) or on the CPU emulator"),
                             cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<bool> tf32Opt("tf32",
                      cl::desc("f32 matmuls and convolutions on cuda:N use TF32 tensor cores "
                               "(inputs rounded to a 10-bit mantissa; default: exact f32)"),
                      cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<bool> reportOpt("report",
                        cl::desc("For a model on cuda:N: after the run, say on stderr whether a "
                                 "CUDA graph ran, the device memory kept, and which matrix "
                                 "products cuBLASLt ran instead of modelc's kernels and why"),
                        cl::sub(runCommand), cl::cat(driverCategory()));
cl::opt<bool> noBlasOpt("no-blas",
                        cl::desc("Lower f32 matmul and conv to loops instead of library calls "
                                 "(MODELC_GEMM=auto|onednn-matmul|onednn-sgemm|openblas|tiles|loops "
                                 "picks the library for matmuls; default: measured)"),
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

/// Prints why the run failed; CUDA errors keep their compiler log as a note.
/// Exit 2 when the machine lacks what cuda:N needs, else 1.
int reportRunFailure(llvm::Error error, bool color) {
  int exitCode = ExitErrorsFound;
  llvm::handleAllErrors(
      std::move(error),
      [&](const cuda::CudaError &failure) {
        if (cudaexec::isDeviceUnavailable(failure.getKind()))
          exitCode = ExitUsageOrIO;
        reportDriverError(failure.getMessage(), color);
        if (!failure.getLog().empty())
          llvm::errs() << "note: " << llvm::StringRef(failure.getLog()).rtrim() << "\n";
      },
      [&](const llvm::ErrorInfoBase &failure) { reportDriverError(failure.message(), color); });
  return exitCode;
}

} // namespace

int runRun() {
  if (fileOpt.empty())
    return reportMissingFile("run", "FILE.mdl|NET.mdlc [--model NAME] --input X.npy...",
                             shouldColorStderr(colorOpt));
  std::optional<cudaexec::CudaMode> cudaMode;
  if (cudaOpt.getNumOccurrences()) {
    llvm::Expected<cudaexec::CudaMode> mode = cudaexec::parseCudaMode(cudaOpt);
    if (!mode) {
      reportDriverError("--cuda=" + cudaOpt + ": " + llvm::toString(mode.takeError()),
                        shouldColorStderr(colorOpt));
      return ExitUsageOrIO;
    }
    cudaMode = *mode;
  }
  if (isArtifactPath(fileOpt)) {
    ArtifactRun run;
    run.file = fileOpt;
    run.fn = fnOpt;
    run.weights = weightsOpt;
    run.inputs = inputOpts;
    run.defaultDevice = deviceOpt.getNumOccurrences() ? deviceOpt.getValue() : "";
    run.outputs = outputOpts;
    run.color = shouldColorStderr(colorOpt);
    run.cudaMode = cudaMode;
    run.report = reportOpt;
    const std::pair<const char *, bool> compileOnly[] = {
        {"--model", modelOpt.getNumOccurrences()},
        {"--args", argsOpt.getNumOccurrences()},
        {"--no-blas", noBlasOpt.getNumOccurrences()},
        {"--tf32", tf32Opt.getNumOccurrences()},
        {"-I", !importDirs.empty()},
        {"--stdlib", stdlibOpt.getNumOccurrences()}};
    for (auto [name, given] : compileOnly)
      if (given)
        run.compileOptionsGiven.push_back(name);
    return runArtifact(run);
  }
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
  // The entry fn's results, each with its device: the `--output`s must match.
  std::vector<std::string> resultDevices;
  if (const sema::FnInfo *fn = model.findFn(fnOpt)) {
    if (fn->result.kind() == sema::Type::Kind::Tuple)
      for (const sema::Type &element : *fn->result.elements)
        resultDevices.push_back(element.dev.str());
    else
      resultDevices.push_back(fn->result.dev.str());
  }
  if (!resultDevices.empty() && !checkOutputCount(outputOpts, resultDevices.size(), fnOpt, color))
    return ExitUsageOrIO;

  // Read every file before anything runs: I/O problems are exit code 2.
  std::vector<std::string> pinned; // the entry's parameters declared on a device
  if (const sema::FnInfo *generic = model.model().findFn(fnOpt))
    for (const sema::FnParamInfo &param : generic->params)
      pinned.push_back(param.type.isTensor() && param.type.dev.isConcrete() ? param.type.dev.str()
                                                                            : "");
  std::optional<std::vector<exec::EntryInput>> inputs =
      readEntryInputs(inputOpts, deviceOpt, color, pinned);
  if (!inputs)
    return ExitUsageOrIO;

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

  std::optional<exec::Results> outputs;
  if (weights) {
    exec::RunOptions runOptions;
    runOptions.fnName = fnOpt;
    runOptions.useBlas = !noBlasOpt;
    runOptions.cudaMode = cudaMode;
    runOptions.tf32 = tf32Opt;
    std::string gpuReport;
    if (reportOpt)
      runOptions.gpuReport = &gpuReport;
    llvm::Expected<std::optional<exec::Results>> result =
        exec::runModelResults(*compilation.program(), compilation.sourceMgr(), model, *weights,
                              *inputs, runOptions, diags);
    if (!result)
      return reportRunFailure(result.takeError(), color);
    outputs = std::move(*result);
    if (reportOpt)
      llvm::errs() << (gpuReport.empty() ? "the model ran on the cpu\n" : gpuReport);
  }
  if (!outputs) {
    printDiagnostics(diags, compilation.sourceMgr(), color);
    return ExitErrorsFound;
  }
  return writeRunOutputs(*outputs, resultDevices, outputOpts, color);
}

} // namespace modelc::driver
