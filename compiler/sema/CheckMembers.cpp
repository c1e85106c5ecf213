//===- CheckMembers.cpp - Members and indexing ----------------------------===//
//
// `a.b` on models (state, submodels, fns) and tensors, and subscripts
// `x[i, 1:3, ...]` with steps and negative indices.
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinSlots.h"
#include "sema/ResolveName.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using namespace modelc::sema::detail;

//===----------------------------------------------------------------------===//
// Members and indexing
//===----------------------------------------------------------------------===//

Value Checker::checkMember(const ast::MemberExpr &expr) {
  llvm::StringRef m = expr.member.name;
  if (auto *base = dyn_cast<ast::NameExpr>(expr.base.get())) {
    Resolved r = resolveName(*this, base->name);
    if (r.kind == Resolved::Kind::Import) {
      record(*base, r.value, {}, base->name);
      if (r.value.type.isError())
        return record(expr, errorValue());
      diags_.report(DiagId::TypeMismatch, expr.range, "a value", "model `" + m.str() + "`")
          .primary("a model is instantiated in the model body: `name = " + expr.range.text().str() +
                   "(...)`");
      return record(expr, errorValue());
    }
    // `dtype: torch.bfloat16`, `x.to(torch.float16)`: PyTorch's dtype names.
    if (r.kind == Resolved::Kind::None && base->name == "torch" && dtypeOfTorchName(m)) {
      auto diag = diags_.report(DiagId::UnknownName, base->range, base->name);
      diag.primary("not found in this scope");
      helpWithTorchDTypeName(diag, expr.range.text(), expr.range);
      return record(expr, errorValue());
    }
  }
  Value base = checkExpr(*expr.base);
  if (base.type.isError())
    return record(expr, errorValue());
  if (base.type.kind() == Type::Kind::Model && base.type.instance) {
    const ModelInstance &inst = *base.type.instance;
    Substitution subst = substitutionFor(inst);
    const ast::Expr *built = builtAt(*this, *expr.base);
    if (const StateInfo *s = inst.model->findState(m, subst);
        s && !requirePresent(s->presence, shortText(expr.range), expr.range, &subst, built))
      return record(expr, errorValue(), s->decl->name.range, s->name, s->decl->doc);
    if (const SubmodelInfo *s = inst.model->findSubmodel(m, subst);
        s && !requirePresent(s->presence, shortText(expr.range), expr.range, &subst, built))
      return record(expr, errorValue(), s->decl->name.range, s->name, s->decl->doc);
    if (const StateInfo *s = inst.model->findState(m, subst)) {
      Value v;
      v.type = subst.apply(s->type);
      v.origin = base.origin; // the submodel's placement
      return record(expr, v, s->decl->name.range, s->name, s->decl->doc);
    }
    if (const SubmodelInfo *s = inst.model->findSubmodel(m, subst)) {
      Value v;
      v.type = subst.apply(s->type);
      v.origin = base.origin;
      return record(expr, v, s->decl->name.range, s->name, s->decl->doc);
    }
    diags_.report(DiagId::UnknownMember, expr.member.range, inst.str(), m);
    return record(expr, errorValue());
  }
  if (base.type.isTensor() && m == "T") {
    if (base.type.rank() != 2 || base.type.shape.hasPack()) {
      diags_.report(DiagId::RankMismatch, expr.range, ".T", 2, base.type.rank())
          .primary(typeStr(base))
          .help("use `transpose(x, d0, d1)` for other ranks", {}, Applicability::HasPlaceholders);
      return record(expr, fail(expr, {&base}));
    }
    Value v = base;
    std::swap(v.type.shape.dims[0], v.type.shape.dims[1]);
    return record(expr, v);
  }
  if (base.type.isTensor() && m == "shape")
    return record(expr, tensorShape(expr, base));
  diags_.report(DiagId::UnknownMember, expr.member.range, typeStr(base), m)
      .label(expr.base->range, typeStr(base));
  return record(expr, fail(expr, {&base}));
}

/// `x.shape`, PyTorch's: a tuple of ints, the dims of x's type
/// (`x.shape[0]` of `f32[B, 784]` is `B`), so `zeros([x.shape[0], 8])` and
/// `let (b, t, _) = x.shape` read as ported code does.
Value Checker::tensorShape(const ast::MemberExpr &expr, const Value &tensor) {
  if (tensor.type.shape.hasPack()) {
    diags_.report(DiagId::UnknownMember, expr.member.range, typeStr(tensor), "shape")
        .label(expr.base->range, typeStr(tensor))
        .note("`...` stands for any number of dims, so its `shape` has no fixed length: name the "
              "dims you read in the fn's signature (`x: f32[N, C]`)");
    return fail(expr, {&tensor});
  }
  std::vector<Type> dims;
  for (Dim d : tensor.type.shape.dims)
    dims.push_back(Type::integer(d));
  Value v;
  v.type = Type::tuple(std::move(dims));
  v.expr = &expr;
  return v;
}

const ast::CallExpr *Checker::reductionWithDim(const ast::Expr &expr) const {
  auto *call = dyn_cast<ast::CallExpr>(&expr);
  const ExprInfo *info = call ? program_.typeOf(call) : nullptr;
  if (!info || (info->builtin != "max" && info->builtin != "min"))
    return nullptr;
  static_assert(slot::same(slot::max::dim, slot::min::dim));
  bool hasDim = info->builtinArgs.size() > slot::max::dim && info->builtinArgs[slot::max::dim];
  return hasDim ? call : nullptr;
}

void Checker::reportReductionIndexed(const ast::IndexExpr &expr, const ast::CallExpr &call,
                                     int64_t index) {
  llvm::StringRef name = program_.typeOf(&call)->builtin;
  std::string arg = name == "max" ? "argmax" : "argmin";
  Range subscript{call.range.end, expr.range.end};
  auto diag = diags_.report(DiagId::ReductionNotATuple, subscript, name);
  diag.primary(index == 0 ? "this would take the first row of the values"
                          : "this would take the second row of the values")
      .label(call.range, "the values of the " +
                             std::string(name == "max" ? "largest" : "smallest") +
                             " elements along `dim`");
  if (index == 0) {
    diag.help("the call already gives the values (PyTorch's `.values`)", {{subscript, ""}});
    return;
  }
  Range callee;
  if (auto *n = dyn_cast<ast::NameExpr>(call.callee.get()))
    callee = n->range;
  else if (auto *m = dyn_cast<ast::MemberExpr>(call.callee.get()))
    callee = m->member.range;
  if (!callee.isValid()) {
    diag.help("`" + arg + "` gives the indices");
    return;
  }
  diag.help("`" + arg + "` gives the indices (PyTorch's `.indices`)",
            {{callee, arg}, {subscript, ""}});
}

Value Checker::checkIndex(const ast::IndexExpr &expr) {
  Value base = checkExpr(*expr.base);
  // Check every subscript expression first.
  struct Sub {
    const ast::Slice *slice;
    Value index, begin, end, step;
  };
  std::vector<Sub> subs;
  bool ok = !base.type.isError();
  for (const ast::Slice &s : expr.subscripts) {
    Sub sub{&s, {}, {}, {}, {}};
    auto check = [&](const ast::ExprPtr &e, Value &out) {
      if (!e)
        return;
      out = checkExpr(*e);
      ok &= !out.type.isError();
    };
    check(s.index, sub.index);
    check(s.begin, sub.begin);
    check(s.end, sub.end);
    check(s.step, sub.step);
    subs.push_back(std::move(sub));
  }
  if (!ok)
    return record(expr, fail(expr, {&base}));

  // The one constant subscript of a tuple, a list or a list of submodels.
  auto constantIndex = [&]() -> std::optional<int64_t> {
    if (subs.size() != 1 || subs[0].slice->isSlice ||
        subs[0].index.type.kind() != Type::Kind::Int || !subs[0].index.type.intValue)
      return std::nullopt;
    return subs[0].index.type.intValue->asConstant();
  };
  // `x.max(dim: 1)[0]`, PyTorch's (values, indices)[0]: here it would index
  // the values' first dim.
  if (std::optional<int64_t> i = constantIndex(); i && (*i == 0 || *i == 1))
    if (const ast::CallExpr *call = reductionWithDim(*expr.base)) {
      reportReductionIndexed(expr, *call, *i);
      return record(expr, fail(expr, {&base}));
    }
  // `kernel_size[0]`: one element of a tuple (a tuple model argument, the
  // results of a fn).
  if (base.type.kind() == Type::Kind::Tuple && base.type.elements) {
    std::optional<int64_t> i = constantIndex();
    if (!i) {
      diags_.report(DiagId::ExpectedConstant, expr.range, "tuple index", "a non-constant index")
          .primary("a tuple is indexed by one constant int");
      return record(expr, errorValue());
    }
    int64_t n = int64_t(base.type.arity());
    if (*i < -n || *i >= n) {
      reportTupleIndex(subs[0].slice->range, *i, shortText(expr.base->range), size_t(n),
                       /*negativeToo=*/true);
      return record(expr, errorValue());
    }
    return record(expr, tupleElement(base, size_t(*i < 0 ? *i + n : *i)));
  }
  // `chunk(x, 3, dim: 1)[0]`: one tensor of a list.
  if (base.type.kind() == Type::Kind::List && base.type.elements) {
    std::optional<int64_t> i = constantIndex();
    if (!i) {
      diags_.report(DiagId::ExpectedConstant, expr.range, "list index", "a non-constant index")
          .primary("a list is indexed by one constant int");
      return record(expr, errorValue());
    }
    int64_t n = int64_t(base.type.elements->size());
    if (*i < -n || *i >= n) {
      diags_.report(DiagId::ListIndexOutOfRange, subs[0].slice->range, *i, n)
          .primary("valid indices are " + std::to_string(-n) + " to " + std::to_string(n - 1))
          .label(expr.base->range, typeStr(base));
      return record(expr, errorValue());
    }
    Value v = base;
    v.type = (*base.type.elements)[size_t(*i < 0 ? *i + n : *i)];
    return record(expr, v);
  }
  if (base.type.kind() == Type::Kind::ModelList && base.type.instances) {
    std::optional<int64_t> i = constantIndex();
    if (!i) {
      diags_.report(DiagId::ExpectedConstant, expr.range, "submodel index", "a non-constant index");
      return record(expr, errorValue());
    }
    if (base.type.repeat) {
      // `[layer for _ in 0..n]` with `n` not known here: every layer is the
      // same instance; the index is checked against `n` per instance.
      if (*i < 0) {
        diags_.report(DiagId::UnsupportedFeature, subs[0].slice->range,
                      "a negative index into a list whose length is `" + base.type.repeat->str() +
                          "`");
        return record(expr, errorValue());
      }
      Value v;
      v.type = Type::model(base.type.instances->front());
      v.origin = base.origin;
      return record(expr, v);
    }
    int64_t n = int64_t(base.type.instances->size());
    if (*i < -n || *i >= n) {
      diags_.report(DiagId::DimOutOfRange, subs[0].slice->range, *i, n)
          .primary("this list has " + std::to_string(n) + " submodels");
      return record(expr, errorValue());
    }
    Value v;
    v.type = Type::model((*base.type.instances)[size_t(*i < 0 ? *i + n : *i)]);
    v.origin = base.origin;
    return record(expr, v);
  }
  if (!base.type.isTensor()) {
    diags_.report(DiagId::ExpectedTensor, expr.base->range, "[]", typeStr(base));
    return record(expr, errorValue());
  }
  const Shape &shape = base.type.shape;
  if (shape.hasPack()) {
    diags_.report(DiagId::UnsupportedFeature, expr.range, "indexing a tensor with `...` dims");
    return record(expr, fail(expr, {&base}));
  }
  if (subs.size() > shape.dims.size()) {
    diags_
        .report(DiagId::DimOutOfRange, subs[shape.dims.size()].slice->range,
                int64_t(shape.dims.size()), shape.dims.size())
        .primary("too many subscripts")
        .label(expr.base->range, typeStr(base));
    return record(expr, fail(expr, {&base}));
  }
  auto intOf = [&](const Value &v, Range at) -> std::optional<Dim> {
    if (v.type.kind() != Type::Kind::Int) {
      diags_.report(DiagId::TypeMismatch, at, "int", typeStr(v))
          .primary("tensor subscripts must be ints or slices");
      return std::nullopt;
    }
    if (!v.type.intValue)
      diags_.report(DiagId::ExpectedConstant, at, "subscript", "a value known only at run time");
    return v.type.intValue;
  };
  Shape out;
  for (size_t d = 0; d < subs.size(); ++d) {
    const Sub &sub = subs[d];
    Dim size = shape.dims[d];
    if (!sub.slice->isSlice) {
      if (sub.index.type.isTensor()) {
        diags_.report(DiagId::UnsupportedFeature, sub.slice->range,
                      "indexing with a tensor (use `gather` or `index_select`)");
        return record(expr, fail(expr, {&base}));
      }
      std::optional<Dim> i = intOf(sub.index, sub.slice->range);
      if (!i)
        return record(expr, fail(expr, {&base}));
      // PyTorch's IndexError, where the dims say so for every instance
      // (`x[:, n]` of `f32[B, n]`).
      std::optional<int64_t> past = (*i - size).asConstant(), before = (*i + size).asConstant();
      if ((past && *past >= 0) || (before && *before < 0)) {
        diags_
            .report(DiagId::IndexOutOfRange, sub.slice->range,
                    "`" + sub.slice->range.text().str() + "`", size.str())
            .primary("valid indices are " + (-size).str() + " to " +
                     (size - Dim::constant(1)).str())
            .label(expr.base->range, typeStr(base));
        return record(expr, fail(expr, {&base}));
      }
      continue; // the dim disappears
    }
    auto bound = [&](const ast::ExprPtr &e, const Value &v, Dim dflt) -> std::optional<Dim> {
      if (!e)
        return dflt;
      std::optional<Dim> x = intOf(v, e->range);
      if (!x)
        return std::nullopt;
      if (std::optional<int64_t> c = x->asConstant(); c && *c < 0)
        return size + *x;
      return x;
    };
    std::optional<Dim> b = bound(sub.slice->begin, sub.begin, Dim());
    std::optional<Dim> e = bound(sub.slice->end, sub.end, size);
    std::optional<Dim> s = bound(sub.slice->step, sub.step, Dim::constant(1));
    if (!b || !e || !s)
      return record(expr, fail(expr, {&base}));
    std::optional<int64_t> step = s->asConstant();
    if (!step || *step <= 0) {
      diags_.report(DiagId::ExpectedConstant, sub.slice->step->range, "slice step",
                    "a step that is not a positive constant");
      return record(expr, fail(expr, {&base}));
    }
    std::optional<int64_t> n = size.asConstant(), lo = b->asConstant(), hi = e->asConstant();
    if (n && lo && hi) {
      // Python clamps the bounds into the dim: x[:100] of 10 has 10.
      int64_t from = std::clamp<int64_t>(*lo, 0, *n), to = std::clamp<int64_t>(*hi, 0, *n);
      out.dims.push_back(Dim::constant(to > from ? (to - from + *step - 1) / *step : 0));
      continue;
    }
    out.dims.push_back((*e - *b + Dim::constant(*step - 1)).floorDiv(*step));
  }
  out.dims.append(shape.dims.begin() + subs.size(), shape.dims.end());
  Value v = base;
  v.type.shape = std::move(out);
  return record(expr, v);
}
