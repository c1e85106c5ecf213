//===- ArtifactLoader.h - Load a .mdlc artifact and call it -----*- C++ -*-===//
//
// Loads a model compiled ahead of time by `modelc build` and runs it, with no
// compiler in the process: no MLIR, no front end, no optimisation passes.
//
//   auto artifact = aot::LoadedArtifact::load("net.mdlc");     // verify + link
//   auto weights = (*artifact)->bindWeights(safetensorsFile);  // or embeddedWeights()
//   auto y = (*artifact)->call("forward", *weights, {x});      // from any thread
//
// load() refuses, before any of the code is linked or run: a file that is no
// artifact, truncated, corrupted (checksum), of another format version, or
// compiled for another CPU architecture or for CPU features this machine
// lacks (ArtifactError says which). It then links the object code in memory
// with ORC's ObjectLinkingLayer, resolving the runtime functions it calls
// (the sgemm entry point, memref copies, libc and libm), and looks up every
// entry fn.
//
// A cuda artifact (docs/artifacts.md) is run by compiler/cudaexec's
// PlanExecutor: its cpu regions from the linked object code, its kernels from
// the CUBIN when the GPU's architecture matches, else from the PTX (compiled
// by the driver), or, on the emulator, from the stored CUDA C++ (built by the
// host compiler). load() fails with the backend's error when a GPU cannot be
// used (cuda::CudaError: no driver, no such GPU, no host compiler).
//
// call() checks the inputs against the stored signature with the checks and
// messages of E0602-E0606 (InputMismatchError; without a source file the
// notes quote the declared type instead of pointing at it), allocates the
// result and runs the compiled fn. It is const and reentrant: calls share the
// read-only code and weights; every temporary is the call's own.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_AOT_ARTIFACTLOADER_H
#define MODELC_AOT_ARTIFACTLOADER_H

#include "aot/ArtifactFormat.h"

#include "cudaexec/CudaDevices.h"
#include "cudaexec/PlanExecutor.h"

#include "runtime/SafeTensors.h"
#include "runtime/Tensor.h"
#include "runtime/WeightLoader.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
}

namespace modelc::aot {

/// Inputs that do not fit an entry fn: `code` is the diagnostic code the
/// JIT path reports for the same problem (E0602-E0606), `message` its
/// headline, `notes` what the JIT path shows as labels and notes.
class InputMismatchError : public llvm::ErrorInfo<InputMismatchError> {
public:
  static char ID;
  InputMismatchError(std::string code, std::string message, std::vector<std::string> notes)
      : code(std::move(code)), message(std::move(message)), notes(std::move(notes)) {}
  /// `error[E0603]: message` and one `note: ...` line per note.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  std::string code;
  std::string message;
  std::vector<std::string> notes;
};

struct LoadOptions {
  /// How cuda:N runs (cuda artifacts): default MODELC_CUDA, else the driver.
  std::optional<cudaexec::CudaMode> cudaMode;
  /// Replaces the backends cudaMode picks (tests: a fake driver).
  cudaexec::BackendProvider backends;
};

class LoadedArtifact {
public:
  /// Maps and verifies the file at `path`, then links its code.
  static llvm::Expected<std::unique_ptr<LoadedArtifact>> load(llvm::StringRef path,
                                                              const LoadOptions &options = {});
  /// As load(), for an artifact already in memory (its identifier names it).
  static llvm::Expected<std::unique_ptr<LoadedArtifact>>
  load(std::unique_ptr<llvm::MemoryBuffer> buffer, const LoadOptions &options = {});

  ~LoadedArtifact();
  LoadedArtifact(const LoadedArtifact &) = delete;
  LoadedArtifact &operator=(const LoadedArtifact &) = delete;

  /// The file's name, for messages.
  llvm::StringRef name() const;
  /// Signature, parameter layout, target and the model it was built from.
  const Artifact &contents() const { return contents_; }
  const EntryFn *findFn(llvm::StringRef name) const { return contents_.findFn(name); }
  /// The parameter layout, in the order the compiled code takes it.
  llvm::ArrayRef<runtime::StateEntry> stateLayout() const { return contents_.state; }

  /// Binds `file` to the parameter layout, all or nothing (runtime
  /// bindWeights: every problem listed).
  llvm::Expected<runtime::LoadedWeights> bindWeights(const runtime::SafeTensorsFile &file) const;
  bool hasEmbeddedWeights() const { return contents_.weights.has_value(); }
  /// Binds the weights built into the artifact (`modelc build --weights`);
  /// the tensors borrow the artifact's mapping and keep it alive.
  llvm::Expected<runtime::LoadedWeights> embeddedWeights() const;

  /// Checks `inputs` against fn `fnName` (InputMismatchError) and returns
  /// the shape of each result. `labels`, when given, name the inputs in
  /// messages (`x.npy`); otherwise they are named by position.
  llvm::Expected<std::vector<runtime::Shape>>
  checkInputs(llvm::StringRef fnName, llvm::ArrayRef<runtime::Tensor> inputs,
              llvm::ArrayRef<std::string> labels = {}) const;

  /// Checks the inputs, then runs fn `fnName` with `weights` (bound by
  /// bindWeights or embeddedWeights of this artifact). Inputs may have any
  /// strides; they are never written. For a cuda artifact the inputs are
  /// host bytes labelled with their device (as `modelc run` reads them),
  /// the result is a host tensor (Residency::OnDevice: cuda tensors hold
  /// device memory, used in place; a result on a GPU stays there), the
  /// weights are copied to their GPUs on
  /// the first call with them, and calls are serialised (one plan runs at a
  /// time). Returns one tensor per result of the fn, in order.
  llvm::Expected<std::vector<runtime::Tensor>>
  callResults(llvm::StringRef fnName, const runtime::LoadedWeights &weights,
              llvm::ArrayRef<runtime::Tensor> inputs, llvm::ArrayRef<std::string> labels = {},
              cudaexec::Residency residency = cudaexec::Residency::HostBytes) const;
  /// callResults for a fn with one result: that tensor (an error when the
  /// fn has several).
  llvm::Expected<runtime::Tensor>
  call(llvm::StringRef fnName, const runtime::LoadedWeights &weights,
       llvm::ArrayRef<runtime::Tensor> inputs, llvm::ArrayRef<std::string> labels = {},
       cudaexec::Residency residency = cudaexec::Residency::HostBytes) const;

  /// Cuda artifacts: which image cuda:`device`'s kernels were loaded from.
  std::optional<cuda::PrebuiltImage> kernelImage(int device) const;
  /// What the last call of a cuda artifact did (graph, memory, GEMMs);
  /// std::nullopt for a cpu artifact.
  std::optional<cudaexec::RunReport> lastPlanRun() const;

  /// Linked object code (ArtifactLoader.cpp).
  struct Linked;

private:
  struct Plan;
  static llvm::Expected<std::unique_ptr<Linked>>
  linkObject(const Artifact &artifact, llvm::StringRef name,
             const llvm::StringMap<std::string> &entries);
  LoadedArtifact();
  llvm::Error loadPlan(const LoadOptions &options);
  llvm::Expected<std::vector<runtime::Tensor>> callPlan(const runtime::LoadedWeights &weights,
                                                        llvm::ArrayRef<runtime::Tensor> inputs,
                                                        cudaexec::Residency residency) const;

  std::shared_ptr<llvm::MemoryBuffer> file_;
  Artifact contents_;
  std::unique_ptr<Linked> linked_;
  /// Destroyed before linked_: the plan calls into the linked code.
  std::unique_ptr<Plan> plan_;
};

} // namespace modelc::aot

#endif // MODELC_AOT_ARTIFACTLOADER_H
