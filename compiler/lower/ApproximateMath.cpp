//===- ApproximateMath.cpp - f32 exp and tanh as polynomials ---------------===//
//
// libm's expf and tanhf are calls the loop vectorizer cannot widen: a
// softmax, sigmoid or SiLU loop then runs one element per call (softmax
// over [64, 4, 32, 32] took 2.5-3.7 ms against PyTorch's vectorised 0.3 ms).
// MLIR's polynomial approximations of the same functions are plain
// arithmetic (a few ulp from the correctly rounded result; tested against
// float64 and against the CUDA path's libm in tests/lit/cuda/semantics.test),
// which LLVM vectorises with the rest of the loop body.
//
// Left to libm: log and cos, which randn's Box-Muller transform uses (its
// values are one function of the seed on both back ends), and which run per
// row (log_softmax) or not in hot loops otherwise; and erf: GELU's
// 1 + erf(x / sqrt 2) cancels for x below -2, where MLIR's erf (absolute
// error ~1e-7) is 1e-4 relative from libm's (semantics.test's row 9 fails
// with it); a GELU after a matmul or conv runs as the library's post-op.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace modelc::lower {
namespace {

bool isApproximated(StringRef name) {
  name.consume_front("math.");
  return name == "exp" || name == "expm1" || name == "tanh";
}

struct ApproximateMathPass : PassWrapper<ApproximateMathPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ApproximateMathPass)

  StringRef getArgument() const final { return "mdl-approximate-math"; }
  StringRef getDescription() const final {
    return "Rewrite f32 math.exp, expm1 and tanh into polynomial approximations that "
           "vectorise";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, math::MathDialect, vector::VectorDialect>();
  }

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "math" &&
          isApproximated(op->getName().getStringRef()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    // Only those ops and what their rewrites create: the rest of the
    // function is left as the earlier passes made it.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createApproximateMathPass() {
  return std::make_unique<ApproximateMathPass>();
}

} // namespace modelc::lower
