//===- Lexer.h - The .mdl lexer, written by hand for speed ------*- C++ -*-===//
//
// Produces exactly the tokens the lexer rules of grammar/Mdl.g4 describe
// (same types, channels, code-point positions, lines and columns; a
// differential test holds it to that), an order of magnitude faster than
// ANTLR's generated lexer. The grammar stays the specification.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_LEXER_H
#define MODELC_PARSE_LEXER_H

#include "parse/SourceStream.h"

#include "TokenSource.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace modelc::parse {

class Lexer : public antlr4::TokenSource {
public:
  explicit Lexer(SourceStream &stream) : stream_(stream), text_(stream.codePoints()) {}

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return line_; }
  size_t getCharPositionInLine() override { return pos_ - lineStart_; }
  antlr4::CharStream *getInputStream() override { return &stream_; }
  std::string getSourceName() override { return stream_.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override;

private:
  char32_t at(size_t i) const { return i < text_.size() ? text_[i] : 0; }
  bool atEnd(size_t i) const { return i >= text_.size(); }
  /// Moves past [pos_, end), keeping line and column up to date.
  void advanceTo(size_t end);
  /// Length of the token that starts at pos_ and its type; 0 for skipped
  /// text (whitespace, comments).
  size_t scan(size_t &type, size_t &channel);

  SourceStream &stream_;
  const std::u32string &text_;
  size_t pos_ = 0, line_ = 1, lineStart_ = 0;
};

} // namespace modelc::parse

#endif // MODELC_PARSE_LEXER_H
