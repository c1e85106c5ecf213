//===- MatmulToBlas.cpp - f32 linalg.matmul on buffers -> runtime calls ---===//
//
// After bufferization, each `linalg.matmul ins(A, B) outs(C)` on f32
// memrefs (plain, or with A or B transposed) becomes a runtime call with the
// operands cast to fully dynamic strided memrefs; a transposed operand is
// passed as a memref.transpose view. The callees are declared with
// llvm.emit_c_interface; the JIT binds them (jit/BlasRuntime.h).
//
// When C is a fresh buffer filled with zeros whose only reader is one
// elementwise linalg.generic that applies bias adds, residual adds and
// activations (ReLU, GELU, tanh, SiLU, sigmoid) to it, fill + matmul +
// generic become one `call @modelc_matmul_epilogue(A, B, D, X0, X1, steps)`
// writing the generic's output D: the library applies the epilogue while
// each block of the product is in cache, and neither the zero fill nor the
// intermediate C is written. Otherwise `call @modelc_sgemm(A, B, C)`
// (C += A * B).
//
//===----------------------------------------------------------------------===//

#include "lower/EpilogueMatch.h"
#include "lower/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

/// Bias and residual operands the runtime entry takes.
constexpr size_t kMaxAddOperands = 2;

MemRefType dynamicStrided2d(MLIRContext *ctx) {
  auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                       {ShapedType::kDynamic, ShapedType::kDynamic});
  return MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, Float32Type::get(ctx),
                         layout);
}

MemRefType dynamicStrided3d(MLIRContext *ctx) {
  SmallVector<int64_t> dynamic(3, ShapedType::kDynamic);
  return MemRefType::get(dynamic, Float32Type::get(ctx),
                         StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dynamic));
}

/// A linalg.fill of 0.0 into `buffer` earlier in its block.
linalg::FillOp zeroFillOf(Value buffer, Operation *before) {
  for (Operation *user : buffer.getUsers()) {
    auto fill = dyn_cast<linalg::FillOp>(user);
    if (fill && fill.getOutputs()[0] == buffer && fill->getBlock() == before->getBlock() &&
        fill->isBeforeInBlock(before) && isFloatConstant(fill.getInputs()[0], 0.0))
      return fill;
  }
  return {};
}

/// What fuses with a matmul: its zero fill, the view the epilogue reads it
/// through (C itself, or C expanded to more leading dims: a 3-D Linear),
/// and the elementwise consumer.
struct EpilogueFusion {
  linalg::FillOp fill;
  memref::ExpandShapeOp expanded;
  linalg::GenericOp generic;
  EpilogueMatch match;
};

/// Whether `reassociation` keeps the last dim alone and merges every
/// leading dim into the first: the rows of a rank-2 product.
bool rowsThenColumns(ArrayRef<ReassociationIndices> reassociation, int64_t rank) {
  return reassociation.size() == 2 && int64_t(reassociation[0].size()) == rank - 1 &&
         reassociation[1].size() == 1;
}

/// A buffer the call can see as rank 2 (leading dims merged into rows).
bool collapsibleToRows(MemRefType type) {
  return type.getRank() == 2 || (type.getRank() > 2 && type.getLayout().isIdentity());
}

/// The elementwise consumer of a matmul's zero-filled result, with the
/// epilogue its body applies; false when the pattern does not hold.
bool matchEpilogue(linalg::MatmulOp matmul, EpilogueFusion &fusion) {
  Value c = matmul.getOutputs()[0];
  if (!c.getDefiningOp<memref::AllocOp>())
    return false;
  fusion.fill = zeroFillOf(c, matmul);
  Operation *reader = nullptr;
  for (Operation *user : c.getUsers()) {
    if (user == matmul || user == fusion.fill)
      continue;
    if (reader)
      return false;
    reader = user;
  }
  if (!fusion.fill || !reader)
    return false;
  Value view = c;
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(reader)) {
    if (!rowsThenColumns(expand.getReassociationIndices(), expand.getType().getRank()))
      return false;
    // Besides the reader, only its sizes may be asked (they stay valid).
    reader = nullptr;
    for (Operation *user : expand->getUsers()) {
      if (isa<memref::DimOp>(user))
        continue;
      if (reader)
        return false;
      reader = user;
    }
    fusion.expanded = expand;
    view = expand.getResult();
  }
  auto generic = dyn_cast_or_null<linalg::GenericOp>(reader);
  int64_t rank = cast<MemRefType>(view.getType()).getRank();
  if (!generic || generic->getBlock() != matmul->getBlock() || !matmul->isBeforeInBlock(generic) ||
      generic.getNumDpsInits() != 1 || generic.getNumLoops() != rank ||
      generic.getNumParallelLoops() != rank)
    return false;
  MLIRContext *ctx = matmul.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(unsigned(rank), ctx);
  AffineMap biasMap =
      AffineMap::get(unsigned(rank), 0, {getAffineDimExpr(unsigned(rank - 1), ctx)}, ctx);
  OpOperand *out = generic.getDpsInitOperand(0);
  if (generic.getMatchingIndexingMap(out) != identity ||
      !collapsibleToRows(cast<MemRefType>(out->get().getType())))
    return false;
  // Which inputs may be added: the product once, bias rows, matrices of its
  // shape.
  SmallVector<bool> operandInputs(generic.getNumDpsInputs(), false);
  Value base;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (!type || !type.getElementType().isF32())
      return false;
    BlockArgument arg = generic.getMatchingBlockArgument(input);
    if (input->get() == view) {
      if (base || map != identity)
        return false;
      base = arg;
      continue;
    }
    operandInputs[arg.getArgNumber()] =
        (type.getRank() == rank && map == identity && collapsibleToRows(type)) ||
        (type.getRank() == 1 && map == biasMap);
  }
  if (!base || !matchEpilogueBody(generic, base, operandInputs, fusion.match) ||
      fusion.match.addInputs.size() > kMaxAddOperands)
    return false;
  // The call replaces the generic, so A and B must still hold what the
  // matmul read: nothing in between may write them. The library writes D
  // before it reads an added operand (sgemm, then the epilogue): D must not
  // be one of the inputs (an in-place residual add).
  SmallVector<Value> inputs = {rootBuffer(matmul.getInputs()[0]),
                               rootBuffer(matmul.getInputs()[1])};
  if (writtenBetween(matmul, generic, inputs))
    return false;
  for (unsigned input : fusion.match.addInputs)
    inputs.push_back(rootBuffer(generic.getDpsInputOperand(input)->get()));
  if (llvm::is_contained(inputs, rootBuffer(out->get())))
    return false;
  fusion.generic = generic;
  return true;
}

struct MatmulToBlasPass : PassWrapper<MatmulToBlasPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MatmulToBlasPass)

  StringRef getArgument() const final { return "mdl-matmul-to-blas"; }
  StringRef getDescription() const final {
    return "Replace f32 linalg.matmul on memrefs with calls to modelc_sgemm, or with its "
           "elementwise consumer to modelc_matmul_epilogue (oneDNN/OpenBLAS)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, func::FuncDialect, memref::MemRefDialect>();
  }

  /// A and B as the runtime takes them: a transposed operand becomes a
  /// transposed view (strides swapped), which the runtime hands to the
  /// library with its transpose flag.
  SmallVector<Value> productOperands(OpBuilder &builder, linalg::MatmulOp op, Type argType) {
    bool transposeA = isa<linalg::MatmulTransposeAOp>(op.getOperation());
    bool transposeB = isa<linalg::MatmulTransposeBOp>(op.getOperation());
    AffineMap swap = AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, op.getContext());
    SmallVector<Value> args;
    for (auto [index, operand] : llvm::enumerate(op.getInputs())) {
      Value view = operand;
      if ((index == 0 && transposeA) || (index == 1 && transposeB))
        view = memref::TransposeOp::create(builder, op.getLoc(), operand, AffineMapAttr::get(swap));
      args.push_back(memref::CastOp::create(builder, op.getLoc(), argType, view));
    }
    return args;
  }

  /// fill + matmul + generic -> modelc_matmul_epilogue(A, B, D, X0, X1, steps)
  /// at the generic's place.
  void fuse(ModuleOp module, linalg::MatmulOp matmul, const EpilogueFusion &fusion,
            MemRefType argType) {
    Type i64 = IntegerType::get(module.getContext(), 64);
    func::FuncOp callee = declareRuntimeFunction(
        module, kMatmulEpilogueFunction, {argType, argType, argType, argType, argType, i64});
    linalg::GenericOp generic = fusion.generic;
    OpBuilder builder(generic);
    Location loc = generic.getLoc();
    // Rank-2 views of the generic's buffers: leading dims merged into rows.
    auto asRows = [&](Value buffer) -> Value {
      auto type = cast<MemRefType>(buffer.getType());
      if (type.getRank() == 2)
        return buffer;
      ReassociationIndices rows;
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        rows.push_back(d);
      SmallVector<ReassociationIndices> groups = {rows, {type.getRank() - 1}};
      return memref::CollapseShapeOp::create(builder, loc, buffer, groups);
    };
    SmallVector<Value> args = productOperands(builder, matmul, argType);
    Value d = asRows(generic.getDpsInitOperand(0)->get());
    args.push_back(memref::CastOp::create(builder, loc, argType, d));
    for (unsigned input : fusion.match.addInputs) {
      Value x = generic.getDpsInputOperand(input)->get();
      if (cast<MemRefType>(x.getType()).getRank() == 1) {
        // A bias row: the same row for every i (row stride 0).
        auto meta = memref::ExtractStridedMetadataOp::create(builder, loc, x);
        OpFoldResult rows = memref::getMixedSize(builder, loc, d, 0);
        x = memref::ReinterpretCastOp::create(
            builder, loc, argType, meta.getBaseBuffer(), meta.getConstifiedMixedOffset(),
            {rows, meta.getConstifiedMixedSizes()[0]},
            {builder.getIndexAttr(0), meta.getConstifiedMixedStrides()[0]});
      } else {
        x = asRows(x);
      }
      args.push_back(memref::CastOp::create(builder, loc, argType, x));
    }
    while (args.size() < 5)
      args.push_back(args[2]); // unused operand slots
    // A weight that is the same on every call may be kept in the library's
    // layout (jit/GemmKernels.h's kEpilogueConstantB).
    int64_t code = fusion.match.code() |
                   (isStateBuffer(matmul.getInputs()[1]) ? kEpilogueConstantB : int64_t(0));
    args.push_back(arith::ConstantIntOp::create(builder, loc, code, 64));
    func::CallOp::create(builder, loc, callee, args);
    Value c = matmul.getOutputs()[0];
    generic.erase();
    if (fusion.expanded && fusion.expanded->use_empty())
      fusion.expanded->erase();
    matmul.erase();
    fusion.fill->erase();
    // C stays allocated (never written) while its sizes are still asked.
    if (c.use_empty())
      c.getDefiningOp()->erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<linalg::MatmulOp> matmuls;
    module.walk([&](linalg::MatmulOp op) {
      bool knownMaps =
          op.getIndexingMapsArray() == op.getDefaultIndexingMaps(ctx) ||
          isa<linalg::MatmulTransposeAOp, linalg::MatmulTransposeBOp>(op.getOperation());
      if (op.hasPureBufferSemantics() && knownMaps &&
          llvm::all_of(op->getOperandTypes(), [](Type type) {
            auto memref = dyn_cast<MemRefType>(type);
            return memref && memref.getRank() == 2 && memref.getElementType().isF32();
          }))
        matmuls.push_back(op);
    });
    // Batched products (attention's scores and weighted sums): one call
    // accumulating into the zero-filled C, the runtime taking each matrix.
    SmallVector<linalg::BatchMatmulOp> batched;
    module.walk([&](linalg::BatchMatmulOp op) {
      bool knownMaps =
          op.getIndexingMapsArray() == op.getDefaultIndexingMaps(ctx) ||
          isa<linalg::BatchMatmulTransposeAOp, linalg::BatchMatmulTransposeBOp>(op.getOperation());
      if (op.hasPureBufferSemantics() && knownMaps &&
          llvm::all_of(op->getOperandTypes(), [](Type type) {
            auto memref = dyn_cast<MemRefType>(type);
            return memref && memref.getRank() == 3 && memref.getElementType().isF32();
          }))
        batched.push_back(op);
    });
    MemRefType batchType = dynamicStrided3d(ctx);
    AffineMap swapMatrix = AffineMap::getPermutationMap(ArrayRef<unsigned>{0, 2, 1}, ctx);
    for (linalg::BatchMatmulOp op : batched) {
      func::FuncOp callee =
          declareRuntimeFunction(module, kBatchSgemmFunction, {batchType, batchType, batchType});
      OpBuilder builder(op);
      bool transposeA = isa<linalg::BatchMatmulTransposeAOp>(op.getOperation());
      bool transposeB = isa<linalg::BatchMatmulTransposeBOp>(op.getOperation());
      SmallVector<Value> args;
      for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
        // A transposed operand as a view whose matrices are column-major.
        Value view = operand;
        if ((index == 0 && transposeA) || (index == 1 && transposeB))
          view = memref::TransposeOp::create(builder, op.getLoc(), operand,
                                             AffineMapAttr::get(swapMatrix));
        args.push_back(memref::CastOp::create(builder, op.getLoc(), batchType, view));
      }
      func::CallOp::create(builder, op.getLoc(), callee, args);
      op.erase();
    }
    MemRefType argType = dynamicStrided2d(ctx);
    for (linalg::MatmulOp op : matmuls) {
      EpilogueFusion fusion;
      if (matchEpilogue(op, fusion)) {
        fuse(module, op, fusion, argType);
        continue;
      }
      func::FuncOp callee =
          declareRuntimeFunction(module, kSgemmFunction, {argType, argType, argType});
      OpBuilder builder(op);
      SmallVector<Value> args = productOperands(builder, op, argType);
      args.push_back(memref::CastOp::create(builder, op.getLoc(), argType, op.getOutputs()[0]));
      func::CallOp::create(builder, op.getLoc(), callee, args);
      op.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createMatmulToBlasPass() { return std::make_unique<MatmulToBlasPass>(); }

} // namespace modelc::lower
