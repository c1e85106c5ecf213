//===- RuntimeSymbols.cpp - Functions compiled model code calls -----------===//

#include "aot/RuntimeSymbols.h"

#include "jit/BlasRuntime.h"
#include "jit/ConvRuntime.h"

#include "llvm/ADT/SmallVector.h"

#include <cstring>

using namespace modelc::aot;

namespace {

/// A ranked descriptor seen through its words: base and aligned pointers,
/// offset, sizes, strides.
struct StridedView {
  char *data;
  const int64_t *sizes;
  const int64_t *strides;

  StridedView(const UnrankedMemRef &memref, int64_t elementSize) {
    auto *words = static_cast<int64_t *>(memref.descriptor);
    data = reinterpret_cast<char *>(words[1]) + words[2] * elementSize;
    sizes = words + 3;
    strides = words + 3 + memref.rank;
  }
};

} // namespace

extern "C" void modelc::aot::modelc_aot_memref_copy(int64_t elementSize, UnrankedMemRef *source,
                                                    UnrankedMemRef *target) {
  int64_t rank = source->rank;
  StridedView from(*source, elementSize), to(*target, elementSize);
  for (int64_t d = 0; d < rank; ++d)
    if (from.sizes[d] == 0)
      return;
  // Walk every index in row-major order, like an odometer.
  llvm::SmallVector<int64_t, 6> index(rank, 0);
  int64_t fromOffset = 0, toOffset = 0;
  while (true) {
    std::memcpy(to.data + toOffset * elementSize, from.data + fromOffset * elementSize,
                elementSize);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      fromOffset += from.strides[d];
      toOffset += to.strides[d];
      if (++index[d] < from.sizes[d])
        break;
      fromOffset -= from.strides[d] * index[d];
      toOffset -= to.strides[d] * index[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

llvm::ArrayRef<RuntimeSymbol> modelc::aot::aotRuntimeSymbols() {
  // `_mlir_ciface_` + lower::kSgemmFunction / kBatchSgemmFunction / kMatmulEpilogueFunction /
  // kConv2dFunction / kConv2dEpilogueFunction / kConv2dPoolFunction: the C interfaces the matmul
  // and conv passes call.
  static const RuntimeSymbol symbols[] = {
      {"_mlir_ciface_modelc_sgemm", reinterpret_cast<const void *>(&modelc_sgemm_ciface)},
      {"_mlir_ciface_modelc_batch_sgemm",
       reinterpret_cast<const void *>(&modelc_batch_sgemm_ciface)},
      {"_mlir_ciface_modelc_matmul_epilogue",
       reinterpret_cast<const void *>(&modelc_matmul_epilogue_ciface)},
      {"_mlir_ciface_modelc_conv2d", reinterpret_cast<const void *>(&modelc_conv2d_ciface)},
      {"_mlir_ciface_modelc_conv2d_epilogue",
       reinterpret_cast<const void *>(&modelc_conv2d_epilogue_ciface)},
      {"_mlir_ciface_modelc_conv2d_pool",
       reinterpret_cast<const void *>(&modelc_conv2d_pool_ciface)},
      {"_mlir_ciface_modelc_to_blocked16",
       reinterpret_cast<const void *>(&modelc_to_blocked16_ciface)},
      {"memrefCopy", reinterpret_cast<const void *>(&modelc_aot_memref_copy)},
  };
  return symbols;
}
