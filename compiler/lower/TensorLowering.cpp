//===- TensorLowering.cpp - mdl matmul, reductions, norms, shapes -> linalg ===//
//
// 2-D matmuls (and [..., M, K] @ [K, N], collapsed to 2-D) become
// linalg.matmul so the BLAS pass can take them; batched ones of one rank
// without broadcasting a linalg.batch_matmul (batch dims merged), the rest
// a broadcasting linalg.generic. Normalisations are reductions followed by
// elementwise generics; shape ops become tensor reshapes or linalg.transpose.
//
//===----------------------------------------------------------------------===//

#include "lower/LoweringUtils.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::mdl;

namespace modelc::lower {
namespace {

llvm::SmallSet<int64_t, 4> dimSet(ArrayRef<int64_t> dims) {
  llvm::SmallSet<int64_t, 4> set;
  for (int64_t d : dims)
    set.insert(d);
  return set;
}

Value addScalars(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

/// The source of a `linalg.transpose` that swaps the last two dims and
/// keeps the others (a 2-D `W.T`, attention's `transpose(k, 2, 3)`), or null.
Value transposedSource(Value value) {
  auto transpose = value.getDefiningOp<linalg::TransposeOp>();
  if (!transpose)
    return {};
  ArrayRef<int64_t> permutation = transpose.getPermutation();
  int64_t rank = int64_t(permutation.size());
  for (int64_t d = 0; d < rank; ++d)
    if (permutation[d] != (d < rank - 2 ? d : 2 * rank - 3 - d))
      return {};
  return transpose.getInput();
}

/// A 2-D matmul. An operand that is a transpose (`x @ W.T`, PyTorch's Linear
/// layout) is read in place through a transposed indexing map instead of
/// being copied; BLAS then reads it with its transpose flag.
Value matmul2d(OpBuilder &b, Location loc, Value lhs, Value rhs, Type elementType) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto type = RankedTensorType::get({lhsType.getDimSize(0), rhsType.getDimSize(1)}, elementType);
  SmallVector<Value> dyn;
  if (type.isDynamicDim(0))
    dyn.push_back(dimValue(b, loc, lhs, 0));
  if (type.isDynamicDim(1))
    dyn.push_back(dimValue(b, loc, rhs, 1));
  Value acc = filledTensor(b, loc, type, dyn, scalarConstant(b, loc, elementType, 0.0));
  if (Value rhsSource = transposedSource(rhs))
    return linalg::MatmulTransposeBOp::create(b, loc, TypeRange{type}, ValueRange{lhs, rhsSource},
                                              ValueRange{acc})
        .getResult(0);
  if (Value lhsSource = transposedSource(lhs))
    return linalg::MatmulTransposeAOp::create(b, loc, TypeRange{type}, ValueRange{lhsSource, rhs},
                                              ValueRange{acc})
        .getResult(0);
  return linalg::MatmulOp::create(b, loc, ValueRange{lhs, rhs}, ValueRange{acc}).getResult(0);
}

FailureOr<Value> lowerMatmul(MatmulOp op, MatmulOp::Adaptor adaptor, RankedTensorType resultType,
                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  Type elementType = resultType.getElementType();
  // A dynamic contraction extent must match the other side's at run time.
  int64_t lhsK = lhsType.getRank() - 1, rhsK = rhsType.getRank() - 2;
  if (lhsType.isDynamicDim(lhsK) || rhsType.isDynamicDim(rhsK))
    assertSameExtent(rewriter, loc, dimValue(rewriter, loc, lhs, lhsK),
                     dimValue(rewriter, loc, rhs, rhsK), "the contraction dim of a matmul");
  if (lhsType.getRank() == 2 && rhsType.getRank() == 2)
    return matmul2d(rewriter, loc, lhs, rhs, elementType);

  if (rhsType.getRank() == 2) {
    // [..., M, K] @ [K, N]: fold the leading dims into M and use one 2-D matmul.
    int64_t rank = lhsType.getRank();
    ReassociationIndices rows;
    for (int64_t d = 0; d < rank - 1; ++d)
      rows.push_back(d);
    SmallVector<ReassociationIndices> groups = {rows, {rank - 1}};
    Value flat = tensor::CollapseShapeOp::create(rewriter, loc, lhs, groups);
    Value product = matmul2d(rewriter, loc, flat, rhs, elementType);
    SmallVector<OpFoldResult> shape;
    for (int64_t d = 0; d < rank - 1; ++d)
      shape.push_back(lhsType.isDynamicDim(d) ? OpFoldResult(dimValue(rewriter, loc, lhs, d))
                                              : rewriter.getIndexAttr(lhsType.getDimSize(d)));
    shape.push_back(rhsType.isDynamicDim(1) ? OpFoldResult(dimValue(rewriter, loc, rhs, 1))
                                            : rewriter.getIndexAttr(rhsType.getDimSize(1)));
    return tensor::ExpandShapeOp::create(rewriter, loc, resultType, product, groups, shape)
        .getResult();
  }

  // General batched case: loops (batch..., m, n, k) with broadcast batch dims.
  MLIRContext *ctx = rewriter.getContext();
  int64_t rank = resultType.getRank(), loops = rank + 1;
  auto operandMap = [&](RankedTensorType type, AffineExpr row, AffineExpr col) {
    SmallVector<AffineExpr> exprs;
    int64_t offset = rank - type.getRank();
    for (int64_t d = 0; d < type.getRank() - 2; ++d) {
      bool stretched = type.getDimSize(d) == 1 && resultType.getDimSize(d + offset) != 1;
      exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(d + offset, ctx));
    }
    exprs.push_back(row);
    exprs.push_back(col);
    return AffineMap::get(loops, 0, exprs, ctx);
  };
  AffineExpr m = getAffineDimExpr(rank - 2, ctx), n = getAffineDimExpr(rank - 1, ctx),
             k = getAffineDimExpr(rank, ctx);
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d < rank; ++d)
    outExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps = {operandMap(lhsType, m, k), operandMap(rhsType, k, n),
                                 AffineMap::get(loops, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);

  // Batch dims that are not a stretched static 1 must match the result's.
  for (auto [operand, type] : {std::pair{lhs, lhsType}, std::pair{rhs, rhsType}}) {
    int64_t offset = rank - type.getRank();
    for (int64_t d = 0; d < type.getRank() - 2; ++d) {
      int64_t r = d + offset;
      bool stretched = type.getDimSize(d) == 1 && resultType.getDimSize(r) != 1;
      if (stretched || (!type.isDynamicDim(d) && !resultType.isDynamicDim(r)))
        continue;
      for (auto [other, otherType] : {std::pair{lhs, lhsType}, std::pair{rhs, rhsType}}) {
        int64_t od = r - (rank - otherType.getRank());
        if (other == operand || od < 0 || od >= otherType.getRank() - 2 ||
            otherType.getDimSize(od) == 1)
          continue;
        assertSameExtent(rewriter, loc, dimValue(rewriter, loc, operand, d),
                         dimValue(rewriter, loc, other, od), "a batch dim of a matmul");
      }
    }
  }
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < rank; ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    Value extent;
    if (d == rank - 2)
      extent = dimValue(rewriter, loc, lhs, lhsType.getRank() - 2);
    else if (d == rank - 1)
      extent = dimValue(rewriter, loc, rhs, rhsType.getRank() - 1);
    for (auto [operand, type] : {std::pair{lhs, lhsType}, std::pair{rhs, rhsType}}) {
      int64_t od = d - (rank - type.getRank());
      if (!extent && od >= 0 && type.getDimSize(od) != 1)
        extent = dimValue(rewriter, loc, operand, od);
    }
    dyn.push_back(extent ? extent : Value(arith::ConstantIndexOp::create(rewriter, loc, 1)));
  }
  Value acc =
      filledTensor(rewriter, loc, resultType, dyn, scalarConstant(rewriter, loc, elementType, 0.0));
  bool stretches = false;
  for (RankedTensorType type : {lhsType, rhsType})
    for (int64_t d = 0; d + 2 < type.getRank(); ++d)
      stretches |= type.getDimSize(d) == 1 && resultType.getDimSize(d) != 1;
  if (isa<FloatType>(elementType) && lhsType.getRank() == rank && rhsType.getRank() == rank &&
      !stretches) {
    // Attention's [B, H, T, D] @ [B, H, D, S]: the batch dims merged into
    // one, a linalg.batch_matmul that the BLAS pass hands to the library
    // one matrix at a time (a loop nest here ran 10-20x slower).
    ReassociationIndices batch;
    for (int64_t d = 0; d + 2 < rank; ++d)
      batch.push_back(d);
    SmallVector<ReassociationIndices> groups = {batch, {rank - 2}, {rank - 1}};
    auto merged = [&](Value value) -> Value {
      return rank == 3 ? value : tensor::CollapseShapeOp::create(rewriter, loc, value, groups);
    };
    // A transposed operand (`q @ transpose(k, 2, 3)`) is read in place through
    // a transposed indexing map, as in matmul2d: the library reads each
    // matrix with its transpose flag instead of a strided copy being made.
    Value out = merged(acc);
    Value product;
    if (Value rhsSource = transposedSource(rhs))
      product = linalg::BatchMatmulTransposeBOp::create(rewriter, loc, TypeRange{out.getType()},
                                                        ValueRange{merged(lhs), merged(rhsSource)},
                                                        ValueRange{out})
                    .getResult(0);
    else if (Value lhsSource = transposedSource(lhs))
      product = linalg::BatchMatmulTransposeAOp::create(rewriter, loc, TypeRange{out.getType()},
                                                        ValueRange{merged(lhsSource), merged(rhs)},
                                                        ValueRange{out})
                    .getResult(0);
    else
      product = linalg::BatchMatmulOp::create(rewriter, loc, ValueRange{merged(lhs), merged(rhs)},
                                              ValueRange{out})
                    .getResult(0);
    if (rank == 3)
      return product;
    SmallVector<OpFoldResult> shape;
    for (int64_t d = 0, next = 0; d < rank; ++d)
      shape.push_back(resultType.isDynamicDim(d) ? OpFoldResult(dyn[size_t(next++)])
                                                 : rewriter.getIndexAttr(resultType.getDimSize(d)));
    return tensor::ExpandShapeOp::create(rewriter, loc, resultType, product, groups, shape)
        .getResult();
  }
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{resultType}, ValueRange{lhs, rhs}, ValueRange{acc}, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value product = isa<FloatType>(elementType)
                            ? Value(arith::MulFOp::create(b, l, args[0], args[1]))
                            : Value(arith::MulIOp::create(b, l, args[0], args[1]));
        linalg::YieldOp::create(b, l, addScalars(b, l, product, args[2]));
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

template <typename OpTy>
FailureOr<Value> lowerReduce(OpTy op, typename OpTy::Adaptor adaptor, RankedTensorType resultType,
                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value input = adaptor.getInput();
  Type elementType = resultType.getElementType();
  llvm::SmallSet<int64_t, 4> dims = dimSet(op.getDims());
  Value reduced;
  if constexpr (std::is_same_v<OpTy, ReduceMaxOp>) {
    reduced = reduceDims(rewriter, loc, input, dims, lowestValue(rewriter, loc, elementType),
                         [](OpBuilder &b, Location l, ValueRange args) -> Value {
                           if (isa<FloatType>(args[0].getType()))
                             return arith::MaximumFOp::create(b, l, args[0], args[1]);
                           return arith::MaxSIOp::create(b, l, args[0], args[1]);
                         });
  } else {
    reduced = reduceDims(rewriter, loc, input, dims, scalarConstant(rewriter, loc, elementType, 0),
                         [](OpBuilder &b, Location l, ValueRange args) {
                           return addScalars(b, l, args[0], args[1]);
                         });
  }
  if constexpr (std::is_same_v<OpTy, MeanOp>) {
    if (!isa<FloatType>(elementType))
      return rewriter.notifyMatchFailure(op, "mean needs a float dtype");
    Value count = elementCount(rewriter, loc, input, op.getDims(), elementType);
    auto type = cast<RankedTensorType>(reduced.getType());
    reduced = broadcastElementwise(rewriter, loc, type, {reduced},
                                   [&](OpBuilder &b, Location l, ValueRange args) -> Value {
                                     return arith::DivFOp::create(b, l, args[0], count);
                                   });
  }
  if (op.getKeepdim())
    return keepReducedDims(rewriter, loc, reduced, resultType, dims);
  return reduced;
}

template <typename OpTy>
FailureOr<Value> lowerSoftmax(OpTy op, typename OpTy::Adaptor adaptor, RankedTensorType,
                              ConversionPatternRewriter &rewriter) {
  if (!isa<FloatType>(op.getType().getElementType()))
    return rewriter.notifyMatchFailure(op, "needs a float dtype");
  Location loc = op.getLoc();
  if constexpr (std::is_same_v<OpTy, LogSoftmaxOp>)
    return logSoftmax(rewriter, loc, adaptor.getInput(), op.getDim());
  return softmax(rewriter, loc, adaptor.getInput(), op.getDim());
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

FailureOr<Value> lowerLayerNorm(LayerNormOp op, LayerNormOp::Adaptor adaptor,
                                RankedTensorType resultType, ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value x = adaptor.getInput();
  Type elementType = resultType.getElementType();
  if (!isa<FloatType>(elementType))
    return rewriter.notifyMatchFailure(op, "needs a float dtype");
  int64_t rank = resultType.getRank(), normRank = op.getNormalizedRank();
  SmallVector<int64_t> normDims;
  for (int64_t d = rank - normRank; d < rank; ++d)
    normDims.push_back(d);
  llvm::SmallSet<int64_t, 4> dims = dimSet(normDims);
  Value count = elementCount(rewriter, loc, x, normDims, elementType);
  Value zero = scalarConstant(rewriter, loc, elementType, 0.0);
  SmallVector<int64_t> keptShape(resultType.getShape());
  for (int64_t d : normDims)
    keptShape[d] = 1;
  auto keptType = RankedTensorType::get(keptShape, elementType);

  Value sum = reduceDims(rewriter, loc, x, dims, zero, [](OpBuilder &b, Location l, ValueRange a) {
    return addScalars(b, l, a[0], a[1]);
  });
  // Mean and scale once per normalised row, not per element (the fusion
  // keeps such broadcast producers as loops of their own).
  auto reducedType = cast<RankedTensorType>(sum.getType());
  Value mean = broadcastElementwise(rewriter, loc, reducedType, {sum},
                                    [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                      return arith::DivFOp::create(b, l, a[0], count);
                                    });
  Value meanKept = keepReducedDims(rewriter, loc, mean, keptType, dims);
  Value centered = broadcastElementwise(rewriter, loc, resultType, {x, meanKept},
                                        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                          return arith::SubFOp::create(b, l, a[0], a[1]);
                                        });
  Value squares =
      reduceDims(rewriter, loc, centered, dims, zero, [](OpBuilder &b, Location l, ValueRange a) {
        return addScalars(b, l, arith::MulFOp::create(b, l, a[0], a[0]), a[1]);
      });
  Value eps = scalarConstant(rewriter, loc, elementType, op.getEpsilon().convertToDouble());
  Value scale = broadcastElementwise(
      rewriter, loc, reducedType, {squares}, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value variance = arith::DivFOp::create(b, l, a[0], count);
        return math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, variance, eps));
      });
  Value scaleKept = keepReducedDims(rewriter, loc, scale, keptType, dims);
  SmallVector<Value> operands = {centered, scaleKept};
  if (adaptor.getWeight())
    operands.push_back(adaptor.getWeight());
  if (adaptor.getBias())
    operands.push_back(adaptor.getBias());
  bool hasWeight = static_cast<bool>(adaptor.getWeight()),
       hasBias = static_cast<bool>(adaptor.getBias());
  return broadcastElementwise(rewriter, loc, resultType, operands,
                              [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                                Value y = arith::MulFOp::create(b, l, a[0], a[1]);
                                if (hasWeight)
                                  y = arith::MulFOp::create(b, l, y, a[2]);
                                if (hasBias)
                                  y = arith::AddFOp::create(b, l, y, a[hasWeight ? 3 : 2]);
                                return y;
                              });
}

/// Views a per-channel [C] tensor as [C, 1, ...] so it broadcasts over NC....
Value channelView(OpBuilder &b, Location loc, Value param, int64_t trailing) {
  auto type = cast<RankedTensorType>(param.getType());
  SmallVector<int64_t> shape = {type.getDimSize(0)};
  shape.append(trailing, 1);
  ReassociationIndices all;
  for (int64_t d = 0; d <= trailing; ++d)
    all.push_back(d);
  SmallVector<OpFoldResult> outShape = {type.isDynamicDim(0)
                                            ? OpFoldResult(dimValue(b, loc, param, 0))
                                            : b.getIndexAttr(type.getDimSize(0))};
  outShape.append(trailing, b.getIndexAttr(1));
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()),
                                       param, SmallVector<ReassociationIndices>{all}, outShape);
}

FailureOr<Value> lowerBatchNorm(BatchNormOp op, BatchNormOp::Adaptor adaptor,
                                RankedTensorType resultType, ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Type elementType = resultType.getElementType();
  if (!isa<FloatType>(elementType))
    return rewriter.notifyMatchFailure(op, "needs a float dtype");
  int64_t trailing = resultType.getRank() - 2;
  // 1 / sqrt(var + eps) once per channel, not per element.
  Value eps = scalarConstant(rewriter, loc, elementType, op.getEpsilon().convertToDouble());
  Value runningVar = adaptor.getRunningVar();
  Value scale = broadcastElementwise(
      rewriter, loc, cast<RankedTensorType>(runningVar.getType()), {runningVar},
      [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, a[0], eps));
      });
  SmallVector<Value> operands = {adaptor.getInput(),
                                 channelView(rewriter, loc, adaptor.getRunningMean(), trailing),
                                 channelView(rewriter, loc, scale, trailing)};
  bool hasWeight = static_cast<bool>(adaptor.getWeight()),
       hasBias = static_cast<bool>(adaptor.getBias());
  if (hasWeight)
    operands.push_back(channelView(rewriter, loc, adaptor.getWeight(), trailing));
  if (hasBias)
    operands.push_back(channelView(rewriter, loc, adaptor.getBias(), trailing));
  return broadcastElementwise(
      rewriter, loc, resultType, operands, [&](OpBuilder &b, Location l, ValueRange a) -> Value {
        Value y = arith::MulFOp::create(b, l, arith::SubFOp::create(b, l, a[0], a[1]), a[2]);
        if (hasWeight)
          y = arith::MulFOp::create(b, l, y, a[3]);
        if (hasBias)
          y = arith::AddFOp::create(b, l, y, a[hasWeight ? 4 : 3]);
        return y;
      });
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

FailureOr<Value> lowerReshape(ReshapeOp op, ReshapeOp::Adaptor adaptor, RankedTensorType resultType,
                              ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value input = adaptor.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  // Inserting or merging dims (unsqueeze, squeeze, flatten) keeps every
  // dynamic dim tied to its input dim, however many there are.
  std::optional<SmallVector<ReassociationIndices>> groups = op.getReassociation();
  if (groups) {
    if (resultType.getRank() < inputType.getRank())
      return tensor::CollapseShapeOp::create(rewriter, loc, resultType, input, *groups).getResult();
    SmallVector<OpFoldResult> shape;
    for (auto [inputDim, group] : llvm::enumerate(*groups))
      for (int64_t d : group)
        shape.push_back(resultType.isDynamicDim(d)
                            ? OpFoldResult(dimValue(rewriter, loc, input, inputDim))
                            : rewriter.getIndexAttr(resultType.getDimSize(d)));
    // A 0-dim input has no groups: its result dims are all 1 (`stack` of
    // 0-dim tensors unsqueezes each).
    if (inputType.getRank() == 0)
      for (int64_t d = 0; d < resultType.getRank(); ++d)
        shape.push_back(rewriter.getIndexAttr(resultType.getDimSize(d)));
    return tensor::ExpandShapeOp::create(rewriter, loc, resultType, input, *groups, shape)
        .getResult();
  }
  // Flatten to 1-D, then expand to the target shape.
  Value flat = input;
  if (inputType.getRank() == 0) {
    flat = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({1}, inputType.getElementType()), input,
        SmallVector<ReassociationIndices>{}, SmallVector<OpFoldResult>{rewriter.getIndexAttr(1)});
  } else if (inputType.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t d = 0; d < inputType.getRank(); ++d)
      all.push_back(d);
    flat = tensor::CollapseShapeOp::create(rewriter, loc, input,
                                           SmallVector<ReassociationIndices>{all});
  }
  if (resultType.getRank() == 0)
    return tensor::CollapseShapeOp::create(rewriter, loc, resultType, flat,
                                           SmallVector<ReassociationIndices>{})
        .getResult();
  if (resultType.getRank() == 1)
    return tensor::CastOp::create(rewriter, loc, resultType, flat).getResult();
  SmallVector<OpFoldResult> shape;
  int64_t staticProduct = 1;
  for (int64_t d : resultType.getShape())
    if (!ShapedType::isDynamic(d))
      staticProduct *= d;
  for (int64_t d : resultType.getShape()) {
    if (!ShapedType::isDynamic(d)) {
      shape.push_back(rewriter.getIndexAttr(d));
      continue;
    }
    Value total = dimValue(rewriter, loc, flat, 0);
    shape.push_back(arith::DivUIOp::create(rewriter, loc, total,
                                           arith::ConstantIndexOp::create(
                                               rewriter, loc, std::max<int64_t>(staticProduct, 1)))
                        .getResult());
  }
  // expand_shape wants a dynamic source when a result dim is dynamic.
  if (!resultType.hasStaticShape() && cast<RankedTensorType>(flat.getType()).hasStaticShape())
    flat = tensor::CastOp::create(
        rewriter, loc, RankedTensorType::get({ShapedType::kDynamic}, inputType.getElementType()),
        flat);
  ReassociationIndices all;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    all.push_back(d);
  return tensor::ExpandShapeOp::create(rewriter, loc, resultType, flat,
                                       SmallVector<ReassociationIndices>{all}, shape)
      .getResult();
}

Value permute(OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
              ArrayRef<int64_t> perm) {
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      dyn.push_back(dimValue(b, loc, input, perm[d]));
  Value init = emptyTensor(b, loc, resultType, dyn);
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

FailureOr<Value> lowerTranspose(TransposeOp op, TransposeOp::Adaptor adaptor,
                                RankedTensorType resultType, ConversionPatternRewriter &rewriter) {
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    perm.push_back(d);
  std::swap(perm[op.getDim0()], perm[op.getDim1()]);
  return permute(rewriter, op.getLoc(), adaptor.getInput(), resultType, perm);
}

FailureOr<Value> lowerPermute(PermuteOp op, PermuteOp::Adaptor adaptor, RankedTensorType resultType,
                              ConversionPatternRewriter &rewriter) {
  return permute(rewriter, op.getLoc(), adaptor.getInput(), resultType, op.getPermutation());
}

FailureOr<Value> lowerConcat(ConcatOp op, ConcatOp::Adaptor adaptor, RankedTensorType resultType,
                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  int64_t dim = op.getDim(), rank = resultType.getRank();
  ValueRange inputs = adaptor.getInputs();
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < rank; ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    if (d != dim) {
      dyn.push_back(dimValue(rewriter, loc, inputs[0], d));
      continue;
    }
    Value total = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (Value input : inputs)
      total = arith::AddIOp::create(rewriter, loc, total, dimValue(rewriter, loc, input, dim));
    dyn.push_back(total);
  }
  Value result = emptyTensor(rewriter, loc, resultType, dyn);
  Value offset = arith::ConstantIndexOp::create(rewriter, loc, 0);
  for (Value input : inputs) {
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1));
    offsets[dim] = offset;
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, input);
    result = tensor::InsertSliceOp::create(rewriter, loc, input, result, offsets, sizes, strides);
    offset = arith::AddIOp::create(rewriter, loc, offset, dimValue(rewriter, loc, input, dim));
  }
  return result;
}

/// Python bound `v` of a dim of `size`: negative counts from the end, then
/// clamped into [0, size - lastOffset].
OpFoldResult pythonBound(OpBuilder &b, Location loc, int64_t v, Value size, int64_t staticSize,
                         int64_t lastOffset) {
  if (!ShapedType::isDynamic(staticSize)) {
    int64_t bound = v < 0 ? v + staticSize : v;
    return b.getIndexAttr(
        std::clamp<int64_t>(bound, 0, std::max<int64_t>(staticSize - lastOffset, 0)));
  }
  // The common bounds without clamping arithmetic (a dim's extent is never
  // negative): later analyses (one-shot bufferization's slice equivalence)
  // then compare plain values; min/max chains made a deep LSTM's compile
  // time grow with the cube of its layers.
  if (v == 0)
    return b.getIndexAttr(0);
  if (v == std::numeric_limits<int64_t>::max() && lastOffset == 0)
    return size; // `x[a:]`
  Value raw = arith::ConstantIndexOp::create(b, loc, v);
  if (v < 0)
    raw = arith::AddIOp::create(b, loc, size, raw);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value high =
      arith::SubIOp::create(b, loc, size, arith::ConstantIndexOp::create(b, loc, lastOffset));
  high = arith::MaxSIOp::create(b, loc, high, zero);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, raw, zero), high)
      .getResult();
}

FailureOr<Value> lowerSlice(SliceOp op, SliceOp::Adaptor adaptor, RankedTensorType resultType,
                            ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value input = adaptor.getInput();
  auto inputType = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < inputType.getRank(); ++d) {
    int64_t staticSize = inputType.getDimSize(d);
    Value size = inputType.isDynamicDim(d) ? dimValue(rewriter, loc, input, d) : Value();
    if (llvm::is_contained(op.getIndexDims(), d)) {
      // One position, clamped so that even a bad index reads inside the dim.
      offsets.push_back(pythonBound(rewriter, loc, op.getStarts()[d], size, staticSize, 1));
      sizes.push_back(rewriter.getIndexAttr(1));
      strides.push_back(rewriter.getIndexAttr(1));
      continue;
    }
    int64_t step = op.getSteps()[d];
    OpFoldResult start = pythonBound(rewriter, loc, op.getStarts()[d], size, staticSize, 0);
    offsets.push_back(start);
    strides.push_back(rewriter.getIndexAttr(step));
    if (!ShapedType::isDynamic(staticSize)) {
      sizes.push_back(rewriter.getIndexAttr(op.slicedExtent(d, staticSize)));
      continue;
    }
    OpFoldResult endBound = pythonBound(rewriter, loc, op.getEnds()[d], size, staticSize, 0);
    if (isConstantIntValue(start, 0) && step == 1) {
      sizes.push_back(endBound); // both bounds in [0, size]: the span is the end
      continue;
    }
    // ceil(max(end - start, 0) / step)
    Value end = getValueOrCreateConstantIndexOp(rewriter, loc, endBound);
    Value span = arith::SubIOp::create(rewriter, loc, end,
                                       getValueOrCreateConstantIndexOp(rewriter, loc, start));
    span = arith::MaxSIOp::create(rewriter, loc, span,
                                  arith::ConstantIndexOp::create(rewriter, loc, 0));
    sizes.push_back(arith::CeilDivSIOp::create(rewriter, loc, span,
                                               arith::ConstantIndexOp::create(rewriter, loc, step))
                        .getResult());
  }
  return tensor::ExtractSliceOp::create(rewriter, loc, resultType, input, offsets, sizes, strides)
      .getResult();
}

//===----------------------------------------------------------------------===//
// Indexing: out-of-range indices are clamped, so bad data cannot read
// outside the tensor.
//===----------------------------------------------------------------------===//

Value clampedIndex(OpBuilder &b, Location loc, Value raw, Value extent) {
  Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           convertScalar(b, loc, raw, b.getI64Type()));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value last = arith::SubIOp::create(b, loc, extent, arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, index, zero), last);
}

/// A generic over the result whose body reads `source` at computed indices.
Value gatherGeneric(OpBuilder &b, Location loc, RankedTensorType resultType, Value indexTensor,
                    AffineMap indexMap, ValueRange dynamicDims,
                    llvm::function_ref<Value(OpBuilder &, Location, Value, ArrayRef<Value>)> body) {
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  Value init = emptyTensor(b, loc, resultType, dynamicDims);
  SmallVector<AffineMap> maps = {indexMap, AffineMap::getMultiDimIdentityMap(rank, ctx)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(b, loc, TypeRange{resultType}, ValueRange{indexTensor},
                                   ValueRange{init}, maps, iterators,
                                   [&](OpBuilder &nb, Location nl, ValueRange args) {
                                     SmallVector<Value> loopIndices;
                                     for (int64_t d = 0; d < rank; ++d)
                                       loopIndices.push_back(linalg::IndexOp::create(nb, nl, d));
                                     linalg::YieldOp::create(nb, nl,
                                                             body(nb, nl, args[0], loopIndices));
                                   })
      .getResult(0);
}

SmallVector<Value> resultDynamicDims(OpBuilder &b, Location loc, RankedTensorType resultType,
                                     llvm::function_ref<Value(int64_t)> extentOf) {
  SmallVector<Value> dyn;
  for (int64_t d = 0; d < resultType.getRank(); ++d)
    if (resultType.isDynamicDim(d))
      dyn.push_back(extentOf(d));
  (void)b;
  (void)loc;
  return dyn;
}

FailureOr<Value> lowerEmbedding(EmbeddingOp op, EmbeddingOp::Adaptor adaptor,
                                RankedTensorType resultType, ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value weight = adaptor.getWeight(), indices = adaptor.getIndices();
  int64_t rank = resultType.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank - 1; ++d)
    exprs.push_back(getAffineDimExpr(d, rewriter.getContext()));
  AffineMap indexMap = AffineMap::get(rank, 0, exprs, rewriter.getContext());
  Value vocab = dimValue(rewriter, loc, weight, 0);
  SmallVector<Value> dyn = resultDynamicDims(rewriter, loc, resultType, [&](int64_t d) {
    return d == rank - 1 ? dimValue(rewriter, loc, weight, 1) : dimValue(rewriter, loc, indices, d);
  });
  return gatherGeneric(
      rewriter, loc, resultType, indices, indexMap, dyn,
      [&](OpBuilder &b, Location l, Value raw, ArrayRef<Value> loop) -> Value {
        Value row = clampedIndex(b, l, raw, vocab);
        return tensor::ExtractOp::create(b, l, weight, ValueRange{row, loop.back()});
      });
}

FailureOr<Value> lowerGather(GatherOp op, GatherOp::Adaptor adaptor, RankedTensorType resultType,
                             ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value input = adaptor.getInput(), index = adaptor.getIndex();
  int64_t dim = op.getDim();
  Value extent = dimValue(rewriter, loc, input, dim);
  AffineMap identity =
      AffineMap::getMultiDimIdentityMap(resultType.getRank(), rewriter.getContext());
  SmallVector<Value> dyn = resultDynamicDims(
      rewriter, loc, resultType, [&](int64_t d) { return dimValue(rewriter, loc, index, d); });
  return gatherGeneric(rewriter, loc, resultType, index, identity, dyn,
                       [&](OpBuilder &b, Location l, Value raw, ArrayRef<Value> loop) -> Value {
                         SmallVector<Value> at(loop);
                         at[dim] = clampedIndex(b, l, raw, extent);
                         return tensor::ExtractOp::create(b, l, input, at);
                       });
}

FailureOr<Value> lowerIndexSelect(IndexSelectOp op, IndexSelectOp::Adaptor adaptor,
                                  RankedTensorType resultType,
                                  ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value input = adaptor.getInput(), index = adaptor.getIndex();
  int64_t dim = op.getDim();
  Value extent = dimValue(rewriter, loc, input, dim);
  AffineMap indexMap =
      AffineMap::get(resultType.getRank(), 0, {getAffineDimExpr(dim, rewriter.getContext())},
                     rewriter.getContext());
  SmallVector<Value> dyn = resultDynamicDims(rewriter, loc, resultType, [&](int64_t d) {
    return d == dim ? dimValue(rewriter, loc, index, 0) : dimValue(rewriter, loc, input, d);
  });
  return gatherGeneric(rewriter, loc, resultType, index, indexMap, dyn,
                       [&](OpBuilder &b, Location l, Value raw, ArrayRef<Value> loop) -> Value {
                         SmallVector<Value> at(loop);
                         at[dim] = clampedIndex(b, l, raw, extent);
                         return tensor::ExtractOp::create(b, l, input, at);
                       });
}

//===----------------------------------------------------------------------===//
// Losses: nll(i) = -w[t_i] * logp[i, t_i]; mean divides by sum(w[t_i]).
//===----------------------------------------------------------------------===//

Value nllLoss(OpBuilder &b, Location loc, Value logProbs, Value target, Value weight,
              StringRef reduction, RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(logProbs.getType());
  Type elementType = type.getElementType();
  MLIRContext *ctx = b.getContext();
  Value classes = dimValue(b, loc, logProbs, 1);
  auto pickedLoss = [&](OpBuilder &nb, Location l, Value raw, Value row,
                        Value &sampleWeight) -> Value {
    Value cls = clampedIndex(nb, l, raw, classes);
    Value logp = tensor::ExtractOp::create(nb, l, logProbs, ValueRange{row, cls});
    sampleWeight = weight ? Value(tensor::ExtractOp::create(nb, l, weight, ValueRange{cls}))
                          : scalarConstant(nb, l, elementType, 1.0);
    return arith::NegFOp::create(nb, l, arith::MulFOp::create(nb, l, sampleWeight, logp));
  };
  AffineMap id1 = AffineMap::getMultiDimIdentityMap(1, ctx);
  if (reduction == "none") {
    SmallVector<Value> dyn;
    if (resultType.isDynamicDim(0))
      dyn.push_back(dimValue(b, loc, target, 0));
    return gatherGeneric(b, loc, resultType, target, id1, dyn,
                         [&](OpBuilder &nb, Location l, Value raw, ArrayRef<Value> loop) {
                           Value w;
                           return pickedLoss(nb, l, raw, loop[0], w);
                         });
  }
  auto scalarType = RankedTensorType::get({}, elementType);
  Value zero = scalarConstant(b, loc, elementType, 0.0);
  Value lossAcc = filledTensor(b, loc, scalarType, {}, zero);
  Value weightAcc = filledTensor(b, loc, scalarType, {}, zero);
  AffineMap toScalar = AffineMap::get(1, 0, {}, ctx);
  auto sums = linalg::GenericOp::create(
      b, loc, TypeRange{scalarType, scalarType}, ValueRange{target}, ValueRange{lossAcc, weightAcc},
      SmallVector<AffineMap>{id1, toScalar, toScalar},
      SmallVector<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value w;
        Value loss = pickedLoss(nb, l, args[0], linalg::IndexOp::create(nb, l, 0), w);
        linalg::YieldOp::create(nb, l,
                                ValueRange{arith::AddFOp::create(nb, l, args[1], loss),
                                           arith::AddFOp::create(nb, l, args[2], w)});
      });
  if (reduction == "sum")
    return sums.getResult(0);
  return broadcastElementwise(b, loc, scalarType, {sums.getResult(0), sums.getResult(1)},
                              [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                                return arith::DivFOp::create(nb, l, a[0], a[1]);
                              });
}

template <typename OpTy>
FailureOr<Value> lowerLoss(OpTy op, typename OpTy::Adaptor adaptor, RankedTensorType resultType,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value logProbs = adaptor.getInput();
  if constexpr (std::is_same_v<OpTy, CrossEntropyOp>)
    logProbs = logSoftmax(rewriter, loc, logProbs, 1);
  return nllLoss(rewriter, loc, logProbs, adaptor.getTarget(), adaptor.getWeight(),
                 op.getReduction(), resultType);
}

} // namespace

void populateTensorPatterns(TypeConverter &converter, RewritePatternSet &patterns) {
  patterns
      .add<LowerWith<MatmulOp, lowerMatmul>, LowerWith<SumOp, lowerReduce<SumOp>>,
           LowerWith<MeanOp, lowerReduce<MeanOp>>, LowerWith<ReduceMaxOp, lowerReduce<ReduceMaxOp>>,
           LowerWith<SoftmaxOp, lowerSoftmax<SoftmaxOp>>,
           LowerWith<LogSoftmaxOp, lowerSoftmax<LogSoftmaxOp>>,
           LowerWith<LayerNormOp, lowerLayerNorm>, LowerWith<BatchNormOp, lowerBatchNorm>,
           LowerWith<ReshapeOp, lowerReshape>, LowerWith<TransposeOp, lowerTranspose>,
           LowerWith<PermuteOp, lowerPermute>, LowerWith<ConcatOp, lowerConcat>,
           LowerWith<SliceOp, lowerSlice>, LowerWith<EmbeddingOp, lowerEmbedding>,
           LowerWith<GatherOp, lowerGather>, LowerWith<IndexSelectOp, lowerIndexSelect>,
           LowerWith<CrossEntropyOp, lowerLoss<CrossEntropyOp>>,
           LowerWith<NllLossOp, lowerLoss<NllLossOp>>>(converter, patterns.getContext());
}

} // namespace modelc::lower
