//===- TokenDump.h - Token streams as text, for tests ------------*- C++ -*-===//
//
// Lets tests compare the hand-written lexer (parse/Lexer.h) with the one
// ANTLR generates from grammar/Mdl.g4 without seeing any ANTLR header.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_TOKENDUMP_H
#define MODELC_PARSE_TOKENDUMP_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace modelc::parse {

/// One token per line, "type channel start:stop line:column", lexed by
/// ANTLR's generated lexer (`useAntlr`) or by parse/Lexer. `text` must be
/// valid UTF-8.
std::string describeTokens(llvm::StringRef text, bool useAntlr);

} // namespace modelc::parse

#endif // MODELC_PARSE_TOKENDUMP_H
