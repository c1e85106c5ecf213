//===- GenStatements.cpp - Statements to the mdl dialect ------------------===//
//
// The statements of an inlined fn body: `let`, assignments (indexed
// writes `x[i] = v` included), `return`, `if` on compile-time conditions,
// and `for` loops, unrolled or as an scf.for carrying the re-bound values.
//
//===----------------------------------------------------------------------===//

#include "mlirgen/Generator.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using llvm::dyn_cast;

namespace modelc::mlirgen::detail {

bool Generator::genStmts(const std::vector<ast::StmtPtr> &stmts, Scope &scope) {
  for (const ast::StmtPtr &stmt : stmts) {
    if (failed || scope.returned)
      return !failed;
    if (auto *let = dyn_cast<ast::LetStmt>(stmt.get())) {
      GenValue v = gen(*let->value, scope);
      if (!v.ok())
        return false;
      scope.locals[let->name.name] = v;
    } else if (auto *let = dyn_cast<ast::LetTupleStmt>(stmt.get())) {
      GenValue v = gen(*let->value, scope);
      if (!v.ok())
        return false;
      if (v.kind != GenValue::Kind::Tuple || v.elements.size() != let->names.size()) {
        unsupported(let->value->range, "destructuring this value");
        return false;
      }
      for (size_t i = 0; i < let->names.size(); ++i)
        if (let->names[i].name != "_")
          scope.locals[let->names[i].name] = v.elements[i];
    } else if (auto *assign = dyn_cast<ast::AssignStmt>(stmt.get())) {
      GenValue v = gen(*assign->value, scope);
      if (!v.ok())
        return false;
      if (auto *target = llvm::dyn_cast_if_present<ast::IndexExpr>(assign->indexedTarget.get()))
        v = genIndexedWrite(*target, v, scope);
      if (!v.ok())
        return false;
      scope.locals[assign->target.name] = v;
    } else if (auto *ret = dyn_cast<ast::ReturnStmt>(stmt.get())) {
      if (!ret->value) { // `return` in a fn without a result
        GenValue v;
        v.kind = GenValue::Kind::Void;
        scope.returned = v;
        return true;
      }
      GenValue v = gen(*ret->value, scope);
      if (!v.ok())
        return false;
      scope.returned = v;
    } else if (auto *expr = dyn_cast<ast::ExprStmt>(stmt.get())) {
      if (!gen(*expr->expr, scope).ok())
        return false;
    } else if (auto *branch = dyn_cast<ast::IfStmt>(stmt.get())) {
      // The checker recorded the condition; this instance's arguments
      // decide it, and only the block taken is generated.
      std::optional<bool> taken = program.branchTaken(*branch, scope.frame->subst());
      if (!taken) {
        unsupported(branch->condition ? branch->condition->range : branch->range,
                    "an `if` whose condition this instance's arguments do not decide");
        return false;
      }
      if (!genBlock(*taken ? branch->thenBody : branch->elseBody, scope))
        return false;
    } else if (auto *loop = dyn_cast<ast::ForStmt>(stmt.get()); loop && loop->isRange()) {
      if (!genRangeLoop(*loop, scope))
        return false;
    } else if (auto *loop = dyn_cast<ast::ForStmt>(stmt.get())) {
      GenValue list = gen(*loop->iterable, scope);
      if (!list.ok())
        return false;
      if (list.kind != GenValue::Kind::ModelList) {
        unsupported(loop->iterable->range, "a `for` loop over anything but a list of submodels");
        return false;
      }
      // Unrolled: one copy of the body per submodel.
      llvm::SmallVector<std::string> carried = carriedLocals(loop->body, scope);
      for (ModelFrame *m : list.models) {
        GenValue var;
        var.kind = GenValue::Kind::Model;
        var.model = m;
        if (!genIteration(loop->body, loop->var.name, var, carried, scope))
          return false;
        if (scope.returned)
          break;
      }
    }
  }
  return !failed;
}

bool Generator::genBlock(const std::vector<ast::StmtPtr> &stmts, Scope &scope) {
  // The block's own `let`s end with it; assignments to outer locals stay.
  llvm::StringMap<std::optional<GenValue>> shadowed;
  for (const ast::StmtPtr &stmt : stmts)
    if (auto *let = llvm::dyn_cast_if_present<ast::LetStmt>(stmt.get())) {
      auto it = scope.locals.find(let->name.name);
      shadowed.try_emplace(let->name.name, it == scope.locals.end()
                                               ? std::nullopt
                                               : std::optional<GenValue>(it->second));
    }
  bool ok = genStmts(stmts, scope);
  for (const auto &entry : shadowed) {
    if (entry.getValue())
      scope.locals[entry.getKey()] = *entry.getValue();
    else
      scope.locals.erase(entry.getKey());
  }
  return ok;
}

GenValue Generator::genIndexedWrite(const ast::IndexExpr &target, const GenValue &value,
                                    Scope &scope) {
  GenValue base = gen(*target.base, scope);
  if (!base.ok())
    return {};
  if (base.kind != GenValue::Kind::Tensor || value.kind != GenValue::Kind::Tensor)
    return unsupported(target.range, "writing this value into part of a tensor");
  // `x[i, :, j] = v`: single indices and whole dims (`:`).
  mlir::Location l = loc(target.range);
  llvm::SmallVector<int64_t> dims, sourceShape;
  llvm::SmallVector<mlir::Value> positions;
  RankedTensorType xt = typeOf(base.tensor);
  for (size_t d = 0; d < target.subscripts.size(); ++d) {
    const ast::Slice &sub = target.subscripts[d];
    if (sub.isSlice) {
      if (sub.begin || sub.end || sub.step)
        return unsupported(sub.range, "writing into a slice `a:b` (write whole dims `:` and "
                                      "single indices)");
      continue;
    }
    std::optional<IntOperand> i = intOperand(*sub.index, scope);
    if (!i)
      return {};
    if (i->constant && xt.getDimSize(d) != kDyn &&
        (*i->constant < -xt.getDimSize(d) || *i->constant >= xt.getDimSize(d)))
      return indexOutOfRange(sub.range, *i->constant, xt.getDimSize(d), target.base->range);
    dims.push_back(int64_t(d));
    positions.push_back(indexValue(*i, l));
  }
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      sourceShape.push_back(xt.getDimSize(d));
  mlir::Value source = value.tensor;
  if (typeOf(source).getShape() != llvm::ArrayRef<int64_t>(sourceShape))
    source = mlir::tensor::CastOp::create(b, l, withShape(source, sourceShape), source);
  return GenValue::ofTensor(mlir::mdl::SelectScatterOp::create(
      b, l, xt, base.tensor, source, positions, b.getDenseI64ArrayAttr(dims)));
}

/// The `let` variables of an enclosing scope that `body` re-binds (in nested
/// loops too): a loop carries them from one iteration to the next.
static void collectCarried(const std::vector<ast::StmtPtr> &body, llvm::StringSet<> &out) {
  llvm::StringSet<> bound; // `let`s of this body shadow outer names after them
  for (const ast::StmtPtr &stmt : body) {
    if (auto *let = llvm::dyn_cast_or_null<ast::LetStmt>(stmt.get())) {
      bound.insert(let->name.name);
    } else if (auto *assign = llvm::dyn_cast_or_null<ast::AssignStmt>(stmt.get())) {
      if (!bound.contains(assign->target.name))
        out.insert(assign->target.name);
    } else if (auto *loop = llvm::dyn_cast_or_null<ast::ForStmt>(stmt.get())) {
      llvm::StringSet<> inner;
      collectCarried(loop->body, inner);
      for (const auto &name : inner)
        if (!bound.contains(name.getKey()))
          out.insert(name.getKey());
    }
  }
}

llvm::SmallVector<std::string> Generator::carriedLocals(const std::vector<ast::StmtPtr> &body,
                                                        Scope &scope) {
  llvm::StringSet<> carriedSet;
  collectCarried(body, carriedSet);
  llvm::SmallVector<std::string> carried;
  for (const auto &name : carriedSet)
    if (scope.locals.count(name.getKey()))
      carried.push_back(name.getKey().str());
  llvm::sort(carried);
  return carried;
}

bool Generator::genIteration(const std::vector<ast::StmtPtr> &body, llvm::StringRef var,
                             const GenValue &value, llvm::ArrayRef<std::string> carried,
                             Scope &scope) {
  // Each iteration starts from the locals outside the loop and the carried
  // names' last values: a `let` of the body is new each time and ends with it.
  llvm::StringMap<GenValue> before = scope.locals;
  scope.locals[var] = value;
  if (!genStmts(body, scope))
    return false;
  llvm::StringMap<GenValue> after = std::move(before);
  for (const std::string &name : carried)
    after[name] = scope.locals[name];
  scope.locals = std::move(after);
  return true;
}

bool Generator::genRangeLoop(const ast::ForStmt &loop, Scope &scope) {
  std::optional<IntOperand> lo = intOperand(*loop.iterable, scope);
  std::optional<IntOperand> hi = lo ? intOperand(*loop.rangeEnd, scope) : std::nullopt;
  if (!lo || !hi)
    return false;
  llvm::SmallVector<std::string> carried = carriedLocals(loop.body, scope);
  // The body's own `let`s end with the loop; only the carried names live on.
  llvm::StringMap<GenValue> outer = scope.locals;
  auto restore = [&](llvm::function_ref<GenValue(size_t)> carriedValue) {
    llvm::StringMap<GenValue> after = outer;
    for (size_t i = 0; i < carried.size(); ++i)
      after[carried[i]] = carriedValue(i);
    scope.locals = std::move(after);
  };

  // A few steps known now are unrolled: their shapes stay static and
  // elementwise fusion crosses steps; a longer or run-time range is one loop.
  constexpr int64_t kMaxUnrolledSteps = 16;
  if (lo->constant && hi->constant && *hi->constant - *lo->constant <= kMaxUnrolledSteps) {
    for (int64_t t = *lo->constant; t < *hi->constant && !scope.returned; ++t)
      if (!genIteration(loop.body, loop.var.name, GenValue::ofScalar(double(t), true), carried,
                        scope))
        return false;
    return true;
  }

  mlir::Location l = loc(loop.range);
  llvm::SmallVector<mlir::Value> inits;
  for (const std::string &name : carried) {
    const GenValue &v = scope.locals[name];
    if (v.kind != GenValue::Kind::Tensor) {
      unsupported(loop.range, "re-binding `" + name +
                                  "`, which is not a tensor, in a loop over a run-time range");
      return false;
    }
    inits.push_back(v.tensor);
  }
  mlir::Value lb = indexValue(*lo, l), ub = indexValue(*hi, l);
  mlir::Value step = mlir::arith::ConstantIndexOp::create(b, l, 1);
  // Sizes read inside the body are defined there: not visible after it.
  auto outerDimValues = scope.dimValues;
  bool ok = true;
  auto forOp = mlir::scf::ForOp::create(
      b, l, lb, ub, step, inits,
      [&](mlir::OpBuilder &, mlir::Location, mlir::Value iv, mlir::ValueRange args) {
        for (size_t i = 0; i < carried.size(); ++i)
          scope.locals[carried[i]] = GenValue::ofTensor(args[i]);
        GenValue var;
        var.kind = GenValue::Kind::Index;
        var.index = iv;
        scope.locals[loop.var.name] = var;
        ok = genStmts(loop.body, scope);
        if (ok && scope.returned) {
          unsupported(loop.range, "`return` inside a loop over a run-time range");
          ok = false;
        }
        if (!ok)
          return;
        llvm::SmallVector<mlir::Value> yielded;
        for (size_t i = 0; i < carried.size(); ++i) {
          mlir::Value v = scope.locals[carried[i]].tensor;
          // The checker kept the type; only static and `?` extents may differ.
          if (v.getType() != inits[i].getType())
            v = mlir::tensor::CastOp::create(b, l, inits[i].getType(), v);
          yielded.push_back(v);
        }
        mlir::scf::YieldOp::create(b, l, yielded);
      });
  scope.dimValues = std::move(outerDimValues);
  if (!ok)
    return false;
  restore([&](size_t i) { return GenValue::ofTensor(forOp.getResult(i)); });
  return true;
}

} // namespace modelc::mlirgen::detail
