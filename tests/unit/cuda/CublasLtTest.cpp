//===- CublasLtTest.cpp - cuBLASLt through dlopen, against a fake ---------===//
//
// The wrapper's refusals (missing, incomplete or too old libraries) and its
// calls, run through the driver backend on the fake libcuda with the fake
// libcublasLt (FakeCublasLt.cpp), which computes each product in float64:
// the tests compare numbers with a reference written here and check the
// descriptors the library was given.
//
//===----------------------------------------------------------------------===//

#include "CudaTestSupport.h"
#include "FakeCublasLt.h"

#include "runtime/Float16.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/KernelCache.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <random>

namespace modelc::cuda {
namespace {

using test::failureOf;
using test::ScopedEnvironment;

TEST(CublasLt, AMissingLibraryIsRefusedWithTheReason) {
  test::Failure failure = failureOf(CublasLt::open("/nonexistent/libcublasLt.so.13").takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryNotFound);
  EXPECT_NE(failure.text.find("cuBLASLt is not used: cannot open /nonexistent/libcublasLt.so.13"),
            std::string::npos)
      << failure.text;
}

TEST(CublasLt, ALibraryWithoutItsEntryPointsIsRefused) {
  test::Failure failure = failureOf(CublasLt::open(MODELC_FAKE_CUDA_DRIVER).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryNotFound);
  EXPECT_NE(failure.text.find("lacks cublasLtGetVersion, cublasLtGetStatusName"), std::string::npos)
      << failure.text;
}

TEST(CublasLt, ATooOldLibraryIsRefused) {
  ScopedEnvironment old("MODELC_FAKE_CUBLASLT_VERSION", "110800");
  test::Failure failure = failureOf(CublasLt::open(MODELC_FAKE_CUBLASLT).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryNotFound);
  EXPECT_NE(failure.text.find("is version 11.8.0; modelc needs 12.0 or newer"), std::string::npos)
      << failure.text;
}

TEST(CublasLt, TheLibraryNamesComeFromTheEnvironment) {
  {
    ScopedEnvironment unset("MODELC_CUBLASLT_LIBRARY", std::nullopt);
    EXPECT_EQ(
        CublasLt::defaultLibraries(),
        (std::vector<std::string>{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}));
  }
  {
    ScopedEnvironment none("MODELC_CUBLASLT_LIBRARY", "none");
    EXPECT_TRUE(CublasLt::defaultLibraries().empty());
  }
  ScopedEnvironment path("MODELC_CUBLASLT_LIBRARY", "/opt/x/libcublasLt.so.13");
  EXPECT_EQ(CublasLt::defaultLibraries(), std::vector<std::string>{"/opt/x/libcublasLt.so.13"});
}

TEST(CublasLt, TheEmulatorHasNone) {
  Emulator emulator{EmulatorOptions{}};
  std::unique_ptr<CudaBackend> backend = makeEmulatorBackend(emulator);
  test::Failure failure = failureOf(backend->cublasLt(0).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryNotFound);
  EXPECT_EQ(failure.text, "cuBLASLt is not used: the emulator has no cuBLASLt");
}

/// Column-major storage of one matrix operand on the fake device.
struct Matrix {
  LtType type = LtType::F32;
  int64_t rows = 0, cols = 0, ld = 0, batch = 1, stride = 0;
  std::vector<double> values; ///< as stored (rounded to `type`), by element index

  size_t elements() const { return size_t((batch - 1) * stride + (cols - 1) * ld + rows); }
  double at(int64_t b, int64_t row, int64_t col) const {
    return values[size_t(b * stride + col * ld + row)];
  }
};

double roundTo(LtType type, double value) {
  switch (type) {
  case LtType::F32:
    return float(value);
  case LtType::F16:
    return runtime::halfBitsToFloat(runtime::floatToHalfBits(float(value)));
  case LtType::BF16:
    return runtime::bfloat16BitsToFloat(runtime::floatToBFloat16Bits(float(value)));
  }
  return value;
}

class FakeCublasLtTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::Expected<std::unique_ptr<CudaDriver>> opened = CudaDriver::open(MODELC_FAKE_CUDA_DRIVER);
    ASSERT_TRUE(bool(opened)) << llvm::toString(opened.takeError());
    driver = std::move(*opened);
    llvm::Expected<std::unique_ptr<CublasLt>> lt = CublasLt::open(MODELC_FAKE_CUBLASLT);
    ASSERT_TRUE(bool(lt)) << llvm::toString(lt.takeError());
    library = std::move(*lt);
    backend = makeDriverBackend(*driver, KernelCache::global(),
                                [this]() -> llvm::Expected<const CublasLt &> { return *library; });
    void *fake = dlopen(MODELC_FAKE_CUBLASLT, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(fake, nullptr);
    lastCall = reinterpret_cast<bool (*)(fake::LtCall *)>(dlsym(fake, "modelc_fake_cublaslt_last"));
    void *cuda = dlopen(MODELC_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    calls = reinterpret_cast<int (*)(const char *)>(dlsym(cuda, "modelc_fake_cuda_calls"));
    ASSERT_TRUE(lastCall && calls);
  }

  void TearDown() override {
    for (DeviceAddress address : allocations)
      llvm::consumeError(backend->free(0, address));
  }

  Matrix random(LtType type, int64_t rows, int64_t cols, int64_t ld, int64_t batch = 1,
                int64_t stride = 0) {
    Matrix m{type, rows, cols, ld, batch, stride, {}};
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    m.values.resize(m.elements());
    for (double &v : m.values)
      v = roundTo(type, uniform(generator));
    return m;
  }

  /// Copies `m` to new device memory.
  DeviceAddress upload(const Matrix &m) {
    size_t size = m.type == LtType::F32 ? 4 : 2;
    std::vector<char> bytes(m.values.size() * size);
    for (size_t i = 0; i < m.values.size(); ++i) {
      if (m.type == LtType::F32) {
        float v = float(m.values[i]);
        std::memcpy(&bytes[i * 4], &v, 4);
      } else {
        uint16_t bits = m.type == LtType::F16 ? runtime::floatToHalfBits(float(m.values[i]))
                                              : runtime::floatToBFloat16Bits(float(m.values[i]));
        std::memcpy(&bytes[i * 2], &bits, 2);
      }
    }
    DeviceAddress address = allocate(bytes.size());
    EXPECT_FALSE(bool(backend->copyHostToDevice(0, address, bytes.data(), bytes.size())));
    return address;
  }

  DeviceAddress allocate(size_t bytes) {
    llvm::Expected<DeviceAddress> address = backend->allocate(0, std::max<size_t>(bytes, 1));
    EXPECT_TRUE(bool(address)) << llvm::toString(address.takeError());
    allocations.push_back(*address);
    return *address;
  }

  /// The values of an `m` x `n` x batch result with leading dim `ld`.
  std::vector<double> download(DeviceAddress address, LtType type, size_t elements) {
    size_t size = type == LtType::F32 ? 4 : 2;
    std::vector<char> bytes(elements * size);
    EXPECT_FALSE(bool(backend->copyDeviceToHost(0, bytes.data(), address, bytes.size())));
    std::vector<double> values(elements);
    for (size_t i = 0; i < elements; ++i) {
      if (type == LtType::F32) {
        float v;
        std::memcpy(&v, &bytes[i * 4], 4);
        values[i] = v;
      } else {
        uint16_t bits;
        std::memcpy(&bits, &bytes[i * 2], 2);
        values[i] = type == LtType::F16 ? runtime::halfBitsToFloat(bits)
                                        : runtime::bfloat16BitsToFloat(bits);
      }
    }
    return values;
  }

  /// Runs `p` on random operands and checks D against float64 (within
  /// `tolerance` of the result's magnitude) and the call cuBLASLt got.
  void checkProduct(const LtProblem &p, double tolerance) {
    Matrix a =
        random(p.inputType, p.transA ? p.k : p.m, p.transA ? p.m : p.k, p.lda, p.batch, p.strideA);
    Matrix b =
        random(p.inputType, p.transB ? p.n : p.k, p.transB ? p.k : p.n, p.ldb, p.batch, p.strideB);
    Matrix c = random(p.outputType, p.m, p.n, p.ldc, p.batch, p.strideC);
    Matrix bias = random(p.outputType, p.m, 1, p.m);
    LtOperands operands;
    operands.a = upload(a);
    operands.b = upload(b);
    operands.c = upload(c);
    operands.d = p.accumulate ? allocate(c.values.size() * 4) : operands.c;
    operands.bias = upload(bias);
    operands.workspaceBytes = 1 << 20;
    operands.workspace = allocate(operands.workspaceBytes);

    llvm::Expected<LtDevice> lt = backend->cublasLt(0);
    ASSERT_TRUE(bool(lt)) << llvm::toString(lt.takeError());
    llvm::Expected<std::unique_ptr<LtMatmul>> matmul = library->prepare(p);
    ASSERT_TRUE(bool(matmul)) << llvm::toString(matmul.takeError());
    llvm::Expected<std::vector<LtAlgorithm>> algorithms =
        library->algorithms(lt->handle, **matmul, operands.workspaceBytes, 4);
    ASSERT_TRUE(bool(algorithms)) << llvm::toString(algorithms.takeError());
    ASSERT_OK(backend->cublasLtMatmulAsync(0, **matmul, algorithms->back(), operands));
    ASSERT_OK(backend->synchronize(0));

    std::vector<double> d = download(operands.d, p.outputType, c.values.size());
    auto tf32 = [&](double v) {
      if (!p.tf32 || p.inputType != LtType::F32)
        return v;
      float x = float(v);
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      bits = (bits + 0x1000u) & 0xffffe000u;
      std::memcpy(&x, &bits, 4);
      return double(x);
    };
    double worst = 0;
    for (int64_t batch = 0; batch < p.batch; ++batch)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          double sum = 0;
          for (int64_t q = 0; q < p.k; ++q)
            sum += tf32(p.transA ? a.at(batch, q, i) : a.at(batch, i, q)) *
                   tf32(p.transB ? b.at(batch, j, q) : b.at(batch, q, j));
          if (p.accumulate)
            sum += c.at(batch, i, j);
          if (ltEpilogueHasBias(p.epilogue))
            sum += bias.values[size_t(i)];
          if (p.epilogue == LtEpilogue::Relu || p.epilogue == LtEpilogue::ReluBias)
            sum = std::max(sum, 0.0);
          if (p.epilogue == LtEpilogue::Gelu || p.epilogue == LtEpilogue::GeluBias)
            sum = 0.5 * sum *
                  (1 + std::tanh(0.7978845608028654 * (sum + 0.044715 * sum * sum * sum)));
          double got = d[size_t(batch * p.strideC + j * p.ldc + i)];
          worst = std::max(worst, std::abs(got - sum) / (1 + std::abs(sum)));
        }
    EXPECT_LE(worst, tolerance) << p.str();

    fake::LtCall call;
    ASSERT_TRUE(lastCall(&call));
    EXPECT_EQ(call.transA, p.transA ? 1 : 0);
    EXPECT_EQ(call.transB, p.transB ? 1 : 0);
    EXPECT_EQ(call.computeType, p.tf32 && p.inputType == LtType::F32 ? 77 : 68);
    EXPECT_EQ(call.scaleType, 0);
    EXPECT_EQ(call.cRows, uint64_t(p.m));
    EXPECT_EQ(call.cCols, uint64_t(p.n));
    EXPECT_EQ(call.lda, p.lda);
    EXPECT_EQ(call.ldb, p.ldb);
    EXPECT_EQ(call.ldc, p.ldc);
    EXPECT_EQ(call.batch, int(p.batch));
    EXPECT_EQ(call.beta, p.accumulate ? 1.0f : 0.0f);
    EXPECT_EQ(call.alpha, 1.0f);
    EXPECT_EQ(call.c, p.accumulate ? operands.c : operands.d) << "without beta C is D";
    EXPECT_EQ(call.workspace, operands.workspace);
    EXPECT_FALSE(call.captured);
  }

  std::unique_ptr<CudaDriver> driver;
  std::unique_ptr<CublasLt> library;
  std::unique_ptr<CudaBackend> backend;
  bool (*lastCall)(fake::LtCall *) = nullptr;
  int (*calls)(const char *) = nullptr;
  std::vector<DeviceAddress> allocations;
  std::mt19937 generator{13};
};

LtProblem problem(int64_t m, int64_t n, int64_t k, bool transA, bool transB) {
  LtProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.transA = transA;
  p.transB = transB;
  // Leading dims with padding, so a mix-up between rows and ld shows.
  p.lda = (transA ? k : m) + 3;
  p.ldb = (transB ? n : k) + 1;
  p.ldc = m + 2;
  return p;
}

TEST_F(FakeCublasLtTest, EveryTransposeAndLeadingDimMultipliesCorrectly) {
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      checkProduct(problem(7, 5, 9, transA, transB), 1e-6);
}

TEST_F(FakeCublasLtTest, StridedBatchesIncludingABroadcastOperand) {
  LtProblem p = problem(4, 6, 5, false, true);
  p.batch = 3;
  p.strideA = p.lda * p.k + 2;
  p.strideB = 0; // one B for every batch
  p.strideC = p.ldc * p.n;
  checkProduct(p, 1e-6);
}

TEST_F(FakeCublasLtTest, EpiloguesBiasActivationsAndAResidualThroughC) {
  for (LtEpilogue epilogue : {LtEpilogue::Bias, LtEpilogue::ReluBias, LtEpilogue::GeluBias,
                              LtEpilogue::Relu, LtEpilogue::Gelu}) {
    LtProblem p = problem(8, 3, 16, true, false);
    p.epilogue = epilogue;
    checkProduct(p, 1e-6);
    fake::LtCall call;
    ASSERT_TRUE(lastCall(&call));
    uint32_t expected[] = {1, 2, 32, 4, 6, 36};
    EXPECT_EQ(call.epilogue, expected[int(epilogue)]) << ltEpilogueName(epilogue).str();
    EXPECT_EQ(call.biasType, ltEpilogueHasBias(epilogue) ? 0 : -1);
  }
  LtProblem residual = problem(8, 3, 16, false, false);
  residual.epilogue = LtEpilogue::Bias;
  residual.accumulate = true;
  checkProduct(residual, 1e-6);
}

TEST_F(FakeCublasLtTest, HalfAndBFloat16AccumulateInF32) {
  for (LtType type : {LtType::F16, LtType::BF16}) {
    LtProblem p = problem(6, 5, 12, true, false);
    p.inputType = p.outputType = type;
    p.epilogue = LtEpilogue::ReluBias;
    checkProduct(p, type == LtType::F16 ? 1e-3 : 8e-3);
    fake::LtCall call;
    ASSERT_TRUE(lastCall(&call));
    int code = type == LtType::F16 ? 2 : 14;
    EXPECT_EQ(call.aType, code);
    EXPECT_EQ(call.dType, code);
    EXPECT_EQ(call.biasType, code);
    EXPECT_EQ(call.computeType, 68) << "16-bit inputs accumulate in exact f32";
  }
}

TEST_F(FakeCublasLtTest, TF32OnlyWhenAskedAndThenRounded) {
  LtProblem p = problem(5, 5, 64, false, false);
  p.tf32 = true;
  checkProduct(p, 1e-6); // against a reference with TF32 inputs
}

TEST_F(FakeCublasLtTest, OneHandlePerDeviceMadeInItsContext) {
  int before = calls("cublasLtCreate");
  ASSERT_TRUE(bool(backend->cublasLt(0)));
  ASSERT_TRUE(bool(backend->cublasLt(0)));
  EXPECT_EQ(calls("cublasLtCreate"), before + 1);
}

TEST_F(FakeCublasLtTest, AHandleThatCannotBeMadeIsARefusalNamingTheLibrary) {
  ScopedEnvironment failing("MODELC_FAKE_CUBLASLT_CREATE_RESULT", "1");
  test::Failure failure = failureOf(backend->cublasLt(0).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryNotFound);
  EXPECT_NE(failure.text.find("cuBLASLt is not used on cuda:0: cublasLtCreate failed: "
                              "CUBLAS_STATUS_NOT_INITIALIZED"),
            std::string::npos)
      << failure.text;
}

TEST_F(FakeCublasLtTest, TheHeuristicStaysWithinTheWorkspace) {
  llvm::Expected<LtDevice> lt = backend->cublasLt(0);
  ASSERT_TRUE(bool(lt));
  llvm::Expected<std::unique_ptr<LtMatmul>> matmul =
      library->prepare(problem(4, 4, 4, false, false));
  ASSERT_TRUE(bool(matmul));
  llvm::Expected<std::vector<LtAlgorithm>> some =
      library->algorithms(lt->handle, **matmul, 100 * 1024, 8);
  ASSERT_TRUE(bool(some));
  ASSERT_EQ(some->size(), 2u); // the fake's algorithms need 0, 64 KiB, 128 KiB
  EXPECT_EQ(some->at(1).workspaceBytes, 64u * 1024);
  llvm::Expected<std::vector<LtAlgorithm>> all =
      library->algorithms(lt->handle, **matmul, 1 << 20, 8);
  ASSERT_TRUE(bool(all));
  EXPECT_EQ(all->size(), 3u);
}

TEST_F(FakeCublasLtTest, ALayoutThatDisagreesWithTheProblemIsRefused) {
  llvm::Expected<LtDevice> lt = backend->cublasLt(0);
  ASSERT_TRUE(bool(lt));
  LtProblem p = problem(4, 4, 4, false, false);
  p.ldc = 2; // shorter than a column
  llvm::Expected<std::unique_ptr<LtMatmul>> matmul = library->prepare(p);
  ASSERT_TRUE(bool(matmul));
  test::Failure failure = failureOf(library->algorithms(lt->handle, **matmul, 0, 4).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryCallFailed);
  EXPECT_NE(failure.text.find("cublasLtMatmulAlgoGetHeuristic failed: CUBLAS_STATUS_NOT_SUPPORTED"),
            std::string::npos)
      << failure.text;
}

TEST_F(FakeCublasLtTest, AFailedCallNamesTheFunctionAndStatus) {
  llvm::Expected<LtDevice> lt = backend->cublasLt(0);
  ASSERT_TRUE(bool(lt));
  LtProblem p = problem(2, 2, 2, false, false);
  llvm::Expected<std::unique_ptr<LtMatmul>> matmul = library->prepare(p);
  ASSERT_TRUE(bool(matmul));
  ScopedEnvironment failing("MODELC_FAKE_CUBLASLT_MATMUL_RESULT", "15");
  LtOperands operands;
  test::Failure failure =
      failureOf(backend->cublasLtMatmulAsync(0, **matmul, LtAlgorithm{}, operands));
  EXPECT_EQ(failure.kind, CudaErrorKind::LibraryCallFailed);
  EXPECT_EQ(failure.text, "cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED: the functionality "
                          "requested is not supported");
}

TEST_F(FakeCublasLtTest, EventsTimeTheWorkOnTheStream) {
  ScopedEnvironment slow("MODELC_FAKE_CUBLASLT_US", "250");
  LtProblem p = problem(2, 2, 2, false, false);
  p.ldc = 2;
  p.lda = p.ldb = 2;
  llvm::Expected<std::unique_ptr<LtMatmul>> matmul = library->prepare(p);
  ASSERT_TRUE(bool(matmul));
  LtOperands operands;
  operands.a = operands.b = operands.d = allocate(16);
  llvm::Expected<double> milliseconds = backend->timeOnStream(0, [&]() -> llvm::Error {
    for (int i = 0; i < 4; ++i)
      if (llvm::Error error = backend->cublasLtMatmulAsync(0, **matmul, LtAlgorithm{}, operands))
        return error;
    return llvm::Error::success();
  });
  ASSERT_TRUE(bool(milliseconds)) << llvm::toString(milliseconds.takeError());
  EXPECT_DOUBLE_EQ(*milliseconds, 1.0);
}

} // namespace
} // namespace modelc::cuda
