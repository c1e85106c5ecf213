//===- CompiledModel.h - One entry fn compiled once, called many times -*- C++ -*-===//
//
// A CompiledModel is an entry fn of an instantiated model, JIT-compiled once
// with its weights bound once (zero-copy over the safetensors mapping), ready
// to be called with any number of input sets:
//
//   auto compiled = CompiledModel::create(program, sourceMgr, model,
//                                         std::move(weights), options, diags);
//   auto y = (*compiled)->call(inputs, callDiags);   // from any thread
//
// Symbolic dims of the signature (the batch `B`) stay dynamic in the compiled
// code unless `staticDims` fixes them, so one compilation serves every batch
// size.
//
// Threads: call() is const and reentrant. Shared by all calls (read-only):
// the machine code, the bound weights, the model's signature and the checked
// program it points into; the shapes the last call bound, behind a mutex.
// Per call: the inputs' descriptors, the output tensor and every temporary
// the compiled code allocates (the cpu pipeline keeps no mutable globals:
// constants become read-only globals, every other buffer is malloc'ed
// inside the call, and results go to the caller's out-parameter). Each call
// reports into its own DiagnosticEngine; ranges in those diagnostics point
// into the program's source buffers.
//
// The CompiledModel keeps the checked program and source manager by
// reference: they must outlive it.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_EXEC_COMPILEDMODEL_H
#define MODELC_EXEC_COMPILEDMODEL_H

#include "exec/Executor.h"

#include "llvm/Support/Error.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace modelc::jit {
class JitModule;
}
namespace mlir {
class MLIRContext;
class ModuleOp;
} // namespace mlir

namespace modelc::exec {

struct CompileModelOptions {
  std::string fnName = "forward";
  unsigned optLevel = 3;
  bool useBlas = true;
  /// Symbolic dims to compile as static extents (`modelc run` specialises
  /// to its inputs); calls must then bind them to exactly these values.
  /// Empty: every symbolic dim stays dynamic.
  std::vector<std::pair<sema::AtomId, int64_t>> staticDims;
  /// The values of the entry fn's scalar parameters (`temperature: float`,
  /// `k: int`), by name: compiled in as constants, so every call must pass
  /// exactly these (as rank-0 inputs). A scalar parameter without a value
  /// here is E0601 at create().
  std::vector<std::pair<std::string, double>> scalarArgs;
  /// The extents of the signature's `...` pack (-1: known only at run
  /// time), which fixes its rank; calls must match. Needed when the
  /// signature has a pack (else E0601 at create()).
  std::optional<std::vector<int64_t>> pack;
};

/// Splits what fn `fnName` of `module` (an mdl module from
/// mlirgen::buildModule) computes from its `numState` state arguments alone
/// into `<fnName>_prepare` (lower::createHoistStatePrepPass, after the batch
/// norm fold that makes most of it); the fn then takes those values after
/// the state. Returns the dtype and shape of each, in argument order; none
/// when there is nothing to prepare.
llvm::Expected<std::vector<ResultSpec>>
hoistStatePreparation(mlir::ModuleOp module, llvm::StringRef fnName, unsigned numState);
/// Runs `<fnName>_prepare` of `jit` once on the state that `stateDescriptors`
/// describe (the words of one memref descriptor each, in argument order):
/// one tensor per entry of `prepared` (none when it is empty).
llvm::Expected<std::vector<runtime::Tensor>>
runStatePreparation(const jit::JitModule &jit, llvm::StringRef fnName,
                    llvm::ArrayRef<ResultSpec> prepared,
                    llvm::ArrayRef<std::vector<int64_t>> stateDescriptors);

class CompiledModel {
public:
  /// Checks that the model is placed on the cpu, builds the mdl module for
  /// `options.fnName`, compiles it and keeps `weights` (bound by
  /// bindModelWeights to this model). Returns null after reporting
  /// diagnostics (E0601), or an Error when the JIT fails.
  static llvm::Expected<std::unique_ptr<CompiledModel>>
  create(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
         mlirgen::ConcreteModel model, runtime::LoadedWeights weights,
         const CompileModelOptions &options, DiagnosticEngine &diags);

  ~CompiledModel();
  CompiledModel(const CompiledModel &) = delete;
  CompiledModel &operator=(const CompiledModel &) = delete;

  /// Checks `inputs` against the signature (E0602-E0606), allocates the
  /// outputs and runs the compiled fn. Returns one tensor per result of the
  /// fn, nullopt after reporting to `diags`, or an Error for failures
  /// outside the model. Safe to call from several threads at once.
  llvm::Expected<std::optional<Results>> callResults(llvm::ArrayRef<EntryInput> inputs,
                                                     DiagnosticEngine &diags) const;
  /// callResults for a fn with one result: that result (an Error when the
  /// fn returns several).
  llvm::Expected<std::optional<runtime::Tensor>> call(llvm::ArrayRef<EntryInput> inputs,
                                                      DiagnosticEngine &diags) const;

  const mlirgen::ConcreteModel &model() const { return model_; }
  llvm::StringRef fnName() const { return options_.fnName; }
  const runtime::LoadedWeights &weights() const { return weights_; }

private:
  CompiledModel() = default;

  /// One memref descriptor's words: inline up to rank 4.
  using Descriptor = llvm::SmallVector<int64_t, 11>;
  /// The dtype, device and shape of one input of a call that bound.
  struct InputKey {
    runtime::DType dtype;
    runtime::Device device;
    runtime::Shape shape;
  };
  /// The last inputs that bound and passed every check, and what they bound.
  struct BoundCall {
    llvm::SmallVector<InputKey, 4> key;
    std::shared_ptr<const BoundSignature> sig;
    bool matches(llvm::ArrayRef<EntryInput> inputs) const;
  };

  /// What the last call's inputs bound, when `inputs` have the same dtypes,
  /// devices and shapes (a model called again and again with one input
  /// shape binds once); null otherwise.
  std::shared_ptr<const BoundSignature> lastBound(llvm::ArrayRef<EntryInput> inputs) const;
  void rememberBound(llvm::ArrayRef<EntryInput> inputs,
                     std::shared_ptr<const BoundSignature> sig) const;
  /// Binds `inputs` to the signature and checks them against the options
  /// the fn was compiled with: null after reporting to `diags`.
  llvm::Expected<std::shared_ptr<const BoundSignature>>
  bindAndCheck(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags) const;

  mlirgen::ConcreteModel model_;
  runtime::LoadedWeights weights_;
  CompileModelOptions options_;
  std::unique_ptr<mlir::MLIRContext> context_;
  std::unique_ptr<jit::JitModule> jit_;
  void (*entry_)(void **) = nullptr;
  /// The fn's signature derived once, for calls whose inputs fit it.
  std::optional<PreparedSignature> signature_;
  /// What the fn computes from the state alone, computed once by
  /// `<fn>_prepare` (lower::createHoistStatePrepPass): the folded conv
  /// weights of a batch norm, attention's gathered projections.
  std::vector<runtime::Tensor> preparedState_;
  /// Descriptor words of each state tensor, in state_dict order, then of
  /// each prepared value: built once, only read by calls.
  std::vector<std::vector<int64_t>> stateDescriptors_;
  mutable std::mutex lastBoundMutex_;
  mutable BoundCall lastBound_;
};

} // namespace modelc::exec

#endif // MODELC_EXEC_COMPILEDMODEL_H
