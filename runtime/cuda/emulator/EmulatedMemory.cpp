//===- EmulatedMemory.cpp - Device memory of emulated GPUs ----------------===//

#include "runtime/cuda/emulator/EmulatedMemory.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/Support/FormatVariadic.h"

#include <sys/mman.h>
#include <unistd.h>

namespace modelc::cuda {

namespace {

std::string describe(const EmulatedAllocation &allocation) {
  return llvm::formatv("a {0}-byte allocation on cuda:{1}", allocation.size, allocation.device)
      .str();
}

} // namespace

size_t EmulatedAllocation::pageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

EmulatedMemory::~EmulatedMemory() {
  for (auto &[base, allocation] : allocations)
    munmap(reinterpret_cast<void *>(base), allocation.mapSize);
}

llvm::Expected<void *> EmulatedMemory::allocate(int device, size_t bytes) {
  const size_t page = EmulatedAllocation::pageSize();
  if (bytes > (size_t(1) << 40))
    return makeCudaError(
        CudaErrorKind::OutOfMemory,
        llvm::formatv("cuda:{0}: cannot allocate {1} bytes on the emulator", device, bytes));
  size_t dataPages = (bytes + page - 1) / page;
  if (dataPages == 0)
    dataPages = 1;
  size_t mapSize = (dataPages + 2) * page;
  void *map = mmap(nullptr, mapSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (map == MAP_FAILED)
    return makeCudaError(
        CudaErrorKind::OutOfMemory,
        llvm::formatv("cuda:{0}: out of memory allocating {1} bytes", device, bytes));
  EmulatedAllocation allocation;
  allocation.mapBase = reinterpret_cast<uintptr_t>(map);
  allocation.mapSize = mapSize;
  allocation.size = bytes;
  allocation.device = device;
  allocation.begin = allocation.dataPagesEnd() - bytes;
  if (mprotect(reinterpret_cast<void *>(allocation.dataPagesBegin()), dataPages * page,
               PROT_READ | PROT_WRITE) != 0) {
    munmap(map, mapSize);
    return makeCudaError(CudaErrorKind::OutOfMemory,
                         llvm::formatv("cuda:{0}: cannot map {1} bytes", device, bytes));
  }
  allocations.emplace(allocation.mapBase, allocation);
  return reinterpret_cast<void *>(allocation.begin);
}

llvm::Error EmulatedMemory::release(int device, void *pointer) {
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  std::optional<EmulatedAllocation> allocation = findMapping(address);
  if (!allocation || allocation->begin != address)
    return makeCudaError(CudaErrorKind::InvalidFree,
                         llvm::formatv("cuda:{0}: cannot free {1}: it is not the start of an "
                                       "allocation (freed twice, or never allocated?)",
                                       device, pointer));
  if (allocation->device != device)
    return makeCudaError(CudaErrorKind::CrossDeviceAccess,
                         llvm::formatv("cuda:{0}: cannot free {1}: it belongs to cuda:{2}", device,
                                       pointer, allocation->device));
  munmap(reinterpret_cast<void *>(allocation->mapBase), allocation->mapSize);
  allocations.erase(allocation->mapBase);
  return llvm::Error::success();
}

std::optional<EmulatedAllocation> EmulatedMemory::findMapping(uintptr_t address) const {
  auto after = allocations.upper_bound(address);
  if (after == allocations.begin())
    return std::nullopt;
  const EmulatedAllocation &candidate = std::prev(after)->second;
  if (address >= candidate.mapBase + candidate.mapSize)
    return std::nullopt;
  return candidate;
}

std::optional<EmulatedAllocation> EmulatedMemory::findData(uintptr_t address) const {
  std::optional<EmulatedAllocation> allocation = findMapping(address);
  // One past the end lies in the trailing guard page: still this allocation.
  if (allocation && address >= allocation->begin && address <= allocation->end())
    return allocation;
  return std::nullopt;
}

llvm::Error EmulatedMemory::checkRange(int device, const void *pointer, size_t bytes,
                                       llvm::StringRef role) const {
  uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  std::optional<EmulatedAllocation> allocation = findData(address);
  if (!allocation)
    return makeCudaError(CudaErrorKind::InvalidCopy,
                         llvm::formatv("the {0} {1} is not memory of cuda:{2} (nor of any "
                                       "emulated GPU)",
                                       role, pointer, device));
  if (allocation->device != device)
    return makeCudaError(CudaErrorKind::CrossDeviceAccess,
                         llvm::formatv("the {0} {1} lies in {2}, not on cuda:{3}: copy between "
                                       "GPUs with a peer copy",
                                       role, pointer, describe(*allocation), device));
  if (bytes > allocation->end() - address)
    return makeCudaError(CudaErrorKind::InvalidCopy,
                         llvm::formatv("{0} bytes at the {1} {2} run {3} bytes past the end of {4}",
                                       bytes, role, pointer, bytes - (allocation->end() - address),
                                       describe(*allocation)));
  return llvm::Error::success();
}

std::vector<uintptr_t> EmulatedMemory::mappingRanges() const {
  std::vector<uintptr_t> ranges;
  ranges.reserve(2 * allocations.size());
  for (const auto &[base, allocation] : allocations) {
    ranges.push_back(base);
    ranges.push_back(base + allocation.mapSize);
  }
  return ranges;
}

void EmulatedMemory::restrictAccessTo(std::optional<int> device) {
  for (auto &[base, allocation] : allocations) {
    if (device && allocation.device == *device)
      continue;
    int protection = device ? PROT_NONE : PROT_READ | PROT_WRITE;
    mprotect(reinterpret_cast<void *>(allocation.dataPagesBegin()),
             allocation.dataPagesEnd() - allocation.dataPagesBegin(), protection);
  }
}

} // namespace modelc::cuda
