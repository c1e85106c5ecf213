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
  namespace P = slot::reshape;
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  std::optional<Shape> target = shapeArg(P::shape, /*allowInfer=*/true);
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
        c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(P::shape), total.str(), target->str())
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
      c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(P::shape), total.str(), target->str())
          .primary(known.str() + " does not divide " + total.str())
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
    target->dims[*inferred] = *q;
  } else if (known != total) {
    c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(P::shape), total.str(), target->str())
        .primary("this shape has " + known.str() + " elements")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, std::move(*target), x->type.dev, *x);
}

Value BuiltinCall::flatten() {
  namespace P = slot::flatten;
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  std::optional<int64_t> s = constInt(P::start_dim, 0), e = constInt(P::end_dim, -1);
  if (!s || !e)
    return failed();
  if (x->type.rank() == 0 && !x->type.shape.hasPack()) {
    Shape one;
    one.dims.push_back(Dim::constant(1));
    return result(x->type.dtype, one, x->type.dev, *x);
  }
  std::optional<unsigned> start = c.normalizeDim(*s, *x, rangeOf(P::start_dim));
  std::optional<unsigned> end = c.normalizeDim(*e, *x, rangeOf(P::end_dim));
  if (!start || !end)
    return failed();
  if (*start > *end) {
    c.diags_.report(DiagId::DimOutOfRange, rangeOf(P::end_dim), *e, x->type.rank())
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
  namespace P = slot::transpose;
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  std::optional<unsigned> d0 = dimArg(P::dim0, *x);
  std::optional<unsigned> d1 = dimArg(P::dim1, *x);
  if (!d0 || !d1)
    return failed();
  Shape shape = x->type.shape;
  std::swap(shape.dims[*d0], shape.dims[*d1]);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::permute() {
  namespace P = slot::permute;
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  const Value &dims = val(P::dims);
  if (dims.type.kind() != Type::Kind::List || !dims.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(P::dims), "a list of dims", c.typeStr(dims));
    return failed();
  }
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range, "permuting a tensor with `...` dims");
    return failed();
  }
  size_t rank = x->type.rank();
  if (dims.type.elements->size() != rank) {
    c.diags_
        .report(DiagId::RankMismatch, rangeOf(P::dims), spec.name, rank, dims.type.elements->size())
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
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(P::dims), "dims", e.str());
      return failed();
    }
    std::optional<unsigned> d = c.normalizeDim(*k, *x, rangeOf(P::dims));
    if (!d)
      return failed();
    if (seen[*d]) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(P::dims), "a permutation of the dims",
                      "dim " + std::to_string(*d) + " twice");
      return failed();
    }
    seen[*d] = true;
    shape.dims.push_back(x->type.shape.dims[*d]);
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::unsqueeze(bool squeeze) {
  namespace P = slot::unsqueeze;
  static_assert(slot::same(P::x, slot::squeeze::x) && slot::same(P::dim, slot::squeeze::dim));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  Shape shape = x->type.shape;
  if (!squeeze) {
    std::optional<unsigned> dim = dimArg(P::dim, *x, /*allowEnd=*/true);
    if (!dim)
      return failed();
    shape.dims.insert(shape.dims.begin() + *dim, Dim::constant(1));
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  if (!has(P::dim)) {
    llvm::erase_if(shape.dims, [](Dim d) { return d.isConstant(1); });
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  std::optional<unsigned> dim = dimArg(P::dim, *x);
  if (!dim)
    return failed();
  if (!shape.dims[*dim].isConstant(1)) {
    c.diags_
        .report(DiagId::ShapeMismatch, rangeOf(P::dim), "a dim of size 1",
                "size " + shape.dims[*dim].str())
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  shape.dims.erase(shape.dims.begin() + *dim);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::concat(bool stack) {
  namespace P = slot::concat;
  static_assert(slot::same(P::tensors, slot::cat::tensors, slot::stack::tensors) &&
                slot::same(P::dim, slot::cat::dim, slot::stack::dim));
  auto *list = llvm::dyn_cast_if_present<ast::ListExpr>(args[P::tensors].expr);
  const Type &listType = val(P::tensors).type;
  bool listValue = !list && listType.kind() == Type::Kind::List && listType.elements &&
                   !listType.elements->empty(); // `cat(chunk(x, 2), 1)`
  if (!listValue && (!list || list->elements.empty())) {
    c.diags_
        .report(DiagId::TypeMismatch, rangeOf(P::tensors), "a list of tensors `[a, b]`",
                c.typeStr(val(P::tensors)))
        .primary("the tensors to join");
    return failed();
  }
  std::vector<Value> items;
  if (listValue) {
    for (const Type &t : *listType.elements) {
      Value v{t, val(P::tensors).origin, args[P::tensors].expr, {}};
      if (!v.type.isTensor()) {
        c.diags_.report(DiagId::ExpectedTensor, rangeOf(P::tensors), spec.name,
                        c.typeStr(val(P::tensors)));
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
  const Value &first = items.front();
  std::optional<unsigned> dim = dimArg(P::dim, first, /*allowEnd=*/stack);
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
  namespace P = slot::embedding;
  const Value *idx = tensor(P::indices), *table = tensor(P::table);
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
  namespace P = slot::gather;
  static_assert(slot::same(P::x, slot::index_select::x) &&
                slot::same(P::dim, slot::index_select::dim) &&
                slot::same(P::index, slot::index_select::index));
  const Value *x = tensor(P::x), *idx = tensor(P::index);
  if (!x || !idx)
    return failed();
  std::optional<unsigned> dim = dimArg(P::dim, *x);
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
  namespace P = slot::split;
  static_assert(slot::same(P::x, slot::chunk::x) && slot::same(P::dim, slot::chunk::dim));
  // The size of each piece (split) or the number of pieces (chunk).
  constexpr size_t kPieces = P::split_size_or_sections;
  static_assert(slot::same(kPieces, slot::chunk::chunks));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  std::optional<unsigned> dim = dimArg(P::dim, *x);
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
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(kPieces), names[kPieces], spec.name)
        .primary(label.str())
        .label(x->range(), c.typeStr(*x));
    return failed();
  };
  llvm::SmallVector<Dim, 4> pieces;
  auto equalPieces = [&](int64_t per) {
    for (int64_t at = 0; at < *known; at += per)
      pieces.push_back(Dim::constant(std::min(per, *known - at)));
  };
  const Value &arg = val(kPieces);
  std::optional<Dim> symbolicSize = !chunk && arg.type.kind() == Type::Kind::Int &&
                                            arg.type.intValue && !arg.type.intValue->asConstant()
                                        ? arg.type.intValue
                                        : std::nullopt;
  if (symbolicSize) {
    // nanoGPT's `qkv.split(n_embd, dim=2)` of `[B, T, 3 * n_embd]`: pieces of
    // a model argument's size, as many as the dim holds for every instance.
    std::optional<Dim> count = size.exactDiv(*symbolicSize);
    std::optional<int64_t> n = count ? count->asConstant() : std::nullopt;
    if (!n || *n < 1 || *n > 64)
      return invalid("the size " + size.str() + " is not a fixed multiple of " +
                     symbolicSize->str() + ": pass the sizes as a list");
    pieces.assign(size_t(*n), *symbolicSize);
  } else if (chunk || arg.type.kind() == Type::Kind::Int) {
    std::optional<int64_t> k = constInt(kPieces, 1);
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
        c.diags_.report(DiagId::ExpectedConstant, rangeOf(kPieces), "a split size", e.str());
        return failed();
      }
      pieces.push_back(*e.intValue);
      total = total + *e.intValue;
    }
    if (total != size)
      return invalid("the sizes add up to " + total.str() + ", not " + size.str() + " (" + dimText +
                     ")");
  } else {
    c.diags_
        .report(DiagId::TypeMismatch, rangeOf(kPieces), "a size or a list of sizes", c.typeStr(arg))
        .primary("`" + names[kPieces].str() + "` of `" + spec.name.str() + "`");
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
  namespace P = slot::pad;
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  std::optional<llvm::StringRef> mode =
      modeArg(P::mode, "constant", {"constant", "reflect", "replicate", "circular"});
  if (!mode)
    return failed();
  const Value &list = val(P::pad);
  if (list.type.kind() != Type::Kind::List || !list.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(P::pad), "a list of sizes", c.typeStr(list))
        .primary("(left, right) pairs from the last dim backwards");
    return failed();
  }
  const std::vector<Type> &sizes = *list.type.elements;
  size_t rank = x->type.rank();
  if (sizes.size() % 2 != 0 || sizes.size() > 2 * rank) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(P::pad), "pad", spec.name)
        .primary("needs (left, right) pairs for at most " + std::to_string(rank) + " dims, found " +
                 std::to_string(sizes.size()) + " sizes")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  if (has(P::value)) {
    if (*mode != "constant") {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(P::value), "value", spec.name)
          .primary("only `mode: \"constant\"` pads with a value");
      return failed();
    }
    if (!c.checkScalarOperand(spec.name, *x, val(P::value)))
      return failed();
  }
  Shape shape = x->type.shape;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Type &e = sizes[k];
    if (e.kind() != Type::Kind::Int || !e.intValue) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(P::pad), "a padding size", e.str());
      return failed();
    }
    Dim &d = shape.dims[rank - 1 - k / 2];
    std::optional<int64_t> amount = e.intValue->asConstant(), extent = d.asConstant();
    if (*mode != "constant" && amount) {
      bool wraps = *mode == "reflect" || *mode == "circular";
      int64_t limit = extent ? (*mode == "reflect" ? *extent - 1 : *extent) : INT64_MAX;
      if (*amount < 0 || (wraps && *amount > limit)) {
        c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(P::pad), "pad", spec.name)
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
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(P::pad), "pad", spec.name)
          .primary("crops a dim below size 0")
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

} // namespace modelc::sema::detail
