//===- Driver.cpp - The modelc command-line driver ------------------------===//
//
// `modelc <command> [options]`: parses the command line with llvm::cl
// subcommands and dispatches to the command's entry point.
//
//===----------------------------------------------------------------------===//

#include "CommandLineErrors.h"
#include "Commands.h"
#include "DriverOutput.h"
#include "jit/GemmChoice.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

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

int reportMissingFile(llvm::StringRef command, llvm::StringRef usage, bool color) {
  reportDriverError("`modelc " + command + "` needs a file: modelc " + command + " " + usage +
                        " (see `modelc " + command + " --help`)",
                    color);
  return ExitUsageOrIO;
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
  os << "modelc " << MODELC_VERSION << "\n  built with LLVM " << LLVM_VERSION_STRING
     << "\n  cpu kernels: " << modelc::jit::cpuKernelLibraries() << "\n";
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

  std::vector<llvm::cl::SubCommand *> subcommands;
  for (const Command &command : commandTable)
    subcommands.push_back(command.subcommand);
  if (!parseCommandLine(
          argc, argv,
          "modelc: a compiler for device-checked neural-network models\n\n"
          "  modelc check FILE...   type-check models, devices included\n"
          "  modelc explain CODE    explain a diagnostic code, e.g. E0301\n"
          "  modelc lsp             run the language server over stdin/stdout\n"
          "  modelc emit FILE       print a model's AST or IR (--stage=ast|mdl|linalg|llvm)\n"
          "  modelc run FILE        run a model (or a .mdlc artifact) with weights and inputs\n"
          "  modelc build FILE      compile a model ahead of time into FILE.mdlc (or, with\n"
          "                         --emit=cuda|ptx|cubin -o DIR, its device plan and kernels)\n"
          "  modelc import-torch FILE.py:Class\n"
          "                         import a torch.nn.Module into .mdl and check its devices\n\n"
          "  Without --model, build, run and emit use the file's one model whose value\n"
          "  arguments are all given (--args) or defaulted.\n",
          subcommands))
    return ExitUsageOrIO;

  for (const Command &command : commandTable)
    if (*command.subcommand)
      return command.run();

  reportDriverError("no command given; try `modelc --help`", shouldColorStderr(ColorChoice::Auto));
  return ExitUsageOrIO;
}
