//===- CheckTuples.cpp - Several results: `(a, b)`, `let (a, b) = ...` ----===//
//
// A fn declares several results as a tuple type `-> (T, U)` and returns a
// tuple `return (a, b)` (or `return a, b`); its caller takes the tuple apart
// with `let (a, b) = f(x)`. Each element keeps its own device origin, so a
// device error on one result points at that element.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Casting.h"

using namespace modelc;
using namespace modelc::sema;
using llvm::dyn_cast;

namespace {

std::string counted(size_t n, llvm::StringRef noun) {
  return std::to_string(n) + " " + noun.str() + (n == 1 ? "" : "s");
}

} // namespace

Value Checker::checkTuple(const ast::TupleExpr &expr) {
  std::vector<Type> elements;
  std::vector<DeviceOrigin> origins;
  bool ok = true;
  for (const ast::ExprPtr &element : expr.elements) {
    Value v = element ? checkExpr(*element) : errorValue();
    ok &= !v.type.isError();
    if (v.type.kind() == Type::Kind::Tuple) {
      diags_.report(DiagId::UnsupportedFeature, v.range(), "a tuple inside a tuple")
          .primary("this is " + typeStr(v));
      ok = false;
    }
    elements.push_back(v.type);
    origins.push_back(originOf(v));
  }
  if (!ok)
    return record(expr, errorValue());
  Value tuple;
  tuple.type = Type::tuple(std::move(elements));
  tuple.elementOrigins = std::make_shared<const std::vector<DeviceOrigin>>(std::move(origins));
  return record(expr, tuple);
}

Value Checker::tupleElement(const Value &tuple, size_t i) {
  Value element;
  if (tuple.type.kind() != Type::Kind::Tuple || i >= tuple.type.arity())
    return errorValue(tuple.expr);
  element.type = (*tuple.type.elements)[i];
  if (tuple.elementOrigins && i < tuple.elementOrigins->size())
    element.origin = (*tuple.elementOrigins)[i];
  // A written tuple points at its element; a call's result at the call.
  const auto *written = llvm::dyn_cast_or_null<ast::TupleExpr>(tuple.expr);
  element.expr = written && i < written->elements.size() ? written->elements[i].get() : tuple.expr;
  return element;
}

void Checker::checkLetTuple(const ast::LetTupleStmt &let) {
  FnContext &ctx = *fn_;
  Value v = let.value ? checkExpr(*let.value) : errorValue();
  bool usable = !v.type.isError();
  if (usable && v.type.kind() != Type::Kind::Tuple) {
    auto diag = diags_.report(DiagId::DestructureNonTuple, v.range(), typeStr(v));
    diag.primary("this is one value")
        .label(let.namesRange, "binds " + counted(let.names.size(), "name"));
    if (const ast::CallExpr *call = let.value ? reductionWithDim(*let.value) : nullptr) {
      llvm::StringRef name = program_.typeOf(call)->builtin;
      diag.note("`" + name.str() +
                "` with a `dim` gives the values only, not PyTorch's (values, indices)")
          .help("take the values and the indices apart: `let v = " + call->range.text().str() +
                    "` and `let i = arg" + name.str() + "(...)` with the same arguments",
                {}, Applicability::HasPlaceholders);
    }
    usable = false;
  } else if (usable && v.type.arity() != let.names.size()) {
    auto diag = diags_.report(DiagId::DestructureCountMismatch, let.namesRange,
                              counted(let.names.size(), "name"), v.type.arity());
    diag.primary(counted(let.names.size(), "name"))
        .label(v.range(), "this has " + counted(v.type.arity(), "result") + ": " + typeStr(v));
    if (let.names.size() < v.type.arity())
      diag.note("write `_` for a result you do not use");
    usable = false;
  }
  llvm::StringSet<> seen;
  for (size_t i = 0; i < let.names.size(); ++i) {
    const ast::Ident &name = let.names[i];
    if (name.name == "_")
      continue;
    if (!seen.insert(name.name).second)
      diags_.report(DiagId::DuplicateDefinition, name.range, name.name);
    Local local;
    local.declRange = name.range;
    local.isLet = true;
    local.value = usable ? tupleElement(v, i) : errorValue(let.value.get());
    ctx.scopes.back()[name.name] = local;
    program_.decls.push_back({name.range, name.name, {}, local.value.type, {}, local.value.origin});
  }
}

void Checker::checkReturnedTuple(const FnInfo &fn, const Value &value) {
  if (value.type.isError())
    return;
  size_t declared = fn.result.kind() == Type::Kind::Tuple ? fn.result.arity() : 1;
  size_t returned = value.type.kind() == Type::Kind::Tuple ? value.type.arity() : 1;
  const ast::TypeExpr &written = *fn.decl->result;
  if (declared != returned) {
    auto diag = diags_.report(DiagId::ResultCountMismatch, value.range(), fn.name,
                              counted(declared, "result"), returned);
    diag.primary("this is " + typeStr(value))
        .label(written.range, "`" + fn.name + "` declares " + fn.result.str());
    if (returned == 1 && declared > 1)
      diag.note("return one value per result: `return (a, b)`");
    return;
  }
  // Each element against its own declared type, the report at the element.
  for (size_t i = 0; i < declared; ++i) {
    const ast::TypeExpr &elementType = *written.elements[i];
    DeviceOrigin origin = fn.resultElementOrigins[i];
    checkAgainstDeclared(tupleElement(value, i), underFacts((*fn.result.elements)[i]), origin,
                         elementType.range, fn.name, /*isReturn=*/true);
  }
}
