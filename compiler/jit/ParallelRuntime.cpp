//===- ParallelRuntime.cpp - LLVM's OpenMP ABI on the process's OpenMP ----===//

#include "jit/ParallelRuntime.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace modelc::jit {
namespace {

std::atomic<uint64_t> regionsEntered{0};

int32_t threadNumber() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int32_t teamSize() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

void invoke(Microtask task, int32_t argc, void *const *args) {
  int32_t globalTid = threadNumber(), boundTid = globalTid;
  int32_t *g = &globalTid, *t = &boundTid;
  switch (argc) {
  case 0:
    return task(g, t);
  case 1:
    return task(g, t, args[0]);
  case 2:
    return task(g, t, args[0], args[1]);
  case 3:
    return task(g, t, args[0], args[1], args[2]);
  case 4:
    return task(g, t, args[0], args[1], args[2], args[3]);
  case 5:
    return task(g, t, args[0], args[1], args[2], args[3], args[4]);
  case 6:
    return task(g, t, args[0], args[1], args[2], args[3], args[4], args[5]);
  case 7:
    return task(g, t, args[0], args[1], args[2], args[3], args[4], args[5], args[6]);
  case 8:
    return task(g, t, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
  }
}

void forkCall(void * /*location*/, int32_t argc, Microtask task, ...) {
  if (argc < 0 || argc > kMaxMicrotaskArgs)
    llvm::report_fatal_error("modelc: a parallel loop passes more values than the runtime takes");
  void *args[kMaxMicrotaskArgs] = {};
  va_list list;
  va_start(list, task);
  for (int32_t i = 0; i < argc; ++i)
    args[i] = va_arg(list, void *);
  va_end(list);
  regionsEntered.fetch_add(1, std::memory_order_relaxed);
#ifdef _OPENMP
#pragma omp parallel
  invoke(task, argc, args);
#else
  invoke(task, argc, args);
#endif
}

int32_t globalThreadNum(void * /*location*/) { return threadNumber(); }

void barrier(void * /*location*/, int32_t /*globalTid*/) {
#ifdef _OPENMP
#pragma omp barrier
#endif
}

void staticFini(void * /*location*/, int32_t /*globalTid*/) {}

template <typename T>
void staticInit(void * /*location*/, int32_t /*globalTid*/, int32_t schedule, int32_t *isLast,
                T *lower, T *upper, T *stride, T increment, T chunk) {
  int64_t lo = static_cast<int64_t>(*lower), up = static_cast<int64_t>(*upper), st = 0;
  staticSchedule(schedule, threadNumber(), teamSize(), isLast, &lo, &up, &st,
                 static_cast<int64_t>(increment), static_cast<int64_t>(chunk));
  *lower = static_cast<T>(lo);
  *upper = static_cast<T>(up);
  *stride = static_cast<T>(st);
}

} // namespace

void staticSchedule(int32_t schedule, int32_t thread, int32_t threads, int32_t *isLast,
                    int64_t *lower, int64_t *upper, int64_t *stride, int64_t increment,
                    int64_t chunk) {
  if (increment == 0)
    llvm::report_fatal_error("modelc: a parallel loop with step 0");
  int64_t first = *lower, last = *upper;
  int64_t trips = increment > 0 ? (last < first ? 0 : (last - first) / increment + 1)
                                : (last > first ? 0 : (first - last) / -increment + 1);
  int32_t lastFlag = 0;
  if (schedule == kScheduleStaticChunked && chunk > 0) {
    // Blocks of `chunk` iterations dealt round-robin; this thread's first.
    *lower = first + thread * chunk * increment;
    *upper = *lower + (chunk - 1) * increment;
    if (increment > 0 ? *upper > last : *upper < last)
      *upper = last;
    *stride = chunk * threads * increment;
    int64_t blocks = (trips + chunk - 1) / chunk;
    lastFlag = trips > 0 && thread == (blocks - 1) % threads;
  } else if (schedule == kScheduleStatic || schedule == kScheduleStaticChunked) {
    // One contiguous block per thread, the first trips % threads one longer.
    int64_t each = trips / threads, extra = trips % threads;
    int64_t begin = thread * each + std::min<int64_t>(thread, extra);
    int64_t count = each + (thread < extra ? 1 : 0);
    *lower = first + begin * increment;
    *upper = count > 0 ? *lower + (count - 1) * increment : *lower - increment;
    *stride = trips;
    lastFlag = count > 0 && begin + count == trips;
  } else {
    llvm::report_fatal_error("modelc: a parallel loop asks for a schedule the runtime lacks");
  }
  if (isLast)
    *isLast = lastFlag;
}

uint64_t parallelRegionsEntered() { return regionsEntered.load(std::memory_order_relaxed); }

llvm::ArrayRef<OpenMpSymbol> openMpRuntimeSymbols() {
  static const OpenMpSymbol symbols[] = {
      {"__kmpc_fork_call", reinterpret_cast<const void *>(&forkCall)},
      {"__kmpc_global_thread_num", reinterpret_cast<const void *>(&globalThreadNum)},
      {"__kmpc_barrier", reinterpret_cast<const void *>(&barrier)},
      {"__kmpc_for_static_fini", reinterpret_cast<const void *>(&staticFini)},
      {"__kmpc_for_static_init_4", reinterpret_cast<const void *>(&staticInit<int32_t>)},
      {"__kmpc_for_static_init_4u", reinterpret_cast<const void *>(&staticInit<uint32_t>)},
      {"__kmpc_for_static_init_8", reinterpret_cast<const void *>(&staticInit<int64_t>)},
      {"__kmpc_for_static_init_8u", reinterpret_cast<const void *>(&staticInit<uint64_t>)},
  };
  return symbols;
}

} // namespace modelc::jit
