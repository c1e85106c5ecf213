//===- CheckTupleParams.cpp - `kernel_size: (int, int)` model arguments ----===//
//
// PyTorch's `_pair` arguments: a model value parameter declared as a tuple
// of ints takes an int (every element) or a tuple of its arity. Each
// element is a symbol of its own (`kernel_size[0]`), one slot of an
// instance's values, usable in dims and as an int anywhere; the whole is a
// tuple that the 2-D built-ins take as a per-axis pair.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

using namespace modelc;
using namespace modelc::sema;
using llvm::dyn_cast;

namespace {

/// `3` or `-1`.
std::optional<int64_t> intLiteral(const ast::Expr &expr) {
  if (auto *lit = dyn_cast<ast::IntLitExpr>(&expr))
    return lit->value;
  if (auto *neg = dyn_cast<ast::UnaryExpr>(&expr); neg && neg->op == ast::UnaryOp::Neg)
    if (auto *lit = dyn_cast<ast::IntLitExpr>(neg->operand.get()))
      return -lit->value;
  return std::nullopt;
}

std::string expectedText(const ValueParamInfo &param) { return "int or " + param.typeName(); }

} // namespace

void Checker::declareTupleDefault(const ModelInfo &model, const ast::ValueParam &param,
                                  ValueParamInfo &vp) {
  const ast::Expr *given = param.defaultValue.get();
  if (!given)
    return;
  if (std::optional<int64_t> k = intLiteral(*given)) {
    vp.defaultInt = *k; // `stride: (int, int) = 1` is (1, 1)
    return;
  }
  auto mismatch = [&](const ast::Expr &at, const std::string &found) {
    diags_.report(DiagId::TypeMismatch, at.range, expectedText(vp), found)
        .primary("the default of `" + vp.name + "`");
  };
  if (auto *tuple = dyn_cast<ast::TupleExpr>(given)) {
    if (tuple->elements.size() != vp.slotCount()) {
      mismatch(*given, "a tuple of " + std::to_string(tuple->elements.size()));
      return;
    }
    std::vector<int64_t> values;
    for (const ast::ExprPtr &element : tuple->elements) {
      std::optional<int64_t> k = intLiteral(*element);
      if (!k) {
        diags_.report(DiagId::TypeMismatch, element->range, "an int literal", element->range.text())
            .primary("an element of the default of `" + vp.name + "`")
            .note("a default is a constant, or the name of an earlier parameter");
        return;
      }
      values.push_back(*k);
    }
    vp.defaultTuple = std::move(values);
    return;
  }
  if (auto *ref = dyn_cast<ast::NameExpr>(given)) {
    // `stride: (int, int) = kernel_size`: an earlier tuple of its arity, or
    // an earlier int for every element.
    auto earlier = llvm::find_if(model.valueParams,
                                 [&](const ValueParamInfo &e) { return e.name == ref->name; });
    if (earlier == model.valueParams.end()) {
      diags_.report(DiagId::UnknownName, ref->range, ref->name)
          .primary("a default can name only an earlier parameter of `" + model.name + "`");
      return;
    }
    if (earlier->kind != ast::ScalarKind::Int ||
        (earlier->isTuple() && earlier->slotCount() != vp.slotCount())) {
      mismatch(*given, earlier->typeName());
      return;
    }
    vp.defaultParam = unsigned(earlier - model.valueParams.begin());
    return;
  }
  std::string found = "`" + given->range.text().str() + "`";
  if (llvm::isa<ast::FloatLitExpr>(given))
    found = "float";
  else if (llvm::isa<ast::BoolLitExpr>(given))
    found = "bool";
  else if (llvm::isa<ast::StringLitExpr>(given))
    found = "a string";
  mismatch(*given, found);
}

bool Checker::tupleArgument(const ValueParamInfo &param, llvm::StringRef callee,
                            const ast::Expr &arg, const Value &value,
                            llvm::SmallVectorImpl<std::optional<Dim>> &values) {
  unsigned arity = param.slotCount();
  size_t first = values.size();
  auto fail = [&] {
    values.resize(first);
    values.append(arity, std::nullopt);
    return false;
  };
  // The element values: one int for all, or one per element.
  llvm::SmallVector<const Type *, 2> elements;
  if (value.type.kind() == Type::Kind::Int)
    elements.assign(arity, &value.type);
  else if (value.type.kind() == Type::Kind::Tuple && value.type.arity() == arity &&
           llvm::all_of(*value.type.elements,
                        [](const Type &t) { return t.kind() == Type::Kind::Int; }))
    for (const Type &t : *value.type.elements)
      elements.push_back(&t);
  if (elements.empty()) {
    auto diag = diags_.report(DiagId::TypeMismatch, arg.range, expectedText(param), typeStr(value));
    diag.primary("argument `" + param.name + "` of `" + callee.str() + "`");
    if (value.type.kind() == Type::Kind::Tuple && value.type.arity() != arity)
      diag.note("`" + param.name + "` takes " + std::to_string(arity) +
                " ints (or one int for all of them), as PyTorch's `" + param.name + "` does");
    return fail();
  }
  for (const Type *t : elements) {
    if (!t->intValue) {
      diags_.report(DiagId::ExpectedConstant, arg.range, param.name,
                    "a value known only at run time");
      return fail();
    }
    values.push_back(*t->intValue);
  }
  return true;
}

void Checker::reportTupleIndex(Range at, int64_t index, llvm::StringRef what, size_t arity,
                               bool negativeToo) {
  int64_t n = int64_t(arity);
  diags_.report(DiagId::TupleIndexOutOfRange, at, index, what, n)
      .primary("valid indices are " + std::to_string(negativeToo ? -n : 0) + " to " +
               std::to_string(n - 1));
}

std::optional<Dim> Checker::tupleElementDim(const ModelInfo &model, const ast::DimExpr &dim) {
  auto param =
      llvm::find_if(model.valueParams, [&](const ValueParamInfo &p) { return p.name == dim.name; });
  if (param == model.valueParams.end()) {
    diags_.report(DiagId::UnknownName, dim.range, dim.name)
        .primary("not a tuple parameter of `" + model.name + "`");
    return std::nullopt;
  }
  if (!param->isTuple()) {
    diags_.report(DiagId::TypeMismatch, dim.range, "a tuple", param->typeName())
        .primary("`" + param->name + "` is one value; only a tuple parameter has elements");
    return std::nullopt;
  }
  if (dim.value < 0 || dim.value >= int64_t(param->slotCount())) {
    reportTupleIndex(dim.range, dim.value, param->name, param->slotCount(), /*negativeToo=*/false);
    return std::nullopt;
  }
  return Dim::atom(param->slotAtom(unsigned(dim.value)));
}
