//===- ParseState.h - What the parser's parts share -------------*- C++ -*-===//
//
// One parse of one buffer: the diagnostics sink, the char and token streams,
// the mapping from ANTLR tokens to byte ranges, and the bookkeeping that
// keeps syntax errors from cascading.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_PARSESTATE_H
#define MODELC_PARSE_PARSESTATE_H

#include "diagnostics/DiagnosticEngine.h"
#include "parse/SourceStream.h"

#include "CommonTokenStream.h"
#include "ParserRuleContext.h"
#include "Token.h"

#include "llvm/ADT/DenseSet.h"

#include <cstdint>
#include <vector>

namespace modelc::parse {

class ParseState {
public:
  ParseState(DiagnosticEngine &diags, SourceStream &stream, const char *textBegin)
      : diags(diags), stream(stream), textBegin_(textBegin) {}

  DiagnosticEngine &diags;
  SourceStream &stream;
  antlr4::CommonTokenStream *tokens = nullptr;

  /// Byte offsets of brackets still open at the end of the file, innermost
  /// last (for "unclosed delimiter" labels).
  std::vector<size_t> unclosedBrackets;

  /// Per token index: how many brackets are open before the token, and the
  /// position in that stack of the innermost `{` (0 when none). Error
  /// recovery uses them to skip to the end of a statement or member.
  std::vector<uint16_t> bracketDepth, braceDepth;

  /// The bytes [begin, end) of the text as a Range.
  Range bytes(size_t begin, size_t end) const {
    return {llvm::SMLoc::getFromPointer(textBegin_ + begin),
            llvm::SMLoc::getFromPointer(textBegin_ + end)};
  }
  /// The text of a token; EOF and conjured tokens give an empty range where
  /// they stand.
  Range range(const antlr4::Token *token) const {
    size_t begin = stream.byteOffset(token->getStartIndex());
    if (token->getType() == antlr4::Token::EOF || token->getStopIndex() < token->getStartIndex() ||
        token->getTokenIndex() == INVALID_INDEX)
      return bytes(begin, begin);
    return bytes(begin, stream.byteOffset(token->getStopIndex() + 1));
  }
  /// From the first token of `ctx` to its last (empty at its start when it
  /// matched nothing).
  Range range(const antlr4::ParserRuleContext *ctx) const {
    Range first = range(ctx->start);
    if (!ctx->stop || ctx->stop->getTokenIndex() == INVALID_INDEX ||
        ctx->stop->getTokenIndex() < ctx->start->getTokenIndex())
      return {first.begin, first.begin};
    return Range::join(first, range(ctx->stop));
  }
  size_t offsetOf(llvm::SMLoc loc) const { return size_t(loc.getPointer() - textBegin_); }

  /// Decides whether an error at `offset` (on `line`) is worth reporting: at
  /// most one per line, never at or before one already reported, and at
  /// most kMaxSyntaxErrors in all. Counts it when it is.
  bool admitError(size_t offset, size_t line);
  /// Decides whether a lexical error is reported (only the budget applies).
  /// An unterminated string or comment `shadowsLines` first..last: syntax
  /// errors there are its consequences and are not reported.
  bool admitLexicalError(size_t firstLine, size_t lastLine, bool shadowsLines);

private:
  const char *textBegin_;
  unsigned errors_ = 0;
  bool anySyntaxError_ = false;
  size_t lastOffset_ = 0, lastLine_ = 0;
  llvm::DenseSet<size_t> lexicalErrorLines_;
};

} // namespace modelc::parse

#endif // MODELC_PARSE_PARSESTATE_H
