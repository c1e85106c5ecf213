//===- BlasRuntime.cpp - C += A * B through oneDNN or OpenBLAS -------------===//

#include "jit/BlasRuntime.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <utility>
#include <vector>

#if MODELC_HAVE_DNNL
#include "jit/RuntimeThreads.h"

#include <dnnl.h>
#endif
#if MODELC_HAVE_CBLAS
#include <cblas.h>
#endif

namespace {

/// How a row-major BLAS should read a strided matrix, if it can: as stored
/// or transposed, with leading dimension `ld`.
struct BlasView {
  bool transposed;
  int64_t ld;
};

bool asBlasView(const StridedMemRefType<float, 2> &m, BlasView &view) {
  int64_t rows = m.sizes[0], cols = m.sizes[1];
  if (m.strides[1] == 1 && m.strides[0] >= std::max<int64_t>(cols, 1) && m.strides[0] <= INT_MAX) {
    view = {false, m.strides[0]};
    return true;
  }
  if (m.strides[0] == 1 && m.strides[1] >= std::max<int64_t>(rows, 1) && m.strides[1] <= INT_MAX) {
    view = {true, m.strides[1]};
    return true;
  }
  return false;
}

#if !MODELC_HAVE_DNNL && MODELC_HAVE_CBLAS
bool fitsInt(int64_t stride) { return stride > 0 && stride <= INT_MAX; }

/// OpenBLAS (only without oneDNN, which is 4-6x faster on AVX-512 here:
/// docs/performance.md). c = op(a) op(b) + c with CBLAS's row-major calls.
void openBlasSgemm(int64_t m, int64_t n, int64_t k, const float *aData, BlasView av,
                   const float *bData, BlasView bv, float *cData, int64_t ldc,
                   const StridedMemRefType<float, 2> &a, const StridedMemRefType<float, 2> &b,
                   const StridedMemRefType<float, 2> &c) {
  auto trans = [](const BlasView &v) { return v.transposed ? CblasTrans : CblasNoTrans; };
  // A single row or column (batch 1) is a matrix-vector product: sgemv
  // skips sgemm's packing and is 2-3x faster at these sizes.
  // Only on one BLAS thread: OpenBLAS splits sgemv over its threads from
  // ~9k elements on, where sgemm stays single-threaded below 262k
  // multiply-adds, and that sync costs more than the product here.
  bool singleThreaded = openblas_get_num_threads() == 1;
  if (singleThreaded && m == 1 && fitsInt(a.strides[1]) && fitsInt(c.strides[1])) {
    // c[0, :] += op(B)^T a[0, :]; B is stored [k, n] (as stored) or [n, k].
    bool stored = !bv.transposed;
    cblas_sgemv(CblasRowMajor, stored ? CblasTrans : CblasNoTrans, static_cast<int>(stored ? k : n),
                static_cast<int>(stored ? n : k), 1.0f, bData, static_cast<int>(bv.ld), aData,
                static_cast<int>(a.strides[1]), 1.0f, cData, static_cast<int>(c.strides[1]));
    return;
  }
  if (singleThreaded && n == 1 && fitsInt(b.strides[0]) && fitsInt(c.strides[0])) {
    // c[:, 0] += op(A) b[:, 0]; A is stored [m, k] (as stored) or [k, m].
    bool stored = !av.transposed;
    cblas_sgemv(CblasRowMajor, stored ? CblasNoTrans : CblasTrans, static_cast<int>(stored ? m : k),
                static_cast<int>(stored ? k : m), 1.0f, aData, static_cast<int>(av.ld), bData,
                static_cast<int>(b.strides[0]), 1.0f, cData, static_cast<int>(c.strides[0]));
    return;
  }
  cblas_sgemm(CblasRowMajor, trans(av), trans(bv), static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), 1.0f, aData, static_cast<int>(av.ld), bData,
              static_cast<int>(bv.ld), 1.0f, cData, static_cast<int>(ldc));
}
#endif

} // namespace

extern "C" void modelc_sgemm_ciface(StridedMemRefType<float, 2> *a, StridedMemRefType<float, 2> *b,
                                    StridedMemRefType<float, 2> *c) {
  int64_t m = c->sizes[0], n = c->sizes[1], k = a->sizes[1];
  if (m == 0 || n == 0 || k == 0)
    return;
  const float *aData = a->data + a->offset;
  const float *bData = b->data + b->offset;
  float *cData = c->data + c->offset;
  BlasView av, bv, cv;
  bool fits = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
  if (fits && asBlasView(*a, av) && asBlasView(*b, bv) && asBlasView(*c, cv) && !cv.transposed) {
#if MODELC_HAVE_DNNL
    // oneDNN picks its kernels by cpuid features (AVX-512 here), also for a
    // single row: no sgemv special case needed.
    modelc::jit::SerialScope serial(double(m) * double(n) * double(k) <
                                    modelc::jit::kParallelMinMacs);
    if (dnnl_sgemm(av.transposed ? 'T' : 'N', bv.transposed ? 'T' : 'N', m, n, k, 1.0f, aData,
                   av.ld, bData, bv.ld, 1.0f, cData, cv.ld) == dnnl_success)
      return;
#elif MODELC_HAVE_CBLAS
    openBlasSgemm(m, n, k, aData, av, bData, bv, cData, cv.ld, *a, *b, *c);
    return;
#endif
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      float aip = aData[i * a->strides[0] + p * a->strides[1]];
      for (int64_t j = 0; j < n; ++j)
        cData[i * c->strides[0] + j * c->strides[1]] +=
            aip * bData[p * b->strides[0] + j * b->strides[1]];
    }
}

namespace {

/// Bytes in front of each block: its size, keeping malloc's 16-byte alignment.
constexpr size_t kHeaderBytes = 64;
/// Blocks from this size on are kept for reuse.
constexpr size_t kCachedMinBytes = 64 * 1024;
constexpr size_t kMaxCachedBlocks = 32;

/// Large blocks freed by compiled code on this thread, by exact size: a
/// forward allocates the same sizes on every call.
struct BlockCache {
  std::vector<std::pair<size_t, void *>> blocks; // (size, base)
  ~BlockCache() {
    for (auto &[size, base] : blocks)
      std::free(base);
  }
};
thread_local BlockCache blockCache;

} // namespace

extern "C" void *modelc_jit_malloc(size_t size) {
  if (size >= kCachedMinBytes) {
    auto &blocks = blockCache.blocks;
    for (size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].first == size) {
        void *base = blocks[i].second;
        blocks[i] = blocks.back();
        blocks.pop_back();
        return static_cast<char *>(base) + kHeaderBytes;
      }
  }
  void *base = std::malloc(size + kHeaderBytes);
  if (!base)
    return nullptr;
  *static_cast<size_t *>(base) = size;
  return static_cast<char *>(base) + kHeaderBytes;
}

extern "C" void modelc_jit_free(void *ptr) {
  if (!ptr)
    return;
  void *base = static_cast<char *>(ptr) - kHeaderBytes;
  size_t size = *static_cast<size_t *>(base);
  if (size >= kCachedMinBytes && blockCache.blocks.size() < kMaxCachedBlocks) {
    blockCache.blocks.emplace_back(size, base);
    return;
  }
  std::free(base);
}
