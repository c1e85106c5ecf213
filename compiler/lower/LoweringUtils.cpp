//===- LoweringUtils.cpp - helpers shared by the mdl -> linalg patterns ---===//

#include "lower/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/AffineMap.h"

#include <limits>

using namespace mlir;

namespace modelc::lower {

Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, tensor, dim);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicDims) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicDims);
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicDims,
                   Value value) {
  Value empty = emptyTensor(b, loc, type, dynamicDims);
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value lowestValue(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(floatType, -std::numeric_limits<double>::infinity()));
  auto intType = cast<IntegerType>(type);
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, APInt::getSignedMinValue(intType.getWidth())));
}

Value convertScalar(OpBuilder &b, Location loc, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from), toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, value);
    return arith::TruncFOp::create(b, loc, to, value);
  }
  if (fromFloat) {
    if (to.isInteger(1))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   scalarConstant(b, loc, from, 0.0));
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  if (toFloat) {
    if (from.isInteger(1))
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  if (to.isInteger(1))
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 scalarConstant(b, loc, from, 0.0));
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, to, value);
  if (from.isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, value);
  return arith::ExtSIOp::create(b, loc, to, value);
}

Value indexToScalar(OpBuilder &b, Location loc, Value index, Type to) {
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return convertScalar(b, loc, asInt, to);
}

Value broadcastElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                           ValueRange operands, ScalarFn body) {
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t offset = rank - type.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      bool stretched = type.getDimSize(d) == 1 && resultType.getDimSize(d + offset) != 1;
      exprs.push_back(stretched ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(d + offset, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));

  // A dynamic result extent comes from an operand that is not stretched there.
  SmallVector<Value> dynamicDims, resultExtents;
  for (int64_t r = 0; r < rank; ++r) {
    if (!resultType.isDynamicDim(r)) {
      resultExtents.push_back({});
      continue;
    }
    Value extent;
    for (Value operand : operands) {
      auto type = cast<RankedTensorType>(operand.getType());
      int64_t d = r - (rank - type.getRank());
      if (d >= 0 && type.getDimSize(d) != 1) {
        extent = dimValue(b, loc, operand, d);
        break;
      }
    }
    dynamicDims.push_back(extent ? extent : arith::ConstantIndexOp::create(b, loc, 1));
    resultExtents.push_back(dynamicDims.back());
  }
  // Only a static 1 stretches, so every other operand dim is read at each
  // result index: where either side is dynamic, their extents must agree at
  // run time (the checker guarantees it for inputs that fit the signature).
  for (Value operand : operands) {
    auto type = cast<RankedTensorType>(operand.getType());
    int64_t offset = rank - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t r = d + offset;
      bool stretched = type.getDimSize(d) == 1 && resultType.getDimSize(r) != 1;
      if (stretched || (!type.isDynamicDim(d) && !resultType.isDynamicDim(r)))
        continue;
      Value extent = dimValue(b, loc, operand, d);
      Value expected = resultType.isDynamicDim(r)
                           ? resultExtents[r]
                           : arith::ConstantIndexOp::create(b, loc, resultType.getDimSize(r));
      assertSameExtent(b, loc, extent, expected, "an elementwise operand");
    }
  }
  Value init = emptyTensor(b, loc, resultType, dynamicDims);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

/// Whether two index values are the same extent by construction: one value,
/// equal constants, or `tensor.dim` of one tensor at one dim.
static bool provablySame(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> ka = getConstantIntValue(a), kb = getConstantIntValue(b);
  if (ka && kb)
    return *ka == *kb;
  auto da = a.getDefiningOp<tensor::DimOp>(), db = b.getDefiningOp<tensor::DimOp>();
  return da && db && da.getSource() == db.getSource() && da.getConstantIndex() &&
         da.getConstantIndex() == db.getConstantIndex();
}

void assertSameExtent(OpBuilder &b, Location loc, Value actual, Value expected, StringRef what) {
  if (provablySame(actual, expected))
    return;
  Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, actual, expected);
  cf::AssertOp::create(b, loc, same,
                       (llvm::Twine(kShapeMismatchMessage) + ": " + what +
                        " has a dynamic extent that differs from the one it must match")
                           .str());
}

Value reduceDims(OpBuilder &b, Location loc, Value input, const llvm::SmallSet<int64_t, 4> &dims,
                 Value init, ScalarFn combine) {
  auto inputType = cast<RankedTensorType>(input.getType());
  MLIRContext *ctx = b.getContext();
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> shape;
  SmallVector<Value> dynamicDims;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    if (dims.contains(d)) {
      iterators.push_back(utils::IteratorType::reduction);
      continue;
    }
    iterators.push_back(utils::IteratorType::parallel);
    shape.push_back(inputType.getDimSize(d));
    outExprs.push_back(getAffineDimExpr(d, ctx));
    if (inputType.isDynamicDim(d))
      dynamicDims.push_back(dimValue(b, loc, input, d));
  }
  auto resultType = RankedTensorType::get(shape, inputType.getElementType());
  Value acc = filledTensor(b, loc, resultType, dynamicDims, init);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{acc}, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, combine(nested, nestedLoc, args));
      });
  return generic.getResult(0);
}

Value keepReducedDims(OpBuilder &b, Location loc, Value reduced, RankedTensorType keepdimType,
                      const llvm::SmallSet<int64_t, 4> &dims) {
  auto reducedType = cast<RankedTensorType>(reduced.getType());
  SmallVector<ReassociationIndices> groups;
  if (reducedType.getRank() > 0) {
    // Each kept dim takes the reduced dims that follow it; leading reduced
    // dims join the first kept dim.
    for (int64_t d = 0; d < keepdimType.getRank(); ++d) {
      if (!dims.contains(d) || groups.empty())
        groups.emplace_back();
      groups.back().push_back(d);
    }
    // A leading run of reduced dims opened a group without a kept dim.
    while (groups.size() > static_cast<size_t>(reducedType.getRank())) {
      ReassociationIndices first = groups.front();
      groups.erase(groups.begin());
      groups.front().insert(groups.front().begin(), first.begin(), first.end());
    }
  }
  SmallVector<OpFoldResult> outputShape;
  int64_t source = 0;
  for (int64_t d = 0; d < keepdimType.getRank(); ++d) {
    if (dims.contains(d)) {
      outputShape.push_back(b.getIndexAttr(1));
      continue;
    }
    if (reducedType.isDynamicDim(source))
      outputShape.push_back(dimValue(b, loc, reduced, source));
    else
      outputShape.push_back(b.getIndexAttr(reducedType.getDimSize(source)));
    ++source;
  }
  auto type = RankedTensorType::get(keepdimType.getShape(), keepdimType.getElementType());
  return tensor::ExpandShapeOp::create(b, loc, type, reduced, groups, outputShape);
}

Value elementCount(OpBuilder &b, Location loc, Value tensor, ArrayRef<int64_t> dims, Type type) {
  Value count = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d : dims)
    count = arith::MulIOp::create(b, loc, count, dimValue(b, loc, tensor, d));
  return indexToScalar(b, loc, count, type);
}

namespace {

/// The maximum along `dim`, with `dim` kept as an extent of 1 (what softmax
/// and log_softmax subtract before they exponentiate).
Value rowMaxKept(OpBuilder &b, Location loc, Value input, int64_t dim) {
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  llvm::SmallSet<int64_t, 4> dims;
  dims.insert(dim);
  Value max = reduceDims(b, loc, input, dims, lowestValue(b, loc, elementType),
                         [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                           return arith::MaximumFOp::create(nb, l, args[0], args[1]);
                         });
  SmallVector<int64_t> keptShape(type.getShape());
  keptShape[dim] = 1;
  return keepReducedDims(b, loc, max, RankedTensorType::get(keptShape, elementType), dims);
}

} // namespace

Value logSoftmax(OpBuilder &b, Location loc, Value input, int64_t dim) {
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  llvm::SmallSet<int64_t, 4> dims;
  dims.insert(dim);
  Value maxKept = rowMaxKept(b, loc, input, dim);
  Value shifted = broadcastElementwise(b, loc, type, {input, maxKept},
                                       [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                         return arith::SubFOp::create(nb, l, args[0], args[1]);
                                       });
  Value sum = reduceDims(b, loc, shifted, dims, scalarConstant(b, loc, elementType, 0.0),
                         [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                           Value e = math::ExpOp::create(nb, l, args[0]);
                           return arith::AddFOp::create(nb, l, e, args[1]);
                         });
  // The log once per reduced row, not once per element it is broadcast to.
  auto sumType = cast<RankedTensorType>(sum.getType());
  Value logSum = broadcastElementwise(b, loc, sumType, {sum},
                                      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                        return math::LogOp::create(nb, l, args[0]);
                                      });
  Value logSumKept =
      keepReducedDims(b, loc, logSum, cast<RankedTensorType>(maxKept.getType()), dims);
  return broadcastElementwise(b, loc, type, {shifted, logSumKept},
                              [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                return arith::SubFOp::create(nb, l, args[0], args[1]);
                              });
}

Value softmax(OpBuilder &b, Location loc, Value input, int64_t dim) {
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  llvm::SmallSet<int64_t, 4> dims;
  dims.insert(dim);
  Value maxKept = rowMaxKept(b, loc, input, dim);
  auto keptType = cast<RankedTensorType>(maxKept.getType());
  // One exp per element, kept for both the sum and the quotient.
  Value exps = broadcastElementwise(
      b, loc, type, {input, maxKept}, [](OpBuilder &nb, Location l, ValueRange args) -> Value {
        Value shifted = arith::SubFOp::create(nb, l, args[0], args[1]);
        return math::ExpOp::create(nb, l, shifted);
      });
  Value sum = reduceDims(b, loc, exps, dims, scalarConstant(b, loc, elementType, 0.0),
                         [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                           return arith::AddFOp::create(nb, l, args[0], args[1]);
                         });
  Value sumKept = keepReducedDims(b, loc, sum, keptType, dims);
  return broadcastElementwise(b, loc, type, {exps, sumKept},
                              [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                                return arith::DivFOp::create(nb, l, args[0], args[1]);
                              });
}

} // namespace modelc::lower
