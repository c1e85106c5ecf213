//===- CheckStatements.cpp - Statements of fn bodies ----------------------===//
//
// The dispatch over statement kinds, `let` with its annotation, `return`
// against the fn's declared result, expression statements (a discarded
// `x.to(dev)` warns); `if` is in CheckConditions.cpp, `for` and assignments
// in CheckLoops.cpp, `let (a, b) = ...` in CheckTuples.cpp.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <functional>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Checker::checkStmts(const std::vector<ast::StmtPtr> &body) {
  // What an `if` that returns tells the statements after it ends here.
  size_t facts = fn_->facts.size(), assumed = fn_->assumed.size();
  for (const ast::StmtPtr &s : body)
    if (s)
      checkStmt(*s);
  fn_->facts.resize(facts);
  fn_->assumed.resize(assumed);
}

void Checker::checkStmt(const ast::Stmt &stmt) {
  FnContext &ctx = *fn_;
  switch (stmt.kind()) {
  case ast::Stmt::Kind::Let: {
    auto &let = cast<ast::LetStmt>(stmt);
    letExpr = let.value.get();
    letStmt = &let;
    letName = let.name.name;
    Value v = let.value ? checkExpr(*let.value) : errorValue();
    letExpr = nullptr;
    letStmt = nullptr;
    Local local;
    local.declRange = let.name.range;
    local.isLet = true;
    local.value = v;
    if (let.type) {
      DeviceOrigin declared;
      Type t = underFacts(
          typeFromExpr(*ctx.model, *let.type, /*allowLocalDims=*/true, &declared, let.name.name));
      if (!t.isError()) {
        checkAgainstDeclared(v, t, declared, let.type->range, "`" + let.name.name + "`", false);
        local.value.type = t;
        local.value.origin = declared;
        local.annotated = true;
      }
    }
    ctx.scopes.back()[let.name.name] = local;
    program_.decls.push_back(
        {let.name.range, let.name.name, {}, local.value.type, {}, local.value.origin});
    return;
  }
  case ast::Stmt::Kind::LetTuple:
    checkLetTuple(cast<ast::LetTupleStmt>(stmt));
    return;
  case ast::Stmt::Kind::Assign:
    checkAssign(cast<ast::AssignStmt>(stmt));
    return;
  case ast::Stmt::Kind::Return: {
    auto &ret = cast<ast::ReturnStmt>(stmt);
    if (!ctx.fn)
      return;
    const FnInfo &fn = *ctx.fn;
    if (!ret.value) {
      if (fn.result.kind() != Type::Kind::Void && !fn.result.isError())
        diags_.report(DiagId::MissingReturn, stmt.range, fn.name, fn.result.str())
            .primary("returns no value");
      return;
    }
    Value v = checkExpr(*ret.value);
    if (fn.result.kind() == Type::Kind::Void) {
      diags_.report(DiagId::ReturnWithoutResult, ret.value->range, fn.name)
          .help("declare the result type", {{fn.decl->name.range.after(), ""}},
                Applicability::HasPlaceholders);
      return;
    }
    if (fn.result.isError())
      return;
    if (fn.result.kind() == Type::Kind::Tuple || v.type.kind() == Type::Kind::Tuple) {
      checkReturnedTuple(fn, v);
      return;
    }
    DeviceOrigin declared;
    declared.kind = DeviceOrigin::Kind::Declared;
    declared.range =
        fn.decl->result->device ? fn.decl->result->device->range : fn.decl->result->range;
    declared.message =
        program_.save("`" + fn.name + "` is declared to return " + fn.result.str() + " here");
    checkAgainstDeclared(v, underFacts(fn.result), declared, fn.decl->result->range, fn.name, true);
    return;
  }
  case ast::Stmt::Kind::For:
    checkForLoop(cast<ast::ForStmt>(stmt));
    return;
  case ast::Stmt::Kind::If:
    checkIf(cast<ast::IfStmt>(stmt));
    return;
  case ast::Stmt::Kind::Expr: {
    auto &e = cast<ast::ExprStmt>(stmt);
    if (e.expr) {
      Value v = checkExpr(*e.expr);
      warnIfDiscardedTransfer(e, v);
    }
    return;
  }
  }
}

void Checker::warnIfDiscardedTransfer(const ast::ExprStmt &stmt, const Value &result) {
  // PyTorch's `x.to(dev)` as a statement: nn.Module.to moves the module in
  // place, Tensor.to returns a copy and leaves `x` where it was.
  auto *call = dyn_cast<ast::CallExpr>(stmt.expr.get());
  auto *method = call ? dyn_cast<ast::MemberExpr>(call->callee.get()) : nullptr;
  if (!method || method->member.name != "to" || call->args.size() != 1 || !result.type.isTensor())
    return;
  const ExprInfo &receiver = program_.infoFor(method->base.get());
  if (!receiver.type.isTensor())
    return;
  Device from = resolve(receiver.type.dev), to = resolve(result.type.dev);
  if (from == to)
    return; // W0310 says it already
  std::string name = shortText(method->base->range);
  auto diag = diags_.report(DiagId::DiscardedTransfer, call->range, to.str(), name, from.str());
  diag.primary("the moved tensor is dropped here")
      .label(method->base->range, "still " + resolve(receiver.type).str())
      .note("`Tensor.to` returns a moved copy and leaves the tensor where it was (unlike "
            "`nn.Module.to`, which moves the module itself)");
  if (isa<ast::NameExpr>(method->base.get()))
    diag.help("bind the moved tensor to `" + name + "`",
              {{Range{stmt.range.begin, stmt.range.begin}, "let " + name + " = "}});
}

void Checker::checkAgainstDeclared(const Value &value, const Type &declared,
                                   const DeviceOrigin &declaredOrigin, Range declRange,
                                   llvm::StringRef what, bool isReturn) {
  if (value.type.isError() || declared.isError())
    return;
  Range at = value.range();
  // A value that fails its declared type is not also reported as having no
  // inferable device.
  auto poison = [&] {
    if (value.type.isTensor())
      fn_->unifier.poison(value.type.dev);
  };
  if (declared.kind() == Type::Kind::Tuple && value.type.kind() == Type::Kind::Tuple &&
      declared.arity() == value.type.arity()) {
    for (size_t i = 0; i < declared.arity(); ++i)
      checkAgainstDeclared(tupleElement(value, i), (*declared.elements)[i], declaredOrigin,
                           declRange, what, isReturn);
    return;
  }
  if (!declared.isTensor() || !value.type.isTensor()) {
    // (Tuples of the same arity were compared element by element above.)
    bool ok = (declared.kind() == value.type.kind() && declared.kind() != Type::Kind::Tuple) ||
              (declared.kind() == Type::Kind::Float && value.type.kind() == Type::Kind::Int);
    if (!ok) {
      poison();
      diags_.report(DiagId::TypeMismatch, at, declared.str(), typeStr(value))
          .primary("this is " + typeStr(value))
          .label(declRange, "expected because of this type");
    }
    return;
  }
  if (value.type.dtype != declared.dtype) {
    poison();
    diags_
        .report(DiagId::DTypeMismatch, at, value.type.dtype.prose(), declared.dtype.prose(),
                isReturn ? "return" : what)
        .primary(typeStr(value))
        .label(declRange, "declared " + declared.dtype.prose() + " here")
        .help("convert it with `cast`", castEdits(*value.expr, declared.dtype));
    return;
  }
  if (value.type.shape != declared.shape) {
    poison();
    diags_.report(DiagId::ShapeMismatch, at, declared.shape.str(), value.type.shape.str())
        .primary("this has shape " + value.type.shape.str())
        .label(declRange, "expected because of this type");
    return;
  }
  DeviceOrigin binding;
  if (resolve(value.type.dev).isVar()) {
    binding.kind = DeviceOrigin::Kind::Inferred;
    binding.range = declRange;
    binding.subject = program_.save(declRange.text());
    binding.message = program_.save("the device " + declared.dev.str() + " of `" +
                                    fn_->unifier.creationText(resolve(value.type.dev)).str() +
                                    "` was inferred from the type of " + what.str() + " here");
  }
  if (fn_->unifier.unify(value.type.dev, declared.dev, binding))
    return;
  Device actual = resolve(value.type.dev);
  DeviceOrigin valueOrigin = originOf(value);
  if (isReturn) {
    auto diag = diags_.report(DiagId::ReturnDeviceMismatch, at, actual.str(), what, declared.str());
    diag.primary(typeStr(value)).label(declaredOrigin.range, "declared on " + declared.dev.str());
    if (valueOrigin.isKnown())
      diag.note(valueOrigin.message.str(), valueOrigin.range);
    diag.help("move the result to " + declared.dev.str(), toEdits(*value.expr, declared.dev));
    return;
  }
  if (valueOrigin.kind == DeviceOrigin::Kind::Placed) {
    diags_
        .report(DiagId::PlacementConflict, valueOrigin.range, valueOrigin.subject, actual.str(),
                declared.dev.str())
        .primary("placed on " + actual.str())
        .label(declRange, what.str() + " is declared on " + declared.dev.str())
        .help("remove the placement; the device is then inferred", {{valueOrigin.editRange, ""}});
    return;
  }
  auto diag = diags_.report(DiagId::TypeMismatch, at, declared.str(), typeStr(value));
  diag.primary("this is on " + actual.str()).label(declRange, "expected because of this type");
  if (valueOrigin.isKnown())
    diag.note(valueOrigin.message.str(), valueOrigin.range);
  diag.help("move it to " + declared.dev.str(), toEdits(*value.expr, declared.dev));
}
