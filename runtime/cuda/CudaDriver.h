//===- CudaDriver.h - The CUDA driver, loaded at run time ------*- C++ -*-===//
//
// Opens libcuda.so.1 with dlopen (never libcuda.so, which is the toolkit's
// link-time stub), resolves cuInit and cuGetProcAddress_v2 with dlsym and
// everything else through cuGetProcAddress_v2 for CUDA 12.0, because plain
// dlsym("cuMemAlloc") returns the legacy 32-bit ABI.
//
// Work on device N runs in N's primary context, made current on the calling
// thread by each call. Without a driver (or with only the stub), and for an
// index beyond the GPUs present, every entry point reports a clear error
// instead of crashing:
//   no CUDA driver found: cuda:0 needs an NVIDIA GPU (set MODELC_CUDA=emulate
//   to run on the CPU emulator)
//   cuda:3 does not exist: this machine has 1 GPU
//
// $MODELC_CUDA_DRIVER_LIBRARY replaces libcuda.so.1 (tests point it at the
// stub or at a fake driver).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_CUDADRIVER_H
#define MODELC_RUNTIME_CUDA_CUDADRIVER_H

#include "runtime/cuda/DriverApi.h"
#include "runtime/cuda/SharedLibrary.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace modelc::cuda {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int computeMajor = 0, computeMinor = 0;
  size_t totalMemory = 0;
  int multiprocessors = 0;
  int maxThreadsPerBlock = 0;
  int maxSharedMemoryPerBlock = 0;
  int warpSize = 0;
  /// "sm_90" for compute capability 9.0: the NVRTC target for this GPU.
  std::string arch() const;
};

using DevicePointer = driver::CUdeviceptr;

struct LaunchDims {
  unsigned x = 1, y = 1, z = 1;
};

class CudaDriver {
public:
  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// The process-wide driver, checked to have GPU `device`: DriverNotFound or
  /// NoSuchDevice otherwise. The library is opened once per process.
  static llvm::Expected<CudaDriver &> forDevice(int device);
  /// Opens the driver at `libraryPath` (a soname or a file) on its own; the
  /// error names `device` as the GPU that was wanted.
  static llvm::Expected<std::unique_ptr<CudaDriver>> open(const std::string &libraryPath,
                                                          int device = 0);
  /// libcuda.so.1, or $MODELC_CUDA_DRIVER_LIBRARY.
  static std::string defaultLibrary();

  int deviceCount() const { return devices; }
  /// The driver's CUDA version, e.g. 13000.
  int driverVersion() const { return version; }
  /// NoSuchDevice unless 0 <= device < deviceCount().
  llvm::Error checkDevice(int device) const;
  llvm::Expected<CudaDeviceInfo> deviceInfo(int device);

  llvm::Expected<DevicePointer> allocate(int device, size_t bytes);
  llvm::Error free(int device, DevicePointer pointer);
  llvm::Error copyHostToDevice(int device, DevicePointer destination, const void *source,
                               size_t bytes);
  llvm::Error copyDeviceToHost(int device, void *destination, DevicePointer source, size_t bytes);
  llvm::Error copyDeviceToDevice(int device, DevicePointer destination, DevicePointer source,
                                 size_t bytes);
  /// Copies between GPUs (enabling peer access first where the GPUs allow).
  llvm::Error copyPeer(int destinationDevice, DevicePointer destination, int sourceDevice,
                       DevicePointer source, size_t bytes);

  /// Loads PTX text or a CUBIN image into `device`'s context.
  llvm::Expected<driver::CUmodule> loadModule(int device, llvm::StringRef image);
  llvm::Error unloadModule(int device, driver::CUmodule module);
  llvm::Expected<driver::CUfunction> getFunction(int device, driver::CUmodule module,
                                                 llvm::StringRef name);

  /// Stream-ordered copies on `stream`. From pageable host memory the
  /// driver stages the bytes before returning; into pageable host memory it
  /// returns once they have arrived.
  llvm::Error copyHostToDeviceAsync(int device, DevicePointer destination, const void *source,
                                    size_t bytes, driver::CUstream stream);
  llvm::Error copyDeviceToHostAsync(int device, void *destination, DevicePointer source,
                                    size_t bytes, driver::CUstream stream);
  llvm::Error copyDeviceToDeviceAsync(int device, DevicePointer destination, DevicePointer source,
                                      size_t bytes, driver::CUstream stream);

  /// A stream that does not synchronise with the legacy default stream.
  llvm::Expected<driver::CUstream> createStream(int device);
  llvm::Error destroyStream(int device, driver::CUstream stream);
  /// Launches `function` with cuLaunchKernel-style `args` (one pointer per
  /// parameter) on `stream` (nullptr: the default stream). Asynchronous.
  llvm::Error launch(int device, driver::CUfunction function, LaunchDims grid, LaunchDims block,
                     unsigned sharedMemoryBytes, driver::CUstream stream, void **args);
  llvm::Error synchronizeStream(int device, driver::CUstream stream);
  llvm::Error synchronize(int device);

  /// CUDA graphs: the work enqueued on `stream` between beginCapture and
  /// endCapture is recorded, not run; instantiateGraph makes it launchable.
  llvm::Error beginCapture(int device, driver::CUstream stream);
  llvm::Expected<driver::CUgraph> endCapture(int device, driver::CUstream stream);
  llvm::Expected<driver::CUgraphExec> instantiateGraph(int device, driver::CUgraph graph);
  llvm::Error launchGraph(int device, driver::CUgraphExec graph, driver::CUstream stream);
  llvm::Error destroyGraphExec(int device, driver::CUgraphExec graph);
  llvm::Error destroyGraph(int device, driver::CUgraph graph);

  /// Events: recorded on a stream, they time the GPU's work between them.
  llvm::Expected<driver::CUevent> createEvent(int device);
  llvm::Error recordEvent(int device, driver::CUevent event, driver::CUstream stream);
  llvm::Error synchronizeEvent(int device, driver::CUevent event);
  /// Milliseconds between two completed events.
  llvm::Expected<double> elapsedMilliseconds(int device, driver::CUevent start,
                                             driver::CUevent end);
  llvm::Error destroyEvent(int device, driver::CUevent event);

  /// Makes `device`'s primary context current on this thread (for libraries
  /// that work in the current context, such as cuBLASLt).
  llvm::Error makeCurrent(int device) { return enter(device); }

  /// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for a driver result code.
  std::string describe(driver::CUresult result) const;

private:
  CudaDriver() = default;
  /// Makes `device`'s primary context current on this thread.
  llvm::Error enter(int device);
  llvm::Error check(driver::CUresult result, llvm::StringRef call, int device) const;

  SharedLibrary library;
  std::string libraryPath;
  driver::DriverFunctions api;
  int devices = 0;
  int version = 0;
  std::mutex mutex;
  std::vector<driver::CUcontext> contexts; ///< Primary contexts, retained lazily.
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_CUDADRIVER_H
