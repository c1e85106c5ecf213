//===- MatmulToBlas.cpp - f32 linalg.matmul on buffers -> modelc_sgemm ----===//
//
// After bufferization, each `linalg.matmul ins(A, B) outs(C)` on f32
// memrefs (plain, or with A or B transposed) becomes
// `call @modelc_sgemm(A, B, C)` (C += A * B) with the operands cast to fully
// dynamic strided memrefs; a transposed operand is passed as a
// memref.transpose view. The callee is declared
// with llvm.emit_c_interface; the JIT binds it to OpenBLAS.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

MemRefType dynamicStrided2d(MLIRContext *ctx) {
  auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                       {ShapedType::kDynamic, ShapedType::kDynamic});
  return MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, Float32Type::get(ctx),
                         layout);
}

struct MatmulToBlasPass : PassWrapper<MatmulToBlasPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MatmulToBlasPass)

  StringRef getArgument() const final { return "mdl-matmul-to-blas"; }
  StringRef getDescription() const final {
    return "Replace f32 linalg.matmul on memrefs with calls to modelc_sgemm (OpenBLAS)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<func::FuncDialect, memref::MemRefDialect>();
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
    if (matmuls.empty())
      return;

    MemRefType argType = dynamicStrided2d(ctx);
    auto callee = module.lookupSymbol<func::FuncOp>(kSgemmFunction);
    if (!callee) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      callee = func::FuncOp::create(builder, module.getLoc(), kSgemmFunction,
                                    builder.getFunctionType({argType, argType, argType}, {}));
      callee.setPrivate();
      callee->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
    }
    for (linalg::MatmulOp op : matmuls) {
      OpBuilder builder(op);
      // A transposed operand becomes a transposed view (strides swapped),
      // which the runtime hands to BLAS with its transpose flag.
      bool transposeA = isa<linalg::MatmulTransposeAOp>(op.getOperation());
      bool transposeB = isa<linalg::MatmulTransposeBOp>(op.getOperation());
      AffineMap swap = AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, ctx);
      SmallVector<Value> args;
      for (auto [index, operand] : llvm::enumerate(op->getOperands())) {
        Value view = operand;
        if ((index == 0 && transposeA) || (index == 1 && transposeB))
          view =
              memref::TransposeOp::create(builder, op.getLoc(), operand, AffineMapAttr::get(swap));
        args.push_back(memref::CastOp::create(builder, op.getLoc(), argType, view));
      }
      func::CallOp::create(builder, op.getLoc(), callee, args);
      op.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createMatmulToBlasPass() { return std::make_unique<MatmulToBlasPass>(); }

} // namespace modelc::lower
