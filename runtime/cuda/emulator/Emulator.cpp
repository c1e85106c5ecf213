//===- Emulator.cpp - Emulated CUDA GPUs on the CPU -----------------------===//
//
// A launch runs on worker threads that take blocks from a shared counter and
// hand each to the module's modelc_emu_run_block with host-owned fiber
// stacks. A worker arms a sigsetjmp point before running blocks; the
// SIGSEGV/SIGBUS/SIGFPE/SIGILL handler (on an alternate signal stack, so a fiber's
// stack overflow can be reported too) records the faulting address and jumps
// back there. The fault is classified afterwards, outside the handler,
// against the allocation table, which no one can change while a launch holds
// the emulator lock. Faults on threads that are not running emulated blocks
// go to whatever handler was installed before.
//
// A launch that outlives its time limit is stopped the same way: the
// launching thread marks it failed and sends each worker WatchdogSignal,
// whose handler jumps out of the running block. This is an asynchronous
// jump: a kernel interrupted inside a C library call holding a lock (printf)
// could leave that lock taken, the price of never hanging on an endless loop.
//
//===----------------------------------------------------------------------===//

#define MODELC_EMU_ABI_ONLY
#include "runtime/cuda/emulator/cuda_emulation.h"

#include "runtime/cuda/emulator/Emulator.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <iterator>
#include <thread>

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

namespace modelc::cuda {

namespace {

//===----------------------------------------------------------------------===//
// Fault capture
//===----------------------------------------------------------------------===//

struct WorkerFault {
  sigjmp_buf jump;
  uintptr_t address = 0;
  int signal = 0;
  int access = -1;          ///< 1 write, 0 read, -1 unknown.
  bool reachedHost = false; ///< The module's host-memory check trapped.
};

thread_local WorkerFault *activeFault = nullptr;

constexpr int CaughtSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
constexpr unsigned CaughtCount = std::size(CaughtSignals);
struct sigaction previousActions[CaughtCount];

/// Interrupts a worker whose launch timed out; a real-time signal, so it
/// collides with no signal a program conventionally uses.
int watchdogSignal() { return SIGRTMIN + 5; }

void onWatchdog(int signal) {
  WorkerFault *fault = activeFault;
  if (!fault)
    return; // Between blocks: the worker sees the failed launch and stops.
  activeFault = nullptr;
  fault->signal = signal;
  siglongjmp(fault->jump, 1);
}

/// Hands a fault that is not ours to the handler installed before us.
void forwardFault(int signal, siginfo_t *info, void *context) {
  for (unsigned i = 0; i < CaughtCount; ++i) {
    if (CaughtSignals[i] != signal)
      continue;
    const struct sigaction &previous = previousActions[i];
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
      previous.sa_sigaction(signal, info, context);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
      previous.sa_handler(signal);
    } else {
      // Returning re-executes the faulting instruction, which now gets the
      // default action (a crash with a core dump), as if we were not here.
      std::signal(signal, SIG_DFL);
    }
  }
}

void onFault(int signal, siginfo_t *info, void *context) {
  WorkerFault *fault = activeFault;
  if (!fault) {
    forwardFault(signal, info, context);
    return;
  }
  activeFault = nullptr;
  fault->address = reinterpret_cast<uintptr_t>(info->si_addr);
  fault->signal = signal;
#if defined(__x86_64__) && defined(REG_ERR)
  if (signal == SIGSEGV || signal == SIGBUS)
    fault->access = (static_cast<ucontext_t *>(context)->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#else
  (void)context;
#endif
  siglongjmp(fault->jump, 1);
}

/// Puts our handlers first in line. Called by every launch (under the
/// emulator lock): a handler installed after ours (LLVM's crash reporting,
/// say) would otherwise turn a reportable kernel fault into a crash. The
/// displaced handler becomes the one faults elsewhere are forwarded to.
void installFaultHandlers() {
  static std::mutex installMutex;
  std::lock_guard<std::mutex> lock(installMutex);
  for (unsigned i = 0; i < CaughtCount; ++i) {
    struct sigaction current;
    if (sigaction(CaughtSignals[i], nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
        current.sa_sigaction == onFault)
      continue;
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = onFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(CaughtSignals[i], &action, &previousActions[i]);
  }
  struct sigaction watchdog;
  std::memset(&watchdog, 0, sizeof(watchdog));
  watchdog.sa_handler = onWatchdog;
  watchdog.sa_flags = SA_ONSTACK;
  sigemptyset(&watchdog.sa_mask);
  sigaction(watchdogSignal(), &watchdog, nullptr);
}

/// An alternate signal stack for the current thread, so the fault handler
/// can run even when a fiber has overflowed its own stack.
class AlternateSignalStack {
public:
  AlternateSignalStack() : memory(Size) {
    stack_t stack;
    stack.ss_sp = memory.data();
    stack.ss_size = Size;
    stack.ss_flags = 0;
    installed = sigaltstack(&stack, &previous) == 0;
  }
  ~AlternateSignalStack() {
    if (installed)
      sigaltstack(&previous, nullptr);
  }

private:
  static constexpr size_t Size = 64 * 1024;
  std::vector<char> memory;
  stack_t previous;
  bool installed = false;
};

//===----------------------------------------------------------------------===//
// Fiber stacks
//===----------------------------------------------------------------------===//

/// `count` stacks, each with a PROT_NONE guard page below it.
class FiberStacks {
public:
  FiberStacks(unsigned count, size_t stackSize) : count(count) {
    size_t page = EmulatedAllocation::pageSize();
    usable = (stackSize + page - 1) / page * page;
    slot = usable + page;
    void *map = mmap(nullptr, slot * count, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
      return;
    base = static_cast<char *>(map);
    for (unsigned i = 0; i < count; ++i) {
      mprotect(base + i * slot, page, PROT_NONE);
      pointers.push_back(base + i * slot + page);
    }
  }
  ~FiberStacks() {
    if (base)
      munmap(base, slot * count);
  }
  FiberStacks(const FiberStacks &) = delete;
  FiberStacks &operator=(const FiberStacks &) = delete;

  bool valid() const { return base != nullptr; }
  unsigned capacity() const { return count; }
  size_t stackSize() const { return usable; }
  char **stacks() { return pointers.data(); }
  bool isGuard(uintptr_t address) const {
    uintptr_t start = reinterpret_cast<uintptr_t>(base);
    return base && address >= start && address < start + slot * count &&
           (address - start) % slot < EmulatedAllocation::pageSize();
  }

private:
  unsigned count;
  size_t usable = 0, slot = 0;
  char *base = nullptr;
  std::vector<char *> pointers;
};

/// A worker's dynamic shared memory: `size` bytes (rounded up to 16 for
/// vector types) ending at a PROT_NONE guard page, so an overrun faults.
class GuardedBuffer {
public:
  explicit GuardedBuffer(size_t requested) {
    size_t page = EmulatedAllocation::pageSize();
    size = (requested + 15) / 16 * 16;
    mapSize = (size + page - 1) / page * page + page;
    void *map = mmap(nullptr, mapSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
      return;
    base = static_cast<char *>(map);
    mprotect(base + mapSize - page, page, PROT_NONE);
  }
  ~GuardedBuffer() {
    if (base)
      munmap(base, mapSize);
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;

  bool valid() const { return base != nullptr; }
  char *data() const { return base + mapSize - EmulatedAllocation::pageSize() - size; }
  /// True for an address in the guard page right after the data.
  bool isGuard(uintptr_t address) const {
    uintptr_t end = reinterpret_cast<uintptr_t>(base) + mapSize;
    return base && address >= end - EmulatedAllocation::pageSize() && address < end;
  }

private:
  char *base = nullptr;
  size_t size = 0, mapSize = 0;
};

/// Stacks outlive launches: setting up guard pages for 1024 fibers is the
/// most expensive part of a small launch.
class FiberStackPool {
public:
  std::unique_ptr<FiberStacks> acquire(unsigned count, size_t stackSize) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto it = pool.begin(); it != pool.end(); ++it) {
        if ((*it)->capacity() >= count && (*it)->stackSize() == stackSize) {
          std::unique_ptr<FiberStacks> stacks = std::move(*it);
          pool.erase(it);
          return stacks;
        }
      }
    }
    return std::make_unique<FiberStacks>(count, stackSize);
  }
  void release(std::unique_ptr<FiberStacks> stacks) {
    std::lock_guard<std::mutex> lock(mutex);
    if (pool.size() < 16)
      pool.push_back(std::move(stacks));
  }

private:
  std::mutex mutex;
  std::vector<std::unique_ptr<FiberStacks>> pool;
};

FiberStackPool &stackPool() {
  static FiberStackPool pool;
  return pool;
}

//===----------------------------------------------------------------------===//
// Launch state
//===----------------------------------------------------------------------===//

struct LaunchFailure {
  CudaErrorKind kind;
  std::string message;
};

struct LaunchState {
  uint64_t totalBlocks = 0;
  std::atomic<uint64_t> nextBlock{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::optional<LaunchFailure> failure;
  std::condition_variable finished;
  unsigned runningWorkers = 0;

  void fail(CudaErrorKind kind, std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure)
      failure = LaunchFailure{kind, std::move(message)};
    failed = true;
  }
};

/// Far beyond any GPU's (227 KiB on sm_90), but bounded.
constexpr size_t MaxDynamicSharedBytes = 1 << 20;

std::string hexAddress(uintptr_t address) { return "0x" + llvm::utohexstr(address, true); }

LaunchFailure classifyFault(const EmulatedMemory &memory, const FiberStacks &stacks,
                            const GuardedBuffer &shared, size_t sharedBytes,
                            const WorkerFault &fault, int device, llvm::StringRef kernel,
                            llvm::StringRef where, size_t stackSize) {
  std::string who = llvm::formatv("kernel '{0}' on cuda:{1}", kernel, device).str();
  if (fault.reachedHost)
    return {CudaErrorKind::HostMemoryAccess,
            llvm::formatv("{0} {1} host memory at {2}, which no GPU can reach (a host pointer "
                          "passed inside device memory?); copy the data to cuda:{3} and pass "
                          "its device address{4}",
                          who, fault.access == 1 ? "wrote" : "read", hexAddress(fault.address),
                          device, where)};
  if (fault.signal == watchdogSignal())
    return {CudaErrorKind::Timeout, ""}; // The launcher words this one.
  if (fault.signal == SIGILL)
    return {CudaErrorKind::KernelFault,
            who +
                " trapped (__trap(), or undefined behaviour the host compiler turned into a "
                "trap)" +
                where.str()};
  if (fault.signal == SIGFPE)
    return {CudaErrorKind::KernelFault,
            who + " raised an arithmetic fault (integer division by zero?)" + where.str()};
  const char *verb = fault.access == 1 ? "wrote" : fault.access == 0 ? "read" : "accessed";
  std::string address = hexAddress(fault.address);
  if (shared.isGuard(fault.address))
    return {CudaErrorKind::OutOfBounds,
            llvm::formatv("{0} {1} past the end of its {2} bytes of dynamic shared memory{3}", who,
                          verb, sharedBytes, where)};
  if (stacks.isGuard(fault.address))
    return {CudaErrorKind::KernelFault,
            llvm::formatv("{0} overflowed its stack: an emulated CUDA thread has {1} KiB{2}", who,
                          stackSize / 1024, where)};
  if (std::optional<EmulatedAllocation> allocation = memory.findMapping(fault.address)) {
    std::string described =
        llvm::formatv("a {0}-byte allocation on cuda:{1}", allocation->size, allocation->device);
    if (allocation->device != device)
      return {CudaErrorKind::CrossDeviceAccess,
              llvm::formatv("{0} {1} memory of cuda:{2}: address {3} lies in {4}{5}; copy the "
                            "data to cuda:{6} first",
                            who, verb, allocation->device, address, described, where, device)};
    if (fault.address >= allocation->end())
      return {CudaErrorKind::OutOfBounds,
              llvm::formatv("{0} {1} out of bounds: address {2} is {3} bytes past the end of "
                            "{4}{5}",
                            who, verb, address, fault.address - allocation->end(), described,
                            where)};
    if (fault.address < allocation->begin)
      return {CudaErrorKind::OutOfBounds,
              llvm::formatv("{0} {1} out of bounds: address {2} is {3} bytes before the start "
                            "of {4}{5}",
                            who, verb, address, allocation->begin - fault.address, described,
                            where)};
  }
  if (fault.address < EmulatedAllocation::pageSize())
    return {CudaErrorKind::KernelFault,
            llvm::formatv("{0} {1} through a null pointer (address {2}){3}", who, verb, address,
                          where)};
  return {CudaErrorKind::KernelFault,
          llvm::formatv("{0} {1} address {2}, which is no memory of any emulated GPU (a host "
                        "pointer, freed memory, or an index far out of bounds){3}",
                        who, verb, address, where)};
}

/// Everything a worker needs to run blocks of one launch.
struct LaunchJob {
  const EmulatedKernel &kernel;
  const EmulatedModule &module;
  const EmulatedMemory &memory;
  const std::vector<uintptr_t> &deviceMappings;
  int device;
  Dim3 grid, block;
  void **args;
  size_t dynamicSharedBytes;
  size_t fiberStackSize;
  LaunchState &state;
};

/// A worker thread: takes blocks from the shared counter until none are
/// left or the launch has failed. A fault jumps back to the sigsetjmp point,
/// is classified and ends this worker.
void runBlocks(const LaunchJob &job) {
  LaunchState &state = job.state;
  AlternateSignalStack signalStack;
  unsigned threadsPerBlock = job.block.x * job.block.y * job.block.z;
  std::unique_ptr<FiberStacks> stacks = stackPool().acquire(threadsPerBlock, job.fiberStackSize);
  GuardedBuffer shared(job.dynamicSharedBytes);
  if (!stacks->valid() || !shared.valid()) {
    state.fail(CudaErrorKind::OutOfMemory,
               "cannot map stacks or shared memory for emulated CUDA threads");
    return;
  }
  char message[512] = {0};
  modelc_emu_block_launch blockLaunch;
  std::memset(&blockLaunch, 0, sizeof(blockLaunch));
  blockLaunch.entry = job.kernel.entry;
  blockLaunch.args = job.args;
  blockLaunch.grid[0] = job.grid.x, blockLaunch.grid[1] = job.grid.y;
  blockLaunch.grid[2] = job.grid.z;
  blockLaunch.block[0] = job.block.x, blockLaunch.block[1] = job.block.y;
  blockLaunch.block[2] = job.block.z;
  blockLaunch.stacks = stacks->stacks();
  blockLaunch.stackSize = stacks->stackSize();
  blockLaunch.error = message;
  blockLaunch.errorSize = sizeof(message);
  blockLaunch.dynamicShared = job.dynamicSharedBytes ? shared.data() : nullptr;
  blockLaunch.dynamicSharedSize = job.dynamicSharedBytes;
  blockLaunch.deviceMappings = job.deviceMappings.data();
  blockLaunch.deviceMappingCount = job.deviceMappings.size() / 2;
  uintptr_t hostAccess[2] = {0, 0};
  blockLaunch.hostAccess = hostAccess;

  WorkerFault fault;
  if (sigsetjmp(fault.jump, /*savesigs=*/1) != 0) {
    unsigned thread[3] = {0, 0, 0}, where[3] = {0, 0, 0};
    std::string location;
    if (job.module.currentThread(thread, where))
      location = llvm::formatv(" (thread ({0},{1},{2}) of block ({3},{4},{5}))", thread[0],
                               thread[1], thread[2], where[0], where[1], where[2]);
    if (hostAccess[1] != 0) {
      fault.address = hostAccess[0];
      fault.access = hostAccess[1] == 2 ? 1 : 0;
      fault.reachedHost = true;
    }
    LaunchFailure failure =
        classifyFault(job.memory, *stacks, shared, job.dynamicSharedBytes, fault, job.device,
                      job.kernel.name, location, stacks->stackSize());
    state.fail(failure.kind, std::move(failure.message));
    stackPool().release(std::move(stacks));
    return;
  }
  const Dim3 &grid = job.grid;
  while (!state.failed) {
    uint64_t index = state.nextBlock++;
    if (index >= state.totalBlocks)
      break;
    blockLaunch.blockIndex[0] = static_cast<unsigned>(index % grid.x);
    blockLaunch.blockIndex[1] = static_cast<unsigned>(index / grid.x % grid.y);
    blockLaunch.blockIndex[2] = static_cast<unsigned>(index / (uint64_t(grid.x) * grid.y));
    activeFault = &fault;
    int status = job.module.runBlock(blockLaunch);
    activeFault = nullptr;
    if (status != 0) {
      llvm::StringRef text(message);
      state.fail(text.starts_with("deadlock") ? CudaErrorKind::Deadlock
                                              : CudaErrorKind::InvalidLaunch,
                 llvm::formatv("kernel '{0}' on cuda:{1}: {2}", job.kernel.name, job.device, text));
      break;
    }
  }
  stackPool().release(std::move(stacks));
}

std::optional<unsigned> environmentNumber(const char *name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  unsigned number = 0;
  if (!value || llvm::StringRef(*value).trim().getAsInteger(10, number))
    return std::nullopt;
  return number;
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

llvm::Expected<EmulatedKernel> EmulatedModule::kernel(llvm::StringRef name) const {
  EmulatedKernel kernel;
  kernel.name = name.str();
  kernel.entry = library.function<void (*)(void **)>("modelc_emu_entry_" + name.str());
  kernel.info =
      static_cast<const modelc_emu_kernel_info *>(library.symbol("modelc_emu_info_" + name.str()));
  if (!kernel.entry || !kernel.info)
    return makeCudaError(CudaErrorKind::KernelNotFound,
                         llvm::formatv("no kernel named '{0}' in '{1}' (its kernels: {2})", name,
                                       sourceName,
                                       names.empty() ? "none" : llvm::join(names, ", ")));
  kernel.module = shared_from_this();
  return kernel;
}

//===----------------------------------------------------------------------===//
// Emulator
//===----------------------------------------------------------------------===//

EmulatorOptions EmulatorOptions::fromEnvironment() {
  EmulatorOptions options;
  if (std::optional<unsigned> devices = environmentNumber("MODELC_CUDA_EMULATED_DEVICES"))
    options.deviceCount = static_cast<int>(std::clamp(*devices, 1u, 64u));
  if (std::optional<unsigned> threads = environmentNumber("MODELC_EMU_THREADS"))
    options.workerThreads = std::min(*threads, 256u);
  if (std::optional<unsigned> seconds = environmentNumber("MODELC_EMU_TIMEOUT"))
    options.timeoutSeconds = *seconds;
  if (std::optional<unsigned> check = environmentNumber("MODELC_EMU_HOST_CHECK"))
    options.checkHostAccess = *check != 0;
  return options;
}

Emulator::Emulator(EmulatorOptions options, KernelCache *cache)
    : options(std::move(options)), cache(cache ? *cache : KernelCache::global()) {}

Emulator::~Emulator() = default;

Emulator &Emulator::global() {
  static Emulator emulator(EmulatorOptions::fromEnvironment());
  return emulator;
}

bool Emulator::requestedByEnvironment() {
  std::optional<std::string> mode = llvm::sys::Process::GetEnv("MODELC_CUDA");
  return mode && llvm::StringRef(*mode).trim().equals_insensitive("emulate");
}

llvm::Error Emulator::checkDevice(int device) const {
  if (device >= 0 && device < options.deviceCount)
    return llvm::Error::success();
  return makeCudaError(CudaErrorKind::NoSuchDevice,
                       noSuchDeviceMessage(device, options.deviceCount, "the CUDA emulator") +
                           " (set MODELC_CUDA_EMULATED_DEVICES for more)");
}

llvm::Expected<void *> Emulator::allocate(int device, size_t bytes) {
  if (llvm::Error error = checkDevice(device))
    return error;
  std::lock_guard<std::mutex> lock(mutex);
  return memory.allocate(device, bytes);
}

llvm::Error Emulator::free(int device, void *pointer) {
  if (llvm::Error error = checkDevice(device))
    return error;
  std::lock_guard<std::mutex> lock(mutex);
  return memory.release(device, pointer);
}

llvm::Error Emulator::copyHostToDevice(int device, void *destination, const void *source,
                                       size_t bytes) {
  if (llvm::Error error = checkDevice(device))
    return error;
  if (!source && bytes)
    return makeCudaError(CudaErrorKind::InvalidCopy, "copy to the device from a null host pointer");
  std::lock_guard<std::mutex> lock(mutex);
  if (llvm::Error error = memory.checkRange(device, destination, bytes, "destination"))
    return error;
  if (bytes)
    std::memcpy(destination, source, bytes);
  return llvm::Error::success();
}

llvm::Error Emulator::copyDeviceToHost(int device, void *destination, const void *source,
                                       size_t bytes) {
  if (llvm::Error error = checkDevice(device))
    return error;
  if (!destination && bytes)
    return makeCudaError(CudaErrorKind::InvalidCopy, "copy from the device to a null host pointer");
  std::lock_guard<std::mutex> lock(mutex);
  if (llvm::Error error = memory.checkRange(device, source, bytes, "source"))
    return error;
  if (bytes)
    std::memcpy(destination, source, bytes);
  return llvm::Error::success();
}

llvm::Error Emulator::copyDeviceToDevice(int device, void *destination, const void *source,
                                         size_t bytes) {
  return copyPeer(device, destination, device, source, bytes);
}

llvm::Error Emulator::copyPeer(int destinationDevice, void *destination, int sourceDevice,
                               const void *source, size_t bytes) {
  if (llvm::Error error = checkDevice(destinationDevice))
    return error;
  if (llvm::Error error = checkDevice(sourceDevice))
    return error;
  std::lock_guard<std::mutex> lock(mutex);
  if (llvm::Error error = memory.checkRange(destinationDevice, destination, bytes, "destination"))
    return error;
  if (llvm::Error error = memory.checkRange(sourceDevice, source, bytes, "source"))
    return error;
  if (bytes)
    std::memmove(destination, source, bytes);
  return llvm::Error::success();
}

size_t Emulator::liveAllocations() const {
  std::lock_guard<std::mutex> lock(mutex);
  return memory.allocationCount();
}

std::vector<std::string> Emulator::kernelFlags() const {
  std::vector<std::string> flags;
  if (options.checkHostAccess)
    flags = compiler->hostAccessCheckFlags();
  flags.insert(flags.end(), options.compilerFlags.begin(), options.compilerFlags.end());
  return flags;
}

llvm::Expected<std::shared_ptr<const EmulatedModule>> Emulator::loadModule(llvm::StringRef source,
                                                                           llvm::StringRef name) {
  static std::mutex loadMutex; // Compiles can take a second: not under `mutex`.
  std::lock_guard<std::mutex> lock(loadMutex);
  if (!compiler) {
    llvm::Expected<HostCompiler> found = HostCompiler::find();
    if (!found)
      return found.takeError();
    compiler = std::move(*found);
  }
  CacheKey key;
  key.add("modelc-emulated-kernels").add(int64_t(MODELC_EMU_ABI_VERSION));
  key.add(cudaEmulationHeader()).add(warpMatrixEmulationHeader());
  key.add(source).add(compiler->path).add(compiler->version);
  for (const std::string &flag : HostCompiler::baseFlags())
    key.add(flag);
  std::vector<std::string> flags = kernelFlags();
  for (const std::string &flag : flags)
    key.add(flag);
  std::string hex = key.hex();
  if (auto found = modules.find(hex); found != modules.end())
    return found->second;

  llvm::Expected<KernelCache::Payload> object =
      cache.getOrBuild(key, [&] { return compiler->compileKernels(source, name, flags); });
  if (!object)
    return object.takeError();

  // dlopen needs a file: write the cached bytes to a private temporary one,
  // which can be removed as soon as it is mapped.
  llvm::SmallString<128> path;
  int fd = -1;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("modelc-kernels", "so", fd, path))
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "cannot write the emulated kernels: " + ec.message());
  llvm::scope_exit removeFile([&] { llvm::sys::fs::remove(path); });
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << **object;
    out.close();
    if (out.has_error()) {
      out.clear_error();
      return makeCudaError(CudaErrorKind::HostCompileFailed,
                           "cannot write the emulated kernels to '" + path + "'");
    }
  }
  auto module = std::make_shared<EmulatedModule>();
  std::string loadError;
  module->library = SharedLibrary::open(std::string(path), &loadError);
  if (!module->library)
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "cannot load the emulated kernels of '" + name + "': " + loadError);
  auto abiVersion = module->library.function<int (*)()>("modelc_emu_abi_version");
  module->runBlockFn = module->library.function<EmulatedModule::RunBlockFn>("modelc_emu_run_block");
  module->currentThreadFn =
      module->library.function<EmulatedModule::CurrentThreadFn>("modelc_emu_current_thread");
  if (!abiVersion || abiVersion() != MODELC_EMU_ABI_VERSION || !module->runBlockFn ||
      !module->currentThreadFn)
    return makeCudaError(CudaErrorKind::HostCompileFailed,
                         "the emulated kernels of '" + name +
                             "' were built against another cuda_emulation.h");
  module->names = findKernelNames(source);
  module->sourceName = name.str();
  modules[hex] = module;
  return module;
}

llvm::Error Emulator::checkArguments(int device, const EmulatedKernel &kernel, void **args) const {
  const modelc_emu_kernel_info &info = *kernel.info;
  if (info.arity && !args)
    return makeCudaError(CudaErrorKind::InvalidLaunch,
                         llvm::formatv("kernel '{0}' takes {1} arguments but none were given",
                                       kernel.name, info.arity));
  for (unsigned i = 0; i < info.arity; ++i) {
    if (!args[i])
      return makeCudaError(CudaErrorKind::InvalidLaunch,
                           llvm::formatv("argument {0} of kernel '{1}' is missing (a null "
                                         "entry in the argument array)",
                                         i + 1, kernel.name));
    if (!info.isPointer[i])
      continue;
    void *pointer = *static_cast<void **>(args[i]);
    if (!pointer)
      continue;
    uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
    std::optional<EmulatedAllocation> allocation = memory.findData(address);
    if (!allocation)
      allocation = memory.findMapping(address);
    if (!allocation)
      return makeCudaError(
          CudaErrorKind::InvalidLaunch,
          llvm::formatv("argument {0} of kernel '{1}' on cuda:{2} is {3}, which is no device "
                        "memory (a host pointer, or freed memory?)",
                        i + 1, kernel.name, device, pointer));
    if (allocation->device != device)
      return makeCudaError(
          CudaErrorKind::CrossDeviceAccess,
          llvm::formatv("kernel '{0}' launched on cuda:{1} gets argument {2} pointing into a "
                        "{3}-byte allocation on cuda:{4}; copy the data to cuda:{1} first",
                        kernel.name, device, i + 1, allocation->size, allocation->device));
  }
  return llvm::Error::success();
}

llvm::Error Emulator::launch(int device, const EmulatedKernel &kernel, Dim3 grid, Dim3 block,
                             void **args, size_t dynamicSharedBytes) {
  if (llvm::Error error = checkDevice(device))
    return error;
  if (!kernel.entry || !kernel.info || !kernel.module)
    return makeCudaError(CudaErrorKind::InvalidLaunch, "launch of an empty kernel handle");
  uint64_t threadsPerBlock = uint64_t(block.x) * block.y * block.z;
  if (threadsPerBlock == 0 || threadsPerBlock > 1024 || block.z > 64)
    return makeCudaError(CudaErrorKind::InvalidLaunch,
                         llvm::formatv("kernel '{0}': a block of ({1},{2},{3}) threads is "
                                       "invalid (1 to 1024 threads, z at most 64)",
                                       kernel.name, block.x, block.y, block.z));
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
      grid.z > 65535)
    return makeCudaError(CudaErrorKind::InvalidLaunch,
                         llvm::formatv("kernel '{0}': a grid of ({1},{2},{3}) blocks is invalid",
                                       kernel.name, grid.x, grid.y, grid.z));

  if (dynamicSharedBytes > MaxDynamicSharedBytes)
    return makeCudaError(CudaErrorKind::InvalidLaunch,
                         llvm::formatv("kernel '{0}': {1} bytes of dynamic shared memory (at "
                                       "most {2})",
                                       kernel.name, dynamicSharedBytes, MaxDynamicSharedBytes));

  std::lock_guard<std::mutex> lock(mutex);
  if (llvm::Error error = checkArguments(device, kernel, args))
    return error;
  installFaultHandlers();
  memory.restrictAccessTo(device);
  llvm::scope_exit restoreAccess([&] { memory.restrictAccessTo(std::nullopt); });

  std::vector<uintptr_t> deviceMappings = memory.mappingRanges();
  LaunchState state;
  state.totalBlocks = uint64_t(grid.x) * grid.y * grid.z;
  unsigned workers = options.workerThreads ? options.workerThreads
                                           : std::max(1u, std::thread::hardware_concurrency());
  workers = static_cast<unsigned>(std::min<uint64_t>(workers, state.totalBlocks));
  LaunchJob job{kernel, *kernel.module, memory, deviceMappings,     device,
                grid,   block,          args,   dynamicSharedBytes, options.fiberStackSize,
                state};
  auto runAndReport = [&] {
    runBlocks(job);
    std::lock_guard<std::mutex> lock(state.mutex);
    --state.runningWorkers;
    state.finished.notify_all();
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  state.runningWorkers = workers;
  for (unsigned i = 0; i < workers; ++i)
    threads.emplace_back(runAndReport);
  if (options.timeoutSeconds) {
    std::unique_lock<std::mutex> lock(state.mutex);
    bool done = state.finished.wait_for(lock, std::chrono::seconds(options.timeoutSeconds),
                                        [&] { return state.runningWorkers == 0; });
    if (!done) {
      if (!state.failure)
        state.failure = LaunchFailure{
            CudaErrorKind::Timeout,
            llvm::formatv("kernel '{0}' on cuda:{1} ran longer than {2} s and was stopped (an "
                          "endless loop, or a block waiting for another block?); "
                          "MODELC_EMU_TIMEOUT sets the limit",
                          kernel.name, device, options.timeoutSeconds)};
      state.failed = true;
      lock.unlock();
      for (std::thread &thread : threads)
        pthread_kill(thread.native_handle(), watchdogSignal());
    }
  }
  for (std::thread &thread : threads)
    thread.join();

  if (state.failure)
    return makeCudaError(state.failure->kind, state.failure->message);
  return llvm::Error::success();
}

} // namespace modelc::cuda
