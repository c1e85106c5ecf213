//===- BuildArtifact.h - `modelc build --emit=mdlc -o net.mdlc` -*- C++ -*-===//
//
// The artifact branch of `modelc build`: compiles a checked, instantiated
// model for this machine's CPU and writes one .mdlc file (compiler/aot,
// docs/artifacts.md).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_BUILDARTIFACT_H
#define MODELC_DRIVER_BUILDARTIFACT_H

#include "ModelOptions.h"

#include <string>

namespace modelc::driver {

struct ArtifactBuild {
  std::string fn = "forward";
  std::string args;    ///< `--args` as given, recorded in the artifact
  std::string device;  ///< `--device` as given, recorded in the artifact
  std::string weights; ///< a safetensors file to build in, or empty
  std::string output;
  bool color = false;
  /// The GPU architecture of a cuda artifact's CUBINs (`sm_90`).
  std::string gpuArch = "sm_90";
  /// `--tf32`: f32 matmuls and convs on TF32 tensor cores.
  bool tf32 = false;
};

/// Writes the artifact of `loaded`'s model. Exit codes as for `build`: 0
/// written, 1 the model cannot be compiled into an artifact or its weights do
/// not fit, 2 a file could not be read or written.
int writeArtifact(LoadedModel &loaded, const ArtifactBuild &build);

} // namespace modelc::driver

#endif // MODELC_DRIVER_BUILDARTIFACT_H
