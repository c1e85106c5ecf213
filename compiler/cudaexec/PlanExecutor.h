//===- PlanExecutor.h - Run a DevicePlan on GPUs and the cpu ----*- C++ -*-===//
//
// Executes what compiler/cudagen planned for one entry fn:
//
//   compile()   checks the plan, resolves a backend for every GPU it uses
//               (driver or emulator), loads each launched kernel (NVRTC
//               through the kernel cache, or the host compiler) and
//               JIT-compiles the plan's cpu module;
//   bindState() copies the weights to their devices once;
//   run()       binds the symbolic dims from the input shapes, copies inputs
//               to their devices, runs the steps in order (CpuCall, Launch,
//               Copy), frees each temporary after its last use and reads the
//               outputs back.
//
// One PlanExecutor serves any number of run() calls (one at a time). A
// failing kernel is reported with its name, its device and the .mdl lines it
// was generated from; device memory is released on every path.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAEXEC_PLANEXECUTOR_H
#define MODELC_CUDAEXEC_PLANEXECUTOR_H

#include "cudaexec/CudaDevices.h"
#include "cudagen/DevicePlan.h"

#include "runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace modelc::jit {
class JitModule;
}

namespace modelc::cudaexec {

struct PlanOptions {
  /// Backends by device; default: backendProvider(cudaModeFromEnvironment()).
  BackendProvider backends;
  /// For the cpu module.
  unsigned optLevel = 3;
  bool useBlas = true;
};

/// Time spent preparing a plan, for reports and benchmarks.
struct PrepareTimes {
  double kernelLoadSeconds = 0; ///< compiling/loading every kernel
  double cpuJitSeconds = 0;     ///< JIT-compiling the cpu module
};

class PlanExecutor {
public:
  ~PlanExecutor();
  PlanExecutor(const PlanExecutor &) = delete;
  PlanExecutor &operator=(const PlanExecutor &) = delete;

  /// Validates `plan` and compiles everything it runs. Errors: a malformed
  /// plan, a device that cannot be used (see backendFor), a kernel that does
  /// not compile, a cpu module that does not lower.
  static llvm::Expected<std::unique_ptr<PlanExecutor>> compile(cudagen::DevicePlan plan,
                                                               PlanOptions options = {});

  /// Copies the state (in state index order, each of its buffer's dtype and
  /// shape) to its devices, replacing state bound before.
  llvm::Error bindState(llvm::ArrayRef<runtime::Tensor> state);

  /// Runs the plan on `inputs` (one per Input buffer, in index order) and
  /// returns the outputs in index order, as host tensors.
  llvm::Expected<std::vector<runtime::Tensor>> run(llvm::ArrayRef<runtime::Tensor> inputs);

  const cudagen::DevicePlan &plan() const { return devicePlan; }
  const PrepareTimes &prepareTimes() const { return times; }

private:
  struct LoadedLaunch;
  struct StateSlot;
  class RunState;

  explicit PlanExecutor(cudagen::DevicePlan plan);
  llvm::Error validate() const;
  llvm::Error loadKernels(const BackendProvider &backends);
  void releaseState();

  cudagen::DevicePlan devicePlan;
  /// Backend of each GPU the plan uses, by device index (null elsewhere).
  std::vector<cuda::CudaBackend *> backends;
  /// The loaded kernel of each Launch step, by step index.
  std::vector<std::shared_ptr<const cuda::CudaKernel>> kernels;
  std::unique_ptr<jit::JitModule> cpuCode;
  std::vector<StateSlot> state; ///< by BufferId; empty until bindState
  /// The buffer each buffer's bytes belong to (itself unless a view).
  std::vector<cudagen::BufferId> storageOf;
  /// The last step that touches each storage buffer, views included.
  std::vector<int> lastUse;
  PrepareTimes times;
};

/// The message for a failed kernel: the backend's error with the .mdl lines
/// the kernel came from (`kernel 'k' on cuda:0 ...; generated from m.mdl:7`).
std::string describeKernelFailure(const cudagen::DevicePlan &plan, int device,
                                  llvm::StringRef kernel, llvm::StringRef backendMessage);

} // namespace modelc::cudaexec

#endif // MODELC_CUDAEXEC_PLANEXECUTOR_H
