//===- KernelTable.h - register-tile kernels indexed by their tile's shape -===//
//
// Internal to compiler/jit: modelc's own kernels (TileGemm.cpp, RowConv.cpp)
// are function templates over their register tile's rows and 16-float
// vectors; a KernelTable holds one instance per shape, AVX-512 or portable,
// so that a call picks its tile's shape at run time.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_KERNELTABLE_H
#define MODELC_JIT_KERNELTABLE_H

#include <utility>

namespace modelc::jit {

/// fns[rows - 1][vectors - 1].
template <typename Fn, int Rows, int Vectors> struct KernelTable { Fn fns[Rows][Vectors]; };

namespace detail {

template <typename Kernels, int Vectors, int R, int... V>
void fillKernelRow(typename Kernels::Fn (&row)[Vectors], bool avx512,
                   std::integer_sequence<int, V...>) {
  ((row[V] =
        avx512 ? Kernels::template avx512<R, V + 1>() : Kernels::template portable<R, V + 1>()),
   ...);
}

template <typename Kernels, int Rows, int Vectors, int... R>
KernelTable<typename Kernels::Fn, Rows, Vectors> makeKernelTable(bool avx512,
                                                                 std::integer_sequence<int, R...>) {
  KernelTable<typename Kernels::Fn, Rows, Vectors> table;
  (fillKernelRow<Kernels, Vectors, R + 1>(table.fns[R], avx512,
                                          std::make_integer_sequence<int, Vectors>()),
   ...);
  return table;
}

} // namespace detail

/// The table of `Kernels`' instances: `Kernels::Fn` is their type,
/// `Kernels::avx512<R, V>()` and `Kernels::portable<R, V>()` return them
/// (avx512 may return the portable one where the target has no AVX-512).
template <typename Kernels, int Rows, int Vectors>
KernelTable<typename Kernels::Fn, Rows, Vectors> makeKernelTable(bool avx512) {
  return detail::makeKernelTable<Kernels, Rows, Vectors>(avx512,
                                                         std::make_integer_sequence<int, Rows>());
}

} // namespace modelc::jit

#endif // MODELC_JIT_KERNELTABLE_H
