//===- ReassociateReductions.cpp - float reductions the vectorizer widens -===//
//
// A float sum (or max) over a row is a chain of dependent adds when the
// order must be kept: one element per FP-add latency (a layer norm over
// [2048, 256] took 1 ms, 1.9 ns per element, PyTorch's 0.3 ms). LLVM's loop
// vectorizer keeps several partial sums instead -- as PyTorch's kernels and
// every BLAS do -- only for operations flagged `reassoc`. This pass flags the
// float arithmetic in the body of each reduction (a linalg.generic with a
// reduction iterator: sums, means, variances, softmax's max and sum, pools,
// convolutions and matmuls left as loops). Partial sums round differently
// from one running sum, not worse (the error bound of a sum of n terms
// shrinks with the number of partial sums).
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace modelc::lower {
namespace {

struct ReassociateReductionsPass
    : PassWrapper<ReassociateReductionsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ReassociateReductionsPass)

  StringRef getArgument() const final { return "mdl-reassociate-reductions"; }
  StringRef getDescription() const final {
    return "Flag the float arithmetic of reductions (linalg.generic with a reduction iterator) "
           "reassoc, so that the loop vectorizer keeps partial sums";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }

  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp generic) {
      if (generic.getNumReductionLoops() == 0)
        return;
      generic.getBody()->walk([](arith::ArithFastMathInterface op) {
        arith::FastMathFlagsAttr flags = op.getFastMathFlagsAttr();
        arith::FastMathFlags value = flags ? flags.getValue() : arith::FastMathFlags::none;
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(op->getContext(),
                                                  value | arith::FastMathFlags::reassoc));
      });
    });
  }
};

} // namespace

std::unique_ptr<Pass> createReassociateReductionsPass() {
  return std::make_unique<ReassociateReductionsPass>();
}

} // namespace modelc::lower
