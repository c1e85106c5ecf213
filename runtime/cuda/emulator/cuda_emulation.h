//===- cuda_emulation.h - Compile CUDA C++ kernels for the CPU -*- C++ -*-===//
//
// Force-included (`c++ -include cuda_emulation.h`) in front of the same
// `extern "C" __global__` CUDA C++ source that NVRTC compiles for a GPU, so
// that the host compiler builds it into a shared object the emulator runs.
//
// Model: every CUDA thread of a block is a fiber with its own stack, all
// fibers of a block run on one OS thread, and a per-block scheduler switches
// between them. `__syncthreads()` parks a fiber until every live thread of
// the block has arrived; warp collectives (`__shfl_*_sync`, `__ballot_sync`,
// `__syncwarp`) park it until every live lane of its warp named in the mask
// has arrived, and their results are computed at release, so a fast lane can
// never overwrite a value a slow lane has yet to read. `__shared__` variables
// are `static thread_local`: one copy per OS thread, which is one copy per
// block because a worker runs one block at a time. Blocks of a grid are
// spread over the host's worker threads (see Emulator.cpp).
//
// The fiber switch is hand-written x86-64 assembly (callee-saved registers,
// MXCSR and the x87 control word); elsewhere, or with
// -DMODELC_EMU_USE_UCONTEXT, it falls back to <ucontext.h>.
//
// Self-contained on purpose: only C and C++ standard headers and its
// sibling warp_matrix_emulation.h, no modelc header, because the host
// compiler sees it at run time. The ABI with the
// host side is `modelc_emu_*` below, versioned by MODELC_EMU_ABI_VERSION.
//
// Dynamic shared memory (`extern __shared__ T name[];`) is rewritten by the
// emulator's compile step into a pointer to a per-block buffer, sized by the
// launch and ending at a guard page.
//
// Tensor-core instructions, ldmatrix and cp.async are emulated only as the
// `mdl_mma_*`, `mdl_ldmatrix_*` and `mdl_cp_async_*` device functions of
// warp_matrix_emulation.h (the generated prelude's names for them). Not
// emulated: grid-wide sync, blocks that spin waiting on other blocks, other
// inline PTX code.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDA_EMULATION_H
#define MODELC_CUDA_EMULATION_H

#include <stddef.h>
#include <stdint.h>

//===----------------------------------------------------------------------===//
// The ABI with the host (the host includes only this part, by defining
// MODELC_EMU_ABI_ONLY before including the header)
//===----------------------------------------------------------------------===//

#define MODELC_EMU_ABI_VERSION 3

extern "C" {
/// One block to run, filled by the host (Emulator.cpp). The host owns the
/// fiber stacks, so a fault that abandons a block leaks nothing.
struct modelc_emu_block_launch {
  void (*entry)(void **args);
  void **args;
  unsigned grid[3];
  unsigned block[3];
  unsigned blockIndex[3];
  char **stacks;    ///< One stack (lowest address) per thread of the block.
  size_t stackSize; ///< Bytes usable in each stack.
  char *error;      ///< Message buffer for a failed block.
  size_t errorSize;
  char *dynamicShared; ///< The block's `extern __shared__` memory.
  size_t dynamicSharedSize;
  /// Sorted [begin, end) pairs: the mappings of every emulated allocation,
  /// guard pages included. With the host-memory check compiled in, a kernel
  /// may touch these (page protections judge the rest), its own stacks,
  /// shared memory and module, and nothing else of the host's.
  const uintptr_t *deviceMappings;
  size_t deviceMappingCount;
  /// Set by the module before it traps on a kernel's access to host
  /// memory: the address, and 1 for a read or 2 for a write.
  uintptr_t *hostAccess;
};

/// A kernel's parameter list, so the host can check pointer arguments.
struct modelc_emu_kernel_info {
  unsigned arity;
  const unsigned *sizes;
  const unsigned char *isPointer;
};
}

#ifndef MODELC_EMU_ABI_ONLY

#include <link.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <type_traits>
#include <utility>

#if !defined(__x86_64__) && !defined(MODELC_EMU_USE_UCONTEXT)
#define MODELC_EMU_USE_UCONTEXT 1
#endif
#ifdef MODELC_EMU_USE_UCONTEXT
#include <ucontext.h>
#endif

//===----------------------------------------------------------------------===//
// Qualifiers
//===----------------------------------------------------------------------===//

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)

// The scheduler's own code touches host memory (the launch, the block state
// on the worker's stack) and must not be checked as kernel code is.
#define MODELC_EMU_UNCHECKED __attribute__((no_sanitize_address))

//===----------------------------------------------------------------------===//
// Vector types and built-in variables
//===----------------------------------------------------------------------===//

struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  MODELC_EMU_UNCHECKED constexpr dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1)
      : x(x), y(y), z(z) {}
};

#define MODELC_EMU_VECTOR2(T, N, A)                                                                \
  struct __attribute__((aligned(A))) N##2 {                                                        \
    T x, y;                                                                                        \
  };                                                                                               \
  static inline N##2 make_##N##2(T x, T y) { return N##2 {x, y}; }
#define MODELC_EMU_VECTOR4(T, N, A)                                                                \
  struct __attribute__((aligned(A))) N##4 {                                                        \
    T x, y, z, w;                                                                                  \
  };                                                                                               \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4 {x, y, z, w}; }
MODELC_EMU_VECTOR2(float, float, 8)
MODELC_EMU_VECTOR4(float, float, 16)
MODELC_EMU_VECTOR2(int, int, 8)
MODELC_EMU_VECTOR4(int, int, 16)
MODELC_EMU_VECTOR2(double, double, 16)
#undef MODELC_EMU_VECTOR2
#undef MODELC_EMU_VECTOR4

// Per OS thread; the block scheduler rewrites threadIdx before every switch
// into a fiber, so each CUDA thread sees its own.
static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static thread_local dim3 blockDim;
static thread_local dim3 gridDim;
static constexpr int warpSize = 32;

//===----------------------------------------------------------------------===//
// The block scheduler
//===----------------------------------------------------------------------===//

namespace modelc_emu {

enum class FiberState : unsigned char { Runnable, AtBlockBarrier, AtWarpCollective, Done };
enum class WarpOp : unsigned char { Sync, Shuffle, Ballot, Any, All };

struct Fiber {
#ifdef MODELC_EMU_USE_UCONTEXT
  ucontext_t context;
#else
  void *sp;
#endif
  FiberState state;
  uint3 tid;
};

/// The meeting point of one warp's lanes in a collective.
struct WarpCollective {
  unsigned mask[32];
  int source[32];
  uint64_t value[32];
  uint64_t result[32];
  WarpOp op;
};

struct Block {
  const modelc_emu_block_launch *launch;
  Fiber *fibers;
  WarpCollective *warps;
  unsigned count;
  unsigned live;
  unsigned current;
  /// __syncthreads_count: the votes of the barrier being gathered, and of
  /// the one last released (read by threads as they resume).
  unsigned barrierVotes, barrierVoters;
  unsigned releasedVotes, releasedVoters;
#ifdef MODELC_EMU_USE_UCONTEXT
  ucontext_t scheduler;
#else
  void *schedulerSp;
#endif
};

static thread_local Block *currentBlock;

} // namespace modelc_emu

#ifndef MODELC_EMU_USE_UCONTEXT
// void modelc_emu_switch(void **saveSp, void *loadSp): saves the callee-saved
// state on the current stack, stores the stack pointer to *saveSp, and
// resumes the context whose stack pointer is loadSp.
// modelc_emu_fiber_start: the first "return address" of a fresh fiber; it
// calls r13(r12) with an aligned stack and never returns.
asm(R"(
  .text
  .p2align 4
  .globl modelc_emu_switch
  .hidden modelc_emu_switch
  .type modelc_emu_switch,@function
modelc_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size modelc_emu_switch, .-modelc_emu_switch

  .p2align 4
  .globl modelc_emu_fiber_start
  .hidden modelc_emu_fiber_start
  .type modelc_emu_fiber_start,@function
modelc_emu_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size modelc_emu_fiber_start, .-modelc_emu_fiber_start
)");
extern "C" void modelc_emu_switch(void **saveSp, void *loadSp);
extern "C" void modelc_emu_fiber_start();
#endif

namespace modelc_emu {

/// What `extern __shared__ T name[]` points to (see HostCompiler.cpp).
MODELC_EMU_UNCHECKED inline void *dynamicShared() { return currentBlock->launch->dynamicShared; }

MODELC_EMU_UNCHECKED inline unsigned linearThreadId() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/// Parks the current fiber in `state` and returns when the scheduler resumes it.
MODELC_EMU_UNCHECKED inline void yieldToScheduler(FiberState state) {
  Block *block = currentBlock;
  Fiber &fiber = block->fibers[block->current];
  fiber.state = state;
#ifdef MODELC_EMU_USE_UCONTEXT
  swapcontext(&fiber.context, &block->scheduler);
#else
  modelc_emu_switch(&fiber.sp, block->schedulerSp);
#endif
}

[[noreturn]] MODELC_EMU_UNCHECKED inline void fiberMain(Block *block) {
  block->launch->entry(block->launch->args);
  block->fibers[block->current].state = FiberState::Done;
  --block->live;
#ifdef MODELC_EMU_USE_UCONTEXT
  setcontext(&block->scheduler);
#else
  void *discarded;
  modelc_emu_switch(&discarded, block->schedulerSp);
#endif
  __builtin_trap();
}

#ifdef MODELC_EMU_USE_UCONTEXT
MODELC_EMU_UNCHECKED inline void fiberMainTrampoline() { fiberMain(currentBlock); }
#endif

/// Empties a thread's queue of cp.async copies (warp_matrix_emulation.h).
MODELC_EMU_UNCHECKED inline void resetAsyncCopies(unsigned thread);

MODELC_EMU_UNCHECKED inline void initFiber(Block &block, unsigned index) {
  const modelc_emu_block_launch &launch = *block.launch;
  Fiber &fiber = block.fibers[index];
  char *base = launch.stacks[index];
#ifdef MODELC_EMU_USE_UCONTEXT
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = base;
  fiber.context.uc_stack.ss_size = launch.stackSize;
  fiber.context.uc_link = nullptr;
  makecontext(&fiber.context, fiberMainTrampoline, 0);
#else
  // Frame read by modelc_emu_switch, low to high: MXCSR/x87 word, r15, r14,
  // r13 (entry), r12 (its argument), rbx, rbp, return address. The return
  // address sits at 8 mod 16 so the trampoline's call is ABI-aligned.
  uintptr_t top = (reinterpret_cast<uintptr_t>(base) + launch.stackSize) & ~uintptr_t(15);
  uint64_t *sp = reinterpret_cast<uint64_t *>(top);
  *--sp = reinterpret_cast<uint64_t>(&modelc_emu_fiber_start);
  *--sp = 0; // rbp
  *--sp = 0; // rbx
  *--sp = reinterpret_cast<uint64_t>(&block);
  *--sp = reinterpret_cast<uint64_t>(&fiberMain);
  *--sp = 0;                         // r14
  *--sp = 0;                         // r15
  *--sp = 0x037Full << 32 | 0x1F80u; // default x87 control word, MXCSR
  fiber.sp = sp;
#endif
  fiber.state = FiberState::Runnable;
  resetAsyncCopies(index);
}

/// Lanes of `warp` that still run, as a 32-bit mask.
MODELC_EMU_UNCHECKED inline unsigned liveLanes(const Block &block, unsigned warp) {
  unsigned mask = 0;
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned index = warp * 32 + lane;
    if (index < block.count && block.fibers[index].state != FiberState::Done)
      mask |= 1u << lane;
  }
  return mask;
}

/// Releases `warp`'s collective if every live lane it names has arrived.
MODELC_EMU_UNCHECKED inline bool tryReleaseWarp(Block &block, unsigned warp) {
  unsigned waiting = 0, named = 0;
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned index = warp * 32 + lane;
    if (index < block.count && block.fibers[index].state == FiberState::AtWarpCollective) {
      waiting |= 1u << lane;
      named |= block.warps[warp].mask[lane];
    }
  }
  if (!waiting)
    return false;
  unsigned participants = named & liveLanes(block, warp);
  if ((participants & waiting) != participants)
    return false;
  WarpCollective &collective = block.warps[warp];
  unsigned votes = 0;
  for (unsigned lane = 0; lane < 32; ++lane)
    if ((waiting >> lane & 1) && collective.value[lane])
      votes |= 1u << lane;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(waiting >> lane & 1))
      continue;
    switch (collective.op) {
    case WarpOp::Sync:
      break;
    case WarpOp::Shuffle: {
      int source = collective.source[lane];
      bool valid = source >= 0 && source < 32 && (waiting >> source & 1);
      collective.result[lane] = valid ? collective.value[source] : collective.value[lane];
      break;
    }
    case WarpOp::Ballot:
      collective.result[lane] = votes & collective.mask[lane];
      break;
    case WarpOp::Any:
      collective.result[lane] = (votes & collective.mask[lane]) != 0;
      break;
    case WarpOp::All:
      collective.result[lane] =
          (votes & collective.mask[lane]) == (waiting & collective.mask[lane]);
      break;
    }
    block.fibers[warp * 32 + lane].state = FiberState::Runnable;
  }
  return true;
}

/// Releases barriers whose threads have all arrived; false if none could be.
MODELC_EMU_UNCHECKED inline bool releaseBarriers(Block &block) {
  bool released = false;
  unsigned warps = (block.count + 31) / 32;
  for (unsigned warp = 0; warp < warps; ++warp)
    released |= tryReleaseWarp(block, warp);
  if (released)
    return true;
  bool allAtBarrier = block.live > 0;
  for (unsigned i = 0; i < block.count && allAtBarrier; ++i)
    if (block.fibers[i].state != FiberState::Done &&
        block.fibers[i].state != FiberState::AtBlockBarrier)
      allAtBarrier = false;
  if (!allAtBarrier)
    return false;
  block.releasedVotes = block.barrierVotes;
  block.releasedVoters = block.barrierVoters;
  block.barrierVotes = block.barrierVoters = 0;
  for (unsigned i = 0; i < block.count; ++i)
    if (block.fibers[i].state == FiberState::AtBlockBarrier)
      block.fibers[i].state = FiberState::Runnable;
  return true;
}

MODELC_EMU_UNCHECKED inline uint64_t warpCollective(WarpOp op, unsigned mask, uint64_t value,
                                                    int source) {
  Block *block = currentBlock;
  unsigned thread = linearThreadId();
  WarpCollective &collective = block->warps[thread / 32];
  unsigned lane = thread % 32;
  collective.op = op;
  collective.mask[lane] = mask;
  collective.value[lane] = value;
  collective.source[lane] = source;
  yieldToScheduler(FiberState::AtWarpCollective);
  return currentBlock->warps[linearThreadId() / 32].result[lane];
}

template <typename T> inline uint64_t toBits(T value) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "shuffle of a type over 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <typename T> inline T fromBits(uint64_t bits) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  return value;
}

} // namespace modelc_emu

//===----------------------------------------------------------------------===//
// Host memory is out of a kernel's reach
//
// Built with the host-memory check (HostCompiler's -fsanitize=kernel-address
// with every access outlined), each load and store of kernel code calls an
// __asan_* hook below with its address. A kernel may touch the emulated
// GPUs' memory (the page protections then judge device and bounds), its
// fiber stacks, its block's shared memory (dynamic, and the `static
// thread_local` of `__shared__`) and this module's own image (its constant
// tables). Anything else is the host's, which a GPU cannot reach: the hook
// records the address for the host's report and traps.
//===----------------------------------------------------------------------===//

namespace modelc_emu {

/// What the running block may touch besides device memory; per OS thread,
/// set when a block starts.
struct Reach {
  uintptr_t hitBegin, hitBytes; ///< The device mapping reached last.
  uintptr_t stacksBegin, stacksBytes;
  uintptr_t sharedBegin, sharedBytes;
  uintptr_t tlsBegin, tlsBytes; ///< This module's thread-local block.
  const modelc_emu_block_launch *launch;
};
static thread_local Reach reach;

/// The loaded segments of this module, and its thread-local block.
struct ModuleImage {
  uintptr_t segments[16][2];
  unsigned count;
  uintptr_t tlsBegin, tlsBytes;
};

static const char moduleAnchor = 0; // Internal linkage: an address in this module.

MODELC_EMU_UNCHECKED inline int findThisModule(dl_phdr_info *info, size_t, void *data) {
  uintptr_t anchor = reinterpret_cast<uintptr_t>(&moduleAnchor);
  bool holdsAnchor = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info->dlpi_phdr[i];
    if (header.p_type == PT_LOAD && anchor - (info->dlpi_addr + header.p_vaddr) < header.p_memsz)
      holdsAnchor = true;
  }
  if (!holdsAnchor)
    return 0;
  ModuleImage &image = *static_cast<ModuleImage *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &header = info->dlpi_phdr[i];
    if (header.p_type == PT_LOAD && image.count < 16) {
      image.segments[image.count][0] = info->dlpi_addr + header.p_vaddr;
      image.segments[image.count][1] = header.p_memsz;
      ++image.count;
    }
    if (header.p_type == PT_TLS) {
      image.tlsBegin = reinterpret_cast<uintptr_t>(info->dlpi_tls_data);
      image.tlsBytes = info->dlpi_tls_data ? header.p_memsz : 0;
    }
  }
  return 1;
}

/// This module as the calling thread sees it (its thread-local block must
/// exist: the caller has touched a thread_local).
MODELC_EMU_UNCHECKED inline ModuleImage findModuleImage() {
  ModuleImage image = {};
  dl_iterate_phdr(findThisModule, &image);
  return image;
}

MODELC_EMU_UNCHECKED inline const ModuleImage &moduleSegments() {
  static const ModuleImage image = findModuleImage();
  return image;
}

MODELC_EMU_UNCHECKED inline void enterReach(const modelc_emu_block_launch &launch,
                                            unsigned threads) {
  Reach &r = reach;
  if (r.tlsBytes == 0) {
    ModuleImage image = findModuleImage();
    r.tlsBegin = image.tlsBegin;
    r.tlsBytes = image.tlsBytes;
  }
  // The guard pages below the stacks and past the shared memory are in
  // reach: an access there faults, and the host reports an overflow.
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  r.hitBegin = r.hitBytes = 0;
  r.stacksBegin = reinterpret_cast<uintptr_t>(launch.stacks[0]) - page;
  r.stacksBytes =
      reinterpret_cast<uintptr_t>(launch.stacks[threads - 1]) + launch.stackSize - r.stacksBegin;
  r.sharedBegin = reinterpret_cast<uintptr_t>(launch.dynamicShared);
  r.sharedBytes = launch.dynamicShared ? launch.dynamicSharedSize + page : 0;
  r.launch = &launch;
}

MODELC_EMU_UNCHECKED inline void leaveReach() { reach.launch = nullptr; }

/// The hook behind every checked access (kind 1 read, 2 write).
MODELC_EMU_UNCHECKED inline void checkReach(uintptr_t address, uintptr_t kind) {
  Reach &r = reach;
  if (address - r.hitBegin < r.hitBytes || address - r.stacksBegin < r.stacksBytes ||
      address - r.tlsBegin < r.tlsBytes || address - r.sharedBegin < r.sharedBytes)
    return;
  const modelc_emu_block_launch *launch = r.launch;
  if (!launch)
    return; // Not kernel code: the module's own start-up.
  if (address < 65536)
    return; // Unmapped: it faults, and is reported as a null pointer.
  const uintptr_t *mappings = launch->deviceMappings;
  size_t low = 0, high = launch->deviceMappingCount;
  while (low < high) {
    size_t middle = (low + high) / 2;
    if (mappings[2 * middle + 1] <= address)
      low = middle + 1;
    else
      high = middle;
  }
  if (low < launch->deviceMappingCount && address >= mappings[2 * low]) {
    r.hitBegin = mappings[2 * low];
    r.hitBytes = mappings[2 * low + 1] - mappings[2 * low];
    return;
  }
  const ModuleImage &image = moduleSegments();
  for (unsigned i = 0; i < image.count; ++i)
    if (address - image.segments[i][0] < image.segments[i][1])
      return;
  if (launch->hostAccess) {
    launch->hostAccess[0] = address;
    launch->hostAccess[1] = kind;
  }
  __builtin_trap();
}

} // namespace modelc_emu

#define MODELC_EMU_REACH_HOOK(ACCESS, KIND)                                                        \
  extern "C" __attribute__((visibility("hidden")))                                                 \
  MODELC_EMU_UNCHECKED void __asan_##ACCESS##_noabort(uintptr_t address) {                         \
    modelc_emu::checkReach(address, KIND);                                                         \
  }
MODELC_EMU_REACH_HOOK(load1, 1)
MODELC_EMU_REACH_HOOK(load2, 1)
MODELC_EMU_REACH_HOOK(load4, 1)
MODELC_EMU_REACH_HOOK(load8, 1)
MODELC_EMU_REACH_HOOK(load16, 1)
MODELC_EMU_REACH_HOOK(store1, 2)
MODELC_EMU_REACH_HOOK(store2, 2)
MODELC_EMU_REACH_HOOK(store4, 2)
MODELC_EMU_REACH_HOOK(store8, 2)
MODELC_EMU_REACH_HOOK(store16, 2)
#undef MODELC_EMU_REACH_HOOK
extern "C" __attribute__((visibility("hidden"))) MODELC_EMU_UNCHECKED void
__asan_loadN_noabort(uintptr_t address, size_t) {
  modelc_emu::checkReach(address, 1);
}
extern "C" __attribute__((visibility("hidden"))) MODELC_EMU_UNCHECKED void
__asan_storeN_noabort(uintptr_t address, size_t) {
  modelc_emu::checkReach(address, 2);
}
extern "C" __attribute__((visibility("hidden"))) void __asan_handle_no_return() {}

namespace modelc_emu {

MODELC_EMU_UNCHECKED inline int runBlock(const modelc_emu_block_launch &launch, Fiber *fibers,
                                         WarpCollective *warps) {
  Block block;
  block.launch = &launch;
  block.fibers = fibers;
  block.warps = warps;
  block.count = launch.block[0] * launch.block[1] * launch.block[2];
  block.live = block.count;
  block.current = 0;
  block.barrierVotes = block.barrierVoters = 0;
  block.releasedVotes = block.releasedVoters = 0;
  currentBlock = &block;
  enterReach(launch, block.count);
  blockIdx = uint3{launch.blockIndex[0], launch.blockIndex[1], launch.blockIndex[2]};
  blockDim = dim3(launch.block[0], launch.block[1], launch.block[2]);
  gridDim = dim3(launch.grid[0], launch.grid[1], launch.grid[2]);
  for (unsigned i = 0; i < block.count; ++i) {
    initFiber(block, i);
    fibers[i].tid = uint3{i % launch.block[0], i / launch.block[0] % launch.block[1],
                          i / (launch.block[0] * launch.block[1])};
  }
  while (block.live > 0) {
    for (unsigned i = 0; i < block.count; ++i) {
      if (fibers[i].state != FiberState::Runnable)
        continue;
      block.current = i;
      threadIdx = fibers[i].tid;
#ifdef MODELC_EMU_USE_UCONTEXT
      swapcontext(&block.scheduler, &fibers[i].context);
#else
      modelc_emu_switch(&block.schedulerSp, fibers[i].sp);
#endif
    }
    if (block.live == 0 || releaseBarriers(block))
      continue;
    unsigned atBarrier = 0, atWarp = 0;
    for (unsigned i = 0; i < block.count; ++i) {
      atBarrier += fibers[i].state == FiberState::AtBlockBarrier;
      atWarp += fibers[i].state == FiberState::AtWarpCollective;
    }
    snprintf(launch.error, launch.errorSize,
             "deadlock in block (%u,%u,%u): %u thread(s) wait at __syncthreads(), %u at a warp "
             "collective, %u have exited",
             launch.blockIndex[0], launch.blockIndex[1], launch.blockIndex[2], atBarrier, atWarp,
             block.count - block.live);
    currentBlock = nullptr;
    leaveReach();
    return 1;
  }
  currentBlock = nullptr;
  leaveReach();
  return 0;
}

template <typename T> struct Param {
  static constexpr unsigned char isPointer = std::is_pointer_v<T>;
};

template <auto Kernel> struct KernelTraits;
template <typename... Args, void (*Kernel)(Args...)> struct KernelTraits<Kernel> {
  static constexpr unsigned sizes[sizeof...(Args) + 1] = {unsigned(sizeof(Args))..., 0};
  static constexpr unsigned char isPointer[sizeof...(Args) + 1] = {Param<Args>::isPointer..., 0};
  static constexpr modelc_emu_kernel_info info = {unsigned(sizeof...(Args)), sizes, isPointer};

  template <size_t... I>
  MODELC_EMU_UNCHECKED static void call(void **args, std::index_sequence<I...>) {
    Kernel(*static_cast<std::remove_reference_t<Args> *>(args[I])...);
  }
  MODELC_EMU_UNCHECKED static void entry(void **args) {
    call(args, std::index_sequence_for<Args...>{});
  }
};

} // namespace modelc_emu

/// Exports kernel NAME to the host: an entry taking cuLaunchKernel-style
/// argument pointers, and its parameter list. The emulator appends one line
/// per kernel found in the source.
#define MODELC_EMU_EXPORT_KERNEL(NAME)                                                             \
  extern "C" MODELC_EMU_UNCHECKED void modelc_emu_entry_##NAME(void **args) {                      \
    ::modelc_emu::KernelTraits<&NAME>::entry(args);                                                \
  }                                                                                                \
  extern "C" const modelc_emu_kernel_info modelc_emu_info_##NAME =                                 \
      ::modelc_emu::KernelTraits<&NAME>::info;

extern "C" __attribute__((visibility("default"), used)) int modelc_emu_abi_version() {
  return MODELC_EMU_ABI_VERSION;
}

/// Runs one block to completion; 0 on success, else a message in launch.error.
extern "C" __attribute__((visibility("default"), used)) MODELC_EMU_UNCHECKED int
modelc_emu_run_block(const modelc_emu_block_launch *launch) {
  unsigned count = launch->block[0] * launch->block[1] * launch->block[2];
  static thread_local modelc_emu::Fiber fibers[1024];
  static thread_local modelc_emu::WarpCollective warps[32];
  if (count == 0 || count > 1024) {
    snprintf(launch->error, launch->errorSize, "a block of %u threads (1 to 1024 allowed)", count);
    return 1;
  }
  return modelc_emu::runBlock(*launch, fibers, warps);
}

/// The CUDA thread running on this OS thread, for fault reports.
extern "C" __attribute__((visibility("default"), used)) MODELC_EMU_UNCHECKED int
modelc_emu_current_thread(unsigned thread[3], unsigned block[3]) {
  if (!modelc_emu::currentBlock)
    return 0;
  thread[0] = threadIdx.x, thread[1] = threadIdx.y, thread[2] = threadIdx.z;
  block[0] = blockIdx.x, block[1] = blockIdx.y, block[2] = blockIdx.z;
  return 1;
}

//===----------------------------------------------------------------------===//
// Synchronization
//===----------------------------------------------------------------------===//

MODELC_EMU_UNCHECKED static inline void __syncthreads() {
  modelc_emu::yieldToScheduler(modelc_emu::FiberState::AtBlockBarrier);
}
/// A barrier that also counts the threads whose predicate is nonzero.
MODELC_EMU_UNCHECKED static inline int __syncthreads_count(int predicate) {
  modelc_emu::currentBlock->barrierVotes += predicate != 0;
  ++modelc_emu::currentBlock->barrierVoters;
  modelc_emu::yieldToScheduler(modelc_emu::FiberState::AtBlockBarrier);
  return int(modelc_emu::currentBlock->releasedVotes);
}
MODELC_EMU_UNCHECKED static inline int __syncthreads_and(int predicate) {
  int votes = __syncthreads_count(predicate);
  return votes == int(modelc_emu::currentBlock->releasedVoters);
}
MODELC_EMU_UNCHECKED static inline int __syncthreads_or(int predicate) {
  return __syncthreads_count(predicate) != 0;
}
MODELC_EMU_UNCHECKED static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  modelc_emu::warpCollective(modelc_emu::WarpOp::Sync, mask, 0, 0);
}
/// Aborts the kernel; the launch fails with a KernelFault.
[[noreturn]] static inline void __trap() { __builtin_trap(); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
MODELC_EMU_UNCHECKED static inline unsigned __activemask() {
  return modelc_emu::liveLanes(*modelc_emu::currentBlock, modelc_emu::linearThreadId() / 32);
}

//===----------------------------------------------------------------------===//
// Warp shuffles and votes
//===----------------------------------------------------------------------===//

template <typename T>
static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  int lane = int(modelc_emu::linearThreadId() % 32);
  int source = (lane & ~(width - 1)) + (srcLane & (width - 1));
  return modelc_emu::fromBits<T>(modelc_emu::warpCollective(modelc_emu::WarpOp::Shuffle, mask,
                                                            modelc_emu::toBits(var), source));
}
template <typename T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  int lane = int(modelc_emu::linearThreadId() % 32);
  int source = (lane & (width - 1)) >= int(delta) ? lane - int(delta) : lane;
  return modelc_emu::fromBits<T>(modelc_emu::warpCollective(modelc_emu::WarpOp::Shuffle, mask,
                                                            modelc_emu::toBits(var), source));
}
template <typename T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  int lane = int(modelc_emu::linearThreadId() % 32);
  int source = (lane & (width - 1)) + int(delta) < width ? lane + int(delta) : lane;
  return modelc_emu::fromBits<T>(modelc_emu::warpCollective(modelc_emu::WarpOp::Shuffle, mask,
                                                            modelc_emu::toBits(var), source));
}
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize) {
  int lane = int(modelc_emu::linearThreadId() % 32);
  int source = lane ^ laneMask;
  if ((source & ~(width - 1)) != (lane & ~(width - 1)))
    source = lane;
  return modelc_emu::fromBits<T>(modelc_emu::warpCollective(modelc_emu::WarpOp::Shuffle, mask,
                                                            modelc_emu::toBits(var), source));
}
static inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return unsigned(modelc_emu::warpCollective(modelc_emu::WarpOp::Ballot, mask, predicate != 0, 0));
}
static inline int __any_sync(unsigned mask, int predicate) {
  return int(modelc_emu::warpCollective(modelc_emu::WarpOp::Any, mask, predicate != 0, 0));
}
static inline int __all_sync(unsigned mask, int predicate) {
  return int(modelc_emu::warpCollective(modelc_emu::WarpOp::All, mask, predicate != 0, 0));
}

//===----------------------------------------------------------------------===//
// Atomics (blocks run on several OS threads, so these are real atomics)
//===----------------------------------------------------------------------===//

namespace modelc_emu {
template <typename T, typename F> inline T atomicUpdate(T *address, F update) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, false, __ATOMIC_SEQ_CST,
                                      __ATOMIC_RELAXED));
  return old;
}
} // namespace modelc_emu

template <typename T> static inline T atomicAdd(T *address, std::type_identity_t<T> value) {
  if constexpr (std::is_integral_v<T>)
    return __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
  else
    return modelc_emu::atomicUpdate(address, [&](T old) { return T(old + value); });
}
template <typename T> static inline T atomicSub(T *address, std::type_identity_t<T> value) {
  return __atomic_fetch_sub(address, value, __ATOMIC_SEQ_CST);
}
template <typename T> static inline T atomicExch(T *address, std::type_identity_t<T> value) {
  T old;
  __atomic_exchange(address, &value, &old, __ATOMIC_SEQ_CST);
  return old;
}
template <typename T>
static inline T atomicCAS(T *address, std::type_identity_t<T> compare,
                          std::type_identity_t<T> value) {
  __atomic_compare_exchange(address, &compare, &value, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return compare;
}
template <typename T> static inline T atomicMax(T *address, std::type_identity_t<T> value) {
  return modelc_emu::atomicUpdate(address, [&](T old) { return old < value ? value : old; });
}
template <typename T> static inline T atomicMin(T *address, std::type_identity_t<T> value) {
  return modelc_emu::atomicUpdate(address, [&](T old) { return value < old ? value : old; });
}
template <typename T> static inline T atomicAnd(T *address, std::type_identity_t<T> value) {
  return __atomic_fetch_and(address, value, __ATOMIC_SEQ_CST);
}
template <typename T> static inline T atomicOr(T *address, std::type_identity_t<T> value) {
  return __atomic_fetch_or(address, value, __ATOMIC_SEQ_CST);
}
template <typename T> static inline T atomicXor(T *address, std::type_identity_t<T> value) {
  return __atomic_fetch_xor(address, value, __ATOMIC_SEQ_CST);
}

//===----------------------------------------------------------------------===//
// Math: <math.h> supplies expf, erff, tanhf, fmaxf...; these are CUDA's own.
// glibc declares some __names (__expf...) itself: ours are macros to
// modelc_emu__names, so they never clash.
//===----------------------------------------------------------------------===//

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float modelc_emu__expf(float x) { return expf(x); }
static inline float modelc_emu__exp10f(float x) { return powf(10.0f, x); }
static inline float modelc_emu__logf(float x) { return logf(x); }
static inline float modelc_emu__log2f(float x) { return log2f(x); }
static inline float modelc_emu__powf(float x, float y) { return powf(x, y); }
static inline float modelc_emu__sinf(float x) { return sinf(x); }
static inline float modelc_emu__cosf(float x) { return cosf(x); }
static inline float modelc_emu__tanf(float x) { return tanf(x); }
static inline float modelc_emu__fdividef(float x, float y) { return x / y; }
static inline float fdividef(float x, float y) { return x / y; }
static inline float modelc_emu__frcp_rn(float x) { return 1.0f / x; }
static inline float modelc_emu__fsqrt_rn(float x) { return sqrtf(x); }
static inline float modelc_emu__fadd_rn(float x, float y) { return x + y; }
static inline float modelc_emu__fmul_rn(float x, float y) { return x * y; }
static inline float modelc_emu__fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
static inline float modelc_emu__saturatef(float x) {
  return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x);
}
static inline int modelc_emu__float2int_rn(float x) { return int(nearbyintf(x)); }
static inline int modelc_emu__float2int_rz(float x) { return int(x); }
static inline float modelc_emu__int2float_rn(int x) { return float(x); }
static inline int modelc_emu__float_as_int(float x) {
  return modelc_emu::fromBits<int>(modelc_emu::toBits(x));
}
static inline unsigned modelc_emu__float_as_uint(float x) {
  return modelc_emu::fromBits<unsigned>(modelc_emu::toBits(x));
}
static inline float modelc_emu__int_as_float(int x) {
  return modelc_emu::fromBits<float>(modelc_emu::toBits(x));
}
static inline float modelc_emu__uint_as_float(unsigned x) {
  return modelc_emu::fromBits<float>(modelc_emu::toBits(x));
}
static inline long long modelc_emu__double_as_longlong(double x) {
  return modelc_emu::fromBits<long long>(modelc_emu::toBits(x));
}
static inline double modelc_emu__longlong_as_double(long long x) {
  return modelc_emu::fromBits<double>(modelc_emu::toBits(x));
}
static inline int modelc_emu__popc(unsigned x) { return __builtin_popcount(x); }
static inline int modelc_emu__popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int modelc_emu__clz(int x) { return x ? __builtin_clz(unsigned(x)) : 32; }
static inline int modelc_emu__ffs(int x) { return __builtin_ffs(x); }
template <typename T> static inline T modelc_emu__ldg(const T *address) { return *address; }

#define __expf modelc_emu__expf
#define __exp10f modelc_emu__exp10f
#define __logf modelc_emu__logf
#define __log2f modelc_emu__log2f
#define __powf modelc_emu__powf
#define __sinf modelc_emu__sinf
#define __cosf modelc_emu__cosf
#define __tanf modelc_emu__tanf
#define __fdividef modelc_emu__fdividef
#define __frcp_rn modelc_emu__frcp_rn
#define __fsqrt_rn modelc_emu__fsqrt_rn
#define __fadd_rn modelc_emu__fadd_rn
#define __fmul_rn modelc_emu__fmul_rn
#define __fmaf_rn modelc_emu__fmaf_rn
#define __saturatef modelc_emu__saturatef
#define __float2int_rn modelc_emu__float2int_rn
#define __float2int_rz modelc_emu__float2int_rz
#define __int2float_rn modelc_emu__int2float_rn
#define __float_as_int modelc_emu__float_as_int
#define __float_as_uint modelc_emu__float_as_uint
#define __int_as_float modelc_emu__int_as_float
#define __uint_as_float modelc_emu__uint_as_float
#define __double_as_longlong modelc_emu__double_as_longlong
#define __longlong_as_double modelc_emu__longlong_as_double
#define __popc modelc_emu__popc
#define __popcll modelc_emu__popcll
#define __clz modelc_emu__clz
#define __ffs modelc_emu__ffs
#define __ldg modelc_emu__ldg

#define MODELC_EMU_MINMAX(T)                                                                       \
  static inline T min(T a, T b) { return b < a ? b : a; }                                          \
  static inline T max(T a, T b) { return a < b ? b : a; }
MODELC_EMU_MINMAX(int)
MODELC_EMU_MINMAX(unsigned)
MODELC_EMU_MINMAX(long long)
MODELC_EMU_MINMAX(unsigned long long)
MODELC_EMU_MINMAX(float)
MODELC_EMU_MINMAX(double)
#undef MODELC_EMU_MINMAX

// Tensor-core warp matrix operations (mma.sync), emulated.
#include "warp_matrix_emulation.h"

#endif // MODELC_EMU_ABI_ONLY
#endif // MODELC_CUDA_EMULATION_H
