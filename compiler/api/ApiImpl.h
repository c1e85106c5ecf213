//===- ApiImpl.h - What the public modelc::api handles hold -----*- C++ -*-===//
//
// The pimpl structs behind include/modelc/*.h and the conversions between
// public and internal values. Only the library's own sources include this.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_API_APIIMPL_H
#define MODELC_API_APIIMPL_H

#include "modelc/Model.h"

#include "cudaexec/CudaDevices.h"
#include "exec/CompiledModel.h"
#include "exec/CudaModel.h"
#include "runtime/SafeTensors.h"
#include "sema/Compilation.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>

namespace modelc::aot {
class LoadedArtifact;
}

namespace modelc::api {

struct Tensor::Impl {
  runtime::Tensor tensor;
};

struct Program::Impl {
  std::unique_ptr<modelc::Compilation> compilation;
  /// CompileOptions::tf32, for the models' GPU plans.
  bool tf32 = false;
  /// The SourceMgr fills its line caches lazily: diagnostics are resolved
  /// to lines and columns one thread at a time.
  std::mutex sourceMutex;
};

struct Model::Impl {
  /// A model loaded from a .mdlc artifact (ApiArtifact.cpp) has no program:
  /// its signature, code and layout come from the artifact.
  std::shared_ptr<const aot::LoadedArtifact> artifact;
  std::shared_ptr<Program::Impl> program;
  mlirgen::ConcreteModel model;
  Device device;
  /// Bound once by loadWeights; each Function keeps its own copy (the
  /// tensors share the mapped bytes).
  std::optional<runtime::LoadedWeights> weights;
};

struct Function::Impl {
  std::shared_ptr<Program::Impl> program;
  std::unique_ptr<exec::CompiledModel> compiled;
  /// A model placed on GPUs: its device plan, compiled, weights on the GPUs.
  std::unique_ptr<exec::CudaModel> cuda;
  EntryPoint signature;
  /// What messages call input i of signature: "the tensor given for `x`"
  /// (built once, not per call).
  std::vector<std::string> inputSources;
  /// For an artifact's fn: the artifact and the weights it runs with.
  std::shared_ptr<const aot::LoadedArtifact> artifact;
  std::optional<runtime::LoadedWeights> artifactWeights;
};

// Models loaded from .mdlc artifacts (ApiArtifact.cpp; only in builds that
// have the artifact loader, MODELC_HAVE_AOT).
std::string artifactModelName(const Model::Impl &model);
std::vector<EntryPoint> artifactEntryPoints(const Model::Impl &model);
std::vector<StateEntry> artifactState(const Model::Impl &model);
Status bindArtifactWeights(Model::Impl &model, const runtime::SafeTensorsFile &file);
Result<Function> compileArtifactFn(const Model::Impl &model, const std::string &fn);
Result<std::vector<Tensor>> callArtifactFn(const Function::Impl &function,
                                           const std::vector<Tensor> &inputs);
/// Function::runReport() of an artifact's fn.
std::string artifactRunReport(const Function::Impl &function);

/// The diagnostics `engine` holds, resolved against `program`'s sources
/// (under its mutex), in source order; the engine is left empty.
std::vector<Diagnostic> takeDiagnostics(DiagnosticEngine &engine, Program::Impl &program);
/// An error outside the model (an llvm::Error's message).
Diagnostic errorDiagnostic(llvm::Error error);

/// Conversions between the public and the runtime's dtypes and devices.
runtime::DType toRuntime(DType dtype);
DType fromRuntime(runtime::DType dtype);
runtime::Device toRuntime(Device device);
Device fromRuntime(runtime::Device device);

/// How cuda:N runs in this process (setCudaBackend), and the backend of
/// one GPU in that mode (kernels not compiled from source).
cudaexec::CudaMode apiCudaMode();
llvm::Expected<cuda::CudaBackend &> apiCudaBackend(int device);

/// Wraps a runtime tensor.
Tensor wrapTensor(runtime::Tensor tensor);

/// Where `import std.*` is found when the caller does not say: empty (the
/// Compilation's own default) unless a stdlib is installed next to this
/// library, at <libdir>/../share/modelc/stdlib.
std::string installedStdlibDir();

} // namespace modelc::api

#endif // MODELC_API_APIIMPL_H
