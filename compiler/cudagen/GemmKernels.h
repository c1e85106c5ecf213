//===- GemmKernels.h - Tile shapes and device code of the GEMMs -*- C++ -*-===//
//
// The register-tiled SIMT GEMM that matmul and conv2d (implicit GEMM) run
// on: `mdl_gemm_tile`, a device template in the prelude of every generated
// translation unit, and the choice of its tile shape per size class. A GEMM
// whose M is a symbolic dim (the batch) gets one kernel per size class; the
// plan's grid sizes switch between them at run time (a grid of 0 blocks is
// skipped), so one plan serves batch 1 and 4096 tokens.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAGEN_GEMMKERNELS_H
#define MODELC_CUDAGEN_GEMMKERNELS_H

#include "cudagen/DevicePlan.h"

#include <string>
#include <vector>

namespace modelc::cudagen {

/// One block tile of `mdl_gemm_tile`: the block computes blockM x blockN
/// outputs, staging blockK-deep slices of both operands in shared memory;
/// each thread keeps threadM x threadN accumulators in registers.
struct GemmTile {
  int64_t blockM = 64, blockN = 64, blockK = 16, threadM = 4, threadN = 4;
  /// TF32 tensor cores (`mdl_gemm_tile_tf32`): each warp computes warpM x
  /// warpN outputs with mma.sync m16n8k8 (threadM/threadN unused).
  bool tf32 = false;
  int64_t warpM = 0, warpN = 0;

  int64_t threads() const {
    return tf32 ? 32 * (blockM / warpM) * (blockN / warpN)
                : (blockM / threadM) * (blockN / threadN);
  }
  /// "64x64x16 tile, 4x4 per thread"
  std::string str() const;
};

/// How an fp32 GEMM multiplies: exact fp32 FMAs (the default), or TF32
/// tensor cores where the user asked for them (inputs rounded to a 10-bit
/// mantissa, fp32 accumulation).
enum class GemmPrecision { Exact, TF32 };

/// One kernel of a GEMM: its tile, whether it runs for the bound dims and
/// over how many slices of K (split-K) it runs.
struct GemmVariant {
  /// "large", "medium", "narrow rows", "narrow columns": for comments.
  std::string sizeClass;
  GemmTile tile;
  /// 1 where this variant runs, 0 where another does: exactly one variant of
  /// a GEMM is active for any binding of the symbols.
  SizeExpr active;
  /// Slices of K, one per blockIdx.z (1: no split-K). With more than one,
  /// the kernel writes partial sums to a workspace [splits, batch * M * N]
  /// and a second kernel adds them in a fixed order and applies the
  /// epilogue.
  SizeExpr splits;

  /// Whether the workspace and the reduction kernel can be needed.
  bool mayTakeSplits() const { return !(splits == SizeExpr(1)); }
  /// Rows of the workspace: `splits` where the partial sums are written,
  /// else 0 (the buffer is not used).
  SizeExpr workspaceRows() const;
};

/// The kernels of a [batches x] M x N x K GEMM whose K may be split only
/// when `batches` is 1 (blockIdx.z holds the batch otherwise).
///
/// Size classes: `N <= 32` (static) takes 128x32 tiles and `M <= 32` 32x128
/// (conv2d's few output channels, a classifier's few columns); otherwise
/// 64x64x16 tiles with 4x4 per thread, and, when N >= 128, 128x128x8 tiles
/// with 8x8 per thread for GEMMs that fill the GPU with them (at least
/// `fullWave` tiles). The 64x64 kernel splits K (batches == 1) until about
/// two blocks per SM run, each slice at least 32 deep.
///
/// With GemmPrecision::TF32 the large and medium classes run on tensor cores
/// (128x128x16 tiles with 64x32 per warp, 64x64x16 with 32x32 per warp); the
/// narrow classes, which are memory-bound, stay exact fp32.
std::vector<GemmVariant> chooseGemmVariants(const SizeExpr &m, const SizeExpr &n, const SizeExpr &k,
                                            const SizeExpr &batches,
                                            GemmPrecision precision = GemmPrecision::Exact);

/// The GPU the size classes are tuned for has this many SMs (H100 SXM).
constexpr int64_t GemmStreamingMultiprocessors = 132;

/// `mdl_gemm_tile<...>` with this tile; `aKContiguous`: A(row, k) and
/// A(row, k + 1) are neighbours in memory (load along K), else rows are;
/// likewise for B(k, col).
std::string gemmTileCall(const GemmTile &tile, bool aKContiguous, bool bKContiguous,
                         llvm::StringRef accumulatorType);

/// The device template of the prelude (text).
llvm::StringRef gemmPrelude();

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_GEMMKERNELS_H
