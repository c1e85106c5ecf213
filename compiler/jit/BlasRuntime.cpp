//===- BlasRuntime.cpp - the matmul entries and malloc of compiled code ---===//

#include "jit/BlasRuntime.h"

#include "jit/GemmKernels.h"
#include "jit/RuntimeThreads.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

using namespace modelc::jit;

namespace {

/// How a row-major library should read a strided matrix, if it can: as
/// stored or transposed, with leading dimension `ld`.
struct MatrixView {
  bool transposed;
  int64_t ld;
};

bool asMatrixView(const StridedMemRefType<float, 2> &m, MatrixView &view) {
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

const float *dataOf(const StridedMemRefType<float, 2> &m) { return m.data + m.offset; }

/// A batch of products from this many multiply-adds on shares its matrices
/// among the threads (~10 µs of small products on one core).
constexpr double kBatchParallelMinMacs = 1 << 20;

/// c = epilogue(a * b (+ c)) for any strides: the library kernels when a
/// and b are row- or column-major and c row-major, else through a
/// row-major copy of a, b and c.
void multiply(StridedMemRefType<float, 2> &a, StridedMemRefType<float, 2> &b,
              StridedMemRefType<float, 2> &c, bool accumulate, const Epilogue &epilogue) {
  GemmProblem p;
  p.m = c.sizes[0];
  p.n = c.sizes[1];
  p.k = a.sizes[1];
  if (p.m == 0 || p.n == 0)
    return;
  p.accumulate = accumulate;
  p.epilogue = epilogue;
  MatrixView av, bv, cv;
  bool fits = p.m <= INT_MAX && p.n <= INT_MAX && p.k <= INT_MAX;
  if (fits && p.k > 0 && asMatrixView(a, av) && asMatrixView(b, bv) && asMatrixView(c, cv) &&
      !cv.transposed) {
    p.a = dataOf(a);
    p.transposeA = av.transposed;
    p.lda = av.ld;
    p.b = dataOf(b);
    p.transposeB = bv.transposed;
    p.ldb = bv.ld;
    p.c = c.data + c.offset;
    p.ldc = cv.ld;
    runGemm(p);
    return;
  }
  // Rare layouts (and k == 0): dense copies, the reference loop, copy back.
  auto dense = [](const StridedMemRefType<float, 2> &m) {
    std::vector<float> out(size_t(m.sizes[0] * m.sizes[1]));
    for (int64_t i = 0; i < m.sizes[0]; ++i)
      for (int64_t j = 0; j < m.sizes[1]; ++j)
        out[size_t(i * m.sizes[1] + j)] = dataOf(m)[i * m.strides[0] + j * m.strides[1]];
    return out;
  };
  std::vector<float> aDense = dense(a), bDense = dense(b), cDense = dense(c);
  p.a = aDense.data();
  p.lda = std::max<int64_t>(p.k, 1);
  p.b = bDense.data();
  p.ldb = p.n;
  p.c = cDense.data();
  p.ldc = p.n;
  runGemmKernel(GemmKernel::Loops, p);
  float *cData = c.data + c.offset;
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j)
      cData[i * c.strides[0] + j * c.strides[1]] = cDense[size_t(i * p.n + j)];
}

} // namespace

extern "C" void modelc_sgemm_ciface(StridedMemRefType<float, 2> *a, StridedMemRefType<float, 2> *b,
                                    StridedMemRefType<float, 2> *c) {
  multiply(*a, *b, *c, /*accumulate=*/true, Epilogue());
}

extern "C" void modelc_batch_sgemm_ciface(StridedMemRefType<float, 3> *a,
                                          StridedMemRefType<float, 3> *b,
                                          StridedMemRefType<float, 3> *c) {
  // Matrix i of a 3-D buffer as a 2-D one.
  auto matrix = [](const StridedMemRefType<float, 3> &m, int64_t i) {
    StridedMemRefType<float, 2> view;
    view.basePtr = m.basePtr;
    view.data = m.data;
    view.offset = m.offset + i * m.strides[0];
    view.sizes[0] = m.sizes[1];
    view.sizes[1] = m.sizes[2];
    view.strides[0] = m.strides[1];
    view.strides[1] = m.strides[2];
    return view;
  };
  auto multiplyOne = [&](int64_t i) {
    StridedMemRefType<float, 2> ai = matrix(*a, i), bi = matrix(*b, i), ci = matrix(*c, i);
    multiply(ai, bi, ci, /*accumulate=*/true, Epilogue());
  };
  int64_t count = c->sizes[0];
  double each = double(c->sizes[1]) * double(c->sizes[2]) * double(a->sizes[2]);
  double bBytes = double(b->sizes[1]) * double(b->sizes[2]) * sizeof(float);
#ifdef _OPENMP
  // Attention's many small products (one per batch and head, each too small
  // for a parallel kernel, so never measured serial against parallel): the
  // matrices are shared among the threads. The first runs alone, so that
  // its shape's kernel is chosen (and measured) outside the parallel region.
  if (count > 2 && double(count) * each >= kBatchParallelMinMacs &&
      each < kMeasuredThreadsMinMacs && bBytes < kMeasuredThreadsMinBBytes &&
      omp_get_max_threads() > 1 && !omp_in_parallel()) {
    multiplyOne(0);
#pragma omp parallel for schedule(static)
    for (int64_t i = 1; i < count; ++i)
      multiplyOne(i);
    return;
  }
#endif
  for (int64_t i = 0; i < count; ++i)
    multiplyOne(i);
}

extern "C" void modelc_matmul_epilogue_ciface(StridedMemRefType<float, 2> *a,
                                              StridedMemRefType<float, 2> *b,
                                              StridedMemRefType<float, 2> *c,
                                              StridedMemRefType<float, 2> *x0,
                                              StridedMemRefType<float, 2> *x1, int64_t steps) {
  EpilogueOperand operands[kMaxEpilogueOperands];
  StridedMemRefType<float, 2> *given[] = {x0, x1};
  for (int i = 0; i < kMaxEpilogueOperands; ++i)
    operands[i] = {dataOf(*given[i]), given[i]->strides[0], given[i]->strides[1]};
  Epilogue epilogue;
  if (!decodeEpilogue(steps, operands, kMaxEpilogueOperands, epilogue)) {
    // The lowering only emits known steps; a mismatch means a stale binary.
    std::fputs("modelc runtime: unknown matmul epilogue code\n", stderr);
    std::abort();
  }
  multiply(*a, *b, *c, /*accumulate=*/false, epilogue);
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
