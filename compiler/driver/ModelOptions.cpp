//===- ModelOptions.cpp - Options and loading shared by emit and run ------===//

#include "ModelOptions.h"

#include "Commands.h"

#include "diagnostics/TextRenderer.h"
#include "runtime/Npy.h"
#include "sema/CheckedProgram.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc::driver {

void printDiagnostics(DiagnosticEngine &engine, const llvm::SourceMgr &sourceMgr, bool color) {
  engine.sortByLocation();
  TextRenderOptions renderOptions;
  renderOptions.color = color;
  for (const Diagnostic &diag : engine.diagnostics())
    renderText(diag, sourceMgr, llvm::errs(), renderOptions);
  renderSummary(engine.errorCount(), engine.warningCount(), llvm::errs(), color);
}

std::optional<LoadedModel> loadModel(const ModelOptions &options, bool needModel, int &exitCode) {
  bool color = shouldColorStderr(options.color);
  CompileOptions compileOptions;
  compileOptions.importPaths.assign(options.importDirs.begin(), options.importDirs.end());
  compileOptions.stdlibDir = stdlibDirFor(options.stdlib);

  LoadedModel loaded;
  loaded.compilation = std::make_unique<Compilation>(compileOptions);
  Compilation &compilation = *loaded.compilation;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> probe =
      llvm::MemoryBuffer::getFile(options.file, /*IsText=*/true);
  if (!probe) {
    reportDriverError("cannot read '" + options.file + "': " + probe.getError().message(), color);
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  if (!compilation.addFile(options.file)) {
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  bool clean = compilation.check();
  if (!clean || compilation.diagnostics().warningCount()) {
    printDiagnostics(compilation.diagnostics(), compilation.sourceMgr(), color);
    if (!clean) {
      exitCode = ExitErrorsFound;
      return std::nullopt;
    }
    compilation.diagnostics().clear();
  }
  if (!needModel)
    return loaded;

  std::string modelName = options.model;
  if (modelName.empty()) {
    llvm::Expected<std::string> chosen = mlirgen::chooseModel(
        *compilation.program(), *compilation.mainModule(), options.args, options.fn);
    if (!chosen) {
      reportDriverError(llvm::toString(chosen.takeError()), color);
      exitCode = ExitUsageOrIO;
      return std::nullopt;
    }
    modelName = *chosen;
  }
  llvm::Expected<sema::Device> device = mlirgen::parseDevice(options.device);
  if (!device) {
    reportDriverError(llvm::toString(device.takeError()), color);
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  llvm::Expected<mlirgen::ConcreteModel> model =
      mlirgen::instantiateModel(*compilation.program(), modelName, options.args, *device);
  if (!model) {
    reportDriverError(llvm::toString(model.takeError()), color);
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  loaded.model = std::move(*model);
  return loaded;
}

namespace {

/// `--input 0.5`, `--input 3`, `--input true`: a value for a scalar parameter,
/// as a rank-0 array (f64, i64 or bool); nullopt when `spec` is not one.
std::optional<runtime::Tensor> literalInput(llvm::StringRef spec) {
  if (spec == "true" || spec == "false")
    return runtime::Tensor::fromValues<bool>({}, {spec == "true"});
  int64_t i;
  if (!spec.getAsInteger(10, i))
    return runtime::Tensor::fromValues<int64_t>({}, {i});
  double d;
  if (!spec.getAsDouble(d))
    return runtime::Tensor::fromValues<double>({}, {d});
  return std::nullopt;
}

} // namespace

std::optional<std::vector<exec::EntryInput>> readEntryInputs(llvm::ArrayRef<std::string> specs,
                                                             llvm::StringRef defaultDevice,
                                                             bool color,
                                                             llvm::ArrayRef<std::string> pinned) {
  llvm::Expected<runtime::Device> fallback = runtime::parseDevice(defaultDevice);
  if (!fallback) {
    reportDriverError(llvm::toString(fallback.takeError()), color);
    return std::nullopt;
  }
  std::vector<exec::EntryInput> inputs;
  for (const std::string &spec : specs) {
    auto [path, placement] = llvm::StringRef(spec).rsplit('@');
    exec::EntryInput input;
    input.device = *fallback;
    // A parameter declared on a device (`x: f32[B, n] @ cpu`) takes its
    // input there; `--device` places the rest.
    size_t index = inputs.size();
    if (placement.empty() && index < pinned.size() && !pinned[index].empty())
      placement = pinned[index];
    if (!placement.empty()) {
      llvm::Expected<runtime::Device> device = runtime::parseDevice(placement);
      if (!device) {
        reportDriverError("--input " + spec + ": " + llvm::toString(device.takeError()), color);
        return std::nullopt;
      }
      input.device = *device;
    }
    if (std::optional<runtime::Tensor> value = literalInput(path)) {
      input.tensor = std::move(*value);
      input.source = "the value " + path.str();
      inputs.push_back(std::move(input));
      continue;
    }
    llvm::Expected<runtime::Tensor> tensor = runtime::readNpy(path);
    if (!tensor) {
      reportDriverError(llvm::toString(tensor.takeError()), color);
      return std::nullopt;
    }
    input.tensor = std::move(*tensor);
    input.source = path.str();
    inputs.push_back(std::move(input));
  }
  return inputs;
}

bool checkOutputCount(llvm::ArrayRef<std::string> paths, size_t resultCount, llvm::StringRef fnName,
                      bool color) {
  if (paths.empty() || paths.size() == resultCount)
    return true;
  reportDriverError("'" + fnName.str() + "' returns " + std::to_string(resultCount) +
                        (resultCount == 1 ? " result" : " results") + " but " +
                        std::to_string(paths.size()) +
                        " `--output` files were given; give one per result, in order",
                    color);
  return false;
}

namespace {

/// Prints the type of `output` and its first values.
void printSummary(const runtime::Tensor &output, llvm::StringRef device) {
  llvm::outs() << runtime::formatTensorType(output.dtype(), output.shape()) << " @ " << device
               << "\n";
  int64_t shown = std::min<int64_t>(output.numel(), 16);
  runtime::Shape index(output.rank(), 0);
  for (int64_t i = 0; i < shown; ++i) {
    llvm::outs() << (i ? " " : "") << llvm::format("%.6g", output.getAsDouble(index));
    for (int64_t d = int64_t(output.rank()) - 1; d >= 0; --d) {
      if (++index[d] < output.shape()[d])
        break;
      index[d] = 0;
    }
  }
  llvm::outs() << (output.numel() > shown ? " ...\n" : "\n");
}

} // namespace

int writeRunOutputs(llvm::ArrayRef<runtime::Tensor> outputs, llvm::ArrayRef<std::string> devices,
                    llvm::ArrayRef<std::string> paths, bool color) {
  if (!paths.empty()) {
    for (const auto &[output, path] : llvm::zip(outputs, paths))
      if (llvm::Error err = runtime::writeNpy(path, output)) {
        reportDriverError(llvm::toString(std::move(err)), color);
        return ExitUsageOrIO;
      }
    return ExitClean;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs.size() > 1)
      llvm::outs() << "result " << i + 1 << ": ";
    printSummary(outputs[i], i < devices.size() ? llvm::StringRef(devices[i]) : "cpu");
  }
  return ExitClean;
}

} // namespace modelc::driver
