//===- Recovery.h - Syntax error recovery by statement ----------*- C++ -*-===//
//
// ANTLR's DefaultErrorStrategy, with two changes that keep one mistake from
// producing a cascade of errors:
//  - no eager resynchronisation at loop entries (`fn f(x: T {` would lose
//    the whole fn); the next match reports the error instead, and
//    single-token insertion usually repairs it in place;
//  - after an error, tokens are skipped by bracket structure rather than by
//    ANTLR's follow sets: to the next statement or member that starts a line
//    in the same block, or to the `}` that closes the block.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_RECOVERY_H
#define MODELC_PARSE_RECOVERY_H

#include "parse/ParseState.h"

#include "DefaultErrorStrategy.h"

namespace modelc::parse {

class RecoveryStrategy : public antlr4::DefaultErrorStrategy {
public:
  explicit RecoveryStrategy(ParseState &state) : state_(state) {}

  void sync(antlr4::Parser * /*recognizer*/) override {}

protected:
  void consumeUntil(antlr4::Parser *recognizer, const antlr4::misc::IntervalSet &set) override;

private:
  ParseState &state_;
};

} // namespace modelc::parse

#endif // MODELC_PARSE_RECOVERY_H
