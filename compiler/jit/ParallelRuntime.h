//===- ParallelRuntime.h - the OpenMP entry points of parallel loops ------===//
//
// `mdl-parallel-loops` turns large loop nests into OpenMP worksharing loops,
// which MLIR's OpenMP translation emits as calls to LLVM's OpenMP runtime
// ABI (`__kmpc_fork_call`, `__kmpc_for_static_init_8u`, ...). oneDNN and
// OpenBLAS run on GCC's libgomp; a second OpenMP runtime in the process would
// bring a second pool of threads spinning against the first on the same
// cores. These functions implement the few entry points the translation
// emits on top of the process's own OpenMP, so the generated loops share
// the library calls' threads. The JIT and the artifact loader bind the
// `__kmpc_*` names to them (same calling convention as the C ABI); nothing
// here is exported under those names, so a host that loads LLVM's libomp
// keeps its own.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_PARALLELRUNTIME_H
#define MODELC_JIT_PARALLELRUNTIME_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace modelc::jit {

/// A parallel region's outlined body: thread ids, then the captured values.
using Microtask = void (*)(int32_t *globalTid, int32_t *boundTid, ...);

/// The most captured values a region may pass (MLIR packs them in one
/// struct, so regions pass one).
inline constexpr int32_t kMaxMicrotaskArgs = 8;

/// LLVM's kmp_sch_static (one contiguous block per thread) and
/// kmp_sch_static_chunked.
inline constexpr int32_t kScheduleStaticChunked = 33;
inline constexpr int32_t kScheduleStatic = 34;

/// This thread's part of the iterations lower..upper (inclusive, step
/// `increment`) among `threads` threads, as __kmpc_for_static_init does it:
/// one balanced contiguous block each (kScheduleStatic; a thread without
/// iterations gets lower = upper + 1), or the first of its `chunk`-sized
/// blocks, `stride` apart (kScheduleStaticChunked). Exposed for tests.
void staticSchedule(int32_t schedule, int32_t thread, int32_t threads, int32_t *isLast,
                    int64_t *lower, int64_t *upper, int64_t *stride, int64_t increment,
                    int64_t chunk);

/// Parallel regions entered since the process started (for tests).
uint64_t parallelRegionsEntered();

/// One binding of a runtime ABI name to its implementation here.
struct OpenMpSymbol {
  const char *name;
  const void *address;
};

/// Every `__kmpc_*` entry point the OpenMP translation emits for
/// `omp.parallel` + `omp.wsloop` with a static schedule.
llvm::ArrayRef<OpenMpSymbol> openMpRuntimeSymbols();

} // namespace modelc::jit

#endif // MODELC_JIT_PARALLELRUNTIME_H
