//===- ModelOptions.cpp - Options and loading shared by emit and run ------===//

#include "ModelOptions.h"

#include "Commands.h"

#include "diagnostics/TextRenderer.h"
#include "sema/CheckedProgram.h"

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
  if (!options.stdlib.empty())
    compileOptions.stdlibDir = options.stdlib;

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

  if (options.model.empty()) {
    reportDriverError("no model given; name one with `--model NAME`", color);
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  llvm::Expected<sema::Device> device = mlirgen::parseDevice(options.device);
  if (!device) {
    reportDriverError(llvm::toString(device.takeError()), color);
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  llvm::Expected<mlirgen::ConcreteModel> model =
      mlirgen::instantiateModel(*compilation.program(), options.model, options.args, *device);
  if (!model) {
    reportDriverError(llvm::toString(model.takeError()), color);
    exitCode = ExitUsageOrIO;
    return std::nullopt;
  }
  loaded.model = std::move(*model);
  return loaded;
}

} // namespace modelc::driver
