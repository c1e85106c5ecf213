//===- ExpandDynamicReshapes.cpp - memref.expand_shape -> reinterpret_cast ===//
//
// MLIR 22's `expand-strided-metadata` derives each dynamic size of a
// `memref.expand_shape` as "source size / product of the group's static
// sizes", so a reassociation group with two or more dynamic dims (`[B*T, d]`
// back to `[B, T, d]`, which matmul and reshape lowering and elementwise
// fusion all produce) leaves a null size and the pass crashes inside
// memref::ReinterpretCastOp::build. This pass runs first and rewrites exactly
// those expand_shapes into `memref.reinterpret_cast` over the source's
// strided metadata, using the op's own `output_shape` operands: within a
// group the last dim keeps the source stride and each earlier dim strides
// over the sizes after it.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace modelc::lower {
namespace {

bool hasMultiDynamicGroup(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) > 1)
      return true;
  return false;
}

/// An index value for `ofr`, materialising attributes as constants.
Value toValue(OpBuilder &b, Location loc, OpFoldResult ofr) {
  if (auto value = dyn_cast<Value>(ofr))
    return value;
  return arith::ConstantIndexOp::create(b, loc, getConstantIntValue(ofr).value_or(0));
}

/// `value` as an attribute when the result type has the extent statically.
OpFoldResult asStaticIfKnown(OpBuilder &b, int64_t known, Value value) {
  if (!ShapedType::isDynamic(known))
    return b.getIndexAttr(known);
  return value;
}

struct ExpandMultiDynamicGroups : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasMultiDynamicGroup(op))
      return failure();
    MemRefType resultType = op.getResultType();
    SmallVector<int64_t> resultStrides;
    int64_t resultOffset;
    if (failed(resultType.getStridesAndOffset(resultStrides, resultOffset)))
      return rewriter.notifyMatchFailure(op, "result layout is not strided");

    Location loc = op.getLoc();
    auto metadata = memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    SmallVector<OpFoldResult> outputShape = op.getMixedOutputShape();
    SmallVector<OpFoldResult> sizes(resultType.getRank()), strides(resultType.getRank());
    for (auto [sourceDim, group] : llvm::enumerate(op.getReassociationIndices())) {
      Value stride = metadata.getStrides()[sourceDim];
      for (int64_t d : llvm::reverse(group)) {
        Value size = toValue(rewriter, loc, outputShape[d]);
        sizes[d] = asStaticIfKnown(rewriter, resultType.getDimSize(d), size);
        strides[d] = asStaticIfKnown(rewriter, resultStrides[d], stride);
        stride = arith::MulIOp::create(rewriter, loc, stride, size);
      }
    }
    OpFoldResult offset = asStaticIfKnown(rewriter, resultOffset, metadata.getOffset());
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(op, resultType, metadata.getBaseBuffer(),
                                                           offset, sizes, strides);
    return success();
  }
};

struct ExpandDynamicReshapesPass : PassWrapper<ExpandDynamicReshapesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandDynamicReshapesPass)

  StringRef getArgument() const final { return "mdl-expand-dynamic-reshapes"; }
  StringRef getDescription() const final {
    return "Rewrite memref.expand_shape with several dynamic dims in one group "
           "(which expand-strided-metadata cannot handle) to memref.reinterpret_cast";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect, arith::ArithDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandMultiDynamicGroups>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createExpandDynamicReshapesPass() {
  return std::make_unique<ExpandDynamicReshapesPass>();
}

} // namespace modelc::lower
