//===- MemRef.h - an owning buffer that JIT-compiled code can read/write --===//
//
// OwnedMemRef<T, N> holds a contiguous row-major buffer and the
// StridedMemRefType<T, N> descriptor that JIT-compiled functions take.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_MEMREF_H
#define MODELC_JIT_MEMREF_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <array>
#include <cstdint>
#include <vector>

namespace modelc::jit {

template <typename T, int N> class OwnedMemRef {
public:
  explicit OwnedMemRef(std::array<int64_t, N> shape, T fill = T()) {
    int64_t count = 1;
    for (int64_t extent : shape)
      count *= extent;
    storage.assign(static_cast<size_t>(count), fill);
    descriptor.basePtr = descriptor.data = storage.data();
    descriptor.offset = 0;
    int64_t stride = 1;
    for (int d = N - 1; d >= 0; --d) {
      descriptor.sizes[d] = shape[d];
      descriptor.strides[d] = stride;
      stride *= shape[d];
    }
  }
  OwnedMemRef(const OwnedMemRef &) = delete;
  OwnedMemRef &operator=(const OwnedMemRef &) = delete;

  /// The descriptor to pass (by address) to a compiled function.
  StridedMemRefType<T, N> *get() { return &descriptor; }
  std::vector<T> &values() { return storage; }
  const std::vector<T> &values() const { return storage; }
  T &operator[](size_t i) { return storage[i]; }
  const T &operator[](size_t i) const { return storage[i]; }

private:
  std::vector<T> storage;
  StridedMemRefType<T, N> descriptor;
};

/// Rank 0 has no sizes or strides.
template <typename T> class OwnedMemRef<T, 0> {
public:
  explicit OwnedMemRef(std::array<int64_t, 0> = {}, T fill = T()) : value(fill) {
    descriptor.basePtr = descriptor.data = &value;
    descriptor.offset = 0;
  }
  OwnedMemRef(const OwnedMemRef &) = delete;
  OwnedMemRef &operator=(const OwnedMemRef &) = delete;
  StridedMemRefType<T, 0> *get() { return &descriptor; }
  T &operator[](size_t) { return value; }

private:
  T value;
  StridedMemRefType<T, 0> descriptor;
};

} // namespace modelc::jit

#endif // MODELC_JIT_MEMREF_H
