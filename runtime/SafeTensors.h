//===- SafeTensors.h - Read and write .safetensors files -------*- C++ -*-===//
//
// The safetensors format: an 8-byte little-endian header length N, N bytes
// of JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
// "__metadata__": {...}}, then the data section; each tensor's bytes are
// [b, e) of the data section, little-endian, row-major.
//
// Reading maps the file (llvm::MemoryBuffer) and every tensor borrows its
// bytes from the mapping, zero-copy and read-only; the tensors keep the
// mapping alive, so they may outlive the SafeTensorsFile. A tensor whose
// bytes are not aligned to its element size is copied instead, so element
// reads are never misaligned.
//
// The header is checked in full before any tensor is made: every problem
// found (bad JSON, unknown dtype, offsets outside the data, end before begin,
// a size that is not numel * itemsize, overlapping tensors) becomes one
// error naming the file and the tensor, and all of them are returned
// together (llvm::joinErrors).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_SAFETENSORS_H
#define MODELC_RUNTIME_SAFETENSORS_H

#include "runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
}

namespace modelc::runtime {

/// The safetensors spelling of a dtype: "F16", "BF16", "F32", "F64", "I32",
/// "I64", "BOOL".
llvm::StringRef safeTensorsDTypeName(DType dtype);
std::optional<DType> dtypeFromSafeTensorsName(llvm::StringRef name);

/// One tensor of a file: its name, a cpu tensor over its bytes, and where
/// those bytes are in the data section.
struct SafeTensorsEntry {
  std::string name;
  Tensor tensor;
  uint64_t dataBegin = 0;
  uint64_t dataEnd = 0;
};

class SafeTensorsFile {
public:
  /// Maps and checks the file at `path`.
  static llvm::Expected<SafeTensorsFile> open(llvm::StringRef path);
  /// Checks the file held in `buffer`; its identifier names it in errors.
  static llvm::Expected<SafeTensorsFile> fromBuffer(std::unique_ptr<llvm::MemoryBuffer> buffer);

  /// The path (or buffer identifier) the file was read from.
  llvm::StringRef name() const;
  /// Every tensor, in the order of its bytes in the data section.
  llvm::ArrayRef<SafeTensorsEntry> entries() const { return Entries; }
  /// The entry called `name`, or nullptr.
  const SafeTensorsEntry *find(llvm::StringRef name) const;
  /// True when the bytes are memory-mapped (LLVM reads small files instead).
  bool isMemoryMapped() const;
  /// The header's `__metadata__` (string keys to string values, as the
  /// format specifies); empty when the file has none.
  const std::map<std::string, std::string> &metadata() const { return Metadata; }

private:
  SafeTensorsFile() = default;

  std::shared_ptr<const llvm::MemoryBuffer> Buffer;
  std::vector<SafeTensorsEntry> Entries;
  llvm::StringMap<size_t> IndexByName;
  std::map<std::string, std::string> Metadata;
};

/// A tensor with the name it is saved under.
struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// The bytes of a safetensors file holding `tensors` (cpu tensors, any
/// strides), packed in the given order, the header padded with spaces to a
/// multiple of 8 bytes, with `metadata` as the header's `__metadata__` when
/// it is not empty. Duplicate or reserved names are errors.
llvm::Expected<std::string>
serializeSafeTensors(llvm::ArrayRef<NamedTensor> tensors,
                     const std::map<std::string, std::string> &metadata = {});
/// Writes serializeSafeTensors(tensors, metadata) to `path`.
llvm::Error writeSafeTensors(llvm::StringRef path, llvm::ArrayRef<NamedTensor> tensors,
                             const std::map<std::string, std::string> &metadata = {});

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_SAFETENSORS_H
