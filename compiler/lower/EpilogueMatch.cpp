//===- EpilogueMatch.cpp - elementwise loop bodies as library epilogues ---===//

#include "lower/EpilogueMatch.h"
#include "lower/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <cmath>
#include <numbers>
#include <optional>

using namespace mlir;

namespace modelc::lower {

int64_t EpilogueMatch::code() const {
  int64_t code = 0;
  for (auto [index, step] : llvm::enumerate(steps))
    code |= step << (4 * index);
  return code;
}

bool isFloatConstant(Value value, double expected) {
  FloatAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  double actual = attr.getValueAsDouble();
  // inf - inf is NaN: infinities compare exactly.
  return actual == expected || std::abs(actual - expected) <= 1e-6 * std::abs(expected);
}

func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name, ArrayRef<Type> argTypes) {
  if (auto callee = module.lookupSymbol<func::FuncOp>(name))
    return callee;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto callee =
      func::FuncOp::create(builder, module.getLoc(), name, builder.getFunctionType(argTypes, {}));
  callee.setPrivate();
  callee->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
  return callee;
}

namespace {

/// Calls `fn(x, other)` with the operands of a commutative binary op in both
/// orders; true when one order matches.
template <typename OpTy, typename Fn> bool eitherOrder(Value value, Fn &&fn) {
  auto op = value.getDefiningOp<OpTy>();
  return op && (fn(op.getLhs(), op.getRhs()) || fn(op.getRhs(), op.getLhs()));
}

/// x for 1 / (1 + exp(-x)), as ElementwiseLowering builds sigmoid.
Value sigmoidArgument(Value value) {
  auto div = value.getDefiningOp<arith::DivFOp>();
  if (!div || !isFloatConstant(div.getLhs(), 1.0))
    return {};
  Value x;
  eitherOrder<arith::AddFOp>(div.getRhs(), [&](Value e, Value one) {
    auto exp = e.getDefiningOp<math::ExpOp>();
    auto neg = exp ? exp.getOperand().getDefiningOp<arith::NegFOp>() : arith::NegFOp();
    if (!neg || !isFloatConstant(one, 1.0))
      return false;
    x = neg.getOperand();
    return true;
  });
  return x;
}

/// x for (0.5 * x) * (1 + erf(x * (1/sqrt 2))), exact GELU.
Value geluArgument(Value value) {
  Value x;
  eitherOrder<arith::MulFOp>(value, [&](Value halfX, Value onePlusErf) {
    Value scaled;
    bool half = eitherOrder<arith::MulFOp>(halfX, [&](Value v, Value c) {
      scaled = v;
      return isFloatConstant(c, 0.5);
    });
    if (!half)
      return false;
    return eitherOrder<arith::AddFOp>(onePlusErf, [&](Value e, Value one) {
      auto erf = e.getDefiningOp<math::ErfOp>();
      if (!erf || !isFloatConstant(one, 1.0))
        return false;
      return eitherOrder<arith::MulFOp>(erf.getOperand(), [&](Value v, Value c) {
        if (v != scaled || !isFloatConstant(c, 1.0 / std::numbers::sqrt2))
          return false;
        x = v;
        return true;
      });
    });
  });
  return x;
}

/// Whether `value` is `base` with epilogue steps applied; appends them to
/// `match`. `operandInputs[i]` says whether block argument i may be added.
bool decompose(Value value, Value base, ArrayRef<bool> operandInputs, EpilogueMatch &match) {
  if (value == base)
    return true;
  auto step = [&](Value x, int64_t code) {
    if (!decompose(x, base, operandInputs, match))
      return false;
    match.steps.push_back(code);
    return true;
  };
  auto addedInput = [&](Value v) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getArgNumber() < operandInputs.size() && operandInputs[arg.getArgNumber()])
      return arg.getArgNumber();
    return std::nullopt;
  };
  if (value.getDefiningOp<arith::AddFOp>())
    return eitherOrder<arith::AddFOp>(value, [&](Value x, Value y) {
      std::optional<unsigned> input = addedInput(y);
      if (!input || !step(x, kEpilogueAdd))
        return false;
      match.addInputs.push_back(*input);
      return true;
    });
  if (value.getDefiningOp<arith::MaximumFOp>())
    return eitherOrder<arith::MaximumFOp>(value, [&](Value x, Value zero) {
      return isFloatConstant(zero, 0.0) && step(x, kEpilogueRelu);
    });
  if (auto tanh = value.getDefiningOp<math::TanhOp>())
    return step(tanh.getOperand(), kEpilogueTanh);
  if (Value x = sigmoidArgument(value))
    return step(x, kEpilogueSigmoid);
  if (Value x = geluArgument(value))
    return step(x, kEpilogueGelu);
  return eitherOrder<arith::MulFOp>(
      value, [&](Value x, Value s) { return sigmoidArgument(s) == x && step(x, kEpilogueSilu); });
}

} // namespace

/// The buffer a view (subview, cast, reshape, transpose) reads.
Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

bool isStateBuffer(Value buffer) {
  auto arg = dyn_cast<BlockArgument>(rootBuffer(buffer));
  if (!arg || !arg.getOwner()->isEntryBlock())
    return false;
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return fn && fn.getArgAttr(arg.getArgNumber(), kStateArgAttr) != nullptr;
}

bool mayWriteAny(Operation *op, ArrayRef<Value> roots) {
  bool writes = false;
  op->walk([&](Operation *nested) {
    // Run-time shape checks write no buffer (their effect only keeps them).
    if (isa<cf::AssertOp>(nested))
      return;
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects) {
      writes |=
          !nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>() && !isa<func::ReturnOp>(nested);
      return;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value written = effect.getValue();
      writes |= !written || llvm::is_contained(roots, rootBuffer(written));
    }
  });
  return writes;
}

bool writtenBetween(Operation *from, Operation *to, ArrayRef<Value> roots) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode())
    if (mayWriteAny(op, roots))
      return true;
  return false;
}

bool matchEpilogueBody(linalg::GenericOp generic, Value base, ArrayRef<bool> addable,
                       EpilogueMatch &match) {
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return yield.getNumOperands() == 1 && decompose(yield.getOperand(0), base, addable, match) &&
         !match.steps.empty() && match.steps.size() <= kMaxEpilogueSteps;
}

} // namespace modelc::lower
