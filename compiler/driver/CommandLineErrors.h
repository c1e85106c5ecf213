//===- CommandLineErrors.h - Usage errors in modelc's own words -*- C++ -*-===//
//
// llvm::cl prints its own messages ("modelc: for the -o option: requires a
// value!") straight to stderr. The driver captures them while it parses and
// prints each as an `error: ...` line that names the command's --help, so
// no raw option-parser text reaches the user.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_COMMANDLINEERRORS_H
#define MODELC_DRIVER_COMMANDLINEERRORS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace modelc::driver {

/// llvm::cl::ParseCommandLineOptions with its messages rewritten by
/// translateParserMessages and printed (colour per NO_COLOR and the
/// terminal). Returns false on a usage error.
bool parseCommandLine(int argc, const char *const *argv, llvm::StringRef overview,
                      llvm::ArrayRef<llvm::cl::SubCommand *> commands);

/// One modelc line (`error: ...`, `help: ...`) per message in `text`, what
/// llvm::cl printed; `command` is the subcommand given ("" for none).
std::vector<std::string> translateParserMessages(llvm::StringRef text, llvm::StringRef command);

} // namespace modelc::driver

#endif // MODELC_DRIVER_COMMANDLINEERRORS_H
