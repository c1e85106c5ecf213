//===- TileGemm.h - modelc's own f32 product for few rows ------------------===//
//
// Internal to compiler/jit: the kernel GemmKernel::Tiles names. Register
// tiles of up to 6 rows x 64 columns of c, accumulated over rows of B read
// as contiguous 64-column panels: at batch 1 a Linear layer is one
// sequential stream over its weight, which the library kernels' packing
// and blocking (built for large products) do not give. A constant B
// (kEpilogueConstantB, a model's weight) is packed into panels once, kept
// until forgetConstantWeights covers it (ConstantWeights.h); a B read as
// stored is used in place; a transposed B that changes per call is packed
// per call. AVX-512 where the CPU has it, else plain loops.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_TILEGEMM_H
#define MODELC_JIT_TILEGEMM_H

#include "jit/GemmKernels.h"

#include <cstddef>

namespace modelc::jit {

/// Runs `problem` (false for k == 0, which the caller's fallback takes).
bool tileGemm(const GemmProblem &problem);

/// Whether the tiles run on AVX-512: the CPU has it and a test did not ask
/// for the portable loops.
bool tileKernelsUseAvx512();
/// Tests: the portable loops even where the CPU has AVX-512 (false: back).
void setTileKernelsPortableForTesting(bool portable);

/// Drops the packed copies of constant B whose buffers start in [data,
/// data + bytes); how many it dropped.
size_t forgetTilePackedWeights(const void *data, size_t bytes);

} // namespace modelc::jit

#endif // MODELC_JIT_TILEGEMM_H
