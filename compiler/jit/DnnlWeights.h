//===- DnnlWeights.h - constant weights in a oneDNN primitive's layout ----===//
//
// Internal to compiler/jit, where MODELC_HAVE_DNNL is set: the conv and
// matmul entries' side of ConstantWeights.h.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_DNNLWEIGHTS_H
#define MODELC_JIT_DNNLWEIGHTS_H

#include "jit/ConstantWeights.h"
#include "jit/DnnlSupport.h"

namespace modelc::jit {

/// The weights at `data` (described by `user`) in the layout `inner`:
/// reordered by `toInner` the first time this layout of them is asked for,
/// then kept (one copy per layout, whichever primitive asks) until
/// forgetConstantWeights covers `data`.
dnnl::memory constantWeightsCopy(const void *data, const dnnl::memory::desc &inner,
                                 const dnnl::reorder &toInner, dnnl::memory user);

} // namespace modelc::jit

#endif // MODELC_JIT_DNNLWEIGHTS_H
