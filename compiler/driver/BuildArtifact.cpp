//===- BuildArtifact.cpp - `modelc build --emit=mdlc -o net.mdlc` ---------===//

#include "BuildArtifact.h"

#include "Commands.h"

#include "aot/ArtifactWriter.h"

#include "llvm/Support/raw_ostream.h"

namespace modelc::driver {

int writeArtifact(LoadedModel &loaded, const ArtifactBuild &build) {
  if (build.output.empty()) {
    reportDriverError("`modelc build --emit=mdlc` needs an output file (-o FILE.mdlc)",
                      build.color);
    return ExitUsageOrIO;
  }
  Compilation &compilation = *loaded.compilation;
  std::optional<runtime::SafeTensorsFile> weights;
  if (!build.weights.empty()) {
    llvm::Expected<runtime::SafeTensorsFile> file = runtime::SafeTensorsFile::open(build.weights);
    if (!file) {
      reportDriverError(llvm::toString(file.takeError()), build.color);
      return ExitUsageOrIO;
    }
    weights = std::move(*file);
  }
  aot::ArtifactBuildOptions options;
  options.fnName = build.fn;
  options.modelArgs = build.args;
  options.modelDevice = build.device;
  options.weights = weights ? &*weights : nullptr;
  options.gpuArch = build.gpuArch;
  options.tf32 = build.tf32;
  llvm::Expected<std::optional<std::string>> bytes =
      aot::buildArtifact(*compilation.program(), compilation.sourceMgr(), *loaded.model, options,
                         compilation.diagnostics());
  if (!bytes) {
    reportDriverError(llvm::toString(bytes.takeError()), build.color);
    return ExitErrorsFound;
  }
  if (!*bytes) {
    printDiagnostics(compilation.diagnostics(), compilation.sourceMgr(), build.color);
    return ExitErrorsFound;
  }
  // Written to a temporary file and renamed: a reader never sees half a file.
  if (llvm::Error err = llvm::writeToOutput(build.output, [&](llvm::raw_ostream &os) {
        os << **bytes;
        return llvm::Error::success();
      })) {
    reportDriverError("cannot write '" + build.output + "': " + llvm::toString(std::move(err)),
                      build.color);
    return ExitUsageOrIO;
  }
  return ExitClean;
}

} // namespace modelc::driver
