//===- GemmChoiceTest.cpp - every GEMM kernel, epilogues, the choice file -===//
//
// Calls the runtime entries compiled matmuls use with each kernel forced
// (oneDNN matmul, dnnl_sgemm, OpenBLAS, loops: whichever this build has)
// and compares with products and epilogues computed here in double; then
// lets the runtime measure and checks the choice it writes to disk.
//
//===----------------------------------------------------------------------===//

#include "jit/GemmChoice.h"
#include "jit/BlasRuntime.h"
#include "jit/ConstantWeights.h"
#include "jit/GemmKernels.h"
#include "jit/OpenBlasLibrary.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace modelc::jit;

namespace {

StridedMemRefType<float, 2> view(float *data, int64_t rows, int64_t cols, int64_t rowStride,
                                 int64_t colStride) {
  StridedMemRefType<float, 2> r;
  r.basePtr = r.data = data;
  r.offset = 0;
  r.sizes[0] = rows;
  r.sizes[1] = cols;
  r.strides[0] = rowStride;
  r.strides[1] = colStride;
  return r;
}

std::vector<float> randomValues(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(gen);
  return values;
}

/// Restores the process-wide kernel setting.
struct ForcedKernel {
  explicit ForcedKernel(GemmKernel kernel) : saved(gemmKernelSetting()) { setGemmKernel(kernel); }
  ~ForcedKernel() { setGemmKernel(saved); }
  GemmKernel saved;
};

struct Case {
  int64_t m, n, k;
  bool transposeB;
};

/// (a b)[i, j] in double; b is [k, n], or [n, k] when transposed.
double productElement(const Case &c, const std::vector<float> &a, const std::vector<float> &b,
                      int64_t i, int64_t j) {
  double sum = 0;
  for (int64_t q = 0; q < c.k; ++q)
    sum += double(a[size_t(i * c.k + q)]) *
           (c.transposeB ? b[size_t(j * c.k + q)] : b[size_t(q * c.n + j)]);
  return sum;
}

/// bias add, residual add, and each activation, in the order the encoding
/// lists them (4 bits per step).
struct EpilogueCase {
  const char *name;
  int64_t code;
  double (*reference)(double product, double bias, double residual);
};

double gelu(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

const EpilogueCase epilogues[] = {
    {"bias+relu", 1 | 2 << 4, [](double p, double b, double) { return std::max(p + b, 0.0); }},
    {"bias+gelu+residual", 1 | 3 << 4 | 1 << 8,
     [](double p, double b, double r) { return gelu(p + b) + r; }},
    {"bias+tanh", 1 | 4 << 4, [](double p, double b, double) { return std::tanh(p + b); }},
    {"bias+silu", 1 | 5 << 4, [](double p, double b, double) { return (p + b) * sigmoid(p + b); }},
    {"sigmoid", 6, [](double p, double, double) { return sigmoid(p); }},
    {"relu", 2, [](double p, double, double) { return std::max(p, 0.0); }},
};

class GemmKernelTest : public ::testing::TestWithParam<GemmKernel> {};

TEST_P(GemmKernelTest, AccumulatesLikeTheDefinition) {
  ForcedKernel forced(GetParam());
  for (Case c : {Case{1, 256, 784, true}, Case{7, 33, 65, false}, Case{64, 120, 400, true},
                 Case{130, 17, 9, false}}) {
    std::vector<float> a = randomValues(size_t(c.m * c.k), 1),
                       b = randomValues(size_t(c.k * c.n), 2),
                       out = randomValues(size_t(c.m * c.n), 3);
    std::vector<float> expected = out;
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        expected[size_t(i * c.n + j)] += float(productElement(c, a, b, i, j));
      }
    auto av = view(a.data(), c.m, c.k, c.k, 1);
    auto bv = c.transposeB ? view(b.data(), c.k, c.n, 1, c.k) : view(b.data(), c.k, c.n, c.n, 1);
    auto cv = view(out.data(), c.m, c.n, c.n, 1);
    modelc_sgemm_ciface(&av, &bv, &cv);
    for (size_t i = 0; i < out.size(); ++i)
      ASSERT_NEAR(out[i], expected[i], 1e-4) << c.m << "x" << c.n << "x" << c.k << " at " << i;
  }
}

TEST_P(GemmKernelTest, EpiloguesMatchTheDefinition) {
  ForcedKernel forced(GetParam());
  for (const EpilogueCase &e : epilogues)
    for (Case c : {Case{1, 96, 50, true}, Case{33, 40, 24, true}, Case{64, 256, 100, false}}) {
      std::vector<float> a = randomValues(size_t(c.m * c.k), 4),
                         b = randomValues(size_t(c.k * c.n), 5),
                         bias = randomValues(size_t(c.n), 6),
                         residual = randomValues(size_t(c.m * c.n), 7), out(size_t(c.m * c.n), NAN);
      auto av = view(a.data(), c.m, c.k, c.k, 1);
      auto bv = c.transposeB ? view(b.data(), c.k, c.n, 1, c.k) : view(b.data(), c.k, c.n, c.n, 1);
      auto cv = view(out.data(), c.m, c.n, c.n, 1);
      // Operands in the order the Add steps read them: the bias row (row
      // stride 0) first when the code starts with an Add, then the residual.
      auto biasView = view(bias.data(), c.m, c.n, 0, 1);
      auto residualView = view(residual.data(), c.m, c.n, c.n, 1);
      bool startsWithAdd = (e.code & 0xf) == 1;
      StridedMemRefType<float, 2> *x0 = startsWithAdd ? &biasView : &residualView;
      modelc_matmul_epilogue_ciface(&av, &bv, &cv, x0, &residualView, e.code);
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          double want =
              e.reference(productElement(c, a, b, i, j), startsWithAdd ? bias[size_t(j)] : 0.0,
                          residual[size_t(i * c.n + j)]);
          ASSERT_NEAR(out[size_t(i * c.n + j)], want, 1e-4)
              << e.name << " " << c.m << "x" << c.n << "x" << c.k << " at " << i << "," << j;
        }
    }
}

// kEpilogueConstantB: B is the same on every call. A kernel that keeps B in
// its own layout (oneDNN's matmul) reads that copy until
// forgetConstantWeights drops it, even when B's values change (the caller
// promises they do not); the others read B as it is.
TEST_P(GemmKernelTest, ConstantWeightsAreKeptUntilForgotten) {
  ForcedKernel forced(GetParam());
  for (Case c : {Case{33, 64, 48, true}, Case{64, 256, 100, false}}) {
    std::vector<float> a = randomValues(size_t(c.m * c.k), 8),
                       b = randomValues(size_t(c.k * c.n), 9), bias = randomValues(size_t(c.n), 10),
                       out(size_t(c.m * c.n), NAN);
    auto av = view(a.data(), c.m, c.k, c.k, 1);
    auto bv = c.transposeB ? view(b.data(), c.k, c.n, 1, c.k) : view(b.data(), c.k, c.n, c.n, 1);
    auto cv = view(out.data(), c.m, c.n, c.n, 1);
    auto biasView = view(bias.data(), c.m, c.n, 0, 1);
    int64_t code = 1 | 2 << 4 | kEpilogueConstantB; // bias + ReLU
    auto run = [&] {
      modelc_matmul_epilogue_ciface(&av, &bv, &cv, &biasView, &biasView, code);
      return out;
    };
    auto expected = [&] {
      std::vector<float> want(out.size());
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j)
          want[size_t(i * c.n + j)] =
              float(std::max(productElement(c, a, b, i, j) + bias[size_t(j)], 0.0));
      return want;
    };
    auto expectClose = [&](const std::vector<float> &got, const std::vector<float> &want,
                           const char *what) {
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-4) << what << " " << c.m << "x" << c.n << " at " << i;
    };
    std::vector<float> first = expected();
    expectClose(run(), first, "first call");
    std::vector<float> changed = randomValues(b.size(), 11);
    std::copy(changed.begin(), changed.end(), b.begin()); // same buffer, new values
    std::vector<float> second = expected(), stale = run();
    size_t bytes = b.size() * sizeof(float);
    bool kept = forgetConstantWeights(b.data(), bytes) > 0;
    expectClose(stale, kept ? first : second, kept ? "kept copy" : "B read in place");
    expectClose(run(), second, "after forgetting");
    forgetConstantWeights(b.data(), bytes);
  }
}

// One square weight read as W and as W.T (tied weights), both constant:
// each reading has its own kept copy (the copies are per weight buffer and
// layout, shared by the primitives of every batch size).
TEST_P(GemmKernelTest, ASquareWeightReadBothWaysKeepsBothMeanings) {
  ForcedKernel forced(GetParam());
  for (int64_t m : {int64_t(5), int64_t(32)}) {
    Case plain{m, 48, 48, false}, transposed{m, 48, 48, true};
    std::vector<float> a = randomValues(size_t(m * 48), 12), b = randomValues(48 * 48, 13),
                       bias = randomValues(48, 14), out(size_t(m * 48), NAN);
    auto av = view(a.data(), m, 48, 48, 1);
    auto cv = view(out.data(), m, 48, 48, 1);
    auto biasView = view(bias.data(), m, 48, 0, 1);
    for (const Case &c : {plain, transposed, plain}) {
      auto bv = c.transposeB ? view(b.data(), 48, 48, 1, 48) : view(b.data(), 48, 48, 48, 1);
      modelc_matmul_epilogue_ciface(&av, &bv, &cv, &biasView, &biasView, 1 | kEpilogueConstantB);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < 48; ++j)
          ASSERT_NEAR(out[size_t(i * 48 + j)], productElement(c, a, b, i, j) + bias[size_t(j)],
                      1e-4)
              << (c.transposeB ? "W.T" : "W") << " rows " << m << " at " << i << "," << j;
    }
  }
  forgetConstantWeights(nullptr, SIZE_MAX); // every copy: b's memory goes
}

std::string kernelTestName(const ::testing::TestParamInfo<GemmKernel> &info) {
  std::string name = gemmKernelName(info.param).str();
  for (char &ch : name)
    if (ch == '-')
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, GemmKernelTest, ::testing::ValuesIn(availableGemmKernels()),
                         kernelTestName);

TEST(GemmChoiceTest, NamesRoundTrip) {
  for (GemmKernel kernel : {GemmKernel::Auto, GemmKernel::OneDnnMatmul, GemmKernel::OneDnnSgemm,
                            GemmKernel::OpenBlas, GemmKernel::Loops})
    EXPECT_EQ(parseGemmKernel(gemmKernelName(kernel)), kernel);
  EXPECT_FALSE(parseGemmKernel("mkl").has_value());
}

TEST(GemmChoiceTest, MeasuresOncePerShapeClassAndKeepsTheChoiceOnDisk) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("modelc-gemm-choice", dir));
  ASSERT_EQ(setenv("MODELC_CACHE_DIR", dir.c_str(), 1), 0);
  ForcedKernel measuring(GemmKernel::Auto);
  assumeLoadAverage(0.0); // a quiet machine, whatever runs beside the test
  clearGemmChoices();
  std::string file = gemmChoiceFile();
  EXPECT_TRUE(llvm::StringRef(file).starts_with(dir.str())) << file;

  int64_t m = 48, n = 64, k = 96;
  std::vector<float> a = randomValues(size_t(m * k), 8), b = randomValues(size_t(k * n), 9),
                     out(size_t(m * n), 0.0f);
  auto av = view(a.data(), m, k, k, 1), bv = view(b.data(), k, n, n, 1),
       cv = view(out.data(), m, n, n, 1);
  EXPECT_EQ(measuredGemmKernel(m, n, k), GemmKernel::Auto);
  modelc_sgemm_ciface(&av, &bv, &cv);
  GemmKernel chosen = measuredGemmKernel(m, n, k);
  EXPECT_NE(chosen, GemmKernel::Auto);
  EXPECT_NE(chosen, GemmKernel::Loops); // the reference is never measured in
  // 40 x 60 x 90 rounds up to the same class: no second measurement.
  EXPECT_EQ(measuredGemmKernel(40, 60, 90), chosen);

  auto text = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(bool(text)) << file;
  EXPECT_NE((*text)->getBuffer().find(gemmKernelName(chosen)), llvm::StringRef::npos);

  // A fresh process (simulated: forget, then read the file) reuses it; in
  // another cache directory nothing is known.
  clearGemmChoices();
  EXPECT_EQ(measuredGemmKernel(m, n, k), chosen);
  llvm::SmallString<128> other(dir);
  llvm::sys::path::append(other, "elsewhere");
  ASSERT_EQ(setenv("MODELC_CACHE_DIR", other.c_str(), 1), 0);
  clearGemmChoices();
  EXPECT_EQ(measuredGemmKernel(m, n, k), GemmKernel::Auto);
  unsetenv("MODELC_CACHE_DIR");
  assumeLoadAverage(std::nullopt);
  clearGemmChoices();
  llvm::sys::fs::remove_directories(dir);
}

TEST(GemmChoiceTest, ChoicesMeasuredOnABusyMachineAreUsedButNotSaved) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("modelc-gemm-busy", dir));
  ASSERT_EQ(setenv("MODELC_CACHE_DIR", dir.c_str(), 1), 0);
  ForcedKernel measuring(GemmKernel::Auto);
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  assumeLoadAverage(double(cores) + 4.0);
  EXPECT_TRUE(machineBusyForMeasuring());
  clearGemmChoices();
  std::string file = gemmChoiceFile();

  auto multiply = [](int64_t m, int64_t n, int64_t k) {
    std::vector<float> a = randomValues(size_t(m * k), 10), b = randomValues(size_t(k * n), 11),
                       out(size_t(m * n), 0.0f);
    auto av = view(a.data(), m, k, k, 1), bv = view(b.data(), k, n, n, 1),
         cv = view(out.data(), m, n, n, 1);
    modelc_sgemm_ciface(&av, &bv, &cv);
  };
  multiply(24, 40, 56);
  GemmKernel busyChoice = measuredGemmKernel(24, 40, 56);
  EXPECT_NE(busyChoice, GemmKernel::Auto);           // this process uses it...
  EXPECT_FALSE(llvm::sys::fs::exists(file)) << file; // ...and keeps it off disk

  // Quiet again: the next measurement is saved, the busy one still is not.
  assumeLoadAverage(0.0);
  EXPECT_FALSE(machineBusyForMeasuring());
  multiply(200, 300, 400);
  auto text = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(bool(text)) << file;
  llvm::SmallVector<llvm::StringRef> lines;
  (*text)->getBuffer().split(lines, '\n', -1, false);
  EXPECT_EQ(lines.size(), 2u) << (*text)->getBuffer().str(); // the header and the quiet choice
  clearGemmChoices();
  EXPECT_EQ(measuredGemmKernel(24, 40, 56), GemmKernel::Auto);
  EXPECT_NE(measuredGemmKernel(200, 300, 400), GemmKernel::Auto);

  unsetenv("MODELC_CACHE_DIR");
  assumeLoadAverage(std::nullopt);
  clearGemmChoices();
  llvm::sys::fs::remove_directories(dir);
}

} // namespace

TEST(OpenBlasLibraryTest, CoreTypeFollowsTheCpuFeatures) {
  CpuFeatures avx512;
  avx512.avx512f = avx512.avx512cd = avx512.avx512bw = avx512.avx512dq = avx512.avx512vl = true;
  avx512.avx2 = avx512.fma = true;
  EXPECT_EQ(openBlasCoreTypeFor(avx512), "SkylakeX");
  CpuFeatures bf16 = avx512;
  bf16.avx512bf16 = true;
  EXPECT_EQ(openBlasCoreTypeFor(bf16), "Cooperlake");
  // Knights Landing style AVX-512 (no BW/DQ/VL) runs the AVX2 kernels.
  CpuFeatures partial = avx512;
  partial.avx512bw = false;
  EXPECT_EQ(openBlasCoreTypeFor(partial), "Haswell");
  CpuFeatures avx2;
  avx2.avx2 = avx2.fma = true;
  EXPECT_EQ(openBlasCoreTypeFor(avx2), "Haswell");
  avx2.fma = false;
  EXPECT_EQ(openBlasCoreTypeFor(avx2), "");
  EXPECT_EQ(openBlasCoreTypeFor(CpuFeatures()), "");
}

// OpenBLAS's own detection names SSE3 Prescott kernels on CPUs it does not
// know (a VM reporting "Intel Xeon Processor"): the runtime loads it with the
// kernels the CPU's features allow instead.
TEST(OpenBlasLibraryTest, LoadedWithTheKernelsThisCpuRuns) {
  const OpenBlasLibrary *blas = openBlasLibrary();
  if (!blas)
    GTEST_SKIP() << "no OpenBLAS in this build or on this machine";
  if (const char *user = std::getenv("OPENBLAS_CORETYPE"); user && *user) {
    // The user's choice is obeyed (OpenBLAS maps names it lacks itself).
    EXPECT_NE(blas->coreOrigin.find("environment"), std::string::npos) << blas->coreOrigin;
    return;
  }
  std::string expected = openBlasCoreTypeFor(CpuFeatures::ofThisCpu());
  if (expected.empty())
    GTEST_SKIP() << "a CPU without AVX2: OpenBLAS's detection decides";
  EXPECT_EQ(openBlasCoreName(), expected) << blas->coreOrigin;
  EXPECT_EQ(std::getenv("OPENBLAS_CORETYPE"), nullptr)
      << "the variable is set only while OpenBLAS loads";
  EXPECT_NE(cpuKernelLibraries().find(openBlasCoreName() + " kernels"), std::string::npos)
      << cpuKernelLibraries();
}
