//===- Condition.cpp - Conditions on a model's value arguments ------------===//

#include "sema/Condition.h"

#include "sema/Type.h"

using namespace modelc;
using namespace modelc::sema;

ConditionPtr Condition::constant(bool value) {
  auto c = std::shared_ptr<Condition>(new Condition(Kind::Constant));
  c->value_ = value;
  return c;
}

ConditionPtr Condition::compare(ast::BinaryOp op, Dim lhs, Dim rhs, unsigned domain) {
  auto c = std::shared_ptr<Condition>(new Condition(Kind::Compare));
  c->op_ = op;
  c->lhs_ = lhs;
  c->rhs_ = rhs;
  c->domain_ = domain;
  return c;
}

ConditionPtr Condition::divisible(Dim numerator, Dim divisor) {
  auto c = std::shared_ptr<Condition>(new Condition(Kind::Divisible));
  c->lhs_ = numerator;
  c->rhs_ = divisor;
  return c;
}

ConditionPtr Condition::negate(ConditionPtr operand) {
  auto c = std::shared_ptr<Condition>(new Condition(Kind::Not));
  c->a_ = std::move(operand);
  return c;
}

ConditionPtr Condition::both(ConditionPtr a, ConditionPtr b) {
  auto c = std::shared_ptr<Condition>(new Condition(Kind::And));
  c->a_ = std::move(a);
  c->b_ = std::move(b);
  return c;
}

ConditionPtr Condition::either(ConditionPtr a, ConditionPtr b) {
  auto c = std::shared_ptr<Condition>(new Condition(Kind::Or));
  c->a_ = std::move(a);
  c->b_ = std::move(b);
  return c;
}

std::optional<bool> Condition::evaluate(const Substitution &subst) const {
  switch (kind_) {
  case Kind::Constant:
    return value_;
  case Kind::Compare: {
    Dim l = subst.apply(lhs_), r = subst.apply(rhs_);
    if (l == r)
      return op_ == ast::BinaryOp::Eq || op_ == ast::BinaryOp::Le || op_ == ast::BinaryOp::Ge;
    std::optional<int64_t> difference = (l - r).asConstant();
    if (!difference)
      return std::nullopt;
    switch (op_) {
    case ast::BinaryOp::Eq:
      return *difference == 0;
    case ast::BinaryOp::Ne:
      return *difference != 0;
    case ast::BinaryOp::Lt:
      return *difference < 0;
    case ast::BinaryOp::Le:
      return *difference <= 0;
    case ast::BinaryOp::Gt:
      return *difference > 0;
    case ast::BinaryOp::Ge:
      return *difference >= 0;
    default:
      return std::nullopt;
    }
  }
  case Kind::Divisible: {
    Dim l = subst.apply(lhs_), r = subst.apply(rhs_);
    std::optional<int64_t> n = l.asConstant(), d = r.asConstant();
    if (d && *d == 0)
      return false;
    if (n && d)
      return *n % *d == 0;
    if (l.exactDiv(r))
      return true; // `4 * h % h`
    return std::nullopt;
  }
  case Kind::Not:
    if (std::optional<bool> v = a_->evaluate(subst))
      return !*v;
    return std::nullopt;
  case Kind::And:
  case Kind::Or: {
    // A decided side can decide the whole: `false and ?` is false.
    bool absorbing = kind_ == Kind::Or;
    std::optional<bool> l = a_->evaluate(subst), r = b_->evaluate(subst);
    if (l == absorbing || r == absorbing)
      return absorbing;
    if (l && r)
      return !absorbing;
    return std::nullopt;
  }
  }
  return std::nullopt;
}

ConditionPtr Condition::substituted(const Substitution &subst) const {
  switch (kind_) {
  case Kind::Constant:
    return constant(value_);
  case Kind::Compare:
    return compare(op_, subst.apply(lhs_), subst.apply(rhs_), domain_);
  case Kind::Divisible:
    return divisible(subst.apply(lhs_), subst.apply(rhs_));
  case Kind::Not:
    return negate(a_->substituted(subst));
  case Kind::And:
    return both(a_->substituted(subst), b_->substituted(subst));
  case Kind::Or:
    return either(a_->substituted(subst), b_->substituted(subst));
  }
  return constant(false);
}

void Condition::assume(bool truth, ArgumentFacts &facts) const {
  switch (kind_) {
  case Kind::Constant:
  case Kind::Divisible: // fixes no single value
    return;
  case Kind::Compare: {
    if (op_ != ast::BinaryOp::Eq && op_ != ast::BinaryOp::Ne)
      return;
    bool equal = (op_ == ast::BinaryOp::Eq) == truth;
    // `stride == 1`, `in_planes == planes`: the argument is that value.
    std::optional<AtomId> atom = lhs_.asAtom();
    Dim value = rhs_;
    if (!atom || rhs_.mentions(*atom)) {
      atom = rhs_.asAtom();
      value = lhs_;
    }
    if (!atom || value.mentions(*atom))
      return;
    if (equal)
      facts.push_back({*atom, value});
    else if (domain_ == 2 && value.asConstant()) // a bool, or one of two options
      facts.push_back({*atom, Dim::constant(1 - *value.asConstant())});
    return;
  }
  case Kind::Not:
    a_->assume(!truth, facts);
    return;
  case Kind::And:
    if (truth) {
      a_->assume(true, facts);
      b_->assume(true, facts);
    }
    return;
  case Kind::Or:
    if (!truth) {
      a_->assume(false, facts);
      b_->assume(false, facts);
    }
    return;
  }
}

bool Condition::sameAs(const Condition &other) const {
  if (kind_ != other.kind_)
    return false;
  switch (kind_) {
  case Kind::Constant:
    return value_ == other.value_;
  case Kind::Compare:
    return op_ == other.op_ && lhs_ == other.lhs_ && rhs_ == other.rhs_;
  case Kind::Divisible:
    return lhs_ == other.lhs_ && rhs_ == other.rhs_;
  case Kind::Not:
    return a_->sameAs(*other.a_);
  case Kind::And:
  case Kind::Or:
    return a_->sameAs(*other.a_) && b_->sameAs(*other.b_);
  }
  return false;
}

bool Condition::impliedBy(llvm::ArrayRef<std::pair<ConditionPtr, bool>> assumed,
                          const Substitution &facts) const {
  if (evaluate(facts) == true)
    return true;
  for (const auto &[condition, truth] : assumed) {
    if (truth && sameAs(*condition))
      return true;
    if (!truth && kind_ == Kind::Not && a_->sameAs(*condition))
      return true;
  }
  if (kind_ == Kind::And)
    return a_->impliedBy(assumed, facts) && b_->impliedBy(assumed, facts);
  return false;
}
