//===- FoldBatchNorm.cpp - batch_norm(conv2d(x, w, b)) as one conv2d ------===//
//
// In inference a batch norm after a convolution is a per-channel scale and
// shift of the conv's output, so it folds into the conv's weights and bias:
//
//   s  = weight / sqrt(running_var + eps)          (1 / sqrt(...) without weight)
//   w' = w * s[o]                                   for every output channel o
//   b' = (b - running_mean) * s + bias              (b = 0 without a conv bias)
//
// as torch.nn.utils.fuse_conv_bn_eval and TorchScript's freeze do. The
// weights are the model's inputs here, not constants, so the fold is
// computed on each call: O x C x KH x KW multiplies (73k for ResNet's
// 64->128 3x3 conv) instead of a full pass over the conv's output (524k
// elements at batch 64), which then runs as the conv library call's bias
// (and activation) while each block is in cache (mdl-conv-to-runtime).
// f32 only: the half types keep their own rounding (WidenHalf).
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

RankedTensorType like(RankedTensorType type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType(), type.getEncoding());
}

/// The conv a batch norm reads, when the fold applies: an f32 conv2d whose
/// only user is the norm, with per-channel statistics of its channel count.
mdl::Conv2dOp foldableConv(mdl::BatchNormOp norm) {
  auto conv = norm.getInput().getDefiningOp<mdl::Conv2dOp>();
  if (!conv || !conv->hasOneUse())
    return {};
  auto type = cast<RankedTensorType>(conv.getResult().getType());
  auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
  if (!type.getElementType().isF32() || type.getRank() != 4 || weightType.getRank() != 4 ||
      weightType.isDynamicDim(0))
    return {};
  int64_t channels = weightType.getDimSize(0);
  for (Value perChannel :
       {norm.getRunningMean(), norm.getRunningVar(), norm.getWeight(), norm.getBias()}) {
    if (!perChannel)
      continue;
    auto perChannelType = cast<RankedTensorType>(perChannel.getType());
    if (perChannelType.getRank() != 1 || perChannelType.getDimSize(0) != channels ||
        !perChannelType.getElementType().isF32())
      return {};
  }
  return conv;
}

void foldIntoConv(mdl::BatchNormOp norm, mdl::Conv2dOp conv) {
  OpBuilder b(norm);
  Location loc = norm.getLoc();
  auto channelType = cast<RankedTensorType>(norm.getRunningVar().getType());
  auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
  auto scalarType = like(channelType, {});
  auto scalar = [&](double value) {
    return mdl::FullOp::create(b, loc, scalarType, ValueRange(), b.getF64FloatAttr(value));
  };
  Value root = mdl::SqrtOp::create(b, loc, channelType,
                                   mdl::AddOp::create(b, loc, channelType, norm.getRunningVar(),
                                                      scalar(norm.getEpsilon().convertToDouble())));
  Value scale = mdl::DivOp::create(b, loc, channelType,
                                   norm.getWeight() ? norm.getWeight() : Value(scalar(1.0)), root);
  Value scaleColumn = mdl::ReshapeOp::create(
      b, loc, like(channelType, {channelType.getDimSize(0), 1, 1, 1}), scale);
  Value weight = mdl::MulOp::create(b, loc, weightType, conv.getWeight(), scaleColumn);
  Value centred =
      conv.getBias()
          ? Value(mdl::SubOp::create(b, loc, channelType, conv.getBias(), norm.getRunningMean()))
          : Value(mdl::NegOp::create(b, loc, channelType, norm.getRunningMean()));
  Value shift = mdl::MulOp::create(b, loc, channelType, centred, scale);
  if (norm.getBias())
    shift = mdl::AddOp::create(b, loc, channelType, shift, norm.getBias());
  auto folded = mdl::Conv2dOp::create(b, loc, norm.getResult().getType(), conv.getInput(), weight,
                                      shift, conv.getStrideAttr(), conv.getPaddingAttr(),
                                      conv.getDilationAttr(), conv.getGroupsAttr());
  norm.getResult().replaceAllUsesWith(folded.getResult());
  norm.erase();
  conv.erase();
}

struct FoldBatchNormPass : PassWrapper<FoldBatchNormPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldBatchNormPass)

  StringRef getArgument() const final { return "mdl-fold-batch-norm"; }
  StringRef getDescription() const final {
    return "Fold an f32 mdl.batch_norm into the mdl.conv2d it normalises (scaled weights, "
           "shifted bias)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<mdl::MdlDialect>();
  }

  void runOnOperation() override {
    SmallVector<std::pair<mdl::BatchNormOp, mdl::Conv2dOp>> folds;
    getOperation().walk([&](mdl::BatchNormOp norm) {
      if (mdl::Conv2dOp conv = foldableConv(norm))
        folds.emplace_back(norm, conv);
    });
    for (auto [norm, conv] : folds)
      foldIntoConv(norm, conv);
  }
};

} // namespace

std::unique_ptr<Pass> createFoldBatchNormPass() { return std::make_unique<FoldBatchNormPass>(); }

} // namespace modelc::lower
