//===- ConvToRuntime.cpp - f32 linalg convs on buffers -> modelc_conv2d ---===//
//
// After bufferization, each f32 `linalg.conv_2d_nchw_fchw` (and grouped
// `linalg.conv_2d_ngchw_gfchw`) on memrefs becomes
// `call @modelc_conv2d(input, weight, output, strides, padding, dilations)`
// (output += conv) with the operands cast to unranked memrefs; the JIT binds
// it to a oneDNN convolution. Padding is already in the input (tensor.pad),
// so the call passes zero.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

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

struct ConvToRuntimePass : PassWrapper<ConvToRuntimePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConvToRuntimePass)

  StringRef getArgument() const final { return "mdl-conv-to-runtime"; }
  StringRef getDescription() const final {
    return "Replace f32 linalg convs on memrefs with calls to modelc_conv2d (oneDNN)";
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
    Type i64 = IntegerType::get(ctx, 64);
    auto callee = module.lookupSymbol<func::FuncOp>(kConv2dFunction);
    if (!callee) {
      OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
      SmallVector<Type> argTypes = {unranked, unranked, unranked};
      argTypes.append(6, i64); // stride h/w, padding h/w, dilation h/w
      callee = func::FuncOp::create(builder, module.getLoc(), kConv2dFunction,
                                    builder.getFunctionType(argTypes, {}));
      callee.setPrivate();
      callee->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
    }
    for (linalg::LinalgOp conv : convs) {
      OpBuilder builder(conv);
      Location loc = conv.getLoc();
      auto attrPair = [&](StringRef name) {
        auto values = cast<DenseIntElementsAttr>(conv->getAttr(name)).getValues<int64_t>();
        return std::pair<int64_t, int64_t>{values[0], values[1]};
      };
      auto [strideH, strideW] = attrPair("strides");
      auto [dilationH, dilationW] = attrPair("dilations");
      SmallVector<Value> args;
      for (Value operand : conv->getOperands())
        args.push_back(memref::CastOp::create(builder, loc, unranked, operand));
      for (int64_t value : {strideH, strideW, int64_t(0), int64_t(0), dilationH, dilationW})
        args.push_back(arith::ConstantIntOp::create(builder, loc, value, 64));
      func::CallOp::create(builder, loc, callee, args);
      conv->erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createConvToRuntimePass() { return std::make_unique<ConvToRuntimePass>(); }

} // namespace modelc::lower
