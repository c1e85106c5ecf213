//===- ConvToRuntime.cpp - f32 linalg convs on buffers -> modelc_conv2d ---===//
//
// After bufferization, each f32 `linalg.conv_2d_nchw_fchw` (and grouped
// `linalg.conv_2d_ngchw_gfchw`) on memrefs becomes `call
// @modelc_conv2d_epilogue(input, weight, output, bias, strides, padding,
// dilations, flags, activations)` with the operands cast to unranked
// memrefs; the JIT binds it to a oneDNN convolution (jit/ConvRuntime.h).
//
// ConvLowering writes a padded input (zero fill + copy into a subview), the
// bias broadcast into the output, the conv accumulating into it, and an
// activation as a separate loop nest. For an ungrouped conv the call takes
// what those loops did instead, so that none of them runs: the unpadded
// input with the padding as the primitive's, the bias as the primitive's
// bias (or a zero fill as "overwrite"), and an activation loop that only
// reads the conv's output as eltwise post-ops writing the loop's output.
// When an unpadded max pool is then the only reader of that output, the call
// is `@modelc_conv2d_pool(..., pool kernel, pool strides)` writing the pooled
// buffer instead, and the full-size output is never allocated (oneDNN pools
// it in its blocked layout, as TorchScript's mkldnn path does). A tensor one
// conv writes and only convs read stays in that blocked layout between them
// (chainBlockedLayouts).
//
//===----------------------------------------------------------------------===//

#include "lower/EpilogueMatch.h"
#include "lower/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/MapVector.h"

#include <limits>

using namespace mlir;

namespace modelc::lower {
namespace {

/// modelc_conv2d_epilogue's flags (jit/ConvRuntime.h).
constexpr int64_t kAccumulate = 1, kBias = 2, kSrcBlocked16 = 4, kDstBlocked16 = 8,
                  kConstantWeights = 16;
/// The position of the flags among a conv call's operands.
constexpr unsigned kFlagsOperand = 10;

bool isConvCall(func::CallOp call) {
  return call.getCallee() == kConv2dEpilogueFunction || call.getCallee() == kConv2dPoolFunction;
}

std::optional<int64_t> callFlags(func::CallOp call) {
  if (call->getNumOperands() <= kFlagsOperand)
    return std::nullopt;
  auto constant = call->getOperand(kFlagsOperand).getDefiningOp<arith::ConstantIntOp>();
  return constant ? std::optional<int64_t>(constant.value()) : std::nullopt;
}

void addFlag(func::CallOp call, int64_t flag) {
  OpBuilder builder(call);
  call->setOperand(kFlagsOperand, arith::ConstantIntOp::create(builder, call.getLoc(),
                                                               *callFlags(call) | flag, 64));
}

/// A tensor that one conv call writes (overwriting it) and only conv calls
/// read, as their input, stays in oneDNN's nChw16c layout between them: the
/// writer leaves it so and the readers take it so, and neither reorders it
/// to NCHW and back (as TorchScript's mkldnn path keeps its blocked tensors
/// between convs; ResNet's conv1 -> conv2). Its buffer must be a plain
/// allocation of [N, C, H, W] with C a multiple of 16, so that both layouts
/// have the same size.
void chainBlockedLayouts(ModuleOp module) {
  SmallVector<func::CallOp> writers;
  module.walk([&](func::CallOp call) {
    if (call.getCallee() == kConv2dEpilogueFunction)
      writers.push_back(call);
  });
  for (func::CallOp writer : writers) {
    std::optional<int64_t> flags = callFlags(writer);
    auto cast = writer->getOperand(2).getDefiningOp<memref::CastOp>();
    if (!flags || (*flags & kAccumulate) || !cast)
      continue;
    Value buffer = cast.getSource();
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!buffer.getDefiningOp<memref::AllocOp>() || !type || type.getRank() != 4 ||
        !type.getLayout().isIdentity() || type.isDynamicDim(1) || type.getDimSize(1) % 16 != 0)
      continue;
    SmallVector<func::CallOp> readers;
    bool onlyConvs = true;
    for (Operation *user : buffer.getUsers()) {
      auto readerCast = dyn_cast<memref::CastOp>(user);
      if (!readerCast) {
        onlyConvs = false;
        break;
      }
      for (OpOperand &use : readerCast->getUses()) {
        auto call = dyn_cast<func::CallOp>(use.getOwner());
        // The writer's output, and its unused bias operand (the output again).
        if (call && call == writer &&
            (use.getOperandNumber() == 2 || (use.getOperandNumber() == 3 && !(*flags & kBias))))
          continue;
        if (call && call != writer && isConvCall(call) && use.getOperandNumber() == 0 &&
            callFlags(call)) {
          readers.push_back(call);
          continue;
        }
        onlyConvs = false;
      }
    }
    if (!onlyConvs || readers.empty())
      continue;
    addFlag(writer, kDstBlocked16);
    for (func::CallOp reader : readers)
      addFlag(reader, kSrcBlocked16);
  }
}

/// The f32 named convs the runtime takes, on buffers; null otherwise.
linalg::LinalgOp asRuntimeConv(Operation *op) {
  if (!isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(op))
    return {};
  auto linalgOp = cast<linalg::LinalgOp>(op);
  bool f32Buffers =
      linalgOp.hasPureBufferSemantics() && llvm::all_of(op->getOperandTypes(), [](Type type) {
        auto memref = dyn_cast<MemRefType>(type);
        return memref && memref.getElementType().isF32();
      });
  return f32Buffers ? linalgOp : linalg::LinalgOp();
}

/// What the call does besides the conv, found in the loops around it.
struct ConvFolds {
  /// The input without padding and the padding, when the padded copy folds.
  Value unpadded;
  int64_t pad[2] = {0, 0};
  SmallVector<Operation *> padOps; // fill, subview, copy, alloc
  /// The init that folds: a bias broadcast or a zero fill (else accumulate).
  Operation *init = nullptr;
  Value bias;
  /// The activation loop that folds, and its steps.
  linalg::GenericOp activation;
  EpilogueMatch steps;
  /// The max-pool loop that folds (the only reader of what the conv and
  /// activation wrote), the -inf fill of its output, its window and strides.
  linalg::GenericOp pool;
  Operation *poolFill = nullptr;
  int64_t poolKernel[2] = {0, 0}, poolStride[2] = {0, 0};
};

bool isZeroFill(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getOutputs()[0] == buffer && isFloatConstant(fill.getInputs()[0], 0.0);
  if (auto map = dyn_cast<linalg::MapOp>(op)) {
    auto yield = cast<linalg::YieldOp>(map.getMapper().front().getTerminator());
    return map.getInit() == buffer && map.getInputs().empty() &&
           isFloatConstant(yield.getOperand(0), 0.0);
  }
  return false;
}

/// The same extent: one value, or `memref.dim` of one buffer at one index.
bool sameExtent(Value a, Value b) {
  if (a == b)
    return true;
  auto dimA = a.getDefiningOp<memref::DimOp>(), dimB = b.getDefiningOp<memref::DimOp>();
  if (!dimA || !dimB || dimA.getSource() != dimB.getSource())
    return false;
  std::optional<int64_t> indexA = dimA.getConstantIndex(), indexB = dimB.getConstantIndex();
  return indexA && indexB && *indexA == *indexB;
}

/// The alloc's extent `d` is the copied source's plus `2 * pad`: both
/// static, or (symbolic H and W, as the embedding API compiles them) the
/// alloc's size is `affine.apply (s0 + 2 * pad)` of the extent the copy's
/// subview (the source's shape) has.
bool paddedExtent(memref::AllocOp alloc, unsigned d, memref::SubViewOp subview, int64_t pad) {
  MemRefType allocType = alloc.getType();
  auto sourceType = cast<MemRefType>(subview.getType());
  if (!allocType.isDynamicDim(d) && !sourceType.isDynamicDim(d))
    return allocType.getDimSize(d) == sourceType.getDimSize(d) + 2 * pad;
  auto sourceExtent = dyn_cast<Value>(subview.getMixedSizes()[d]);
  if (!allocType.isDynamicDim(d) || !sourceExtent)
    return false;
  Value size = alloc.getDynamicSizes()[allocType.getDynamicDimIndex(d)];
  if (pad != 0) {
    auto apply = size.getDefiningOp<affine::AffineApplyOp>();
    MLIRContext *ctx = alloc.getContext();
    if (!apply || apply.getMapOperands().size() != 1)
      return false;
    AffineMap map = apply.getAffineMap();
    AffineExpr operand =
        map.getNumDims() == 1 ? getAffineDimExpr(0, ctx) : getAffineSymbolExpr(0, ctx);
    if (map.getNumResults() != 1 || map.getResult(0) != operand + 2 * pad)
      return false;
    size = apply.getMapOperands()[0];
  }
  return sameExtent(size, sourceExtent);
}

/// `alloc; zero fill; copy x into subview [0, 0, ph, pw]` feeding the conv
/// alone, with the alloc's H and W exactly x's plus twice the offsets.
void foldPadding(linalg::LinalgOp conv, ConvFolds &folds) {
  Value padded = conv.getDpsInputOperand(0)->get();
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  Operation *fill = nullptr;
  memref::SubViewOp subview;
  for (Operation *user : padded.getUsers()) {
    if (user == conv.getOperation())
      continue;
    if (!fill && isZeroFill(user, padded))
      fill = user;
    else if (!subview && isa<memref::SubViewOp>(user))
      subview = cast<memref::SubViewOp>(user);
    else
      return;
  }
  if (!fill || !subview || !subview->hasOneUse())
    return;
  auto copy = dyn_cast<memref::CopyOp>(*subview->getUsers().begin());
  if (!copy || copy.getTarget() != subview.getResult() || copy->getBlock() != conv->getBlock() ||
      !copy->isBeforeInBlock(conv))
    return;
  Value source = copy.getSource();
  auto sourceType = cast<MemRefType>(source.getType());
  ArrayRef<int64_t> offsets = subview.getStaticOffsets();
  if (sourceType.getRank() != 4 || !sourceType.getLayout().isIdentity() ||
      llvm::any_of(subview.getStaticStrides(), [](int64_t s) { return s != 1; }) ||
      offsets[0] != 0 || offsets[1] != 0 || ShapedType::isDynamic(offsets[2]) ||
      ShapedType::isDynamic(offsets[3]))
    return;
  for (unsigned d = 2; d < 4; ++d)
    if (!paddedExtent(alloc, d, subview, offsets[d]))
      return;
  // The call reads x where the conv ran: nothing in between may change it.
  if (writtenBetween(copy, conv, {rootBuffer(source)}))
    return;
  folds.unpadded = source;
  folds.pad[0] = offsets[2];
  folds.pad[1] = offsets[3];
  folds.padOps = {copy, subview, fill, alloc};
}

/// The output's init before the conv: a bias broadcast or a zero fill that
/// only the conv reads.
void foldInit(linalg::LinalgOp conv, ConvFolds &folds) {
  Value out = conv.getDpsInitOperand(0)->get();
  if (!out.getDefiningOp<memref::AllocOp>())
    return;
  Operation *writer = nullptr;
  for (Operation *user : out.getUsers()) {
    if (user == conv.getOperation())
      continue;
    if (user->getBlock() != conv->getBlock())
      return;
    if (!user->isBeforeInBlock(conv))
      continue;
    if (writer)
      return;
    writer = user;
  }
  if (!writer)
    return;
  if (isZeroFill(writer, out)) {
    folds.init = writer;
    return;
  }
  auto broadcast = dyn_cast<linalg::GenericOp>(writer);
  MLIRContext *ctx = conv.getContext();
  if (!broadcast || broadcast.getNumDpsInputs() != 1 || broadcast.getNumDpsInits() != 1 ||
      broadcast.getDpsInitOperand(0)->get() != out ||
      broadcast.getNumParallelLoops() != broadcast.getNumLoops())
    return;
  OpOperand *bias = broadcast.getDpsInputOperand(0);
  auto biasType = dyn_cast<MemRefType>(bias->get().getType());
  auto yield = cast<linalg::YieldOp>(broadcast.getBody()->getTerminator());
  if (!biasType || biasType.getRank() != 1 || !biasType.getLayout().isIdentity() ||
      broadcast.getMatchingIndexingMap(bias) !=
          AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx) ||
      !broadcast.getMatchingIndexingMap(broadcast.getDpsInitOperand(0)).isIdentity() ||
      yield.getOperand(0) != broadcast.getMatchingBlockArgument(bias))
    return;
  if (writtenBetween(broadcast, conv, {rootBuffer(bias->get())}))
    return;
  folds.init = broadcast;
  folds.bias = bias->get();
}

/// The buffers the call reads: input, weight and bias.
SmallVector<Value> convReadRoots(linalg::LinalgOp conv, const ConvFolds &folds) {
  SmallVector<Value> roots = {
      rootBuffer(folds.unpadded ? folds.unpadded : conv.getDpsInputOperand(0)->get()),
      rootBuffer(conv.getDpsInputOperand(1)->get())};
  if (folds.bias)
    roots.push_back(rootBuffer(folds.bias));
  return roots;
}

/// One activation loop after the conv that is the only other reader of its
/// output, on the same shape (ReLU, GELU, tanh, SiLU, sigmoid).
void foldActivation(linalg::LinalgOp conv, ConvFolds &folds) {
  Value out = conv.getDpsInitOperand(0)->get();
  linalg::GenericOp generic;
  for (Operation *user : out.getUsers()) {
    if (user == conv.getOperation() || user == folds.init)
      continue;
    if (generic || !isa<linalg::GenericOp>(user))
      return;
    generic = cast<linalg::GenericOp>(user);
  }
  if (!generic || generic->getBlock() != conv->getBlock() || !conv->isBeforeInBlock(generic) ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInputOperand(0)->get() != out ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return;
  EpilogueMatch steps;
  SmallVector<bool> addable(generic.getBody()->getNumArguments(), false);
  if (!matchEpilogueBody(generic, generic.getMatchingBlockArgument(generic.getDpsInputOperand(0)),
                         addable, steps))
    return;
  // The call moves to the loop's place: its inputs must still hold what
  // the conv read.
  SmallVector<Value> roots = convReadRoots(conv, folds);
  if (writtenBetween(conv, generic, roots) ||
      llvm::is_contained(roots, rootBuffer(generic.getDpsInitOperand(0)->get())))
    return;
  folds.activation = generic;
  folds.steps = steps;
}

/// `out[n, c, oh, ow] = max over (kh, kw) of source[n, c, oh * sh + kh,
/// ow * sw + kw]`, ConvLowering's unpadded max pool, reading `source`: its
/// strides and window; false for anything else.
bool matchMaxPool(linalg::GenericOp pool, Value source, int64_t kernel[2], int64_t stride[2]) {
  MLIRContext *ctx = pool.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<utils::IteratorType> iterators = pool.getIteratorTypesArray();
  if (pool.getNumDpsInputs() != 2 || pool.getNumDpsInits() != 1 || iterators.size() != 6 ||
      pool.getDpsInputOperand(0)->get() != source)
    return false;
  for (size_t i = 0; i < 6; ++i)
    if (iterators[i] != (i < 4 ? utils::IteratorType::parallel : utils::IteratorType::reduction))
      return false;
  OpOperand *input = pool.getDpsInputOperand(0), *window = pool.getDpsInputOperand(1),
            *init = pool.getDpsInitOperand(0);
  AffineMap inputMap = pool.getMatchingIndexingMap(input);
  if (inputMap.getNumResults() != 4 || inputMap.getResult(0) != d(0) ||
      inputMap.getResult(1) != d(1))
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    // The stride is the coefficient of the output position.
    SmallVector<AffineExpr> at(6, getAffineConstantExpr(0, ctx));
    at[2 + i] = getAffineConstantExpr(1, ctx);
    auto coefficient = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(inputMap.getResult(2 + i).replaceDims(at), 6, 0));
    if (!coefficient || coefficient.getValue() < 1)
      return false;
    stride[i] = coefficient.getValue();
    if (inputMap.getResult(2 + i) != d(2 + i) * stride[i] + d(4 + i))
      return false;
  }
  auto windowType = dyn_cast<MemRefType>(window->get().getType());
  if (!windowType || windowType.getRank() != 2 || !windowType.hasStaticShape() ||
      pool.getMatchingIndexingMap(window) != AffineMap::get(6, 0, {d(4), d(5)}, ctx) ||
      pool.getMatchingIndexingMap(init) != AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx))
    return false;
  kernel[0] = windowType.getDimSize(0);
  kernel[1] = windowType.getDimSize(1);
  auto yield = cast<linalg::YieldOp>(pool.getBody()->getTerminator());
  auto max = yield.getOperand(0).getDefiningOp<arith::MaximumFOp>();
  Value in = pool.getMatchingBlockArgument(input), acc = pool.getMatchingBlockArgument(init);
  return max && ((max.getLhs() == in && max.getRhs() == acc) ||
                 (max.getLhs() == acc && max.getRhs() == in));
}

/// A max pool that is the only other reader of the conv's output (or the
/// folded activation's), with its output filled with -inf just before: the
/// call writes the pooled result, and the full-size output is never made.
void foldMaxPool(linalg::LinalgOp conv, ConvFolds &folds) {
  if (!folds.init) // the pooled call overwrites; it cannot accumulate
    return;
  Operation *producer = folds.activation ? folds.activation.getOperation() : conv.getOperation();
  Value source = folds.activation ? folds.activation.getDpsInitOperand(0)->get()
                                  : conv.getDpsInitOperand(0)->get();
  if (!source.getDefiningOp<memref::AllocOp>())
    return;
  linalg::GenericOp pool;
  for (Operation *user : source.getUsers()) {
    if (user == producer || user == conv.getOperation() || user == folds.init)
      continue;
    if (pool || !isa<linalg::GenericOp>(user))
      return;
    pool = cast<linalg::GenericOp>(user);
  }
  if (!pool || pool->getBlock() != conv->getBlock() || !producer->isBeforeInBlock(pool))
    return;
  int64_t kernel[2], stride[2];
  if (!matchMaxPool(pool, source, kernel, stride))
    return;
  Value pooled = pool.getDpsInitOperand(0)->get();
  auto pooledType = dyn_cast<MemRefType>(pooled.getType());
  auto sourceType = cast<MemRefType>(source.getType());
  if (!pooledType || pooledType.getRank() != 4 || !pooledType.getElementType().isF32())
    return;
  // Floor-mode extents, as oneDNN computes them.
  for (int d = 2; d < 4; ++d)
    if (!sourceType.isDynamicDim(d) && !pooledType.isDynamicDim(d) &&
        (sourceType.getDimSize(d) - kernel[d - 2]) / stride[d - 2] + 1 != pooledType.getDimSize(d))
      return;
  // The only write to the pooled buffer before the pool: a -inf fill.
  Operation *fill = nullptr;
  for (Operation *user : pooled.getUsers()) {
    if (user == pool.getOperation() || user->getBlock() != pool->getBlock() ||
        !user->isBeforeInBlock(pool))
      continue;
    auto fillOp = dyn_cast<linalg::FillOp>(user);
    if (fill || !fillOp || fillOp.getOutputs()[0] != pooled ||
        !isFloatConstant(fillOp.getInputs()[0], -std::numeric_limits<double>::infinity()))
      return;
    fill = user;
  }
  if (!fill)
    return;
  // The call moves to the pool's place: its inputs must still hold what the
  // conv read, and it must not write one of them.
  SmallVector<Value> roots = convReadRoots(conv, folds);
  if (writtenBetween(conv, pool, roots) || llvm::is_contained(roots, rootBuffer(pooled)))
    return;
  folds.pool = pool;
  folds.poolFill = fill;
  for (int i = 0; i < 2; ++i) {
    folds.poolKernel[i] = kernel[i];
    folds.poolStride[i] = stride[i];
  }
}

/// A tensor that several conv calls of one block read as their input is
/// reordered to nChw16c once, before the first, into a buffer they all read
/// (ResNet's block input: conv1 and the downsample). Only for a plain
/// [N, C, H, W] with C a multiple of 16 that no reader takes blocked yet.
void shareBlockedInputs(ModuleOp module) {
  llvm::MapVector<Value, SmallVector<func::CallOp>> readersOf;
  module.walk([&](func::CallOp call) {
    std::optional<int64_t> flags = callFlags(call);
    if (!isConvCall(call) || !flags || (*flags & kSrcBlocked16))
      return;
    if (auto cast = call->getOperand(0).getDefiningOp<memref::CastOp>())
      readersOf[cast.getSource()].push_back(call);
  });
  for (auto &[input, readers] : readersOf) {
    auto type = dyn_cast<MemRefType>(input.getType());
    if (readers.size() < 2 || !type || type.getRank() != 4 || type.isDynamicDim(1) ||
        type.getDimSize(1) % 16 != 0 || llvm::any_of(readers, [&](func::CallOp call) {
          return call->getBlock() != readers.front()->getBlock();
        }))
      continue;
    func::CallOp first = readers.front();
    for (func::CallOp call : readers)
      if (call->isBeforeInBlock(first))
        first = call;
    OpBuilder builder(first);
    Location loc = first.getLoc();
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < 4; ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(memref::DimOp::create(builder, loc, input, d));
    auto blockedType = MemRefType::get(type.getShape(), type.getElementType());
    Value blocked = memref::AllocOp::create(builder, loc, blockedType, dynamicSizes,
                                            builder.getI64IntegerAttr(64));
    auto unranked = UnrankedMemRefType::get(type.getElementType(), Attribute());
    Value blockedArg = memref::CastOp::create(builder, loc, unranked, blocked);
    func::CallOp::create(
        builder, loc, declareRuntimeFunction(module, kToBlocked16Function, {unranked, unranked}),
        ValueRange{memref::CastOp::create(builder, loc, unranked, input), blockedArg});
    for (func::CallOp call : readers) {
      auto plainCast = call->getOperand(0).getDefiningOp<memref::CastOp>();
      call->setOperand(0, blockedArg);
      addFlag(call, kSrcBlocked16);
      if (plainCast->use_empty()) // each reader had its own cast of the input
        plainCast->erase();
    }
  }
}

/// modelc_conv2d_epilogue (`extraInts` 0) or modelc_conv2d_pool (4 more:
/// the pool's kernel and strides).
func::FuncOp conv2dCallee(ModuleOp module, StringRef name, int extraInts) {
  MLIRContext *ctx = module.getContext();
  auto unranked = UnrankedMemRefType::get(Float32Type::get(ctx), Attribute());
  SmallVector<Type> argTypes = {unranked, unranked, unranked, unranked};
  // stride h/w, padding h/w, dilation h/w, flags, activations (+ pool's)
  argTypes.append(8 + extraInts, IntegerType::get(ctx, 64));
  return declareRuntimeFunction(module, name, argTypes);
}

struct ConvToRuntimePass : PassWrapper<ConvToRuntimePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvToRuntimePass)

  StringRef getArgument() const final { return "mdl-conv-to-runtime"; }
  StringRef getDescription() const final {
    return "Replace f32 linalg convs on memrefs (with their padding copy, bias broadcast and "
           "activation loop, and a max pool reading it) with calls to modelc_conv2d_epilogue "
           "or modelc_conv2d_pool (oneDNN)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect, memref::MemRefDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::LinalgOp> convs;
    module.walk([&](Operation *op) {
      if (linalg::LinalgOp conv = asRuntimeConv(op))
        convs.push_back(conv);
    });
    if (convs.empty())
      return;

    auto unranked = UnrankedMemRefType::get(Float32Type::get(ctx), Attribute());
    for (linalg::LinalgOp conv : convs) {
      ConvFolds folds;
      if (isa<linalg::Conv2DNchwFchwOp>(conv.getOperation())) {
        foldPadding(conv, folds);
        foldInit(conv, folds);
        if (folds.init)
          foldActivation(conv, folds);
        foldMaxPool(conv, folds);
      }
      Operation *at = folds.pool         ? folds.pool.getOperation()
                      : folds.activation ? folds.activation.getOperation()
                                         : conv.getOperation();
      OpBuilder builder(at);
      Location loc = conv.getLoc();
      auto attrPair = [&](StringRef name) {
        auto values = cast<DenseIntElementsAttr>(conv->getAttr(name)).getValues<int64_t>();
        return std::pair<int64_t, int64_t>{values[0], values[1]};
      };
      auto [strideH, strideW] = attrPair("strides");
      auto [dilationH, dilationW] = attrPair("dilations");
      Value input = folds.unpadded ? folds.unpadded : conv.getDpsInputOperand(0)->get();
      Value output = folds.pool         ? folds.pool.getDpsInitOperand(0)->get()
                     : folds.activation ? folds.activation.getDpsInitOperand(0)->get()
                                        : conv.getDpsInitOperand(0)->get();
      Value bias = folds.bias ? folds.bias : output;
      Value weight = conv.getDpsInputOperand(1)->get();
      SmallVector<Value> args;
      for (Value operand : {input, weight, output, bias})
        args.push_back(memref::CastOp::create(builder, loc, unranked, operand));
      int64_t flags = (folds.init ? 0 : kAccumulate) | (folds.bias ? kBias : 0) |
                      (isStateBuffer(weight) ? kConstantWeights : 0);
      for (int64_t value : {strideH, strideW, folds.pad[0], folds.pad[1], dilationH, dilationW,
                            flags, folds.activation ? folds.steps.code() : int64_t(0)})
        args.push_back(arith::ConstantIntOp::create(builder, loc, value, 64));
      if (folds.pool)
        for (int64_t value :
             {folds.poolKernel[0], folds.poolKernel[1], folds.poolStride[0], folds.poolStride[1]})
          args.push_back(arith::ConstantIntOp::create(builder, loc, value, 64));
      func::CallOp::create(builder, loc,
                           folds.pool ? conv2dCallee(module, kConv2dPoolFunction, 4)
                                      : conv2dCallee(module, kConv2dEpilogueFunction, 0),
                           args);
      Value convOut = conv.getDpsInitOperand(0)->get();
      Value activationOut =
          folds.activation ? folds.activation.getDpsInitOperand(0)->get() : Value();
      if (folds.pool) {
        Value window = folds.pool.getDpsInputOperand(1)->get();
        folds.pool.erase();
        folds.poolFill->erase();
        if (window.use_empty() && window.getDefiningOp<memref::AllocOp>())
          window.getDefiningOp()->erase();
      }
      if (folds.activation)
        folds.activation.erase();
      conv->erase();
      if (folds.init)
        folds.init->erase();
      for (Operation *op : folds.padOps)
        op->erase();
      if (activationOut && activationOut != convOut && activationOut.use_empty() &&
          activationOut.getDefiningOp<memref::AllocOp>())
        activationOut.getDefiningOp()->erase();
      if ((folds.activation || folds.pool) && convOut.use_empty())
        convOut.getDefiningOp()->erase();
    }
    chainBlockedLayouts(module);
    shareBlockedInputs(module);
  }
};

} // namespace

std::unique_ptr<Pass> createConvToRuntimePass() { return std::make_unique<ConvToRuntimePass>(); }

} // namespace modelc::lower
