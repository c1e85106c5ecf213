//===- DriverTest.cpp - The CUDA driver wrapper without a GPU -------------===//
//
// The no-driver path runs for real on this machine (no libcuda.so.1); the
// toolkit's stub libcuda must be refused as "no driver"; and a fake driver
// (FakeCudaDriver.cpp) exercises dlopen + cuGetProcAddress_v2, contexts,
// memory, modules, launches and the device-index errors. What cannot run
// here is the real driver on a real GPU.
//
//===----------------------------------------------------------------------===//

#include "CudaTestSupport.h"

#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/Nvrtc.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace modelc::cuda;
using namespace modelc::cuda::test;

namespace {

const char *const NoDriverMessage =
    "no CUDA driver found: cuda:0 needs an NVIDIA GPU (set MODELC_CUDA=emulate to run on the "
    "CPU emulator)";

TEST(CudaDriver, NoDriverOnThisMachineIsAClearError) {
  llvm::Expected<std::unique_ptr<CudaDriver>> driver = CudaDriver::open("libcuda.so.1");
  if (driver)
    GTEST_SKIP() << "a CUDA driver is installed here: the no-driver path cannot be shown";
  Failure failure = failureOf(driver.takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::DriverNotFound);
  EXPECT_EQ(failure.text.rfind(NoDriverMessage, 0), 0u) << failure.text;
}

TEST(CudaDriver, ProcessWideDriverNamesTheRequestedDevice) {
  ScopedEnvironment unforced("MODELC_CUDA_DRIVER_LIBRARY", std::nullopt);
  if (CudaDriver::open("libcuda.so.1"))
    GTEST_SKIP() << "a CUDA driver is installed here: the no-driver path cannot be shown";
  for (int device : {0, 2}) {
    Failure failure = failureOf(CudaDriver::forDevice(device).takeError());
    EXPECT_EQ(failure.kind, CudaErrorKind::DriverNotFound);
    EXPECT_NE(failure.text.find("no CUDA driver found: cuda:" + std::to_string(device) +
                                " needs an NVIDIA GPU"),
              std::string::npos)
        << failure.text;
  }
}

TEST(CudaDriver, ToolkitStubIsNotADriver) {
  std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!llvm::sys::fs::exists(stub))
    GTEST_SKIP() << "the CUDA toolkit's stub libcuda.so is not installed at " << stub;
  Failure failure = failureOf(CudaDriver::open(stub).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::DriverNotFound);
  EXPECT_EQ(failure.text.rfind(NoDriverMessage, 0), 0u) << failure.text;
  EXPECT_NE(failure.text.find("stub"), std::string::npos) << failure.text;
}

TEST(CudaDriver, LibraryWithoutTheEntryPointsIsRefused) {
  // The fake NVRTC-free test binary's own C library has no cuInit.
  Failure failure = failureOf(CudaDriver::open("libm.so.6").takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::DriverNotFound);
  EXPECT_NE(failure.text.find("lacks cuInit or cuGetProcAddress_v2"), std::string::npos)
      << failure.text;
}

class FakeDriverTest : public ::testing::Test {
protected:
  std::unique_ptr<CudaDriver> openFake(int devices, int initResult = 0) {
    ScopedEnvironment count("MODELC_FAKE_CUDA_DEVICES", std::to_string(devices));
    ScopedEnvironment init("MODELC_FAKE_CUDA_INIT_RESULT", std::to_string(initResult));
    llvm::Expected<std::unique_ptr<CudaDriver>> driver = CudaDriver::open(MODELC_FAKE_CUDA_DRIVER);
    if (!driver) {
      ADD_FAILURE() << llvm::toString(driver.takeError());
      return nullptr;
    }
    return std::move(*driver);
  }
};

TEST_F(FakeDriverTest, DeviceIndexBeyondTheGpusPresent) {
  std::unique_ptr<CudaDriver> driver = openFake(1);
  ASSERT_TRUE(driver);
  EXPECT_EQ(driver->deviceCount(), 1);
  EXPECT_EQ(driver->driverVersion(), 13000);
  Failure failure = failureOf(driver->allocate(3, 16).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::NoSuchDevice);
  EXPECT_EQ(failure.text, "cuda:3 does not exist: this machine has 1 GPU");

  std::unique_ptr<CudaDriver> two = openFake(2);
  ASSERT_TRUE(two);
  EXPECT_EQ(failureOf(two->checkDevice(2)).text, "cuda:2 does not exist: this machine has 2 GPUs");
  EXPECT_EQ(failureOf(two->checkDevice(-1)).kind, CudaErrorKind::NoSuchDevice);
}

TEST_F(FakeDriverTest, DriverWithoutGpusAndStubResultsAreReported) {
  std::unique_ptr<CudaDriver> none = openFake(1, /*CUDA_ERROR_NO_DEVICE=*/100);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->deviceCount(), 0);
  Failure failure = failureOf(none->checkDevice(0));
  EXPECT_EQ(failure.kind, CudaErrorKind::NoSuchDevice);
  EXPECT_NE(failure.text.find("cuda:0 does not exist: this machine has 0 GPUs"), std::string::npos)
      << failure.text;

  ScopedEnvironment stub("MODELC_FAKE_CUDA_INIT_RESULT", std::string("34"));
  Failure stubFailure = failureOf(CudaDriver::open(MODELC_FAKE_CUDA_DRIVER).takeError());
  EXPECT_EQ(stubFailure.kind, CudaErrorKind::DriverNotFound);
  EXPECT_NE(stubFailure.text.find("stub library"), std::string::npos) << stubFailure.text;
}

TEST_F(FakeDriverTest, DeviceInfoMemoryAndCopies) {
  std::unique_ptr<CudaDriver> driver = openFake(2);
  ASSERT_TRUE(driver);
  llvm::Expected<CudaDeviceInfo> info = driver->deviceInfo(1);
  ASSERT_TRUE(bool(info)) << llvm::toString(info.takeError());
  EXPECT_EQ(info->name, "Fake GPU 1");
  EXPECT_EQ(info->arch(), "sm_90");
  EXPECT_EQ(info->warpSize, 32);
  EXPECT_EQ(info->maxThreadsPerBlock, 1024);
  EXPECT_EQ(info->totalMemory, size_t(80) << 30);

  std::vector<int> values(256), back(256, 0);
  std::iota(values.begin(), values.end(), 1);
  llvm::Expected<DevicePointer> a = driver->allocate(0, 1024);
  llvm::Expected<DevicePointer> b = driver->allocate(0, 1024);
  llvm::Expected<DevicePointer> c = driver->allocate(1, 1024);
  ASSERT_TRUE(a && b && c);
  ASSERT_OK(driver->copyHostToDevice(0, *a, values.data(), 1024));
  ASSERT_OK(driver->copyDeviceToDevice(0, *b, *a, 1024));
  ASSERT_OK(driver->copyPeer(1, *c, 0, *b, 1024));
  ASSERT_OK(driver->copyDeviceToHost(1, back.data(), *c, 1024));
  EXPECT_EQ(back, values);

  Failure overrun = failureOf(driver->copyHostToDevice(0, *a, values.data(), 2048));
  EXPECT_EQ(overrun.kind, CudaErrorKind::DriverCallFailed);
  EXPECT_EQ(overrun.text,
            "cuda:0: cuMemcpyHtoD failed: CUDA_ERROR_INVALID_VALUE: invalid argument");
  ASSERT_OK(driver->free(0, *a));
  EXPECT_EQ(failureOf(driver->free(0, *a)).kind, CudaErrorKind::DriverCallFailed);
  ASSERT_OK(driver->free(0, *b));
  ASSERT_OK(driver->free(1, *c));
}

TEST_F(FakeDriverTest, ModulesFunctionsStreamsAndLaunches) {
  std::unique_ptr<CudaDriver> driver = openFake(1);
  ASSERT_TRUE(driver);
  // PTX from NVRTC where it exists; a minimal hand-written module otherwise.
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n"
                    ".visible .entry vector_add()\n{\n ret;\n}\n";
  if (llvm::Expected<Nvrtc &> nvrtc = Nvrtc::get()) {
    std::string source = readKernel("vector_add.cu");
    NvrtcRequest request;
    request.source = source;
    request.arch = "sm_90";
    llvm::Expected<std::string> compiled = nvrtc->compile(request);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    ptx = *compiled;
  } else {
    llvm::consumeError(nvrtc.takeError());
  }
  llvm::Expected<driver::CUmodule> module = driver->loadModule(0, ptx);
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::Expected<driver::CUfunction> function = driver->getFunction(0, *module, "vector_add");
  ASSERT_TRUE(bool(function)) << llvm::toString(function.takeError());
  Failure missing = failureOf(driver->getFunction(0, *module, "no_such_kernel").takeError());
  EXPECT_EQ(missing.kind, CudaErrorKind::KernelNotFound);
  EXPECT_NE(missing.text.find("no kernel named 'no_such_kernel'"), std::string::npos);

  llvm::Expected<driver::CUstream> stream = driver->createStream(0);
  ASSERT_TRUE(bool(stream)) << llvm::toString(stream.takeError());
  DevicePointer pointer = 0;
  int n = 0;
  void *args[] = {&pointer, &pointer, &pointer, &n};
  ASSERT_OK(driver->launch(0, *function, {1}, {128}, 0, *stream, args));
  ASSERT_OK(driver->synchronizeStream(0, *stream));
  Failure badBlock = failureOf(driver->launch(0, *function, {1}, {2048}, 0, *stream, args));
  EXPECT_EQ(badBlock.kind, CudaErrorKind::DriverCallFailed);
  EXPECT_NE(badBlock.text.find("cuLaunchKernel failed"), std::string::npos) << badBlock.text;
  ASSERT_OK(driver->destroyStream(0, *stream));
  ASSERT_OK(driver->synchronize(0));
  ASSERT_OK(driver->unloadModule(0, *module));

  Failure notAnImage = failureOf(driver->loadModule(0, "this is no PTX").takeError());
  EXPECT_EQ(notAnImage.kind, CudaErrorKind::DriverCallFailed);
  EXPECT_NE(notAnImage.text.find("CUDA_ERROR_INVALID_IMAGE"), std::string::npos);
}

} // namespace
