//===- ParseState.cpp - Error bookkeeping of one parse --------------------===//
#include "parse/ParseState.h"

#include "parse/Parser.h"

using namespace modelc::parse;

bool ParseState::admitError(size_t offset, size_t line) {
  if (errors_ >= kMaxSyntaxErrors || lexicalErrorLines_.contains(line))
    return false;
  if (anySyntaxError_ && (line == lastLine_ || offset <= lastOffset_))
    return false;
  anySyntaxError_ = true;
  lastOffset_ = offset;
  lastLine_ = line;
  ++errors_;
  return true;
}

bool ParseState::admitLexicalError(size_t firstLine, size_t lastLine, bool shadowsLines) {
  if (shadowsLines) {
    lexicalErrorLines_.insert(firstLine);
    lexicalErrorLines_.insert(lastLine);
  }
  if (errors_ >= kMaxSyntaxErrors)
    return false;
  ++errors_;
  return true;
}
