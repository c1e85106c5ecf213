//===- Npy.h - Read and write NumPy .npy files -----------------*- C++ -*-===//
//
// The .npy format: the magic "\x93NUMPY", a version (1.0, 2.0 or 3.0), a
// little-endian header length, a Python-literal header dict
// {'descr': '<f4', 'fortran_order': False, 'shape': (4, 784), }
// and then the raw elements. Supported dtypes: <f2 <f4 <f8 <i4 <i8 |b1
// (f16 f32 f64 i32 i64 bool), C order only. Every malformed input is an
// llvm::Error naming the file and the problem; nothing is trusted from the
// header before it is checked against the file's size.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_NPY_H
#define MODELC_RUNTIME_NPY_H

#include "runtime/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace modelc::runtime {

/// Reads a .npy file into a new owning, contiguous cpu tensor.
llvm::Expected<Tensor> readNpy(llvm::StringRef path);
/// Parses the bytes of a .npy file; `sourceName` prefixes error messages.
/// With `keepAlive` (the owner of `bytes`), the tensor borrows the bytes
/// read-only where they are aligned for its dtype instead of copying them.
llvm::Expected<Tensor> parseNpy(llvm::StringRef bytes, llvm::StringRef sourceName,
                                std::shared_ptr<const void> keepAlive = nullptr);
/// Reads the .npy at `path` memory-mapped: the tensor borrows the mapping
/// (read-only, kept alive by the tensor), copied only if misaligned.
llvm::Expected<Tensor> mapNpy(llvm::StringRef path);

/// The .npy bytes of a cpu tensor (any strides; written in C order) with a
/// version 1.0 header (2.0 if the header outgrows 64 KiB), the data 64-byte
/// aligned as NumPy does. bf16 has no NumPy dtype and is an error.
llvm::Expected<std::string> serializeNpy(const Tensor &tensor);
/// Writes serializeNpy(tensor) to `path`.
llvm::Error writeNpy(llvm::StringRef path, const Tensor &tensor);

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_NPY_H
