//===- RunArtifact.h - `modelc run net.mdlc` --------------------*- C++ -*-===//
//
// Runs a model compiled ahead of time (`modelc build -o net.mdlc`) through
// the artifact loader: no .mdl file, no checking, no compiling. Inputs and
// weights are checked against the signature and parameter layout stored in
// the artifact, with the codes of the JIT path (E0602-E0607).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_RUNARTIFACT_H
#define MODELC_DRIVER_RUNARTIFACT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include "cudaexec/CudaDevices.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::driver {

/// Whether `path` names an artifact rather than a .mdl source file.
inline bool isArtifactPath(llvm::StringRef path) { return path.ends_with(".mdlc"); }

struct ArtifactRun {
  std::string file;
  std::string fn = "forward";
  std::string weights; ///< empty: the artifact's own weights, if any
  llvm::ArrayRef<std::string> inputs;
  /// Where inputs without `@DEVICE` are; empty: the artifact's `--device`.
  std::string defaultDevice;
  /// `--cuda`: how a cuda artifact's GPUs run.
  std::optional<cudaexec::CudaMode> cudaMode;
  /// One `--output` per result (empty: print a summary).
  std::vector<std::string> outputs;
  bool color = false;
  /// `--report`: how a cuda artifact ran, on stderr.
  bool report = false;
  /// Options of the .mdl path that were given (`--model`...): refused.
  std::vector<std::string> compileOptionsGiven;
};

/// Exit codes as for `modelc run`: 0 ran, 1 the artifact was refused or the
/// weights or inputs do not fit, 2 a file could not be read.
int runArtifact(const ArtifactRun &run);

} // namespace modelc::driver

#endif // MODELC_DRIVER_RUNARTIFACT_H
