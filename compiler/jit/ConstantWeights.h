//===- ConstantWeights.h - Weights kept in a library's layout -------------===//
//
// A model's weights are the same on every call of a compiled fn (its state
// arguments, marked `mdl.state` by lower::createHoistStatePrepPass). oneDNN
// reads conv and matmul weights in a blocked layout of its own; reordering
// them on every call cost a third of a ResNet block's forward at batch 1.
// The runtime entries keep that copy instead, made on the first call: one
// per weight address, reading (a square weight may be read as W and as W.T)
// and layout, shared by the primitives of every batch size. Whoever owns
// the weights drops the copies
// (forgetConstantWeights) before the memory is freed or reused.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_CONSTANTWEIGHTS_H
#define MODELC_JIT_CONSTANTWEIGHTS_H

#include <cstddef>

namespace modelc::jit {

/// Drops the kept copies of constant weights whose buffers start in
/// [data, data + bytes). Safe while other threads run: a call that holds a
/// copy keeps it alive. Returns how many copies it dropped.
size_t forgetConstantWeights(const void *data, size_t bytes);

} // namespace modelc::jit

#endif // MODELC_JIT_CONSTANTWEIGHTS_H
