//===- BuiltinsElementwise.cpp - Elementwise ops, reductions, losses ------===//
//
// Typing rules of the built-ins that keep their operand's shape or reduce
// it: activations and math (relu ... neg), sum/mean/max/min, softmax and
// log_softmax, where, masked_fill, triu/tril, cast, to, and the losses
// (cross_entropy, nll_loss).
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinCall.h"

#include "llvm/Support/Casting.h"

using llvm::dyn_cast;

namespace modelc::sema::detail {

Value BuiltinCall::elementwise(bool floatOnly) {
  namespace P = slot::relu;
  static_assert(slot::same(P::x, slot::gelu::x, slot::silu::x, slot::tanh::x, slot::sigmoid::x,
                           slot::exp::x, slot::log::x, slot::sqrt::x, slot::sin::x, slot::cos::x,
                           slot::abs::x, slot::neg::x, slot::dropout::x));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  if (floatOnly ? !floating(*x) : !numeric(*x, /*castHelp=*/false))
    return failed();
  if (spec.id == BI::Dropout && has(slot::dropout::p)) {
    const Value &p = val(slot::dropout::p);
    if (p.type.kind() != Type::Kind::Float && p.type.kind() != Type::Kind::Int) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(slot::dropout::p), "float", c.typeStr(p));
      return failed();
    }
  }
  Value v = *x;
  v.expr = nullptr;
  return v;
}

Value BuiltinCall::reduce(bool floatOnly, bool isSoftmax) {
  namespace P = slot::sum;
  static_assert(
      slot::same(P::x, slot::mean::x, slot::max::x, slot::min::x, slot::softmax::x,
                 slot::log_softmax::x) &&
      slot::same(P::dim, slot::mean::dim, slot::max::dim, slot::min::dim, slot::softmax::dim,
                 slot::log_softmax::dim) &&
      slot::same(P::keepdim, slot::mean::keepdim, slot::max::keepdim, slot::min::keepdim));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  if (floatOnly && !floating(*x))
    return failed();
  if (isSoftmax) {
    if (!dimArg(P::dim, *x))
      return failed();
    Value v = *x;
    v.expr = nullptr;
    return v;
  }
  std::optional<Shape> shape = reducedShape(*x, P::dim, P::keepdim, /*keepAllDims=*/false);
  if (!shape)
    return failed();
  // As PyTorch's: a sum of bools or ints counts in i64 (`sum(ids != pad, 1)`).
  ElementType dtype = x->type.dtype;
  if (spec.id == BI::Sum && !dtype.isFloating())
    dtype = ElementType(ast::DType::I64);
  return result(dtype, std::move(*shape), x->type.dev, *x);
}

Value BuiltinCall::where() {
  namespace P = slot::where;
  const Value *mask = tensor(P::mask);
  if (!mask)
    return failed();
  if (mask->type.dtype != ast::DType::Bool) {
    c.diags_.report(DiagId::ExpectedBoolMask, mask->range(), spec.name, c.typeStr(*mask));
    return failed();
  }
  const Value &a = val(P::a), &b = val(P::b);
  const Value *t = a.type.isTensor() ? &a : b.type.isTensor() ? &b : nullptr;
  if (!t) {
    c.diags_.report(DiagId::ExpectedTensor, rangeOf(P::a), spec.name, c.typeStr(a))
        .primary("at least one of the values must be a tensor");
    return failed();
  }
  for (const Value *v : {&a, &b}) {
    if (v == t)
      continue;
    if (v->type.isTensor() ? !c.requireSameDType(spec.name, *t, *v)
                           : !c.checkScalarOperand(spec.name, *t, *v))
      return failed();
  }
  std::optional<Device> dev = devices({mask, &a, &b});
  if (!dev)
    return failed();
  std::optional<Shape> shape = mask->type.shape;
  for (const Value *v : {&a, &b})
    if (v->type.isTensor() && shape)
      shape = c.broadcast(*shape, v->type.shape);
  if (!shape) {
    c.diags_.report(DiagId::BroadcastMismatch, call.range, mask->type.shape.str(),
                    t->type.shape.str(), spec.name);
    return failed();
  }
  return result(t->type.dtype, std::move(*shape), *dev, *t);
}

bool BuiltinCall::numeric(const Value &x, bool castHelp) {
  if (x.type.dtype != ast::DType::Bool)
    return true;
  auto diag = c.diags_.report(DiagId::TypeMismatch, x.range(), "a numeric tensor", c.typeStr(x));
  diag.primary("argument of `" + spec.name.str() + "`");
  if (castHelp)
    diag.help("convert it with `cast`", c.castEdits(*x.expr, ast::DType::I64),
              Applicability::MaybeIncorrect);
  return false;
}

Value BuiltinCall::elementwisePair() {
  namespace P = slot::maximum;
  static_assert(slot::same(P::a, slot::minimum::a) && slot::same(P::b, slot::minimum::b));
  const Value &a = val(P::a), &b = val(P::b);
  const Value *t = a.type.isTensor() ? &a : b.type.isTensor() ? &b : nullptr;
  if (!t) {
    c.diags_.report(DiagId::ExpectedTensor, rangeOf(P::a), spec.name, c.typeStr(a))
        .primary("at least one of the values must be a tensor")
        .help("for two numbers, write the value itself");
    return failed();
  }
  const Value &other = t == &a ? b : a;
  if (other.type.isTensor() ? !c.requireSameDType(spec.name, a, b)
                            : !c.checkScalarOperand(spec.name, *t, other))
    return failed();
  std::optional<Device> dev = devices({&a, &b});
  if (!dev)
    return failed();
  std::optional<Shape> shape = t->type.shape;
  if (other.type.isTensor())
    shape = c.broadcast(a.type.shape, b.type.shape);
  if (!shape) {
    c.diags_
        .report(DiagId::BroadcastMismatch, call.range, a.type.shape.str(), b.type.shape.str(),
                spec.name)
        .primary(b.range(), c.typeStr(b))
        .label(a.range(), c.typeStr(a));
    return failed();
  }
  return result(t->type.dtype, std::move(*shape), *dev, *t);
}

/// torch.clamp: `x` bounded below by `min` and above by `max` (numbers or
/// tensors that broadcast with it); at least one of them.
Value BuiltinCall::clamp() {
  namespace P = slot::clamp;
  static_assert(slot::same(P::x, slot::clip::x) && slot::same(P::min, slot::clip::min) &&
                slot::same(P::max, slot::clip::max));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  if (!numeric(*x, /*castHelp=*/false))
    return failed();
  if (!has(P::min) && !has(P::max)) {
    c.diags_
        .report(DiagId::InvalidArgumentValue,
                call.argsRange.isValid() ? call.argsRange : call.range, "min", spec.name)
        .primary("`" + spec.name.str() + "` needs `min`, `max` or both")
        .help("give a bound: `" + spec.name.str() + "(x, min: 0.0)`, `" + spec.name.str() +
              "(x, max: 6.0)`");
    return failed();
  }
  std::optional<Shape> shape = x->type.shape;
  llvm::SmallVector<const Value *, 3> operands{x};
  for (size_t i : {P::min, P::max}) {
    if (!has(i))
      continue;
    const Value &bound = val(i);
    if (bound.type.isTensor()) {
      if (!c.requireSameDType(spec.name, *x, bound))
        return failed();
      operands.push_back(&bound);
      if (shape)
        shape = c.broadcast(*shape, bound.type.shape);
      if (!shape) {
        c.diags_
            .report(DiagId::BroadcastMismatch, rangeOf(i), x->type.shape.str(),
                    bound.type.shape.str(), spec.name)
            .primary(c.typeStr(bound))
            .label(x->range(), c.typeStr(*x));
        return failed();
      }
    } else if (!c.checkScalarOperand(spec.name, *x, bound)) {
      return failed();
    }
  }
  std::optional<Device> dev = devices(operands);
  if (!dev)
    return failed();
  return result(x->type.dtype, std::move(*shape), *dev, *x);
}

/// argmax / argmin: the i64 position of the first largest (smallest) value
/// along `dim`, or in the flattened tensor without one.
Value BuiltinCall::argReduce() {
  namespace P = slot::argmax;
  static_assert(slot::same(P::x, slot::argmin::x) && slot::same(P::dim, slot::argmin::dim) &&
                slot::same(P::keepdim, slot::argmin::keepdim));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  if (!numeric(*x, /*castHelp=*/true))
    return failed();
  std::optional<Shape> shape = reducedShape(*x, P::dim, P::keepdim, /*keepAllDims=*/true);
  if (!shape)
    return failed();
  return result(ElementType(ast::DType::I64), std::move(*shape), x->type.dev, *x);
}

std::optional<Shape> BuiltinCall::reducedShape(const Value &x, size_t dimSlot, size_t keepdimSlot,
                                               bool keepAllDims) {
  bool keepdim = false;
  if (has(keepdimSlot)) {
    if (val(keepdimSlot).type.kind() != Type::Kind::Bool) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(keepdimSlot), "bool",
                      c.typeStr(val(keepdimSlot)));
      return std::nullopt;
    }
    auto *lit = llvm::dyn_cast_if_present<ast::BoolLitExpr>(args[keepdimSlot].expr);
    if (!lit) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(keepdimSlot), "keepdim", "a run-time bool");
      return std::nullopt;
    }
    keepdim = lit->value;
  }
  Shape shape;
  if (has(dimSlot)) {
    std::optional<unsigned> dim = dimArg(dimSlot, x);
    if (!dim)
      return std::nullopt;
    shape = x.type.shape;
    if (keepdim)
      shape.dims[*dim] = Dim::constant(1);
    else
      shape.dims.erase(shape.dims.begin() + *dim);
  } else if (keepdim && keepAllDims) {
    if (x.type.shape.hasPack()) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(keepdimSlot), "keepdim",
                      "a tensor of unknown rank");
      return std::nullopt;
    }
    shape.dims.assign(x.type.rank(), Dim::constant(1));
  } // else: reducing everything gives a rank-0 tensor
  return shape;
}

Value BuiltinCall::loss() {
  namespace P = slot::cross_entropy;
  static_assert(slot::same(P::logits, slot::nll_loss::logp) &&
                slot::same(P::target, slot::nll_loss::target) &&
                slot::same(P::weight, slot::nll_loss::weight));
  const Value *logits = tensor(P::logits), *target = tensor(P::target);
  const Value *weight = has(P::weight) ? tensor(P::weight) : nullptr;
  if (!logits || !target || (has(P::weight) && !weight))
    return failed();
  // PyTorch's cross_entropy also takes class probabilities: a floating
  // target of the logits' shape. Not here: the help writes the loss.
  if (spec.name == "cross_entropy" && !weight && target->type.dtype.isFloating() &&
      target->type.shape == logits->type.shape && logits->type.rank() == 2 && logits->expr &&
      target->expr) {
    std::string l = logits->expr->range.text().str(), t = target->expr->range.text().str();
    c.diags_.report(DiagId::ExpectedIntegerIndex, target->range(), spec.name, c.typeStr(*target))
        .primary("class probabilities, not class indices")
        .label(logits->range(), c.typeStr(*logits))
        .note("`cross_entropy` takes the class index of each row (PyTorch's other form, "
              "probabilities of the logits' shape, is not a built-in)")
        .help("for probabilities, write the loss out",
              {{call.range, "-mean(sum(" + t + " * log_softmax(" + l + ", dim: 1), dim: 1))"}});
    return failed();
  }
  if (!floating(*logits) || !integerIndex(*target) ||
      (weight && !c.requireSameDType(spec.name, *logits, *weight)))
    return failed();
  std::optional<Device> dev = devices({logits, target, weight});
  if (!dev)
    return failed();
  const Shape &ls = logits->type.shape;
  if (ls.hasPack() || ls.dims.empty() || ls.dims.size() > 2) {
    c.diags_.report(DiagId::RankMismatch, logits->range(), spec.name, "2 ([N, C])", ls.dims.size())
        .primary(c.typeStr(*logits));
    return failed();
  }
  Shape wantTarget;
  if (ls.dims.size() == 2)
    wantTarget.dims.push_back(ls.dims[0]);
  if (target->type.shape != wantTarget) {
    c.diags_
        .report(DiagId::ShapeMismatch, target->range(), wantTarget.str(), target->type.shape.str())
        .primary(c.typeStr(*target))
        .label(logits->range(), c.typeStr(*logits));
    return failed();
  }
  if (weight) {
    Shape wantWeight;
    wantWeight.dims.push_back(ls.dims.back());
    if (weight->type.shape != wantWeight) {
      c.diags_
          .report(DiagId::ShapeMismatch, weight->range(), wantWeight.str(),
                  weight->type.shape.str())
          .primary(c.typeStr(*weight))
          .note("class weights have one entry per class");
      return failed();
    }
  }
  return result(logits->type.dtype, Shape(), *dev, *logits);
}

Value BuiltinCall::cast() {
  const Value *x = tensor(slot::cast::x);
  std::optional<ElementType> dtype = dtypeArg(slot::cast::dtype, ast::DType::F32);
  if (!x || !dtype)
    return failed();
  Value v = *x;
  v.type.dtype = *dtype;
  v.expr = nullptr;
  return v;
}

Value BuiltinCall::to() {
  const Value *x = tensor(slot::to::x);
  if (!x)
    return failed();
  const Value &d = val(slot::to::device);
  if (d.type.kind() == Type::Kind::DType) {
    // `x.to(bf16)`, as PyTorch's `x.to(torch.bfloat16)`: `cast(x, bf16)`.
    Value v = *x;
    v.type.dtype = d.type.dtype;
    v.expr = nullptr;
    return v;
  }
  if (d.type.kind() != Type::Kind::Device) {
    auto diag = c.diags_.report(DiagId::TypeMismatch, rangeOf(slot::to::device),
                                "a device or a dtype", c.typeStr(d));
    // PyTorch's `x.to("cuda")`: a device is written without quotes here.
    if (auto *s = llvm::dyn_cast_if_present<ast::StringLitExpr>(args[slot::to::device].expr)) {
      llvm::StringRef text = s->value;
      std::string device = text == "cuda" ? "cuda:0" : text.str();
      int64_t index = 0;
      if (text == "cpu" || text == "cuda" ||
          (text.starts_with("cuda:") && !text.drop_front(5).getAsInteger(10, index)))
        diag.help("a device is written without quotes: `" + device + "`",
                  {{rangeOf(slot::to::device), device}});
    }
    return failed();
  }
  Device from = c.resolve(x->type.dev), target = d.type.dev;
  if (from == target) {
    // `x.to(D)`: delete from the end of `x` to the closing parenthesis.
    Range transfer = receiver_ && receiver_->expr
                         ? Range{receiver_->expr->range.end, call.range.end}
                         : call.range;
    auto diag = c.diags_.report(DiagId::RedundantTransfer, transfer, target.str());
    diag.primary("this transfer does nothing").label(x->range(), c.typeStr(*x));
    DeviceOrigin origin = c.originOf(*x);
    if (origin.isKnown())
      diag.note(origin.message.str(), origin.range);
    if (receiver_ && receiver_->expr)
      diag.help("remove it", {{transfer, ""}});
    else if (x->expr)
      diag.help("remove it", {{Range{call.range.begin, x->expr->range.begin}, ""},
                              {Range{x->expr->range.end, call.range.end}, ""}});
  }
  Value v = *x;
  v.expr = nullptr;
  v.type.dev = target;
  v.origin.kind = DeviceOrigin::Kind::Transfer;
  v.origin.range = call.range;
  v.origin.editRange = Range();
  v.origin.message =
      c.program_.save("`" + c.shortText(call.range) + "` moves it to " + target.str() + " here");
  return v;
}

/// torch.masked_fill: `value` where `mask` (broadcast to x's shape) holds.
Value BuiltinCall::maskedFill() {
  namespace P = slot::masked_fill;
  const Value *x = tensor(P::x), *mask = tensor(P::mask);
  if (!x || !mask)
    return failed();
  if (mask->type.dtype != ast::DType::Bool) {
    c.diags_.report(DiagId::ExpectedBoolMask, mask->range(), spec.name, c.typeStr(*mask))
        .primary(c.typeStr(*mask));
    return failed();
  }
  const Value &value = val(P::value);
  if (value.type.isTensor()) {
    if (value.type.rank() != 0 || value.type.shape.hasPack()) {
      c.diags_.report(DiagId::RankMismatch, rangeOf(P::value), spec.name, 0, value.type.rank())
          .primary("the fill value is a number or a 0-dim tensor");
      return failed();
    }
    if (!c.requireSameDType(spec.name, *x, value))
      return failed();
  } else if (!c.checkScalarOperand(spec.name, *x, value)) {
    return failed();
  }
  std::optional<Device> dev = devices({x, mask, value.type.isTensor() ? &value : nullptr});
  if (!dev)
    return failed();
  std::optional<Shape> shape = c.broadcast(x->type.shape, mask->type.shape);
  if (!shape || *shape != x->type.shape) {
    c.diags_
        .report(DiagId::BroadcastMismatch, mask->range(), mask->type.shape.str(),
                x->type.shape.str(), spec.name)
        .primary("the mask must broadcast to the shape of `x`")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, x->type.shape, *dev, *x);
}

/// torch.triu / torch.tril over the last two dims.
Value BuiltinCall::triangle() {
  namespace P = slot::triu;
  static_assert(slot::same(P::x, slot::tril::x) && slot::same(P::diagonal, slot::tril::diagonal));
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  if (!constInt(P::diagonal, 0))
    return failed();
  if (x->type.rank() < 2) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, "2 or more", x->type.rank())
        .primary(c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, x->type.shape, x->type.dev, *x);
}

} // namespace modelc::sema::detail
