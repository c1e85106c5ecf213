//===- CpuPipeline.cpp - the mdl -> LLVM dialect pipeline for the cpu -----===//
//
//  1. A batch norm after a conv folds into it (mdl-fold-batch-norm);
//     mdl-to-linalg, then elementwise fusion (bias + activation after a
//     matmul become one loop nest) that leaves matmuls alone for BLAS.
//  2. One-shot bufferization; results become caller-provided out-params (a
//     tensor returned twice is copied first, one buffer per result), and a
//     result of dynamic shape is computed in its out-param, not copied. A
//     loop's carried tensor may be a new buffer each step (an RNN's hidden
//     state), so loops may yield allocations.
//  3. f32 matmuls and convs become runtime calls (oneDNN/OpenBLAS; optional),
//     the rest loops, in which f32 exp and tanh become polynomials and
//     reductions keep partial sums, so that the loop vectorizer widens them.
//  4. Loops (nests with enough work on the OpenMP threads: mdl-parallel-
//     loops, convert-scf-to-openmp), memrefs, math, func -> LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace modelc::lower {
namespace {

// scf-for-loop-canonicalization first: a recurrent layer's time loop
// returns tensors whose dims one-shot bufferization's slice analysis would
// otherwise trace through every loop before it (ValueBounds, Presburger): a
// 9-layer LSTM's bufferization took 8 s, 0.1 s after it.
constexpr const char *kBufferize =
    "func.func(scf-for-loop-canonicalization,canonicalize),"
    "eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
    "canonicalize";

constexpr const char *kToLoops = "buffer-deallocation-pipeline,convert-math-to-funcs,"
                                 "func.func(convert-linalg-to-parallel-loops)";

// After mdl-parallel-loops, which leaves scf.parallel only where the nest
// runs on the threads, and convert-scf-to-openmp.
constexpr const char *kToLlvm =
    "expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,"
    "convert-to-llvm,reconcile-unrealized-casts";

/// True for matmuls, other contractions and convolutions: they must stay
/// named ops so that mdl-matmul-to-blas and mdl-conv-to-runtime can hand
/// them to the library.
bool isLibraryOp(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && (linalg::isaContractionOpInterface(linalgOp) ||
                      linalg::isaConvolutionOpInterface(linalgOp));
}

/// linalg-fuse-elementwise-ops, except that no contraction takes part.
/// Upstream, folding reshapes by expansion turns a matmul whose operand is
/// a collapse_shape (im2col columns, a flatten) or whose result is expanded
/// into a linalg.generic, and elementwise fusion then pulls the im2col copy
/// into it: the conv becomes scalar loops instead of one SGEMM.
struct FuseElementwiseKeepContractionsPass
    : PassWrapper<FuseElementwiseKeepContractionsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseElementwiseKeepContractionsPass)

  StringRef getArgument() const final { return "mdl-fuse-elementwise"; }
  StringRef getDescription() const final {
    return "Fuse elementwise linalg ops and fold reshapes into them, leaving contractions "
           "(matmuls) and convs as named ops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect>();
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (isLibraryOp(producer) || isLibraryOp(fused->getOwner()))
        return false;
      // A producer the consumer reads through a broadcasting map would be
      // recomputed for every element it is broadcast to (a softmax's log of
      // the row sum, a layer norm's rsqrt of the variance): it stays a
      // smaller loop of its own.
      if (auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner()))
        if (!consumer.getMatchingIndexingMap(fused).isPermutation())
          return false;
      // As upstream: do not duplicate a producer with other uses.
      return !producer || producer->hasOneUse();
    };
    // A generic that reads a library op's result is its epilogue (the bias
    // add, the activation): it keeps the library op's shape. Expanded by a
    // reshape (attention's [B*T, E] projection viewed as [B, T, H, E/H]) it
    // no longer matches the library call's epilogue, and the product costs
    // a zero fill and a pass of its own.
    linalg::ControlFusionFn reshapeControl = [control](OpOperand *fused) {
      auto generic = dyn_cast<linalg::GenericOp>(fused->getOwner());
      if (!generic)
        generic = fused->get().getDefiningOp<linalg::GenericOp>();
      if (generic && llvm::any_of(generic.getDpsInputs(), [](Value input) {
            // Through the reshapes that give a [B*T, N] product its [B, T, N] shape.
            while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                input.getDefiningOp()))
              input = input.getDefiningOp()->getOperand(0);
            return isLibraryOp(input.getDefiningOp());
          }))
        return false;
      return control(fused);
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, reshapeControl);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

/// A value returned more than once (`return h, h`) becomes a copy at each
/// later position: buffer-results-to-out-params gives every result its own
/// out-param and cannot write one buffer into two.
struct DistinctResultsPass : PassWrapper<DistinctResultsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DistinctResultsPass)

  StringRef getArgument() const final { return "mdl-distinct-results"; }
  StringRef getDescription() const final {
    return "Copy a tensor returned more than once so that each result has its own buffer";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<bufferization::BufferizationDialect>();
  }

  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      llvm::SmallPtrSet<Value, 4> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || seen.insert(operand.get()).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), type, ValueRange(),
                                                         operand.get()));
      }
    });
  }
};

void registerUpstreamPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
}

struct CpuPipelineCLOptions : PassPipelineOptions<CpuPipelineCLOptions> {
  Option<bool> useBlas{*this, "use-blas",
                       llvm::cl::desc("Call the runtime (oneDNN/OpenBLAS) for f32 matmul and conv"),
                       llvm::cl::init(true)};
  Option<int64_t> parallelMinWork{
      *this, "parallel-min-work",
      llvm::cl::desc("Work from which a loop nest runs on the OpenMP threads (0: never)"),
      llvm::cl::init(kParallelLoopMinWork)};
};

} // namespace

void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  registerUpstreamPassesOnce();
  pm.addNestedPass<func::FuncOp>(createFoldBatchNormPass());
  pm.addPass(createLowerMdlToLinalgPass());
  // The strings name upstream passes only; they parse unless MLIR changes.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(std::make_unique<FuseElementwiseKeepContractionsPass>());
  pm.addNestedPass<func::FuncOp>(std::make_unique<DistinctResultsPass>());
  if (failed(parsePassPipeline(kBufferize, pm)))
    llvm::report_fatal_error("modelc: the cpu pipeline (bufferization part) does not parse");
  pm.addNestedPass<func::FuncOp>(createResultsInPlacePass());
  if (options.useBlas) {
    pm.addPass(createMatmulToBlasPass());
    pm.addPass(createConvToRuntimePass());
  }
  // After the library-call passes, which recognise GELU, tanh, SiLU and
  // sigmoid epilogues by the libm-based bodies ElementwiseLowering builds.
  pm.addNestedPass<func::FuncOp>(createApproximateMathPass());
  pm.addNestedPass<func::FuncOp>(createReassociateReductionsPass());
  // Before expand-strided-metadata, which crashes on these (see the pass).
  pm.addPass(createExpandDynamicReshapesPass());
  if (failed(parsePassPipeline(kToLoops, pm)))
    llvm::report_fatal_error("modelc: the cpu pipeline (loops part) does not parse");
  int64_t parallelMinWork = options.parallelLoopMinWork;
  if (const char *env = std::getenv("MODELC_PARALLEL_MIN_WORK"); env && *env)
    parallelMinWork = std::strtoll(env, nullptr, 10);
  pm.addNestedPass<func::FuncOp>(createParallelLoopsPass(parallelMinWork));
  pm.addPass(createConvertSCFToOpenMPPass());
  pm.addNestedPass<func::FuncOp>(createInlineAllocaScopesPass());
  if (failed(parsePassPipeline(kToLlvm, pm)))
    llvm::report_fatal_error("modelc: the cpu pipeline (LLVM part) does not parse");
}

void registerPasses() {
  registerUpstreamPassesOnce();
  registerPass([] { return createLowerMdlToLinalgPass(); });
  registerPass([] { return createMatmulToBlasPass(); });
  registerPass([] { return createConvToRuntimePass(); });
  registerPass([] { return std::make_unique<FuseElementwiseKeepContractionsPass>(); });
  registerPass([] { return createExpandDynamicReshapesPass(); });
  registerPass([] { return createApproximateMathPass(); });
  registerPass([] { return createFoldBatchNormPass(); });
  registerPass([] { return createHoistStatePrepPass(); });
  registerPass([] { return createResultsInPlacePass(); });
  registerPass([] { return createReassociateReductionsPass(); });
  registerPass([] { return createParallelLoopsPass(); });
  registerPass([] { return createInlineAllocaScopesPass(); });
  PassPipelineRegistration<CpuPipelineCLOptions>(
      "mdl-lower-cpu",
      "Lower mdl to the LLVM dialect for the cpu (mdl-to-linalg ... convert-to-llvm)",
      [](OpPassManager &pm, const CpuPipelineCLOptions &cl) {
        CpuPipelineOptions options;
        options.useBlas = cl.useBlas;
        options.parallelLoopMinWork = cl.parallelMinWork;
        buildCpuPipeline(pm, options);
      });
}

} // namespace modelc::lower
