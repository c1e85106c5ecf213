//===- ConstantWeights.cpp - Weights kept in a library's layout -----------===//

#include "jit/ConstantWeights.h"
#include "jit/TileGemm.h"

#if MODELC_HAVE_DNNL
#include "jit/DnnlWeights.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace modelc::jit {
namespace {

/// One copy: the weights read as `user` (a buffer may be read two ways: a
/// square weight as W and as W.T) in the layout of `copy`.
struct KeptCopy {
  dnnl::memory::desc user;
  dnnl::memory copy;
};

/// Per weight buffer, its copies in each layout asked for (primitives for
/// other batch sizes usually ask for the same one, and share it).
struct KeptCopies {
  std::mutex mutex;
  std::map<const void *, std::vector<KeptCopy>> copies;
};

KeptCopies &keptCopies() {
  static KeptCopies *kept = new KeptCopies(); // outlives every caller
  return *kept;
}

} // namespace

dnnl::memory constantWeightsCopy(const void *data, const dnnl::memory::desc &inner,
                                 const dnnl::reorder &toInner, dnnl::memory user) {
  KeptCopies &kept = keptCopies();
  std::lock_guard<std::mutex> lock(kept.mutex);
  std::vector<KeptCopy> &layouts = kept.copies[data];
  dnnl::memory::desc userDesc = user.get_desc();
  for (const KeptCopy &entry : layouts)
    if (entry.user == userDesc && entry.copy.get_desc() == inner)
      return entry.copy;
  dnnl::memory copy(inner, cpuEngine());
  dnnl::stream &stream = threadStream();
  toInner.execute(stream, user, copy);
  stream.wait();
  layouts.push_back({userDesc, copy});
  return copy;
}

static size_t forgetDnnlWeights(const void *data, size_t bytes) {
  KeptCopies &kept = keptCopies();
  std::lock_guard<std::mutex> lock(kept.mutex);
  return eraseCopiesIn(kept.copies, data, bytes);
}

} // namespace modelc::jit

#else

namespace modelc::jit {
static size_t forgetDnnlWeights(const void *, size_t) { return 0; } // no copies
} // namespace modelc::jit

#endif

size_t modelc::jit::forgetConstantWeights(const void *data, size_t bytes) {
  return forgetDnnlWeights(data, bytes) + forgetTilePackedWeights(data, bytes);
}
