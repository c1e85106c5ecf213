//===- CheckCommand.cpp - `modelc check FILE...` --------------------------===//
//
// Parses and type-checks each file (with its imports) in its own
// Compilation, then renders every diagnostic: as text on stderr followed by
// one summary line, or as exactly one JSON document on stdout.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DriverOutput.h"

#include "diagnostics/JsonRenderer.h"
#include "diagnostics/TextRenderer.h"
#include "sema/Compilation.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand checkCommand("check", "Parse and type-check .mdl files (dtypes, shapes, devices)");

namespace {

enum class OutputFormat { Text, Json };
enum class WarningFlag { Error };

cl::list<std::string> inputFiles(cl::Positional, cl::ZeroOrMore, cl::desc("FILE... ('-' is stdin)"),
                                 cl::sub(checkCommand), cl::cat(driverCategory()));

cl::opt<OutputFormat>
    formatOpt("format", cl::desc("How to print diagnostics"),
              cl::values(clEnumValN(OutputFormat::Text, "text", "rendered text on stderr"),
                         clEnumValN(OutputFormat::Json, "json", "one JSON document on stdout")),
              cl::init(OutputFormat::Text), cl::sub(checkCommand), cl::cat(driverCategory()));

cl::opt<ColorChoice>
    colorOpt("color", cl::desc("When to colour text diagnostics"),
             cl::values(clEnumValN(ColorChoice::Auto, "auto",
                                   "when stderr is a terminal and NO_COLOR is unset"),
                        clEnumValN(ColorChoice::Always, "always", "always"),
                        clEnumValN(ColorChoice::Never, "never", "never")),
             cl::init(ColorChoice::Auto), cl::sub(checkCommand), cl::cat(driverCategory()));

cl::list<std::string> importDirs("I", cl::Prefix, cl::value_desc("DIR"),
                                 cl::desc("Search DIR for imported modules"), cl::sub(checkCommand),
                                 cl::cat(driverCategory()));

cl::opt<std::string> stdlibDir("stdlib", cl::value_desc("DIR"),
                               cl::desc("Where `import std.*` is found (default: the built-in "
                                        "stdlib, or $MODELC_STDLIB)"),
                               cl::sub(checkCommand), cl::cat(driverCategory()));

cl::list<WarningFlag>
    warningFlags("W", cl::Prefix, cl::desc("Warning options"),
                 cl::values(clEnumValN(WarningFlag::Error, "error", "treat warnings as errors")),
                 cl::sub(checkCommand), cl::cat(driverCategory()));

bool warningsAreErrors() {
  for (WarningFlag flag : warningFlags)
    if (flag == WarningFlag::Error)
      return true;
  return false;
}

/// `-W error`: a warning becomes an error, and says why.
void promoteWarnings(std::vector<Diagnostic> &diagnostics) {
  for (Diagnostic &diag : diagnostics) {
    if (diag.severity != Severity::Warning)
      continue;
    diag.severity = Severity::Error;
    diag.notes.push_back(Note{"`-W error` turns warnings into errors", {}});
  }
}

/// What every checked file adds to the run's output.
struct RunTotals {
  unsigned errors = 0;
  unsigned warnings = 0;
  bool ioError = false;
  llvm::json::Array jsonDiagnostics;
};

/// Adds `path` ('-' is standard input) to `compilation` as its main file.
/// Returns false, after saying why, when it cannot be read.
bool addMainFile(Compilation &compilation, llvm::StringRef path, bool color) {
  if (path == "-") {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> input = llvm::MemoryBuffer::getSTDIN();
    if (!input) {
      reportDriverError("cannot read standard input: " + input.getError().message(), color);
      return false;
    }
    compilation.addBuffer("<stdin>", (*input)->getBuffer());
    return true;
  }
  // Open the file here first so that an unreadable path is a driver error
  // with the operating system's reason, not a diagnostic about the source.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> probe =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!probe) {
    reportDriverError("cannot read '" + path + "': " + probe.getError().message(), color);
    return false;
  }
  probe->reset();
  // Should the file vanish in between, addFile reports it as a diagnostic.
  return compilation.addFile(path).has_value();
}

/// Checks one file and renders its diagnostics. Each file gets its own
/// Compilation: a Compilation checks exactly one main file.
void checkFile(llvm::StringRef path, const CompileOptions &options, bool color, RunTotals &totals) {
  Compilation compilation(options);
  if (addMainFile(compilation, path, color))
    compilation.check();
  else
    totals.ioError = true;

  DiagnosticEngine &engine = compilation.diagnostics();
  engine.sortByLocation();
  std::vector<Diagnostic> diagnostics = engine.diagnostics();
  unsigned errors = engine.errorCount(), warnings = engine.warningCount();
  if (warningsAreErrors()) {
    promoteWarnings(diagnostics);
    errors += warnings;
    warnings = 0;
  }
  totals.errors += errors;
  totals.warnings += warnings;

  const llvm::SourceMgr &sourceMgr = compilation.sourceMgr();
  if (formatOpt == OutputFormat::Json) {
    llvm::json::Value document = diagnosticsToJson(diagnostics, sourceMgr);
    if (llvm::json::Array *entries = document.getAsObject()->getArray("diagnostics"))
      for (llvm::json::Value &entry : *entries)
        totals.jsonDiagnostics.push_back(std::move(entry));
    return;
  }
  TextRenderOptions renderOptions;
  renderOptions.color = color;
  for (const Diagnostic &diag : diagnostics)
    renderText(diag, sourceMgr, llvm::errs(), renderOptions);
}

} // namespace

int runCheck() {
  bool color = formatOpt == OutputFormat::Text && shouldColorStderr(colorOpt);
  if (inputFiles.empty())
    return reportMissingFile("check", "FILE... ('-' is stdin)", color);

  CompileOptions options;
  options.disableFree = true; // a one-shot process: the OS frees faster
  options.importPaths.assign(importDirs.begin(), importDirs.end());
  options.stdlibDir = stdlibDirFor(stdlibDir);

  RunTotals totals;
  for (const std::string &path : inputFiles)
    checkFile(path, options, color, totals);

  if (formatOpt == OutputFormat::Json) {
    llvm::json::Object document{{"version", 1},
                                {"diagnostics", std::move(totals.jsonDiagnostics)},
                                {"errors", totals.errors},
                                {"warnings", totals.warnings}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(document))) << "\n";
  } else {
    renderSummary(totals.errors, totals.warnings, llvm::errs(), color);
  }

  if (totals.ioError)
    return ExitUsageOrIO;
  return totals.errors ? ExitErrorsFound : ExitClean;
}

} // namespace modelc::driver
