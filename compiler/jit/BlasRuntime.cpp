//===- BlasRuntime.cpp - C += A * B through OpenBLAS ----------------------===//

#include "jit/BlasRuntime.h"

#include <algorithm>
#include <climits>

#if MODELC_HAVE_CBLAS
#include <cblas.h>

namespace {

/// How CBLAS (row-major) should read a strided matrix, if it can.
struct BlasView {
  CBLAS_TRANSPOSE trans;
  int ld;
};

bool asBlasView(const StridedMemRefType<float, 2> &m, BlasView &view) {
  int64_t rows = m.sizes[0], cols = m.sizes[1];
  if (m.strides[1] == 1 && m.strides[0] >= std::max<int64_t>(cols, 1) && m.strides[0] <= INT_MAX) {
    view = {CblasNoTrans, static_cast<int>(m.strides[0])};
    return true;
  }
  if (m.strides[0] == 1 && m.strides[1] >= std::max<int64_t>(rows, 1) && m.strides[1] <= INT_MAX) {
    view = {CblasTrans, static_cast<int>(m.strides[1])};
    return true;
  }
  return false;
}

} // namespace
#endif

extern "C" void modelc_sgemm_ciface(StridedMemRefType<float, 2> *a, StridedMemRefType<float, 2> *b,
                                    StridedMemRefType<float, 2> *c) {
  int64_t m = c->sizes[0], n = c->sizes[1], k = a->sizes[1];
  if (m == 0 || n == 0 || k == 0)
    return;
  const float *aData = a->data + a->offset;
  const float *bData = b->data + b->offset;
  float *cData = c->data + c->offset;
#if MODELC_HAVE_CBLAS
  BlasView av, bv, cv;
  bool fits = m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
  if (fits && asBlasView(*a, av) && asBlasView(*b, bv) && asBlasView(*c, cv) &&
      cv.trans == CblasNoTrans) {
    cblas_sgemm(CblasRowMajor, av.trans, bv.trans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, aData, av.ld, bData, bv.ld, 1.0f, cData, cv.ld);
    return;
  }
#endif
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      float aip = aData[i * a->strides[0] + p * a->strides[1]];
      for (int64_t j = 0; j < n; ++j)
        cData[i * c->strides[0] + j * c->strides[1]] +=
            aip * bData[p * b->strides[0] + j * b->strides[1]];
    }
}
