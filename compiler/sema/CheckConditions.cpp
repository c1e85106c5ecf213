//===- CheckConditions.cpp - `if` on compile-time values, optional state --===//
//
// A model chooses between computations and between sets of state by its
// value arguments: `if bias { param bias: f32[out] }`, `if norm_first { ... }
// else { ... }`, `if activation == "gelu"`. Conditions are checked here and
// recorded as sema::Condition; every branch is checked (generically, with
// the argument values the branch implies), and later phases only evaluate
// the recorded condition for their instance.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;

namespace {

bool isComparison(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Eq:
  case ast::BinaryOp::Ne:
  case ast::BinaryOp::Lt:
  case ast::BinaryOp::Le:
  case ast::BinaryOp::Gt:
  case ast::BinaryOp::Ge:
    return true;
  default:
    return false;
  }
}

std::string quoted(llvm::StringRef option) { return "\"" + option.str() + "\""; }

std::string optionList(const ValueParamInfo &param) {
  std::string out;
  for (size_t i = 0; i < param.options.size(); ++i)
    out += (i == 0                          ? ""
            : i + 1 == param.options.size() ? " and "
                                            : ", ") +
           quoted(param.options[i]);
  return out;
}

/// "`bias` is true", "`activation == "gelu"` holds".
std::string describeGuard(const ast::Expr &condition, bool holds) {
  std::string text = condition.range.text().str();
  if (llvm::isa<ast::NameExpr>(condition))
    return "`" + text + "` is " + (holds ? "true" : "false");
  return "`" + text + "` " + (holds ? "holds" : "does not hold");
}

} // namespace

//===----------------------------------------------------------------------===//
// Conditions
//===----------------------------------------------------------------------===//

bool Checker::isBuildTime(Dim d) const {
  const ModelInfo *model = fn_ ? fn_->model : currentModel;
  for (const Term &t : d.terms())
    for (AtomId a : t.atoms)
      if (!model || llvm::none_of(model->valueParams, [&](const ValueParamInfo &p) {
            return p.standsFor(a) && p.hasDimValue();
          }))
        return false;
  return true;
}

void Checker::reportNotBuildTime(const ast::Expr &expr, const Value &value) {
  std::string found = value.type.isTensor() ? "a tensor (" + typeStr(value) + ")"
                                            : "a value known only at run time";
  auto diag = diags_.report(DiagId::ConditionNotBuildTime, expr.range, conditionKeyword_, found);
  diag.primary("this is " + (value.type.isTensor() ? typeStr(value) : "known only at run time"));
  if (conditionKeyword_ == "assert") {
    diag.note("an `assert` checks the model's value arguments (`bool`, `int` and option "
              "arguments, compared with constants) when the model is built");
    return;
  }
  diag.note("an `if` chooses code by the model's value arguments (`bool`, `int` and option "
            "arguments, compared with constants)")
      .help("to choose between elements of tensors, use `where(mask, a, b)`", {},
            Applicability::HasPlaceholders);
}

ConditionPtr Checker::checkCondition(const ast::Expr &expr) {
  bool saved = compileTimeNames;
  compileTimeNames = true;
  ConditionPtr condition = conditionOf(expr);
  compileTimeNames = saved;
  return condition;
}

ConditionPtr Checker::conditionOf(const ast::Expr &expr) {
  Value boolean;
  boolean.type = Type::boolean();
  if (auto *unary = dyn_cast<ast::UnaryExpr>(&expr); unary && unary->op == ast::UnaryOp::Not) {
    ConditionPtr operand = conditionOf(*unary->operand);
    record(expr, operand ? boolean : errorValue());
    return operand ? Condition::negate(operand) : nullptr;
  }
  if (auto *binary = dyn_cast<ast::BinaryExpr>(&expr)) {
    if (binary->op == ast::BinaryOp::And || binary->op == ast::BinaryOp::Or) {
      ConditionPtr lhs = conditionOf(*binary->lhs);
      ConditionPtr rhs = conditionOf(*binary->rhs);
      record(expr, lhs && rhs ? boolean : errorValue());
      if (!lhs || !rhs)
        return nullptr;
      return binary->op == ast::BinaryOp::And ? Condition::both(lhs, rhs)
                                              : Condition::either(lhs, rhs);
    }
    if (isComparison(binary->op)) {
      ConditionPtr condition = comparisonCondition(*binary);
      record(expr, condition ? boolean : errorValue());
      return condition;
    }
  }
  Value v = checkExpr(expr);
  if (v.type.isError())
    return nullptr;
  if (v.type.kind() == Type::Kind::Bool && v.type.intValue && isBuildTime(*v.type.intValue))
    return Condition::compare(ast::BinaryOp::Eq, *v.type.intValue, Dim::constant(1), 2);
  reportNotBuildTime(expr, v);
  return nullptr;
}

ConditionPtr Checker::comparisonCondition(const ast::BinaryExpr &expr) {
  // `activation == "gelu"`: an option argument against one of its options.
  auto *lhsText = dyn_cast<ast::StringLitExpr>(expr.lhs.get());
  auto *rhsText = dyn_cast<ast::StringLitExpr>(expr.rhs.get());
  if (lhsText || rhsText) {
    const ast::StringLitExpr &literal = rhsText ? *rhsText : *lhsText;
    const ast::Expr &other = rhsText ? *expr.lhs : *expr.rhs;
    record(literal, Value{Type::string(), {}, &literal, {}});
    Value v = checkExpr(other);
    if (v.type.isError())
      return nullptr;
    const ValueParamInfo *param = nullptr;
    if (v.type.kind() == Type::Kind::String && v.type.intValue)
      if (std::optional<AtomId> atom = v.type.intValue->asAtom())
        for (const ValueParamInfo &p : fn_->model->valueParams)
          if (p.atom == *atom && p.kind == ast::ScalarKind::Option)
            param = &p;
    if (!param) {
      reportNotBuildTime(other, v);
      return nullptr;
    }
    if (expr.op != ast::BinaryOp::Eq && expr.op != ast::BinaryOp::Ne) {
      diags_.report(DiagId::UnsupportedFeature, expr.opRange, "ordering options")
          .primary("options compare with `==` and `!=`");
      return nullptr;
    }
    std::optional<int64_t> index = param->optionIndex(literal.value);
    if (!index) {
      reportUnknownOption(literal.range, literal.value, *param, fn_->model->name);
      return nullptr;
    }
    return Condition::compare(expr.op, *v.type.intValue, Dim::constant(*index),
                              unsigned(param->options.size()));
  }
  // `d_model % nhead == 0` (PyTorch's constructor check): divisibility of
  // build-time ints.
  auto *mod = dyn_cast<ast::BinaryExpr>(expr.lhs.get());
  auto *zero = dyn_cast<ast::IntLitExpr>(expr.rhs.get());
  if (mod && mod->op == ast::BinaryOp::Mod && zero && zero->value == 0 &&
      (expr.op == ast::BinaryOp::Eq || expr.op == ast::BinaryOp::Ne)) {
    checkExpr(*expr.rhs);
    Value n = checkExpr(*mod->lhs), d = checkExpr(*mod->rhs);
    if (n.type.isError() || d.type.isError())
      return nullptr;
    for (const Value *v : {&n, &d})
      if (v->type.kind() != Type::Kind::Int || !v->type.intValue ||
          !isBuildTime(*v->type.intValue)) {
        reportNotBuildTime(*v->expr, *v);
        return nullptr;
      }
    record(*mod, Value{Type::integer(), {}, mod, {}});
    ConditionPtr divisible = Condition::divisible(*n.type.intValue, *d.type.intValue);
    return expr.op == ast::BinaryOp::Eq ? divisible : Condition::negate(divisible);
  }
  Value lhs = checkExpr(*expr.lhs), rhs = checkExpr(*expr.rhs);
  if (lhs.type.isError() || rhs.type.isError())
    return nullptr;
  for (const Value *v : {&lhs, &rhs}) {
    bool known = (v->type.kind() == Type::Kind::Int || v->type.kind() == Type::Kind::Bool) &&
                 v->type.intValue && isBuildTime(*v->type.intValue);
    if (!known) {
      reportNotBuildTime(*v->expr, *v);
      return nullptr;
    }
  }
  if (lhs.type.kind() != rhs.type.kind()) {
    diags_.report(DiagId::TypeMismatch, expr.rhs->range, lhs.type.str(), rhs.type.str())
        .primary("compared with " + lhs.type.str());
    return nullptr;
  }
  return Condition::compare(expr.op, *lhs.type.intValue, *rhs.type.intValue);
}

void Checker::reportUnknownOption(Range at, llvm::StringRef given, const ValueParamInfo &param,
                                  llvm::StringRef owner) {
  auto diag = diags_.report(DiagId::UnknownOption, at, quoted(given), param.name, owner);
  diag.primary("not an option of `" + param.name + "`")
      .note("the options of `" + param.name + "` are " + optionList(param));
  const std::string *closest = nullptr;
  unsigned best = 3;
  for (const std::string &option : param.options) {
    unsigned distance = llvm::StringRef(option).edit_distance(given, /*AllowReplacements=*/true);
    if (distance < best) {
      best = distance;
      closest = &option;
    }
  }
  if (closest)
    diag.help("did you mean " + quoted(*closest) + "?", {{at, quoted(*closest)}},
              Applicability::MaybeIncorrect);
}

std::optional<Dim> Checker::optionArgument(const ValueParamInfo &param, llvm::StringRef owner,
                                           const ast::Expr &arg, const Value &value) {
  if (auto *literal = dyn_cast<ast::StringLitExpr>(&arg)) {
    if (std::optional<int64_t> index = param.optionIndex(literal->value))
      return Dim::constant(*index);
    reportUnknownOption(arg.range, literal->value, param, owner);
    return std::nullopt;
  }
  // The caller's own option argument, passed on: the same options mean the
  // same indices.
  const ValueParamInfo *own = nullptr;
  if (value.type.intValue && currentModel)
    if (std::optional<AtomId> atom = value.type.intValue->asAtom())
      for (const ValueParamInfo &p : currentModel->valueParams)
        if (p.atom == *atom && p.kind == ast::ScalarKind::Option)
          own = &p;
  if (own && own->options == param.options)
    return value.type.intValue;
  std::string expected;
  for (const std::string &option : param.options)
    expected += (expected.empty() ? "" : " | ") + quoted(option);
  auto diag = diags_.report(DiagId::TypeMismatch, arg.range, expected,
                            own ? "an option of `" + own->name + "`" : value.type.str());
  diag.primary("argument `" + param.name + "` of `" + owner.str() + "`");
  if (own)
    diag.note("`" + own->name + "` has the options " + optionList(*own) + ", `" + param.name +
              "` has " + optionList(param));
  return std::nullopt;
}

void Checker::reportNonFloatDTypeArgument(Range at, llvm::StringRef given, llvm::StringRef param,
                                          llvm::StringRef owner) {
  diags_.report(DiagId::TypeMismatch, at, "a floating dtype (f16, bf16, f32 or f64)", given.str())
      .primary("argument `" + param.str() + "` of `" + owner.str() + "`")
      .note("a dtype parameter sets the dtype of floating-point weights and activations, as "
            "PyTorch's `dtype=` of its layers does");
}

std::optional<Dim> Checker::dtypeArgument(const ValueParamInfo &param, llvm::StringRef owner,
                                          const ast::Expr &arg, const Value &value) {
  if (value.type.kind() != Type::Kind::DType) {
    auto diag = diags_.report(DiagId::TypeMismatch, arg.range, "a dtype", value.type.str());
    diag.primary("argument `" + param.name + "` of `" + owner.str() + "`");
    if (auto *name = dyn_cast<ast::NameExpr>(&arg))
      helpWithTorchDTypeName(diag, name->name, arg.range);
    return std::nullopt;
  }
  if (value.type.dtype.isFloating())
    return value.type.dtype.asDim();
  reportNonFloatDTypeArgument(arg.range, value.type.dtype.str(), param.name, owner);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// `if` statements
//===----------------------------------------------------------------------===//

Type Checker::underFacts(const Type &type) const {
  if (!fn_ || fn_->facts.empty())
    return type;
  Substitution facts;
  facts.dims.append(fn_->facts.begin(), fn_->facts.end());
  return facts.apply(type);
}

bool modelc::sema::alwaysReturns(const std::vector<ast::StmtPtr> &body) {
  return llvm::any_of(body, [](const ast::StmtPtr &s) {
    if (!s)
      return false;
    if (llvm::isa<ast::ReturnStmt>(s.get()))
      return true;
    auto *branch = dyn_cast<ast::IfStmt>(s.get());
    return branch && branch->hasElse && alwaysReturns(branch->thenBody) &&
           alwaysReturns(branch->elseBody);
  });
}

void Checker::checkIf(const ast::IfStmt &stmt) {
  FnContext &ctx = *fn_;
  ConditionPtr condition = stmt.condition ? checkCondition(*stmt.condition) : nullptr;
  program_.recordBranch(&stmt, condition);
  auto assume = [&](bool holds) {
    if (!condition)
      return;
    condition->assume(holds, ctx.facts);
    ctx.assumed.push_back({condition, holds});
  };
  // Each block is checked for every instance that can take it: with what
  // its condition tells about the arguments.
  auto checkBlock = [&](const std::vector<ast::StmtPtr> &body, bool holds) {
    size_t facts = ctx.facts.size(), assumed = ctx.assumed.size();
    assume(holds);
    ctx.scopes.emplace_back();
    checkStmts(body);
    ctx.scopes.pop_back();
    ctx.facts.resize(facts);
    ctx.assumed.resize(assumed);
  };
  checkBlock(stmt.thenBody, true);
  if (stmt.hasElse)
    checkBlock(stmt.elseBody, false);
  // `if c { return ... }`: the rest of the enclosing block runs only when
  // `c` does not hold (checkStmts forgets this at the block's end).
  bool thenReturns = alwaysReturns(stmt.thenBody);
  bool elseReturns = stmt.hasElse && alwaysReturns(stmt.elseBody);
  if (thenReturns != elseReturns)
    assume(!thenReturns);
}

//===----------------------------------------------------------------------===//
// Conditional state and submodels
//===----------------------------------------------------------------------===//

void Checker::inModelBody(ModelInfo &model, llvm::function_ref<void()> check) {
  FnContext ctx;
  ctx.model = &model;
  ctx.scopes.emplace_back();
  FnContext *saved = fn_;
  fn_ = &ctx;
  check();
  fn_ = saved;
}

void Checker::checkMemberConditions(ModelInfo &model) {
  inModelBody(model, [&] {
    for (const ast::ExprPtr &condition : model.decl->memberConditions)
      memberConditions_[condition.get()] = checkCondition(*condition);
  });
}

void Checker::checkAsserts(ModelInfo &model) {
  inModelBody(model, [&] {
    for (const ast::AssertDecl &decl : model.decl->asserts) {
      conditionKeyword_ = "assert";
      ConditionPtr condition = checkCondition(*decl.condition);
      conditionKeyword_ = "if";
      if (!condition)
        continue; // reported
      Presence presence = presenceOf(decl.guards);
      if (!presence.always())
        condition = Condition::either(Condition::negate(presence.condition), condition);
      model.requirements.push_back(
          {condition, decl.condition->range.text().str(), decl.message, decl.range, model.name});
    }
  });
}

void Checker::reportUnmetAssertion(const Requirement &r, Range at, llvm::StringRef instance) {
  auto diag = diags_.report(DiagId::UnmetAssertion, at, instance, r.text);
  diag.primary(r.message.empty() ? "these arguments fail it" : r.message);
  diag.note("`" + r.model + "` asserts it here", r.range);
}

Presence Checker::presenceOf(const std::vector<ast::MemberGuard> &guards) {
  Presence presence;
  for (const ast::MemberGuard &guard : guards) {
    ConditionPtr condition = memberConditions_.lookup(guard.condition);
    if (!condition)
      return {}; // reported; the member counts as present
    if (!guard.holds)
      condition = Condition::negate(condition);
    presence.condition =
        presence.condition ? Condition::both(presence.condition, condition) : condition;
    presence.description += (presence.description.empty() ? "" : " and ") +
                            describeGuard(*guard.condition, guard.holds);
    presence.guardRange = guard.condition->range;
  }
  return presence;
}

namespace {
/// Whether guards `a` and `b` test the same condition (the same `if`, or
/// conditions written the same way).
bool sameGuardCondition(const ast::MemberGuard &a, const ast::MemberGuard &b,
                        const llvm::DenseMap<const ast::Expr *, ConditionPtr> &conditions) {
  if (a.condition == b.condition)
    return true;
  ConditionPtr ca = conditions.lookup(a.condition), cb = conditions.lookup(b.condition);
  return ca && cb && ca->sameAs(*cb);
}
} // namespace

Presence Checker::presenceOfAny(llvm::ArrayRef<const std::vector<ast::MemberGuard> *> guards) {
  std::vector<std::vector<ast::MemberGuard>> lists;
  for (const std::vector<ast::MemberGuard> *g : guards)
    lists.push_back(*g);
  // Merge two lists that differ only in one guard taken both ways (`c` and
  // `not c`, with the same outer guards): together they need only the rest.
  auto mergeable = [&](const std::vector<ast::MemberGuard> &a,
                       const std::vector<ast::MemberGuard> &b) -> std::optional<size_t> {
    if (a.size() != b.size())
      return std::nullopt;
    std::optional<size_t> differing;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!sameGuardCondition(a[i], b[i], memberConditions_))
        return std::nullopt;
      if (a[i].holds == b[i].holds)
        continue;
      if (differing)
        return std::nullopt;
      differing = i;
    }
    return differing;
  };
  for (bool merged = true; merged;) {
    merged = false;
    for (size_t i = 0; i < lists.size() && !merged; ++i)
      for (size_t j = i + 1; j < lists.size() && !merged; ++j)
        if (std::optional<size_t> at = mergeable(lists[i], lists[j])) {
          lists[i].erase(lists[i].begin() + long(*at));
          lists.erase(lists.begin() + long(j));
          merged = true;
        }
  }
  Presence any;
  for (const std::vector<ast::MemberGuard> &list : lists) {
    Presence p = presenceOf(list);
    if (p.always())
      return p;
    any.condition = any.condition ? Condition::either(any.condition, p.condition) : p.condition;
    any.description += (any.description.empty() ? "" : " or ") + p.description;
    any.guardRange = p.guardRange;
  }
  return any;
}

void Checker::checkRedeclaration(const ModelInfo &model, const ast::Ident &name,
                                 const std::vector<ast::MemberGuard> &guards, bool isState) {
  auto exclusive = [&](const std::vector<ast::MemberGuard> &earlier) {
    for (const ast::MemberGuard &a : earlier)
      for (const ast::MemberGuard &b : guards)
        if (a.holds != b.holds && sameGuardCondition(a, b, memberConditions_))
          return true;
    return false;
  };
  for (const StateInfo &s : model.state)
    if (s.name == name.name && (!isState || !exclusive(s.decl->guards)))
      return (void)diags_.report(DiagId::DuplicateDefinition, name.range, name.name);
  for (const SubmodelInfo &s : model.submodels)
    if (s.name == name.name && (isState || !exclusive(s.decl->guards)))
      return (void)diags_.report(DiagId::DuplicateDefinition, name.range, name.name);
}

bool Checker::requireOneType(llvm::StringRef name, Range at, llvm::ArrayRef<Range> differing) {
  if (differing.empty())
    return true;
  auto diag = diags_.report(DiagId::BranchDeclarationsDiffer, at, name);
  diag.primary("which declaration is meant is not known here");
  for (Range declared : differing)
    diag.note("declared here", declared);
  diag.help("use `" + name.str() + "` inside an `if` on the condition that declares it", {},
            Applicability::HasPlaceholders);
  return false;
}

bool Checker::knownPresent(const Presence &presence) const {
  if (presence.always())
    return true;
  Substitution facts;
  if (fn_)
    facts.dims.append(fn_->facts.begin(), fn_->facts.end());
  return presence.condition->impliedBy(
      fn_ ? llvm::ArrayRef(fn_->assumed) : llvm::ArrayRef<std::pair<ConditionPtr, bool>>(), facts);
}

bool Checker::requirePresent(const Presence &presence, llvm::StringRef what, Range at,
                             const Substitution *instance, const ast::Expr *instanceDecl) {
  if (presence.always())
    return true;
  ConditionPtr condition =
      instance ? presence.condition->substituted(*instance) : presence.condition;
  Substitution facts;
  if (fn_)
    facts.dims.append(fn_->facts.begin(), fn_->facts.end());
  if (condition->impliedBy(fn_ ? llvm::ArrayRef(fn_->assumed)
                               : llvm::ArrayRef<std::pair<ConditionPtr, bool>>(),
                           facts))
    return true;
  std::optional<bool> present = condition->evaluate(facts);
  auto diag = diags_.report(DiagId::AbsentState, at, what, presence.description);
  if (instance)
    diag.primary(present == false ? "this instance is built without it"
                                  : "not known to exist in this instance");
  else
    diag.primary(present == false ? "it does not exist on this branch"
                                  : "used where that is not known to hold");
  diag.note("declared under this condition", presence.guardRange);
  if (instanceDecl)
    diag.note("the instance is built here", instanceDecl->range);
  if (!instance && present != false)
    diag.help("use it only where " + presence.description + ", inside an `if` on it", {},
              Applicability::HasPlaceholders);
  return false;
}
