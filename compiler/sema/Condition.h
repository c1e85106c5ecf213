//===- Condition.h - Conditions on a model's value arguments ----*- C++ -*-===//
//
// `if bias { ... }`, `if activation == "gelu"`, `if not norm_first and
// num_layers > 1`: a condition over the value arguments of a model, decided
// when the model is instantiated. The checker builds one per `if` and per
// conditional member; later phases evaluate it with an instance's
// substitution and never look at the condition's syntax. A bool argument is
// the dim 0 or 1, an option argument (`"relu" | "gelu"`) the index of its
// option, so every condition is a comparison of dims.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_CONDITION_H
#define MODELC_SEMA_CONDITION_H

#include "ast/AST.h"
#include "sema/Dim.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <optional>
#include <utility>

namespace modelc::sema {

struct Substitution;
class Condition;
using ConditionPtr = std::shared_ptr<const Condition>;

/// What a condition tells about the arguments where it holds: `atom == value`.
using ArgumentFacts = llvm::SmallVector<std::pair<AtomId, Dim>, 4>;

class Condition {
public:
  enum class Kind : uint8_t { Constant, Compare, Divisible, Not, And, Or };

  static ConditionPtr constant(bool value);
  /// `lhs op rhs` for a comparison op. `domain` is the number of values the
  /// lhs atom can take when it is a bool (2) or option argument, else 0.
  static ConditionPtr compare(ast::BinaryOp op, Dim lhs, Dim rhs, unsigned domain = 0);
  /// `numerator % divisor == 0` (false for a zero divisor).
  static ConditionPtr divisible(Dim numerator, Dim divisor);
  static ConditionPtr negate(ConditionPtr operand);
  static ConditionPtr both(ConditionPtr a, ConditionPtr b);
  static ConditionPtr either(ConditionPtr a, ConditionPtr b);

  Kind kind() const { return kind_; }

  /// True or false when the dims, substituted, decide it; nullopt otherwise.
  std::optional<bool> evaluate(const Substitution &subst) const;
  /// The condition with `subst` applied to its dims.
  ConditionPtr substituted(const Substitution &subst) const;
  /// Adds to `facts` the argument values that follow from this condition
  /// being `truth` (`bias` true gives bias == 1; `not norm_first` true gives
  /// norm_first == 0); conditions that fix no single value add nothing.
  void assume(bool truth, ArgumentFacts &facts) const;
  /// Whether this is `other` written the same way (the same operators over
  /// the same dims): `if stride != 1 or in_planes != planes` in a fn is the
  /// condition of a member declared under the same `if`.
  bool sameAs(const Condition &other) const;
  /// Whether the condition is known to hold when each of `assumed` has its
  /// truth value and `facts` hold: by evaluation, or because it (or each
  /// side of an `and`) is one of them written the same way.
  bool impliedBy(llvm::ArrayRef<std::pair<ConditionPtr, bool>> assumed,
                 const Substitution &facts) const;

private:
  explicit Condition(Kind kind) : kind_(kind) {}
  Kind kind_;
  bool value_ = false;                   // Constant
  ast::BinaryOp op_ = ast::BinaryOp::Eq; // Compare
  Dim lhs_, rhs_;                        // Compare, Divisible
  unsigned domain_ = 0;                  // Compare
  ConditionPtr a_, b_;                   // Not (a_), And, Or
};

} // namespace modelc::sema

#endif // MODELC_SEMA_CONDITION_H
