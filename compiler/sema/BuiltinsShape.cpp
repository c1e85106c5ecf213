//===- BuiltinsShape.cpp - Shape and indexing built-ins -------------------===//
//
// Typing rules of the built-ins that rearrange or select elements:
// reshape, flatten, transpose, permute, unsqueeze/squeeze, concat/cat,
// stack, split/chunk, pad, embedding, gather, index_select.
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinCall.h"

#include "llvm/Support/Casting.h"

using llvm::dyn_cast;

namespace modelc::sema::detail {

Value BuiltinCall::reshape() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<Shape> target = shapeArg(1, /*allowInfer=*/true);
  if (!target)
    return failed();
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range, "reshaping a tensor with `...` dims");
    return failed();
  }
  Dim total = x->type.shape.numElements();
  Dim known = Dim::constant(1);
  std::optional<size_t> inferred;
  for (size_t k = 0; k < target->dims.size(); ++k) {
    if (target->dims[k].isConstant(-1)) {
      if (inferred) {
        c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(1), total.str(), target->str())
            .primary("only one dimension can be -1");
        return failed();
      }
      inferred = k;
      continue;
    }
    known = known * target->dims[k];
  }
  if (inferred) {
    std::optional<Dim> q = total.exactDiv(known);
    if (!q || known.isConstant(0)) {
      c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(1), total.str(), target->str())
          .primary(known.str() + " does not divide " + total.str())
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
    target->dims[*inferred] = *q;
  } else if (known != total) {
    c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(1), total.str(), target->str())
        .primary("this shape has " + known.str() + " elements")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, std::move(*target), x->type.dev, *x);
}

Value BuiltinCall::flatten() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<int64_t> s = constInt(1, 0), e = constInt(2, -1);
  if (!s || !e)
    return failed();
  if (x->type.rank() == 0 && !x->type.shape.hasPack()) {
    Shape one;
    one.dims.push_back(Dim::constant(1));
    return result(x->type.dtype, one, x->type.dev, *x);
  }
  std::optional<unsigned> start = c.normalizeDim(*s, *x, rangeOf(1));
  std::optional<unsigned> end = c.normalizeDim(*e, *x, rangeOf(2));
  if (!start || !end)
    return failed();
  if (*start > *end) {
    c.diags_.report(DiagId::DimOutOfRange, rangeOf(2), *e, x->type.rank())
        .primary("`end_dim` comes before `start_dim`");
    return failed();
  }
  Shape shape;
  shape.pack = x->type.shape.pack;
  const auto &dims = x->type.shape.dims;
  Dim product = Dim::constant(1);
  for (unsigned k = 0; k < dims.size(); ++k) {
    if (k < *start || k > *end) {
      shape.dims.push_back(dims[k]);
      continue;
    }
    product = product * dims[k];
    if (k == *end)
      shape.dims.push_back(product);
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::transpose() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<int64_t> a = constInt(1, 0), b = constInt(2, 0);
  if (!a || !b)
    return failed();
  std::optional<unsigned> d0 = c.normalizeDim(*a, *x, rangeOf(1));
  std::optional<unsigned> d1 = c.normalizeDim(*b, *x, rangeOf(2));
  if (!d0 || !d1)
    return failed();
  Shape shape = x->type.shape;
  std::swap(shape.dims[*d0], shape.dims[*d1]);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::permute() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  const Value &dims = val(1);
  if (dims.type.kind() != Type::Kind::List || !dims.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a list of dims", c.typeStr(dims));
    return failed();
  }
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range, "permuting a tensor with `...` dims");
    return failed();
  }
  size_t rank = x->type.rank();
  if (dims.type.elements->size() != rank) {
    c.diags_.report(DiagId::RankMismatch, rangeOf(1), spec.name, rank, dims.type.elements->size())
        .primary("needs one entry per dim of " + c.typeStr(*x));
    return failed();
  }
  Shape shape;
  std::vector<bool> seen(rank, false);
  for (const Type &e : *dims.type.elements) {
    std::optional<int64_t> k;
    if (e.kind() == Type::Kind::Int && e.intValue)
      k = e.intValue->asConstant();
    if (!k) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "dims", e.str());
      return failed();
    }
    std::optional<unsigned> d = c.normalizeDim(*k, *x, rangeOf(1));
    if (!d)
      return failed();
    if (seen[*d]) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a permutation of the dims",
                      "dim " + std::to_string(*d) + " twice");
      return failed();
    }
    seen[*d] = true;
    shape.dims.push_back(x->type.shape.dims[*d]);
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::unsqueeze(bool squeeze) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  Shape shape = x->type.shape;
  if (!squeeze) {
    std::optional<int64_t> d = constInt(1, 0);
    if (!d)
      return failed();
    std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1), /*allowEnd=*/true);
    if (!dim)
      return failed();
    shape.dims.insert(shape.dims.begin() + *dim, Dim::constant(1));
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  if (!has(1)) {
    llvm::erase_if(shape.dims, [](Dim d) { return d.isConstant(1); });
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  std::optional<int64_t> d = constInt(1, 0);
  if (!d)
    return failed();
  std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1));
  if (!dim)
    return failed();
  if (!shape.dims[*dim].isConstant(1)) {
    c.diags_
        .report(DiagId::ShapeMismatch, rangeOf(1), "a dim of size 1",
                "size " + shape.dims[*dim].str())
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  shape.dims.erase(shape.dims.begin() + *dim);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::concat(bool stack) {
  auto *list = llvm::dyn_cast_if_present<ast::ListExpr>(args[0].expr);
  const Type &listType = val(0).type;
  bool listValue = !list && listType.kind() == Type::Kind::List && listType.elements &&
                   !listType.elements->empty(); // `cat(chunk(x, 2), 1)`
  if (!listValue && (!list || list->elements.empty())) {
    c.diags_
        .report(DiagId::TypeMismatch, rangeOf(0), "a list of tensors `[a, b]`", c.typeStr(val(0)))
        .primary("the tensors to join");
    return failed();
  }
  std::vector<Value> items;
  if (listValue) {
    for (const Type &t : *listType.elements) {
      Value v{t, val(0).origin, args[0].expr, {}};
      if (!v.type.isTensor()) {
        c.diags_.report(DiagId::ExpectedTensor, rangeOf(0), spec.name, c.typeStr(val(0)));
        return failed();
      }
      items.push_back(v);
    }
  }
  static const std::vector<ast::ExprPtr> kNoElements;
  for (const ast::ExprPtr &e : listValue ? kNoElements : list->elements) {
    const ExprInfo *info = c.program_.typeOf(e.get());
    Value v{info ? info->type : Type::error(), info ? info->origin : DeviceOrigin(), e.get(), {}};
    if (!v.type.isTensor()) {
      c.diags_.report(DiagId::ExpectedTensor, e->range, spec.name, c.typeStr(v));
      return failed();
    }
    items.push_back(v);
  }
  std::optional<int64_t> d = constInt(1, 0);
  if (!d)
    return failed();
  const Value &first = items.front();
  std::optional<unsigned> dim = c.normalizeDim(*d, first, rangeOf(1), /*allowEnd=*/stack);
  if (!dim)
    return failed();
  llvm::SmallVector<const Value *, 4> operands;
  for (const Value &v : items) {
    operands.push_back(&v);
    if (!c.requireSameDType(spec.name, first, v))
      return failed();
  }
  std::optional<Device> dev = devices(operands);
  if (!dev)
    return failed();
  Shape shape = first.type.shape;
  Dim total;
  for (size_t k = 0; k < items.size(); ++k) {
    const Shape &s = items[k].type.shape;
    Shape expected = first.type.shape;
    if (!stack && s.dims.size() == expected.dims.size())
      expected.dims[*dim] = s.dims[*dim];
    if (s != expected) {
      c.diags_
          .report(DiagId::ConcatMismatch, items[k].range(), spec.name, k, s.str(), expected.str())
          .primary(c.typeStr(items[k]))
          .label(first.range(), c.typeStr(first));
      return failed();
    }
    if (!stack)
      total = total + s.dims[*dim];
  }
  if (stack)
    shape.dims.insert(shape.dims.begin() + *dim, Dim::constant(int64_t(items.size())));
  else
    shape.dims[*dim] = total;
  return result(first.type.dtype, std::move(shape), *dev, first);
}

Value BuiltinCall::embedding() {
  const Value *idx = tensor(0), *table = tensor(1);
  if (!idx || !table)
    return failed();
  if (!integerIndex(*idx))
    return failed();
  std::optional<Device> dev = devices({idx, table});
  if (!dev)
    return failed();
  if (table->type.rank() != 2 || table->type.shape.hasPack()) {
    c.diags_
        .report(DiagId::RankMismatch, table->range(), spec.name, "2 ([num, dim])",
                table->type.rank())
        .primary(c.typeStr(*table));
    return failed();
  }
  Shape shape = idx->type.shape;
  shape.dims.push_back(table->type.shape.dims[1]);
  return result(table->type.dtype, std::move(shape), *dev, *table);
}

Value BuiltinCall::gatherLike(bool indexSelect) {
  const Value *x = tensor(0), *idx = tensor(2);
  if (!x || !idx)
    return failed();
  std::optional<int64_t> d = constInt(1, 0);
  if (!d)
    return failed();
  std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1));
  if (!dim || !integerIndex(*idx))
    return failed();
  std::optional<Device> dev = devices({x, idx});
  if (!dev)
    return failed();
  size_t wantRank = indexSelect ? 1 : x->type.rank();
  if (idx->type.rank() != wantRank ||
      idx->type.shape.hasPack() != (!indexSelect && x->type.shape.hasPack())) {
    c.diags_.report(DiagId::RankMismatch, idx->range(), spec.name, wantRank, idx->type.rank())
        .primary(c.typeStr(*idx))
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  Shape shape = indexSelect ? x->type.shape : idx->type.shape;
  if (indexSelect)
    shape.dims[*dim] = idx->type.shape.dims[0];
  return result(x->type.dtype, std::move(shape), *dev, *x);
}

/// torch.split / torch.chunk: a list of tensors along `dim`. A chunk holds
/// ceil(size / chunks) (the last one less, so there may be fewer chunks);
/// a symbolic size splits only into equal chunks that divide it exactly.
Value BuiltinCall::split(bool chunk) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<int64_t> d = constInt(2, 0);
  if (!d)
    return failed();
  std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(2));
  if (!dim)
    return failed();
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range,
                    "`" + spec.name.str() + "` of a tensor with `...` dims");
    return failed();
  }
  Dim size = x->type.shape.dims[*dim];
  std::optional<int64_t> known = size.asConstant();
  std::string dimText = "dim " + std::to_string(*dim) + " of size " + size.str();
  auto invalid = [&](llvm::StringRef label) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), names[1], spec.name)
        .primary(label.str())
        .label(x->range(), c.typeStr(*x));
    return failed();
  };
  llvm::SmallVector<Dim, 4> pieces;
  auto equalPieces = [&](int64_t per) {
    for (int64_t at = 0; at < *known; at += per)
      pieces.push_back(Dim::constant(std::min(per, *known - at)));
  };
  const Value &arg = val(1);
  if (chunk || arg.type.kind() == Type::Kind::Int) {
    std::optional<int64_t> k = constInt(1, 1);
    if (!k)
      return failed();
    if (*k < 1)
      return invalid(chunk ? "at least one chunk" : "a split size of at least 1");
    if (known) {
      equalPieces(chunk ? std::max<int64_t>(1, (*known + *k - 1) / *k) : *k);
    } else if (std::optional<Dim> q = chunk ? size.exactDiv(Dim::constant(*k)) : std::nullopt) {
      pieces.assign(size_t(*k), *q);
    } else {
      return invalid(chunk ? "does not divide the size " + size.str() + " (known only at run time)"
                           : "the size " + size.str() +
                                 " is known only at run time: pass the sizes as a list");
    }
  } else if (arg.type.kind() == Type::Kind::List && arg.type.elements) {
    Dim total;
    for (const Type &e : *arg.type.elements) {
      std::optional<int64_t> k = e.intValue ? e.intValue->asConstant() : std::nullopt;
      if (e.kind() != Type::Kind::Int || !e.intValue || (k && *k < 0)) {
        c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "a split size", e.str());
        return failed();
      }
      pieces.push_back(*e.intValue);
      total = total + *e.intValue;
    }
    if (total != size)
      return invalid("the sizes add up to " + total.str() + ", not " + size.str() + " (" + dimText +
                     ")");
  } else {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a size or a list of sizes", c.typeStr(arg))
        .primary("`" + names[1].str() + "` of `" + spec.name.str() + "`");
    return failed();
  }
  std::vector<Type> parts;
  for (Dim piece : pieces) {
    Shape shape = x->type.shape;
    shape.dims[*dim] = piece;
    parts.push_back(Type::tensor(x->type.dtype, std::move(shape), x->type.dev));
  }
  Value v;
  v.type = Type::list(std::move(parts));
  v.origin = c.originOf(*x);
  return v;
}

/// torch.nn.functional.pad: `pad` lists (left, right) pairs from the last
/// dim backwards; constant padding may be negative (it crops).
Value BuiltinCall::pad() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<llvm::StringRef> mode =
      modeArg(2, "constant", {"constant", "reflect", "replicate", "circular"});
  if (!mode)
    return failed();
  const Value &list = val(1);
  if (list.type.kind() != Type::Kind::List || !list.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a list of sizes", c.typeStr(list))
        .primary("(left, right) pairs from the last dim backwards");
    return failed();
  }
  const std::vector<Type> &sizes = *list.type.elements;
  size_t rank = x->type.rank();
  if (sizes.size() % 2 != 0 || sizes.size() > 2 * rank) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "pad", spec.name)
        .primary("needs (left, right) pairs for at most " + std::to_string(rank) + " dims, found " +
                 std::to_string(sizes.size()) + " sizes")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  if (has(3)) {
    if (*mode != "constant") {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(3), "value", spec.name)
          .primary("only `mode: \"constant\"` pads with a value");
      return failed();
    }
    if (!c.checkScalarOperand(spec.name, *x, val(3)))
      return failed();
  }
  Shape shape = x->type.shape;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Type &e = sizes[k];
    if (e.kind() != Type::Kind::Int || !e.intValue) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "a padding size", e.str());
      return failed();
    }
    Dim &d = shape.dims[rank - 1 - k / 2];
    std::optional<int64_t> amount = e.intValue->asConstant(), extent = d.asConstant();
    if (*mode != "constant" && amount) {
      bool wraps = *mode == "reflect" || *mode == "circular";
      int64_t limit = extent ? (*mode == "reflect" ? *extent - 1 : *extent) : INT64_MAX;
      if (*amount < 0 || (wraps && *amount > limit)) {
        c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "pad", spec.name)
            .primary("`" + mode->str() + "` padding of " + std::to_string(*amount) +
                     " on a dim of size " + d.str() + " (it takes 0 to " +
                     (limit == INT64_MAX ? std::string("the size") : std::to_string(limit)) + ")")
            .label(x->range(), c.typeStr(*x));
        return failed();
      }
    }
    // Symbolic reflect/circular widths are checked when the model is run.
    d = d + *e.intValue;
    if (std::optional<int64_t> out = d.asConstant(); out && *out < 0) {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "pad", spec.name)
          .primary("crops a dim below size 0")
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

} // namespace modelc::sema::detail
