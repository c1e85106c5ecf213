//===- Timing.h - the wall time of one run, for the measured choices ------===//
//
// Internal to compiler/jit: the GEMM kernel and thread-count choices
// (GemmChoice.cpp) and the conv kernel choices (ConvRuntime.cpp) time their
// candidates with it.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_TIMING_H
#define MODELC_JIT_TIMING_H

#include <chrono>

namespace modelc::jit {

/// Seconds `run()` took (steady clock).
template <typename Run> double secondsOf(Run &&run) {
  auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace modelc::jit

#endif // MODELC_JIT_TIMING_H
