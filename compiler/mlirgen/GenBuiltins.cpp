//===- GenBuiltins.cpp - Built-in calls to mdl ops ------------------------===//
//
// One mdl op (or a short sequence) per built-in, with the arguments the
// checker bound to the built-in's parameters.
//
//===----------------------------------------------------------------------===//

#include "mlirgen/Generator.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>

using llvm::dyn_cast;

namespace modelc::mlirgen::detail {

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

mlir::Value BuiltinArgs::tensor(size_t slot) const {
  return has(slot) && values[slot]->kind == GenValue::Kind::Tensor ? values[slot]->tensor
                                                                   : mlir::Value();
}

std::optional<double> BuiltinArgs::number(size_t slot, double dflt) const {
  if (!has(slot))
    return dflt;
  if (values[slot]->kind != GenValue::Kind::Scalar)
    return std::nullopt;
  return values[slot]->number;
}

int64_t BuiltinArgs::integer(size_t slot, int64_t dflt) const {
  return has(slot) && values[slot]->kind == GenValue::Kind::Scalar ? int64_t(values[slot]->number)
                                                                   : dflt;
}

llvm::SmallVector<int64_t, 2> BuiltinArgs::ints(size_t slot, int64_t dflt, size_t n) const {
  llvm::SmallVector<int64_t, 2> out(n, dflt);
  if (!has(slot))
    return out;
  const GenValue &v = *values[slot];
  bool several = v.kind == GenValue::Kind::List || v.kind == GenValue::Kind::Tuple;
  for (size_t k = 0; k < n; ++k)
    out[k] = int64_t(several && k < v.elements.size() ? v.elements[k].number : v.number);
  return out;
}

std::optional<llvm::SmallVector<int64_t>> BuiltinArgs::intList(size_t slot) const {
  if (!has(slot))
    return std::nullopt;
  const GenValue &v = *values[slot];
  llvm::SmallVector<int64_t> out;
  if (v.kind == GenValue::Kind::Scalar) {
    out.push_back(int64_t(v.number));
    return out;
  }
  if (v.kind != GenValue::Kind::List && v.kind != GenValue::Kind::Tuple)
    return std::nullopt;
  for (const GenValue &e : v.elements) {
    if (e.kind != GenValue::Kind::Scalar)
      return std::nullopt;
    out.push_back(int64_t(e.number));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Compositions
//===----------------------------------------------------------------------===//

mlir::Value Generator::adaptiveAvgPoolByWindows(mlir::Value x, RankedTensorType result,
                                                mlir::Location l) {
  // PyTorch's windows: output i averages rows floor(i*H/OH) to ceil((i+1)*H/OH).
  RankedTensorType xt = typeOf(x);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2), w = xt.getDimSize(3);
  int64_t outH = result.getDimSize(2), outW = result.getDimSize(3);
  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  auto window = [](int64_t i, int64_t in, int64_t out) {
    return std::pair<int64_t, int64_t>{i * in / out, ((i + 1) * in + out - 1) / out};
  };
  llvm::SmallVector<mlir::Value> rows;
  for (int64_t i = 0; i < outH; ++i) {
    auto [top, bottom] = window(i, h, outH);
    llvm::SmallVector<mlir::Value> cells;
    for (int64_t j = 0; j < outW; ++j) {
      auto [left, right] = window(j, w, outW);
      mlir::Value cell = mlir::mdl::SliceOp::create(
          b, l, withShape(x, {n, c, bottom - top, right - left}), x,
          b.getDenseI64ArrayAttr({0, 0, top, left}),
          b.getDenseI64ArrayAttr({kAll, kAll, bottom, right}), b.getDenseI64ArrayAttr({1, 1, 1, 1}),
          b.getDenseI64ArrayAttr({}));
      cells.push_back(mlir::mdl::MeanOp::create(b, l, withShape(x, {n, c, 1, 1}), cell,
                                                b.getDenseI64ArrayAttr({2, 3}),
                                                b.getBoolAttr(true)));
    }
    rows.push_back(mlir::mdl::ConcatOp::create(b, l, withShape(x, {n, c, 1, outW}), cells,
                                               b.getI64IntegerAttr(3)));
  }
  return mlir::mdl::ConcatOp::create(b, l, result, rows, b.getI64IntegerAttr(2));
}

mlir::Value Generator::reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape, mlir::Location l) {
  return reshape(x, withShape(x, shape), l);
}

/// `type` with a leading dim of 1: a batch of one.
static RankedTensorType batchOfOne(RankedTensorType type) {
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin(), 1);
  return RankedTensorType::get(shape, type.getElementType(), type.getEncoding());
}

GenValue Generator::genSpatial(llvm::StringRef name, const ast::CallExpr &call,
                               const BuiltinArgs &args, mlir::Value x, RankedTensorType result) {
  mlir::Location l = loc(call.range);
  if (name == "conv2d") {
    namespace P = slot::conv2d;
    mlir::Value w = args.tensor(P::weight);
    if (!w)
      return unsupported(call.range, "`conv2d` on non-tensors");
    return GenValue::ofTensor(
        mlir::mdl::Conv2dOp::create(b, l, result, x, w, args.tensor(P::bias),
                                    b.getDenseI64ArrayAttr(args.ints(P::stride, 1, 2)),
                                    b.getDenseI64ArrayAttr(args.ints(P::padding, 0, 2)),
                                    b.getDenseI64ArrayAttr(args.ints(P::dilation, 1, 2)),
                                    b.getI64IntegerAttr(args.integer(P::groups, 1))));
  }
  if (name == "max_pool2d" || name == "avg_pool2d") {
    namespace P = slot::max_pool2d;
    static_assert(slot::same(P::kernel_size, slot::avg_pool2d::kernel_size) &&
                  slot::same(P::stride, slot::avg_pool2d::stride) &&
                  slot::same(P::padding, slot::avg_pool2d::padding));
    auto kernel = args.ints(P::kernel_size, 1, 2);
    auto k = b.getDenseI64ArrayAttr(kernel),
         s = b.getDenseI64ArrayAttr(args.has(P::stride) ? args.ints(P::stride, 1, 2) : kernel),
         p = b.getDenseI64ArrayAttr(args.ints(P::padding, 0, 2));
    if (name == "max_pool2d")
      return GenValue::ofTensor(mlir::mdl::MaxPool2dOp::create(b, l, result, x, k, s, p));
    return GenValue::ofTensor(mlir::mdl::AvgPool2dOp::create(b, l, result, x, k, s, p));
  }
  // adaptive_avg_pool2d to the checker's [outH, outW].
  RankedTensorType xt = typeOf(x);
  int64_t h = xt.getDimSize(2), w = xt.getDimSize(3);
  int64_t outH = result.getDimSize(2), outW = result.getDimSize(3);
  bool global = outH == 1 && outW == 1;
  bool divides = h != kDyn && w != kDyn && outH > 0 && outW > 0 && h % outH == 0 && w % outW == 0;
  if (global || divides)
    return GenValue::ofTensor(mlir::mdl::AdaptiveAvgPool2dOp::create(b, l, result, x));
  if (h == kDyn || w == kDyn || outH < 1 || outW < 1)
    return unsupported(call.range, "`adaptive_avg_pool2d` of an input whose size is known only "
                                   "at run time, to an output that does not divide it");
  return GenValue::ofTensor(adaptiveAvgPoolByWindows(x, result, l));
}

//===----------------------------------------------------------------------===//
// Built-ins
//===----------------------------------------------------------------------===//

/// The groups of a reshape between two of the checker's tensor types that
/// only merges or splits dims: the sizes of consecutive groups of the
/// higher-rank type's dims whose product is each dim of the other (dims
/// compared as polynomials: `C*H*W` is the group of `C`, `H` and `W`), static
/// 1s joining the group before them; nullopt when no such grouping exists.
static std::optional<llvm::SmallVector<int64_t>> reshapeGroups(const sema::Type &from,
                                                               const sema::Type &to) {
  if (!from.isTensor() || !to.isTensor() || from.shape.hasPack() || to.shape.hasPack() ||
      from.shape.dims.size() == to.shape.dims.size())
    return std::nullopt;
  bool expanding = to.shape.dims.size() > from.shape.dims.size();
  llvm::ArrayRef<sema::Dim> wide = expanding ? to.shape.dims : from.shape.dims;
  llvm::ArrayRef<sema::Dim> narrow = expanding ? from.shape.dims : to.shape.dims;
  llvm::SmallVector<int64_t> groups;
  size_t next = 0;
  for (sema::Dim target : narrow) {
    if (next >= wide.size())
      return std::nullopt;
    sema::Dim product = wide[next++];
    int64_t size = 1;
    while (product != target && next < wide.size()) {
      product = product * wide[next++];
      ++size;
    }
    if (product != target)
      return std::nullopt;
    groups.push_back(size);
  }
  for (; next < wide.size(); ++next) { // trailing 1s join the last group
    if (!wide[next].isConstant(1) || groups.empty())
      return std::nullopt;
    ++groups.back();
  }
  return groups;
}

GenValue Generator::genBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                               const GenValue *receiver, Scope &scope,
                               std::optional<sema::Device> placement) {
  // The arguments go to the parameter slots the checker bound them to; they
  // are generated in source order.
  llvm::ArrayRef<const ast::Expr *> bound = program.typeOf(&call)->builtinArgs;
  BuiltinArgs args;
  args.values.resize(bound.size());
  args.ranges.assign(bound.size(), call.range);
  args.strings.resize(bound.size());
  if (receiver && !args.values.empty())
    args.values[0] = *receiver;
  for (const ast::Arg &a : call.args) {
    if (!a.value)
      continue;
    size_t at = size_t(llvm::find(bound, a.value.get()) - bound.begin());
    if (at >= bound.size())
      return unsupported(a.range, "this argument");
    args.ranges[at] = a.value->range;
    if (auto *text = dyn_cast<ast::StringLitExpr>(a.value.get())) {
      args.strings[at] = text->value;
      args.values[at] = GenValue();
      continue;
    }
    GenValue v = gen(*a.value, scope);
    if (!v.ok())
      return {};
    args.values[at] = v;
  }

  // The result's type is the checker's: the rules below choose ops and
  // attributes, never a shape. (split and chunk give a list of them.)
  const sema::ExprInfo *info = program.typeOf(&call);
  if (isComposedBuiltin(name) && info->type.kind() == sema::Type::Kind::List)
    return genComposedBuiltin(name, call, args, RankedTensorType(), scope);
  std::optional<RankedTensorType> checked = checkedType(call, scope);
  if (!checked)
    return unsupported(call.range, "`" + name + "` here (the checker gave it no tensor type)");
  RankedTensorType rt = *checked;
  if (isComposedBuiltin(name))
    return genComposedBuiltin(name, call, args, rt, scope);

  mlir::Location l = loc(call.range);
  mlir::Value x = args.tensor(0);
  auto needX = [&]() -> bool {
    if (x)
      return true;
    unsupported(args.range(0), "`" + name + "` on a non-tensor value");
    return false;
  };
  RankedTensorType xt = x ? typeOf(x) : RankedTensorType();
  int64_t rank = x ? xt.getRank() : 0;
  auto normDim = [](int64_t d, int64_t rank) { return d < 0 ? d + rank : d; };
  auto unary = [&](auto tag) -> GenValue {
    using Op = decltype(tag);
    if (!needX())
      return {};
    return GenValue::ofTensor(Op::create(b, l, rt, x));
  };

  if (name == "relu")
    return unary(mlir::mdl::ReluOp());
  if (name == "gelu")
    return unary(mlir::mdl::GeluOp());
  if (name == "silu")
    return unary(mlir::mdl::SiluOp());
  if (name == "tanh")
    return unary(mlir::mdl::TanhOp());
  if (name == "sigmoid")
    return unary(mlir::mdl::SigmoidOp());
  if (name == "exp")
    return unary(mlir::mdl::ExpOp());
  if (name == "log")
    return unary(mlir::mdl::LogOp());
  if (name == "sqrt")
    return unary(mlir::mdl::SqrtOp());
  if (name == "sin")
    return unary(mlir::mdl::SinOp());
  if (name == "cos")
    return unary(mlir::mdl::CosOp());
  if (name == "abs")
    return unary(mlir::mdl::AbsOp());
  if (name == "neg")
    return unary(mlir::mdl::NegOp());
  if (name == "dropout") { // inference: the identity
    if (!needX())
      return {};
    return args[slot::dropout::x];
  }
  if (name == "matmul") {
    mlir::Value a = args.tensor(slot::matmul::a), c = args.tensor(slot::matmul::b);
    if (!a || !c)
      return unsupported(call.range, "`matmul` on non-tensors");
    mlir::Value v = binaryOp(ast::BinaryOp::MatMul, a, c, rt, call.range);
    return v ? GenValue::ofTensor(v) : fail();
  }

  if (name == "sum" || name == "mean" || name == "max" || name == "min") {
    namespace P = slot::sum;
    static_assert(
        slot::same(P::dim, slot::mean::dim, slot::max::dim, slot::min::dim) &&
        slot::same(P::keepdim, slot::mean::keepdim, slot::max::keepdim, slot::min::keepdim));
    if (!needX())
      return {};
    llvm::SmallVector<int64_t> dims;
    if (args.has(P::dim))
      dims.push_back(normDim(args.integer(P::dim, 0), rank));
    else
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back(d);
    auto dimsAttr = b.getDenseI64ArrayAttr(dims);
    auto keep = b.getBoolAttr(args.integer(P::keepdim, 0) != 0);
    if (name == "sum") {
      // Bools and ints count in the checker's i64.
      if (rt.getElementType() != xt.getElementType())
        x = mlir::mdl::CastOp::create(
            b, l, RankedTensorType::get(xt.getShape(), rt.getElementType(), xt.getEncoding()), x);
      return GenValue::ofTensor(mlir::mdl::SumOp::create(b, l, rt, x, dimsAttr, keep));
    }
    if (name == "mean")
      return GenValue::ofTensor(mlir::mdl::MeanOp::create(b, l, rt, x, dimsAttr, keep));
    if (name == "max")
      return GenValue::ofTensor(mlir::mdl::ReduceMaxOp::create(b, l, rt, x, dimsAttr, keep));
    // min(x) = -max(-x)
    mlir::Value negated = mlir::mdl::NegOp::create(b, l, x.getType(), x);
    mlir::Value m = mlir::mdl::ReduceMaxOp::create(b, l, rt, negated, dimsAttr, keep);
    return GenValue::ofTensor(mlir::mdl::NegOp::create(b, l, rt, m));
  }
  if (name == "softmax" || name == "log_softmax") {
    static_assert(slot::same(slot::softmax::dim, slot::log_softmax::dim));
    if (!needX())
      return {};
    auto dim = b.getI64IntegerAttr(normDim(args.integer(slot::softmax::dim, 0), rank));
    if (name == "softmax")
      return GenValue::ofTensor(mlir::mdl::SoftmaxOp::create(b, l, rt, x, dim));
    return GenValue::ofTensor(mlir::mdl::LogSoftmaxOp::create(b, l, rt, x, dim));
  }

  // Dims inserted, dropped or merged: a reshape to the checker's shape.
  if (name == "reshape" || name == "flatten" || name == "unsqueeze" || name == "squeeze") {
    if (!needX())
      return {};
    mlir::Value reshaped = reshape(x, rt, l);
    // Dims that stay symbolic (a .mdlc, the embedding API) and that the
    // types alone cannot group (`flatten` of [?, 3, ?, ?] into [?, ?]): the
    // groups from the checker's dims.
    if (rt.getNumDynamicDims() > 1 && !mlir::mdl::isPureExpandOrCollapse(xt, rt) && !bound.empty())
      if (const sema::ExprInfo *xInfo = program.typeOf(bound[0]))
        if (std::optional<llvm::SmallVector<int64_t>> groups =
                reshapeGroups(xInfo->type, info->type))
          reshaped.getDefiningOp()->setAttr("groups", b.getDenseI64ArrayAttr(*groups));
    return GenValue::ofTensor(reshaped);
  }
  if (name == "transpose") {
    namespace P = slot::transpose;
    if (!needX())
      return {};
    return GenValue::ofTensor(mlir::mdl::TransposeOp::create(
        b, l, rt, x, b.getI64IntegerAttr(normDim(args.integer(P::dim0, 0), rank)),
        b.getI64IntegerAttr(normDim(args.integer(P::dim1, 0), rank))));
  }
  if (name == "permute") {
    if (!needX())
      return {};
    std::optional<llvm::SmallVector<int64_t>> perm = args.intList(slot::permute::dims);
    if (!perm || int64_t(perm->size()) != rank)
      return unsupported(args.range(slot::permute::dims), "`permute` with these dims");
    for (int64_t &p : *perm)
      p = normDim(p, rank);
    return GenValue::ofTensor(
        mlir::mdl::PermuteOp::create(b, l, rt, x, b.getDenseI64ArrayAttr(*perm)));
  }
  if (name == "concat" || name == "cat" || name == "stack") {
    namespace P = slot::concat;
    static_assert(slot::same(P::tensors, slot::cat::tensors, slot::stack::tensors) &&
                  slot::same(P::dim, slot::cat::dim, slot::stack::dim));
    if (!args.has(P::tensors) || args[P::tensors].kind != GenValue::Kind::List ||
        args[P::tensors].elements.empty())
      return unsupported(args.range(P::tensors),
                         "`" + name + "` of anything but a list of tensors");
    llvm::SmallVector<mlir::Value> inputs;
    for (const GenValue &e : args[P::tensors].elements) {
      if (e.kind != GenValue::Kind::Tensor)
        return unsupported(args.range(P::tensors),
                           "`" + name + "` of anything but a list of tensors");
      inputs.push_back(e.tensor);
    }
    int64_t r0 = typeOf(inputs[0]).getRank();
    int64_t dim = args.integer(P::dim, 0);
    if (name == "stack") { // each input with a dim of 1 inserted, then joined along it
      dim = dim < 0 ? dim + r0 + 1 : dim;
      for (mlir::Value &in : inputs) {
        llvm::SmallVector<int64_t> shape(typeOf(in).getShape());
        shape.insert(shape.begin() + dim, 1);
        in = reshape(in, shape, l);
      }
    } else {
      dim = normDim(dim, r0);
    }
    return GenValue::ofTensor(
        mlir::mdl::ConcatOp::create(b, l, rt, inputs, b.getI64IntegerAttr(dim)));
  }

  if (name == "conv2d" || name == "max_pool2d" || name == "avg_pool2d" ||
      name == "adaptive_avg_pool2d") {
    static_assert(slot::same(slot::conv2d::x, slot::max_pool2d::x, slot::avg_pool2d::x,
                             slot::adaptive_avg_pool2d::x));
    if (!needX())
      return {};
    if (rank != 3 && rank != 4)
      return unsupported(call.range, "`" + name + "` on an input without a batch dim");
    if (rank == 4)
      return genSpatial(name, call, args, x, rt);
    // PyTorch's unbatched [C, H, W]: a batch of one, dropped again after.
    GenValue batched = genSpatial(name, call, args, reshape(x, batchOfOne(xt), l), batchOfOne(rt));
    if (batched.kind != GenValue::Kind::Tensor)
      return batched;
    return GenValue::ofTensor(reshape(batched.tensor, rt, l));
  }
  if (name == "layer_norm") {
    namespace P = slot::layer_norm;
    mlir::Value w = args.tensor(P::weight), bias = args.tensor(P::bias);
    if (!needX() || !w || !bias)
      return unsupported(call.range, "`layer_norm` on non-tensors");
    return GenValue::ofTensor(mlir::mdl::LayerNormOp::create(
        b, l, rt, x, w, bias, b.getI64IntegerAttr(typeOf(w).getRank()),
        b.getF64FloatAttr(args.has(P::eps) ? args[P::eps].number : 1e-5)));
  }
  if (name == "batch_norm") {
    namespace P = slot::batch_norm;
    mlir::Value mean = args.tensor(P::mean), var = args.tensor(P::var);
    if (!needX() || !mean || !var)
      return unsupported(call.range, "`batch_norm` on non-tensors");
    return GenValue::ofTensor(mlir::mdl::BatchNormOp::create(
        b, l, rt, x, mean, var, args.tensor(P::weight), args.tensor(P::bias),
        b.getF64FloatAttr(args.has(P::eps) ? args[P::eps].number : 1e-5)));
  }
  if (name == "embedding") {
    namespace P = slot::embedding;
    mlir::Value indices = args.tensor(P::indices), table = args.tensor(P::table);
    if (!indices || !table)
      return unsupported(call.range, "`embedding` on non-tensors");
    return GenValue::ofTensor(mlir::mdl::EmbeddingOp::create(b, l, rt, table, indices));
  }
  if (name == "gather" || name == "index_select") {
    namespace P = slot::gather;
    static_assert(slot::same(P::dim, slot::index_select::dim) &&
                  slot::same(P::index, slot::index_select::index));
    mlir::Value index = args.tensor(P::index);
    if (!needX() || !index)
      return unsupported(call.range, "`" + name + "` on non-tensors");
    auto dim = b.getI64IntegerAttr(normDim(args.integer(P::dim, 0), rank));
    if (name == "gather")
      return GenValue::ofTensor(mlir::mdl::GatherOp::create(b, l, rt, x, index, dim));
    return GenValue::ofTensor(mlir::mdl::IndexSelectOp::create(b, l, rt, x, index, dim));
  }
  if (name == "where") {
    namespace P = slot::where;
    mlir::Value mask = args.tensor(P::mask);
    if (!mask || !args.has(P::a) || !args.has(P::b))
      return unsupported(call.range, "`where` without a mask tensor");
    mlir::Value a = args.tensor(P::a), c = args.tensor(P::b);
    if (!a && !c)
      return unsupported(call.range, "`where` of two scalars");
    if (!a)
      a = broadcastScalar(args[P::a], c, args.range(P::a));
    if (!c)
      c = broadcastScalar(args[P::b], a, args.range(P::b));
    return GenValue::ofTensor(mlir::mdl::WhereOp::create(b, l, rt, mask, a, c));
  }
  if (name == "maximum" || name == "minimum") {
    namespace P = slot::maximum;
    static_assert(slot::same(P::a, slot::minimum::a) && slot::same(P::b, slot::minimum::b));
    mlir::Value a = args.tensor(P::a), c = args.tensor(P::b);
    if (!a && !c)
      return unsupported(call.range, "`" + name + "` of two numbers");
    if (!a)
      a = broadcastScalar(args[P::a], c, args.range(P::a));
    if (!c)
      c = broadcastScalar(args[P::b], a, args.range(P::b));
    if (name == "maximum")
      return GenValue::ofTensor(mlir::mdl::MaxOp::create(b, l, rt, a, c));
    return GenValue::ofTensor(mlir::mdl::MinOp::create(b, l, rt, a, c));
  }
  if (name == "cross_entropy" || name == "nll_loss") {
    namespace P = slot::cross_entropy;
    static_assert(slot::same(P::target, slot::nll_loss::target) &&
                  slot::same(P::weight, slot::nll_loss::weight));
    mlir::Value target = args.tensor(P::target), weight = args.tensor(P::weight);
    if (!needX() || !target)
      return unsupported(call.range, "`" + name + "` on non-tensors");
    auto reduction = b.getStringAttr("mean");
    if (name == "cross_entropy")
      return GenValue::ofTensor(
          mlir::mdl::CrossEntropyOp::create(b, l, rt, x, target, weight, reduction));
    return GenValue::ofTensor(mlir::mdl::NllLossOp::create(b, l, rt, x, target, weight, reduction));
  }
  if (name == "cast" || name == "to") { // nothing to do where the type stays
    if (!needX())
      return {};
    // `x.to(bf16)` changes the dtype (a cast), `x.to(cuda:0)` the device.
    if (rt != xt && rt.getElementType() != xt.getElementType()) {
      RankedTensorType converted = tensorType(xt.getShape(), rt.getElementType(), xt.getEncoding());
      x = mlir::mdl::CastOp::create(b, l, converted, x);
      xt = converted;
      if (rt == xt)
        return GenValue::ofTensor(x);
    }
    if (rt == xt)
      return args[0];
    if (name == "cast")
      return GenValue::ofTensor(mlir::mdl::CastOp::create(b, l, rt, x));
    return GenValue::ofTensor(mlir::mdl::TransferOp::create(b, l, rt, x));
  }

  // Creation ops: sizes fixed by the instance are static, symbolic ones
  // (`zeros([B, n])`) come from the extents the inputs bound.
  if (name == "zeros" || name == "ones" || name == "full" || name == "randn" || name == "arange" ||
      name == "eye") {
    if (placement) // `zeros(...) @ D` in this instance
      rt = tensorType(rt.getShape(), rt.getElementType(), deviceAttr(*placement));
    std::optional<llvm::SmallVector<mlir::Value>> dynamic = dynamicSizes(call, rt, scope, l);
    if (!dynamic)
      return unsupported(call.range, "`" + name + "` with a size known only at run time");
    mlir::ValueRange sizes(*dynamic);
    if (name == "zeros")
      return GenValue::ofTensor(mlir::mdl::ZerosOp::create(b, l, rt, sizes));
    if (name == "ones")
      return GenValue::ofTensor(mlir::mdl::OnesOp::create(b, l, rt, sizes));
    if (name == "full")
      return GenValue::ofTensor(mlir::mdl::FullOp::create(
          b, l, rt, sizes, b.getF64FloatAttr(args.number(slot::full::value, 0).value_or(0))));
    if (name == "randn") {
      // Without `seed:`, each randn generated (each call site, unrolled
      // iteration and submodel instance) draws its own stream: 0, 1, 2, ...
      int64_t seed =
          args.has(slot::randn::seed) ? args.integer(slot::randn::seed, 0) : nextDefaultSeed++;
      return GenValue::ofTensor(
          mlir::mdl::RandnOp::create(b, l, rt, sizes, b.getI64IntegerAttr(seed)));
    }
    if (name == "arange") {
      // `arange(end)` or `arange(start, end, step)`; the checker sized it.
      namespace P = slot::arange;
      std::optional<double> start = args.has(P::end) ? args.number(P::start, 0) : 0,
                            step = args.number(P::step, 1);
      if (!start || !step)
        return unsupported(call.range, "`arange` from a bound known only at run time");
      return GenValue::ofTensor(mlir::mdl::ArangeOp::create(
          b, l, rt, sizes, b.getF64FloatAttr(*start), b.getF64FloatAttr(*step)));
    }
    return GenValue::ofTensor(mlir::mdl::EyeOp::create(b, l, rt, sizes));
  }
  return unsupported(call.range, "`" + name + "`");
}

} // namespace modelc::mlirgen::detail
