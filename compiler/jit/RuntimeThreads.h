//===- RuntimeThreads.h - small library calls run on the calling thread ---===//
//
// oneDNN runs on OpenMP with omp_get_max_threads() threads. For small
// products (batch 1) the fork/join costs more than the work, and on a
// loaded machine a descheduled worker stalls the call for a whole time
// slice (milliseconds); PyTorch runs such ops serially too (its grain
// size). Internal to compiler/jit.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_RUNTIMETHREADS_H
#define MODELC_JIT_RUNTIMETHREADS_H

#include <omp.h>

namespace modelc::jit {

/// From this many multiply-adds (~100-200 µs on one AVX-512 core) on, a
/// library call runs on all threads; under 1M on the calling thread (a
/// stall on a descheduled worker costs more than a second thread could
/// save, docs/performance.md); in between, products (GemmChoice.cpp) and
/// convs (ConvRuntime.cpp) measure which is faster.
inline constexpr double kParallelMinMacs = 16.0 * 1024 * 1024;

/// Products of at least this many multiply-adds (and under kParallelMinMacs)
/// have their thread count measured; smaller ones run serially unless B is
/// large.
inline constexpr double kMeasuredThreadsMinMacs = 1.0 * 1024 * 1024;

/// A product with fewer multiply-adds but at least this many bytes of B
/// has its thread count measured too: at batch 1 a Linear layer is a pass
/// over its weight, which two cores stream from their own L2 caches in
/// half the time (MLP fc1, 803 KB: ~8.5 us on one Zen 4 core, ~5 on two).
inline constexpr double kMeasuredThreadsMinBBytes = 256.0 * 1024;

/// A measured serial-or-parallel decision is taken on the first call of a
/// shape and taken again on its this-many-th call: start-up work in the
/// process or beside it (a host loading, a peer process importing) can skew
/// the first measurement toward serial.
inline constexpr int kThreadDecisionRemeasureCall = 64;

/// One shape's measured decision and how often it was asked.
struct ThreadDecision {
  bool serial = true;
  int calls = 0;

  /// Counts a call; true when this call should measure.
  bool measureNow() {
    ++calls;
    return calls == 1 || calls == kThreadDecisionRemeasureCall;
  }
};

/// Limits OpenMP to the calling thread for its lifetime when `serial`.
class SerialScope {
public:
  explicit SerialScope(bool serial) : saved(serial ? omp_get_max_threads() : 0) {
    if (saved > 1)
      omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved > 1)
      omp_set_num_threads(saved);
  }
  SerialScope(const SerialScope &) = delete;
  SerialScope &operator=(const SerialScope &) = delete;

private:
  int saved;
};

} // namespace modelc::jit

#endif // MODELC_JIT_RUNTIMETHREADS_H
