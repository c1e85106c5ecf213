//===- DnnlSupport.h - what the oneDNN runtime entries share --------------===//
//
// One CPU engine, a stream and aligned scratch buffers per thread: calls on
// one thread run one after another, so they can share them, and calls on
// different threads share no mutable state. Internal to compiler/jit; only
// included where MODELC_HAVE_DNNL is set.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_DNNLSUPPORT_H
#define MODELC_JIT_DNNLSUPPORT_H

#include "jit/GemmKernels.h"

#include <cstdlib>
#include <dnnl.hpp>

namespace modelc::jit {

inline dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

inline dnnl::stream &threadStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

/// A 64-byte aligned buffer grown on demand; one per thread and role.
class ThreadBuffer {
public:
  ThreadBuffer() = default;
  ThreadBuffer(const ThreadBuffer &) = delete;
  ThreadBuffer &operator=(const ThreadBuffer &) = delete;
  ~ThreadBuffer() { std::free(data); }
  void *get(size_t bytes) {
    if (bytes > capacity) {
      std::free(data);
      capacity = (bytes + 63) / 64 * 64;
      data = std::aligned_alloc(64, capacity);
    }
    return data;
  }

private:
  void *data = nullptr;
  size_t capacity = 0;
};

/// A user scratchpad of `bytes` in this thread's scratchpad buffer.
inline dnnl::memory threadScratchpad(size_t bytes) {
  thread_local ThreadBuffer buffer;
  using dnnl::memory;
  return memory(
      memory::desc({static_cast<memory::dim>(bytes)}, memory::data_type::u8, memory::format_tag::a),
      cpuEngine(), buffer.get(bytes));
}

/// The eltwise post-op of an activation step.
inline dnnl::algorithm eltwiseAlgorithm(EpilogueStep step) {
  switch (step) {
  case EpilogueStep::Relu:
    return dnnl::algorithm::eltwise_relu;
  case EpilogueStep::Gelu:
    return dnnl::algorithm::eltwise_gelu_erf;
  case EpilogueStep::Tanh:
    return dnnl::algorithm::eltwise_tanh;
  case EpilogueStep::Silu:
    return dnnl::algorithm::eltwise_swish; // x * sigmoid(alpha x), alpha 1
  default:
    return dnnl::algorithm::eltwise_logistic;
  }
}

/// Its alpha: ReLU's negative slope 0 (1 would be the identity), swish's
/// 1 (x * sigmoid(1 * x)); the others ignore it.
inline float eltwiseAlpha(EpilogueStep step) { return step == EpilogueStep::Silu ? 1.0f : 0.0f; }

} // namespace modelc::jit

#endif // MODELC_JIT_DNNLSUPPORT_H
