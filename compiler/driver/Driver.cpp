//===- Driver.cpp - The modelc command-line driver ------------------------===//
//
// `modelc <command> [options]`: parses the command line with llvm::cl
// subcommands and dispatches to the command's entry point.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DriverOutput.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

namespace modelc::driver {

llvm::cl::OptionCategory &driverCategory() {
  static llvm::cl::OptionCategory category("modelc options");
  return category;
}

std::string stdlibDirFor(llvm::StringRef given) {
  if (!given.empty())
    return given.str();
  if (llvm::sys::Process::GetEnv("MODELC_STDLIB"))
    return {};
  static int addressInThisBinary;
  std::string executable = llvm::sys::fs::getMainExecutable(nullptr, &addressInThisBinary);
  if (executable.empty())
    return {};
  llvm::SmallString<256> installed(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(executable)));
  llvm::sys::path::append(installed, "share", "modelc", "stdlib");
  if (llvm::sys::fs::is_directory(installed))
    return installed.str().str();
  return {};
}

namespace {

/// One row per subcommand. Commands that are not implemented yet have no
/// row, so `modelc run` is an unknown subcommand rather than a silent no-op.
struct Command {
  llvm::cl::SubCommand *subcommand;
  int (*run)();
};

const Command commandTable[] = {
    {&checkCommand, runCheck},
    {&explainCommand, runExplain},
    {&lspCommand, runLsp},
    {&emitCommand, runEmit},
    {&runCommand, runRun},
    {&buildCommand, runBuild},
    {&importTorchCommand, runImportTorch},
};

void printVersion(llvm::raw_ostream &os) {
  os << "modelc " << MODELC_VERSION << "\n  built with LLVM " << LLVM_VERSION_STRING << "\n";
}

} // namespace
} // namespace modelc::driver

int main(int argc, char **argv) {
  using namespace modelc::driver;
  llvm::InitLLVM initLLVM(argc, argv);

  // libLLVM registers hundreds of options of its own; show only ours.
  llvm::cl::HideUnrelatedOptions(driverCategory());
  for (const Command &command : commandTable)
    llvm::cl::HideUnrelatedOptions(driverCategory(), *command.subcommand);
  llvm::cl::SetVersionPrinter(printVersion);

  if (!llvm::cl::ParseCommandLineOptions(
          argc, argv,
          "modelc: a compiler for device-checked neural-network models\n\n"
          "  modelc check FILE...   type-check models, devices included\n"
          "  modelc explain CODE    explain a diagnostic code, e.g. E0301\n"
          "  modelc lsp             run the language server over stdin/stdout\n"
          "  modelc emit FILE       print a model's AST or IR (--stage=ast|mdl|linalg|llvm)\n"
          "  modelc run FILE        run a model on the cpu with weights and inputs\n"
          "  modelc build FILE      write a model's CUDA kernels and device plan (-o DIR)\n"
          "  modelc import-torch FILE.py:Class\n"
          "                         import a torch.nn.Module into .mdl and check its devices\n",
          &llvm::errs()))
    return ExitUsageOrIO;

  for (const Command &command : commandTable)
    if (*command.subcommand)
      return command.run();

  reportDriverError("no command given; try `modelc --help`", shouldColorStderr(ColorChoice::Auto));
  return ExitUsageOrIO;
}
