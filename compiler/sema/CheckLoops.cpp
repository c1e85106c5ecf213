//===- CheckLoops.cpp - `for` loops and assignments ---------------------===//
//
// A loop body is checked once, whatever the number of iterations: over a
// list of submodels the variable is one (uniform) submodel, over a range
// `a..b` it is an int known only at run time. A `let` variable of an
// enclosing scope that the body re-binds is carried from one iteration to
// the next, so its dtype, shape and device may not change (E0520); the
// device rules inside the body are the rules outside it (a state created
// with `zeros` that nothing places is E0302 in a loop as anywhere).
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;

std::pair<Checker::Local *, size_t> Checker::findLocal(llvm::StringRef name) {
  FnContext &ctx = *fn_;
  for (size_t i = ctx.scopes.size(); i-- > 0;) {
    auto it = ctx.scopes[i].find(name);
    if (it != ctx.scopes[i].end())
      return {&it->second, i};
  }
  return {nullptr, 0};
}

/// The list declaration of the submodel `for x in name` iterates over.
static const ast::ListExpr *listDeclaration(const Checker::FnContext &ctx,
                                            const ast::ForStmt &loop) {
  auto *name = llvm::dyn_cast<ast::NameExpr>(loop.iterable.get());
  if (!name || !ctx.model)
    return nullptr;
  const SubmodelInfo *sub = ctx.model->findSubmodel(name->name);
  return llvm::dyn_cast_if_present<ast::ListExpr>(sub && sub->decl ? sub->decl->init.get()
                                                                   : nullptr);
}

void Checker::checkForLoop(const ast::ForStmt &loop) {
  if (loop.isRange()) {
    checkRangeLoop(loop);
    return;
  }
  FnContext &ctx = *fn_;
  Value it = loop.iterable ? checkExpr(*loop.iterable) : errorValue();
  Local var;
  var.declRange = loop.var.range;
  var.isLet = false;
  if (it.type.kind() == Type::Kind::ModelList && it.type.instances && !it.type.instances->empty()) {
    const auto &instances = *it.type.instances;
    const auto &first = instances.front();
    auto sameModel = [&](const auto &inst) {
      return inst->model == first->model && inst->values == first->values;
    };
    auto sameDevices = [&](const auto &inst) { return inst->devices == first->devices; };
    if (llvm::all_of(instances, sameModel) && llvm::all_of(instances, sameDevices)) {
      var.value.type = Type::model(first);
      var.value.origin = it.origin;
    } else if (llvm::all_of(instances, sameModel)) {
      // The body is checked once, so every iteration must see the same
      // devices; name them so the user sees which submodel differs.
      std::vector<std::string> seen;
      for (const auto &inst : instances)
        for (const Device &d : inst->devices)
          if (!llvm::is_contained(seen, d.str()))
            seen.push_back(d.str());
      std::string devices = llvm::join(seen, ", ");
      auto diag = diags_.report(DiagId::UnsupportedFeature, loop.iterable->range,
                                "iterating over submodels on different devices (" + devices + ")");
      diag.primary("these submodels are all `" + first->model->name + "`, but not on one device");
      const ast::ListExpr *list = listDeclaration(ctx, loop);
      if (list && list->elements.size() == instances.size())
        for (size_t i = 0; i < instances.size(); ++i)
          if (!sameDevices(instances[i]))
            diag.label(list->elements[i]->range, "on " + instances[i]->devices.front().str() +
                                                     ", the first is on " +
                                                     first->devices.front().str());
      diag.note("a loop body is checked once for every iteration: index the submodels one by "
                "one (`" +
                loop.iterable->range.text().str() + "[0]`, ...) or place them on one device");
    } else {
      // The body is checked once, with one type for the loop variable; a
      // list of different layers (PyTorch's nn.Sequential-like ModuleList)
      // is called one by one.
      auto diag = diags_.report(DiagId::UnsupportedFeature, loop.iterable->range,
                                "iterating over submodels of different types");
      diag.primary("these submodels are not all built alike");
      const ast::ListExpr *list = listDeclaration(ctx, loop);
      if (list && list->elements.size() == instances.size())
        for (size_t i = 0; i < instances.size(); ++i)
          if (!sameModel(instances[i]))
            diag.label(list->elements[i]->range,
                       "not `" + list->elements[0]->range.text().str() + "`, as the first is");
      std::string name = loop.iterable->range.text().str();
      diag.note("a loop body is checked once for every iteration, so the loop variable has one "
                "type: the submodels must be one model with one set of arguments");
      diag.help("call them one by one: `let h = " + name + "[0](x)`, `h = " + name +
                    "[1](h)`, ... (or make them one model that takes the difference as an "
                    "option argument)",
                {}, Applicability::HasPlaceholders);
    }
  } else if (!it.type.isError()) {
    diags_.report(DiagId::NotIterable, loop.iterable->range, it.type.str())
        .primary("a `for` loop iterates over a list of submodels or a range `a..b`");
  }
  ctx.scopes.emplace_back();
  ctx.scopes.back()[loop.var.name] = var;
  ctx.loopScopes.push_back(ctx.scopes.size() - 1);
  ctx.loops.push_back(&loop);
  checkStmts(loop.body);
  ctx.loops.pop_back();
  ctx.loopScopes.pop_back();
  ctx.scopes.pop_back();
}

void Checker::checkRangeLoop(const ast::ForStmt &loop) {
  FnContext &ctx = *fn_;
  for (const ast::Expr *bound : {loop.iterable.get(), loop.rangeEnd.get()}) {
    Value v = checkExpr(*bound);
    if (!v.type.isError() && v.type.kind() != Type::Kind::Int)
      diags_.report(DiagId::TypeMismatch, bound->range, "int", typeStr(v))
          .primary("the bounds of a range `a..b` are ints")
          .note("a loop over a sequence takes its length from a dim: `for t in 0..T` with "
                "`x: f32[B, T, I]`");
  }
  // The variable is an int known only at run time: a symbol of its own, so
  // `x[:, t]` drops a dim and `t + 1 - t` is 1.
  Local var;
  var.declRange = loop.var.range;
  var.isLet = false;
  var.value.type = Type::integer(Dim::symbol(loop.var.name));
  ctx.scopes.emplace_back();
  ctx.scopes.back()[loop.var.name] = var;
  ctx.loopScopes.push_back(ctx.scopes.size() - 1);
  ctx.loops.push_back(&loop);
  checkStmts(loop.body);
  ctx.loops.pop_back();
  ctx.loopScopes.pop_back();
  ctx.scopes.pop_back();
}

bool Checker::reportCarriedTypeChange(const ast::AssignStmt &assign, const Local &target,
                                      const Value &value) {
  const Type &declared = target.value.type;
  if (!value.type.isTensor() || !declared.isTensor() ||
      (value.type.dtype == declared.dtype && value.type.shape == declared.shape))
    return false;
  if (value.type.isTensor())
    fn_->unifier.poison(value.type.dev);
  diags_
      .report(DiagId::CarriedTypeChange, value.range(), assign.target.name, typeStr(target.value),
              typeStr(value))
      .primary("this is " + typeStr(value))
      .label(target.declRange, "`" + assign.target.name + "` is declared " + typeStr(target.value) +
                                   " here, outside the loop")
      .note("the next iteration reads `" + assign.target.name +
            "` as the loop received it: a value carried around a loop keeps one dtype and "
            "shape")
      .help("bind the new value to a new name (`let " + assign.target.name +
            "2 = ...`), or give the variable this type before the loop");
  return true;
}

void Checker::reportAssignToNonLocal(const ast::AssignStmt &assign, const Local *target,
                                     const Value &value) {
  auto diag = diags_.report(DiagId::AssignToNonLocal, assign.target.range, assign.target.name);
  const std::string &name = assign.target.name;
  if (!target || fn_->loops.empty()) {
    diag.help("introduce a new variable",
              {{Range{assign.target.range.begin, assign.target.range.begin}, "let "}},
              Applicability::MaybeIncorrect);
    return;
  }
  // In a loop a `let` would be new each iteration and end with it: the
  // loop must carry a variable declared before it.
  const ast::ForStmt &outermost = *fn_->loops.front();
  const char *at = outermost.range.begin.getPointer();
  const char *lineStart = at;
  const char *bufferStart = fn_->model->decl->range.begin.getPointer();
  while (lineStart > bufferStart && lineStart[-1] != '\n')
    --lineStart;
  std::string indent(lineStart, at);
  // A line of its own above the loop, or just before it where the loop does
  // not start its line.
  llvm::SMLoc insertAt = llvm::SMLoc::getFromPointer(lineStart);
  std::string declaration = indent + "let " + name + " = " + name + "\n";
  if (!llvm::all_of(indent, [](char c) { return c == ' ' || c == '\t'; })) {
    insertAt = outermost.range.begin;
    declaration = "let " + name + " = " + name + "; ";
  }
  bool sameType = value.type.isError() || (value.type.isTensor() && target->value.type.isTensor() &&
                                           value.type.dtype == target->value.type.dtype &&
                                           value.type.shape == target->value.type.shape);
  diag.note("a `let` inside the loop would be a new variable each iteration, gone after it")
      .help("declare a variable before the loop; the loop then carries its value from one "
            "iteration to the next",
            {{Range{insertAt, insertAt}, declaration}},
            sameType ? Applicability::MachineApplicable : Applicability::MaybeIncorrect);
}

void Checker::checkAssign(const ast::AssignStmt &assign) {
  FnContext &ctx = *fn_;
  Value v = assign.value ? checkExpr(*assign.value) : errorValue();
  auto [target, scopeIndex] = findLocal(assign.target.name);
  if (!target || !target->isLet) {
    if (!target && !ctx.model->findState(assign.target.name) &&
        !ctx.model->findSubmodel(assign.target.name)) {
      if (ctx.reportedUnknown.insert(assign.target.name).second)
        diags_.report(DiagId::UnknownName, assign.target.range, assign.target.name);
    } else {
      reportAssignToNonLocal(assign, target, v);
    }
    return;
  }
  if (assign.indexedTarget) {
    // `x[...] = v`: the written part of `x` is typed like the read `x[...]`;
    // `x` itself keeps its type.
    Value slot = checkExpr(*assign.indexedTarget);
    if (v.type.isError() || slot.type.isError())
      return;
    DeviceOrigin slotOrigin = originOf(slot);
    checkAgainstDeclared(v, slot.type, slotOrigin, assign.indexedTarget->range,
                         "`" + assign.indexedTarget->range.text().str() + "`", false);
    return;
  }
  if (v.type.isError() && !target->annotated) {
    // What reads the name later follows from the error already reported.
    target->value = v;
    return;
  }
  if (v.type.isError() || target->value.type.isError())
    return;
  bool carried = !ctx.loopScopes.empty() && scopeIndex < ctx.loopScopes.back();
  if (carried && reportCarriedTypeChange(assign, *target, v))
    return;
  // Straight-line code re-binds as Python does (`h = cat([h, h], 1)`): the
  // name has the new value's type from here on, unless the user wrote one.
  // A `let` of an enclosing block keeps its type, which the code after the
  // block reads whichever way it went.
  auto changesType = [&](const Type &from, const Type &to) {
    if (!from.isTensor() || !to.isTensor())
      return false;
    Device a = resolve(from.dev), b = resolve(to.dev);
    return from.dtype != to.dtype || !(from.shape == to.shape) ||
           (!a.isVar() && !b.isVar() && a != b);
  };
  if (!carried && !target->annotated && scopeIndex + 1 == ctx.scopes.size() &&
      changesType(target->value.type, v.type)) {
    target->value = v;
    program_.decls.push_back(
        {assign.target.range, assign.target.name, {}, v.type, {}, originOf(v)});
    return;
  }
  unsigned errors = diags_.errorCount();
  checkAgainstDeclared(v, underFacts(target->value.type), originOf(target->value),
                       target->declRange, "`" + assign.target.name + "`", false);
  if (diags_.errorCount() != errors || target->annotated)
    return;
  // From here on the name holds the new value: a later mismatch names it
  // (`cell(h)`), not what the name held before (`zeros(...) @ cuda:1`).
  // Not past an `if` block, after which either value may be there.
  bool onlyLoopsBetween = true;
  for (size_t s = scopeIndex + 1; s < ctx.scopes.size(); ++s)
    if (!llvm::is_contained(ctx.loopScopes, s))
      onlyLoopsBetween = false;
  if (!onlyLoopsBetween)
    return;
  if (carried) { // its type stays the one the loop carries
    target->value.origin = v.origin;
    target->value.expr = v.expr;
  } else {
    target->value = v;
  }
}
