//===- EmulatedMemory.h - Device memory of emulated GPUs -------*- C++ -*-===//
//
// Every allocation is its own mapping: a PROT_NONE guard page, the data
// pages, another guard page. The data END exactly at the trailing guard, so
// a kernel that runs even one byte past the end faults; the start is aligned
// to the largest power of two dividing the size (at most a page), which is
// natural alignment for any array of power-of-two-sized elements. Under-runs
// are caught once they leave the first data page.
//
// Each allocation carries the id of its emulated device. While a kernel runs
// on device d, the data pages of every other device are made PROT_NONE, so a
// stray pointer into another GPU's memory faults just like an overrun, and
// the fault is reported as a cross-device access.
//
// Not thread-safe: Emulator serializes every call under its lock.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_EMULATOR_EMULATEDMEMORY_H
#define MODELC_RUNTIME_CUDA_EMULATOR_EMULATEDMEMORY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace modelc::cuda {

struct EmulatedAllocation {
  uintptr_t mapBase = 0; ///< Start of the mapping (the leading guard page).
  size_t mapSize = 0;
  uintptr_t begin = 0; ///< First byte handed out.
  size_t size = 0;     ///< Bytes handed out; begin + size is a guard page.
  int device = 0;

  uintptr_t end() const { return begin + size; }
  uintptr_t dataPagesBegin() const { return mapBase + pageSize(); }
  uintptr_t dataPagesEnd() const { return mapBase + mapSize - pageSize(); }
  static size_t pageSize();
};

class EmulatedMemory {
public:
  EmulatedMemory() = default;
  EmulatedMemory(const EmulatedMemory &) = delete;
  EmulatedMemory &operator=(const EmulatedMemory &) = delete;
  ~EmulatedMemory();

  llvm::Expected<void *> allocate(int device, size_t bytes);
  /// Frees the allocation that starts at `pointer` on `device`.
  llvm::Error release(int device, void *pointer);

  /// The allocation whose mapping (guard pages included) holds `address`.
  std::optional<EmulatedAllocation> findMapping(uintptr_t address) const;
  /// The allocation with begin <= address <= end (one past the end allowed).
  std::optional<EmulatedAllocation> findData(uintptr_t address) const;

  /// Checks that [pointer, pointer + bytes) lies in one allocation on
  /// `device`; `role` names the pointer in the message ("destination").
  llvm::Error checkRange(int device, const void *pointer, size_t bytes, llvm::StringRef role) const;

  /// Makes the data of every device but `device` inaccessible (PROT_NONE),
  /// or, with std::nullopt, accessible again.
  void restrictAccessTo(std::optional<int> device);

  size_t allocationCount() const { return allocations.size(); }

  /// [begin, end) of every allocation's mapping, guard pages included, in
  /// address order, flattened: what an emulated kernel may reach.
  std::vector<uintptr_t> mappingRanges() const;

private:
  std::map<uintptr_t, EmulatedAllocation> allocations; ///< By mapBase.
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_EMULATOR_EMULATEDMEMORY_H
