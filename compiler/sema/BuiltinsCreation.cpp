//===- BuiltinsCreation.cpp - Tensor-creating built-ins -------------------===//
//
// Typing rules of zeros, ones, full, randn, arange and eye: the shape
// and dtype come from the arguments, the device from `@ D` or from the
// value's first use.
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinCall.h"

#include <cmath>

namespace modelc::sema::detail {

/// PyTorch's overloads: `arange(end)`, `arange(start, end, step: 1)`; the
/// length is ceil((end - start) / step), symbolic when the bounds are and
/// the step is a constant int. Float bounds make the default dtype f32.
std::optional<Dim> BuiltinCall::arangeLength(ast::DType &dflt) {
  namespace P = slot::arange;
  dflt = ast::DType::I64;
  if (!has(P::start) && !has(P::end)) {
    reportMissing(P::end);
    return std::nullopt;
  }
  for (size_t i : {P::start, P::end, P::step}) {
    if (!has(i))
      continue;
    Type::Kind k = val(i).type.kind();
    if (k == Type::Kind::Int)
      continue;
    if (k == Type::Kind::Float) {
      dflt = ast::DType::F32;
      continue;
    }
    auto diag = c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a number", c.typeStr(val(i)));
    diag.primary("`" + names[i].str() + "` of `arange`");
    if (k == Type::Kind::DType && args[i].expr && !args[i].expr->range.text().contains(':'))
      diag.help("pass the dtype by name", {{Range{rangeOf(i).begin, rangeOf(i).begin}, "dtype: "}},
                Applicability::MachineApplicable);
    return std::nullopt;
  }
  // One bound is the end (`arange(5)`, `arange(end: 5)`).
  size_t startSlot = P::start, endSlot = P::end;
  bool startGiven = has(P::start) && has(P::end);
  if (!has(P::end))
    endSlot = P::start;
  std::optional<double> step = has(P::step) ? number(P::step) : std::optional<double>(1);
  if (!step) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(P::step), "step", c.typeStr(val(P::step)))
        .primary("the step must be known to size the result");
    return std::nullopt;
  }
  if (*step == 0) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(P::step), "step", spec.name)
        .primary("the step must not be zero");
    return std::nullopt;
  }
  bool intStep = has(P::step) ? val(P::step).type.kind() == Type::Kind::Int : true;
  auto dimOf = [&](size_t i) -> std::optional<Dim> {
    if (val(i).type.kind() == Type::Kind::Int)
      return val(i).type.intValue;
    return std::nullopt;
  };
  std::optional<Dim> start = startGiven ? dimOf(startSlot) : Dim::constant(0);
  std::optional<Dim> end = dimOf(endSlot);
  if (start && end && intStep) {
    std::optional<int64_t> s = start->asConstant(), e = end->asConstant();
    int64_t k = int64_t(*step);
    if (s && e) {
      if ((k > 0 && *e < *s) || (k < 0 && *e > *s)) {
        c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(endSlot), "end", spec.name)
            .primary("`end` " + std::to_string(*e) + " lies " + (k > 0 ? "below" : "above") +
                     " `start` " + std::to_string(*s) + " with step " + std::to_string(k));
        return std::nullopt;
      }
      int64_t span = k > 0 ? *e - *s : *s - *e, by = k > 0 ? k : -k;
      return Dim::constant((span + by - 1) / by);
    }
    Dim span = k > 0 ? *end - *start : *start - *end;
    int64_t by = k > 0 ? k : -k;
    return (span + Dim::constant(by - 1)).floorDiv(by);
  }
  std::optional<double> s = startGiven ? number(startSlot) : std::optional<double>(0);
  std::optional<double> e = number(endSlot);
  if (!s || !e) {
    size_t bad = !e ? endSlot : startSlot;
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(bad), names[bad], c.typeStr(val(bad)))
        .primary("float bounds must be literals to size the result");
    return std::nullopt;
  }
  double length = std::ceil((*e - *s) / *step);
  if (length < 0) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(endSlot), "end", spec.name)
        .primary("`end` lies on the wrong side of `start` for the step");
    return std::nullopt;
  }
  return Dim::constant(int64_t(length));
}

Value BuiltinCall::create(const Device *placement, const DeviceOrigin *placementOrigin) {
  Shape shape;
  ast::DType dflt = ast::DType::F32;
  if (spec.id == BI::Arange) {
    std::optional<Dim> length = arangeLength(dflt);
    if (!length)
      return failed();
    shape.dims.push_back(*length);
  }
  static_assert(
      slot::same(slot::zeros::shape, slot::ones::shape, slot::full::shape, slot::randn::shape) &&
      slot::same(slot::zeros::dtype, slot::ones::dtype));
  size_t dtypeSlot = slot::zeros::dtype;
  if (spec.id == BI::Full)
    dtypeSlot = slot::full::dtype;
  else if (spec.id == BI::Randn)
    dtypeSlot = slot::randn::dtype;
  else if (spec.id == BI::Arange)
    dtypeSlot = slot::arange::dtype;
  else if (spec.id == BI::Eye)
    dtypeSlot = slot::eye::dtype;
  std::optional<ElementType> dtype = dtypeArg(dtypeSlot, dflt);
  if (!dtype)
    return failed();
  if (spec.id == BI::Arange) {
    // sized above
  } else if (spec.id == BI::Eye) {
    std::optional<Dim> n = dimValue(slot::eye::n);
    if (!n)
      return failed();
    if (std::optional<int64_t> k = n->asConstant(); k && *k < 0) {
      c.diags_
          .report(DiagId::ExpectedConstant, rangeOf(slot::eye::n), "a dimension",
                  std::to_string(*k))
          .primary("dimensions cannot be negative");
      return failed();
    }
    shape.dims.push_back(*n);
    shape.dims.push_back(*n);
  } else {
    std::optional<Shape> s = shapeArg(slot::zeros::shape, /*allowInfer=*/false);
    if (!s)
      return failed();
    shape = std::move(*s);
  }
  if (spec.id == BI::Randn) {
    if (!dtype->isFloating()) {
      constexpr size_t kDType = slot::randn::dtype;
      c.diags_.report(DiagId::ExpectedFloatDType, has(kDType) ? rangeOf(kDType) : call.range,
                      spec.name, dtype->str());
      return failed();
    }
    constexpr size_t kSeed = slot::randn::seed;
    if (has(kSeed) && val(kSeed).type.kind() != Type::Kind::Int) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(kSeed), "int", c.typeStr(val(kSeed)));
      return failed();
    }
  }
  if (spec.id == BI::Full) {
    constexpr size_t kValue = slot::full::value;
    Type::Kind k = val(kValue).type.kind();
    bool ok = k == Type::Kind::Int || k == Type::Kind::Bool ||
              (k == Type::Kind::Float && dtype->isFloating());
    if (!ok) {
      c.diags_.report(DiagId::DTypeMismatch, rangeOf(kValue), c.typeStr(val(kValue)), dtype->str(),
                      spec.name);
      return failed();
    }
  }
  Value v;
  if (placement) {
    v.type = Type::tensor(*dtype, std::move(shape), *placement);
    v.origin = *placementOrigin;
    return v;
  }
  std::string text = c.shortText(call.range);
  v.type = Type::tensor(*dtype, std::move(shape), c.fn_->unifier.fresh(call.range, text));
  v.origin.kind = DeviceOrigin::Kind::Inferred;
  v.origin.range = call.range;
  v.origin.subject = c.program_.save(text);
  v.origin.message =
      c.program_.save("`" + text + "` is created here; its device is inferred from its uses");
  return v;
}

} // namespace modelc::sema::detail
