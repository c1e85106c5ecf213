//===- Compilation.h - Parse and check a .mdl file with its imports -*- C++ -*-===//
//
// The front end's entry point for every client (the `modelc` driver, the
// language server, later the MLIR builder and the embedding API):
//
//   Compilation c(options);
//   unsigned main = c.addFile("net.mdl");          // or addBuffer(name, text)
//   bool ok = c.check();                           // parse + imports + sema
//   for (const Diagnostic &d : c.diagnostics().diagnostics()) ...
//
// A Compilation owns the llvm::SourceMgr (every buffer: the main file,
// imported files, the stdlib), the ASTs, and the checker's results. It never
// prints and never exits. It is not thread-safe; use one per thread.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_COMPILATION_H
#define MODELC_SEMA_COMPILATION_H

#include "ast/AST.h"
#include "diagnostics/DiagnosticEngine.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc {

namespace sema {
class CheckedProgram; // defined in sema/CheckedProgram.h
struct DeviceOrigin;
} // namespace sema

struct CompileOptions {
  /// Folders searched for `import a.b` (as a/b.mdl). `std.*` resolves to the
  /// stdlib folder; the importing file's own folder is searched first.
  std::vector<std::string> importPaths;
  /// Where `import std.nn` is found; defaults to the installed or in-tree
  /// stdlib (MODELC_STDLIB_DIR, overridable by the environment variable).
  std::string stdlibDir;
  /// Source text for files that are open in an editor, by absolute path;
  /// preferred over the disk when an import resolves to one of them.
  std::vector<std::pair<std::string, std::string>> overlays;
  /// Skip freeing the parser's temporary structures (see
  /// ParseOptions::disableFree): for one-shot command-line runs only.
  bool disableFree = false;
};

/// What the checker knows about one source range, for hovers and
/// go-to-definition.
struct SymbolInfo {
  Range range;                     // the expression or name under the cursor
  std::string name;                // e.g. "h", "fc1", "relu"; may be empty
  std::string type;                // e.g. "f32[B, 256] @ cuda:0", "model Linear<cuda:0>"
  std::string deviceOrigin;        // e.g. "inferred from `x + noise` at 12:13"; may be empty
  std::optional<Range> definition; // where the name is declared, if anywhere
  std::string doc;                 // doc comment of the declaration, if any
};

class Compilation {
public:
  explicit Compilation(CompileOptions options = {});
  ~Compilation();
  Compilation(const Compilation &) = delete;
  Compilation &operator=(const Compilation &) = delete;

  /// Adds a file from disk (or its overlay) as the main file. Returns its
  /// buffer id, or std::nullopt after reporting an I/O error.
  std::optional<unsigned> addFile(llvm::StringRef path);
  /// Adds an in-memory main file.
  unsigned addBuffer(llvm::StringRef name, llvm::StringRef text);

  /// Parses the main file and its imports and checks them all. Returns true
  /// when no errors were reported (warnings allowed). Call once.
  bool check();

  DiagnosticEngine &diagnostics() { return diags_; }
  llvm::SourceMgr &sourceMgr() { return sourceMgr_; }
  const CompileOptions &options() const { return options_; }

  /// The parsed main module (null before check() or if nothing was added).
  const ast::Module *mainModule() const;
  /// Every parsed module: the main one first, then imports.
  std::vector<const ast::Module *> modules() const;
  /// The checker's results (null before check()).
  const sema::CheckedProgram *program() const;

  /// The innermost expression, name or declaration at `loc` in any buffer.
  std::optional<SymbolInfo> symbolAt(llvm::SMLoc loc) const;

  /// Buffer id of a file path already loaded (main or import), if any.
  std::optional<unsigned> bufferForPath(llvm::StringRef path) const;

  /// The folder `import std.*` reads: options.stdlibDir, else $MODELC_STDLIB,
  /// else the in-tree stdlib.
  std::string stdlibDirectory() const;

private:
  struct Impl;
  /// Parses buffer `bufferId` (the file `path`) and, recursively, its imports.
  const ast::Module *loadModule(unsigned bufferId, const std::string &path, unsigned depth);
  std::string describeOrigin(const sema::DeviceOrigin &origin) const;
  /// Drops the checker's errors on the lines of `syntaxErrors` and the
  /// missing `return` of a fn the parser recovered in.
  void dropFollowOnErrors(llvm::ArrayRef<const char *> syntaxErrors);
  CompileOptions options_;
  llvm::SourceMgr sourceMgr_;
  DiagnosticEngine diags_;
  std::unique_ptr<Impl> impl_;
};

} // namespace modelc

#endif // MODELC_SEMA_COMPILATION_H
