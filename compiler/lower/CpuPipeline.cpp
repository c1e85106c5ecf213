//===- CpuPipeline.cpp - the mdl -> LLVM dialect pipeline for the cpu -----===//
//
//  1. mdl-to-linalg, then elementwise fusion (bias + activation after a
//     matmul become one loop nest).
//  2. One-shot bufferization; results become caller-provided out-params.
//  3. f32 matmuls become OpenBLAS calls (optional), the rest loops.
//  4. Loops, memrefs, math, func -> LLVM dialect.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"

#include <mutex>

using namespace mlir;

namespace modelc::lower {
namespace {

constexpr const char *kFuseAndBufferize =
    "func.func(canonicalize,linalg-fuse-elementwise-ops,canonicalize),"
    "eliminate-empty-tensors,"
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "buffer-results-to-out-params{hoist-static-allocs modify-public-functions},"
    "canonicalize";

constexpr const char *kToLlvm =
    "buffer-deallocation-pipeline,convert-math-to-funcs,"
    "func.func(convert-linalg-to-loops),expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,finalize-memref-to-llvm,"
    "convert-to-llvm,reconcile-unrealized-casts";

void registerUpstreamPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
}

struct CpuPipelineCLOptions : PassPipelineOptions<CpuPipelineCLOptions> {
  Option<bool> useBlas{*this, "use-blas", llvm::cl::desc("Call OpenBLAS for f32 matmul"),
                       llvm::cl::init(true)};
};

} // namespace

void buildCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  registerUpstreamPassesOnce();
  pm.addPass(createLowerMdlToLinalgPass());
  // The strings name upstream passes only; they parse unless MLIR changes.
  if (failed(parsePassPipeline(kFuseAndBufferize, pm)))
    llvm::report_fatal_error("modelc: the cpu pipeline (bufferization part) does not parse");
  if (options.useBlas)
    pm.addPass(createMatmulToBlasPass());
  // Before expand-strided-metadata, which crashes on these (see the pass).
  pm.addPass(createExpandDynamicReshapesPass());
  if (failed(parsePassPipeline(kToLlvm, pm)))
    llvm::report_fatal_error("modelc: the cpu pipeline (LLVM part) does not parse");
}

void registerPasses() {
  registerUpstreamPassesOnce();
  registerPass([] { return createLowerMdlToLinalgPass(); });
  registerPass([] { return createMatmulToBlasPass(); });
  registerPass([] { return createExpandDynamicReshapesPass(); });
  PassPipelineRegistration<CpuPipelineCLOptions>(
      "mdl-lower-cpu",
      "Lower mdl to the LLVM dialect for the cpu (mdl-to-linalg ... convert-to-llvm)",
      [](OpPassManager &pm, const CpuPipelineCLOptions &cl) {
        CpuPipelineOptions options;
        options.useBlas = cl.useBlas;
        buildCpuPipeline(pm, options);
      });
}

} // namespace modelc::lower
