//===- PlanExecutor.h - Run a DevicePlan on GPUs and the cpu ----*- C++ -*-===//
//
// Executes what compiler/cudagen planned for one entry fn:
//
//   compile()   checks the plan, resolves a backend for every GPU it uses
//               (driver or emulator), loads each launched kernel (NVRTC
//               through the kernel cache, or the host compiler; or images
//               compiled ahead of time) and gets the plan's cpu module
//               compiled (PlanOptions::cpuRegions: the JIT, or an
//               artifact's linked object code);
//   bindState() copies the weights to their devices once;
//   run()       binds the symbolic dims from the input shapes, places every
//               buffer in device memory kept between runs (one arena per
//               GPU, sized from the plan's size expressions for those dims),
//               copies inputs to their devices, runs the steps in order
//               (CpuCall, Launch, Copy) stream-ordered, and reads the outputs
//               back, waiting for each GPU once. On backends with CUDA
//               graphs, a plan that runs on one GPU only is captured once per
//               set of input shapes and replayed. A matmul the plan
//               describes as a GemmCall runs on its own kernels or on
//               cuBLASLt, whichever was measured faster on this GPU for its
//               shape class (CudaGemm.h; measured before the first step of
//               the first run with those shapes).
//
// One PlanExecutor serves any number of run() calls from any thread; they
// are serialised by the executor's mutex (one run at a time). A
// failing kernel is reported with its name, its device and the .mdl lines it
// was generated from; device memory is released on every path.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAEXEC_PLANEXECUTOR_H
#define MODELC_CUDAEXEC_PLANEXECUTOR_H

#include "cudaexec/CudaDevices.h"
#include "cudaexec/CudaGemm.h"
#include "cudagen/DevicePlan.h"

#include "runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace modelc::cudaexec {

/// The compiled functions of a plan's cpu module (the CpuCall targets).
class CpuRegions {
public:
  virtual ~CpuRegions();
  /// Calls `function` with StridedMemRefType descriptor pointers: its
  /// arguments, then one caller-allocated buffer per result.
  virtual llvm::Error call(llvm::StringRef function, llvm::ArrayRef<void *> memrefs) = 0;
};

/// Compiles (or links) the cpu module of `plan`.
using CpuRegionsProvider =
    std::function<llvm::Expected<std::unique_ptr<CpuRegions>>(const cudagen::DevicePlan &plan)>;

struct PlanOptions {
  /// Backends by device; default: backendProvider(cudaModeFromEnvironment()).
  BackendProvider backends;
  /// Needed when the plan has a cpu module: jitCpuRegions() (JitCpuRegions.h)
  /// or an artifact's object code.
  CpuRegionsProvider cpuRegions;
  /// Kernels compiled ahead of time, by device index: when non-empty, every
  /// kernel is loaded from here (CudaBackend::loadPrebuiltKernel), never
  /// compiled from the plan's source.
  std::vector<cuda::PrebuiltModule> prebuilt;
  /// How the GEMMs a library can take run (CudaGemm.h); default:
  /// gemmBackendFromEnvironment() (MODELC_CUDA_GEMM).
  std::optional<GemmBackend> gemm;
  /// Device memory each GPU's arena holds for cuBLASLt's algorithms, which
  /// may use up to this much (32 MiB, what NVIDIA advises for Hopper).
  size_t cublasLtWorkspaceBytes = size_t(32) << 20;
};

/// How run() takes its inputs and hands back its outputs.
enum class Residency {
  /// Every tensor holds host bytes (labelled with any device): inputs are
  /// copied to their buffers' devices, outputs are read back to the host.
  HostBytes,
  /// A tensor on cuda:N holds a device address of the run's backend for
  /// that GPU (the embedding API's cuda tensors): inputs on a GPU are used
  /// in place, outputs on a GPU stay there (freed through the backend when
  /// the last copy of the tensor goes).
  OnDevice,
};

/// How one of the plan's library-eligible GEMMs (DevicePlan::gemms) ran.
struct GemmRun {
  std::string label;    ///< the name of the plan's own kernel(s) for it
  std::string problem;  ///< the cuBLASLt problem for the bound shapes, if any
  bool library = false; ///< cuBLASLt ran it; else the own kernels did
  /// Why: "measured: cuBLASLt 0.112 ms (algorithm 1 of 4), own kernels
  /// 0.530 ms", "chosen before on this GPU", "MODELC_CUDA_GEMM=own",
  /// "cuBLASLt is not used: ...".
  std::string why;
};

/// What the last run() did with device memory and graphs (tests, reports).
struct RunReport {
  unsigned runs = 0;          ///< run() calls that got as far as the GPUs
  bool graphCaptured = false; ///< this run captured (and then launched) a graph
  bool graphReplayed = false; ///< this run replayed the graph of an earlier one
  /// Why runs do not use graphs ("" while they may): the backend has none,
  /// the plan calls the cpu or spans GPUs, or the capture failed.
  std::string graphFallback;
  size_t arenaBytes = 0; ///< device memory held for the plan's buffers, all GPUs
  /// cuBLASLt as the executor found it ("cuBLASLt 13.1.0 (libcublasLt.so.13)
  /// on cuda:0", or why it is not used); empty for a plan without GEMMs a
  /// library could run.
  std::string gemmLibrary;
  std::vector<GemmRun> gemms; ///< in DevicePlan::gemms order
};

/// `report` as text (`modelc run --report`, Function::runReport()); empty
/// before the first run:
///   CUDA graph: replayed
///   device memory kept: 1.2 MiB
///   GEMMs: cuBLASLt 13.1.0 (libcublasLt.so.13) on cuda:0
///     k0_matmul_add_relu (f32 TN 256x64x784, bias+relu): cuBLASLt: measured ...
std::string formatRunReport(const RunReport &report);

/// Time spent preparing a plan, for reports and benchmarks.
struct PrepareTimes {
  double kernelLoadSeconds = 0; ///< compiling/loading every kernel
  double cpuJitSeconds = 0;     ///< compiling or linking the cpu module
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
  /// returns the outputs in index order: host tensors, or with
  /// Residency::OnDevice tensors on their buffers' devices. Host results
  /// are complete on return; GPU results are enqueued on the device's stream
  /// (a backend's plain copies wait for them, and report a failed kernel).
  llvm::Expected<std::vector<runtime::Tensor>> run(llvm::ArrayRef<runtime::Tensor> inputs,
                                                   Residency residency = Residency::HostBytes);

  const cudagen::DevicePlan &plan() const { return devicePlan; }
  const PrepareTimes &prepareTimes() const { return times; }
  const RunReport &lastRun() const { return report; }
  /// A copy of lastRun() taken under the run lock (for callers on other
  /// threads than the one that runs).
  RunReport lastRunReport() const {
    std::lock_guard<std::mutex> lock(mutex);
    return report;
  }
  /// For prebuilt kernels: which image cuda:`device` loaded (nullopt for a
  /// device without launches, or kernels compiled from source).
  std::optional<cuda::PrebuiltImage> prebuiltImage(int device) const;

private:
  struct LoadedLaunch;
  struct StateSlot;
  struct GemmRoute;
  class RunState;

  explicit PlanExecutor(cudagen::DevicePlan plan);
  llvm::Error validate() const;
  llvm::Error loadKernels(const BackendProvider &backends,
                          llvm::ArrayRef<cuda::PrebuiltModule> prebuilt);
  void releaseState();
  void releaseArenas();
  /// Device memory for every buffer of this run but state and caller-owned
  /// ones: the arena of each GPU, grown when these shapes need more.
  llvm::Error placeBuffers(RunState &run, Residency residency);
  /// Loads `kernel` of cuda:`device`'s code (from `prebuilt` when given).
  llvm::Expected<cuda::CudaKernel> loadKernel(int device, const std::string &kernel,
                                              llvm::ArrayRef<cuda::PrebuiltModule> prebuilt);
  /// Checks the plan's GEMM calls, loads their `after` kernels and finds
  /// cuBLASLt on the GPUs that have them.
  llvm::Error prepareGemms(const PlanOptions &options,
                           llvm::ArrayRef<cuda::PrebuiltModule> prebuilt);
  /// Decides, for the bound shapes, which GEMMs cuBLASLt runs (measuring
  /// where no choice is known); before any step of the run.
  llvm::Error routeGemms(RunState &run, const cudagen::SymbolValues &symbols);
  /// Times the own kernels of GEMM `index` and cuBLASLt's `algorithms`.
  llvm::Expected<GemmChoice> measureGemm(size_t index, RunState &run,
                                         const cudagen::SymbolValues &symbols,
                                         llvm::ArrayRef<cuda::LtAlgorithm> algorithms,
                                         std::string &why);
  /// Enqueues GEMM `index` on cuBLASLt (and its `after` kernel).
  llvm::Error runLibraryGemm(size_t index, RunState &run, const cudagen::SymbolValues &symbols,
                             const cuda::LtAlgorithm &algorithm);
  llvm::Error launchStep(const cudagen::Launch &launch, const cuda::CudaKernel &kernel,
                         RunState &run, const cudagen::SymbolValues &symbols);
  /// Steps [begin, end) of the plan, GEMMs routed to cuBLASLt where chosen
  /// (never with `ownGemms`).
  llvm::Error runSteps(RunState &run, const cudagen::SymbolValues &symbols, size_t begin,
                       size_t end, bool ownGemms = false);
  llvm::Error runSteps(RunState &run, const cudagen::SymbolValues &symbols) {
    return runSteps(run, symbols, 0, devicePlan.steps.size());
  }
  llvm::Error runOnStreams(RunState &run, const cudagen::SymbolValues &symbols);
  /// Waits for every GPU's stream; a failed kernel surfaces here.
  llvm::Error synchronizeAll();

  cudagen::DevicePlan devicePlan;
  /// Backend of each GPU the plan uses, by device index (null elsewhere).
  std::vector<cuda::CudaBackend *> backends;
  /// The loaded kernel of each Launch step, by step index.
  std::vector<std::shared_ptr<const cuda::CudaKernel>> kernels;
  std::unique_ptr<CpuRegions> cpuCode;
  /// The image each device's prebuilt kernels came from, by device index.
  std::vector<std::optional<cuda::PrebuiltImage>> images;
  /// Serialises run() and bindState().
  mutable std::mutex mutex;
  std::vector<StateSlot> state; ///< by BufferId; empty until bindState
  /// The buffer each buffer's bytes belong to (itself unless a view).
  std::vector<cudagen::BufferId> storageOf;
  /// The last step that touches each storage buffer, views included.
  std::vector<int> lastUse;
  /// The first step that touches each storage buffer.
  std::vector<int> firstUse;
  PrepareTimes times;

  /// Device memory kept between runs: per GPU one arena, or, where the
  /// backend wants separate allocations, one per buffer.
  struct Arena {
    cuda::DeviceAddress base = 0;
    size_t capacity = 0;
  };
  std::vector<Arena> arenas; ///< by device
  /// Device memory of outputs handed to callers (Residency::OnDevice). A
  /// block comes back when the caller's last copy of its tensor goes, and a
  /// later output of its size takes it instead of a new allocation (shared
  /// with the tensors, which may outlive the executor).
  struct OutputBlocks;
  std::shared_ptr<OutputBlocks> outputBlocks;
  std::vector<StateSlot> kept;   ///< by BufferId (separate allocations)
  std::vector<size_t> keptBytes; ///< by BufferId
  /// The GPU a graph can capture the whole plan on; -1 when none can.
  int graphDevice = -1;
  std::unique_ptr<cuda::CudaGraph> graph;
  std::vector<uint64_t> graphKey; ///< what the graph's arguments depend on
  RunReport report;

  /// GEMMs a library can take: how they run, decided per set of shapes.
  GemmBackend gemmBackend = GemmBackend::Auto;
  size_t ltWorkspaceBytes = 0;
  /// cuBLASLt by device; empty where there is none (ltStatus says why).
  std::vector<std::optional<cuda::LtDevice>> ltDevices;
  std::string ltStatus;
  std::vector<GemmRoute> gemmRoutes; ///< by DevicePlan::gemms index
  std::vector<int> gemmStartingAt;   ///< by step: the GEMM whose steps start there, or -1
  std::vector<std::shared_ptr<const cuda::CudaKernel>> afterKernels; ///< by GEMM
  std::vector<cuda::DeviceAddress> ltWorkspaces; ///< by device: cuBLASLt's bytes of the arena
};

/// The message for a failed kernel: the backend's error with the .mdl lines
/// the kernel came from (`kernel 'k' on cuda:0 ...; generated from m.mdl:7`).
std::string describeKernelFailure(const cudagen::DevicePlan &plan, int device,
                                  llvm::StringRef kernel, llvm::StringRef backendMessage);

} // namespace modelc::cudaexec

#endif // MODELC_CUDAEXEC_PLANEXECUTOR_H
