//===- RowDot.cpp - few rows of A against a Linear layer's weight ---------===//

#include "jit/RowDot.h"

#include "jit/KernelTable.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace modelc::jit {
namespace {

/// Rows of W read side by side: four streams, and four independent
/// accumulator chains per row of A.
constexpr int kDotStreams = 4;
/// Rows of W per band, the unit that threads split: each thread's bands
/// are contiguous (a static schedule) and the same at every call.
constexpr int64_t kBandRows = 16;

/// c[r, j] (+)= dot(a[r, :], w[j, :]) for r < MR, j < NR.
struct DotArgs {
  const float *a;
  int64_t lda;
  const float *w;
  int64_t ldw;
  int64_t k;
  float *c;
  int64_t ldc;
  bool accumulate;
};

using DotFn = void (*)(const DotArgs &);

/// Sixteen partial sums per c element, as the vector kernel keeps, so that
/// both round alike on long rows; the 16-lane inner loop vectorises for
/// whatever the target has.
template <int MR, int NR> void dotPortable(const DotArgs &t) {
  float acc[MR][NR][16] = {};
  int64_t q0 = 0;
  for (; q0 + 16 <= t.k; q0 += 16)
    for (int r = 0; r < MR; ++r)
      for (int j = 0; j < NR; ++j) {
        const float *a = t.a + r * t.lda + q0, *w = t.w + j * t.ldw + q0;
        for (int l = 0; l < 16; ++l)
          acc[r][j][l] += a[l] * w[l];
      }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j)
      for (int64_t q = q0; q < t.k; ++q)
        acc[r][j][q - q0] += t.a[r * t.lda + q] * t.w[j * t.ldw + q];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) {
      float sum = 0.0f;
      for (float part : acc[r][j])
        sum += part;
      float &out = t.c[r * t.ldc + j];
      out = t.accumulate ? out + sum : sum;
    }
}

#if defined(__x86_64__)
// Loops over the tile are unrolled so that the accumulators stay in
// registers (as in TileGemm.cpp).
template <int MR, int NR>
__attribute__((target("avx512f"), always_inline)) inline void
dotStep(__m512 (&acc)[MR][NR], const float *a, int64_t lda, const float *w, int64_t ldw,
        __mmask16 lanes) {
  __m512 wv[NR];
#pragma GCC unroll 4
  for (int j = 0; j < NR; ++j)
    wv[j] = _mm512_maskz_loadu_ps(lanes, w + j * ldw);
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    __m512 av = _mm512_maskz_loadu_ps(lanes, a + r * lda);
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j)
      acc[r][j] = _mm512_fmadd_ps(av, wv[j], acc[r][j]);
  }
}

/// The sum of v's lanes. (In GCC 12 _mm512_reduce_add_ps and the unmasked
/// shuffles and casts pass an undefined vector that -O3 warns about.)
__attribute__((target("avx512f"), always_inline)) inline float sumLanes(__m512 v) {
  v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, 0xffff, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, 0xffff, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, 0xffff, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, 0xffff, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}

template <int MR, int NR> __attribute__((target("avx512f"))) void dotAvx512(const DotArgs &t) {
  const int64_t k = t.k, lda = t.lda, ldw = t.ldw;
  const float *const a = t.a, *const w = t.w;
  __m512 acc[MR][NR];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j)
      acc[r][j] = _mm512_setzero_ps();
  int64_t q = 0;
  for (; q + 16 <= k; q += 16)
    dotStep<MR, NR>(acc, a + q, lda, w + q, ldw, __mmask16(0xffff));
  if (q < k)
    dotStep<MR, NR>(acc, a + q, lda, w + q, ldw, __mmask16((1u << (k - q)) - 1));
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) {
      float sum = sumLanes(acc[r][j]);
      float &out = t.c[r * t.ldc + j];
      out = t.accumulate ? out + sum : sum;
    }
}
#endif

/// The dot kernels (KernelTable.h): rows of A x rows of W.
struct DotKernels {
  using Fn = DotFn;
  template <int MR, int NR> static Fn avx512() {
#if defined(__x86_64__)
    return &dotAvx512<MR, NR>;
#else
    return &dotPortable<MR, NR>;
#endif
  }
  template <int MR, int NR> static Fn portable() { return &dotPortable<MR, NR>; }
};
using DotTable = KernelTable<DotFn, kRowDotMaxRows, kDotStreams>;

const DotTable &dotTable(bool avx512) {
  static const DotTable vector = makeKernelTable<DotKernels, kRowDotMaxRows, kDotStreams>(true);
  static const DotTable portable = makeKernelTable<DotKernels, kRowDotMaxRows, kDotStreams>(false);
  return avx512 ? vector : portable;
}

} // namespace

bool rowDotApplies(const GemmProblem &p) {
  return p.m >= 1 && p.m <= kRowDotMaxRows && p.n >= 1 && p.k >= 1 && !p.transposeA && p.transposeB;
}

void rowDotGemm(const GemmProblem &p, bool avx512) {
  const DotTable &table = dotTable(avx512);
  const DotFn *byStreams = table.fns[p.m - 1];
  int64_t bands = (p.n + kBandRows - 1) / kBandRows;
  auto runBand = [&](int64_t band) {
    int64_t j0 = band * kBandRows, j1 = std::min(p.n, j0 + kBandRows);
    for (int64_t j = j0; j < j1; j += kDotStreams) {
      int streams = int(std::min<int64_t>(kDotStreams, j1 - j));
      byStreams[streams - 1](
          {p.a, p.lda, p.b + j * p.ldb, p.ldb, p.k, p.c + j, p.ldc, p.accumulate});
    }
    if (!p.epilogue.empty())
      applyEpilogue(p, 0, p.m, j0, j1);
  };
#ifdef _OPENMP
  if (omp_get_max_threads() > 1 && bands > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t band = 0; band < bands; ++band)
      runBand(band);
    return;
  }
#endif
  for (int64_t band = 0; band < bands; ++band)
    runBand(band);
}

} // namespace modelc::jit
