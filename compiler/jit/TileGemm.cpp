//===- TileGemm.cpp - modelc's own f32 product for few rows ----------------===//

#include "jit/TileGemm.h"

#include "jit/ConstantWeights.h"
#include "jit/KernelTable.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace modelc::jit {
namespace {

/// Rows and 16-float vectors of the largest register tile: 24 accumulators,
/// 4 B vectors and a broadcast of A fit AVX-512's 32 registers.
constexpr int kTileRows = 6;
constexpr int kTileVectors = 4;
constexpr int64_t kPanelWidth = 16 * kTileVectors;
/// Rows of B per pass over c: a 64-column block of them (64 KiB) stays in
/// L2 while every row tile reads it.
constexpr int64_t kDepthBlock = 256;

/// B's columns [j0, j0 + width) as rows of `stride` floats: element (q, j0
/// + j) at base[q * stride + j].
struct Panel {
  const float *base;
  int64_t stride;
};

/// B in panels of `width` columns (the last zero-padded): panel p holds
/// columns [p * width, (p + 1) * width) as k rows of `width` floats.
struct PackedB {
  int64_t k = 0, width = 0;
  std::unique_ptr<float, decltype(&std::free)> data{nullptr, &std::free};

  Panel panel(int64_t j0) const { return {data.get() + (j0 / width) * k * width, width}; }
};

int64_t roundUp(int64_t value, int64_t to) { return (value + to - 1) / to * to; }

/// Packs op(B) ([k, n]): B stored [k, n] with row stride ldb, or
/// (transposed) [n, k] with row stride ldb.
std::shared_ptr<PackedB> pack(const GemmProblem &p) {
  auto packed = std::make_shared<PackedB>();
  packed->k = p.k;
  packed->width = std::min(kPanelWidth, roundUp(p.n, 16));
  int64_t panels = roundUp(p.n, packed->width) / packed->width;
  size_t bytes = size_t(roundUp(panels * p.k * packed->width * int64_t(sizeof(float)), 64));
  packed->data.reset(static_cast<float *>(std::aligned_alloc(64, bytes)));
  if (!packed->data)
    return nullptr;
  float *out = packed->data.get();
  int64_t width = packed->width;
  for (int64_t panel = 0; panel < panels; ++panel)
    for (int64_t q = 0; q < p.k; ++q) {
      float *row = out + (panel * p.k + q) * width;
      for (int64_t j = 0; j < width; ++j) {
        int64_t col = panel * width + j;
        row[j] = col >= p.n ? 0.0f : p.transposeB ? p.b[col * p.ldb + q] : p.b[q * p.ldb + col];
      }
    }
  return packed;
}

/// The packed copies of constant B, per buffer and reading (a square weight
/// may be read as W and as W.T).
struct PackedCopies {
  std::mutex mutex;
  std::map<const void *,
           std::map<std::tuple<int64_t, int64_t, int64_t, bool>, std::shared_ptr<PackedB>>>
      copies;
};

PackedCopies &packedCopies() {
  static PackedCopies *copies = new PackedCopies(); // outlives every caller
  return *copies;
}

std::shared_ptr<PackedB> constantPacked(const GemmProblem &p) {
  PackedCopies &kept = packedCopies();
  std::lock_guard<std::mutex> lock(kept.mutex);
  std::shared_ptr<PackedB> &slot = kept.copies[p.b][std::make_tuple(p.k, p.n, p.ldb, p.transposeB)];
  if (!slot)
    slot = pack(p);
  return slot;
}

/// One tile: c[r, v*16 + l] for r < MR, v < NV, lanes past `lastLanes` in
/// the last vector left alone; `loadC` adds to what c holds.
struct TileArgs {
  const float *a;
  int64_t aRowStride, aDepthStride;
  Panel b;
  int64_t depth;
  float *c;
  int64_t ldc;
  int lastLanes;
  bool loadC;
};

using TileFn = void (*)(const TileArgs &);

template <int MR, int NV> void tilePortable(const TileArgs &t) {
  float acc[MR][NV * 16];
  int width = (NV - 1) * 16 + t.lastLanes;
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NV * 16; ++j)
      acc[r][j] = t.loadC && j < width ? t.c[r * t.ldc + j] : 0.0f;
  for (int64_t q = 0; q < t.depth; ++q) {
    const float *brow = t.b.base + q * t.b.stride;
    const float *aq = t.a + q * t.aDepthStride;
    for (int r = 0; r < MR; ++r) {
      float ar = aq[r * t.aRowStride];
      for (int j = 0; j < width; ++j)
        acc[r][j] += ar * brow[j];
    }
  }
  for (int r = 0; r < MR; ++r)
    std::copy_n(acc[r], width, t.c + r * t.ldc);
}

#if defined(__x86_64__)
// Every loop over the tile is unrolled (GCC otherwise keeps the
// accumulator array in memory and stores it on every step of the depth
// loop), and the arguments are copied into locals (a store through c could
// alias them as far as the compiler knows).
template <int MR, int NV> __attribute__((target("avx512f"))) void tileAvx512(const TileArgs &t) {
  const __mmask16 last = __mmask16((1u << t.lastLanes) - 1);
  const int64_t depth = t.depth, bStride = t.b.stride, aRowStride = t.aRowStride,
                aDepthStride = t.aDepthStride, ldc = t.ldc;
  float *const c = t.c;
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const float *from = c + r * ldc + v * 16;
      acc[r][v] = !t.loadC      ? _mm512_setzero_ps()
                  : v == NV - 1 ? _mm512_maskz_loadu_ps(last, from)
                                : _mm512_loadu_ps(from);
    }
  const float *brow = t.b.base;
  const float *aq = t.a;
  for (int64_t q = 0; q < depth; ++q, brow += bStride, aq += aDepthStride) {
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] =
          v == NV - 1 ? _mm512_maskz_loadu_ps(last, brow + v * 16) : _mm512_loadu_ps(brow + v * 16);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      __m512 ar = _mm512_set1_ps(aq[r * aRowStride]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      float *to = c + r * ldc + v * 16;
      if (v == NV - 1)
        _mm512_mask_storeu_ps(to, last, acc[r][v]);
      else
        _mm512_storeu_ps(to, acc[r][v]);
    }
}
#endif

/// The tile functions (KernelTable.h).
struct TileKernels {
  using Fn = TileFn;
  template <int MR, int NV> static Fn avx512() {
#if defined(__x86_64__)
    return &tileAvx512<MR, NV>;
#else
    return &tilePortable<MR, NV>;
#endif
  }
  template <int MR, int NV> static Fn portable() { return &tilePortable<MR, NV>; }
};
using TileTable = KernelTable<TileFn, kTileRows, kTileVectors>;

bool cpuHasAvx512() {
#if defined(__x86_64__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
#else
  return false;
#endif
}

std::atomic<bool> &portableOnly() {
  static std::atomic<bool> portable{false};
  return portable;
}

const TileTable &tileTable() {
  static const TileTable avx512 = makeKernelTable<TileKernels, kTileRows, kTileVectors>(true);
  static const TileTable portable = makeKernelTable<TileKernels, kTileRows, kTileVectors>(false);
  return tileKernelsUseAvx512() ? avx512 : portable;
}

/// c[:, j0 : j0 + width] over every row and depth block, then the epilogue
/// on that block while it is in cache.
void columnBlock(const GemmProblem &p, const Panel &panel, int64_t j0, int64_t width) {
  const TileTable &table = tileTable();
  int vectors = int((width + 15) / 16);
  int lastLanes = int(width - (vectors - 1) * 16);
  int64_t aRowStride = p.transposeA ? 1 : p.lda, aDepthStride = p.transposeA ? p.lda : 1;
  for (int64_t q0 = 0; q0 < p.k; q0 += kDepthBlock) {
    int64_t depth = std::min(kDepthBlock, p.k - q0);
    for (int64_t i0 = 0; i0 < p.m; i0 += kTileRows) {
      int rows = int(std::min<int64_t>(kTileRows, p.m - i0));
      TileArgs args{p.a + i0 * aRowStride + q0 * aDepthStride,
                    aRowStride,
                    aDepthStride,
                    {panel.base + q0 * panel.stride, panel.stride},
                    depth,
                    p.c + i0 * p.ldc + j0,
                    p.ldc,
                    lastLanes,
                    q0 > 0 || p.accumulate};
      table.fns[rows - 1][vectors - 1](args);
    }
  }
  if (!p.epilogue.empty())
    applyEpilogue(p, 0, p.m, j0, j0 + width);
}

} // namespace

bool tileGemm(const GemmProblem &p) {
  if (p.k <= 0 || p.m <= 0 || p.n <= 0)
    return false;
  // B in panels: kept (constant B), packed now (a transposed B that may
  // change), or as stored.
  std::shared_ptr<PackedB> packed;
  if (p.epilogue.constantB)
    packed = constantPacked(p);
  else if (p.transposeB)
    packed = pack(p);
  if ((p.epilogue.constantB || p.transposeB) && !packed)
    return false;
  int64_t blocks = roundUp(p.n, kPanelWidth) / kPanelWidth;
  auto runBlock = [&](int64_t block) {
    int64_t j0 = block * kPanelWidth;
    int64_t width = std::min(kPanelWidth, p.n - j0);
    Panel panel = packed ? packed->panel(j0) : Panel{p.b + j0, p.ldb};
    columnBlock(p, panel, j0, width);
  };
#ifdef _OPENMP
  if (omp_get_max_threads() > 1 && blocks > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t block = 0; block < blocks; ++block)
      runBlock(block);
    return true;
  }
#endif
  for (int64_t block = 0; block < blocks; ++block)
    runBlock(block);
  return true;
}

bool tileKernelsUseAvx512() {
  return cpuHasAvx512() && !portableOnly().load(std::memory_order_relaxed);
}

void setTileKernelsPortableForTesting(bool portable) { portableOnly().store(portable); }

size_t forgetTilePackedWeights(const void *data, size_t bytes) {
  PackedCopies &kept = packedCopies();
  std::lock_guard<std::mutex> lock(kept.mutex);
  return eraseCopiesIn(kept.copies, data, bytes);
}

} // namespace modelc::jit
