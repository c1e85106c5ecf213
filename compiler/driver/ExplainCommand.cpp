//===- ExplainCommand.cpp - `modelc explain CODE` -------------------------===//
//
// Prints the long explanation (markdown) of a diagnostic code.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DriverOutput.h"

#include "diagnostics/Diagnostic.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace modelc::driver {

llvm::cl::SubCommand explainCommand("explain", "Print the long explanation of a diagnostic code");

static llvm::cl::opt<std::string> codeArg(llvm::cl::Positional, llvm::cl::desc("CODE"),
                                          llvm::cl::sub(explainCommand),
                                          llvm::cl::cat(driverCategory()));

int runExplain() {
  if (codeArg.empty()) {
    reportDriverError("`modelc explain` needs a diagnostic code, e.g. `modelc explain E0301`",
                      shouldColorStderr(ColorChoice::Auto));
    return ExitUsageOrIO;
  }
  std::string code = llvm::StringRef(codeArg).trim().upper();
  std::optional<DiagId> id = lookupDiagCode(code);
  if (!id) {
    reportDriverError("unknown diagnostic code '" + codeArg + "' (codes look like E0301 or W0310)",
                      shouldColorStderr(ColorChoice::Auto));
    return ExitUsageOrIO;
  }
  llvm::StringRef explanation = getDiagExplanation(code);
  if (explanation.empty()) {
    // Every code is meant to have one (a test enforces it); still say what
    // the registry knows rather than print nothing.
    const DiagInfo &info = getDiagInfo(*id);
    llvm::outs() << code << " (" << severityName(info.severity) << "): " << info.format
                 << "\n\nNo long explanation has been written for this code yet.\n";
    return ExitClean;
  }
  llvm::outs() << explanation;
  if (!explanation.ends_with("\n"))
    llvm::outs() << "\n";
  return ExitClean;
}

} // namespace modelc::driver
