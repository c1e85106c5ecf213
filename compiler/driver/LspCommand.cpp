//===- LspCommand.cpp - `modelc lsp` --------------------------------------===//
//
// Runs the language server (compiler/lsp) over stdin/stdout.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "lsp/LanguageServer.h"

#include <string>

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand lspCommand("lsp", "Run the language server (LSP over stdin/stdout)");

namespace {

cl::opt<bool> litTestOpt("lit-test",
                         cl::desc("Read messages separated by '// -----' lines and "
                                  "pretty-print replies (for golden tests)"),
                         cl::sub(lspCommand), cl::cat(driverCategory()));

cl::opt<bool> prettyOpt("pretty", cl::desc("Pretty-print JSON replies"), cl::sub(lspCommand),
                        cl::cat(driverCategory()));

cl::opt<std::string> logOpt("log", cl::value_desc("LEVEL"),
                            cl::desc("Log to stderr: error (default), info or debug"),
                            cl::init("error"), cl::sub(lspCommand), cl::cat(driverCategory()));

cl::list<std::string> lspImportDirs("I", cl::Prefix, cl::value_desc("DIR"),
                                    cl::desc("Search DIR for imported modules"),
                                    cl::sub(lspCommand), cl::cat(driverCategory()));

cl::opt<std::string> lspStdlibDir("stdlib", cl::value_desc("DIR"),
                                  cl::desc("Where `import std.*` is found"), cl::sub(lspCommand),
                                  cl::cat(driverCategory()));

cl::opt<std::string>
    explainUrlOpt("explain-url", cl::value_desc("URL"),
                  cl::desc("Link of a diagnostic code, {0} standing for the code (default: the "
                           "docs/diagnostics/<code>.md file of this build)"),
                  cl::sub(lspCommand), cl::cat(driverCategory()));

} // namespace

int runLsp() {
  LspOptions options;
  options.litTest = litTestOpt;
  options.prettyOutput = prettyOpt;
  options.logLevel = logOpt;
  options.importPaths.assign(lspImportDirs.begin(), lspImportDirs.end());
  options.stdlibDir = stdlibDirFor(lspStdlibDir);
  options.explainUrl = explainUrlOpt;
  return runLanguageServer(options);
}

} // namespace modelc::driver
