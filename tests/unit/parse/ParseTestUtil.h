//===- ParseTestUtil.h - Parse strings in tests ----------------*- C++ -*-===//
#ifndef MODELC_TESTS_PARSETESTUTIL_H
#define MODELC_TESTS_PARSETESTUTIL_H

#include "parse/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace modelc::test {

/// One parsed buffer with its diagnostics.
struct Parsed {
  llvm::SourceMgr sm;
  DiagnosticEngine diags{sm};
  std::unique_ptr<ast::Module> module;
  unsigned bufferId = 0;

  std::string dump() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    ast::dump(*module, os);
    return text;
  }
  /// "E0001 3:7 expected `)`, found `{`" per diagnostic, in report order.
  std::vector<std::string> diagnostics() const {
    std::vector<std::string> lines;
    for (const Diagnostic &diag : diags.diagnostics()) {
      std::string line = diag.code().str();
      Range r = diag.primaryRange();
      if (r.isValid()) {
        auto [row, col] = sm.getLineAndColumn(r.begin, bufferId);
        line += " " + std::to_string(row) + ":" + std::to_string(col);
      }
      lines.push_back(line + " " + diag.message);
    }
    return lines;
  }
  std::vector<std::string> codes() const {
    std::vector<std::string> result;
    for (const Diagnostic &diag : diags.diagnostics())
      result.push_back(diag.code().str());
    return result;
  }
  const ast::FnDecl &fn(size_t model = 0, size_t index = 0) const {
    return module->models.at(model).fns.at(index);
  }
};

inline std::unique_ptr<Parsed> parse(llvm::StringRef text, llvm::StringRef name = "test.mdl") {
  auto parsed = std::make_unique<Parsed>();
  parsed->bufferId = parsed->sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                                   llvm::SMLoc());
  parsed->module = parseModule(parsed->sm, parsed->bufferId, parsed->diags);
  return parsed;
}

/// The body of `fn f` in `model M` around `body`, parsed.
inline std::unique_ptr<Parsed> parseBody(llvm::StringRef body) {
  return parse(("model M {\n  fn f() {\n" + body + "\n  }\n}\n").str());
}

} // namespace modelc::test

#endif // MODELC_TESTS_PARSETESTUTIL_H
