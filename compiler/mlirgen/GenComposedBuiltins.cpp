//===- GenComposedBuiltins.cpp - Built-ins composed of other mdl ops ------===//
//
// PyTorch's signatures that have no mdl op of their own (split, chunk,
// masked_fill, triu/tril, pad, conv1d, conv_transpose2d, group_norm,
// interpolate): each is built from slices, index_select, where and the
// existing convolution and normalisation ops, so both back ends run it.
//
//===----------------------------------------------------------------------===//

#include "mlirgen/Generator.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>

using llvm::dyn_cast;

namespace modelc::mlirgen::detail {

//===----------------------------------------------------------------------===//
// PyTorch's signatures for ports: each composes existing mdl ops (slices,
// index_select with index vectors built from arange, where), so both back
// ends run it without an op of its own.
//===----------------------------------------------------------------------===//

bool Generator::isComposedBuiltin(llvm::StringRef name) {
  return llvm::is_contained({"split", "chunk", "masked_fill", "triu", "tril", "pad", "conv1d",
                             "conv_transpose2d", "group_norm", "interpolate", "clamp", "clip",
                             "argmax", "argmin"},
                            name);
}

mlir::Value Generator::indexVector(int64_t n, int64_t start, mlir::Attribute device,
                                   mlir::Location l) {
  return mlir::mdl::ArangeOp::create(b, l, tensorType({n}, elementType(ast::DType::I64), device),
                                     mlir::ValueRange{}, b.getF64FloatAttr(double(start)),
                                     b.getF64FloatAttr(1));
}

mlir::Value Generator::scalarLike(double value, mlir::Value like, mlir::Location l) {
  RankedTensorType t = typeOf(like);
  return mlir::mdl::FullOp::create(b, l, tensorType({}, t.getElementType(), t.getEncoding()),
                                   mlir::ValueRange{}, b.getF64FloatAttr(value));
}

/// The broadcast of two operands of a composition (index vectors, weights
/// and the tensors they select from), which have no checked type of their own.
static llvm::SmallVector<int64_t> broadcastShape(llvm::ArrayRef<int64_t> a,
                                                 llvm::ArrayRef<int64_t> c) {
  size_t rank = std::max(a.size(), c.size());
  llvm::SmallVector<int64_t> out(rank, kDyn);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < c.size() ? c[c.size() - 1 - i] : 1;
    int64_t r;
    if (x == 1)
      r = y;
    else if (y == 1)
      r = x;
    else if (x != kDyn)
      r = x;
    else
      r = y;
    out[rank - 1 - i] = r;
  }
  return out;
}

template <typename Op>
mlir::Value Generator::elementwise(mlir::Value lhs, mlir::Value rhs, mlir::Location l) {
  return Op::create(b, l,
                    withShape(lhs, broadcastShape(typeOf(lhs).getShape(), typeOf(rhs).getShape())),
                    lhs, rhs);
}

mlir::Value Generator::compare(llvm::StringRef predicate, mlir::Value lhs, mlir::Value rhs,
                               mlir::Location l) {
  RankedTensorType t = tensorType(broadcastShape(typeOf(lhs).getShape(), typeOf(rhs).getShape()),
                                  elementType(ast::DType::Bool), typeOf(lhs).getEncoding());
  return mlir::mdl::CmpOp::create(b, l, t, b.getStringAttr(predicate), lhs, rhs);
}

mlir::Value Generator::sliceDim(mlir::Value x, int64_t dim, int64_t start, int64_t end,
                                RankedTensorType result, mlir::Location l) {
  int64_t rank = typeOf(x).getRank();
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  llvm::SmallVector<int64_t> starts(rank, 0), ends(rank, kToEnd), steps(rank, 1);
  starts[dim] = start;
  ends[dim] = end;
  return mlir::mdl::SliceOp::create(b, l, result, x, b.getDenseI64ArrayAttr(starts),
                                    b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps),
                                    b.getDenseI64ArrayAttr({}));
}

mlir::Value Generator::selectAlong(mlir::Value x, int64_t dim, mlir::Value index,
                                   mlir::Location l) {
  llvm::SmallVector<int64_t> shape(typeOf(x).getShape());
  shape[dim] = typeOf(index).getDimSize(0);
  return mlir::mdl::IndexSelectOp::create(b, l, withShape(x, shape), x, index,
                                          b.getI64IntegerAttr(dim));
}

mlir::Value Generator::alongDim(mlir::Value vector, int64_t dim, int64_t rank, mlir::Location l) {
  llvm::SmallVector<int64_t> shape = {typeOf(vector).getDimSize(0)};
  shape.append(size_t(rank - 1 - dim), 1);
  return reshape(vector, shape, l);
}

mlir::Value Generator::padDim(mlir::Value x, int64_t dim, int64_t left, int64_t right,
                              llvm::StringRef mode, double value, mlir::Location l) {
  RankedTensorType xt = typeOf(x);
  int64_t size = xt.getDimSize(dim), rank = xt.getRank();
  mlir::Value t = indexVector(size + left + right, -left, xt.getEncoding(), l);
  auto constant = [&](int64_t v) { return scalarLike(double(v), t, l); };
  mlir::Value index;
  if (mode == "circular") {
    index = elementwise<mlir::mdl::RemOp>(t, constant(size), l);
  } else if (mode == "reflect") { // (n-1) - |(n-1) - |t||
    mlir::Value absT = mlir::mdl::AbsOp::create(b, l, t.getType(), t);
    mlir::Value inner = elementwise<mlir::mdl::SubOp>(constant(size - 1), absT, l);
    index = elementwise<mlir::mdl::SubOp>(
        constant(size - 1), mlir::mdl::AbsOp::create(b, l, inner.getType(), inner), l);
  } else { // constant and replicate read the nearest element
    index = elementwise<mlir::mdl::MinOp>(elementwise<mlir::mdl::MaxOp>(t, constant(0), l),
                                          constant(size - 1), l);
  }
  mlir::Value gathered = selectAlong(x, dim, index, l);
  if (mode != "constant" || (left <= 0 && right <= 0))
    return gathered;
  mlir::Value inside = elementwise<mlir::mdl::AndOp>(compare("ge", t, constant(0), l),
                                                     compare("lt", t, constant(size), l), l);
  mlir::Value mask = alongDim(inside, dim, rank, l);
  return mlir::mdl::WhereOp::create(b, l, gathered.getType(), mask, gathered,
                                    scalarLike(value, gathered, l));
}

GenValue Generator::genArgReduce(bool smallest, const BuiltinArgs &args, mlir::Value x,
                                 RankedTensorType result, mlir::Location l) {
  // The smallest position along the dim that holds the extreme value:
  // -max(-where(x == extreme, position, big)).
  namespace P = slot::argmax;
  mlir::Value source = x;
  int64_t dim = 0;
  if (args.has(P::dim)) {
    int64_t d = args.integer(P::dim, 0), rank = typeOf(x).getRank();
    dim = d < 0 ? d + rank : d;
  } else {
    RankedTensorType xt = typeOf(x);
    source = reshape(x, {xt.hasStaticShape() ? xt.getNumElements() : kDyn}, l);
  }
  RankedTensorType st = typeOf(source);
  llvm::SmallVector<int64_t> kept(st.getShape());
  kept[dim] = 1;
  auto dims = b.getDenseI64ArrayAttr({dim});
  mlir::Value extreme;
  if (smallest) { // min = -max(-x)
    mlir::Value negated = mlir::mdl::NegOp::create(b, l, st, source);
    extreme =
        mlir::mdl::NegOp::create(b, l, withShape(st, kept),
                                 mlir::mdl::ReduceMaxOp::create(b, l, withShape(st, kept), negated,
                                                                dims, b.getBoolAttr(true)));
  } else {
    extreme = mlir::mdl::ReduceMaxOp::create(b, l, withShape(st, kept), source, dims,
                                             b.getBoolAttr(true));
  }
  mlir::Value hit = compare("eq", source, extreme, l);
  // A NaN is the extreme, as in PyTorch (max propagates it; it equals
  // nothing): its first position.
  if (mlir::isa<mlir::FloatType>(st.getElementType()))
    hit = elementwise<mlir::mdl::OrOp>(hit, compare("ne", source, source, l), l);
  // i64 positions 0, 1, ... along the dim, shaped to broadcast against it.
  RankedTensorType i64 =
      tensorType({st.getDimSize(dim)}, elementType(ast::DType::I64), st.getEncoding());
  llvm::SmallVector<mlir::Value, 1> count;
  if (st.isDynamicDim(dim))
    count.push_back(mlir::tensor::DimOp::create(b, l, source, dim));
  mlir::Value positions =
      mlir::mdl::ArangeOp::create(b, l, i64, count, b.getF64FloatAttr(0), b.getF64FloatAttr(1));
  llvm::SmallVector<int64_t> along(st.getRank(), 1);
  along[dim] = st.getDimSize(dim);
  positions = reshape(positions, along, l);
  RankedTensorType candidatesType = withShape(i64, st.getShape());
  mlir::Value candidates = mlir::mdl::WhereOp::create(
      b, l, candidatesType, hit, positions, scalarLike(double(int64_t(1) << 62), positions, l));
  mlir::Value negated = mlir::mdl::NegOp::create(b, l, candidatesType, candidates);
  bool keep = args.has(P::dim) && args.integer(P::keepdim, 0) != 0;
  llvm::SmallVector<int64_t> reducedShape;
  for (int64_t d = 0; d < st.getRank(); ++d)
    if (d != dim || keep)
      reducedShape.push_back(d == dim ? 1 : st.getDimSize(d));
  RankedTensorType reduced = withShape(i64, reducedShape);
  mlir::Value first = mlir::mdl::NegOp::create(
      b, l, reduced,
      mlir::mdl::ReduceMaxOp::create(b, l, reduced, negated, dims, b.getBoolAttr(keep)));
  if (reduced.getShape() != result.getShape())
    first = reshape(first, result, l); // `keepdim` without a dim: all ones
  return GenValue::ofTensor(first);
}

GenValue Generator::genComposedBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                                       const BuiltinArgs &args, RankedTensorType result,
                                       Scope &scope) {
  mlir::Location l = loc(call.range);
  static_assert(slot::same(0, slot::split::x, slot::chunk::x, slot::masked_fill::x, slot::triu::x,
                           slot::tril::x, slot::pad::x, slot::conv1d::x, slot::conv_transpose2d::x,
                           slot::group_norm::x, slot::interpolate::x, slot::clamp::x, slot::clip::x,
                           slot::argmax::x, slot::argmin::x));
  mlir::Value x = args.tensor(0);
  if (!x)
    return unsupported(args.range(0), "`" + name + "` on a non-tensor value");
  if (llvm::is_contained({"conv1d", "conv_transpose2d", "group_norm", "interpolate"}, name))
    return genConvLike(name, call, args, result);
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();

  if (name == "split" || name == "chunk") {
    // Consecutive slices, each of the type the checker gave its piece.
    static_assert(slot::same(slot::split::dim, slot::chunk::dim));
    const sema::ExprInfo *info = program.typeOf(&call);
    std::optional<double> d = args.number(slot::split::dim, 0);
    if (!info->type.elements || !d)
      return unsupported(call.range, "`" + name + "` here");
    int64_t dim = *d < 0 ? int64_t(*d) + rank : int64_t(*d);
    GenValue list;
    list.kind = GenValue::Kind::List;
    int64_t offset = 0;
    for (const sema::Type &part : *info->type.elements) {
      std::optional<RankedTensorType> pt = scopedType(part, scope);
      int64_t len = pt ? pt->getDimSize(dim) : kDyn;
      if (len == kDyn)
        return unsupported(call.range,
                           "`" + name + "` of a dim whose size is known only at run time");
      list.elements.push_back(GenValue::ofTensor(sliceDim(x, dim, offset, offset + len, *pt, l)));
      offset += len;
    }
    return list;
  }
  if (name == "clamp" || name == "clip") {
    // min(max(x, lo), hi), PyTorch's order: hi wins where lo > hi.
    namespace P = slot::clamp;
    auto bound = [&](size_t i) {
      mlir::Value t = args.tensor(i);
      return t ? t : broadcastScalar(args[i], x, args.range(i));
    };
    mlir::Value v = x;
    if (args.has(P::min)) {
      mlir::Value lo = bound(P::min);
      v = args.has(P::max) ? elementwise<mlir::mdl::MaxOp>(v, lo, l)
                           : mlir::mdl::MaxOp::create(b, l, result, v, lo).getResult();
    }
    if (args.has(P::max))
      v = mlir::mdl::MinOp::create(b, l, result, v, bound(P::max));
    return GenValue::ofTensor(v);
  }
  if (name == "argmax" || name == "argmin")
    return genArgReduce(name == "argmin", args, x, result, l);
  if (name == "masked_fill") {
    namespace P = slot::masked_fill;
    mlir::Value mask = args.tensor(P::mask);
    if (!mask || !args.has(P::value))
      return unsupported(call.range, "`masked_fill` without a mask tensor");
    mlir::Value fill = args.tensor(P::value);
    if (!fill)
      fill = broadcastScalar(args[P::value], x, args.range(P::value));
    return GenValue::ofTensor(mlir::mdl::WhereOp::create(b, l, result, mask, fill, x));
  }
  if (name == "triu" || name == "tril") {
    // Keep (row i, col j) where j - i >= diagonal (triu) or <= (tril).
    static_assert(slot::same(slot::triu::diagonal, slot::tril::diagonal));
    int64_t h = xt.getDimSize(rank - 2), w = xt.getDimSize(rank - 1);
    std::optional<double> diagonal = args.number(slot::triu::diagonal, 0);
    if (h == kDyn || w == kDyn || !diagonal)
      return unsupported(call.range,
                         "`" + name + "` of a matrix whose size is known only at run time");
    mlir::Value rows = reshape(indexVector(h, 0, xt.getEncoding(), l), {h, 1}, l);
    mlir::Value cols = reshape(indexVector(w, -int64_t(*diagonal), xt.getEncoding(), l), {1, w}, l);
    mlir::Value keep = compare(name == "triu" ? "ge" : "le", cols, rows, l);
    return GenValue::ofTensor(
        mlir::mdl::WhereOp::create(b, l, result, keep, x, scalarLike(0, x, l)));
  }
  if (name == "pad") {
    // One dim at a time, the last first; the last step has the checker's type.
    namespace P = slot::pad;
    std::optional<llvm::SmallVector<int64_t>> sizes = args.intList(P::pad);
    if (!sizes || args[P::pad].kind != GenValue::Kind::List)
      return unsupported(args.range(P::pad), "`pad` with these sizes");
    llvm::StringRef mode = args.string(P::mode, "constant");
    std::optional<double> value = args.number(P::value, 0);
    if (!value)
      return unsupported(args.range(P::value), "`pad` with this value");
    for (size_t k = 0; k + 1 < sizes->size(); k += 2) {
      int64_t dim = rank - 1 - int64_t(k / 2), left = (*sizes)[k], right = (*sizes)[k + 1];
      if (left == 0 && right == 0)
        continue;
      int64_t size = typeOf(x).getDimSize(dim);
      if (size == kDyn)
        return unsupported(call.range, "`pad` of a dim whose size is known only at run time");
      if ((mode == "reflect" && (left >= size || right >= size)) ||
          (mode == "circular" && (left > size || right > size)))
        return unsupported(call.range, "`" + mode + "` padding wider than its dim (size " +
                                           std::to_string(size) + ")");
      x = padDim(x, dim, left, right, mode, *value, l);
    }
    return GenValue::ofTensor(x);
  }
  return unsupported(call.range, "`" + name + "`");
}

mlir::Value Generator::convTransposeInput(mlir::Value x, int64_t dim, int64_t stride, int64_t lead,
                                          int64_t length, mlir::Location l) {
  // Position j of the result holds x[t / stride] when t = j - lead is a
  // non-negative multiple of the stride inside the input, else 0.
  RankedTensorType xt = typeOf(x);
  int64_t size = xt.getDimSize(dim);
  mlir::Value t = indexVector(length, -lead, xt.getEncoding(), l);
  auto constant = [&](int64_t v) { return scalarLike(double(v), t, l); };
  mlir::Value quotient = elementwise<mlir::mdl::DivOp>(t, constant(stride), l);
  mlir::Value valid = elementwise<mlir::mdl::AndOp>(compare("ge", t, constant(0), l),
                                                    compare("lt", quotient, constant(size), l), l);
  if (stride > 1)
    valid = elementwise<mlir::mdl::AndOp>(
        valid, compare("eq", elementwise<mlir::mdl::RemOp>(t, constant(stride), l), constant(0), l),
        l);
  mlir::Value index = elementwise<mlir::mdl::MinOp>(
      elementwise<mlir::mdl::MaxOp>(quotient, constant(0), l), constant(size - 1), l);
  mlir::Value gathered = selectAlong(x, dim, index, l);
  return mlir::mdl::WhereOp::create(b, l, gathered.getType(), alongDim(valid, dim, xt.getRank(), l),
                                    gathered, scalarLike(0, gathered, l));
}

mlir::Value Generator::resampleDim(mlir::Value x, int64_t dim, int64_t out, llvm::StringRef mode,
                                   bool alignCorners, std::optional<double> scaleFactor,
                                   mlir::Location l) {
  RankedTensorType xt = typeOf(x);
  int64_t in = xt.getDimSize(dim), rank = xt.getRank();
  // PyTorch's source coordinates, in float32 as its kernels compute them.
  float scale =
      scaleFactor && *scaleFactor > 0 ? float(1.0 / *scaleFactor) : float(in) / float(out);
  bool linear = mode != "nearest";
  if (linear && alignCorners)
    scale = out > 1 ? float(in - 1) / float(out - 1) : 0.0f;
  RankedTensorType f32 = tensorType({out}, elementType(ast::DType::F32), xt.getEncoding());
  double start = linear && !alignCorners ? 0.5 : 0.0; // (i + 0.5) * scale - 0.5
  mlir::Value position = mlir::mdl::ArangeOp::create(
      b, l, f32, mlir::ValueRange{}, b.getF64FloatAttr(start), b.getF64FloatAttr(1));
  mlir::Value source = elementwise<mlir::mdl::MulOp>(position, scalarLike(scale, position, l), l);
  if (linear && !alignCorners)
    source = elementwise<mlir::mdl::MaxOp>(
        elementwise<mlir::mdl::SubOp>(source, scalarLike(0.5, source, l), l),
        scalarLike(0, source, l), l);
  RankedTensorType i64 = tensorType({out}, elementType(ast::DType::I64), xt.getEncoding());
  mlir::Value low = mlir::mdl::CastOp::create(b, l, i64, source); // floor: source >= 0
  auto last = [&](mlir::Value v) {
    return elementwise<mlir::mdl::MinOp>(v, scalarLike(double(in - 1), v, l), l);
  };
  if (!linear)
    return selectAlong(x, dim, last(low), l);
  mlir::Value high = last(elementwise<mlir::mdl::AddOp>(low, scalarLike(1, low, l), l));
  mlir::Value highWeight =
      elementwise<mlir::mdl::SubOp>(source, mlir::mdl::CastOp::create(b, l, f32, last(low)), l);
  mlir::Value lowWeight =
      elementwise<mlir::mdl::SubOp>(scalarLike(1, highWeight, l), highWeight, l);
  auto weighted = [&](mlir::Value index, mlir::Value weight) {
    mlir::Value w = alongDim(weight, dim, rank, l);
    if (typeOf(w).getElementType() != xt.getElementType())
      w = mlir::mdl::CastOp::create(
          b, l, tensorType(typeOf(w).getShape(), xt.getElementType(), xt.getEncoding()), w);
    return elementwise<mlir::mdl::MulOp>(selectAlong(x, dim, index, l), w, l);
  };
  return elementwise<mlir::mdl::AddOp>(weighted(low, lowWeight), weighted(high, highWeight), l);
}

GenValue Generator::genConvLike(llvm::StringRef name, const ast::CallExpr &call,
                                const BuiltinArgs &args, RankedTensorType result) {
  mlir::Location l = loc(call.range);
  mlir::Value x = args.tensor(0);
  // Unbatched input: a batch of one, dropped again at the end.
  int64_t spatial = name == "conv1d" ? 1 : int64_t(typeOf(x).getRank()) - 2;
  bool unbatched =
      (name == "conv1d" || name == "conv_transpose2d") && typeOf(x).getRank() == spatial + 1;
  RankedTensorType batchedResult = result;
  if (unbatched) {
    llvm::SmallVector<int64_t> batched(typeOf(x).getShape());
    batched.insert(batched.begin(), 1);
    x = reshape(x, batched, l);
    llvm::SmallVector<int64_t> shape(result.getShape());
    shape.insert(shape.begin(), 1);
    batchedResult = withShape(x, shape);
  }
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  mlir::Value out;
  if (name == "conv1d") {
    // [N, C, L] as [N, C, 1, L] through conv2d.
    namespace P = slot::conv1d;
    mlir::Value w = args.tensor(P::weight);
    RankedTensorType wt = typeOf(w);
    mlir::Value x4 = reshape(x, {xt.getDimSize(0), xt.getDimSize(1), 1, xt.getDimSize(2)}, l);
    mlir::Value w4 = reshape(w, {wt.getDimSize(0), wt.getDimSize(1), 1, wt.getDimSize(2)}, l);
    llvm::ArrayRef<int64_t> os = batchedResult.getShape();
    mlir::Value y = mlir::mdl::Conv2dOp::create(
        b, l, withShape(x, {os[0], os[1], 1, os[2]}), x4, w4, args.tensor(P::bias),
        b.getDenseI64ArrayAttr({1, args.ints(P::stride, 1, 1)[0]}),
        b.getDenseI64ArrayAttr({0, args.ints(P::padding, 0, 1)[0]}),
        b.getDenseI64ArrayAttr({1, args.ints(P::dilation, 1, 1)[0]}),
        b.getI64IntegerAttr(args.ints(P::groups, 1, 1)[0]));
    out = reshape(y, batchedResult, l);
  } else if (name == "conv_transpose2d") {
    // Zero-insert and pad the input to as many positions as a stride-1
    // conv2d with the weight's in/out swapped and its kernel flipped needs
    // to give the checker's size: out + dilation * (k - 1).
    namespace P = slot::conv_transpose2d;
    mlir::Value w = args.tensor(P::weight);
    RankedTensorType wt = typeOf(w);
    auto stride = args.ints(P::stride, 1, 2), padding = args.ints(P::padding, 0, 2),
         dilation = args.ints(P::dilation, 1, 2);
    int64_t groups = args.ints(P::groups, 1, 1)[0];
    int64_t kh = wt.getDimSize(2), kw = wt.getDimSize(3);
    for (int i = 0; i < 2; ++i) {
      int64_t in = typeOf(x).getDimSize(2 + i), k = i == 0 ? kh : kw,
              size = batchedResult.getDimSize(2 + i);
      if (in == kDyn || k == kDyn || size == kDyn)
        return unsupported(call.range, "`conv_transpose2d` of an input whose size is known only "
                                       "at run time");
      int64_t lead = dilation[i] * (k - 1) - padding[i];
      x = convTransposeInput(x, 2 + i, stride[i], lead, size + dilation[i] * (k - 1), l);
    }
    int64_t cin = wt.getDimSize(0), coutG = wt.getDimSize(1);
    for (int64_t d : {2, 3}) { // flip the kernel
      int64_t k = wt.getDimSize(d);
      mlir::Value reversed = mlir::mdl::ArangeOp::create(
          b, l, tensorType({k}, elementType(ast::DType::I64), wt.getEncoding()), mlir::ValueRange{},
          b.getF64FloatAttr(double(k - 1)), b.getF64FloatAttr(-1));
      w = selectAlong(w, d, reversed, l);
    }
    // [in, out/g, kh, kw] -> [g, in/g, out/g, kh, kw] -> [g, out/g, in/g, ...] -> [out, in/g, ...]
    w = reshape(w, {groups, cin / groups, coutG, kh, kw}, l);
    w = mlir::mdl::PermuteOp::create(b, l, withShape(w, {groups, coutG, cin / groups, kh, kw}), w,
                                     b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
    w = reshape(w, {groups * coutG, cin / groups, kh, kw}, l);
    out =
        mlir::mdl::Conv2dOp::create(b, l, batchedResult, x, w, args.tensor(P::bias),
                                    b.getDenseI64ArrayAttr({1, 1}), b.getDenseI64ArrayAttr({0, 0}),
                                    b.getDenseI64ArrayAttr(dilation), b.getI64IntegerAttr(groups));
  } else if (name == "group_norm") {
    // [N, C, ...] as [N, G, C/G * ...]: a layer norm over the last dim.
    namespace P = slot::group_norm;
    int64_t groups = args.integer(P::num_groups, 1), channels = xt.getDimSize(1);
    int64_t rest = 1;
    for (int64_t d = 1; d < rank; ++d)
      rest = rest == kDyn || xt.getDimSize(d) == kDyn ? kDyn : rest * xt.getDimSize(d);
    if (rest == kDyn || channels == kDyn)
      return unsupported(call.range,
                         "`group_norm` of channels or positions known only at run time");
    if (groups < 1 || channels % groups != 0)
      return unsupported(call.range, "`group_norm` with " + std::to_string(groups) + " groups of " +
                                         std::to_string(channels) + " channels");
    mlir::Value grouped = reshape(x, {xt.getDimSize(0), groups, rest / groups}, l);
    mlir::Value normed = mlir::mdl::LayerNormOp::create(
        b, l, grouped.getType(), grouped, mlir::Value(), mlir::Value(), b.getI64IntegerAttr(1),
        b.getF64FloatAttr(args.has(P::eps) ? args[P::eps].number : 1e-5));
    out = reshape(normed, result, l);
    for (size_t i : {P::weight, P::bias}) {
      mlir::Value affine = args.tensor(i);
      if (!affine)
        continue;
      mlir::Value perChannel = alongDim(affine, 1, rank, l);
      out = i == P::weight ? elementwise<mlir::mdl::MulOp>(out, perChannel, l)
                           : elementwise<mlir::mdl::AddOp>(out, perChannel, l);
    }
  } else { // interpolate: each spatial dim resampled to the checker's size
    namespace P = slot::interpolate;
    llvm::StringRef mode = args.string(P::mode, "nearest");
    bool alignCorners = args.integer(P::align_corners, 0) != 0;
    for (int64_t k = spatial - 1; k >= 0; --k) { // the last dim first, as PyTorch sums
      std::optional<double> factor;
      if (args.has(P::scale_factor)) {
        const GenValue &s = args[P::scale_factor];
        factor = s.kind == GenValue::Kind::List || s.kind == GenValue::Kind::Tuple
                     ? s.elements[size_t(k)].number
                     : s.number;
      }
      int64_t in = xt.getDimSize(2 + k), target = result.getDimSize(2 + k);
      if (in == kDyn || target == kDyn)
        return unsupported(call.range, "`interpolate` of a size known only at run time");
      if (target == in && !factor)
        continue; // every mode reads position i at i
      x = resampleDim(x, 2 + k, target, mode, alignCorners, factor, l);
    }
    out = x;
  }
  if (unbatched)
    out = reshape(out, result, l);
  return GenValue::ofTensor(out);
}

} // namespace modelc::mlirgen::detail
