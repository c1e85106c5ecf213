//===- TileGemmTest.cpp - modelc's own tiles against a float64 product ----===//
//
// The layouts GemmChoiceTest's shared cases do not reach: A transposed, c
// with a row stride wider than n, B stored [k, n] with a padded row, a
// constant B packed once and read by several row counts, on the AVX-512
// tiles and on the portable loops (what a CPU without AVX-512 runs).
//
//===----------------------------------------------------------------------===//

#include "jit/TileGemm.h"

#include "JitTestUtils.h"
#include "jit/ConstantWeights.h"
#include "jit/GemmKernels.h"

#include <gtest/gtest.h>

#include <vector>

using namespace modelc::jit;

namespace {

std::vector<float> randomValues(size_t count, unsigned seed) {
  std::vector<float> values(count);
  test::fillRandom(values, seed);
  return values;
}

struct Layout {
  int64_t m, n, k;
  bool transposeA, transposeB;
  int64_t padA, padB, padC; // extra elements per stored row
  bool accumulate, constantB;
};

/// Runs `layout` with the tiles and checks every element of c against the
/// product in double (plus c's old value when accumulating).
void expectProduct(const Layout &l, unsigned seed) {
  int64_t aRows = l.transposeA ? l.k : l.m, aCols = l.transposeA ? l.m : l.k;
  int64_t bRows = l.transposeB ? l.n : l.k, bCols = l.transposeB ? l.k : l.n;
  int64_t lda = aCols + l.padA, ldb = bCols + l.padB, ldc = l.n + l.padC;
  std::vector<float> a = randomValues(size_t(aRows * lda), seed),
                     b = randomValues(size_t(bRows * ldb), seed + 1),
                     c = randomValues(size_t(l.m * ldc), seed + 2);
  std::vector<float> before = c;
  GemmProblem p;
  p.m = l.m;
  p.n = l.n;
  p.k = l.k;
  p.a = a.data();
  p.transposeA = l.transposeA;
  p.lda = lda;
  p.b = b.data();
  p.transposeB = l.transposeB;
  p.ldb = ldb;
  p.c = c.data();
  p.ldc = ldc;
  p.accumulate = l.accumulate;
  p.epilogue.constantB = l.constantB;
  ASSERT_TRUE(tileGemm(p));
  for (int64_t i = 0; i < l.m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      float got = c[size_t(i * ldc + j)];
      if (j >= l.n) { // the padding of c's rows stays as it was
        ASSERT_EQ(got, before[size_t(i * ldc + j)]) << "padding at " << i << "," << j;
        continue;
      }
      double want = l.accumulate ? before[size_t(i * ldc + j)] : 0.0;
      for (int64_t q = 0; q < l.k; ++q)
        want += double(l.transposeA ? a[size_t(q * lda + i)] : a[size_t(i * lda + q)]) *
                double(l.transposeB ? b[size_t(j * ldb + q)] : b[size_t(q * ldb + j)]);
      ASSERT_NEAR(got, want, 1e-4) << l.m << "x" << l.n << "x" << l.k << " at " << i << "," << j;
    }
  if (l.constantB)
    forgetConstantWeights(b.data(), b.size() * sizeof(float));
}

const Layout layouts[] = {
    {1, 256, 784, false, true, 0, 0, 0, false, true},  // a Linear layer at batch 1
    {1, 4100, 300, false, true, 0, 0, 0, false, true}, // 64 full panels and a part
    {5, 10, 3, true, false, 3, 7, 2, false, false},    // A transposed, padded rows
    {13, 70, 600, true, true, 1, 0, 5, true, false},   // accumulate, depth blocks
    {6, 64, 257, false, false, 0, 13, 0, true, true},  // one row tile, one panel
    {40, 33, 50, false, true, 2, 2, 9, false, true},   // row tiles with a remainder
    {2, 37, 17, false, true, 3, 5, 4, true, false},    // few rows, accumulate, padded
    {4, 6, 1, false, true, 1, 2, 3, false, false},     // depth 1
};

class TileGemmTest : public test::BothIsasTest {};

TEST_P(TileGemmTest, EveryLayoutMatchesTheProduct) {
  unsigned seed = 1;
  for (const Layout &l : layouts)
    expectProduct(l, seed += 3);
}

// A constant B is packed once per reading: the same buffer read by another
// row count reuses the copy, and forgetting it makes the next call read
// the new values.
TEST_P(TileGemmTest, AConstantBIsPackedOnceUntilForgotten) {
  Layout l{3, 40, 20, false, true, 0, 0, 0, false, true};
  std::vector<float> a = randomValues(size_t(8 * 20), 1), b = randomValues(40 * 20, 2);
  std::vector<float> c(size_t(8 * 40));
  auto run = [&](int64_t m) {
    GemmProblem p;
    p.m = m, p.n = l.n, p.k = l.k;
    p.a = a.data(), p.lda = l.k;
    p.b = b.data(), p.transposeB = true, p.ldb = l.k;
    p.c = c.data(), p.ldc = l.n;
    p.epilogue.constantB = true;
    ASSERT_TRUE(tileGemm(p));
  };
  run(3);
  float first = c[0];
  b[0] += 1.0f; // the caller broke its promise: the kept copy still answers
  run(8);
  EXPECT_EQ(c[0], first);
  EXPECT_EQ(forgetConstantWeights(b.data(), b.size() * sizeof(float)), 1u);
  run(8);
  EXPECT_NEAR(c[0], first + a[0], 1e-5);
  forgetConstantWeights(b.data(), b.size() * sizeof(float));
}

} // namespace

INSTANTIATE_TEST_SUITE_P(BothIsas, TileGemmTest, ::testing::Values(false, true), test::isaName);
