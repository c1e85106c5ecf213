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

/// Below this many multiply-adds (~100-200 µs on one AVX-512 core) a conv
/// runs on one thread: the most a second thread could save is less than
/// one stall on a descheduled worker costs (docs/performance.md). Matrix
/// products from 1M multiply-adds up to it measure which is faster
/// (GemmChoice.cpp).
inline constexpr double kParallelMinMacs = 16.0 * 1024 * 1024;

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
