//===- MlirGen.h - Checked .mdl models to the mdl dialect -------*- C++ -*-===//
//
// Builds a builtin.module for one instantiated model and one entry fn:
//
//   func.func @forward(<state...>, <inputs...>) -> <results...>
//
// Arguments: first every param and buffer in state_dict order (the order of
// `InstantiatedModel::state`: a model's own state, then each submodel's,
// depth first), then the fn's parameters in order. Tensor types carry the
// device as their #mdl.device encoding; dims the instance fixes are static,
// the rest (the batch `B`) are `?`. Calls into submodels and the model's own
// fns are inlined; every op has a FileLineColLoc into the .mdl source.
// Constructs the cpu back end cannot lower are reported as E0601.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_MLIRGEN_MLIRGEN_H
#define MODELC_MLIRGEN_MLIRGEN_H

#include "mlirgen/ModelArgs.h"

#include "diagnostics/DiagnosticEngine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace modelc::mlirgen {

/// Registers and loads the dialects the builder emits (mdl, func, arith,
/// tensor) into `context`.
void loadMlirGenDialects(mlir::MLIRContext &context);

/// Values for symbolic dims of the entry fn's signature (`B` = 4).
using DimBindings = llvm::ArrayRef<std::pair<sema::AtomId, int64_t>>;

/// What a call fixes beyond the symbolic dims.
struct EntryValues {
  /// The entry fn's scalar (`int`, `float`, `bool`) parameters, by name:
  /// compiled in as constants (an `int` one also fixes the dims that name
  /// it) and not arguments of the emitted function.
  std::vector<std::pair<std::string, double>> scalars;
  /// The extents of the `...` pack of the entry fn's signature
  /// (ShapedType::kDynamic for one known only at run time); nullopt when
  /// the call does not say, which makes a pack in the signature E0601.
  std::optional<std::vector<int64_t>> pack;
};

/// Emits fn `fnName` of `model` as an mdl module. Symbolic dims in
/// `bindings` become static (`modelc run` specialises to its inputs); the
/// others stay dynamic. Returns null after reporting to `diags` when a
/// construct cannot be emitted.
mlir::OwningOpRef<mlir::ModuleOp>
buildModule(mlir::MLIRContext &context, const sema::CheckedProgram &program,
            const llvm::SourceMgr &sourceMgr, const ConcreteModel &model, llvm::StringRef fnName,
            DiagnosticEngine &diags, DimBindings bindings = {}, const EntryValues &entry = {});

} // namespace modelc::mlirgen

#endif // MODELC_MLIRGEN_MLIRGEN_H
