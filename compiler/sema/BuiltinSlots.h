//===- BuiltinSlots.h - Named slots of the built-ins' parameters -*- C++ -*-===//
//
// The checker binds a built-in call's arguments to the built-in's parameters,
// one slot per parameter in the order Builtins.def lists them
// (ExprInfo::builtinArgs). The checker's typing rules and mlirgen read a
// bound argument by name through these constants, generated from that same
// list: `slot::conv2d::stride` is the slot of conv2d's `stride`. Reordering a
// parameter moves every reader with it; renaming or removing one breaks the
// build where it is read instead of shifting the reader to another argument.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_BUILTINSLOTS_H
#define MODELC_SEMA_BUILTINSLOTS_H

#include <cstddef>

namespace modelc::sema::slot {

#define REQ(param) param,
#define OPT(param) param,
#define BUILTIN(name, id, params)                                                                  \
  namespace name {                                                                                 \
  enum : size_t { params };                                                                        \
  }
#include "sema/Builtins.def"
#undef BUILTIN
#undef OPT
#undef REQ

/// Whether built-ins that share a rule (or a branch of mlirgen) keep a
/// parameter in one slot: `static_assert(same(slot::sum::dim, slot::softmax::dim))`.
template <typename... Slots> consteval bool same(size_t first, Slots... rest) {
  return ((size_t(rest) == first) && ...);
}

} // namespace modelc::sema::slot

#endif // MODELC_SEMA_BUILTINSLOTS_H
