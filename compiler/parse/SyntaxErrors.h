//===- SyntaxErrors.h - ANTLR errors as modelc diagnostics ------*- C++ -*-===//
//
// Replaces ANTLR's console listeners: each syntax error becomes E0001
// "expected X, found Y" with human token names, a primary label on the
// offending token and, where the fix is obvious, a help with the edit.
// Follow-on errors are dropped (see ParseState::admitError).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_SYNTAXERRORS_H
#define MODELC_PARSE_SYNTAXERRORS_H

#include "parse/ParseState.h"

#include "BaseErrorListener.h"

#include <string>

namespace antlr4::dfa {
class Vocabulary;
}

namespace modelc::parse {

/// "identifier `foo`", "keyword `model`", "`{`", "end of file".
std::string describeToken(const antlr4::Token &token, const antlr4::dfa::Vocabulary &vocab);

class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  explicit SyntaxErrorListener(ParseState &state) : state_(state) {}

  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *offendingSymbol, size_t line,
                   size_t charPositionInLine, const std::string &msg,
                   std::exception_ptr e) override;

private:
  ParseState &state_;
};

} // namespace modelc::parse

#endif // MODELC_PARSE_SYNTAXERRORS_H
