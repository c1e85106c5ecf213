//===- RowConv.cpp - modelc's own conv for few channels, vectorised on rows ===//

#include "jit/RowConv.h"

#include "jit/KernelTable.h"
#include "jit/TileGemm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace modelc::jit {

namespace {

/// A tile is up to this many output channels x this many 16-float vectors
/// of one output row: 24 accumulators, the tile kernel's (TileGemm.cpp).
constexpr int kRowTileChannels = 6;
constexpr int kRowTileVectors = 4;

/// One tile: out[r * outChannelStride + v * 16 + l] for r < R, v < V, lanes
/// past `lastLanes` in the last vector left alone.
struct RowTileArgs {
  /// The tile's first channel's taps; channel r's at r * taps.
  const float *weights;
  int64_t taps;
  /// Per tap, where it reads from `x` (input channel, kernel row, column).
  const int64_t *offsets;
  /// The padded image at the tile's first output row and column.
  const float *x;
  float *out;
  int64_t outChannelStride;
  int lastLanes;
  /// Adds the sum to what `out` holds.
  bool loadOut;
  /// Per tile channel, or null.
  const float *bias;
  bool relu;
};

using RowTileFn = void (*)(const RowTileArgs &);

template <int R, int V> void rowTilePortable(const RowTileArgs &t) {
  float acc[R][V * 16];
  int width = (V - 1) * 16 + t.lastLanes;
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < width; ++j)
      acc[r][j] = t.loadOut ? t.out[r * t.outChannelStride + j] : 0.0f;
  for (int64_t q = 0; q < t.taps; ++q) {
    const float *xq = t.x + t.offsets[q];
    for (int r = 0; r < R; ++r) {
      float wr = t.weights[r * t.taps + q];
      for (int j = 0; j < width; ++j)
        acc[r][j] += wr * xq[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < width; ++j) {
      float v = acc[r][j] + (t.bias ? t.bias[r] : 0.0f);
      t.out[r * t.outChannelStride + j] = t.relu ? std::max(v, 0.0f) : v;
    }
}

#if defined(__x86_64__)
/// vmaxps: b where either is NaN. (GCC 12's _mm512_max_ps passes an
/// undefined vector that -Wmaybe-uninitialized reports.)
__attribute__((target("avx512f"))) inline __m512 max512(__m512 a, __m512 b) {
  return _mm512_mask_max_ps(a, __mmask16(0xFFFF), a, b);
}

// Unrolled and copied into locals as TileGemm.cpp's tiles are (GCC keeps
// the accumulators in memory otherwise).
template <int R, int V>
__attribute__((target("avx512f"))) void rowTileAvx512(const RowTileArgs &t) {
  const __mmask16 last = __mmask16((1u << t.lastLanes) - 1);
  const int64_t taps = t.taps, outStride = t.outChannelStride;
  const float *const x = t.x, *const weights = t.weights;
  const int64_t *const offsets = t.offsets;
  float *const out = t.out;
  const float *const biases = t.bias;
  const bool relu = t.relu;
  __m512 acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const float *from = out + r * outStride + v * 16;
      acc[r][v] = !t.loadOut   ? _mm512_setzero_ps()
                  : v == V - 1 ? _mm512_maskz_loadu_ps(last, from)
                               : _mm512_loadu_ps(from);
    }
  for (int64_t q = 0; q < taps; ++q) {
    // The padded image has slack past its end: lanes past the row's end
    // read it (or the next row) and are never stored.
    const float *xq = x + offsets[q];
    __m512 xv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      xv[v] = _mm512_loadu_ps(xq + v * 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      __m512 wr = _mm512_set1_ps(weights[r * taps + q]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v)
        acc[r][v] = _mm512_fmadd_ps(wr, xv[v], acc[r][v]);
    }
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    __m512 bias = biases ? _mm512_set1_ps(biases[r]) : zero;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      __m512 value = _mm512_add_ps(acc[r][v], bias);
      // max(0, NaN) is NaN, as std::max(NaN, 0.0f) is in the loops.
      if (relu)
        value = max512(zero, value);
      float *to = out + r * outStride + v * 16;
      if (v == V - 1)
        _mm512_mask_storeu_ps(to, last, value);
      else
        _mm512_storeu_ps(to, value);
    }
  }
}
#endif

/// The row tiles (KernelTable.h).
struct RowTileKernels {
  using Fn = RowTileFn;
  template <int R, int V> static Fn avx512() {
#if defined(__x86_64__)
    return &rowTileAvx512<R, V>;
#else
    return &rowTilePortable<R, V>;
#endif
  }
  template <int R, int V> static Fn portable() { return &rowTilePortable<R, V>; }
};
using RowTileTable = KernelTable<RowTileFn, kRowTileChannels, kRowTileVectors>;

const RowTileTable &rowTileTable() {
  static const RowTileTable avx512 =
      makeKernelTable<RowTileKernels, kRowTileChannels, kRowTileVectors>(true);
  static const RowTileTable portable =
      makeKernelTable<RowTileKernels, kRowTileChannels, kRowTileVectors>(false);
  return tileKernelsUseAvx512() ? avx512 : portable;
}

/// Image n of `in` into `to`, [C][H + 2 pad][W + 2 pad] with zeros around.
void fillPadded(const ConvOperand &in, int64_t n, const int64_t pad[2], float *to) {
  int64_t channels = in.sizes[1], height = in.sizes[2], width = in.sizes[3];
  int64_t paddedHeight = height + 2 * pad[0], paddedWidth = width + 2 * pad[1];
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t y = 0; y < paddedHeight; ++y) {
      float *row = to + (c * paddedHeight + y) * paddedWidth;
      int64_t iy = y - pad[0];
      if (iy < 0 || iy >= height) {
        std::fill_n(row, paddedWidth, 0.0f);
        continue;
      }
      std::fill_n(row, pad[1], 0.0f);
      const float *from = in.data + n * in.strides[0] + c * in.strides[1] + iy * in.strides[2];
      if (in.strides[3] == 1)
        std::copy_n(from, width, row + pad[1]);
      else
        for (int64_t x = 0; x < width; ++x)
          row[pad[1] + x] = from[x * in.strides[3]];
      std::fill_n(row + pad[1] + width, pad[1], 0.0f);
    }
}

/// The larger, NaN if either is (as the pooling loops and arith.maximumf).
float maxNan(float a, float b) { return std::isnan(a) || a > b ? a : b; }

/// One channel's pooling: `conv` [OH][OW] contiguous into `to`, rows
/// `toRowStride` apart.
void poolChannelLoop(const float *conv, int64_t convWidth, const RowConvProblem &p, float *to,
                     int64_t toRowStride) {
  for (int64_t y = 0; y < p.pooled.sizes[2]; ++y)
    for (int64_t x = 0; x < p.pooled.sizes[3]; ++x) {
      float best = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < p.poolKernel[0]; ++i)
        for (int64_t j = 0; j < p.poolKernel[1]; ++j)
          best =
              maxNan(best, conv[(y * p.poolStride[0] + i) * convWidth + x * p.poolStride[1] + j]);
      to[y * toRowStride + x] = best;
    }
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) __m512 maxNan512(__m512 a, __m512 b) {
  return _mm512_mask_mov_ps(max512(a, b), _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}

/// poolChannelLoop for a 2x2 window, stride 2 (LeNet's, VGG's): rows
/// pairwise, then even and odd columns, 16 outputs at a time.
__attribute__((target("avx512f"))) void poolChannel2x2(const float *conv, int64_t convWidth,
                                                       const RowConvProblem &p, float *to,
                                                       int64_t toRowStride) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  int64_t width = p.pooled.sizes[3];
  for (int64_t y = 0; y < p.pooled.sizes[2]; ++y) {
    const float *top = conv + 2 * y * convWidth, *bottom = top + convWidth;
    for (int64_t x0 = 0; x0 < width; x0 += 16) {
      int64_t count = std::min<int64_t>(16, width - x0), columns = 2 * count;
      __mmask16 low = __mmask16((1u << std::min<int64_t>(16, columns)) - 1),
                high = __mmask16((1u << std::max<int64_t>(0, columns - 16)) - 1);
      const float *a = top + 2 * x0, *b = bottom + 2 * x0;
      __m512 lo = maxNan512(_mm512_maskz_loadu_ps(low, a), _mm512_maskz_loadu_ps(low, b));
      __m512 hi =
          maxNan512(_mm512_maskz_loadu_ps(high, a + 16), _mm512_maskz_loadu_ps(high, b + 16));
      __m512 result =
          maxNan512(_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi));
      _mm512_mask_storeu_ps(to + y * toRowStride + x0, __mmask16((1u << count) - 1), result);
    }
  }
}
#endif

void poolChannel(const float *conv, int64_t convWidth, const RowConvProblem &p, float *to,
                 int64_t toRowStride) {
#if defined(__x86_64__)
  if (tileKernelsUseAvx512() && p.poolKernel[0] == 2 && p.poolKernel[1] == 2 &&
      p.poolStride[0] == 2 && p.poolStride[1] == 2)
    return poolChannel2x2(conv, convWidth, p, to, toRowStride);
#endif
  poolChannelLoop(conv, convWidth, p, to, toRowStride);
}

} // namespace

bool rowConvApplies(const RowConvProblem &p) {
  const ConvOperand &in = p.input, &w = p.weight, &out = p.output;
  for (const ConvOperand *operand : {&in, &w, &out})
    for (int64_t size : operand->sizes)
      if (size <= 0)
        return false;
  if (p.stride[0] != 1 || p.stride[1] != 1 || p.dilation[0] != 1 || p.dilation[1] != 1 ||
      p.pad[0] < 0 || p.pad[1] < 0 || w.sizes[1] != in.sizes[1] || out.sizes[1] != w.sizes[0] ||
      out.sizes[0] != in.sizes[0] || out.sizes[2] != in.sizes[2] + 2 * p.pad[0] - w.sizes[2] + 1 ||
      out.sizes[3] != in.sizes[3] + 2 * p.pad[1] - w.sizes[3] + 1)
    return false;
  if (p.poolKernel[0] <= 0)
    return out.strides[3] == 1;
  const ConvOperand &pooled = p.pooled;
  return !p.accumulate && p.poolKernel[1] > 0 && p.poolStride[0] > 0 && p.poolStride[1] > 0 &&
         pooled.strides[3] == 1 && pooled.sizes[0] == out.sizes[0] &&
         pooled.sizes[1] == out.sizes[1] && pooled.sizes[2] > 0 && pooled.sizes[3] > 0 &&
         (pooled.sizes[2] - 1) * p.poolStride[0] + p.poolKernel[0] <= out.sizes[2] &&
         (pooled.sizes[3] - 1) * p.poolStride[1] + p.poolKernel[1] <= out.sizes[3];
}

void rowConv(const RowConvProblem &p) {
  const ConvOperand &in = p.input, &w = p.weight, &out = p.output;
  int64_t batch = in.sizes[0], channels = in.sizes[1], outChannels = w.sizes[0], kh = w.sizes[2],
          kw = w.sizes[3], oh = out.sizes[2], ow = out.sizes[3];
  int64_t paddedHeight = in.sizes[2] + 2 * p.pad[0], paddedWidth = in.sizes[3] + 2 * p.pad[1];
  int64_t taps = channels * kh * kw;
  // Per tap where it reads the padded image, and the weights [o][tap].
  std::vector<int64_t> offsets(static_cast<size_t>(taps));
  std::vector<float> weights(static_cast<size_t>(outChannels * taps));
  for (int64_t c = 0, q = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j, ++q) {
        offsets[size_t(q)] = (c * paddedHeight + i) * paddedWidth + j;
        for (int64_t o = 0; o < outChannels; ++o)
          weights[size_t(o * taps + q)] =
              w.data[o * w.strides[0] + c * w.strides[1] + i * w.strides[2] + j * w.strides[3]];
      }
  int vectors = int(std::min<int64_t>(kRowTileVectors, (ow + 15) / 16));
  int64_t chunk = 16 * vectors;
  // Output channels in near-equal tiles of at most kRowTileChannels.
  int64_t tiles = (outChannels + kRowTileChannels - 1) / kRowTileChannels;
  int64_t tileChannels = (outChannels + tiles - 1) / tiles;
  bool pooling = p.poolKernel[0] > 0;
  const Epilogue &act = p.activations;
  bool reluInTile = act.stepCount == 1 && act.steps[0] == EpilogueStep::Relu;
  bool activationsAfter = act.stepCount > 0 && !reluInTile;
  // A tile's last vector reads up to a vector past the image's last row.
  size_t imageFloats = size_t(channels * paddedHeight * paddedWidth + chunk);
  const RowTileTable &table = rowTileTable();

#pragma omp parallel for schedule(static) if (batch > 1)
  for (int64_t n = 0; n < batch; ++n) {
    thread_local std::vector<float> image, convBuffer;
    if (image.size() < imageFloats)
      image.resize(imageFloats);
    fillPadded(in, n, p.pad, image.data());
    for (int64_t o0 = 0; o0 < outChannels; o0 += tileChannels) {
      int rows = int(std::min(tileChannels, outChannels - o0));
      // The pooled conv's output lives only in this thread's buffer.
      float *dst;
      int64_t channelStride, rowStride;
      if (pooling) {
        if (convBuffer.size() < size_t(rows * oh * ow))
          convBuffer.resize(size_t(tileChannels * oh * ow));
        dst = convBuffer.data();
        channelStride = oh * ow;
        rowStride = ow;
      } else {
        dst = out.data + n * out.strides[0] + o0 * out.strides[1];
        channelStride = out.strides[1];
        rowStride = out.strides[2];
      }
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x0 = 0; x0 < ow; x0 += chunk) {
          int64_t width = std::min(chunk, ow - x0);
          int used = int((width + 15) / 16);
          RowTileArgs args{weights.data() + o0 * taps,
                           taps,
                           offsets.data(),
                           image.data() + y * paddedWidth + x0,
                           dst + y * rowStride + x0,
                           channelStride,
                           int(width - (used - 1) * 16),
                           p.accumulate,
                           p.bias ? p.bias + o0 : nullptr,
                           reluInTile};
          table.fns[rows - 1][used - 1](args);
        }
      if (activationsAfter)
        for (int r = 0; r < rows; ++r)
          for (int64_t y = 0; y < oh; ++y) {
            float *row = dst + r * channelStride + y * rowStride;
            for (int64_t x = 0; x < ow; ++x)
              for (int s = 0; s < act.stepCount; ++s)
                row[x] = applyActivation(act.steps[size_t(s)], row[x]);
          }
      if (pooling)
        for (int r = 0; r < rows; ++r)
          poolChannel(dst + r * channelStride, ow, p,
                      p.pooled.data + n * p.pooled.strides[0] + (o0 + r) * p.pooled.strides[1],
                      p.pooled.strides[2]);
    }
  }
}

} // namespace modelc::jit
