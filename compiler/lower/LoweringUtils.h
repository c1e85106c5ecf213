//===- LoweringUtils.h - helpers shared by the mdl -> linalg patterns -----===//

#ifndef MODELC_LOWER_LOWERINGUTILS_H
#define MODELC_LOWER_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/SmallSet.h"

namespace modelc::lower {

using mlir::Location;
using mlir::OpBuilder;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
using mlir::ValueRange;

/// Builds the body of an elementwise generic from its scalar block arguments.
using ScalarFn = llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// The extent of `dim` of a tensor, as an index value.
Value dimValue(OpBuilder &b, Location loc, Value tensor, int64_t dim);

/// A tensor.empty of `type`; `dynamicDims` gives one value per dynamic dim.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicDims);

/// A tensor of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicDims,
                   Value value);

/// An arith constant of a float or integer element type.
Value scalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// The lowest value of a float or integer type (-inf for floats).
Value lowestValue(OpBuilder &b, Location loc, Type type);

/// Converts a scalar between int/float types of any width (i1 included).
Value convertScalar(OpBuilder &b, Location loc, Value value, Type to);

/// An index value converted to a float or integer scalar type.
Value indexToScalar(OpBuilder &b, Location loc, Value index, Type to);

/// What a failed run-time shape check prints before the process aborts.
inline constexpr const char *kShapeMismatchMessage =
    "modelc: run-time shape check failed (the inputs break the checker's shape assumptions)";

/// A run-time check (cf.assert) that two extents agree, unless they are the
/// same value. The dims the checker proves equal are `?` only when they
/// depend on the inputs; reading with mismatched extents would go out of
/// bounds, so a mismatch stops the program instead.
void assertSameExtent(OpBuilder &b, Location loc, Value actual, Value expected,
                      llvm::StringRef what);

/// Elementwise map over `operands` with PyTorch broadcasting into a result of
/// `resultType`, as one linalg.generic (so chains fuse).
Value broadcastElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                           ValueRange operands, ScalarFn body);

/// Reduces `input` over `dims` (dropped from the result) starting from
/// `init` and combining with `combine(acc-free element, acc)`.
Value reduceDims(OpBuilder &b, Location loc, Value input, const llvm::SmallSet<int64_t, 4> &dims,
                 Value init, ScalarFn combine);

/// Re-inserts the reduced `dims` of a reduction result as size-1 dims.
Value keepReducedDims(OpBuilder &b, Location loc, Value reduced, RankedTensorType keepdimType,
                      const llvm::SmallSet<int64_t, 4> &dims);

/// The product of the extents of `dims` of `tensor`, as a scalar of `type`.
Value elementCount(OpBuilder &b, Location loc, Value tensor, llvm::ArrayRef<int64_t> dims,
                   Type type);

/// log_softmax along `dim` (shared by mdl.log_softmax and mdl.cross_entropy).
Value logSoftmax(OpBuilder &b, Location loc, Value input, int64_t dim);

/// softmax along `dim`: exp(x - max) / sum, one exp per element.
Value softmax(OpBuilder &b, Location loc, Value input, int64_t dim);

/// Rewrites `OpTy` with `Lower`, which returns the replacement value or
/// failure; the result type handed to it already has its encoding dropped.
template <typename OpTy,
          mlir::FailureOr<Value> (*Lower)(OpTy, typename OpTy::Adaptor, RankedTensorType,
                                          mlir::ConversionPatternRewriter &)>
struct LowerWith : mlir::OpConversionPattern<OpTy> {
  using mlir::OpConversionPattern<OpTy>::OpConversionPattern;
  mlir::LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                      mlir::ConversionPatternRewriter &rewriter) const override {
    auto resultType =
        mlir::cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    // A result with no elements (an empty batch) is only its shape; the
    // slices that would fill it have offsets that tensor ops reject.
    if (resultType.hasStaticShape() && resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, emptyTensor(rewriter, op.getLoc(), resultType, {}));
      return mlir::success();
    }
    mlir::FailureOr<Value> result = Lower(op, adaptor, resultType, rewriter);
    if (mlir::failed(result))
      return mlir::failure();
    rewriter.replaceOp(op, *result);
    return mlir::success();
  }
};

/// Makes the f16/bf16 ops that accumulate or normalise compute in f32: half
/// operands cast to f32, the op in f32, the result cast back (WidenHalf.cpp).
void widenHalfAccumulations(mlir::ModuleOp module);

void populateElementwisePatterns(mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);
void populateTensorPatterns(mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);
void populateConvPatterns(mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);
/// scf.for of run-time ranges (their types) and run-time indexing.
void populateLoopPatterns(mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns,
                          mlir::ConversionTarget &target);

} // namespace modelc::lower

#endif // MODELC_LOWER_LOWERINGUTILS_H
