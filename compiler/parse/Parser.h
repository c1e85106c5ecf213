//===- Parser.h - Parse a .mdl buffer into an AST ---------------*- C++ -*-===//
//
// The parser turns one buffer of an llvm::SourceMgr into an ast::Module and
// reports every syntax problem (E0001-E0010) through the DiagnosticEngine.
// It never throws and never crashes on any input: on errors it returns the
// part of the module it could build. A partial module keeps the AST's
// invariants (every required child is non-null): declarations and
// statements whose required parts are missing are left out.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_PARSER_H
#define MODELC_PARSE_PARSER_H

#include "ast/AST.h"
#include "diagnostics/DiagnosticEngine.h"

#include <memory>

namespace llvm {
class SourceMgr;
}

namespace modelc {

/// Limits that keep hostile input from exhausting the stack.
inline constexpr unsigned kMaxBracketDepth = 256;     // E0006
inline constexpr unsigned kMaxExpressionDepth = 1000; // E0010
/// The parser stops reporting syntax errors after this many (the rest are
/// almost always follow-on noise); parsing itself goes on.
inline constexpr unsigned kMaxSyntaxErrors = 100;

struct ParseOptions {
  /// Leave ANTLR's parse tree and tokens allocated after the AST is built,
  /// for short-lived processes (`modelc check`), where freeing millions of
  /// small objects costs a tenth of the run; the operating system reclaims
  /// them at exit. Like clang's -disable-free. Never set it in a library
  /// user or the language server.
  bool disableFree = false;
};

/// Parses buffer `bufferId` of `sm`. Ranges in the result point into that
/// buffer; `module->sourceMgr` is set to `&sm`.
std::unique_ptr<ast::Module> parseModule(llvm::SourceMgr &sm, unsigned bufferId,
                                         DiagnosticEngine &diags, const ParseOptions &options = {});

} // namespace modelc

#endif // MODELC_PARSE_PARSER_H
