//===- Executor.h - Run an entry fn of an instantiated model ----*- C++ -*-===//
//
// `modelc run` without the command line: bind the model's declared state to a
// safetensors file (all or nothing), check each input against the entry fn's
// signature (dtype, shape with its symbolic dims bound consistently across
// inputs, device), build the mdl module, JIT-compile it for the cpu and call
// it. Problems with the model or its inputs are diagnostics (E0601-E0607)
// that point into the .mdl source; failures outside the model (unreadable
// files, a JIT failure) are llvm::Errors.
//
// The compiled function takes the state tensors in state_dict order, then
// the tensor inputs, then one caller-allocated output buffer per result (see
// MlirGen.h).
// A scalar parameter (`temperature: float`) arrives as a rank-0 input and is
// compiled in as a constant, like the symbolic dims `modelc run` fixes.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_EXEC_EXECUTOR_H
#define MODELC_EXEC_EXECUTOR_H

#include "mlirgen/ModelArgs.h"

#include "cudaexec/CudaDevices.h"

#include "diagnostics/DiagnosticEngine.h"
#include "runtime/InputCheck.h"
#include "runtime/SafeTensors.h"
#include "runtime/Tensor.h"
#include "runtime/WeightLoader.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
}

namespace modelc::exec {

/// One input of the entry fn: the array and the device it arrives on.
struct EntryInput {
  runtime::Tensor tensor;
  runtime::Device device;
  std::string source; // the file it came from, for messages
};

/// The results of one call: one tensor per result of the entry fn, in order
/// (a fn declared `-> (T, U)` has two).
using Results = std::vector<runtime::Tensor>;

/// The dtype and shape of one result, fixed by a set of inputs.
struct ResultSpec {
  runtime::DType dtype = runtime::DType::F32;
  runtime::Shape shape;
};

/// The shapes fixed by a set of inputs.
struct BoundSignature {
  /// One per result of the entry fn, in order.
  std::vector<ResultSpec> results;
  /// The extent each symbolic dim of the signature took (`B` = 4).
  std::vector<std::pair<sema::AtomId, int64_t>> dims;
  /// The value of each scalar (`int`, `float`, `bool`) parameter, by name:
  /// given as a rank-0 input, compiled in as a constant.
  std::vector<std::pair<std::string, double>> scalars;
  /// Per input: whether it is one of `scalars` (the compiled fn takes only
  /// the tensors).
  std::vector<bool> isScalar;
  /// The extents the inputs gave the signature's `...` pack, if it has one.
  std::optional<runtime::Shape> pack;
};

/// The declared state of `model` as the weight loader wants it. Reports
/// E0601 (and returns nullopt) if a state shape is not concrete.
std::optional<std::vector<runtime::StateEntry>> declaredState(const mlirgen::ConcreteModel &model);

/// Binds `file` to the model's state; on a mismatch reports E0607 with one
/// note per problem and returns nullopt.
std::optional<runtime::LoadedWeights> bindModelWeights(const mlirgen::ConcreteModel &model,
                                                       const runtime::SafeTensorsFile &file,
                                                       DiagnosticEngine &diags);

/// Checks `inputs` against fn `fnName` (E0602-E0606) and computes the result
/// shape; nullopt after reporting.
std::optional<BoundSignature> checkInputs(const mlirgen::ConcreteModel &model,
                                          llvm::StringRef fnName, llvm::ArrayRef<EntryInput> inputs,
                                          DiagnosticEngine &diags);

/// What checkInputs derives from the entry fn alone (the declared input
/// shapes, the result dims), derived once per compiled fn so that a call
/// whose inputs fit binds them without deriving it again: that took 2-3 us
/// of a 16 us batch-1 MLP call through the embedding API. Inputs that do not
/// fit go to checkInputs, which says why.
class PreparedSignature {
public:
  /// nullopt for a fn this does not cover (scalar parameters, results that
  /// are not tensors, no such fn): checkInputs handles those on every call.
  static std::optional<PreparedSignature> prepare(const mlirgen::ConcreteModel &model,
                                                  llvm::StringRef fnName);
  /// What `inputs` bind, as checkInputs computes it; nullopt when they do
  /// not fit the signature (checkInputs then reports why).
  std::optional<BoundSignature> bind(llvm::ArrayRef<EntryInput> inputs) const;
  /// bind() through `prepared` when there is one and the inputs fit, else
  /// checkInputs (which reports what does not fit): what a compiled fn's
  /// call runs.
  static std::optional<BoundSignature>
  bindOrCheck(const std::optional<PreparedSignature> &prepared, const mlirgen::ConcreteModel &model,
              llvm::StringRef fnName, llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags);

private:
  struct ResultDim {
    std::optional<int64_t> constant;
    std::string symbol;   ///< non-empty: the extent bound to this symbol
    sema::Dim expression; ///< otherwise: substituted with the bound extents
  };
  struct ResultDims {
    runtime::DType dtype = runtime::DType::F32;
    bool pack = false; ///< the inputs' `...` dims first
    std::vector<ResultDim> dims;
  };
  std::vector<runtime::DeclaredInput> wants_;
  llvm::StringMap<sema::AtomId> atoms_;
  std::vector<ResultDims> results_;
};

/// Reports E0601 (and returns false) unless the model and all its state
/// live on the cpu, the one device the JIT compiles for.
bool checkCpuPlacement(const mlirgen::ConcreteModel &model, DiagnosticEngine &diags);

struct RunOptions {
  std::string fnName = "forward";
  unsigned optLevel = 3;
  bool useBlas = true;
  /// How cuda:N runs (CudaModel.h); unset: MODELC_CUDA, else the driver.
  std::optional<cudaexec::CudaMode> cudaMode;
  /// f32 matmuls and convs on cuda use TF32 tensor cores (`--tf32`).
  bool tf32 = false;
  /// When set and the model ran on GPUs: how (cudaexec::formatRunReport).
  std::string *gpuReport = nullptr;
};

/// Runs the whole way: inputs checked, then a CompiledModel (CompiledModel.h)
/// specialised to the inputs' symbolic dims is built and called once.
/// Returns one tensor per result, nullopt after reporting diagnostics, or an
/// Error for failures that are not about the model.
llvm::Expected<std::optional<Results>>
runModelResults(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
                const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
                llvm::ArrayRef<EntryInput> inputs, const RunOptions &options,
                DiagnosticEngine &diags);
/// runModelResults for an entry fn with one result: that result (an Error
/// when the fn returns several).
llvm::Expected<std::optional<runtime::Tensor>>
runModel(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
         const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
         llvm::ArrayRef<EntryInput> inputs, const RunOptions &options, DiagnosticEngine &diags);
/// The one tensor of `results` (an Error naming `fnName` when there are
/// several).
llvm::Expected<std::optional<runtime::Tensor>>
onlyResult(llvm::Expected<std::optional<Results>> results, llvm::StringRef fnName);

/// The stages `modelc emit` prints after the mdl module itself.
enum class LoweringStage { Linalg, Llvm };
/// Lowers `module` in place to `stage`; the error carries MLIR's diagnostics.
llvm::Error lowerModule(mlir::ModuleOp module, LoweringStage stage, bool useBlas = true);

} // namespace modelc::exec

#endif // MODELC_EXEC_EXECUTOR_H
