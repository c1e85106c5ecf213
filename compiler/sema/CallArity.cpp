//===- CallArity.cpp - "takes N arguments, got M" with the signature ------===//
//
// One report for a call with too many or too few positional arguments, for
// built-ins, a model's fns and model instantiations alike: the count the
// callee takes, the count given, and the callee's signature in a note (as
// Python's TypeError and rustc's E0061 do).
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/StringExtras.h"

using namespace modelc;
using namespace modelc::sema;

std::string Checker::argumentCount(size_t required, size_t total) {
  std::string count = required == total ? std::to_string(total)
                                        : std::to_string(required) + " to " + std::to_string(total);
  return count + (total == 1 ? " argument" : " arguments");
}

void Checker::reportMissingArgument(Range at, llvm::StringRef callee, llvm::StringRef missing,
                                    size_t required, size_t total, size_t given, bool named,
                                    llvm::StringRef signature) {
  auto diag = diags_.report(DiagId::MissingArgument, at, callee, missing);
  if (named)
    diag.primary("`" + missing.str() + "` is not given");
  else
    diag.primary("takes " + argumentCount(required, total) + ", got " + std::to_string(given));
  if (!signature.empty())
    diag.note("the signature is `" + signature.str() + "`");
}

DiagnosticBuilder Checker::reportArgumentCount(Range at, llvm::StringRef callee, size_t required,
                                               size_t total, size_t given,
                                               llvm::StringRef signature, std::string label) {
  auto diag =
      diags_.report(DiagId::WrongArgumentCount, at, callee, argumentCount(required, total), given);
  diag.primary(std::move(label));
  if (!signature.empty())
    diag.note("the signature is `" + signature.str() + "`");
  return diag;
}

/// The source text of `r` on one line (a parameter written over two lines
/// keeps single spaces).
static std::string oneLine(Range r) {
  llvm::SmallVector<llvm::StringRef, 4> words;
  llvm::SplitString(r.text(), words, " \t\r\n");
  return llvm::join(words, " ");
}

std::string Checker::fnSignature(const FnInfo &fn) {
  if (!fn.decl)
    return fn.name;
  llvm::SmallVector<std::string, 4> params;
  for (const ast::FnParam &p : fn.decl->params)
    params.push_back(oneLine(p.range));
  std::string text = fn.name + "(" + llvm::join(params, ", ") + ")";
  if (fn.decl->result)
    text += " -> " + oneLine(fn.decl->result->range);
  return text;
}

std::string Checker::modelSignature(llvm::StringRef calleeName, const ModelInfo &model) {
  llvm::SmallVector<std::string, 4> params;
  if (model.decl)
    for (const ast::ValueParam &p : model.decl->valueParams)
      params.push_back(oneLine(p.range));
  return calleeName.str() + "(" + llvm::join(params, ", ") + ")";
}
