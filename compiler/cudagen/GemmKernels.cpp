//===- GemmKernels.cpp - Tile shapes and device code of the GEMMs ---------===//
//
// Why these tiles (see docs/cuda-codegen.md, "GEMM tiles"): a thread with
// an 8x8 accumulator tile does 64 FMAs per 16 shared-memory reads, enough
// to keep an SM's FP32 pipes busy (the 16x16 tile of one output per thread
// did 1 FMA per 2 reads); 128x128 tiles read each operand element from
// global memory N/128 and M/128 times instead of N/16 and M/16. Large tiles
// starve the GPU when there are few of them, so smaller tiles and split-K
// take over below one wave of 128x128 tiles.
//
//===----------------------------------------------------------------------===//

#include "cudagen/GemmKernels.h"

#include "llvm/Support/FormatVariadic.h"

namespace modelc::cudagen {

std::string GemmTile::str() const {
  if (tf32)
    return llvm::formatv("{0}x{1}x{2} tile, TF32 mma.sync m16n8k8, {3}x{4} per warp", blockM,
                         blockN, blockK, warpM, warpN)
        .str();
  return llvm::formatv("{0}x{1}x{2} tile, {3}x{4} per thread", blockM, blockN, blockK, threadM,
                       threadN)
      .str();
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
                                            const SizeExpr &batches, GemmPrecision precision) {
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

  bool fewRows = constantBelow(m, 33), fewColumns = constantBelow(n, 33);
  if (fewRows && fewColumns)
    return {variant("small", GemmTile{32, 32, 16, 4, 4}, 1)};
  if (fewColumns)
    return {variant("narrow columns", GemmTile{128, 32, 16, 4, 4}, 1)};
  if (fewRows)
    return {variant("narrow rows", GemmTile{32, 128, 16, 4, 4}, 1)};

  GemmTile medium{64, 64, 16, 4, 4}, large{128, 128, 8, 8, 8};
  if (precision == GemmPrecision::TF32) {
    medium = GemmTile{64, 64, 16, 0, 0, true, 32, 32};
    large = GemmTile{128, 128, 16, 0, 0, true, 64, 32};
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

std::string gemmTileCall(const GemmTile &tile, bool aKContiguous, bool bKContiguous,
                         llvm::StringRef accumulatorType) {
  if (tile.tf32)
    return llvm::formatv("mdl_gemm_tile_tf32<{0}, {1}, {2}, {3}, {4}, {5}, {6}>", tile.blockM,
                         tile.blockN, tile.blockK, tile.warpM, tile.warpN,
                         aKContiguous ? "true" : "false", bKContiguous ? "true" : "false")
        .str();
  return llvm::formatv("mdl_gemm_tile<{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}>", tile.blockM,
                       tile.blockN, tile.blockK, tile.threadM, tile.threadN,
                       aKContiguous ? "true" : "false", bKContiguous ? "true" : "false",
                       accumulatorType)
      .str();
}

llvm::StringRef gemmPrelude() {
  return R"(
// The register-tiled GEMM of matmul and conv2d (compiler/cudagen/GemmKernels.cpp):
// the block computes the BM x BN tile at (row0, col0) of
// sum over k in [kBegin, kEnd) of A(row, k) * B(k, col). BK-deep slices of A
// and B are staged in shared memory, double-buffered: the next slice is read
// from global memory into registers while the current one is multiplied, so
// one barrier per slice suffices. Each thread keeps TM x TN accumulators in
// registers; its rows (and columns) are groups of 4 spread over the tile, so
// a warp's shared reads are broadcasts or consecutive words and its stores
// are coalesced. A_K_FAST: consecutive threads load consecutive k of A (A's
// k is its contiguous dim), else consecutive rows; B_K_FAST likewise.
// `store(row, col, acc)` runs for every element inside M x N.
#ifdef MODELC_CUDA_EMULATION_H
#define MDL_UNROLL // the host compiler unrolls what it likes
#else
#define MDL_UNROLL _Pragma("unroll")
#endif
// f16/bf16 tensor cores and cp.async need sm_80; sources that define
// MDL_NO_TENSOR_CORES go without them.
#if !defined(MDL_NO_TENSOR_CORES) &&                                                       \
    (defined(MODELC_CUDA_EMULATION_H) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800))
#define MDL_HALF_MMA 1
#else
#define MDL_HALF_MMA 0
#endif
// The operand slices of a tile: fetch() reads slice k0 of A (BM x BK) and B
// (BK x BN) from global memory into registers (0 outside M, N and kEnd),
// stash() writes them to shared memory as tileA[k][m] and tileB[k][n]
// (through `convert`). THREADS threads share the loads.
template <int BM, int BN, int BK, int THREADS, bool A_K_FAST, bool B_K_FAST, typename T>
struct MdlGemmStaging {
  static constexpr int A_LOADS = BM * BK / THREADS, B_LOADS = BN * BK / THREADS;
  static_assert(BM * BK % THREADS == 0 && BN * BK % THREADS == 0, "tile loads divide evenly");
  T nextA[A_LOADS], nextB[B_LOADS];

  static __device__ __forceinline__ void aCoord(int e, int &m, int &k) {
    const int index = e * THREADS + threadIdx.x;
    m = A_K_FAST ? index / BK : index % BM;
    k = A_K_FAST ? index % BK : index / BM;
  }
  static __device__ __forceinline__ void bCoord(int e, int &n, int &k) {
    const int index = e * THREADS + threadIdx.x;
    n = B_K_FAST ? index / BK : index % BN;
    k = B_K_FAST ? index % BK : index / BN;
  }
  template <typename LoadA, typename LoadB>
  __device__ __forceinline__ void fetch(int64_t M, int64_t N, int64_t k0, int64_t kEnd,
                                        int64_t row0, int64_t col0, const LoadA &loadA,
                                        const LoadB &loadB) {
    MDL_UNROLL
    for (int e = 0; e < A_LOADS; ++e) {
      int m, k;
      aCoord(e, m, k);
      const int64_t row = row0 + m, kk = k0 + k;
      nextA[e] = row < M && kk < kEnd ? (T)loadA(row, kk) : (T)0;
    }
    MDL_UNROLL
    for (int e = 0; e < B_LOADS; ++e) {
      int n, k;
      bCoord(e, n, k);
      const int64_t col = col0 + n, kk = k0 + k;
      nextB[e] = col < N && kk < kEnd ? (T)loadB(kk, col) : (T)0;
    }
  }
  template <typename S, int PAD, typename Convert>
  __device__ __forceinline__ void stash(S (*tileA)[BM + PAD], S (*tileB)[BN + PAD],
                                        const Convert &convert) const {
    MDL_UNROLL
    for (int e = 0; e < A_LOADS; ++e) {
      int m, k;
      aCoord(e, m, k);
      tileA[k][m] = convert(nextA[e]);
    }
    MDL_UNROLL
    for (int e = 0; e < B_LOADS; ++e) {
      int n, k;
      bCoord(e, n, k);
      tileB[k][n] = convert(nextB[e]);
    }
  }
};

template <int BM, int BN, int BK, int TM, int TN, bool A_K_FAST, bool B_K_FAST, typename Acc,
          typename LoadA, typename LoadB, typename Store>
static __device__ __forceinline__ void mdl_gemm_tile(int64_t M, int64_t N, int64_t kBegin,
                                                    int64_t kEnd, int64_t row0, int64_t col0,
                                                    LoadA loadA, LoadB loadB, Store store) {
  constexpr int THREADS = (BM / TM) * (BN / TN);
  static_assert(TM % 4 == 0 && TN % 4 == 0, "rows and columns in groups of 4");
  // +4: a column of the tile (fixed m, BK values of k) spans distinct banks.
  __shared__ __align__(16) Acc tileA[2][BK][BM + 4];
  __shared__ __align__(16) Acc tileB[2][BK][BN + 4];
  const int thread = threadIdx.x;
  const int threadRow = thread / (BN / TN), threadCol = thread % (BN / TN);
  Acc acc[TM][TN];
  MDL_UNROLL
  for (int i = 0; i < TM; ++i)
    MDL_UNROLL
    for (int j = 0; j < TN; ++j)
      acc[i][j] = 0;
  MdlGemmStaging<BM, BN, BK, THREADS, A_K_FAST, B_K_FAST, Acc> staging;
  auto same = [](Acc x) { return x; };
  int stage = 0;
  if (kBegin < kEnd) {
    staging.fetch(M, N, kBegin, kEnd, row0, col0, loadA, loadB);
    staging.template stash<Acc, 4>(tileA[0], tileB[0], same);
  }
  __syncthreads();
  for (int64_t k0 = kBegin; k0 < kEnd; k0 += BK) {
    const bool more = k0 + BK < kEnd;
    if (more)
      staging.fetch(M, N, k0 + BK, kEnd, row0, col0, loadA, loadB);
    MDL_UNROLL
    for (int k = 0; k < BK; ++k) {
      Acc a[TM], b[TN];
      MDL_UNROLL
      for (int i = 0; i < TM; ++i)
        a[i] = tileA[stage][k][(i / 4) * (BM / (TM / 4)) + threadRow * 4 + i % 4];
      MDL_UNROLL
      for (int j = 0; j < TN; ++j)
        b[j] = tileB[stage][k][(j / 4) * (BN / (TN / 4)) + threadCol * 4 + j % 4];
      MDL_UNROLL
      for (int i = 0; i < TM; ++i)
        MDL_UNROLL
        for (int j = 0; j < TN; ++j)
          acc[i][j] += a[i] * b[j];
    }
    if (more)
      staging.template stash<Acc, 4>(tileA[stage ^ 1], tileB[stage ^ 1], same);
    __syncthreads();
    stage ^= 1;
  }
  MDL_UNROLL
  for (int i = 0; i < TM; ++i)
    MDL_UNROLL
    for (int j = 0; j < TN; ++j) {
      const int64_t row = row0 + (i / 4) * (BM / (TM / 4)) + threadRow * 4 + i % 4;
      const int64_t col = col0 + (j / 4) * (BN / (TN / 4)) + threadCol * 4 + j % 4;
      if (row < M && col < N)
        store(row, col, acc[i][j]);
    }
}

// TF32 tensor cores (only where the user asked for TF32): mma.sync m16n8k8
// with fp32 accumulation. Under the emulator these two functions come from
// runtime/cuda/emulator/warp_matrix_emulation.h.
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

// mdl_gemm_tile on tensor cores: (BM / WM) x (BN / WN) warps, each computing
// WM x WN outputs as (WM / 16) x (WN / 8) m16n8k8 TF32 products per 8-deep
// step; slices are staged (double-buffered) as TF32 bits, each element
// rounded once. Fragments follow the PTX ISA's layouts (lane = 4 * group +
// t): A rows group and group + 8, columns t and t + 4; B rows t and t + 4,
// column group; accumulators rows group and group + 8, columns 2t and 2t + 1.
// +8 padding: the 32 lanes of a fragment load hit 32 distinct banks.
template <int BM, int BN, int BK, int WM, int WN, bool A_K_FAST, bool B_K_FAST, typename LoadA,
          typename LoadB, typename Store>
static __device__ __forceinline__ void mdl_gemm_tile_tf32(int64_t M, int64_t N, int64_t kBegin,
                                                         int64_t kEnd, int64_t row0,
                                                         int64_t col0, LoadA loadA, LoadB loadB,
                                                         Store store) {
  constexpr int THREADS = 32 * (BM / WM) * (BN / WN), MT = WM / 16, NT = WN / 8;
  static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "whole m16n8k8 steps");
  __shared__ __align__(16) uint32_t tileA[2][BK][BM + 8];
  __shared__ __align__(16) uint32_t tileB[2][BK][BN + 8];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int group = lane / 4, t = lane % 4;
  const int warpRow = (warp / (BN / WN)) * WM, warpCol = (warp % (BN / WN)) * WN;
  float acc[MT][NT][4];
  MDL_UNROLL
  for (int i = 0; i < MT; ++i)
    MDL_UNROLL
    for (int j = 0; j < NT; ++j)
      MDL_UNROLL
      for (int r = 0; r < 4; ++r)
        acc[i][j][r] = 0;
  MdlGemmStaging<BM, BN, BK, THREADS, A_K_FAST, B_K_FAST, float> staging;
  auto toTf32 = [](float x) { return mdl_to_tf32(x); };
  int stage = 0;
  if (kBegin < kEnd) {
    staging.fetch(M, N, kBegin, kEnd, row0, col0, loadA, loadB);
    staging.template stash<uint32_t, 8>(tileA[0], tileB[0], toTf32);
  }
  __syncthreads();
  for (int64_t k0 = kBegin; k0 < kEnd; k0 += BK) {
    const bool more = k0 + BK < kEnd;
    if (more)
      staging.fetch(M, N, k0 + BK, kEnd, row0, col0, loadA, loadB);
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
    if (more)
      staging.template stash<uint32_t, 8>(tileA[stage ^ 1], tileB[stage ^ 1], toTf32);
    __syncthreads();
    stage ^= 1;
  }
  MDL_UNROLL
  for (int i = 0; i < MT; ++i)
    MDL_UNROLL
    for (int j = 0; j < NT; ++j)
      MDL_UNROLL
      for (int r = 0; r < 4; ++r) {
        const int64_t row = row0 + warpRow + i * 16 + group + (r >= 2 ? 8 : 0);
        const int64_t col = col0 + warpCol + j * 8 + 2 * t + (r & 1);
        if (row < M && col < N)
          store(row, col, acc[i][j][r]);
      }
}

// f16/bf16 tensor cores and asynchronous copies (sm_80 and later).
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
#endif // MDL_HALF_MMA
)";
}

} // namespace modelc::cudagen
