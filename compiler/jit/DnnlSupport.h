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
#include <unordered_map>

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

/// This thread's scratchpad buffer, at least `bytes` long.
inline void *threadScratchpadData(size_t bytes) {
  thread_local ThreadBuffer buffer;
  return buffer.get(bytes);
}

/// The desc of a user scratchpad of `bytes`.
inline dnnl::memory::desc scratchpadDesc(size_t bytes) {
  using dnnl::memory;
  return memory::desc({static_cast<memory::dim>(bytes)}, memory::data_type::u8,
                      memory::format_tag::a);
}

/// One thread's oneDNN memory objects and argument maps for one cached
/// primitive, created on the thread's first call and pointed at each call's
/// buffers after that: a memory object and a map built per call cost
/// several heap allocations each (a ResNet block at batch 1 made ~190 per
/// forward, ~7 us of its ~165).
class BoundArgs {
public:
  /// The memory object of `role` (the caller's numbering), over `data`.
  /// A role keeps its desc: the owner's descs are fixed when it is created.
  dnnl::memory &memory(int role, const dnnl::memory::desc &desc, void *data) {
    auto [it, inserted] = memories_.try_emplace(role);
    if (inserted)
      it->second = dnnl::memory(desc, cpuEngine(), data);
    else
      it->second.set_data_handle(data);
    return it->second;
  }
  dnnl::memory &memory(int role, const dnnl::memory::desc &desc, const float *data) {
    return memory(role, desc, static_cast<void *>(const_cast<float *>(data))); // only read
  }
  /// This thread's scratchpad buffer as a user scratchpad of `bytes`.
  dnnl::memory &scratchpad(int role, size_t bytes) {
    return memory(role, scratchpadDesc(bytes), threadScratchpadData(bytes));
  }
  /// The argument map of the owner's `primitive`-th primitive (a conv and
  /// the pooling after it): the same keys at every call.
  std::unordered_map<int, dnnl::memory> &args(int primitive) { return args_[primitive]; }

private:
  std::unordered_map<int, dnnl::memory> memories_;
  std::unordered_map<int, dnnl::memory> args_[2];
};

/// This thread's BoundArgs for `owner`, a cached primitive that is never
/// freed (the runtime's primitive caches never erase entries).
inline BoundArgs &threadBoundArgs(const void *owner) {
  thread_local std::unordered_map<const void *, BoundArgs> bound;
  return bound[owner];
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
