//===- RunArtifact.cpp - `modelc run net.mdlc` ----------------------------===//

#include "RunArtifact.h"

#include "Commands.h"
#include "DriverOutput.h"
#include "ModelOptions.h"

#include "aot/ArtifactLoader.h"
#include "diagnostics/TextRenderer.h"
#include "runtime/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc::driver {

namespace {

/// Prints `error[CODE]: headline` as the diagnostics renderer does, but with
/// no source snippet to show, then the notes and the summary line.
void reportCodedError(llvm::StringRef code, llvm::StringRef headline,
                      llvm::ArrayRef<std::string> notes, bool color) {
  llvm::raw_ostream &os = llvm::errs();
  llvm::ColorMode mode = color ? llvm::ColorMode::Enable : llvm::ColorMode::Disable;
  llvm::WithColor(os, llvm::raw_ostream::RED, /*Bold=*/true, /*BG=*/false, mode)
      << "error[" << code << "]";
  llvm::WithColor(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true, /*BG=*/false, mode)
      << ": " << headline;
  os << "\n";
  for (const std::string &note : notes)
    os << "  = note: " << note << "\n";
  renderSummary(1, 0, os, color);
}

} // namespace

int runArtifact(const ArtifactRun &run) {
  if (!run.compileOptionsGiven.empty()) {
    reportDriverError(llvm::join(run.compileOptionsGiven, ", ") +
                          " name a model to compile, but '" + run.file +
                          "' is compiled already; leave them out",
                      run.color);
    return ExitUsageOrIO;
  }
  aot::LoadOptions options;
  options.cudaMode = run.cudaMode;
  llvm::Expected<std::unique_ptr<aot::LoadedArtifact>> loaded =
      aot::LoadedArtifact::load(run.file, options);
  if (!loaded) {
    int exitCode = ExitErrorsFound;
    llvm::handleAllErrors(
        loaded.takeError(),
        [&](const aot::ArtifactError &refused) { reportDriverError(refused.message, run.color); },
        [&](const cuda::CudaError &failure) {
          // No driver, no such GPU, no host compiler: this machine cannot run it.
          if (cudaexec::isDeviceUnavailable(failure.getKind()))
            exitCode = ExitUsageOrIO;
          reportDriverError(failure.getMessage(), run.color);
          if (!failure.getLog().empty())
            llvm::errs() << "note: " << llvm::StringRef(failure.getLog()).rtrim() << "\n";
        },
        [&](const llvm::ErrorInfoBase &unreadable) {
          exitCode = ExitUsageOrIO;
          reportDriverError(unreadable.message(), run.color);
        });
    return exitCode;
  }
  const aot::LoadedArtifact &artifact = **loaded;
  std::vector<std::string> resultDevices;
  if (const aot::EntryFn *fn = artifact.findFn(run.fn))
    for (const aot::TensorSpec &result : fn->results)
      resultDevices.push_back(result.device.str());
  if (!resultDevices.empty() &&
      !checkOutputCount(run.outputs, resultDevices.size(), run.fn, run.color))
    return ExitUsageOrIO;

  // An artifact runs on the device it was built for: `--device` cannot move
  // it (it would only place the inputs where the model is not).
  const std::string &builtFor = artifact.contents().modelDevice;
  if (!run.defaultDevice.empty()) {
    llvm::Expected<runtime::Device> asked = runtime::parseDevice(run.defaultDevice);
    llvm::Expected<runtime::Device> built = runtime::parseDevice(builtFor);
    if (asked && built && !(*asked == *built)) {
      reportDriverError("`--device " + run.defaultDevice + "`: " + artifact.name().str() +
                            " was built for " + builtFor + " and runs there; build it for " +
                            run.defaultDevice + " with `modelc build ... --device " +
                            run.defaultDevice + "`",
                        run.color);
      return ExitUsageOrIO;
    }
    if (!asked)
      llvm::consumeError(asked.takeError());
    if (!built)
      llvm::consumeError(built.takeError());
  }
  // As from a .mdl file: an input goes where its parameter is declared
  // (`x: f32[B, n] @ cpu` in a model built for cuda:0), the rest where the
  // artifact was built.
  std::vector<std::string> pinned;
  if (const aot::EntryFn *fn = artifact.findFn(run.fn))
    for (const aot::TensorSpec &param : fn->params)
      pinned.push_back(param.device.str());
  std::optional<std::vector<exec::EntryInput>> inputs = readEntryInputs(
      run.inputs, run.defaultDevice.empty() ? builtFor : run.defaultDevice, run.color, pinned);
  if (!inputs)
    return ExitUsageOrIO;

  std::optional<runtime::LoadedWeights> weights;
  llvm::Error bindError = llvm::Error::success();
  std::string weightsName = run.weights;
  if (!run.weights.empty()) {
    llvm::Expected<runtime::SafeTensorsFile> file = runtime::SafeTensorsFile::open(run.weights);
    if (!file) {
      reportDriverError(llvm::toString(file.takeError()), run.color);
      return ExitUsageOrIO;
    }
    llvm::Expected<runtime::LoadedWeights> bound = artifact.bindWeights(*file);
    if (bound)
      weights = std::move(*bound);
    else
      bindError = bound.takeError();
  } else if (artifact.hasEmbeddedWeights()) {
    weightsName = artifact.name().str() + " (built in)";
    llvm::Expected<runtime::LoadedWeights> bound = artifact.embeddedWeights();
    if (bound)
      weights = std::move(*bound);
    else
      bindError = bound.takeError();
  } else if (!artifact.stateLayout().empty()) {
    reportDriverError("model '" + artifact.contents().modelName + "' has " +
                          std::to_string(artifact.stateLayout().size()) +
                          " param(s) and buffer(s) and " + artifact.name() +
                          " holds no weights; give them with `--weights FILE`",
                      run.color);
    return ExitUsageOrIO;
  } else {
    weights.emplace();
  }
  if (!weights) {
    // As E0607 on the JIT path, without the model's source to point at.
    std::vector<std::string> notes;
    llvm::handleAllErrors(std::move(bindError), [&](const llvm::ErrorInfoBase &problem) {
      notes.push_back(problem.message());
    });
    notes.push_back("nothing was loaded");
    reportCodedError("E0607",
                     "the weights in `" + weightsName + "` do not fit model `" +
                         artifact.contents().modelName + "` (layout stored in " +
                         artifact.name().str() + ")",
                     notes, run.color);
    return ExitErrorsFound;
  }
  llvm::consumeError(std::move(bindError));

  // Each tensor carries the device its input was placed on.
  std::vector<runtime::Tensor> tensors;
  std::vector<std::string> labels;
  for (const exec::EntryInput &in : *inputs) {
    const runtime::Tensor &t = in.tensor;
    tensors.push_back(in.device == t.device()
                          ? t
                          : runtime::Tensor::borrow(t.dtype(), t.shape(), t.data(),
                                                    std::make_shared<runtime::Tensor>(t),
                                                    in.device));
    labels.push_back(in.source);
  }
  llvm::Expected<std::vector<runtime::Tensor>> outputs =
      artifact.callResults(run.fn, *weights, tensors, labels);
  if (!outputs) {
    llvm::handleAllErrors(
        outputs.takeError(),
        [&](const aot::InputMismatchError &mismatch) {
          reportCodedError(mismatch.code, mismatch.message, mismatch.notes, run.color);
        },
        [&](const llvm::ErrorInfoBase &failure) {
          reportDriverError(failure.message(), run.color);
        });
    return ExitErrorsFound;
  }
  if (run.report) {
    std::optional<cudaexec::RunReport> report = artifact.lastPlanRun();
    llvm::errs() << (report ? cudaexec::formatRunReport(*report) : "the model ran on the cpu\n");
  }
  return writeRunOutputs(*outputs, resultDevices, run.outputs, run.color);
}

} // namespace modelc::driver
