//===- Recovery.cpp - Syntax error recovery by statement ------------------===//
#include "parse/Recovery.h"

#include "MdlLexer.h"
#include "Parser.h"

using namespace modelc::parse;
using modelc::grammar::MdlLexer;

namespace {

/// Tokens that begin a statement, a member or a declaration.
bool startsStatement(size_t type) {
  switch (type) {
  case MdlLexer::LET:
  case MdlLexer::RETURN:
  case MdlLexer::FOR:
  case MdlLexer::IF:
  case MdlLexer::IDENT:
  case MdlLexer::PARAM:
  case MdlLexer::BUFFER:
  case MdlLexer::FN:
  case MdlLexer::MODEL:
  case MdlLexer::IMPORT:
    return true;
  default:
    return false;
  }
}

} // namespace

void RecoveryStrategy::consumeUntil(antlr4::Parser *recognizer,
                                    const antlr4::misc::IntervalSet & /*set*/) {
  antlr4::TokenStream *tokens = recognizer->getTokenStream();
  auto depthOf = [&](const std::vector<uint16_t> &table, antlr4::Token *token) -> size_t {
    size_t index = token->getTokenIndex();
    return index < table.size() ? table[index] : 0;
  };
  antlr4::Token *first = tokens->LT(1);
  // The block the error is in: its `{` sits at this position in the bracket
  // stack, so its statements start at this depth.
  size_t blockDepth = depthOf(state_.braceDepth, first);
  size_t previousLine = first->getLine();
  for (antlr4::Token *token = first; token->getType() != antlr4::Token::EOF;
       token = tokens->LT(1)) {
    size_t depth = depthOf(state_.bracketDepth, token);
    if (depth < blockDepth)
      return;
    if (depth == blockDepth) {
      llvm::StringRef text = state_.range(token).text();
      bool closesBlock = text == "}";
      bool separator = text == ";";
      bool newStatement =
          token != first && token->getLine() > previousLine && startsStatement(token->getType());
      if (closesBlock || separator || newStatement)
        return;
    }
    previousLine = token->getLine();
    recognizer->consume();
  }
}
