//===- Passes.h - mdl lowering passes and the CPU pipeline ----------------===//
//
// mdl (on tensors) -> linalg/tensor/arith/math -> bufferization -> loops ->
// LLVM dialect, ready for the JIT or for translation to LLVM IR.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_LOWER_PASSES_H
#define MODELC_LOWER_PASSES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <memory>
#include <string>

namespace modelc::lower {

/// `mdl-to-linalg`: rewrites every mdl op into linalg/tensor/arith/math on
/// plain tensors (the #mdl.device encoding is dropped). Fails with an error
/// on any tensor that lives on a device other than the cpu.
std::unique_ptr<mlir::Pass> createLowerMdlToLinalgPass();

/// `mdl-matmul-to-blas`: replaces f32 `linalg.matmul` on buffers with calls
/// to `modelc_sgemm` (C += A * B), which the JIT binds to OpenBLAS.
std::unique_ptr<mlir::Pass> createMatmulToBlasPass();

/// `mdl-conv-to-runtime`: replaces f32 `linalg.conv_2d_nchw_fchw` and
/// `linalg.conv_2d_ngchw_gfchw` on buffers with calls to `modelc_conv2d`
/// (output += conv), which the JIT binds to oneDNN.
std::unique_ptr<mlir::Pass> createConvToRuntimePass();

/// `mdl-expand-dynamic-reshapes`: rewrites each memref.expand_shape with more
/// than one dynamic dim in a reassociation group (which MLIR 22's
/// expand-strided-metadata crashes on) to memref.reinterpret_cast.
std::unique_ptr<mlir::Pass> createExpandDynamicReshapesPass();

/// `mdl-fold-batch-norm`: folds each f32 mdl.batch_norm that is the only user
/// of an mdl.conv2d into that conv (weights scaled per output channel, the
/// shift as its bias), as torch.nn.utils.fuse_conv_bn_eval does.
std::unique_ptr<mlir::Pass> createFoldBatchNormPass();

/// `mdl-hoist-state-prep{fn=F state-args=N}`: moves what fn `fnName`
/// computes from its first `numState` arguments (the model's state) and
/// constants alone into a new function `preparedStateFunction(fnName)`,
/// `(state...) -> (prepared...)`, to be run once per bound weights; the fn
/// then takes the prepared values as arguments right after the state. Views
/// (reshape, transpose, slice) stay in the fn. Does nothing when there is
/// nothing to prepare.
std::unique_ptr<mlir::Pass> createHoistStatePrepPass(llvm::StringRef fnName, unsigned numState);
std::unique_ptr<mlir::Pass> createHoistStatePrepPass();
/// `forward` -> `forward_prepare`.
std::string preparedStateFunction(llvm::StringRef fnName);
/// The unit attribute mdl-hoist-state-prep puts on the fn's state and
/// prepared arguments: their values are the same on every call, so
/// mdl-conv-to-runtime lets the runtime keep conv weights in the library's
/// layout (kConvConstantWeights).
inline constexpr const char *kStateArgAttr = "mdl.state";

/// `mdl-results-in-place`: a result buffer allocated in the fn and copied
/// into its out-parameter at the end (a dynamic shape, which
/// buffer-results-to-out-params leaves so) is replaced by the out-parameter.
std::unique_ptr<mlir::Pass> createResultsInPlacePass();

/// `mdl-approximate-math`: rewrites f32 math.exp, expm1 and tanh into
/// MLIR's polynomial approximations, which the loop vectorizer widens (libm
/// calls it cannot).
std::unique_ptr<mlir::Pass> createApproximateMathPass();

/// `mdl-reassociate-reductions`: flags the float arithmetic in the body of
/// each linalg.generic with a reduction iterator `reassoc`, so that the loop
/// vectorizer keeps partial sums (a sum, max or norm over a row).
std::unique_ptr<mlir::Pass> createReassociateReductionsPass();

/// Work (loop iterations x operations per iteration) from which a loop nest
/// runs on the OpenMP threads: about 20-40 µs of scalar work, several times
/// what a fork and join cost while the threads are awake.
inline constexpr int64_t kParallelLoopMinWork = 1 << 17;

/// `mdl-parallel-loops{min-work=N}`: after convert-linalg-to-parallel-loops,
/// marks each outermost scf.parallel whose body only computes and accesses
/// memory to run on the OpenMP threads (convert-scf-to-openmp) when its work
/// reaches `minWork` (checked at run time where sizes are dynamic); every
/// other scf.parallel becomes nested scf.for.
std::unique_ptr<mlir::Pass> createParallelLoopsPass(int64_t minWork);
std::unique_ptr<mlir::Pass> createParallelLoopsPass();

/// `mdl-inline-alloca-scopes`: inlines memref.alloca_scope ops that allocate
/// nothing (convert-scf-to-openmp wraps each iteration in one).
std::unique_ptr<mlir::Pass> createInlineAllocaScopesPass();

/// Name of the runtime function the BLAS pass calls; its C entry point is
/// `_mlir_ciface_modelc_sgemm(StridedMemRefType<float, 2> *A, *B, *C)`.
inline constexpr const char *kSgemmFunction = "modelc_sgemm";

/// C[i] += A[i] * B[i] for each i of the batch: `_mlir_ciface_modelc_batch_sgemm(
/// A, B, C)` (3-D strided memrefs).
inline constexpr const char *kBatchSgemmFunction = "modelc_batch_sgemm";

/// C = epilogue(A * B): `_mlir_ciface_modelc_matmul_epilogue(A, B, C, X0, X1,
/// int64_t steps)` (2-D strided memrefs; jit/BlasRuntime.h has the encoding).
inline constexpr const char *kMatmulEpilogueFunction = "modelc_matmul_epilogue";

/// Name of the runtime function the conv pass calls; its C entry point is
/// `_mlir_ciface_modelc_conv2d(UnrankedMemRefType<float> *input, *weight,
/// *output, int64_t strideH, strideW, padH, padW, dilationH, dilationW)`.
inline constexpr const char *kConv2dFunction = "modelc_conv2d";

/// output = act(conv (+ output) (+ bias)): `_mlir_ciface_modelc_conv2d_epilogue(
/// input, weight, output, bias, strides, padding, dilations, int64_t flags,
/// int64_t activations)` (jit/ConvRuntime.h has the encoding).
inline constexpr const char *kConv2dEpilogueFunction = "modelc_conv2d_epilogue";

/// output = maxpool(act(conv + bias)): `_mlir_ciface_modelc_conv2d_pool(input,
/// weight, pooled output, bias, strides, padding, dilations, int64_t flags,
/// int64_t activations, pool kernel h/w, pool stride h/w)`.
inline constexpr const char *kConv2dPoolFunction = "modelc_conv2d_pool";

/// output = input in oneDNN's nChw16c layout, for several convs that read it
/// so (kConvSrcBlocked16): `_mlir_ciface_modelc_to_blocked16(input, output)`.
inline constexpr const char *kToBlocked16Function = "modelc_to_blocked16";

struct CpuPipelineOptions {
  /// Call the runtime's library code (oneDNN, else OpenBLAS) for f32 matmul
  /// and conv instead of generating loops.
  bool useBlas = true;
  /// mdl-parallel-loops' min-work (0: every loop on the calling thread).
  int64_t parallelLoopMinWork = kParallelLoopMinWork;
};

/// Appends the whole CPU lowering (mdl on tensors -> LLVM dialect) to `pm`,
/// which must be anchored on builtin.module.
void buildCpuPipeline(mlir::OpPassManager &pm, const CpuPipelineOptions &options = {});

/// Registers the passes above and the pipelines `mdl-lower-cpu` and
/// `mdl-lower-cpu-naive` (without BLAS) for modelc-opt.
void registerPasses();

} // namespace modelc::lower

#endif // MODELC_LOWER_PASSES_H
