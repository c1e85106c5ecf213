//===- ConstantWeights.cpp - Weights kept in a library's layout -----------===//

#include "jit/ConstantWeights.h"

#if MODELC_HAVE_DNNL
#include "jit/DnnlWeights.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace modelc::jit {
namespace {

struct KeptCopies {
  std::mutex mutex;
  std::map<std::pair<const void *, const void *>, dnnl::memory> copies;
};

KeptCopies &keptCopies() {
  static KeptCopies *kept = new KeptCopies(); // outlives every caller
  return *kept;
}

} // namespace

dnnl::memory constantWeightsCopy(const void *data, const void *primitive,
                                 const dnnl::memory::desc &inner, const dnnl::reorder &toInner,
                                 dnnl::memory user) {
  KeptCopies &kept = keptCopies();
  std::lock_guard<std::mutex> lock(kept.mutex);
  auto [it, inserted] = kept.copies.try_emplace({data, primitive});
  if (inserted) {
    try {
      it->second = dnnl::memory(inner, cpuEngine());
      dnnl::stream &stream = threadStream();
      toInner.execute(stream, user, it->second);
      stream.wait();
    } catch (...) {
      kept.copies.erase(it);
      throw;
    }
  }
  return it->second;
}

size_t forgetConstantWeights(const void *data, size_t bytes) {
  KeptCopies &kept = keptCopies();
  std::lock_guard<std::mutex> lock(kept.mutex);
  auto begin = reinterpret_cast<uintptr_t>(data);
  size_t dropped = 0;
  for (auto it = kept.copies.begin(); it != kept.copies.end();) {
    uintptr_t start = reinterpret_cast<uintptr_t>(it->first.first);
    bool inside = start >= begin && start - begin < bytes;
    dropped += inside;
    it = inside ? kept.copies.erase(it) : std::next(it);
  }
  return dropped;
}

} // namespace modelc::jit

#else

size_t modelc::jit::forgetConstantWeights(const void *, size_t) {
  return 0; // without oneDNN the weights are read in place
}

#endif
