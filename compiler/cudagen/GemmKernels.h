//===- GemmKernels.h - Tile shapes and device code of the GEMMs -*- C++ -*-===//
//
// The GEMM tiles that matmul and conv2d (implicit GEMM) run on, device
// templates in the prelude of every generated translation unit: the exact
// SIMT `mdl_gemm_tile`, `mdl_gemm_tile_tf32` (when asked) and
// `mdl_gemm_tile_half` (f16/bf16 tensor cores); the inner product for a
// GEMM's dtypes, and its tile shape per size class. A GEMM
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

/// The inner product a GEMM tile computes with.
enum class GemmMath {
  /// Exact FMAs in the accumulator type (`mdl_gemm_tile`): any dtype.
  SimtFma,
  /// TF32 tensor cores, mma.sync m16n8k8 with f32 accumulation
  /// (`mdl_gemm_tile_tf32`): f32 GEMMs where the user asked for TF32.
  Tf32Mma,
  /// f16/bf16 tensor cores, mma.sync m16n8k16 with f32 accumulation, operands
  /// copied by cp.async and read by ldmatrix (`mdl_gemm_tile_half`): GEMMs
  /// whose operands are both f16 or both bf16.
  HalfMma,
};

/// One block tile: the block computes blockM x blockN outputs, staging
/// blockK-deep slices of both operands in `stages` shared-memory buffers.
/// SIMT: each thread keeps threadM x threadN accumulators in registers;
/// tensor cores: each warp computes warpM x warpN outputs.
struct GemmTile {
  int64_t blockM = 64, blockN = 64, blockK = 16, threadM = 4, threadN = 4;
  GemmMath math = GemmMath::SimtFma;
  int64_t warpM = 0, warpN = 0;
  int64_t stages = 2;

  bool onTensorCores() const { return math != GemmMath::SimtFma; }
  int64_t threads() const {
    return onTensorCores() ? 32 * (blockM / warpM) * (blockN / warpN)
                           : (blockM / threadM) * (blockN / threadN);
  }
  /// Static shared memory of the tile's operand stages, in bytes.
  int64_t sharedBytes() const;
  /// "64x64x16 tile, 4x4 per thread"
  std::string str() const;
};

/// How an fp32 GEMM multiplies: exact fp32 FMAs (the default), or TF32
/// tensor cores where the user asked for them (inputs rounded to a 10-bit
/// mantissa, fp32 accumulation). f16/bf16 GEMMs take tensor cores either way.
enum class GemmPrecision { Exact, TF32 };

/// The inner product for a GEMM of `lhs` x `rhs` elements giving `out`.
GemmMath chooseGemmMath(runtime::DType lhs, runtime::DType rhs, runtime::DType out,
                        GemmPrecision precision);

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
/// With GemmMath::Tf32Mma the large and medium classes run on tensor cores
/// (128x128x16 tiles with 64x32 per warp, 64x64x16 with 32x32 per warp); the
/// narrow classes, which are memory-bound, stay exact fp32. With
/// GemmMath::HalfMma every class does (32-deep slices; docs/cuda-codegen.md).
std::vector<GemmVariant> chooseGemmVariants(const SizeExpr &m, const SizeExpr &n, const SizeExpr &k,
                                            const SizeExpr &batches,
                                            GemmMath math = GemmMath::SimtFma);

/// The GPU the size classes are tuned for has this many SMs (H100 SXM).
constexpr int64_t GemmStreamingMultiprocessors = 132;

/// How a GEMM operand lies in memory, for the direction of its tile loads.
struct GemmOperandLayout {
  /// Loads go along K (A(row, k) and A(row, k + 1), or B(k, col) and
  /// B(k + 1, col)), else along the rows of A (the columns of B).
  bool kFast = true;
  /// Neighbours along that direction are neighbours in memory (16-byte
  /// copies may move 8 half elements at once); false for gathers (im2col)
  /// and operands whose innermost dim is another one.
  bool contiguous = true;
};

/// The tile function with this tile's template arguments, to be called as
/// `(M, N, kBegin, kEnd, row0, col0, loadA, loadB, store)`. SIMT and TF32
/// tiles take value loads (`accumulatorType` or float), the half tile takes
/// address loads (`const uint16_t *`, null for a zero) of `element`
/// ("mdl_f16" or "mdl_bf16").
std::string gemmTileCall(const GemmTile &tile, GemmOperandLayout a, GemmOperandLayout b,
                         llvm::StringRef accumulatorType, llvm::StringRef element = "");

/// The device template of the prelude (text).
llvm::StringRef gemmPrelude();

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_GEMMKERNELS_H
