//===- CudaBackend.h - One interface over the driver and the emulator -*- C++ -*-===//
//
// What code placed on `cuda:N` needs, whoever runs it: device memory, copies,
// kernels compiled from CUDA C++ source, and launches. Two implementations:
// the driver (kernels compiled by NVRTC to a CUBIN for the GPU's own sm_XY,
// through the kernel cache) and the emulator (the same source built by the
// host compiler). `forDevice` picks the emulator when MODELC_CUDA=emulate and
// the driver otherwise, and reports a missing driver or GPU as the error the
// user sees.
//
// `launch` and the plain copies are synchronous: they return when the work
// has finished, with its error (on the driver they follow whatever was
// enqueued on the device's stream). The *Async forms enqueue on the device's
// one stream (the driver; on the emulator they are the synchronous calls)
// and the host waits in synchronize(); a CUDA graph records what one stream
// runs and replays it with one call (the driver only: supportsGraphs()).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_CUDABACKEND_H
#define MODELC_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/emulator/Emulator.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace modelc::cuda {

/// An address in a (real or emulated) GPU's memory.
using DeviceAddress = uint64_t;

/// A kernel ready to launch on one device; keeps its module loaded.
struct CudaKernel {
  std::string name;
  int device = 0;
  std::shared_ptr<const void> state;
};

/// One GPU's kernels compiled ahead of time (a .mdlc artifact's): a CUBIN for
/// one real architecture, PTX for a virtual one, and the CUDA C++ they came
/// from. Views; the caller keeps the bytes alive while kernels are loaded.
struct PrebuiltModule {
  std::string name;      ///< labels the module in messages ("net.mdlc(cuda0)")
  std::string cubinArch; ///< "sm_90"; empty when there is no CUBIN
  llvm::StringRef cubin;
  std::string ptxArch; ///< "compute_90"; empty when there is no PTX
  llvm::StringRef ptx;
  llvm::StringRef source; ///< the emulator builds this with the host compiler
};

/// Which form of a PrebuiltModule a backend loaded.
enum class PrebuiltImage {
  Cubin,  ///< the CUBIN, built for this GPU's architecture
  Ptx,    ///< the PTX, compiled for this GPU by the driver's JIT
  Source, ///< the CUDA C++ (the emulator)
};
llvm::StringRef prebuiltImageName(PrebuiltImage image);

/// cuBLASLt on one GPU: the library and a handle in the GPU's context.
struct LtDevice {
  const CublasLt *library = nullptr;
  blaslt::cublasLtHandle_t handle = nullptr;
  /// What timings on it depend on: "NVIDIA H100 80GB HBM3 (sm_90), driver
  /// 13000, cuBLASLt 13.1.0".
  std::string identity;
};

/// A captured and instantiated CUDA graph; destroying it releases both.
class CudaGraph {
public:
  virtual ~CudaGraph();
};

class CudaBackend {
public:
  virtual ~CudaBackend();

  /// The backend for `device`: the emulator if MODELC_CUDA=emulate, else the
  /// driver. Fails with DriverNotFound or NoSuchDevice.
  static llvm::Expected<CudaBackend &> forDevice(int device);

  /// "driver" or "emulator".
  virtual llvm::StringRef name() const = 0;
  virtual int deviceCount() const = 0;
  virtual llvm::Error checkDevice(int device) const = 0;

  virtual llvm::Expected<DeviceAddress> allocate(int device, size_t bytes) = 0;
  virtual llvm::Error free(int device, DeviceAddress address) = 0;
  virtual llvm::Error copyHostToDevice(int device, DeviceAddress destination, const void *source,
                                       size_t bytes) = 0;
  virtual llvm::Error copyDeviceToHost(int device, void *destination, DeviceAddress source,
                                       size_t bytes) = 0;
  virtual llvm::Error copyDeviceToDevice(int device, DeviceAddress destination,
                                         DeviceAddress source, size_t bytes) = 0;
  virtual llvm::Error copyPeer(int destinationDevice, DeviceAddress destination, int sourceDevice,
                               DeviceAddress source, size_t bytes) = 0;

  /// Compiles `source` (cached) for `device` and finds `kernel` in it.
  /// `sourceName` labels the source in compiler messages.
  virtual llvm::Expected<CudaKernel> loadKernel(int device, llvm::StringRef source,
                                                llvm::StringRef sourceName,
                                                llvm::StringRef kernel) = 0;
  /// Finds `kernel` in code compiled ahead of time, without NVRTC: the
  /// driver loads the CUBIN when it was built for this GPU's architecture,
  /// else the PTX (JIT-compiled by the driver); the emulator builds the
  /// source. `used`, when given, says which.
  virtual llvm::Expected<CudaKernel> loadPrebuiltKernel(int device, const PrebuiltModule &module,
                                                        llvm::StringRef kernel,
                                                        PrebuiltImage *used = nullptr) = 0;
  /// Runs `kernel` over `grid` blocks of `block` threads and waits for it;
  /// `args` holds one pointer per kernel parameter; each block gets
  /// `dynamicSharedBytes` of `extern __shared__` memory.
  virtual llvm::Error launch(const CudaKernel &kernel, Dim3 grid, Dim3 block, void **args,
                             size_t dynamicSharedBytes = 0) = 0;

  /// Stream-ordered forms: enqueued on `device`'s stream, done by the time
  /// synchronize(device) returns (whose error then reports a failed kernel).
  /// The host bytes of copyHostToDeviceAsync may be reused when it returns;
  /// those of copyDeviceToHostAsync are written by then.
  virtual llvm::Error launchAsync(const CudaKernel &kernel, Dim3 grid, Dim3 block, void **args,
                                  size_t dynamicSharedBytes = 0) {
    return launch(kernel, grid, block, args, dynamicSharedBytes);
  }
  virtual llvm::Error copyHostToDeviceAsync(int device, DeviceAddress destination,
                                            const void *source, size_t bytes) {
    return copyHostToDevice(device, destination, source, bytes);
  }
  virtual llvm::Error copyDeviceToHostAsync(int device, void *destination, DeviceAddress source,
                                            size_t bytes) {
    return copyDeviceToHost(device, destination, source, bytes);
  }
  virtual llvm::Error copyDeviceToDeviceAsync(int device, DeviceAddress destination,
                                              DeviceAddress source, size_t bytes) {
    return copyDeviceToDevice(device, destination, source, bytes);
  }
  virtual llvm::Error synchronize(int /*device*/) { return llvm::Error::success(); }

  /// CUDA graphs: between beginCapture and endCapture the *Async calls on
  /// `device` are recorded instead of run; launchGraph replays them.
  virtual bool supportsGraphs() const { return false; }
  virtual llvm::Error beginCapture(int device);
  virtual llvm::Expected<std::unique_ptr<CudaGraph>> endCapture(int device);
  virtual llvm::Error launchGraph(int device, const CudaGraph &graph);

  /// cuBLASLt on `device` (the driver, with the library present): made once
  /// per device. The error says why not: LibraryNotFound (the emulator has
  /// none; the library is missing, too old or turned off), or the handle
  /// that could not be created.
  virtual llvm::Expected<LtDevice> cublasLt(int device);
  /// Enqueues `matmul` on `device`'s stream, like launchAsync (recorded when
  /// a graph is being captured).
  virtual llvm::Error cublasLtMatmulAsync(int device, const LtMatmul &matmul,
                                          const LtAlgorithm &algorithm, const LtOperands &operands);
  /// The milliseconds `device` spends on the work `enqueue` puts on its
  /// stream: CUDA events around it on the driver; elsewhere the host's clock
  /// around it and synchronize().
  virtual llvm::Expected<double> timeOnStream(int device,
                                              llvm::function_ref<llvm::Error()> enqueue);

  /// Whether a plan keeps each buffer in an allocation of its own (the
  /// emulator: its guard pages then catch a kernel overrunning any buffer)
  /// rather than carving all of a run's buffers out of one arena.
  virtual bool separateAllocations() const { return false; }
};

/// Where a driver backend gets cuBLASLt (tests hand it a fake or a failure).
using CublasLtProvider = std::function<llvm::Expected<const CublasLt &>()>;

std::unique_ptr<CudaBackend> makeEmulatorBackend(Emulator &emulator);
/// `cublasLt` defaults to CublasLt::get().
std::unique_ptr<CudaBackend> makeDriverBackend(CudaDriver &driver, KernelCache &cache,
                                               CublasLtProvider cublasLt = nullptr);

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_CUDABACKEND_H
