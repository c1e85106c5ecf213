//===- MdlOps.cpp - verifiers of the mdl operations -----------------------===//
//
// Each verifier re-checks the type checker's invariants on the IR itself:
// dtypes agree, static dims agree (a dynamic `?` dim agrees with anything),
// and attributes describe a valid operation.
//
//===----------------------------------------------------------------------===//

#include "mlir/MdlDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::mdl;

namespace {

RankedTensorType tensorOf(Value value) { return cast<RankedTensorType>(value.getType()); }

bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string dimStr(int64_t dim) {
  return ShapedType::isDynamic(dim) ? std::string("?") : std::to_string(dim);
}

/// Checks `actual` against an expected shape, dim by dim.
LogicalResult verifyShape(Operation *op, StringRef what, RankedTensorType actual,
                          ArrayRef<int64_t> expected) {
  if (actual.getRank() != static_cast<int64_t>(expected.size()))
    return op->emitOpError() << what << " has rank " << actual.getRank() << " but expected rank "
                             << expected.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(actual.getShape(), expected))) {
    auto [got, want] = pair;
    if (!dimsAgree(got, want))
      return op->emitOpError() << what << " dim " << i << " is " << dimStr(got) << " but expected "
                               << dimStr(want);
  }
  return success();
}

LogicalResult verifySameElementType(Operation *op, StringRef what, Type actual, Type expected) {
  Type got = getElementTypeOrSelf(actual);
  Type want = getElementTypeOrSelf(expected);
  if (got != want)
    return op->emitOpError() << what << " has dtype " << got << " but expected " << want;
  return success();
}

LogicalResult verifyIntegerTensor(Operation *op, StringRef what, Type type) {
  if (!isa<IntegerType>(getElementTypeOrSelf(type)))
    return op->emitOpError() << what << " must have an integer dtype, got "
                             << getElementTypeOrSelf(type);
  return success();
}

/// PyTorch broadcasting: dims align from the right; a static 1 stretches.
LogicalResult verifyBroadcast(Operation *op, ArrayRef<Value> operands, RankedTensorType result) {
  for (auto [index, operand] : llvm::enumerate(operands)) {
    RankedTensorType type = tensorOf(operand);
    if (type.getRank() > result.getRank())
      return op->emitOpError() << "operand #" << index << " has rank " << type.getRank()
                               << ", more than the result's " << result.getRank();
    int64_t offset = result.getRank() - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t dim = type.getDimSize(d);
      int64_t resultDim = result.getDimSize(d + offset);
      if (dim == 1 || dimsAgree(dim, resultDim))
        continue;
      return op->emitOpError() << "operand #" << index << " dim " << d << " is " << dimStr(dim)
                               << " and does not broadcast to result dim " << d + offset << " of "
                               << dimStr(resultDim);
    }
  }
  // Two operands that both have a static extent other than 1 must agree.
  for (int64_t r = 0; r < result.getRank(); ++r) {
    int64_t seen = ShapedType::kDynamic;
    for (auto [index, operand] : llvm::enumerate(operands)) {
      RankedTensorType type = tensorOf(operand);
      int64_t d = r - (result.getRank() - type.getRank());
      if (d < 0 || type.isDynamicDim(d) || type.getDimSize(d) == 1)
        continue;
      if (!ShapedType::isDynamic(seen) && seen != type.getDimSize(d))
        return op->emitOpError() << "operands disagree at result dim " << r << ": " << seen
                                 << " vs " << type.getDimSize(d);
      seen = type.getDimSize(d);
    }
  }
  return success();
}

LogicalResult verifyDim(Operation *op, StringRef name, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << name << " " << dim << " is out of range for rank " << rank;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename BinaryOp> static LogicalResult verifyBinary(BinaryOp op) {
  if (failed(verifySameElementType(op, "rhs", op.getRhs().getType(), op.getLhs().getType())) ||
      failed(verifySameElementType(op, "result", op.getType(), op.getLhs().getType())))
    return failure();
  return verifyBroadcast(op, {op.getLhs(), op.getRhs()}, op.getType());
}

LogicalResult AddOp::verify() { return verifyBinary(*this); }
LogicalResult SubOp::verify() { return verifyBinary(*this); }
LogicalResult MulOp::verify() { return verifyBinary(*this); }
LogicalResult DivOp::verify() { return verifyBinary(*this); }
LogicalResult PowOp::verify() { return verifyBinary(*this); }
LogicalResult MaxOp::verify() { return verifyBinary(*this); }
LogicalResult MinOp::verify() { return verifyBinary(*this); }
LogicalResult RemOp::verify() { return verifyBinary(*this); }

template <typename LogicalOp> static LogicalResult verifyLogical(LogicalOp op) {
  if (!op.getLhs().getType().getElementType().isInteger(1))
    return op.emitOpError() << "operands must be i1 tensors, got "
                            << op.getLhs().getType().getElementType();
  return verifyBinary(op);
}

LogicalResult AndOp::verify() { return verifyLogical(*this); }
LogicalResult OrOp::verify() { return verifyLogical(*this); }

LogicalResult NotOp::verify() {
  if (!getType().getElementType().isInteger(1))
    return emitOpError() << "operand must be an i1 tensor, got " << getType().getElementType();
  return success();
}

LogicalResult CmpOp::verify() {
  if (!llvm::is_contained({"eq", "ne", "lt", "le", "gt", "ge"}, getPredicate()))
    return emitOpError() << "unknown predicate '" << getPredicate()
                         << "' (expected eq, ne, lt, le, gt or ge)";
  if (failed(verifySameElementType(*this, "rhs", getRhs().getType(), getLhs().getType())))
    return failure();
  if (!getType().getElementType().isInteger(1))
    return emitOpError() << "result must have dtype i1, got " << getType().getElementType();
  return verifyBroadcast(*this, {getLhs(), getRhs()}, getType());
}

LogicalResult WhereOp::verify() {
  if (!tensorOf(getCondition()).getElementType().isInteger(1))
    return emitOpError() << "condition must have dtype i1, got "
                         << tensorOf(getCondition()).getElementType();
  if (failed(verifySameElementType(*this, "rhs", getRhs().getType(), getLhs().getType())) ||
      failed(verifySameElementType(*this, "result", getType(), getLhs().getType())))
    return failure();
  return verifyBroadcast(*this, {getCondition(), getLhs(), getRhs()}, getType());
}

LogicalResult CastOp::verify() {
  return verifyShape(*this, "result", getType(), tensorOf(getInput()).getShape());
}

LogicalResult TransferOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  for (RankedTensorType type : {input, getType()})
    if (type.getEncoding() && !isa<DeviceAttr>(type.getEncoding()))
      return emitOpError() << "tensor encoding " << type.getEncoding() << " is not a #mdl.device";
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  return verifyShape(*this, "result", getType(), input.getShape());
}

//===----------------------------------------------------------------------===//
// Linear algebra, reductions, normalisation
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType lhs = tensorOf(getLhs()), rhs = tensorOf(getRhs());
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOpError() << "operands must have rank >= 2, got " << lhs.getRank() << " and "
                         << rhs.getRank();
  if (failed(verifySameElementType(*this, "rhs", rhs, lhs)) ||
      failed(verifySameElementType(*this, "result", getType(), lhs)))
    return failure();
  int64_t k = lhs.getDimSize(lhs.getRank() - 1), rhsK = rhs.getDimSize(rhs.getRank() - 2);
  if (!dimsAgree(k, rhsK))
    return emitOpError() << "contraction dims disagree: lhs has " << dimStr(k)
                         << " columns but rhs has " << dimStr(rhsK) << " rows";
  RankedTensorType result = getType();
  int64_t rank = std::max(lhs.getRank(), rhs.getRank());
  if (result.getRank() != rank)
    return emitOpError() << "result has rank " << result.getRank() << " but expected " << rank;
  if (!dimsAgree(result.getDimSize(rank - 2), lhs.getDimSize(lhs.getRank() - 2)) ||
      !dimsAgree(result.getDimSize(rank - 1), rhs.getDimSize(rhs.getRank() - 1)))
    return emitOpError() << "result must be [..., " << dimStr(lhs.getDimSize(lhs.getRank() - 2))
                         << ", " << dimStr(rhs.getDimSize(rhs.getRank() - 1)) << "]";
  // Batch dims broadcast like elementwise dims.
  for (int64_t r = 0; r < rank - 2; ++r) {
    int64_t want = result.getDimSize(r);
    for (RankedTensorType type : {lhs, rhs}) {
      int64_t d = r - (rank - type.getRank());
      if (d < 0)
        continue;
      int64_t got = type.getDimSize(d);
      if (got != 1 && !dimsAgree(got, want))
        return emitOpError() << "batch dim " << r << " is " << dimStr(got) << " in an operand but "
                             << dimStr(want) << " in the result";
    }
  }
  return success();
}

template <typename ReduceOp> static LogicalResult verifyReduce(ReduceOp op) {
  RankedTensorType input = tensorOf(op.getInput());
  llvm::SmallSet<int64_t, 4> reduced;
  for (int64_t dim : op.getDims()) {
    if (failed(verifyDim(op, "reduced dim", dim, input.getRank())))
      return failure();
    if (!reduced.insert(dim).second)
      return op.emitOpError() << "reduced dim " << dim << " is listed twice";
  }
  if (failed(verifySameElementType(op, "result", op.getType(), input)))
    return failure();
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    if (!reduced.contains(d))
      expected.push_back(input.getDimSize(d));
    else if (op.getKeepdim())
      expected.push_back(1);
  }
  return verifyShape(op, "result", op.getType(), expected);
}

LogicalResult SumOp::verify() { return verifyReduce(*this); }
LogicalResult MeanOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }

LogicalResult SoftmaxOp::verify() { return verifyDim(*this, "dim", getDim(), getType().getRank()); }
LogicalResult LogSoftmaxOp::verify() {
  return verifyDim(*this, "dim", getDim(), getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  int64_t normRank = getNormalizedRank();
  if (normRank < 1 || normRank > input.getRank())
    return emitOpError() << "normalized_rank " << normRank << " must be in [1, " << input.getRank()
                         << "]";
  ArrayRef<int64_t> normShape = input.getShape().take_back(normRank);
  for (auto [name, param] : {std::pair{"weight", getWeight()}, std::pair{"bias", getBias()}}) {
    if (!param)
      continue;
    if (failed(verifySameElementType(*this, name, param.getType(), input)) ||
        failed(verifyShape(*this, name, tensorOf(param), normShape)))
      return failure();
  }
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  return verifyShape(*this, "result", getType(), input.getShape());
}

LogicalResult BatchNormOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (input.getRank() < 2)
    return emitOpError() << "input must have rank >= 2 ([N, C, ...]), got " << input.getRank();
  int64_t channels = input.getDimSize(1);
  std::pair<const char *, Value> params[] = {{"running_mean", getRunningMean()},
                                             {"running_var", getRunningVar()},
                                             {"weight", getWeight()},
                                             {"bias", getBias()}};
  for (auto [name, param] : params) {
    if (!param)
      continue;
    if (failed(verifySameElementType(*this, name, param.getType(), input)) ||
        failed(verifyShape(*this, name, tensorOf(param), {channels})))
      return failure();
  }
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  return verifyShape(*this, "result", getType(), input.getShape());
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

std::optional<SmallVector<ReassociationIndices>> ReshapeOp::getReassociation() {
  RankedTensorType input = tensorOf(getInput());
  if (std::optional<ArrayRef<int64_t>> groups = getGroups())
    return explicitReshapeGroups(input, getType(), *groups);
  return pureReshapeGroups(input, getType());
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  // Several dynamic dims need a pure expand or collapse (unsqueeze, squeeze,
  // flatten), which keeps each of them tied to its input dims: told by the
  // types, or by `groups`.
  if (std::optional<ArrayRef<int64_t>> groups = getGroups()) {
    if (!explicitReshapeGroups(input, getType(), *groups))
      return emitOpError() << "groups do not describe an expand or collapse of " << input
                           << " into " << getType();
  } else if (getType().getNumDynamicDims() > 1 && !isPureExpandOrCollapse(input, getType()))
    return emitOpError() << "result may have at most one dynamic dim unless it only inserts or "
                            "merges dims, got "
                         << getType().getNumDynamicDims();
  if (input.hasStaticShape() && getType().hasStaticShape() &&
      input.getNumElements() != getType().getNumElements())
    return emitOpError() << "cannot reshape " << input.getNumElements() << " elements into "
                         << getType().getNumElements();
  return success();
}

int64_t SliceOp::slicedExtent(int64_t d, int64_t inputExtent) {
  if (llvm::is_contained(getIndexDims(), d))
    return 1;
  return mdl::slicedExtent(getStarts()[d], getEnds()[d], getSteps()[d], inputExtent);
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  int64_t rank = input.getRank();
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  for (auto [name, attr] : {std::pair{"starts", getStarts()}, std::pair{"ends", getEnds()},
                            std::pair{"steps", getSteps()}})
    if (static_cast<int64_t>(attr.size()) != rank)
      return emitOpError() << name << " has " << attr.size() << " entries for rank " << rank;
  for (int64_t step : getSteps())
    if (step < 1)
      return emitOpError() << "steps must be >= 1, got " << step;
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (failed(verifyDim(*this, "index dim", d, rank)))
      return failure();
    if (llvm::is_contained(getIndexDims(), d))
      continue;
    expected.push_back(input.isDynamicDim(d) ? ShapedType::kDynamic
                                             : slicedExtent(d, input.getDimSize(d)));
  }
  for (int64_t d : getIndexDims())
    if (failed(verifyDim(*this, "index dim", d, rank)))
      return failure();
  return verifyShape(*this, "result", getType(), expected);
}

/// The shape of `input` without `dims` (ascending, in range), checked
/// against the number of positions.
static FailureOr<SmallVector<int64_t>> selectedShape(Operation *op, RankedTensorType input,
                                                     ArrayRef<int64_t> dims, size_t numPositions) {
  if (dims.size() != numPositions)
    return op->emitOpError() << "has " << numPositions << " positions for " << dims.size()
                             << " dims";
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (failed(verifyDim(op, "dim", dims[i], input.getRank())))
      return failure();
    if (i > 0 && dims[i] <= dims[i - 1])
      return op->emitOpError() << "dims must be ascending";
  }
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(input.getDimSize(d));
  return shape;
}

LogicalResult SelectOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      selectedShape(*this, input, getDims(), getPositions().size());
  if (failed(shape))
    return failure();
  return verifyShape(*this, "result", getType(), *shape);
}

LogicalResult SelectScatterOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (failed(verifySameElementType(*this, "source", getSource().getType(), input)) ||
      failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      selectedShape(*this, input, getDims(), getPositions().size());
  if (failed(shape) || failed(verifyShape(*this, "source", tensorOf(getSource()), *shape)))
    return failure();
  return verifyShape(*this, "result", getType(), input.getShape());
}

LogicalResult TransposeOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (failed(verifyDim(*this, "dim0", getDim0(), input.getRank())) ||
      failed(verifyDim(*this, "dim1", getDim1(), input.getRank())) ||
      failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  SmallVector<int64_t> expected(input.getShape());
  std::swap(expected[getDim0()], expected[getDim1()]);
  return verifyShape(*this, "result", getType(), expected);
}

LogicalResult PermuteOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return emitOpError() << "permutation has " << perm.size() << " entries for rank "
                         << input.getRank();
  llvm::SmallSet<int64_t, 4> seen;
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (failed(verifyDim(*this, "permutation entry", p, input.getRank())))
      return failure();
    if (!seen.insert(p).second)
      return emitOpError() << "permutation lists dim " << p << " twice";
    expected.push_back(input.getDimSize(p));
  }
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  return verifyShape(*this, "result", getType(), expected);
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  RankedTensorType first = tensorOf(getInputs().front());
  int64_t dim = getDim();
  if (failed(verifyDim(*this, "dim", dim, first.getRank())))
    return failure();
  SmallVector<int64_t> expected(first.getShape());
  for (auto [i, input] : llvm::enumerate(getInputs().drop_front())) {
    RankedTensorType type = tensorOf(input);
    std::string name = "input #" + std::to_string(i + 1);
    if (failed(verifySameElementType(*this, name, type, first)))
      return failure();
    if (type.getRank() != first.getRank())
      return emitOpError() << name << " has rank " << type.getRank() << " but input #0 has "
                           << first.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == dim) {
        expected[d] = ShapedType::isDynamic(expected[d]) || type.isDynamicDim(d)
                          ? ShapedType::kDynamic
                          : expected[d] + type.getDimSize(d);
      } else if (!dimsAgree(expected[d], type.getDimSize(d))) {
        return emitOpError() << name << " dim " << d << " is " << dimStr(type.getDimSize(d))
                             << " but input #0 has " << dimStr(expected[d]);
      }
    }
  }
  if (failed(verifySameElementType(*this, "result", getType(), first)))
    return failure();
  return verifyShape(*this, "result", getType(), expected);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Output extent of a sliding window, or dynamic when the input is.
static int64_t windowOutput(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                            int64_t dilation) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel))
    return ShapedType::kDynamic;
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

static LogicalResult verifyWindowAttrs(Operation *op,
                                       ArrayRef<std::pair<StringRef, ArrayRef<int64_t>>> attrs) {
  for (auto [name, values] : attrs) {
    if (values.size() != 2)
      return op->emitOpError() << name << " must have 2 entries, got " << values.size();
    int64_t minimum = name == "padding" ? 0 : 1;
    for (int64_t v : values)
      if (v < minimum)
        return op->emitOpError() << name << " entries must be >= " << minimum << ", got " << v;
  }
  return success();
}

LogicalResult Conv2dOp::verify() {
  RankedTensorType input = tensorOf(getInput()), weight = tensorOf(getWeight());
  if (input.getRank() != 4 || weight.getRank() != 4)
    return emitOpError() << "input and weight must have rank 4 (NCHW, OIHW)";
  if (failed(verifyWindowAttrs(
          *this,
          {{"stride", getStride()}, {"padding", getPadding()}, {"dilation", getDilation()}})))
    return failure();
  int64_t groups = getGroups();
  if (groups < 1)
    return emitOpError() << "groups must be >= 1, got " << groups;
  if (failed(verifySameElementType(*this, "weight", weight, input)) ||
      failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  int64_t channels = input.getDimSize(1), outChannels = weight.getDimSize(0);
  if (!ShapedType::isDynamic(channels) && channels % groups != 0)
    return emitOpError() << "input channels " << channels << " are not divisible by groups "
                         << groups;
  if (!ShapedType::isDynamic(outChannels) && outChannels % groups != 0)
    return emitOpError() << "output channels " << outChannels << " are not divisible by groups "
                         << groups;
  if (!ShapedType::isDynamic(channels) && !dimsAgree(weight.getDimSize(1), channels / groups))
    return emitOpError() << "weight dim 1 is " << dimStr(weight.getDimSize(1))
                         << " but input channels / groups is " << channels / groups;
  if (Value bias = getBias()) {
    if (failed(verifySameElementType(*this, "bias", bias.getType(), input)) ||
        failed(verifyShape(*this, "bias", tensorOf(bias), {outChannels})))
      return failure();
  }
  SmallVector<int64_t> expected = {input.getDimSize(0), outChannels};
  for (int i = 0; i < 2; ++i)
    expected.push_back(windowOutput(input.getDimSize(2 + i), weight.getDimSize(2 + i),
                                    getStride()[i], getPadding()[i], getDilation()[i]));
  return verifyShape(*this, "result", getType(), expected);
}

template <typename PoolOp> static LogicalResult verifyPool(PoolOp op) {
  RankedTensorType input = tensorOf(op.getInput());
  if (input.getRank() != 4)
    return op.emitOpError() << "input must have rank 4 (NCHW), got " << input.getRank();
  if (failed(verifyWindowAttrs(op, {{"kernel", op.getKernel()},
                                    {"stride", op.getStride()},
                                    {"padding", op.getPadding()}})) ||
      failed(verifySameElementType(op, "result", op.getType(), input)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (2 * op.getPadding()[i] > op.getKernel()[i])
      return op.emitOpError() << "padding must be at most half the kernel size";
  SmallVector<int64_t> expected = {input.getDimSize(0), input.getDimSize(1)};
  for (int i = 0; i < 2; ++i)
    expected.push_back(windowOutput(input.getDimSize(2 + i), op.getKernel()[i], op.getStride()[i],
                                    op.getPadding()[i], 1));
  return verifyShape(op, "result", op.getType(), expected);
}

LogicalResult MaxPool2dOp::verify() { return verifyPool(*this); }
LogicalResult AvgPool2dOp::verify() { return verifyPool(*this); }

LogicalResult AdaptiveAvgPool2dOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  if (input.getRank() != 4)
    return emitOpError() << "input must have rank 4 (NCHW), got " << input.getRank();
  if (failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  if (getType().getRank() != 4)
    return emitOpError() << "result must have rank 4 (NCHW), got " << getType().getRank();
  if (getType().isDynamicDim(2) || getType().isDynamicDim(3))
    return emitOpError() << "output height and width must be static";
  return verifyShape(
      *this, "result", getType(),
      {input.getDimSize(0), input.getDimSize(1), getType().getDimSize(2), getType().getDimSize(3)});
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  RankedTensorType weight = tensorOf(getWeight()), indices = tensorOf(getIndices());
  if (weight.getRank() != 2)
    return emitOpError() << "weight must have rank 2 ([V, D]), got " << weight.getRank();
  if (failed(verifyIntegerTensor(*this, "indices", indices)) ||
      failed(verifySameElementType(*this, "result", getType(), weight)))
    return failure();
  SmallVector<int64_t> expected(indices.getShape());
  expected.push_back(weight.getDimSize(1));
  return verifyShape(*this, "result", getType(), expected);
}

LogicalResult GatherOp::verify() {
  RankedTensorType input = tensorOf(getInput()), index = tensorOf(getIndex());
  if (failed(verifyIntegerTensor(*this, "index", index)) ||
      failed(verifyDim(*this, "dim", getDim(), input.getRank())) ||
      failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  if (index.getRank() != input.getRank())
    return emitOpError() << "index has rank " << index.getRank() << " but input has rank "
                         << input.getRank();
  return verifyShape(*this, "result", getType(), index.getShape());
}

LogicalResult IndexSelectOp::verify() {
  RankedTensorType input = tensorOf(getInput()), index = tensorOf(getIndex());
  if (failed(verifyIntegerTensor(*this, "index", index)) ||
      failed(verifyDim(*this, "dim", getDim(), input.getRank())) ||
      failed(verifySameElementType(*this, "result", getType(), input)))
    return failure();
  if (index.getRank() != 1)
    return emitOpError() << "index must have rank 1, got " << index.getRank();
  SmallVector<int64_t> expected(input.getShape());
  expected[getDim()] = index.getDimSize(0);
  return verifyShape(*this, "result", getType(), expected);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

template <typename LossOp> static LogicalResult verifyLoss(LossOp op) {
  RankedTensorType input = tensorOf(op.getInput()), target = tensorOf(op.getTarget());
  if (input.getRank() != 2)
    return op.emitOpError() << "input must have rank 2 ([N, C]), got " << input.getRank();
  if (!isa<FloatType>(input.getElementType()))
    return op.emitOpError() << "input must have a float dtype, got " << input.getElementType();
  if (failed(verifyIntegerTensor(op, "target", target)) ||
      failed(verifyShape(op, "target", target, {input.getDimSize(0)})))
    return failure();
  if (Value weight = op.getWeight())
    if (failed(verifySameElementType(op, "weight", weight.getType(), input)) ||
        failed(verifyShape(op, "weight", tensorOf(weight), {input.getDimSize(1)})))
      return failure();
  StringRef reduction = op.getReduction();
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return op.emitOpError() << "reduction must be mean, sum or none, got '" << reduction << "'";
  if (failed(verifySameElementType(op, "result", op.getType(), input)))
    return failure();
  if (reduction == "none")
    return verifyShape(op, "result", op.getType(), {input.getDimSize(0)});
  return verifyShape(op, "result", op.getType(), {});
}

LogicalResult CrossEntropyOp::verify() { return verifyLoss(*this); }
LogicalResult NllLossOp::verify() { return verifyLoss(*this); }

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

template <typename CreationOp> static LogicalResult verifyCreation(CreationOp op) {
  RankedTensorType type = op.getType();
  if (type.getEncoding() && !isa<DeviceAttr>(type.getEncoding()))
    return op.emitOpError() << "tensor encoding " << type.getEncoding() << " is not a #mdl.device";
  if (op.getDynamicSizes().size() != type.getNumDynamicDims())
    return op.emitOpError() << "needs one size operand per dynamic dim: "
                            << type.getNumDynamicDims() << " expected, "
                            << op.getDynamicSizes().size() << " given";
  return success();
}

LogicalResult ZerosOp::verify() { return verifyCreation(*this); }
LogicalResult OnesOp::verify() { return verifyCreation(*this); }
LogicalResult FullOp::verify() { return verifyCreation(*this); }
LogicalResult RandnOp::verify() {
  if (!isa<FloatType>(getType().getElementType()))
    return emitOpError() << "result must have a float dtype, got " << getType().getElementType();
  return verifyCreation(*this);
}
LogicalResult ArangeOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError() << "result must have rank 1, got " << getType().getRank();
  if (getStep().convertToDouble() == 0.0)
    return emitOpError() << "step must be non-zero";
  return verifyCreation(*this);
}
LogicalResult EyeOp::verify() {
  if (getType().getRank() != 2)
    return emitOpError() << "result must have rank 2, got " << getType().getRank();
  return verifyCreation(*this);
}

#define GET_OP_CLASSES
#include "mlir/MdlOps.cpp.inc"
