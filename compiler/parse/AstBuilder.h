//===- AstBuilder.h - ANTLR parse tree to modelc AST ------------*- C++ -*-===//
//
// Walks the parse tree of a file (possibly with error nodes after recovery)
// and builds the ast::Module: literal values (E0005 for integers over
// int64, E0008 for `for x <not in>`, E0009 for bad string escapes), doc
// comments, flat operator chains folded into trees (E0010 when they get too
// deep). Parts that recovery left incomplete are dropped, never half-built.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_ASTBUILDER_H
#define MODELC_PARSE_ASTBUILDER_H

#include "ast/AST.h"
#include "parse/ParseState.h"

#include "MdlParser.h"

namespace modelc::parse {

/// Fills `module` from the parse tree `file`.
void buildModule(grammar::MdlParser::FileContext &file, ParseState &state, ast::Module &module);

} // namespace modelc::parse

#endif // MODELC_PARSE_ASTBUILDER_H
