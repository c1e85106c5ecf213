//===- Emulator.h - Emulated CUDA GPUs on the CPU --------------*- C++ -*-===//
//
// Runs the same CUDA C++ kernels NVRTC compiles for a GPU on the host (see
// cuda_emulation.h for the execution model). Used where no GPU is present
// (MODELC_CUDA=emulate) and by CI to prove kernels.
//
// Each emulated GPU `cuda:N` has its own memory space (EmulatedMemory):
// allocations are tagged with their device, copies are checked for bounds and
// ownership, and a kernel that touches memory out of bounds or owned by
// another GPU faults and is reported as an error naming the kernel, the
// CUDA thread and the allocation; the process survives. Kernels are built to
// check each load and store against host memory too (HostMemoryAccess), as
// a GPU cannot reach it.
//
// Launches are synchronous and serialized (one kernel at a time, its blocks
// spread over worker threads); a launch returns when the grid has finished.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_EMULATOR_EMULATOR_H
#define MODELC_RUNTIME_CUDA_EMULATOR_EMULATOR_H

#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/SharedLibrary.h"
#include "runtime/cuda/emulator/EmulatedMemory.h"
#include "runtime/cuda/emulator/HostCompiler.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

struct modelc_emu_block_launch;
struct modelc_emu_kernel_info;

namespace modelc::cuda {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class EmulatedModule;

/// A kernel of a loaded module; valid while its module is alive.
struct EmulatedKernel {
  std::string name;
  void (*entry)(void **args) = nullptr;
  const modelc_emu_kernel_info *info = nullptr;
  std::shared_ptr<const EmulatedModule> module;
};

/// One compiled source: a shared object with its kernels.
class EmulatedModule : public std::enable_shared_from_this<EmulatedModule> {
public:
  llvm::Expected<EmulatedKernel> kernel(llvm::StringRef name) const;
  llvm::ArrayRef<std::string> kernelNames() const { return names; }

  /// Runs one block (modelc_emu_run_block); nonzero with a message on failure.
  int runBlock(const modelc_emu_block_launch &launch) const { return runBlockFn(&launch); }
  /// The CUDA thread and block running on this OS thread, if any.
  bool currentThread(unsigned thread[3], unsigned block[3]) const {
    return currentThreadFn(thread, block) != 0;
  }

private:
  friend class Emulator;
  using RunBlockFn = int (*)(const modelc_emu_block_launch *);
  using CurrentThreadFn = int (*)(unsigned *, unsigned *);

  SharedLibrary library;
  std::vector<std::string> names;
  std::string sourceName;
  RunBlockFn runBlockFn = nullptr;
  CurrentThreadFn currentThreadFn = nullptr;
};

struct EmulatorOptions {
  int deviceCount = 2;
  /// Worker threads per launch; 0 means the hardware's thread count.
  unsigned workerThreads = 0;
  /// Stack bytes of each emulated CUDA thread.
  size_t fiberStackSize = 64 * 1024;
  /// Extra flags for the host compiler (e.g. -DMODELC_EMU_USE_UCONTEXT).
  std::vector<std::string> compilerFlags;
  /// A launch running longer is interrupted and reported (an endless loop
  /// must not hang modelc); 0 waits forever.
  unsigned timeoutSeconds = 600;
  /// Kernels are built to check that each load and store stays off host
  /// memory, as on a GPU (see cuda_emulation.h); false trades that check for
  /// speed.
  bool checkHostAccess = true;

  /// Reads MODELC_CUDA_EMULATED_DEVICES, MODELC_EMU_THREADS,
  /// MODELC_EMU_TIMEOUT (seconds) and MODELC_EMU_HOST_CHECK (0 turns the
  /// host-memory check off).
  static EmulatorOptions fromEnvironment();
};

class Emulator {
public:
  explicit Emulator(EmulatorOptions options = {}, KernelCache *cache = nullptr);
  ~Emulator();
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  /// The process-wide emulator, configured from the environment.
  static Emulator &global();
  /// True when MODELC_CUDA=emulate.
  static bool requestedByEnvironment();

  int deviceCount() const { return options.deviceCount; }
  /// NoSuchDevice for an index outside [0, deviceCount()).
  llvm::Error checkDevice(int device) const;

  llvm::Expected<void *> allocate(int device, size_t bytes);
  llvm::Error free(int device, void *pointer);
  llvm::Error copyHostToDevice(int device, void *destination, const void *source, size_t bytes);
  llvm::Error copyDeviceToHost(int device, void *destination, const void *source, size_t bytes);
  llvm::Error copyDeviceToDevice(int device, void *destination, const void *source, size_t bytes);
  llvm::Error copyPeer(int destinationDevice, void *destination, int sourceDevice,
                       const void *source, size_t bytes);

  /// Compiles (or fetches from the cache) and loads the kernels of `source`.
  llvm::Expected<std::shared_ptr<const EmulatedModule>>
  loadModule(llvm::StringRef source, llvm::StringRef name = "kernel.cu");

  /// Runs `kernel` on `device` over `grid` blocks of `block` threads; `args`
  /// holds one pointer per kernel parameter, as for cuLaunchKernel. Each
  /// block gets `dynamicSharedBytes` of `extern __shared__` memory.
  llvm::Error launch(int device, const EmulatedKernel &kernel, Dim3 grid, Dim3 block, void **args,
                     size_t dynamicSharedBytes = 0);

  size_t liveAllocations() const;

private:
  llvm::Error checkArguments(int device, const EmulatedKernel &kernel, void **args) const;
  /// The host compiler's flags for this emulator's kernels.
  std::vector<std::string> kernelFlags() const;

  EmulatorOptions options;
  KernelCache &cache;
  std::optional<HostCompiler> compiler;
  mutable std::mutex mutex; ///< Serializes memory operations and launches.
  EmulatedMemory memory;
  llvm::StringMap<std::shared_ptr<const EmulatedModule>> modules;
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_EMULATOR_EMULATOR_H
