//===- Commands.h - The subcommands of the modelc driver --------*- C++ -*-===//
//
// Each subcommand lives in its own file: it defines an llvm::cl::SubCommand,
// its options (attached to that subcommand and to the driver's option
// category), and an entry point returning the process exit code. Driver.cpp
// lists them in its command table; `build`, `run`, `emit` and `lsp` join the
// table when their issues land.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_COMMANDS_H
#define MODELC_DRIVER_COMMANDS_H

#include "llvm/Support/CommandLine.h"

#include <string>

namespace modelc::driver {

/// The driver's exit codes, shared by every subcommand.
enum ExitCode : int {
  ExitClean = 0,       // no errors (warnings allowed)
  ExitErrorsFound = 1, // the input has errors
  ExitUsageOrIO = 2,   // bad command line, or a file could not be read
};

/// Options shown by `--help`; everything else libLLVM registers is hidden.
llvm::cl::OptionCategory &driverCategory();

/// The stdlib directory for a command given `--stdlib` = `given`: `given`
/// when set; else, unless $MODELC_STDLIB is set, the installed stdlib next to
/// this executable (`<prefix>/bin/modelc` -> `<prefix>/share/modelc/stdlib`)
/// when it exists; else empty, leaving the choice to Compilation (the
/// environment, then the source tree's stdlib).
std::string stdlibDirFor(llvm::StringRef given);

/// Reports that `modelc <command>` was given no file (`usage` shows what it
/// takes) and returns the usage exit code.
int reportMissingFile(llvm::StringRef command, llvm::StringRef usage, bool color);

extern llvm::cl::SubCommand checkCommand;
int runCheck();

extern llvm::cl::SubCommand explainCommand;
int runExplain();

extern llvm::cl::SubCommand lspCommand;
int runLsp();

extern llvm::cl::SubCommand emitCommand;
int runEmit();

extern llvm::cl::SubCommand runCommand;
int runRun();

extern llvm::cl::SubCommand buildCommand;
int runBuild();

extern llvm::cl::SubCommand importTorchCommand;
int runImportTorch();

} // namespace modelc::driver

#endif // MODELC_DRIVER_COMMANDS_H
