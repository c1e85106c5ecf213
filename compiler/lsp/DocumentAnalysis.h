//===- DocumentAnalysis.h - One checked snapshot of a document --*- C++ -*-===//
//
// Runs a Compilation over one version of an open document (with every open
// document as an overlay) and answers the editor's questions about it:
// diagnostics, hover, definitions, symbols, completion and quick fixes, all
// in LSP terms (UTF-16 positions, file:// URIs).
//
// Built on the worker thread; afterwards only read, one query at a time,
// on the message thread (llvm::SourceMgr caches line tables lazily).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_LSP_DOCUMENTANALYSIS_H
#define MODELC_LSP_DOCUMENTANALYSIS_H

#include "sema/Compilation.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/LSP/Protocol.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::lsp {

/// A quick fix: one `help:` suggestion whose edits are machine-applicable.
struct QuickFix {
  std::string title;
  llvm::lsp::WorkspaceEdit edit;
};

/// A diagnostic of the document, ready to publish.
struct PublishedDiagnostic {
  llvm::lsp::Range range;
  llvm::json::Value json; // LSP Diagnostic, with code and codeDescription
  std::vector<QuickFix> fixes;
};

/// A Location as JSON that owns its strings (LLVM's toJSON(Location)
/// borrows the URI's, which would dangle once the Location is gone).
llvm::json::Value locationToJSON(const llvm::lsp::Location &location);

class DocumentAnalysis {
public:
  /// Checks `text` as the file `path`. `options.overlays` should hold the
  /// other open documents. `explainUrl` formats a code's link (`{0}`).
  DocumentAnalysis(CompileOptions options, std::string path, int64_t version, llvm::StringRef text,
                   llvm::StringRef explainUrl);
  ~DocumentAnalysis();

  int64_t version() const { return version_; }
  llvm::StringRef path() const { return path_; }
  /// Other files this check read (imports, transitively).
  const std::vector<std::string> &dependencies() const { return deps_; }
  const std::vector<PublishedDiagnostic> &diagnostics() const { return diags_; }
  /// The `params` of a textDocument/publishDiagnostics notification.
  llvm::json::Value publishParams(const llvm::lsp::URIForFile &uri) const;

  /// The byte location of `pos` in the checked text, or an InvalidParams
  /// error when the line does not exist.
  llvm::Expected<llvm::SMLoc> locate(llvm::lsp::Position pos) const;

  std::optional<llvm::lsp::Hover> hover(llvm::SMLoc loc) const;
  std::vector<llvm::lsp::Location> definition(llvm::SMLoc loc) const;
  std::vector<llvm::lsp::DocumentSymbol> symbols() const;
  /// Completion at `pos` in `currentText` (the editor's text now, which may
  /// be newer than the checked one).
  llvm::lsp::CompletionList complete(llvm::StringRef currentText, llvm::lsp::Position pos) const;
  /// Quick fixes of the diagnostics that touch `range`.
  llvm::json::Array codeActions(llvm::lsp::Range range) const;

private:
  std::optional<llvm::lsp::Location> toLocation(Range range) const;
  void convertDiagnostics(llvm::StringRef explainUrl);
  const ast::Module *moduleForImport(const ast::ImportDecl &import) const;
  const ast::ModelDecl *findModel(llvm::StringRef name) const;

  std::string path_;
  int64_t version_;
  std::unique_ptr<Compilation> compilation_;
  unsigned mainBuffer_ = 0;
  std::vector<std::string> deps_;
  std::vector<PublishedDiagnostic> diags_;
};

} // namespace modelc::lsp

#endif // MODELC_LSP_DOCUMENTANALYSIS_H
