//===- LowerMdlToLinalg.cpp - the mdl-to-linalg conversion pass -----------===//
//
// 1. Reject tensors on devices other than the cpu (the only back end so far)
//    and element types the patterns do not handle.
// 2. Make f16/bf16 accumulations f32 (WidenHalf.cpp).
// 3. Drop the #mdl.device encoding from every tensor type (function
//    signatures, calls and returns included).
// 4. Rewrite each mdl op with the patterns of *Lowering.cpp.
//
//===----------------------------------------------------------------------===//

#include "lower/LoweringUtils.h"
#include "lower/Passes.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

/// Reports the first tensor that lives on a non-cpu device or has an
/// element type the patterns cannot compute with (index, complex, ...).
LogicalResult checkLowerable(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    auto check = [&](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        return true;
      Type element = tensor.getElementType();
      bool plainInteger = isa<IntegerType>(element) && element.isSignlessInteger();
      if (!plainInteger && !isa<FloatType>(element)) {
        op->emitError() << "cannot lower a tensor of " << element
                        << " with the cpu back end (only signless integer and float dtypes)";
        return false;
      }
      mdl::DeviceAttr device = mdl::getDevice(type);
      if (device && !device.isCpu()) {
        op->emitError() << "cannot lower a tensor on " << device.str()
                        << " with the cpu back end (only cpu tensors are supported)";
        return false;
      }
      return true;
    };
    for (Type type : op->getResultTypes())
      if (!check(type))
        return WalkResult::interrupt();
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (!check(arg.getType()))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// `tensor.dim` of a device tensor (mlirgen reads run-time sizes this way):
/// the same op on the converted tensor.
struct ConvertTensorDim : OpConversionPattern<tensor::DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(tensor::DimOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::DimOp>(op, adaptor.getSource(), adaptor.getIndex());
    return success();
  }
};

struct LowerMdlToLinalgPass : PassWrapper<LowerMdlToLinalgPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerMdlToLinalgPass)

  StringRef getArgument() const final { return "mdl-to-linalg"; }
  StringRef getDescription() const final {
    return "Lower mdl ops on cpu tensors to linalg/tensor/arith/math";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry
        .insert<linalg::LinalgDialect, tensor::TensorDialect, arith::ArithDialect,
                math::MathDialect, func::FuncDialect, cf::ControlFlowDialect, scf::SCFDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkLowerable(module)))
      return signalPassFailure();
    widenHalfAccumulations(module);

    MLIRContext *ctx = &getContext();
    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion([](RankedTensorType type) -> Type {
      return RankedTensorType::get(type.getShape(), type.getElementType());
    });

    ConversionTarget target(*ctx);
    target.addIllegalDialect<mdl::MdlDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) && converter.isLegal(&op.getBody());
    });
    target.markUnknownOpDynamicallyLegal([&](Operation *op) { return converter.isLegal(op); });

    RewritePatternSet patterns(ctx);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    patterns.add<ConvertTensorDim>(converter, ctx);
    populateElementwisePatterns(converter, patterns);
    populateTensorPatterns(converter, patterns);
    populateConvPatterns(converter, patterns);
    populateLoopPatterns(converter, patterns, target);
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createLowerMdlToLinalgPass() {
  return std::make_unique<LowerMdlToLinalgPass>();
}

} // namespace modelc::lower
