//===- CudaModel.h - An entry fn with work on cuda:N, compiled once -*- C++ -*-===//
//
// The execution path of models that place anything on a GPU: the mdl module
// of the entry fn is partitioned by compiler/cudagen into a DevicePlan
// (kernels per GPU, cpu regions, copies), which compiler/cudaexec compiles
// once - kernels loaded on their devices, cpu regions JIT-compiled, weights
// copied to their devices - and runs for every call. Symbolic dims (the batch
// `B`) not listed in `staticDims` stay symbolic in the plan; `modelc run`
// fixes them to its inputs, as cudagen's planner does not handle `tensor.dim`
// in every case yet.
//
// Whether cuda:N is a real GPU or the CPU emulator is `options.cudaMode`
// (default: MODELC_CUDA, else the driver).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_EXEC_CUDAMODEL_H
#define MODELC_EXEC_CUDAMODEL_H

#include "exec/Executor.h"

#include "cudaexec/PlanExecutor.h"
#include "mlirgen/MlirGen.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace modelc::exec {

/// True when fn `fnName` of `model`, its state or its instance names a GPU.
bool placedOnCuda(const mlirgen::ConcreteModel &model, llvm::StringRef fnName);

/// The device plan of fn `fnName` of `model` (`staticDims` fixed, the rest symbolic):
/// nullopt after reporting diagnostics, an Error where the code generator
/// cannot handle an op.
llvm::Expected<std::optional<cudagen::DevicePlan>>
planModel(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
          const mlirgen::ConcreteModel &model, llvm::StringRef fnName, DiagnosticEngine &diags,
          mlirgen::DimBindings staticDims = {}, bool tf32 = false);

/// The state tensors of `weights` in the model's state order (the plan's).
llvm::Expected<std::vector<runtime::Tensor>> stateInOrder(const mlirgen::ConcreteModel &model,
                                                          const runtime::LoadedWeights &weights);

struct CudaModelOptions {
  std::string fnName = "forward";
  unsigned optLevel = 3;
  bool useBlas = true;
  std::optional<cudaexec::CudaMode> cudaMode;
  /// f32 matmuls and convs on TF32 tensor cores (cudagen::PlanOptions::tf32).
  bool tf32 = false;
  /// Symbolic dims compiled as static extents (cudagen's planner does not
  /// handle `tensor.dim` yet, so `modelc run` specialises to its inputs).
  std::vector<std::pair<sema::AtomId, int64_t>> staticDims;
};

class CudaModel {
public:
  /// Builds and compiles the plan and binds `weights` (bound to this model
  /// by bindModelWeights). Returns null after reporting diagnostics (E0601
  /// for constructs the code generator does not handle), or an Error: a
  /// device that cannot be used (cudaexec::isDeviceUnavailable tells), a
  /// kernel that does not compile.
  static llvm::Expected<std::unique_ptr<CudaModel>>
  create(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
         const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
         const CudaModelOptions &options, DiagnosticEngine &diags);

  /// Checks `inputs` against the signature (E0602-E0606) and runs the plan;
  /// one tensor per result of the fn. With Residency::OnDevice, inputs on a
  /// GPU are device tensors used in place and results on a GPU stay there.
  /// Thread-safe: runs of the plan are serialised by its executor.
  llvm::Expected<std::optional<Results>>
  callResults(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags,
              cudaexec::Residency residency = cudaexec::Residency::HostBytes) const;
  /// callResults for a fn with one result (an Error when it has several).
  llvm::Expected<std::optional<runtime::Tensor>>
  call(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags,
       cudaexec::Residency residency = cudaexec::Residency::HostBytes) const;

  const mlirgen::ConcreteModel &concreteModel() const { return model; }

  const cudaexec::PlanExecutor &executor() const { return *plan; }

private:
  CudaModel(mlirgen::ConcreteModel model, std::string fnName)
      : model(std::move(model)), fnName(std::move(fnName)),
        signature(PreparedSignature::prepare(this->model, this->fnName)) {}

  mlirgen::ConcreteModel model;
  std::string fnName;
  /// The fn's signature derived once, for calls whose inputs fit it.
  std::optional<PreparedSignature> signature;
  std::unique_ptr<cudaexec::PlanExecutor> plan;
};

/// runModelResults' path for a model placed on a GPU: compiles a CudaModel
/// and calls it once.
llvm::Expected<std::optional<Results>>
runModelOnCudaResults(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
                      const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
                      llvm::ArrayRef<EntryInput> inputs, const RunOptions &options,
                      DiagnosticEngine &diags);

} // namespace modelc::exec

#endif // MODELC_EXEC_CUDAMODEL_H
