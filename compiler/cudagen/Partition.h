//===- Partition.h - Split an mdl function by device into a plan -*- C++ -*-===//
//
// buildDevicePlan takes the module mlirgen builds for an instantiated model
// (`func.func @forward(<state...>, <inputs...>) -> <result>`) and splits the
// entry function by device:
//   - maximal runs of ops on `cpu` are outlined into functions of a CPU-side
//     mdl module (lowered later by the existing cpu pipeline) and become
//     CpuCall steps;
//   - ops on `cuda:N` become kernels of cuda:N's translation unit (Launch
//     steps): elementwise chains fuse into one kernel, and into the epilogue
//     of a producing matmul or conv2d;
//   - `mdl.transfer` becomes a Copy step.
// An op with no CUDA kernel is an error naming the op and its .mdl line.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAGEN_PARTITION_H
#define MODELC_CUDAGEN_PARTITION_H

#include "cudagen/DevicePlan.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::cudagen {

struct PlanOptions {
  /// The entry function ("forward").
  std::string entry = "forward";
  /// state_dict names of the leading state arguments, in argument order;
  /// the remaining arguments are the fn's inputs.
  std::vector<std::string> stateNames;
  /// Per input, per dim: the name of a symbolic (`?`) dim, e.g. "B"; a
  /// missing or empty name becomes `d<input>_<dim>`.
  std::vector<std::vector<std::string>> inputDimNames;
  /// f32 matmuls and convs on TF32 tensor cores (inputs rounded to a 10-bit
  /// mantissa, fp32 accumulation); off: exact fp32 (the default).
  bool tf32 = false;
};

/// Builds the plan of `options.entry` in `module` (the module is not
/// modified; the CPU module is printed into the plan).
llvm::Expected<DevicePlan> buildDevicePlan(mlir::ModuleOp module, const PlanOptions &options);

/// The runtime dtype of a tensor type's (or a scalar type's) elements;
/// nullopt for one the runtime has no dtype for.
std::optional<runtime::DType> dtypeOf(mlir::Type type);

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_PARTITION_H
