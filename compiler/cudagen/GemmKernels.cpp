//===- GemmKernels.cpp - Tile shapes and device code of the GEMMs ---------===//
//
// Why these tiles (see docs/cuda-codegen.md, "GEMM tiles"): a thread with
// an 8x8 accumulator tile does 64 FMAs per 16 shared-memory reads, enough
// to keep an SM's FP32 pipes busy (the 16x16 tile of one output per thread
// did 1 FMA per 2 reads); 128x128 tiles read each operand element from
// global memory N/128 and M/128 times instead of N/16 and M/16. Large tiles
// starve the GPU when there are few of them, so smaller tiles and split-K
// take over below one wave of 128x128 tiles. Tensor-core tiles follow the
// same classes with warp tiles of mma fragments ("f16/bf16 tensor cores").
//
//===----------------------------------------------------------------------===//

#include "cudagen/GemmKernels.h"

#include "llvm/Support/FormatVariadic.h"

namespace modelc::cudagen {

std::string GemmTile::str() const {
  switch (math) {
  case GemmMath::Tf32Mma:
    return llvm::formatv("{0}x{1}x{2} tile, TF32 mma.sync m16n8k8, {3}x{4} per warp", blockM,
                         blockN, blockK, warpM, warpN)
        .str();
  case GemmMath::HalfMma:
    return llvm::formatv("{0}x{1}x{2} tile, f16/bf16 mma.sync m16n8k16, {3}x{4} per warp, {5} "
                         "stages",
                         blockM, blockN, blockK, warpM, warpN, stages)
        .str();
  case GemmMath::SimtFma:
    break;
  }
  return llvm::formatv("{0}x{1}x{2} tile, {3}x{4} per thread", blockM, blockN, blockK, threadM,
                       threadN)
      .str();
}

int64_t GemmTile::sharedBytes() const {
  switch (math) {
  case GemmMath::HalfMma: {
    // Each operand keeps its own layout, its fast dim padded by 8 elements
    // (mdl_gemm_tile_half); the layout changes the size a little, so this
    // is the larger of the two.
    auto operand = [&](int64_t mn) { return std::max(mn * (blockK + 8), blockK * (mn + 8)) * 2; };
    return stages * (operand(blockM) + operand(blockN));
  }
  case GemmMath::Tf32Mma:
    return stages * blockK * (blockM + 8 + blockN + 8) * 4;
  case GemmMath::SimtFma:
    break;
  }
  // f32 accumulators (f64 and i64 products take twice this).
  return stages * blockK * (blockM + 4 + blockN + 4) * 4;
}

GemmMath chooseGemmMath(runtime::DType lhs, runtime::DType rhs, runtime::DType out,
                        GemmPrecision precision) {
  using runtime::DType;
  if (lhs == rhs && (lhs == DType::F16 || lhs == DType::BF16))
    return GemmMath::HalfMma;
  if (precision == GemmPrecision::TF32 && out == DType::F32 && lhs == DType::F32 &&
      rhs == DType::F32)
    return GemmMath::Tf32Mma;
  return GemmMath::SimtFma;
}

SizeExpr GemmVariant::workspaceRows() const {
  if (!mayTakeSplits())
    return 0;
  return active * SizeExpr::min(splits - 1, 1) * splits;
}

namespace {

bool constantBelow(const SizeExpr &e, int64_t bound) {
  std::optional<int64_t> c = e.constant();
  return c && *c < bound;
}

/// 1 when `e` >= `threshold`, else 0 (e >= 0).
SizeExpr atLeast(const SizeExpr &e, int64_t threshold) {
  return SizeExpr::min(SizeExpr::max(e - (threshold - 1), 0), 1);
}

} // namespace

std::vector<GemmVariant> chooseGemmVariants(const SizeExpr &m, const SizeExpr &n, const SizeExpr &k,
                                            const SizeExpr &batches, GemmMath math) {
  const bool splittable = batches == SizeExpr(1);
  auto tiles = [&](const GemmTile &t) {
    return SizeExpr::ceilDiv(m, t.blockM) * SizeExpr::ceilDiv(n, t.blockN) * batches;
  };
  // Below one wave of tiles, enough K slices for about two blocks per SM,
  // each slice at least 32 deep (two 16-deep stages), at most 32 slices.
  auto splitsFor = [&](const GemmTile &t) -> SizeExpr {
    if (!splittable)
      return 1;
    // wanted >= 1; the bound on depth is folded first (K is mostly static).
    SizeExpr wanted =
        SizeExpr::ceilDiv(2 * GemmStreamingMultiprocessors, SizeExpr::max(tiles(t), 1));
    SizeExpr deepest = SizeExpr::max(SizeExpr::min(SizeExpr::floorDiv(k, 32), 32), 1);
    if (deepest == SizeExpr(1))
      return 1;
    // A full wave of tiles is not split.
    SizeExpr fewTiles = 1 - atLeast(tiles(t), GemmStreamingMultiprocessors);
    return 1 + (SizeExpr::min(wanted, deepest) - 1) * fewTiles;
  };
  auto variant = [&](std::string sizeClass, GemmTile tile, SizeExpr active) {
    GemmVariant v;
    v.sizeClass = std::move(sizeClass);
    v.tile = tile;
    v.active = std::move(active);
    v.splits = splitsFor(tile);
    return v;
  };

  // Tensor-core tiles for f16/bf16: each warp 32x32 (16x32 in the small
  // tile), 32-deep slices in 3 stages; the 128x128 tile keeps 2 stages to
  // stay within 48 KiB of static shared memory (docs/cuda-codegen.md).
  auto half = [](int64_t bm, int64_t bn, int64_t wm, int64_t wn, int64_t stages) {
    GemmTile t{bm, bn, 32, 0, 0, GemmMath::HalfMma, wm, wn, stages};
    return t;
  };
  const bool onHalf = math == GemmMath::HalfMma;
  bool fewRows = constantBelow(m, 33), fewColumns = constantBelow(n, 33);
  if (fewRows && fewColumns)
    return {variant("small", onHalf ? half(32, 32, 16, 32, 3) : GemmTile{32, 32, 16, 4, 4}, 1)};
  if (fewColumns)
    return {variant("narrow columns",
                    onHalf ? half(128, 32, 32, 32, 3) : GemmTile{128, 32, 16, 4, 4}, 1)};
  if (fewRows)
    return {
        variant("narrow rows", onHalf ? half(32, 128, 32, 32, 3) : GemmTile{32, 128, 16, 4, 4}, 1)};

  GemmTile medium{64, 64, 16, 4, 4}, large{128, 128, 8, 8, 8};
  if (math == GemmMath::Tf32Mma) {
    medium = GemmTile{64, 64, 16, 0, 0, GemmMath::Tf32Mma, 32, 32};
    large = GemmTile{128, 128, 16, 0, 0, GemmMath::Tf32Mma, 64, 32};
  } else if (onHalf) {
    medium = half(64, 64, 32, 32, 3);
    large = half(128, 128, 64, 32, 2);
  }
  std::vector<GemmVariant> variants;
  SizeExpr largeActive = 0;
  if (!constantBelow(m, 128) && !constantBelow(n, 128)) {
    largeActive = atLeast(tiles(large), GemmStreamingMultiprocessors);
    if (!(largeActive == SizeExpr(0))) {
      GemmVariant v = variant("large", large, largeActive);
      v.splits = 1; // a full wave of blocks needs no split
      variants.push_back(v);
    }
  }
  SizeExpr mediumActive = 1 - largeActive;
  if (!(mediumActive == SizeExpr(0)))
    variants.push_back(variant("medium", medium, mediumActive));
  return variants;
}

std::string gemmTileCall(const GemmTile &tile, GemmOperandLayout a, GemmOperandLayout b,
                         llvm::StringRef accumulatorType, llvm::StringRef element) {
  auto flag = [](bool b) { return b ? "true" : "false"; };
  switch (tile.math) {
  case GemmMath::Tf32Mma:
    return llvm::formatv("mdl_gemm_tile_tf32<{0}, {1}, {2}, {3}, {4}, {5}, {6}>", tile.blockM,
                         tile.blockN, tile.blockK, tile.warpM, tile.warpN, flag(a.kFast),
                         flag(b.kFast))
        .str();
  case GemmMath::HalfMma:
    return llvm::formatv("mdl_gemm_tile_half<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, "
                         "{10}>",
                         tile.blockM, tile.blockN, tile.blockK, tile.warpM, tile.warpN, tile.stages,
                         flag(a.kFast), flag(a.contiguous), flag(b.kFast), flag(b.contiguous),
                         element)
        .str();
  case GemmMath::SimtFma:
    break;
  }
  return llvm::formatv("mdl_gemm_tile<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}>", tile.blockM,
                       tile.blockN, tile.blockK, tile.threadM, tile.threadN, flag(a.kFast),
                       flag(b.kFast), accumulatorType)
      .str();
}

llvm::StringRef gemmPrelude() {
  return R"(
// The GEMM tiles of matmul and conv2d (compiler/cudagen/GemmKernels.cpp,
// docs/cuda-codegen.md "GEMM tiles"). A tile function computes the BM x BN
// block at (row0, col0) of sum over k in [kBegin, kEnd) of A(row, k) *
// B(k, col) and hands each result inside M x N to `store(row, col, acc)`,
// where the fused epilogue runs on the accumulator before the one rounding
// to the output's type. Three inner products share one main loop:
//   mdl_gemm_tile       exact SIMT FMAs, TM x TN accumulators per thread;
//   mdl_gemm_tile_tf32  TF32 mma.sync m16n8k8, f32 accumulation (when asked);
//   mdl_gemm_tile_half  f16/bf16 mma.sync m16n8k16, f32 accumulation,
//                       operands copied by cp.async, read by ldmatrix.
// Under the emulator the inline-PTX functions (mdl_mma_*, mdl_ldmatrix_*,
// mdl_cp_async_*, mdl_to_tf32) come from
// runtime/cuda/emulator/warp_matrix_emulation.h.
#ifdef MODELC_CUDA_EMULATION_H
#define MDL_UNROLL // the host compiler unrolls what it likes
#else
#define MDL_UNROLL _Pragma("unroll")
#endif
// f16/bf16 tensor cores need sm_80 (cp.async, bf16 mma); older GPUs, and
// sources that define MDL_NO_TENSOR_CORES, run the half tile on SIMT FMAs.
#if !defined(MDL_NO_TENSOR_CORES) &&                                                       \
    (defined(MODELC_CUDA_EMULATION_H) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800))
#define MDL_HALF_MMA 1
#else
#define MDL_HALF_MMA 0
#endif

// The main loop of every tile: STAGES shared-memory buffers of BK-deep
// operand slices in a ring. `operands.issue(stage, k0)` starts moving slice
// k0 (cp.async copies, or loads into registers), `operands.finish(stage)`
// stores what went through registers, commit()/wait<N>() group the
// asynchronous copies (no-ops where there are none); `product.step(stage)`
// multiplies one staged slice into the accumulators. One barrier per slice:
// past it, slice k0 has landed and every thread is done reading the buffer
// the slice STAGES - 1 ahead refills. Register loads finish after the step,
// so their latency hides behind it.
template <int STAGES, int BK, typename Operands, typename Product>
static __device__ __forceinline__ void mdl_gemm_mainloop(int64_t kBegin, int64_t kEnd,
                                                         Operands &operands, Product &product) {
  MDL_UNROLL
  for (int s = 0; s + 1 < STAGES; ++s) {
    if (kBegin + s * BK < kEnd) {
      operands.issue(s, kBegin + s * BK);
      operands.finish(s);
    }
    operands.commit();
  }
  int stage = 0;
  for (int64_t k0 = kBegin; k0 < kEnd; k0 += BK) {
    operands.template wait<STAGES - 2>();
    __syncthreads();
    const int refill = stage == 0 ? STAGES - 1 : stage - 1;
    const int64_t kRefill = k0 + (STAGES - 1) * BK;
    const bool more = kRefill < kEnd;
    if (more)
      operands.issue(refill, kRefill);
    operands.commit();
    product.step(stage);
    if (more)
      operands.finish(refill);
    stage = stage + 1 == STAGES ? 0 : stage + 1;
  }
}

// One operand's MN x BK slices staged through registers (SIMT and TF32
// tiles): issue() reads slice k0 (0 outside `extent` and kEnd), finish()
// writes it to tile[stage][k][mn] through `convert`. `load(mn, k)` reads
// A(row, k) or B(k, col). K_FAST: consecutive threads read consecutive k
// (the operand's contiguous dim), else consecutive mn.
template <int MN, int BK, int THREADS, bool K_FAST, int STRIDE, typename T, typename S,
          typename Load, typename Convert>
struct MdlRegisterSlices {
  static constexpr int LOADS = MN * BK / THREADS;
  static_assert(MN * BK % THREADS == 0, "slice loads divide evenly");
  S (*tile)[BK][STRIDE];
  int64_t extent, origin, kEnd;
  Load load;
  Convert convert;
  T next[LOADS];

  static __device__ __forceinline__ void coord(int e, int &mn, int &k) {
    const int index = e * THREADS + threadIdx.x;
    mn = K_FAST ? index / BK : index % MN;
    k = K_FAST ? index % BK : index / MN;
  }
  __device__ __forceinline__ void issue(int, int64_t k0) {
    MDL_UNROLL
    for (int e = 0; e < LOADS; ++e) {
      int mn, k;
      coord(e, mn, k);
      next[e] = origin + mn < extent && k0 + k < kEnd ? (T)load(origin + mn, k0 + k) : (T)0;
    }
  }
  __device__ __forceinline__ void finish(int stage) {
    MDL_UNROLL
    for (int e = 0; e < LOADS; ++e) {
      int mn, k;
      coord(e, mn, k);
      tile[stage][k][mn] = convert(next[e]);
    }
  }
};

// Both operands' slices. `Groups` groups the asynchronous copies
// (MdlCpAsyncGroups), or has none to group (MdlNoCopyGroups).
template <typename SlicesA, typename SlicesB, typename Groups> struct MdlOperands {
  SlicesA a;
  SlicesB b;
  __device__ __forceinline__ void issue(int stage, int64_t k0) {
    a.issue(stage, k0);
    b.issue(stage, k0);
  }
  __device__ __forceinline__ void finish(int stage) {
    a.finish(stage);
    b.finish(stage);
  }
  __device__ __forceinline__ void commit() { Groups::commit(); }
  template <int N> __device__ __forceinline__ void wait() { Groups::template wait<N>(); }
};
struct MdlNoCopyGroups {
  static __device__ __forceinline__ void commit() {}
  template <int N> static __device__ __forceinline__ void wait() {}
};

// The exact inner product: each thread keeps TM x TN accumulators; its rows
// (and columns) are groups of 4 spread over the tile, so a warp's shared
// reads are broadcasts or consecutive words and its stores are coalesced.
template <int BM, int BN, int BK, int TM, int TN, typename Acc> struct MdlSimtProduct {
  static_assert(TM % 4 == 0 && TN % 4 == 0, "rows and columns in groups of 4");
  // +4: a column of the tile (fixed m, BK values of k) spans distinct banks.
  Acc (*tileA)[BK][BM + 4];
  Acc (*tileB)[BK][BN + 4];
  int threadRow, threadCol;
  Acc acc[TM][TN];

  __device__ __forceinline__ int row(int i) const {
    return (i / 4) * (BM / (TM / 4)) + threadRow * 4 + i % 4;
  }
  __device__ __forceinline__ int col(int j) const {
    return (j / 4) * (BN / (TN / 4)) + threadCol * 4 + j % 4;
  }
  __device__ __forceinline__ void step(int stage) {
    MDL_UNROLL
    for (int k = 0; k < BK; ++k) {
      Acc a[TM], b[TN];
      MDL_UNROLL
      for (int i = 0; i < TM; ++i)
        a[i] = tileA[stage][k][row(i)];
      MDL_UNROLL
      for (int j = 0; j < TN; ++j)
        b[j] = tileB[stage][k][col(j)];
      MDL_UNROLL
      for (int i = 0; i < TM; ++i)
        MDL_UNROLL
        for (int j = 0; j < TN; ++j)
          acc[i][j] += a[i] * b[j];
    }
  }
};

template <int BM, int BN, int BK, int TM, int TN, bool A_K_FAST, bool B_K_FAST, typename Acc,
          typename LoadA, typename LoadB, typename Store>
static __device__ __forceinline__ void mdl_gemm_tile(int64_t M, int64_t N, int64_t kBegin,
                                                    int64_t kEnd, int64_t row0, int64_t col0,
                                                    LoadA loadA, LoadB loadB, Store store) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  __shared__ __align__(16) Acc tileA[2][BK][BM + 4];
  __shared__ __align__(16) Acc tileB[2][BK][BN + 4];
  auto same = [](Acc x) { return x; };
  auto loadBT = [&](int64_t col, int64_t k) { return loadB(k, col); };
  MdlOperands<
      MdlRegisterSlices<BM, BK, THREADS, A_K_FAST, BM + 4, Acc, Acc, LoadA, decltype(same)>,
      MdlRegisterSlices<BN, BK, THREADS, B_K_FAST, BN + 4, Acc, Acc, decltype(loadBT),
                        decltype(same)>,
      MdlNoCopyGroups>
      operands{{tileA, M, row0, kEnd, loadA, same}, {tileB, N, col0, kEnd, loadBT, same}};
  const int thread = threadIdx.x;
  // The accumulators start at 0 (aggregate initialisation).
  MdlSimtProduct<BM, BN, BK, TM, TN, Acc> product{tileA, tileB, thread / (BN / TN),
                                                  thread % (BN / TN)};
  mdl_gemm_mainloop<2, BK>(kBegin, kEnd, operands, product);
  MDL_UNROLL
  for (int i = 0; i < TM; ++i)
    MDL_UNROLL
    for (int j = 0; j < TN; ++j) {
      const int64_t row = row0 + product.row(i), col = col0 + product.col(j);
      if (row < M && col < N)
        store(row, col, product.acc[i][j]);
    }
}

// Stores a warp's m16n8 f32 accumulator fragments (MT x NT of them, from
// (row0, col0)) as the PTX ISA lays them out: lane = 4 * group + t holds
// rows group and group + 8, columns 2t and 2t + 1.
template <int MT, int NT, typename Store>
static __device__ __forceinline__ void mdl_mma_store(const float (&acc)[MT][NT][4], int64_t M,
                                                    int64_t N, int64_t row0, int64_t col0,
                                                    Store &store) {
  const int lane = threadIdx.x % 32, group = lane / 4, t = lane % 4;
  MDL_UNROLL
  for (int i = 0; i < MT; ++i)
    MDL_UNROLL
    for (int j = 0; j < NT; ++j)
      MDL_UNROLL
      for (int r = 0; r < 4; ++r) {
        const int64_t row = row0 + i * 16 + group + (r >= 2 ? 8 : 0);
        const int64_t col = col0 + j * 8 + 2 * t + (r & 1);
        if (row < M && col < N)
          store(row, col, acc[i][j][r]);
      }
}

// TF32 tensor cores (only where the user asked for TF32): mma.sync m16n8k8
// with fp32 accumulation.
#ifndef MODELC_CUDA_EMULATION_H
// cvt.rna: round to nearest with a 10-bit mantissa, ties away from zero.
static __device__ __forceinline__ uint32_t mdl_to_tf32(float x) {
  uint32_t bits;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
  return bits;
}
static __device__ __forceinline__ void mdl_mma_m16n8k8_tf32(float d[4], const uint32_t a[4],
                                                           const uint32_t b[2], const float c[4]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
#endif

// (BM / WM) x (BN / WN) warps, each computing WM x WN outputs as (WM / 16) x
// (WN / 8) m16n8k8 products per 8-deep step from TF32 bits staged in
// tile[k][mn]. Fragments follow the PTX ISA's layouts (lane = 4 * group +
// t): A rows group and group + 8, columns t and t + 4; B rows t and t + 4,
// column group. +8 padding: the 32 lanes of a fragment load hit 32 distinct
// banks.
template <int BM, int BN, int BK, int WM, int WN> struct MdlTf32Product {
  static constexpr int MT = WM / 16, NT = WN / 8;
  static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "whole m16n8k8 steps");
  uint32_t (*tileA)[BK][BM + 8];
  uint32_t (*tileB)[BK][BN + 8];
  int warpRow, warpCol;
  float acc[MT][NT][4];

  __device__ __forceinline__ void step(int stage) {
    const int lane = threadIdx.x % 32, group = lane / 4, t = lane % 4;
    MDL_UNROLL
    for (int k = 0; k < BK; k += 8) {
      uint32_t a[MT][4], b[NT][2];
      MDL_UNROLL
      for (int i = 0; i < MT; ++i) {
        const int row = warpRow + i * 16 + group;
        a[i][0] = tileA[stage][k + t][row];
        a[i][1] = tileA[stage][k + t][row + 8];
        a[i][2] = tileA[stage][k + t + 4][row];
        a[i][3] = tileA[stage][k + t + 4][row + 8];
      }
      MDL_UNROLL
      for (int j = 0; j < NT; ++j) {
        const int col = warpCol + j * 8 + group;
        b[j][0] = tileB[stage][k + t][col];
        b[j][1] = tileB[stage][k + t + 4][col];
      }
      MDL_UNROLL
      for (int i = 0; i < MT; ++i)
        MDL_UNROLL
        for (int j = 0; j < NT; ++j)
          mdl_mma_m16n8k8_tf32(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }
};

// mdl_gemm_tile on TF32 tensor cores; slices are staged (double-buffered)
// as TF32 bits, each element rounded once.
template <int BM, int BN, int BK, int WM, int WN, bool A_K_FAST, bool B_K_FAST, typename LoadA,
          typename LoadB, typename Store>
static __device__ __forceinline__ void mdl_gemm_tile_tf32(int64_t M, int64_t N, int64_t kBegin,
                                                         int64_t kEnd, int64_t row0,
                                                         int64_t col0, LoadA loadA, LoadB loadB,
                                                         Store store) {
  constexpr int THREADS = 32 * (BM / WM) * (BN / WN);
  __shared__ __align__(16) uint32_t tileA[2][BK][BM + 8];
  __shared__ __align__(16) uint32_t tileB[2][BK][BN + 8];
  auto toTf32 = [](float x) { return mdl_to_tf32(x); };
  auto loadBT = [&](int64_t col, int64_t k) { return loadB(k, col); };
  MdlOperands<MdlRegisterSlices<BM, BK, THREADS, A_K_FAST, BM + 8, float, uint32_t, LoadA,
                                decltype(toTf32)>,
              MdlRegisterSlices<BN, BK, THREADS, B_K_FAST, BN + 8, float, uint32_t,
                                decltype(loadBT), decltype(toTf32)>,
              MdlNoCopyGroups>
      operands{{tileA, M, row0, kEnd, loadA, toTf32}, {tileB, N, col0, kEnd, loadBT, toTf32}};
  const int warp = threadIdx.x / 32;
  MdlTf32Product<BM, BN, BK, WM, WN> product{tileA, tileB, (warp / (BN / WN)) * WM,
                                             (warp % (BN / WN)) * WN}; // acc = 0
  mdl_gemm_mainloop<2, BK>(kBegin, kEnd, operands, product);
  mdl_mma_store(product.acc, M, N, row0 + product.warpRow, col0 + product.warpCol, store);
}

// f16 and bf16 elements as the tiles see them: 16-bit patterns, widened
// only by the tensor cores (or by the SIMT fallback).
template <typename T> struct MdlHalf;
template <> struct MdlHalf<mdl_f16> {
  static __device__ __forceinline__ float widen(uint16_t bits) {
    return mdl_f16_bits_to_float(bits);
  }
};
template <> struct MdlHalf<mdl_bf16> {
  static __device__ __forceinline__ float widen(uint16_t bits) {
    return mdl_bf16_bits_to_float(bits);
  }
};

#if MDL_HALF_MMA
#ifndef MODELC_CUDA_EMULATION_H
static __device__ __forceinline__ uint32_t mdl_shared_address(const void *p) {
  return (uint32_t)__cvta_generic_to_shared(p);
}
// Four 8x8 matrices of 16-bit elements from shared memory: lanes 8j..8j+7
// give the addresses of matrix j's rows (16 bytes each, 16-byte aligned);
// lane 4g + t gets row g, elements 2t and 2t + 1 of matrix j in r[j]
// (.trans: row 2t and 2t + 1, element g).
static __device__ __forceinline__ void mdl_ldmatrix_x4(uint32_t r[4], const uint16_t *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(mdl_shared_address(row))
               : "memory");
}
static __device__ __forceinline__ void mdl_ldmatrix_x4_trans(uint32_t r[4], const uint16_t *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(mdl_shared_address(row))
               : "memory");
}
// 16 bytes from global to shared memory, asynchronously; visible to the
// thread after the wait for its group, to the block after a barrier.
static __device__ __forceinline__ void mdl_cp_async_16(uint16_t *to, const uint16_t *from) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(mdl_shared_address(to)),
               "l"(from)
               : "memory");
}
static __device__ __forceinline__ void mdl_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
// Waits until at most N of this thread's committed groups are in flight.
template <int N> static __device__ __forceinline__ void mdl_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
static __device__ __forceinline__ void mdl_mma_m16n8k16_f16(float d[4], const uint32_t a[4],
                                                           const uint32_t b[2], const float c[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
static __device__ __forceinline__ void mdl_mma_m16n8k16_bf16(float d[4], const uint32_t a[4],
                                                            const uint32_t b[2], const float c[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
                 "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
#endif

static __device__ __forceinline__ void mdl_mma_m16n8k16(float d[4], const uint32_t a[4],
                                                       const uint32_t b[2], const float c[4],
                                                       const mdl_f16 *) {
  mdl_mma_m16n8k16_f16(d, a, b, c);
}
static __device__ __forceinline__ void mdl_mma_m16n8k16(float d[4], const uint32_t a[4],
                                                       const uint32_t b[2], const float c[4],
                                                       const mdl_bf16 *) {
  mdl_mma_m16n8k16_bf16(d, a, b, c);
}

// One operand's MN x BK slices for the tensor cores, kept in the operand's
// own layout: tile[mn][k] when K_FAST (k is its fast dim), else
// tile[k][mn], the fast dim padded by 8 elements so that the 8 rows an
// ldmatrix phase reads fall in distinct banks. A slice moves in chunks of 8
// elements along the fast dim: one 16-byte cp.async where they are
// CONTIGUOUS in memory, 16-byte aligned and inside the operand; else
// element by element through registers (edges, odd strides, im2col
// gathers), 0 outside `extent` and kEnd and where `address(mn, k)` is null.
template <int MN, int BK, int THREADS, bool K_FAST, bool CONTIGUOUS, typename Address>
struct MdlAsyncSlices {
  static constexpr int INNER = K_FAST ? BK : MN, STRIDE = INNER + 8;
  static constexpr int SIZE = (K_FAST ? MN : BK) * STRIDE, CHUNKS = MN * BK / 8 / THREADS;
  static_assert(MN * BK % (8 * THREADS) == 0, "slice chunks divide evenly");
  uint16_t *tile;
  int64_t extent, origin, kEnd;
  Address address;
  uint32_t held[CHUNKS][4]; // element pairs, the lower one in the low half
  bool through[CHUNKS];

  static __device__ __forceinline__ void coord(int c, int &outer, int &inner) {
    const int chunk = c * THREADS + threadIdx.x;
    outer = chunk / (INNER / 8);
    inner = chunk % (INNER / 8) * 8;
  }
  __device__ __forceinline__ void issue(int stage, int64_t k0) {
    MDL_UNROLL
    for (int c = 0; c < CHUNKS; ++c) {
      int outer, inner;
      coord(c, outer, inner);
      const int64_t mn = origin + (K_FAST ? outer : inner), k = k0 + (K_FAST ? inner : outer);
      through[c] = true;
      if (CONTIGUOUS && (K_FAST ? mn < extent && k + 8 <= kEnd : mn + 8 <= extent && k < kEnd)) {
        const uint16_t *from = address(mn, k);
        if (((size_t)from & 15) == 0) {
          mdl_cp_async_16(tile + stage * SIZE + outer * STRIDE + inner, from);
          through[c] = false;
        }
      }
      if (through[c]) {
        MDL_UNROLL
        for (int e = 0; e < 8; ++e) {
          const int64_t m = mn + (K_FAST ? 0 : e), kk = k + (K_FAST ? e : 0);
          const uint16_t *from = m < extent && kk < kEnd ? address(m, kk) : nullptr;
          const uint32_t bits = from ? *from : 0u;
          held[c][e / 2] = e % 2 ? held[c][e / 2] | bits << 16 : bits;
        }
      }
    }
  }
  __device__ __forceinline__ void finish(int stage) {
    MDL_UNROLL
    for (int c = 0; c < CHUNKS; ++c) {
      if (!through[c])
        continue;
      int outer, inner;
      coord(c, outer, inner);
      // 16-byte aligned: STRIDE and inner are multiples of 8 elements.
      uint32_t *to = (uint32_t *)(tile + stage * SIZE + outer * STRIDE + inner);
      MDL_UNROLL
      for (int e = 0; e < 4; ++e)
        to[e] = held[c][e];
    }
  }
};

struct MdlCpAsyncGroups {
  static __device__ __forceinline__ void commit() { mdl_cp_async_commit(); }
  template <int N> static __device__ __forceinline__ void wait() { mdl_cp_async_wait<N>(); }
};

// (BM / WM) x (BN / WN) warps, each computing WM x WN outputs as (WM / 16) x
// (WN / 8) m16n8k16 products per 16-deep step. ldmatrix.x4 reads the
// fragments in the PTX ISA's layouts from either operand layout (.trans
// where the tile is [k][mn]): lane 8q + r addresses row r of matrix q; for
// A, matrices q = 0..3 are (rows +0, k +0), (+8, +0), (+0, +8), (+8, +8),
// giving a0..a3; for B, (k +0, cols +0), (+8, +0), (+0, +8), (+8, +8),
// giving b0, b1 of two n8 fragments.
template <int BM, int BN, int BK, int WM, int WN, bool A_K_FAST, bool B_K_FAST, int A_STRIDE,
          int B_STRIDE, int A_SIZE, int B_SIZE, typename T>
struct MdlHalfProduct {
  static constexpr int MT = WM / 16, NT = WN / 8;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole m16n16k16 steps");
  const uint16_t *tileA, *tileB;
  int warpRow, warpCol;
  float acc[MT][NT][4];

  __device__ __forceinline__ void step(int stage) {
    const int lane = threadIdx.x % 32, q = lane / 8, r = lane % 8;
    const uint16_t *sa = tileA + stage * A_SIZE, *sb = tileB + stage * B_SIZE;
    MDL_UNROLL
    for (int k = 0; k < BK; k += 16) {
      uint32_t a[MT][4], b[NT][2];
      MDL_UNROLL
      for (int i = 0; i < MT; ++i) {
        const int m = warpRow + i * 16;
        if (A_K_FAST)
          mdl_ldmatrix_x4(a[i], sa + (m + (q & 1) * 8 + r) * A_STRIDE + k + (q >> 1) * 8);
        else
          mdl_ldmatrix_x4_trans(a[i], sa + (k + (q >> 1) * 8 + r) * A_STRIDE + m + (q & 1) * 8);
      }
      MDL_UNROLL
      for (int j = 0; j < NT; j += 2) {
        const int n = warpCol + j * 8;
        uint32_t x[4];
        if (B_K_FAST)
          mdl_ldmatrix_x4(x, sb + (n + (q >> 1) * 8 + r) * B_STRIDE + k + (q & 1) * 8);
        else
          mdl_ldmatrix_x4_trans(x, sb + (k + (q & 1) * 8 + r) * B_STRIDE + n + (q >> 1) * 8);
        b[j][0] = x[0];
        b[j][1] = x[1];
        b[j + 1][0] = x[2];
        b[j + 1][1] = x[3];
      }
      MDL_UNROLL
      for (int i = 0; i < MT; ++i)
        MDL_UNROLL
        for (int j = 0; j < NT; ++j)
          mdl_mma_m16n8k16(acc[i][j], a[i], b[j], acc[i][j], (const T *)nullptr);
    }
  }
};
#endif // MDL_HALF_MMA

// mdl_gemm_tile for f16/bf16 operands T with f32 accumulators: the loads
// are addresses of 16-bit elements (`addressA(row, k)`, `addressB(k,
// col)`; null reads as 0), so that 8 neighbours can move as one 16-byte
// copy. STAGES-deep cp.async pipeline; A_K_FAST / B_K_FAST and
// *_CONTIGUOUS as for MdlAsyncSlices.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, bool A_K_FAST, bool A_CONTIGUOUS,
          bool B_K_FAST, bool B_CONTIGUOUS, typename T, typename AddressA, typename AddressB,
          typename Store>
static __device__ __forceinline__ void mdl_gemm_tile_half(int64_t M, int64_t N, int64_t kBegin,
                                                         int64_t kEnd, int64_t row0,
                                                         int64_t col0, AddressA addressA,
                                                         AddressB addressB, Store store) {
  constexpr int THREADS = 32 * (BM / WM) * (BN / WN);
#if MDL_HALF_MMA
  auto addressBT = [&](int64_t col, int64_t k) { return addressB(k, col); };
  using SlicesA = MdlAsyncSlices<BM, BK, THREADS, A_K_FAST, A_CONTIGUOUS, AddressA>;
  using SlicesB = MdlAsyncSlices<BN, BK, THREADS, B_K_FAST, B_CONTIGUOUS, decltype(addressBT)>;
  __shared__ __align__(128) uint16_t tileA[STAGES * SlicesA::SIZE];
  __shared__ __align__(128) uint16_t tileB[STAGES * SlicesB::SIZE];
  MdlOperands<SlicesA, SlicesB, MdlCpAsyncGroups> operands{{tileA, M, row0, kEnd, addressA},
                                              {tileB, N, col0, kEnd, addressBT}};
  const int warp = threadIdx.x / 32;
  MdlHalfProduct<BM, BN, BK, WM, WN, A_K_FAST, B_K_FAST, SlicesA::STRIDE, SlicesB::STRIDE,
                 SlicesA::SIZE, SlicesB::SIZE, T>
      product{tileA, tileB, (warp / (BN / WN)) * WM, (warp % (BN / WN)) * WN}; // acc = 0
  mdl_gemm_mainloop<STAGES, BK>(kBegin, kEnd, operands, product);
  mdl_mma_store(product.acc, M, N, row0 + product.warpRow, col0 + product.warpCol, store);
#else
  // Before sm_80: the SIMT tile with as many threads, operands widened on
  // load, 16-deep double-buffered slices.
  constexpr int PER_THREAD = BM * BN / THREADS;
  constexpr int TM = PER_THREAD >= 64 || (PER_THREAD == 32 && BM >= BN) ? 8 : 4;
  auto widenA = [&](int64_t row, int64_t k) {
    const uint16_t *p = addressA(row, k);
    return p ? MdlHalf<T>::widen(*p) : 0.0f;
  };
  auto widenB = [&](int64_t k, int64_t col) {
    const uint16_t *p = addressB(k, col);
    return p ? MdlHalf<T>::widen(*p) : 0.0f;
  };
  mdl_gemm_tile<BM, BN, 16, TM, PER_THREAD / TM, A_K_FAST, B_K_FAST, float>(
      M, N, kBegin, kEnd, row0, col0, widenA, widenB, store);
#endif
}

// The (n, oh, ow) of output pixel `column` of a conv's implicit GEMM, kept
// between calls by one thread: the tiles' slice loaders ask for the same
// column at every slice (SIMT, TF32) or for the next one (the half tile's
// 8-column chunks), and so do the stores, so the divisions by the runtime
// OH and OW run about once per thread rather than once per loaded element
// (three 64-bit divisions for every element were most of the conv's
// instructions). 32-bit divisions where the pixels fit.
struct MdlPixel {
  int64_t column = -1, n = 0, oh = 0, ow = 0; // column -1: none yet
  __device__ __forceinline__ void seek(int64_t to, int64_t OH, int64_t OW) {
    if (to == column)
      return;
    if (column >= 0 && to == column + 1) {
      column = to;
      if (++ow == OW) {
        ow = 0;
        if (++oh == OH) {
          oh = 0;
          ++n;
        }
      }
      return;
    }
    column = to;
    const int64_t pixels = OH * OW;
    if (to <= 0x7fffffff && pixels <= 0x7fffffff) {
      const uint32_t c = (uint32_t)to, hw = (uint32_t)pixels, w = (uint32_t)OW;
      const uint32_t image = c / hw, rest = c - image * hw, row = rest / w;
      n = image;
      oh = row;
      ow = rest - row * w;
    } else {
      n = to / pixels;
      const int64_t rest = to - n * pixels;
      oh = rest / OW;
      ow = rest - oh * OW;
    }
  }
};
)";
}

} // namespace modelc::cudagen
