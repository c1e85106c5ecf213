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
#include <cstdint>
#include <iterator>

namespace modelc::jit {

/// Drops the kept copies of constant weights whose buffers start in
/// [data, data + bytes). Safe while other threads run: a call that holds a
/// copy keeps it alive. Returns how many copies it dropped.
size_t forgetConstantWeights(const void *data, size_t bytes);

/// For the keepers of copies: erases the entries of `copies` (a map from a
/// weight buffer's address to its copies, a container) whose buffer starts
/// in [data, data + bytes); returns how many copies they held.
template <typename CopiesByBuffer>
size_t eraseCopiesIn(CopiesByBuffer &copies, const void *data, size_t bytes) {
  auto begin = reinterpret_cast<uintptr_t>(data);
  size_t dropped = 0;
  for (auto it = copies.begin(); it != copies.end();) {
    uintptr_t start = reinterpret_cast<uintptr_t>(it->first);
    bool inside = start >= begin && start - begin < bytes;
    dropped += inside ? it->second.size() : 0;
    it = inside ? copies.erase(it) : std::next(it);
  }
  return dropped;
}

} // namespace modelc::jit

#endif // MODELC_JIT_CONSTANTWEIGHTS_H
