//===- LanguageServer.h - `modelc lsp`: the language server -----*- C++ -*-===//
//
// Speaks the Language Server Protocol over stdin/stdout (LLVM's
// llvm/Support/LSP transport): diagnostics as `modelc check` reports them,
// hover with types and devices, go to definition, document symbols,
// completion and quick fixes. Returns the process exit code.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_LSP_LANGUAGESERVER_H
#define MODELC_LSP_LANGUAGESERVER_H

#include <cstdio>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace modelc {

struct LspOptions {
  /// Read messages separated by `// -----` lines instead of Content-Length
  /// framing, and pretty-print replies (for golden tests).
  bool litTest = false;
  /// Pretty-print JSON replies (implied by litTest).
  bool prettyOutput = false;
  /// Log level on stderr: "error", "info" or "debug".
  std::string logLevel = "error";
  /// Extra folders searched for imports, as `modelc check -I`.
  std::vector<std::string> importPaths;
  /// The stdlib folder; empty means the front end's default.
  std::string stdlibDir;
  /// Where a diagnostic's code links to: `{0}` is replaced by the code
  /// (E0301). Empty means file://<docs/diagnostics>/{0}.md of this build.
  std::string explainUrl;
  /// Streams to talk over; stdin/stdout unless a test replaces them.
  std::FILE *in = stdin;
  llvm::raw_ostream *out = nullptr;
};

/// Runs the server until `exit` or the end of its input. Returns 0 after a
/// clean `shutdown` + `exit` or end of input, 1 after `exit` without
/// `shutdown` (as the protocol asks).
int runLanguageServer(const LspOptions &options);

} // namespace modelc

#endif // MODELC_LSP_LANGUAGESERVER_H
