//===- ArtifactWriter.h - Compile a model instance into a .mdlc -*- C++ -*-===//
//
// `modelc build --emit=mdlc`: builds the mdl module of one entry fn (its
// symbolic dims, the batch `B`, stay dynamic), compiles it with the JIT's own
// pipeline, target machine and O3 (jit::JitModule, so the code is the JIT's
// code) and stores the object code it produced together with the fn's
// signature, the parameter layout, the target and, optionally, the weights.
//
// A model placed on GPUs is planned by compiler/cudagen instead (the batch
// stays dynamic): the artifact holds the DevicePlan, each GPU's kernels as
// PTX and CUBIN (NVRTC, for `gpuArch`) and CUDA C++ (for the emulator), and
// the object code of the plan's cpu regions, compiled as above.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_AOT_ARTIFACTWRITER_H
#define MODELC_AOT_ARTIFACTWRITER_H

#include "mlirgen/ModelArgs.h"

#include "diagnostics/DiagnosticEngine.h"
#include "runtime/SafeTensors.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace modelc::aot {

struct ArtifactBuildOptions {
  std::string fnName = "forward";
  bool useBlas = true;
  /// `--args` and `--device` as given, recorded for `modelc run` messages.
  std::string modelArgs;
  std::string modelDevice = "cpu";
  /// Weights to build in; they must fit the model (E0607).
  const runtime::SafeTensorsFile *weights = nullptr;
  /// The GPU architecture the CUBINs are built for (`sm_90`); the PTX is
  /// for the matching virtual one (`compute_90`).
  std::string gpuArch = "sm_90";
  /// f32 matmuls and convs on TF32 tensor cores (`--tf32`).
  bool tf32 = false;
};

/// The bytes of the artifact. Problems with the model are diagnostics
/// (E0601, E0607) after which nullopt is returned; failures outside the model
/// (a cuda device, code generation) are Errors.
llvm::Expected<std::optional<std::string>> buildArtifact(const sema::CheckedProgram &program,
                                                         const llvm::SourceMgr &sourceMgr,
                                                         const mlirgen::ConcreteModel &model,
                                                         const ArtifactBuildOptions &options,
                                                         DiagnosticEngine &diags);

} // namespace modelc::aot

#endif // MODELC_AOT_ARTIFACTWRITER_H
