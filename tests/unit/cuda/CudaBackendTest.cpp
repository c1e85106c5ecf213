//===- CudaBackendTest.cpp - The driver/emulator facade -------------------===//

#include "CudaTestSupport.h"

#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/Nvrtc.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace modelc::cuda;
using namespace modelc::cuda::test;

namespace {

/// Runs vector_add on `backend`'s `device` through the generic interface.
void runVectorAdd(CudaBackend &backend, int device, bool checkResult) {
  const int n = 300;
  std::vector<float> a(n), b(n), c(n, 0.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.begin(), b.end(), 1000.0f);
  llvm::Expected<DeviceAddress> da = backend.allocate(device, n * sizeof(float));
  llvm::Expected<DeviceAddress> db = backend.allocate(device, n * sizeof(float));
  llvm::Expected<DeviceAddress> dc = backend.allocate(device, n * sizeof(float));
  ASSERT_TRUE(da && db && dc);
  ASSERT_OK(backend.copyHostToDevice(device, *da, a.data(), n * sizeof(float)));
  ASSERT_OK(backend.copyHostToDevice(device, *db, b.data(), n * sizeof(float)));
  llvm::Expected<CudaKernel> kernel =
      backend.loadKernel(device, readKernel("vector_add.cu"), "vector_add.cu", "vector_add");
  ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
  int count = n;
  void *args[] = {&*da, &*db, &*dc, &count};
  ASSERT_OK(backend.launch(*kernel, {(n + 127) / 128}, {128}, args));
  ASSERT_OK(backend.copyDeviceToHost(device, c.data(), *dc, n * sizeof(float)));
  if (checkResult) {
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(c[i], a[i] + b[i]) << i;
  }
  for (DeviceAddress address : {*da, *db, *dc})
    ASSERT_OK(backend.free(device, address));
}

TEST(CudaBackend, EmulatorRunsKernelsFromSource) {
  EmulatorOptions options;
  options.deviceCount = 2;
  Emulator emulator(options);
  std::unique_ptr<CudaBackend> backend = makeEmulatorBackend(emulator);
  EXPECT_EQ(backend->name(), "emulator");
  runVectorAdd(*backend, 1, /*checkResult=*/true);
  EXPECT_EQ(emulator.liveAllocations(), 0u);
  Failure missing = failureOf(
      backend->loadKernel(0, readKernel("vector_add.cu"), "vector_add.cu", "nope").takeError());
  EXPECT_EQ(missing.kind, CudaErrorKind::KernelNotFound);
}

TEST(CudaBackend, EmulateSwitchSelectsTheEmulator) {
  ScopedEnvironment emulate("MODELC_CUDA", std::string("emulate"));
  llvm::Expected<CudaBackend &> backend = CudaBackend::forDevice(0);
  ASSERT_TRUE(bool(backend)) << llvm::toString(backend.takeError());
  EXPECT_EQ(backend->name(), "emulator");
  Failure beyond = failureOf(CudaBackend::forDevice(7).takeError());
  EXPECT_EQ(beyond.kind, CudaErrorKind::NoSuchDevice);
  EXPECT_NE(beyond.text.find("cuda:7 does not exist"), std::string::npos) << beyond.text;
}

TEST(CudaBackend, WithoutTheSwitchAMissingDriverIsTheError) {
  ScopedEnvironment driverMode("MODELC_CUDA", std::nullopt);
  ScopedEnvironment library("MODELC_CUDA_DRIVER_LIBRARY", std::nullopt);
  if (CudaDriver::open("libcuda.so.1"))
    GTEST_SKIP() << "a CUDA driver is installed here: the no-driver path cannot be shown";
  Failure failure = failureOf(CudaBackend::forDevice(1).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::DriverNotFound);
  EXPECT_EQ(failure.text.rfind("no CUDA driver found: cuda:1 needs an NVIDIA GPU (set "
                               "MODELC_CUDA=emulate to run on the CPU emulator)",
                               0),
            0u)
      << failure.text;
}

TEST(CudaBackend, DriverCompilesACubinForTheGpuAndLaunchesIt) {
  llvm::Expected<Nvrtc &> nvrtc = Nvrtc::get();
  if (!nvrtc)
    GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
  ScopedEnvironment devices("MODELC_FAKE_CUDA_DEVICES", std::string("1"));
  ScopedEnvironment init("MODELC_FAKE_CUDA_INIT_RESULT", std::string("0"));
  llvm::Expected<std::unique_ptr<CudaDriver>> driver = CudaDriver::open(MODELC_FAKE_CUDA_DRIVER);
  ASSERT_TRUE(bool(driver)) << llvm::toString(driver.takeError());
  TemporaryDirectory dir;
  KernelCache cache(dir.path());
  std::unique_ptr<CudaBackend> backend = makeDriverBackend(**driver, cache);
  EXPECT_EQ(backend->name(), "driver");
  // The fake runs no kernels, so only the plumbing is checked: a CUBIN for
  // the fake's sm_90, its module loaded, its function found and launched.
  runVectorAdd(*backend, 0, /*checkResult=*/false);
  EXPECT_EQ(cache.stats().misses, 1u);
  EXPECT_EQ(failureOf(backend->allocate(1, 4).takeError()).text,
            "cuda:1 does not exist: this machine has 1 GPU");
}

} // namespace
