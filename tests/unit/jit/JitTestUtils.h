//===- JitTestUtils.h - helpers for the JIT tests -------------------------===//

#ifndef MODELC_TESTS_JIT_JITTESTUTILS_H
#define MODELC_TESTS_JIT_JITTESTUTILS_H

#include "jit/Jit.h"
#include "jit/MemRef.h"
#include "jit/TileGemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace modelc::jit::test {

/// Compiles `source`, failing the test (and returning null) on error.
inline std::unique_ptr<JitModule> compileOrFail(const std::string &source,
                                                const JitOptions &options = {}) {
  auto compiled = JitModule::compileSource(source, options);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return nullptr;
  }
  return std::move(*compiled);
}

/// A test of modelc's own kernels (TileGemm.h, RowConv.h) on both ISAs:
/// the parameter false runs the AVX-512 tiles (skipped where the CPU has
/// none), true the portable loops.
class BothIsasTest : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override {
    if (!GetParam() && !tileKernelsUseAvx512())
      GTEST_SKIP() << "this CPU has no AVX-512: the portable loops are what runs";
    setTileKernelsPortableForTesting(GetParam());
  }
  void TearDown() override { setTileKernelsPortableForTesting(false); }
};

/// BothIsasTest's parameter as a test name.
inline std::string isaName(const ::testing::TestParamInfo<bool> &info) {
  return info.param ? "portable" : "avx512";
}

/// Fills a buffer with reproducible values in [-1, 1).
inline void fillRandom(std::vector<float> &values, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float &v : values)
    v = dist(rng);
}

inline void expectNear(const std::vector<float> &actual, const std::vector<float> &expected,
                       float tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance) << "at element " << i;
}

/// Row-major reference matmul: [m, k] x [k, n].
inline std::vector<float> referenceMatmul(const std::vector<float> &a, const std::vector<float> &b,
                                          int64_t m, int64_t k, int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

} // namespace modelc::jit::test

#endif // MODELC_TESTS_JIT_JITTESTUTILS_H
