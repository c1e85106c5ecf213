//===- RuntimeSymbols.h - Functions compiled model code calls ---*- C++ -*-===//
//
// The object code in an artifact leaves a few symbols undefined: the sgemm
// and conv2d entry points of compiler/jit/{Blas,Conv}Runtime (oneDNN or
// OpenBLAS), `memrefCopy` (copies between buffers of different layouts,
// which the JIT takes from MLIR's C runner utils) and libc/libm. The loader
// defines the first three from this table and takes the rest from the
// process. Changing a name or signature
// here changes the artifact ABI: bump kFormatVersion.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_AOT_RUNTIMESYMBOLS_H
#define MODELC_AOT_RUNTIMESYMBOLS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace modelc::aot {

struct RuntimeSymbol {
  llvm::StringRef name;
  const void *address;
};

/// The symbols the loader defines for the object code.
llvm::ArrayRef<RuntimeSymbol> aotRuntimeSymbols();

/// MLIR's UnrankedMemRefType: a rank and a pointer to a ranked descriptor.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// `memrefCopy` as MLIR's C runner utils define it: copies every element of
/// `source` to `target` (same shape, any strides); elements are
/// `elementSize` bytes.
extern "C" void modelc_aot_memref_copy(int64_t elementSize, UnrankedMemRef *source,
                                       UnrankedMemRef *target);

} // namespace modelc::aot

#endif // MODELC_AOT_RUNTIMESYMBOLS_H
