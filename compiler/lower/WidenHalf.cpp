//===- WidenHalf.cpp - f16/bf16 accumulations in f32 on the cpu -----------===//
//
// The cpu patterns compute in a tensor's own element type, so an f16 matmul
// would accumulate in f16 (PyTorch, and the cuda back end, accumulate in
// f32: a 784-term f16 dot product is off by about 1e-2). Before lowering,
// each op that accumulates or normalises (matmul, conv2d, sum, mean,
// softmax, log_softmax, layer_norm, batch_norm, average pools, losses) on
// f16/bf16 gets its half operands cast to f32, runs in f32, and its result
// is cast back: one rounding to nearest even, as the cuda kernels store it.
// As on cuda, where a matmul or conv kernel applies its only elementwise
// consumer of the same shape as an epilogue (bias, activation, batch_norm)
// before it stores, that chain stays in f32 and rounds once: `relu(x @ W.T +
// b)` rounds as PyTorch's nn.Linear (addmm) + ReLU does. Other elementwise
// ops stay in the half type: each rounds its result, which is what an f32
// computation rounded per op gives.
//
//===----------------------------------------------------------------------===//

#include "lower/LoweringUtils.h"
#include "mlir/MdlDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

bool isHalf(Type element) { return isa<Float16Type, BFloat16Type>(element); }

/// `type` (a ranked tensor, device encoding kept) with element type `element`.
RankedTensorType withElement(Type type, Type element) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), element, tensor.getEncoding());
}

bool accumulatesInHalf(Operation *op) {
  if (!isa<mdl::MatmulOp, mdl::Conv2dOp, mdl::SumOp, mdl::MeanOp, mdl::SoftmaxOp, mdl::LogSoftmaxOp,
           mdl::LayerNormOp, mdl::BatchNormOp, mdl::AvgPool2dOp, mdl::AdaptiveAvgPool2dOp,
           mdl::CrossEntropyOp, mdl::NllLossOp>(op) ||
      op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && isHalf(type.getElementType());
}

/// The one user of a matmul/conv result that the cuda back end makes its
/// epilogue: an elementwise op (or batch_norm) of the same shape and dtype.
Operation *epilogueOf(Value value) {
  if (!value.hasOneUse())
    return nullptr;
  Operation *user = *value.getUsers().begin();
  if (!isa<mdl::AddOp, mdl::SubOp, mdl::MulOp, mdl::DivOp, mdl::MaxOp, mdl::MinOp, mdl::PowOp,
           mdl::ReluOp, mdl::GeluOp, mdl::SiluOp, mdl::TanhOp, mdl::SigmoidOp, mdl::ExpOp,
           mdl::LogOp, mdl::SqrtOp, mdl::SinOp, mdl::CosOp, mdl::NegOp, mdl::AbsOp,
           mdl::BatchNormOp>(user) ||
      user->getNumResults() != 1)
    return nullptr;
  auto type = cast<RankedTensorType>(value.getType());
  auto result = dyn_cast<RankedTensorType>(user->getResult(0).getType());
  if (!result || result.getShape() != type.getShape() || !isHalf(result.getElementType()))
    return nullptr;
  return user;
}

/// Casts `op`'s half operands to f32 and makes its result f32.
void computeInF32(Operation *op) {
  OpBuilder b(op);
  Type f32 = b.getF32Type();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (type && isHalf(type.getElementType()))
      operand.set(mdl::CastOp::create(b, op->getLoc(), withElement(type, f32), operand.get()));
  }
  Value result = op->getResult(0);
  result.setType(withElement(result.getType(), f32));
}

} // namespace

void widenHalfAccumulations(ModuleOp module) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (accumulatesInHalf(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    if (!accumulatesInHalf(op)) // already widened as another op's epilogue
      continue;
    Type halfElement = cast<RankedTensorType>(op->getResult(0).getType()).getElementType();
    computeInF32(op);
    Operation *last = op;
    if (isa<mdl::MatmulOp, mdl::Conv2dOp>(op))
      while (Operation *next = epilogueOf(last->getResult(0))) {
        // The user still sees the half type until it is widened itself.
        computeInF32(next);
        last = next;
      }
    Value result = last->getResult(0);
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    Value rounded =
        mdl::CastOp::create(b, last->getLoc(), withElement(result.getType(), halfElement), result);
    result.replaceAllUsesExcept(rounded, rounded.getDefiningOp());
  }
}

} // namespace modelc::lower
