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

mlir::Value Generator::adaptiveAvgPoolByWindows(mlir::Value x, int64_t outH, int64_t outW,
                                                mlir::Location l) {
  // PyTorch's windows: output i averages rows floor(i*H/OH) to ceil((i+1)*H/OH).
  RankedTensorType xt = typeOf(x);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2), w = xt.getDimSize(3);
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
  return mlir::mdl::ConcatOp::create(b, l, withShape(x, {n, c, outH, outW}), rows,
                                     b.getI64IntegerAttr(2));
}

mlir::Value Generator::reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape, mlir::Location l) {
  return mlir::mdl::ReshapeOp::create(b, l, withShape(x, shape), x);
}

//===----------------------------------------------------------------------===//
// Built-ins
//===----------------------------------------------------------------------===//

GenValue Generator::genBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                               const GenValue *receiver, Scope &scope,
                               std::optional<sema::Device> placement) {
  // The arguments go to the parameter slots the checker bound them to; they
  // are generated in source order.
  llvm::ArrayRef<const ast::Expr *> bound = program.typeOf(&call)->builtinArgs;
  llvm::SmallVector<std::optional<GenValue>, 8> args(bound.size());
  llvm::SmallVector<Range, 8> ranges(bound.size(), call.range);
  llvm::SmallVector<llvm::StringRef, 8> strings(bound.size()); // `mode: "reflect"`
  if (receiver && !args.empty())
    args[0] = *receiver;
  for (const ast::Arg &a : call.args) {
    if (!a.value)
      continue;
    size_t slot = size_t(llvm::find(bound, a.value.get()) - bound.begin());
    if (slot >= bound.size())
      return unsupported(a.range, "this argument");
    if (auto *text = dyn_cast<ast::StringLitExpr>(a.value.get())) {
      strings[slot] = text->value;
      args[slot] = GenValue();
      ranges[slot] = a.value->range;
      continue;
    }
    GenValue v = gen(*a.value, scope);
    if (!v.ok())
      return {};
    args[slot] = v;
    ranges[slot] = a.value->range;
  }

  if (isComposedBuiltin(name))
    return genComposedBuiltin(name, call, args, ranges, strings, scope);

  mlir::Location l = loc(call.range);
  auto tensorArg = [&](size_t i) -> mlir::Value {
    if (i < args.size() && args[i] && args[i]->kind == GenValue::Kind::Tensor)
      return args[i]->tensor;
    return {};
  };
  auto intArg = [&](size_t i, int64_t dflt) -> int64_t {
    if (i < args.size() && args[i] && args[i]->kind == GenValue::Kind::Scalar)
      return int64_t(args[i]->number);
    return dflt;
  };
  auto has = [&](size_t i) { return i < args.size() && args[i].has_value(); };
  auto normDim = [](int64_t d, int64_t rank) { return d < 0 ? d + rank : d; };
  // An int or a two-element list (`stride: 2`, `padding: [1, 2]`).
  auto pairArg = [&](size_t i, int64_t dflt) -> std::array<int64_t, 2> {
    if (!has(i))
      return {dflt, dflt};
    const GenValue &v = *args[i];
    if ((v.kind == GenValue::Kind::List || v.kind == GenValue::Kind::Tuple) &&
        v.elements.size() == 2)
      return {int64_t(v.elements[0].number), int64_t(v.elements[1].number)};
    return {int64_t(v.number), int64_t(v.number)};
  };
  auto listArg = [&](size_t i) -> std::optional<llvm::SmallVector<int64_t>> {
    if (!has(i))
      return std::nullopt;
    const GenValue &v = *args[i];
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
  };
  // The dtype and device the checker gave the call (creation ops).
  auto callType = [&]() -> std::optional<std::pair<mlir::Type, mlir::Attribute>> {
    const sema::ExprInfo *info = program.typeOf(&call);
    if (!info || !info->type.isTensor())
      return std::nullopt;
    std::optional<sema::Device> dev =
        placement ? placement : concreteDevice(info->type.dev, *scope.frame);
    if (!dev)
      return std::nullopt;
    return std::make_pair(elementType(info->type.dtype), mlir::Attribute(deviceAttr(*dev)));
  };

  mlir::Value x = tensorArg(0);
  auto needX = [&]() -> bool {
    if (x)
      return true;
    unsupported(ranges[0], "`" + name + "` on a non-tensor value");
    return false;
  };
  RankedTensorType xt = x ? typeOf(x) : RankedTensorType();
  int64_t rank = x ? xt.getRank() : 0;
  auto unary = [&](auto tag) -> GenValue {
    using Op = decltype(tag);
    if (!needX())
      return {};
    return GenValue::ofTensor(Op::create(b, l, x.getType(), x));
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
  if (name == "abs")
    return unary(mlir::mdl::AbsOp());
  if (name == "neg")
    return unary(mlir::mdl::NegOp());
  if (name == "dropout") { // inference: the identity
    if (!needX())
      return {};
    return *args[0];
  }
  if (name == "matmul") {
    mlir::Value a = tensorArg(0), c = tensorArg(1);
    if (!a || !c)
      return unsupported(call.range, "`matmul` on non-tensors");
    mlir::Value v = binaryOp(ast::BinaryOp::MatMul, a, c, call.range);
    return v ? GenValue::ofTensor(v) : fail();
  }

  if (name == "sum" || name == "mean" || name == "max" || name == "min") {
    if (!needX())
      return {};
    bool keepdim = has(2) && args[2]->number != 0;
    llvm::SmallVector<int64_t> dims;
    if (has(1))
      dims.push_back(normDim(intArg(1, 0), rank));
    else
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back(d);
    llvm::SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (!llvm::is_contained(dims, d))
        shape.push_back(xt.getDimSize(d));
      else if (keepdim)
        shape.push_back(1);
    }
    RankedTensorType rt = withShape(x, shape);
    auto dimsAttr = b.getDenseI64ArrayAttr(dims);
    auto keep = b.getBoolAttr(keepdim);
    if (name == "sum")
      return GenValue::ofTensor(mlir::mdl::SumOp::create(b, l, rt, x, dimsAttr, keep));
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
    if (!needX())
      return {};
    int64_t dim = normDim(intArg(1, 0), rank);
    if (name == "softmax")
      return GenValue::ofTensor(
          mlir::mdl::SoftmaxOp::create(b, l, x.getType(), x, b.getI64IntegerAttr(dim)));
    return GenValue::ofTensor(
        mlir::mdl::LogSoftmaxOp::create(b, l, x.getType(), x, b.getI64IntegerAttr(dim)));
  }

  if (name == "reshape") {
    if (!needX())
      return {};
    // Dims the instance fixes are static; symbolic ones (`B`) are `?`.
    const GenValue *shapeArg = has(1) ? &*args[1] : nullptr;
    llvm::SmallVector<int64_t> shape;
    const sema::ExprInfo *info = program.typeOf(&call);
    if (info && info->type.isTensor()) {
      // A callee's symbols take the extents its arguments gave them, so a
      // static input keeps a static result (`[B, L, H, E / H]` in a head split).
      for (sema::Dim d : info->type.shape.dims)
        shape.push_back(extentOf(scopedDim(d, scope), *scope.frame));
    } else if (shapeArg && shapeArg->kind == GenValue::Kind::List) {
      for (const GenValue &e : shapeArg->elements)
        shape.push_back(e.kind == GenValue::Kind::Scalar && e.number >= 0 ? int64_t(e.number)
                                                                          : kDyn);
    } else {
      return unsupported(call.range, "`reshape` to this shape");
    }
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "flatten") {
    if (!needX())
      return {};
    if (rank == 0)
      return GenValue::ofTensor(reshape(x, {1}, l));
    int64_t start = normDim(intArg(1, 0), rank), end = normDim(intArg(2, -1), rank);
    llvm::SmallVector<int64_t> shape;
    int64_t product = 1;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t e = xt.getDimSize(d);
      if (d < start || d > end) {
        shape.push_back(e);
        continue;
      }
      product = (product == kDyn || e == kDyn) ? kDyn : product * e;
      if (d == end)
        shape.push_back(product);
    }
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "unsqueeze") {
    if (!needX())
      return {};
    int64_t d = intArg(1, 0);
    if (d < 0)
      d += rank + 1;
    llvm::SmallVector<int64_t> shape(xt.getShape());
    shape.insert(shape.begin() + d, 1);
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "squeeze") {
    if (!needX())
      return {};
    llvm::SmallVector<int64_t> shape;
    std::optional<int64_t> only;
    if (has(1))
      only = normDim(intArg(1, 0), rank);
    for (int64_t d = 0; d < rank; ++d)
      if (!(xt.getDimSize(d) == 1 && (!only || *only == d)))
        shape.push_back(xt.getDimSize(d));
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "transpose") {
    if (!needX())
      return {};
    int64_t d0 = normDim(intArg(1, 0), rank), d1 = normDim(intArg(2, 0), rank);
    llvm::SmallVector<int64_t> shape(xt.getShape());
    std::swap(shape[d0], shape[d1]);
    return GenValue::ofTensor(mlir::mdl::TransposeOp::create(
        b, l, withShape(x, shape), x, b.getI64IntegerAttr(d0), b.getI64IntegerAttr(d1)));
  }
  if (name == "permute") {
    if (!needX())
      return {};
    std::optional<llvm::SmallVector<int64_t>> perm = listArg(1);
    if (!perm || int64_t(perm->size()) != rank)
      return unsupported(ranges[1], "`permute` with these dims");
    llvm::SmallVector<int64_t> shape;
    for (int64_t &p : *perm) {
      p = normDim(p, rank);
      shape.push_back(xt.getDimSize(p));
    }
    return GenValue::ofTensor(
        mlir::mdl::PermuteOp::create(b, l, withShape(x, shape), x, b.getDenseI64ArrayAttr(*perm)));
  }
  if (name == "concat" || name == "cat" || name == "stack") {
    if (!has(0) || args[0]->kind != GenValue::Kind::List || args[0]->elements.empty())
      return unsupported(ranges[0], "`" + name + "` of anything but a list of tensors");
    llvm::SmallVector<mlir::Value> inputs;
    for (const GenValue &e : args[0]->elements) {
      if (e.kind != GenValue::Kind::Tensor)
        return unsupported(ranges[0], "`" + name + "` of anything but a list of tensors");
      inputs.push_back(e.tensor);
    }
    int64_t r0 = typeOf(inputs[0]).getRank();
    int64_t dim = intArg(1, 0);
    if (name == "stack") {
      dim = dim < 0 ? dim + r0 + 1 : dim;
      for (mlir::Value &in : inputs) {
        llvm::SmallVector<int64_t> shape(typeOf(in).getShape());
        shape.insert(shape.begin() + dim, 1);
        in = reshape(in, shape, l);
      }
    } else {
      dim = normDim(dim, r0);
    }
    llvm::SmallVector<int64_t> shape(typeOf(inputs[0]).getShape());
    int64_t total = 0;
    for (mlir::Value in : inputs) {
      int64_t e = typeOf(in).getDimSize(dim);
      total = (total == kDyn || e == kDyn) ? kDyn : total + e;
    }
    shape[dim] = total;
    return GenValue::ofTensor(mlir::mdl::ConcatOp::create(b, l, withShape(inputs[0], shape), inputs,
                                                          b.getI64IntegerAttr(dim)));
  }

  // conv2d and the pools, on [N, C, H, W].
  auto spatial = [&]() -> GenValue {
    if (name == "conv2d") {
      mlir::Value w = tensorArg(1), bias = tensorArg(2);
      if (!needX() || !w)
        return unsupported(call.range, "`conv2d` on non-tensors");
      if (rank != 4)
        return unsupported(call.range, "`conv2d` on an input without a batch dim");
      auto stride = pairArg(3, 1), pad = pairArg(4, 0), dil = pairArg(5, 1);
      int64_t groups = intArg(6, 1);
      RankedTensorType wt = typeOf(w);
      llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), wt.getDimSize(0)};
      for (int i = 0; i < 2; ++i) {
        int64_t in = xt.getDimSize(2 + i), k = wt.getDimSize(2 + i);
        shape.push_back(in == kDyn || k == kDyn
                            ? kDyn
                            : (in + 2 * pad[i] - dil[i] * (k - 1) - 1) / stride[i] + 1);
      }
      return GenValue::ofTensor(mlir::mdl::Conv2dOp::create(
          b, l, withShape(x, shape), x, w, bias, b.getDenseI64ArrayAttr(stride),
          b.getDenseI64ArrayAttr(pad), b.getDenseI64ArrayAttr(dil), b.getI64IntegerAttr(groups)));
    }
    if (name == "max_pool2d" || name == "avg_pool2d") {
      if (!needX())
        return {};
      if (rank != 4)
        return unsupported(call.range, "`" + name + "` on an input without a batch dim");
      auto kernel = pairArg(1, 1);
      auto stride = pairArg(2, kernel[0]);
      if (!has(2))
        stride = kernel;
      auto pad = pairArg(3, 0);
      llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), xt.getDimSize(1)};
      for (int i = 0; i < 2; ++i) {
        int64_t in = xt.getDimSize(2 + i);
        shape.push_back(in == kDyn ? kDyn : (in + 2 * pad[i] - kernel[i]) / stride[i] + 1);
      }
      auto k = b.getDenseI64ArrayAttr(kernel), s = b.getDenseI64ArrayAttr(stride),
           p = b.getDenseI64ArrayAttr(pad);
      if (name == "max_pool2d")
        return GenValue::ofTensor(
            mlir::mdl::MaxPool2dOp::create(b, l, withShape(x, shape), x, k, s, p));
      return GenValue::ofTensor(
          mlir::mdl::AvgPool2dOp::create(b, l, withShape(x, shape), x, k, s, p));
    }
    if (name == "adaptive_avg_pool2d") {
      if (!needX())
        return {};
      if (rank != 4)
        return unsupported(call.range, "`" + name + "` on an input without a batch dim");
      auto out = pairArg(1, 1);
      llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), xt.getDimSize(1), out[0], out[1]};
      int64_t h = xt.getDimSize(2), w = xt.getDimSize(3);
      bool global = out[0] == 1 && out[1] == 1;
      bool divides =
          h != kDyn && w != kDyn && out[0] > 0 && out[1] > 0 && h % out[0] == 0 && w % out[1] == 0;
      if (global || divides)
        return GenValue::ofTensor(
            mlir::mdl::AdaptiveAvgPool2dOp::create(b, l, withShape(x, shape), x));
      if (h == kDyn || w == kDyn || out[0] < 1 || out[1] < 1)
        return unsupported(call.range, "`adaptive_avg_pool2d` of an input whose size is known only "
                                       "at run time, to an output that does not divide it");
      return GenValue::ofTensor(adaptiveAvgPoolByWindows(x, out[0], out[1], l));
    }
    return unsupported(call.range, "`" + name + "`");
  };
  if (name == "conv2d" || name == "max_pool2d" || name == "avg_pool2d" ||
      name == "adaptive_avg_pool2d") {
    if (!x || rank != 3)
      return spatial();
    // PyTorch's unbatched [C, H, W]: a batch of one, dropped again after.
    llvm::SmallVector<int64_t> batched(xt.getShape());
    batched.insert(batched.begin(), 1);
    x = reshape(x, batched, l);
    xt = typeOf(x);
    rank = 4;
    GenValue result = spatial();
    if (result.kind != GenValue::Kind::Tensor)
      return result;
    return GenValue::ofTensor(
        reshape(result.tensor, typeOf(result.tensor).getShape().drop_front(), l));
  }
  if (name == "layer_norm") {
    mlir::Value w = tensorArg(1), bias = tensorArg(2);
    if (!needX() || !w || !bias)
      return unsupported(call.range, "`layer_norm` on non-tensors");
    double eps = has(3) ? args[3]->number : 1e-5;
    return GenValue::ofTensor(mlir::mdl::LayerNormOp::create(
        b, l, x.getType(), x, w, bias, b.getI64IntegerAttr(typeOf(w).getRank()),
        b.getF64FloatAttr(eps)));
  }
  if (name == "batch_norm") {
    mlir::Value mean = tensorArg(1), var = tensorArg(2), w = tensorArg(3), bias = tensorArg(4);
    if (!needX() || !mean || !var)
      return unsupported(call.range, "`batch_norm` on non-tensors");
    double eps = has(5) ? args[5]->number : 1e-5;
    return GenValue::ofTensor(mlir::mdl::BatchNormOp::create(b, l, x.getType(), x, mean, var, w,
                                                             bias, b.getF64FloatAttr(eps)));
  }
  if (name == "embedding") {
    mlir::Value indices = tensorArg(0), table = tensorArg(1);
    if (!indices || !table)
      return unsupported(call.range, "`embedding` on non-tensors");
    llvm::SmallVector<int64_t> shape(typeOf(indices).getShape());
    shape.push_back(typeOf(table).getDimSize(1));
    return GenValue::ofTensor(
        mlir::mdl::EmbeddingOp::create(b, l, withShape(table, shape), table, indices));
  }
  if (name == "gather" || name == "index_select") {
    mlir::Value index = tensorArg(2);
    if (!needX() || !index)
      return unsupported(call.range, "`" + name + "` on non-tensors");
    int64_t dim = normDim(intArg(1, 0), rank);
    if (name == "gather")
      return GenValue::ofTensor(mlir::mdl::GatherOp::create(
          b, l, withShape(x, typeOf(index).getShape()), x, index, b.getI64IntegerAttr(dim)));
    llvm::SmallVector<int64_t> shape(xt.getShape());
    shape[dim] = typeOf(index).getDimSize(0);
    return GenValue::ofTensor(mlir::mdl::IndexSelectOp::create(b, l, withShape(x, shape), x, index,
                                                               b.getI64IntegerAttr(dim)));
  }
  if (name == "where") {
    mlir::Value mask = tensorArg(0);
    if (!mask || !has(1) || !has(2))
      return unsupported(call.range, "`where` without a mask tensor");
    mlir::Value a = tensorArg(1), c = tensorArg(2);
    if (!a && !c)
      return unsupported(call.range, "`where` of two scalars");
    if (!a)
      a = broadcastScalar(*args[1], c, ranges[1]);
    if (!c)
      c = broadcastScalar(*args[2], a, ranges[2]);
    llvm::SmallVector<int64_t> shape = broadcastShape(
        broadcastShape(typeOf(mask).getShape(), typeOf(a).getShape()), typeOf(c).getShape());
    return GenValue::ofTensor(mlir::mdl::WhereOp::create(b, l, withShape(a, shape), mask, a, c));
  }
  if (name == "cross_entropy" || name == "nll_loss") {
    mlir::Value target = tensorArg(1), weight = tensorArg(2);
    if (!needX() || !target)
      return unsupported(call.range, "`" + name + "` on non-tensors");
    RankedTensorType rt = withShape(x, {});
    auto reduction = b.getStringAttr("mean");
    if (name == "cross_entropy")
      return GenValue::ofTensor(
          mlir::mdl::CrossEntropyOp::create(b, l, rt, x, target, weight, reduction));
    return GenValue::ofTensor(mlir::mdl::NllLossOp::create(b, l, rt, x, target, weight, reduction));
  }
  if (name == "cast") {
    if (!needX() || !has(1) || args[1]->kind != GenValue::Kind::DType)
      return unsupported(call.range, "`cast` without a dtype");
    RankedTensorType rt = tensorType(xt.getShape(), elementType(args[1]->dtype), xt.getEncoding());
    if (rt == xt)
      return *args[0];
    return GenValue::ofTensor(mlir::mdl::CastOp::create(b, l, rt, x));
  }
  if (name == "to") {
    if (!needX() || !has(1) || args[1]->kind != GenValue::Kind::Device)
      return unsupported(call.range, "`.to` without a device");
    RankedTensorType rt =
        tensorType(xt.getShape(), xt.getElementType(), deviceAttr(args[1]->device));
    if (rt == xt)
      return *args[0];
    return GenValue::ofTensor(mlir::mdl::TransferOp::create(b, l, rt, x));
  }

  // Creation ops: static shapes only (the cpu back end needs the sizes).
  if (name == "zeros" || name == "ones" || name == "full" || name == "randn" || name == "arange" ||
      name == "eye") {
    std::optional<std::pair<mlir::Type, mlir::Attribute>> et = callType();
    if (!et)
      return unsupported(call.range, "`" + name + "` whose device is unknown");
    // The checker's shape: sizes fixed by the instance are static, symbolic
    // ones (`zeros([B, n])`) come from the extents the inputs bound.
    auto checked = checkedShape(call, scope, l);
    if (!checked)
      return unsupported(call.range, "`" + name + "` with a size known only at run time");
    RankedTensorType rt = tensorType(checked->first, et->first, et->second);
    mlir::ValueRange sizes(checked->second);
    if (name == "zeros")
      return GenValue::ofTensor(mlir::mdl::ZerosOp::create(b, l, rt, sizes));
    if (name == "ones")
      return GenValue::ofTensor(mlir::mdl::OnesOp::create(b, l, rt, sizes));
    if (name == "full")
      return GenValue::ofTensor(mlir::mdl::FullOp::create(
          b, l, rt, sizes, b.getF64FloatAttr(has(1) ? args[1]->number : 0)));
    if (name == "randn")
      return GenValue::ofTensor(
          mlir::mdl::RandnOp::create(b, l, rt, sizes, b.getI64IntegerAttr(intArg(1, 0))));
    if (name == "arange") {
      // `arange(end)` or `arange(start, end, step)`; the checker sized it.
      auto number = [&](size_t i, double dflt) -> std::optional<double> {
        if (!has(i))
          return dflt;
        if (args[i]->kind != GenValue::Kind::Scalar)
          return std::nullopt;
        return args[i]->number;
      };
      std::optional<double> start = has(1) ? number(0, 0) : 0, step = number(2, 1);
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
