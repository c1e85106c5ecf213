//===- SemaTestSupport.h - Helpers for checking .mdl text in tests -*- C++ -*-===//
#ifndef MODELC_TESTS_SEMA_SEMATESTSUPPORT_H
#define MODELC_TESTS_SEMA_SEMATESTSUPPORT_H

#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace modelc::test {

/// A checked in-memory program and easy access to what was reported.
struct Checked {
  std::unique_ptr<Compilation> compilation;
  bool ok = false;

  const std::vector<Diagnostic> &diagnostics() const {
    return compilation->diagnostics().diagnostics();
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diagnostics())
      out.push_back(d.code().str());
    return out;
  }
  /// The first diagnostic with `code`, or null.
  const Diagnostic *find(llvm::StringRef code) const {
    for (const Diagnostic &d : diagnostics())
      if (d.code() == code)
        return &d;
    return nullptr;
  }
  unsigned count(llvm::StringRef code) const {
    return unsigned(
        llvm::count_if(diagnostics(), [&](const Diagnostic &d) { return d.code() == code; }));
  }
  const sema::CheckedProgram &program() const { return *compilation->program(); }
  /// Every diagnostic as "CODE message" lines, for failure messages.
  std::string dump() const {
    std::string s;
    for (const Diagnostic &d : diagnostics()) {
      s += d.code().str() + " " + d.message + " [" + d.primaryRange().text().str() + "]\n";
      for (const Label &l : d.labels)
        s += "    label " + std::string(l.primary ? "*" : "") + "'" + l.range.text().str() +
             "': " + l.message + "\n";
      for (const Note &n : d.notes)
        s += "    note: " + n.message + "\n";
      for (const Suggestion &h : d.suggestions) {
        s += "    help: " + h.message;
        for (const Edit &e : h.edits)
          s += " {'" + e.range.text().str() + "' -> '" + e.replacement + "'}";
        s += "\n";
      }
    }
    return s;
  }
};

inline CompileOptions testOptions() {
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  return options;
}

inline Checked checkSource(llvm::StringRef text, CompileOptions options = testOptions()) {
  Checked c;
  c.compilation = std::make_unique<Compilation>(std::move(options));
  c.compilation->addBuffer("test.mdl", text);
  c.ok = c.compilation->check();
  return c;
}

inline Checked checkFile(llvm::StringRef path) {
  Checked c;
  c.compilation = std::make_unique<Compilation>(testOptions());
  EXPECT_TRUE(c.compilation->addFile(path).has_value()) << path.str();
  c.ok = c.compilation->check();
  return c;
}

/// Applies the edits of `suggestion` to the main buffer's text.
inline std::string applyEdits(const Checked &c, const Suggestion &suggestion) {
  const ast::Module *main = c.compilation->mainModule();
  llvm::StringRef buffer = c.compilation->sourceMgr().getMemoryBuffer(main->bufferId)->getBuffer();
  std::vector<Edit> edits = suggestion.edits;
  llvm::sort(edits, [](const Edit &a, const Edit &b) {
    return a.range.begin.getPointer() > b.range.begin.getPointer();
  });
  std::string text = buffer.str();
  for (const Edit &e : edits) {
    size_t at = size_t(e.range.begin.getPointer() - buffer.begin());
    text.replace(at, e.range.size(), e.replacement);
  }
  return text;
}

/// The type of the value bound by `let r = <expr>` in a fn of a small
/// device-generic model, or "error: CODES" when checking failed.
struct ExprResult {
  std::string type;
  Checked checked;
};

inline ExprResult typeOfExpr(llvm::StringRef params, llvm::StringRef expr,
                             llvm::StringRef members = "") {
  std::string src = "model T<D: device>(n: int, m: int) {\n" + members.str() + "\n  fn f(" +
                    params.str() + ") {\n    let r = " + expr.str() + "\n  }\n}\n";
  ExprResult r;
  r.checked = checkSource(src);
  const ast::Module *main = r.checked.compilation->mainModule();
  const ast::FnDecl &fn = main->models.front().fns.front();
  const auto *let = llvm::dyn_cast<ast::LetStmt>(fn.body.front().get());
  const sema::ExprInfo *info = r.checked.program().typeOf(let->value.get());
  if (!r.checked.ok || !info || info->type.isError()) {
    r.type = "error:";
    for (const std::string &code : r.checked.codes())
      r.type += " " + code;
    return r;
  }
  r.type = info->type.str();
  return r;
}

} // namespace modelc::test

#endif // MODELC_TESTS_SEMA_SEMATESTSUPPORT_H
