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

/// The weights at `data` (described by `user`) in the layout `inner` of the
/// primitive `primitive` (any pointer that identifies it): reordered by
/// `toInner` on the first call for this pair and kept until
/// forgetConstantWeights covers `data`.
dnnl::memory constantWeightsCopy(const void *data, const void *primitive,
                                 const dnnl::memory::desc &inner, const dnnl::reorder &toInner,
                                 dnnl::memory user);

} // namespace modelc::jit

#endif // MODELC_JIT_DNNLWEIGHTS_H
