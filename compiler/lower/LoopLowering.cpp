//===- LoopLowering.cpp - loops over run-time ranges to scf/tensor --------===//
//
// mlirgen emits `for t in 0..T` over a run-time T as scf.for with the carried
// tensors as iter_args, and indexing with `t` as mdl.select /
// mdl.select_scatter. Here the scf ops only change their types (the device
// encoding is dropped) and the two ops become tensor.extract_slice /
// tensor.insert_slice at clamped positions.
//
//===----------------------------------------------------------------------===//

#include "lower/LoweringUtils.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"

using namespace mlir;
using namespace mlir::mdl;

namespace modelc::lower {
namespace {

/// Python's reading of a position into a dim of `extent`: negative counts
/// from the end; then clamped into [0, extent - 1] so nothing reads or writes
/// outside the tensor.
Value clampedPosition(OpBuilder &b, Location loc, Value position, Value extent) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, position, zero);
  Value wrapped = arith::SelectOp::create(
      b, loc, negative, arith::AddIOp::create(b, loc, position, extent), position);
  Value last = arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, extent, one), zero);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, wrapped, zero), last);
}

/// Offsets, sizes and strides that address `input` at `positions` in `dims`
/// and whole everywhere else.
void selectedWindow(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> dims,
                    ValueRange positions, SmallVectorImpl<OpFoldResult> &offsets,
                    SmallVectorImpl<OpFoldResult> &sizes, SmallVectorImpl<OpFoldResult> &strides) {
  auto type = cast<RankedTensorType>(input.getType());
  for (int64_t d = 0; d < type.getRank(); ++d) {
    strides.push_back(b.getIndexAttr(1));
    const auto *it = llvm::find(dims, d);
    if (it == dims.end()) {
      offsets.push_back(b.getIndexAttr(0));
      sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(dimValue(b, loc, input, d))
                                           : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
      continue;
    }
    Value extent = type.isDynamicDim(d)
                       ? dimValue(b, loc, input, d)
                       : arith::ConstantIndexOp::create(b, loc, type.getDimSize(d)).getResult();
    offsets.push_back(clampedPosition(b, loc, positions[it - dims.begin()], extent));
    sizes.push_back(b.getIndexAttr(1));
  }
}

FailureOr<Value> lowerSelect(SelectOp op, SelectOp::Adaptor adaptor, RankedTensorType resultType,
                             ConversionPatternRewriter &rewriter) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  selectedWindow(rewriter, op.getLoc(), adaptor.getInput(), op.getDims(), adaptor.getPositions(),
                 offsets, sizes, strides);
  return tensor::ExtractSliceOp::create(rewriter, op.getLoc(), resultType, adaptor.getInput(),
                                        offsets, sizes, strides)
      .getResult();
}

FailureOr<Value> lowerSelectScatter(SelectScatterOp op, SelectScatterOp::Adaptor adaptor,
                                    RankedTensorType resultType,
                                    ConversionPatternRewriter &rewriter) {
  SmallVector<OpFoldResult> offsets, sizes, strides;
  selectedWindow(rewriter, op.getLoc(), adaptor.getInput(), op.getDims(), adaptor.getPositions(),
                 offsets, sizes, strides);
  Value inserted = tensor::InsertSliceOp::create(rewriter, op.getLoc(), adaptor.getSource(),
                                                 adaptor.getInput(), offsets, sizes, strides);
  if (inserted.getType() != resultType)
    inserted = tensor::CastOp::create(rewriter, op.getLoc(), resultType, inserted);
  return inserted;
}

/// `tensor.cast` between device tensors (mlirgen matches a loop's carried
/// types with it): the same cast without the encoding.
struct ConvertTensorCast : OpConversionPattern<tensor::CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(tensor::CastOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Type type = getTypeConverter()->convertType(op.getType());
    rewriter.replaceOpWithNewOp<tensor::CastOp>(op, type, adaptor.getSource());
    return success();
  }
};

} // namespace

void populateLoopPatterns(TypeConverter &converter, RewritePatternSet &patterns,
                          ConversionTarget &target) {
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns, target);
  patterns.add<ConvertTensorCast, LowerWith<SelectOp, lowerSelect>,
               LowerWith<SelectScatterOp, lowerSelectScatter>>(converter, patterns.getContext());
}

} // namespace modelc::lower
