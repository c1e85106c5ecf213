//===- ConvLowering.cpp - mdl conv2d and pooling -> padded linalg.generic ==//
//
// Inputs are padded with tensor.pad. A float conv becomes linalg's named
// conv (grouped: conv_2d_ngchw_gfchw over reshaped views), which
// mdl-conv-to-runtime hands to oneDNN after bufferization; an integer conv
// is a generic over (n, c, oh, ow, window...) with strided/dilated affine
// input maps, a grouped conv selecting the input channel as
// (oc floordiv O/groups) * C/groups + c.
//
//===----------------------------------------------------------------------===//

#include "lower/LoweringUtils.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::mdl;

namespace modelc::lower {
namespace {

using utils::IteratorType;

/// Pads dims 2 and 3 of an NCHW tensor on both sides with `value`.
Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> padding, Value value) {
  if (padding[0] == 0 && padding[1] == 0)
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (int i = 0; i < 2; ++i)
    if (!ShapedType::isDynamic(shape[2 + i]))
      shape[2 + i] += 2 * padding[i];
  SmallVector<OpFoldResult> pads = {b.getIndexAttr(0), b.getIndexAttr(0),
                                    b.getIndexAttr(padding[0]), b.getIndexAttr(padding[1])};
  return tensor::PadOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()), input,
                               pads, pads, value);
}

/// Dynamic extents of an NCHW result: N from the input, C from `channels`,
/// H/W from the window formula.
SmallVector<Value> windowResultDims(OpBuilder &b, Location loc, RankedTensorType resultType,
                                    Value input, Value channelsSource, int64_t channelsDim,
                                    ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                                    ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation) {
  SmallVector<Value> dyn;
  if (resultType.isDynamicDim(0))
    dyn.push_back(dimValue(b, loc, input, 0));
  if (resultType.isDynamicDim(1))
    dyn.push_back(dimValue(b, loc, channelsSource, channelsDim));
  for (int i = 0; i < 2; ++i) {
    if (!resultType.isDynamicDim(2 + i))
      continue;
    // (in + 2p - d(k-1) - 1) / s + 1
    Value in = dimValue(b, loc, input, 2 + i);
    Value span =
        arith::ConstantIndexOp::create(b, loc, 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1);
    Value q = arith::DivUIOp::create(b, loc, arith::AddIOp::create(b, loc, in, span),
                                     arith::ConstantIndexOp::create(b, loc, stride[i]));
    dyn.push_back(arith::AddIOp::create(b, loc, q, arith::ConstantIndexOp::create(b, loc, 1)));
  }
  return dyn;
}

/// Float conv as linalg's named conv (grouped: over [N, G, C/G, H, W] views),
/// accumulating into `init` (the bias or zeros); mdl-conv-to-runtime hands
/// it to oneDNN after bufferization, and without it it becomes loops.
/// Needs static channel counts when grouped.
Value convAsNamedOp(OpBuilder &b, Location loc, Value padded, Value weight, Value init,
                    int64_t groups, ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
  auto i64Pair = [&](ArrayRef<int64_t> values) {
    return DenseIntElementsAttr::get(RankedTensorType::get({2}, b.getI64Type()), values);
  };
  auto resultType = cast<RankedTensorType>(init.getType());
  if (groups == 1)
    return linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{resultType},
                                            ValueRange{padded, weight}, ValueRange{init},
                                            i64Pair(stride), i64Pair(dilation))
        .getResult(0);
  // Split the channel dim (dim 1 of the input and result, 0 of the weight)
  // into [groups, perGroup]; the weight's static shape gives perGroup.
  auto weightType = cast<RankedTensorType>(weight.getType());
  auto splitChannels = [&](Value value, int64_t dim, int64_t perGroup) -> Value {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[dim] = perGroup;
    shape.insert(shape.begin() + dim, groups);
    SmallVector<ReassociationIndices> groupsOfDims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      groupsOfDims.push_back(d == dim ? ReassociationIndices{d, d + 1}
                                      : ReassociationIndices{d < dim ? d : d + 1});
    SmallVector<OpFoldResult> outputShape;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      outputShape.push_back(ShapedType::isDynamic(shape[d])
                                ? OpFoldResult(dimValue(b, loc, value, d <= dim ? d : d - 1))
                                : b.getIndexAttr(shape[d]));
    return tensor::ExpandShapeOp::create(b, loc,
                                         RankedTensorType::get(shape, type.getElementType()), value,
                                         groupsOfDims, outputShape);
  };
  int64_t outPerGroup = weightType.getDimSize(0) / groups, inPerGroup = weightType.getDimSize(1);
  Value groupedInit = splitChannels(init, 1, outPerGroup);
  Value conv =
      linalg::Conv2DNgchwGfchwOp::create(
          b, loc, TypeRange{groupedInit.getType()},
          ValueRange{splitChannels(padded, 1, inPerGroup), splitChannels(weight, 0, outPerGroup)},
          ValueRange{groupedInit}, i64Pair(stride), i64Pair(dilation))
          .getResult(0);
  return tensor::CollapseShapeOp::create(b, loc, resultType, conv,
                                         SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

FailureOr<Value> lowerConv2d(Conv2dOp op, Conv2dOp::Adaptor adaptor, RankedTensorType resultType,
                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Value input = adaptor.getInput(), weight = adaptor.getWeight();
  auto weightType = cast<RankedTensorType>(weight.getType());
  Type elementType = resultType.getElementType();
  int64_t groups = op.getGroups();
  if (weightType.isDynamicDim(2) || weightType.isDynamicDim(3))
    return rewriter.notifyMatchFailure(op, "kernel height and width must be static");
  int64_t outPerGroup = 1, inPerGroup = weightType.getDimSize(1);
  if (groups > 1) {
    if (weightType.isDynamicDim(0) || weightType.isDynamicDim(1))
      return rewriter.notifyMatchFailure(op, "grouped conv needs static channel counts");
    outPerGroup = weightType.getDimSize(0) / groups;
  }
  ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(), dilation = op.getDilation();
  Value padded =
      padSpatial(rewriter, loc, input, padding, scalarConstant(rewriter, loc, elementType, 0.0));

  // Output initialised with the bias (or zero); the conv accumulates into it.
  SmallVector<int64_t> kernel = {weightType.getDimSize(2), weightType.getDimSize(3)};
  SmallVector<Value> dyn = windowResultDims(rewriter, loc, resultType, input, weight, 0, kernel,
                                            stride, padding, dilation);
  Value init;
  if (Value bias = adaptor.getBias()) {
    Value empty = emptyTensor(rewriter, loc, resultType, dyn);
    AffineMap biasMap = AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
    init = linalg::GenericOp::create(
               rewriter, loc, TypeRange{resultType}, ValueRange{bias}, ValueRange{empty},
               SmallVector<AffineMap>{biasMap, AffineMap::getMultiDimIdentityMap(4, ctx)},
               SmallVector<IteratorType>(4, IteratorType::parallel),
               [](OpBuilder &b, Location l, ValueRange args) {
                 linalg::YieldOp::create(b, l, args[0]);
               })
               .getResult(0);
  } else {
    init = filledTensor(rewriter, loc, resultType, dyn,
                        scalarConstant(rewriter, loc, elementType, 0.0));
  }
  if (isa<FloatType>(elementType))
    return convAsNamedOp(rewriter, loc, padded, weight, init, groups, stride, dilation);

  // Integers: a generic over (n, oc, oh, ow | c, kh, kw).
  AffineExpr n = getAffineDimExpr(0, ctx), oc = getAffineDimExpr(1, ctx),
             oh = getAffineDimExpr(2, ctx), ow = getAffineDimExpr(3, ctx),
             c = getAffineDimExpr(4, ctx), kh = getAffineDimExpr(5, ctx),
             kw = getAffineDimExpr(6, ctx);
  AffineExpr inChannel = groups > 1 ? oc.floorDiv(outPerGroup) * inPerGroup + c : c;
  AffineMap inputMap = AffineMap::get(
      7, 0, {n, inChannel, oh * stride[0] + kh * dilation[0], ow * stride[1] + kw * dilation[1]},
      ctx);
  AffineMap weightMap = AffineMap::get(7, 0, {oc, c, kh, kw}, ctx);
  AffineMap outMap = AffineMap::get(7, 0, {n, oc, oh, ow}, ctx);
  SmallVector<IteratorType> iterators(4, IteratorType::parallel);
  iterators.append(3, IteratorType::reduction);
  return linalg::GenericOp::create(
             rewriter, loc, TypeRange{resultType}, ValueRange{padded, weight}, ValueRange{init},
             SmallVector<AffineMap>{inputMap, weightMap, outMap}, iterators,
             [&](OpBuilder &b, Location l, ValueRange args) {
               Value product = arith::MulIOp::create(b, l, args[0], args[1]);
               linalg::YieldOp::create(b, l,
                                       ValueRange{arith::AddIOp::create(b, l, args[2], product)});
             })
      .getResult(0);
}

/// Pools [N,C,H,W] with a kernel window: combine over (kh, kw) from `init`.
Value pool(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
           ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
           Value padValue, Value init, ScalarFn combine) {
  MLIRContext *ctx = b.getContext();
  Value padded = padSpatial(b, loc, input, padding, padValue);
  SmallVector<int64_t> dilation = {1, 1};
  SmallVector<Value> dyn =
      windowResultDims(b, loc, resultType, input, input, 1, kernel, stride, padding, dilation);
  Value acc = filledTensor(b, loc, resultType, dyn, init);
  Value window = tensor::EmptyOp::create(b, loc, kernel, resultType.getElementType());
  AffineExpr n = getAffineDimExpr(0, ctx), c = getAffineDimExpr(1, ctx),
             oh = getAffineDimExpr(2, ctx), ow = getAffineDimExpr(3, ctx),
             kh = getAffineDimExpr(4, ctx), kw = getAffineDimExpr(5, ctx);
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {n, c, oh * stride[0] + kh, ow * stride[1] + kw}, ctx),
      AffineMap::get(6, 0, {kh, kw}, ctx), AffineMap::get(6, 0, {n, c, oh, ow}, ctx)};
  SmallVector<IteratorType> iterators(4, IteratorType::parallel);
  iterators.append(2, IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{padded, window}, ValueRange{acc}, maps,
             iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, combine(nb, l, ValueRange{args[0], args[2]}));
             })
      .getResult(0);
}

FailureOr<Value> lowerMaxPool(MaxPool2dOp op, MaxPool2dOp::Adaptor adaptor,
                              RankedTensorType resultType, ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Type elementType = resultType.getElementType();
  if (!isa<FloatType>(elementType))
    return rewriter.notifyMatchFailure(op, "needs a float dtype");
  Value lowest = lowestValue(rewriter, loc, elementType);
  return pool(rewriter, loc, adaptor.getInput(), resultType, op.getKernel(), op.getStride(),
              op.getPadding(), lowest, lowest,
              [](OpBuilder &b, Location l, ValueRange args) -> Value {
                return arith::MaximumFOp::create(b, l, args[0], args[1]);
              });
}

/// Average pooling; padding counts in the divisor (PyTorch's default
/// count_include_pad=True).
Value averagePool(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride, ArrayRef<int64_t> padding) {
  Type elementType = resultType.getElementType();
  Value zero = scalarConstant(b, loc, elementType, 0.0);
  Value sum = pool(b, loc, input, resultType, kernel, stride, padding, zero, zero,
                   [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                     return arith::AddFOp::create(nb, l, args[0], args[1]);
                   });
  Value count = scalarConstant(b, loc, elementType, static_cast<double>(kernel[0] * kernel[1]));
  return broadcastElementwise(b, loc, resultType, {sum},
                              [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                return arith::DivFOp::create(nb, l, args[0], count);
                              });
}

FailureOr<Value> lowerAvgPool(AvgPool2dOp op, AvgPool2dOp::Adaptor adaptor,
                              RankedTensorType resultType, ConversionPatternRewriter &rewriter) {
  if (!isa<FloatType>(resultType.getElementType()))
    return rewriter.notifyMatchFailure(op, "needs a float dtype");
  return averagePool(rewriter, op.getLoc(), adaptor.getInput(), resultType, op.getKernel(),
                     op.getStride(), op.getPadding());
}

FailureOr<Value> lowerAdaptiveAvgPool(AdaptiveAvgPool2dOp op, AdaptiveAvgPool2dOp::Adaptor adaptor,
                                      RankedTensorType resultType,
                                      ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value input = adaptor.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  Type elementType = resultType.getElementType();
  if (!isa<FloatType>(elementType))
    return rewriter.notifyMatchFailure(op, "needs a float dtype");
  int64_t outH = resultType.getDimSize(2), outW = resultType.getDimSize(3);
  if (outH == 1 && outW == 1) {
    // Global average: mean over H and W, whatever their extents.
    llvm::SmallSet<int64_t, 4> dims;
    dims.insert(2);
    dims.insert(3);
    Value sum =
        reduceDims(rewriter, loc, input, dims, scalarConstant(rewriter, loc, elementType, 0),
                   [](OpBuilder &b, Location l, ValueRange args) -> Value {
                     return arith::AddFOp::create(b, l, args[0], args[1]);
                   });
    Value count = elementCount(rewriter, loc, input, {2, 3}, elementType);
    Value mean = broadcastElementwise(rewriter, loc, cast<RankedTensorType>(sum.getType()), {sum},
                                      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                                        return arith::DivFOp::create(b, l, args[0], count);
                                      });
    return keepReducedDims(rewriter, loc, mean, resultType, dims);
  }
  int64_t inH = inputType.getDimSize(2), inW = inputType.getDimSize(3);
  if (ShapedType::isDynamic(inH) || ShapedType::isDynamic(inW) || inH % outH != 0 ||
      inW % outW != 0) {
    op.emitOpError() << "cpu lowering supports adaptive pooling only to 1x1 or to an "
                        "output that evenly divides a static input";
    return failure();
  }
  SmallVector<int64_t> kernel = {inH / outH, inW / outW};
  return averagePool(rewriter, loc, input, resultType, kernel, kernel, {0, 0});
}

} // namespace

void populateConvPatterns(TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LowerWith<Conv2dOp, lowerConv2d>, LowerWith<MaxPool2dOp, lowerMaxPool>,
               LowerWith<AvgPool2dOp, lowerAvgPool>,
               LowerWith<AdaptiveAvgPool2dOp, lowerAdaptiveAvgPool>>(converter,
                                                                     patterns.getContext());
}

} // namespace modelc::lower
