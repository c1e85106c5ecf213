//===- PlanExecutorTest.cpp - Running hand-written plans on emulated GPUs -===//

#include "cudaexec/PlanExecutor.h"

#include "cudaexec/JitCpuRegions.h"

#include "runtime/MachineLoad.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/emulator/Emulator.h"

#include "tests/unit/cuda/FakeCublasLt.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <map>

using namespace modelc;
using namespace modelc::cudaexec;
using cudagen::Buffer;
using cudagen::BufferId;
using cudagen::BufferKind;
using cudagen::DevicePlan;
using cudagen::SizeExpr;

namespace {

/// Kernels of the plans below; every one follows the plan's calling
/// convention (buffers as pointers, sizes as int64_t).
const char *const kDevice0Source = R"(
extern "C" __global__ void affine(const float *x, float *y, int64_t n) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i] + 1.0f;
}
extern "C" __global__ void scale(const float *x, const float *w, float *y, int64_t n,
                                 int64_t width) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * w[i % width];
}
extern "C" __global__ void oob_write(float *y) {
  y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}
extern "C" __global__ void deref(const int64_t *address, float *y) {
  y[0] = *reinterpret_cast<const float *>(address[0]);
}
)";

const char *const kDevice1Source = R"(
extern "C" __global__ void square(const float *x, float *y, int64_t n) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i] * x[i];
}
extern "C" __global__ void leak_address(const float *x, int64_t *address) {
  address[0] = reinterpret_cast<int64_t>(x);
}
)";

/// x + x on the cpu, as an outlined cpu region.
const char *const kCpuModule = R"(
func.func @twice(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %empty = tensor.empty(%n) : tensor<?x4xf32>
  %sum = linalg.add ins(%x, %x : tensor<?x4xf32>, tensor<?x4xf32>)
                    outs(%empty : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %sum : tensor<?x4xf32>
}
)";

/// The text of `error`; empty for success.
std::string failureText(llvm::Error error) {
  std::string text;
  std::optional<cuda::CudaErrorKind> kind = cuda::consumeCudaErrorKind(std::move(error), &text);
  (void)kind;
  return text;
}

class PlanExecutorTest : public ::testing::Test {
protected:
  PlanExecutorTest()
      : emulator(cuda::EmulatorOptions{}), backend(cuda::makeEmulatorBackend(emulator)) {
    plan.entry = "forward";
    plan.devices.push_back({0, kDevice0Source, {}});
    plan.devices.push_back({1, kDevice1Source, {}});
  }

  PlanOptions options() {
    PlanOptions result;
    result.cpuRegions = jitCpuRegions();
    result.backends = [this](int device) -> llvm::Expected<cuda::CudaBackend &> {
      if (llvm::Error error = backend->checkDevice(device))
        return error;
      return *backend;
    };
    return result;
  }

  BufferId addBuffer(runtime::Device device, llvm::ArrayRef<SizeExpr> shape, BufferKind kind,
                     unsigned index = 0, runtime::DType dtype = runtime::DType::F32) {
    Buffer buffer;
    buffer.id = BufferId(plan.buffers.size());
    buffer.device = device;
    buffer.dtype = dtype;
    buffer.shape.assign(shape.begin(), shape.end());
    buffer.kind = kind;
    buffer.index = index;
    buffer.name = "b" + std::to_string(buffer.id);
    plan.buffers.push_back(buffer);
    return buffer.id;
  }

  /// `x: f32[B, 4]` as input 0, with `B` bound from its dim 0.
  BufferId addBatchInput(runtime::Device device) {
    BufferId x = addBuffer(device, {SizeExpr::symbol("B"), 4}, BufferKind::Input);
    plan.symbols.push_back({"B", x, 0});
    return x;
  }

  void launch(int device, const std::string &kernel, SizeExpr threads,
              std::vector<cudagen::KernelArg> args) {
    cudagen::Launch step;
    step.device = device;
    step.kernel = kernel;
    step.grid[0] = SizeExpr::ceilDiv(threads, 64);
    step.block[0] = 64;
    step.args = std::move(args);
    plan.steps.push_back(step);
  }

  void mapKernelToSource(int device, const std::string &kernel, const std::string &line) {
    for (cudagen::DeviceCode &code : plan.devices)
      if (code.device == device) {
        cudagen::KernelInfo info;
        info.name = kernel;
        info.category = "test";
        info.sourceLines = {line};
        code.kernels.push_back(info);
      }
  }

  static runtime::Tensor batch(int64_t rows) {
    runtime::Tensor x = runtime::Tensor::zeros(runtime::DType::F32, {rows, 4});
    llvm::MutableArrayRef<float> values = x.mutableValues<float>();
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = float(i) * 0.5f - 1.0f;
    return x;
  }

  cuda::Emulator emulator;
  std::unique_ptr<cuda::CudaBackend> backend;
  DevicePlan plan;
};

using cudagen::KernelArg;

TEST_F(PlanExecutorTest, RunsAKernelForEveryBatchSizeWithOneCompile) {
  runtime::Device gpu = runtime::Device::cuda(0);
  BufferId x = addBatchInput(gpu);
  BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  SizeExpr n = SizeExpr::symbol("B") * 4;
  launch(0, "affine", n, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(y), KernelArg::ofSize(n)});

  auto executor = PlanExecutor::compile(plan, options());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  for (int64_t rows : {3, 70}) {
    runtime::Tensor input = batch(rows);
    auto outputs = (*executor)->run({input});
    ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
    ASSERT_EQ(outputs->size(), 1u);
    runtime::Tensor &out = (*outputs)[0];
    EXPECT_EQ(out.shape(), input.shape());
    for (int64_t i = 0; i < out.numel(); ++i)
      EXPECT_FLOAT_EQ(out.values<float>()[i], 2.0f * input.values<float>()[i] + 1.0f);
    EXPECT_EQ(emulator.liveAllocations(), 2u) << "x and y are kept for the next run";
  }
  executor->reset();
  EXPECT_EQ(emulator.liveAllocations(), 0u) << "and freed with the executor";
}

TEST_F(PlanExecutorTest, StateIsCopiedOnceAndFreedWithTheExecutor) {
  runtime::Device gpu = runtime::Device::cuda(0);
  BufferId w = addBuffer(gpu, {4}, BufferKind::State);
  plan.buffers[w].name = "weight";
  BufferId x = addBatchInput(gpu);
  BufferId t = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Temporary);
  BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  SizeExpr n = SizeExpr::symbol("B") * 4;
  launch(0, "scale", n,
         {KernelArg::ofBuffer(x), KernelArg::ofBuffer(w), KernelArg::ofBuffer(t),
          KernelArg::ofSize(n), KernelArg::ofSize(4)});
  launch(0, "affine", n, {KernelArg::ofBuffer(t), KernelArg::ofBuffer(y), KernelArg::ofSize(n)});

  {
    auto executor = PlanExecutor::compile(plan, options());
    ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
    runtime::Tensor weight = runtime::Tensor::fromValues<float>({4}, {1, -1, 2, 0.5f});
    auto missing = (*executor)->run({batch(2)});
    EXPECT_NE(failureText(missing.takeError()).find("state is not bound"), std::string::npos);

    runtime::Tensor wrong = runtime::Tensor::zeros(runtime::DType::F32, {5});
    std::string text = failureText((*executor)->bindState({wrong}));
    EXPECT_NE(text.find("state `weight` is f32[4] @ cuda:0, given f32[5] @ cpu"), std::string::npos)
        << text;

    ASSERT_EQ(failureText((*executor)->bindState({weight})), "");
    EXPECT_EQ(emulator.liveAllocations(), 1u);
    runtime::Tensor input = batch(3);
    auto outputs = (*executor)->run({input});
    ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
    const float scales[4] = {1, -1, 2, 0.5f};
    for (int64_t i = 0; i < input.numel(); ++i)
      EXPECT_FLOAT_EQ((*outputs)[0].values<float>()[i],
                      2.0f * input.values<float>()[i] * scales[i % 4] + 1.0f);
    EXPECT_EQ(emulator.liveAllocations(), 4u) << "the state, and x, t, y kept for the next run";
  }
  EXPECT_EQ(emulator.liveAllocations(), 0u);
}

TEST_F(PlanExecutorTest, CopiesBetweenTheCpuAndTwoGpusAndCallsTheCpu) {
  // cpu -> cuda:0 (affine) -> cuda:1 (square) -> cpu (twice).
  runtime::Device cpu = runtime::Device::cpu();
  BufferId x = addBatchInput(cpu);
  auto rows = [] { return std::vector<SizeExpr>{SizeExpr::symbol("B"), 4}; };
  BufferId x0 = addBuffer(runtime::Device::cuda(0), rows(), BufferKind::Temporary);
  BufferId a0 = addBuffer(runtime::Device::cuda(0), rows(), BufferKind::Temporary);
  BufferId a1 = addBuffer(runtime::Device::cuda(1), rows(), BufferKind::Temporary);
  BufferId s1 = addBuffer(runtime::Device::cuda(1), rows(), BufferKind::Temporary);
  BufferId s = addBuffer(cpu, rows(), BufferKind::Temporary);
  BufferId y = addBuffer(cpu, rows(), BufferKind::Output);
  SizeExpr n = SizeExpr::symbol("B") * 4;
  plan.steps.push_back(cudagen::Copy{x, x0});
  launch(0, "affine", n, {KernelArg::ofBuffer(x0), KernelArg::ofBuffer(a0), KernelArg::ofSize(n)});
  plan.steps.push_back(cudagen::Copy{a0, a1});
  launch(1, "square", n, {KernelArg::ofBuffer(a1), KernelArg::ofBuffer(s1), KernelArg::ofSize(n)});
  plan.steps.push_back(cudagen::Copy{s1, s});
  plan.steps.push_back(cudagen::CpuCall{"twice", {s}, {y}});
  plan.cpuModule = kCpuModule;

  auto executor = PlanExecutor::compile(plan, options());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  runtime::Tensor input = batch(5);
  auto outputs = (*executor)->run({input});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  for (int64_t i = 0; i < input.numel(); ++i) {
    float a = 2.0f * input.values<float>()[i] + 1.0f;
    EXPECT_FLOAT_EQ((*outputs)[0].values<float>()[i], 2.0f * a * a);
  }
  EXPECT_EQ((*executor)->lastRun().graphFallback, "the plan calls the cpu or spans GPUs");
  executor->reset();
  EXPECT_EQ(emulator.liveAllocations(), 0u);
}

TEST_F(PlanExecutorTest, AnEmptyBatchLaunchesNothing) {
  runtime::Device gpu = runtime::Device::cuda(0);
  BufferId x = addBatchInput(gpu);
  BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  SizeExpr n = SizeExpr::symbol("B") * 4;
  launch(0, "affine", n, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(y), KernelArg::ofSize(n)});
  auto executor = PlanExecutor::compile(plan, options());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  auto outputs = (*executor)->run({runtime::Tensor::zeros(runtime::DType::F32, {0, 4})});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  EXPECT_EQ((*outputs)[0].numel(), 0);
}

TEST_F(PlanExecutorTest, AnOutOfBoundsWriteNamesTheKernelAndItsLine) {
  runtime::Device gpu = runtime::Device::cuda(0);
  BufferId x = addBatchInput(gpu);
  BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  (void)x;
  // 64 threads write into a buffer of B * 4 floats: no bounds check.
  launch(0, "oob_write", 64, {KernelArg::ofBuffer(y)});
  mapKernelToSource(0, "oob_write", "broken.mdl:7");
  auto executor = PlanExecutor::compile(plan, options());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  auto outputs = (*executor)->run({batch(2)});
  ASSERT_FALSE(bool(outputs));
  std::string text;
  std::optional<cuda::CudaErrorKind> kind = cuda::consumeCudaErrorKind(outputs.takeError(), &text);
  EXPECT_TRUE(kind == cuda::CudaErrorKind::OutOfBounds) << text;
  EXPECT_NE(text.find("kernel 'oob_write' on cuda:0 wrote out of bounds"), std::string::npos)
      << text;
  EXPECT_NE(text.find("; generated from broken.mdl:7"), std::string::npos) << text;
  executor->reset();
  EXPECT_EQ(emulator.liveAllocations(), 0u) << "what a failed run used goes with the executor";

  // The executor and the emulator carry on.
  plan.steps.clear();
  launch(0, "affine", 8, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(y), KernelArg::ofSize(8)});
  auto fixed = PlanExecutor::compile(plan, options());
  ASSERT_TRUE(bool(fixed)) << llvm::toString(fixed.takeError());
  auto rerun = (*fixed)->run({batch(2)});
  EXPECT_TRUE(bool(rerun)) << failureText(rerun.takeError());
}

TEST_F(PlanExecutorTest, AKernelReadingAnotherGpusMemoryIsCaught) {
  // cuda:1 publishes the address of its buffer; cuda:0 dereferences it.
  BufferId x = addBuffer(runtime::Device::cuda(1), {4}, BufferKind::Input);
  BufferId a1 =
      addBuffer(runtime::Device::cuda(1), {1}, BufferKind::Temporary, 0, runtime::DType::I64);
  BufferId a0 =
      addBuffer(runtime::Device::cuda(0), {1}, BufferKind::Temporary, 0, runtime::DType::I64);
  BufferId y = addBuffer(runtime::Device::cuda(0), {1}, BufferKind::Output);
  launch(1, "leak_address", 1, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(a1)});
  plan.steps.push_back(cudagen::Copy{a1, a0});
  launch(0, "deref", 1, {KernelArg::ofBuffer(a0), KernelArg::ofBuffer(y)});
  mapKernelToSource(0, "deref", "pipeline.mdl:25");

  auto executor = PlanExecutor::compile(plan, options());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  auto outputs = (*executor)->run({runtime::Tensor::zeros(runtime::DType::F32, {4})});
  ASSERT_FALSE(bool(outputs));
  std::string text;
  std::optional<cuda::CudaErrorKind> kind = cuda::consumeCudaErrorKind(outputs.takeError(), &text);
  EXPECT_TRUE(kind == cuda::CudaErrorKind::CrossDeviceAccess) << text;
  EXPECT_NE(text.find("kernel 'deref' on cuda:0 read memory of cuda:1"), std::string::npos) << text;
  EXPECT_NE(text.find("generated from pipeline.mdl:25"), std::string::npos) << text;
  executor->reset();
  EXPECT_EQ(emulator.liveAllocations(), 0u);
}

TEST_F(PlanExecutorTest, MalformedPlansAreErrorsNotCrashes) {
  BufferId x = addBatchInput(runtime::Device::cuda(0));
  BufferId y = addBuffer(runtime::Device::cuda(1), {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  launch(0, "affine", 4, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(y), KernelArg::ofSize(4)});
  auto crossDevice = PlanExecutor::compile(plan, options());
  ASSERT_FALSE(bool(crossDevice));
  EXPECT_NE(failureText(crossDevice.takeError())
                .find("passes buffer 1 (b1) on cuda:1 to kernel `affine` on cuda:0"),
            std::string::npos);

  DevicePlan badId = plan;
  std::get<cudagen::Launch>(badId.steps[0]).args[1] = KernelArg::ofBuffer(99);
  auto outOfRange = PlanExecutor::compile(badId, options());
  ASSERT_FALSE(bool(outOfRange));
  EXPECT_NE(failureText(outOfRange.takeError()).find("names buffer 99 of 2"), std::string::npos);

  DevicePlan cycle = plan;
  cycle.buffers[1].viewOf = 1;
  auto selfView = PlanExecutor::compile(cycle, options());
  ASSERT_FALSE(bool(selfView));
  EXPECT_NE(failureText(selfView.takeError()).find("is a view of itself"), std::string::npos);

  DevicePlan noCode = plan;
  noCode.devices.clear();
  auto missingCode = PlanExecutor::compile(noCode, options());
  ASSERT_FALSE(bool(missingCode));
  EXPECT_NE(failureText(missingCode.takeError()).find("which has no code"), std::string::npos);

  DevicePlan farDevice = plan;
  farDevice.buffers[1].device = runtime::Device::cuda(5);
  std::get<cudagen::Launch>(farDevice.steps[0]).args.pop_back();
  std::get<cudagen::Launch>(farDevice.steps[0]).args.pop_back();
  auto noSuchDevice = PlanExecutor::compile(farDevice, options());
  ASSERT_FALSE(bool(noSuchDevice));
  std::string text;
  EXPECT_TRUE(cuda::consumeCudaErrorKind(noSuchDevice.takeError(), &text) ==
              cuda::CudaErrorKind::NoSuchDevice);
  EXPECT_NE(text.find("cuda:5 does not exist"), std::string::npos) << text;
}

TEST_F(PlanExecutorTest, AKernelThatDoesNotCompileKeepsTheCompilerLog) {
  BufferId x = addBatchInput(runtime::Device::cuda(0));
  BufferId y = addBuffer(runtime::Device::cuda(0), {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  launch(0, "affine", 4, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(y), KernelArg::ofSize(4)});
  plan.devices[0].source = "extern \"C\" __global__ void affine(float *x) { undeclared(); }";
  auto executor = PlanExecutor::compile(plan, options());
  ASSERT_FALSE(bool(executor));
  std::string text;
  EXPECT_TRUE(cuda::consumeCudaErrorKind(executor.takeError(), &text) ==
              cuda::CudaErrorKind::HostCompileFailed);
  EXPECT_NE(text.find("undeclared"), std::string::npos) << text;
}

TEST(CudaDevicesTest, WithoutADriverTheMessageNamesBothWaysToEmulate) {
  // Where a real driver is installed this machine can run on cuda:0.
  setenv("MODELC_CUDA_DRIVER_LIBRARY", "libmodelc-no-such-driver.so.1", 1);
  auto backend = backendFor(0, CudaMode::Driver);
  ASSERT_FALSE(bool(backend));
  std::string text;
  std::optional<cuda::CudaErrorKind> kind = cuda::consumeCudaErrorKind(backend.takeError(), &text);
  ASSERT_TRUE(kind == cuda::CudaErrorKind::DriverNotFound) << text;
  EXPECT_TRUE(isDeviceUnavailable(*kind));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "no CUDA driver found: cuda:0 needs an NVIDIA GPU (run with --cuda=emulate or "
            "MODELC_CUDA=emulate to use the CPU emulator)");
}

TEST(CudaDevicesTest, ModesParseAndTheEmulatorKnowsItsDevices) {
  EXPECT_TRUE(llvm::cantFail(parseCudaMode("emulate")) == CudaMode::Emulate);
  EXPECT_TRUE(llvm::cantFail(parseCudaMode("driver")) == CudaMode::Driver);
  auto bad = parseCudaMode("gpu");
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(llvm::toString(bad.takeError()),
            "unknown CUDA mode 'gpu' (expected driver or emulate)");
  auto second = backendFor(1, CudaMode::Emulate);
  EXPECT_TRUE(bool(second)) << failureText(second.takeError());
  auto beyond = backendFor(9, CudaMode::Emulate);
  ASSERT_FALSE(bool(beyond));
  std::string text;
  EXPECT_TRUE(cuda::consumeCudaErrorKind(beyond.takeError(), &text) ==
              cuda::CudaErrorKind::NoSuchDevice);
  EXPECT_NE(text.find("cuda:9 does not exist"), std::string::npos) << text;
}

} // namespace

//===----------------------------------------------------------------------===//
// Kept device memory, streams and CUDA graphs
//===----------------------------------------------------------------------===//

/// A backend that counts allocations and frees, and runs on the emulator.
class CountingBackend final : public cuda::CudaBackend {
public:
  explicit CountingBackend(cuda::CudaBackend &inner) : inner(inner) {}
  llvm::StringRef name() const override { return inner.name(); }
  int deviceCount() const override { return inner.deviceCount(); }
  llvm::Error checkDevice(int device) const override { return inner.checkDevice(device); }
  llvm::Expected<cuda::DeviceAddress> allocate(int device, size_t bytes) override {
    ++allocations;
    if (bytes > limit)
      return cuda::makeCudaError(cuda::CudaErrorKind::OutOfMemory, "out of memory");
    return inner.allocate(device, bytes);
  }
  llvm::Error free(int device, cuda::DeviceAddress address) override {
    ++frees;
    return inner.free(device, address);
  }
  llvm::Error copyHostToDevice(int device, cuda::DeviceAddress destination, const void *source,
                               size_t bytes) override {
    return inner.copyHostToDevice(device, destination, source, bytes);
  }
  llvm::Error copyDeviceToHost(int device, void *destination, cuda::DeviceAddress source,
                               size_t bytes) override {
    return inner.copyDeviceToHost(device, destination, source, bytes);
  }
  llvm::Error copyDeviceToDevice(int device, cuda::DeviceAddress destination,
                                 cuda::DeviceAddress source, size_t bytes) override {
    return inner.copyDeviceToDevice(device, destination, source, bytes);
  }
  llvm::Error copyPeer(int destinationDevice, cuda::DeviceAddress destination, int sourceDevice,
                       cuda::DeviceAddress source, size_t bytes) override {
    return inner.copyPeer(destinationDevice, destination, sourceDevice, source, bytes);
  }
  llvm::Expected<cuda::CudaKernel> loadKernel(int device, llvm::StringRef source,
                                              llvm::StringRef sourceName,
                                              llvm::StringRef kernel) override {
    return inner.loadKernel(device, source, sourceName, kernel);
  }
  llvm::Expected<cuda::CudaKernel> loadPrebuiltKernel(int device,
                                                      const cuda::PrebuiltModule &module,
                                                      llvm::StringRef kernel,
                                                      cuda::PrebuiltImage *used) override {
    return inner.loadPrebuiltKernel(device, module, kernel, used);
  }
  llvm::Error launch(const cuda::CudaKernel &kernel, cuda::Dim3 grid, cuda::Dim3 block, void **args,
                     size_t dynamicSharedBytes) override {
    return inner.launch(kernel, grid, block, args, dynamicSharedBytes);
  }
  bool separateAllocations() const override { return separate; }

  cuda::CudaBackend &inner;
  int allocations = 0, frees = 0;
  size_t limit = SIZE_MAX;
  bool separate = true;
};

class KeptMemoryTest : public PlanExecutorTest {
protected:
  KeptMemoryTest() : counting(*backend) {}

  PlanOptions countingOptions() {
    PlanOptions result = options();
    result.backends = [this](int device) -> llvm::Expected<cuda::CudaBackend &> {
      if (llvm::Error error = counting.checkDevice(device))
        return error;
      return counting;
    };
    return result;
  }

  /// x -> t -> y: `affine` twice on cuda:0, with t a temporary of width
  /// `width` (the kernels use its first B * 4 elements).
  void twoKernels(SizeExpr width = 4) {
    runtime::Device gpu = runtime::Device::cuda(0);
    BufferId x = addBatchInput(gpu);
    BufferId t = addBuffer(gpu, {SizeExpr::symbol("B"), width}, BufferKind::Temporary);
    BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
    SizeExpr n = SizeExpr::symbol("B") * 4;
    launch(0, "affine", n, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(t), KernelArg::ofSize(n)});
    launch(0, "affine", n, {KernelArg::ofBuffer(t), KernelArg::ofBuffer(y), KernelArg::ofSize(n)});
  }

  CountingBackend counting;
};

TEST_F(KeptMemoryTest, SteadyRunsAllocateAndFreeNothing) {
  twoKernels();
  for (bool separate : {true, false}) {
    counting.separate = separate; // the emulator's way, then the driver's arena
    auto executor = PlanExecutor::compile(plan, countingOptions());
    ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
    int64_t previousRows = 0;
    for (int64_t rows : {3, 3, 3, 8, 8, 3}) {
      int allocationsBefore = counting.allocations, freesBefore = counting.frees;
      runtime::Tensor input = batch(rows);
      auto outputs = (*executor)->run({input});
      ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
      for (int64_t i = 0; i < input.numel(); ++i)
        ASSERT_FLOAT_EQ((*outputs)[0].values<float>()[i],
                        2.0f * (2.0f * input.values<float>()[i] + 1.0f) + 1.0f);
      if (rows == previousRows) {
        EXPECT_EQ(counting.allocations, allocationsBefore) << "separate: " << separate;
        EXPECT_EQ(counting.frees, freesBefore) << "separate: " << separate;
      }
      previousRows = rows;
    }
    int steadyAllocations = counting.allocations, steadyFrees = counting.frees;
    for (int repeat = 0; repeat < 3; ++repeat)
      ASSERT_TRUE(bool((*executor)->run({batch(3)})));
    EXPECT_EQ(counting.allocations, steadyAllocations) << "separate: " << separate;
    EXPECT_EQ(counting.frees, steadyFrees) << "separate: " << separate;
    executor->reset();
    EXPECT_EQ(emulator.liveAllocations(), 0u) << "the executor frees what it kept";
    counting.allocations = counting.frees = 0;
  }
}

TEST_F(KeptMemoryTest, TheArenaSharesBytesBetweenBuffersThatDoNotLiveTogether) {
  // x -> t1 -> t2 -> t3 -> y: t1 and t3 never live at the same time.
  runtime::Device gpu = runtime::Device::cuda(0);
  BufferId x = addBatchInput(gpu);
  SizeExpr n = SizeExpr::symbol("B") * 4;
  BufferId previous = x;
  for (int i = 0; i < 3; ++i) {
    BufferId t = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Temporary);
    launch(0, "affine", n,
           {KernelArg::ofBuffer(previous), KernelArg::ofBuffer(t), KernelArg::ofSize(n)});
    previous = t;
  }
  BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
  launch(0, "affine", n,
         {KernelArg::ofBuffer(previous), KernelArg::ofBuffer(y), KernelArg::ofSize(n)});
  counting.separate = false;
  auto executor = PlanExecutor::compile(plan, countingOptions());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  runtime::Tensor input = batch(64); // 1 KiB per buffer
  auto outputs = (*executor)->run({input});
  ASSERT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
  for (int64_t i = 0; i < input.numel(); ++i)
    ASSERT_FLOAT_EQ((*outputs)[0].values<float>()[i],
                    15.0f + 16.0f * input.values<float>()[i]); // affine four times
  // x and y live throughout; of t1..t3 at most two at once: 4 KiB, not 5.
  EXPECT_EQ((*executor)->lastRun().arenaBytes, 4u * 1024);
  EXPECT_EQ(counting.allocations, 1);
}

TEST_F(KeptMemoryTest, AnArenaThatDoesNotFitIsAClearError) {
  twoKernels(SizeExpr::symbol("B") * 1024);
  counting.separate = false;
  counting.limit = size_t(1) << 20;
  auto executor = PlanExecutor::compile(plan, countingOptions());
  ASSERT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
  ASSERT_TRUE(bool((*executor)->run({batch(2)}))) << "32 KiB fits";
  auto outputs = (*executor)->run({batch(600)}); // t alone is 600 * 600 * 4 KiB
  std::string text = failureText(outputs.takeError());
  EXPECT_NE(text.find("cuda:0: the plan's 3 buffer(s) need"), std::string::npos) << text;
  EXPECT_NE(text.find("bytes of device memory for B = 600, more than the device could allocate: "
                      "out of memory"),
            std::string::npos)
      << text;
  ASSERT_TRUE(bool((*executor)->run({batch(2)}))) << "the executor still runs what fits";
}

/// The executor against tests/unit/cuda/FakeCudaDriver.cpp, which counts the
/// driver calls it gets (kernels are compiled by NVRTC and not run).
class FakeDriverTest : public PlanExecutorTest {
protected:
  void SetUp() override {
    llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
    if (!nvrtc)
      GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
    llvm::Expected<std::unique_ptr<cuda::CudaDriver>> opened =
        cuda::CudaDriver::open(MODELC_FAKE_CUDA_DRIVER);
    ASSERT_TRUE(bool(opened)) << llvm::toString(opened.takeError());
    driver = std::move(*opened);
    driverBackend = cuda::makeDriverBackend(*driver, cuda::KernelCache::global());
    void *library = dlopen(MODELC_FAKE_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(library, nullptr);
    calls = reinterpret_cast<int (*)(const char *)>(dlsym(library, "modelc_fake_cuda_calls"));
    resetCalls = reinterpret_cast<void (*)()>(dlsym(library, "modelc_fake_cuda_reset_calls"));
    ASSERT_TRUE(calls && resetCalls);

    runtime::Device gpu = runtime::Device::cuda(0);
    BufferId x = addBatchInput(gpu);
    BufferId t = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Temporary);
    BufferId y = addBuffer(gpu, {SizeExpr::symbol("B"), 4}, BufferKind::Output);
    SizeExpr n = SizeExpr::symbol("B") * 4;
    launch(0, "affine", n, {KernelArg::ofBuffer(x), KernelArg::ofBuffer(t), KernelArg::ofSize(n)});
    launch(0, "affine", n, {KernelArg::ofBuffer(t), KernelArg::ofBuffer(y), KernelArg::ofSize(n)});
    plan.devices.pop_back(); // one GPU
    // NVRTC has no implicit <stdint.h>.
    plan.devices[0].source = std::string("#include <stdint.h>\n") + kDevice0Source;
  }

  std::unique_ptr<PlanExecutor> compileOnDriver() {
    PlanOptions result = options();
    result.backends = [this](int device) -> llvm::Expected<cuda::CudaBackend &> {
      if (llvm::Error error = driverBackend->checkDevice(device))
        return error;
      return *driverBackend;
    };
    auto executor = PlanExecutor::compile(plan, result);
    EXPECT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
    return executor ? std::move(*executor) : nullptr;
  }

  /// The driver calls one run makes.
  std::map<std::string, int> callsOf(PlanExecutor &executor, int64_t rows) {
    resetCalls();
    auto outputs = executor.run({batch(rows)});
    EXPECT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
    std::map<std::string, int> made;
    for (const char *name :
         {"cuMemAlloc", "cuMemFree", "cuLaunchKernel", "cuStreamBeginCapture", "cuStreamEndCapture",
          "cuGraphInstantiate", "cuGraphLaunch", "cuGraphExecDestroy", "cuGraphDestroy",
          "cuStreamSynchronize", "cuCtxSynchronize", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync"})
      if (int count = calls(name))
        made[name] = count;
    return made;
  }

  std::unique_ptr<cuda::CudaDriver> driver;
  std::unique_ptr<cuda::CudaBackend> driverBackend;
  int (*calls)(const char *) = nullptr;
  void (*resetCalls)() = nullptr;
};

TEST_F(FakeDriverTest, CapturesAGraphOnceAndReplaysItUntilTheShapesChange) {
  std::unique_ptr<PlanExecutor> executor = compileOnDriver();
  ASSERT_TRUE(executor);
  using Calls = std::map<std::string, int>;
  // First run: one arena, the two kernels captured (not run), one replay,
  // the host waits once.
  EXPECT_EQ(callsOf(*executor, 3), (Calls{{"cuMemAlloc", 1},
                                          {"cuMemcpyHtoDAsync", 1},
                                          {"cuStreamBeginCapture", 1},
                                          {"cuLaunchKernel", 2},
                                          {"cuStreamEndCapture", 1},
                                          {"cuGraphInstantiate", 1},
                                          {"cuGraphLaunch", 1},
                                          {"cuMemcpyDtoHAsync", 1},
                                          {"cuStreamSynchronize", 1}}));
  EXPECT_TRUE(executor->lastRun().graphCaptured);
  // The same shapes: only the copies and one graph launch.
  Calls steady{{"cuMemcpyHtoDAsync", 1},
               {"cuGraphLaunch", 1},
               {"cuMemcpyDtoHAsync", 1},
               {"cuStreamSynchronize", 1}};
  EXPECT_EQ(callsOf(*executor, 3), steady);
  EXPECT_EQ(callsOf(*executor, 3), steady);
  EXPECT_TRUE(executor->lastRun().graphReplayed);
  // More rows: a bigger arena, the old graph destroyed, a new capture.
  EXPECT_EQ(callsOf(*executor, 40), (Calls{{"cuMemFree", 1},
                                           {"cuMemAlloc", 1},
                                           {"cuGraphExecDestroy", 1},
                                           {"cuGraphDestroy", 1},
                                           {"cuMemcpyHtoDAsync", 1},
                                           {"cuStreamBeginCapture", 1},
                                           {"cuLaunchKernel", 2},
                                           {"cuStreamEndCapture", 1},
                                           {"cuGraphInstantiate", 1},
                                           {"cuGraphLaunch", 1},
                                           {"cuMemcpyDtoHAsync", 1},
                                           {"cuStreamSynchronize", 1}}));
  // Fewer rows fit the arena, but the kernels' sizes changed: recaptured.
  Calls fewer = callsOf(*executor, 3);
  EXPECT_EQ(fewer.count("cuMemAlloc"), 0u);
  EXPECT_EQ(fewer["cuStreamBeginCapture"], 1);
  EXPECT_EQ(fewer["cuGraphExecDestroy"], 1);
  EXPECT_EQ(callsOf(*executor, 3), steady);
  executor.reset();
  resetCalls();
}

// The embedding API's way: results stay on the GPU. A run enqueues its work
// and returns without waiting; reading a result waits on the same stream;
// an output's memory, once its tensor is gone, serves the next run's output.
TEST_F(FakeDriverTest, AResultLeftOnTheGpuIsWaitedForOnlyWhenRead) {
  std::unique_ptr<PlanExecutor> executor = compileOnDriver();
  ASSERT_TRUE(executor);
  auto input = driverBackend->allocate(0, 3 * 4 * sizeof(float));
  ASSERT_TRUE(bool(input)) << llvm::toString(input.takeError());
  runtime::Tensor x = runtime::Tensor::borrowMutable(runtime::DType::F32, {3, 4},
                                                     reinterpret_cast<void *>(uintptr_t(*input)),
                                                     nullptr, runtime::Device::cuda(0));
  auto runOnDevice = [&] {
    auto outputs = executor->run({x}, Residency::OnDevice);
    EXPECT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
    return outputs ? std::move(*outputs) : std::vector<runtime::Tensor>{};
  };
  std::vector<runtime::Tensor> kept = runOnDevice(); // captures the graph
  kept = runOnDevice();
  resetCalls();
  kept = runOnDevice(); // the previous result's block comes back here
  kept = runOnDevice();
  for (const char *waits : {"cuStreamSynchronize", "cuCtxSynchronize"})
    EXPECT_EQ(calls(waits), 0) << waits;
  EXPECT_EQ(calls("cuGraphLaunch"), 2);
  EXPECT_EQ(calls("cuMemcpyDtoDAsync"), 2) << "each result copied out of the arena";
  EXPECT_EQ(calls("cuMemAlloc"), 0) << "outputs reuse the blocks of dropped results";
  EXPECT_EQ(calls("cuMemFree"), 0);
  ASSERT_EQ(kept.size(), 1u);
  resetCalls();
  float values[12];
  ASSERT_FALSE(driverBackend->copyDeviceToHost(
      0, values, cuda::DeviceAddress(reinterpret_cast<uintptr_t>(kept[0].data())), sizeof values));
  EXPECT_EQ(calls("cuMemcpyDtoHAsync"), 1) << "on the stream the run's work went to";
  EXPECT_EQ(calls("cuStreamSynchronize"), 1);
  EXPECT_EQ(calls("cuMemcpyDtoH"), 0);
  kept.clear();
  resetCalls();
  executor.reset();
  EXPECT_GE(calls("cuMemFree"), 2) << "the arena and the idle output blocks";
  ASSERT_FALSE(driverBackend->free(0, *input));
}

// A peer copy is not on either device's stream: it waits for both first, so
// it reads a result a run left pending (the API's Tensor::to(cuda:M)).
TEST_F(FakeDriverTest, APeerCopyFollowsTheWorkOnBothStreams) {
  auto from = driverBackend->allocate(0, 64), to = driverBackend->allocate(0, 64);
  ASSERT_TRUE(from && to);
  resetCalls();
  ASSERT_FALSE(driverBackend->copyPeer(0, *to, 0, *from, 64));
  EXPECT_EQ(calls("cuStreamSynchronize"), 2);
  EXPECT_EQ(calls("cuMemcpyPeer"), 1);
  ASSERT_FALSE(driverBackend->free(0, *from));
  ASSERT_FALSE(driverBackend->free(0, *to));
}

TEST_F(FakeDriverTest, AGraphThatCannotBeCapturedFallsBackToTheStream) {
  setenv("MODELC_FAKE_CUDA_CAPTURE_RESULT", "900", 1);
  std::unique_ptr<PlanExecutor> executor = compileOnDriver();
  ASSERT_TRUE(executor);
  std::map<std::string, int> first = callsOf(*executor, 3);
  EXPECT_EQ(first["cuStreamBeginCapture"], 1);
  EXPECT_EQ(first["cuLaunchKernel"], 2) << "the kernels run on the stream instead";
  EXPECT_EQ(first.count("cuGraphLaunch"), 0u);
  EXPECT_NE(executor->lastRun().graphFallback.find(
                "capturing a CUDA graph failed: cuda:0: cuStreamBeginCapture failed"),
            std::string::npos)
      << executor->lastRun().graphFallback;
  std::map<std::string, int> second = callsOf(*executor, 3);
  EXPECT_EQ(second.count("cuStreamBeginCapture"), 0u) << "not tried again";
  EXPECT_EQ(second["cuLaunchKernel"], 2);
  EXPECT_EQ(second.count("cuMemAlloc"), 0u);
  unsetenv("MODELC_FAKE_CUDA_CAPTURE_RESULT");
}

//===----------------------------------------------------------------------===//
// GEMMs on cuBLASLt (the fake libcublasLt computes them in float64)
//===----------------------------------------------------------------------===//

/// The own kernels of the GEMM below (they compute nothing on the fake
/// driver; the fake cuBLASLt does).
const char *const kGemmSource = R"(#include <stdint.h>
extern "C" __global__ void gemm_own(const float *x, const float *w, const float *bias,
                                    const float *res, float *out, int64_t rows) {}
extern "C" __global__ void gemm_after(float *out, int64_t rows) {}
)";

/// out = relu(x @ w^T + bias + res) with x: f32[B, 4] (input 0), res:
/// f32[B, 3] (input 1), w: f32[3, 4] and bias: f32[3] (state): a Linear
/// layer with a residual, as a GemmCall beside its own kernel.
class CublasLtPlanTest : public FakeDriverTest {
protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    if (IsSkipped() || HasFatalFailure())
      return;
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("modelc-cuda-gemm", dir));
    cache = std::string(dir);
    cacheDir = std::make_unique<ScopedEnv>("MODELC_CACHE_DIR", cache);
    llvm::Expected<std::unique_ptr<cuda::CublasLt>> lt = cuda::CublasLt::open(MODELC_FAKE_CUBLASLT);
    ASSERT_TRUE(bool(lt)) << llvm::toString(lt.takeError());
    library = std::move(*lt);
    driverBackend = cuda::makeDriverBackend(
        *driver, cuda::KernelCache::global(), [this]() -> llvm::Expected<const cuda::CublasLt &> {
          if (!libraryPresent)
            return cuda::CublasLt::open("/nonexistent/libcublasLt.so.13").takeError();
          return *library;
        });
    void *fake = dlopen(MODELC_FAKE_CUBLASLT, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(fake, nullptr);
    lastCall = reinterpret_cast<bool (*)(fake::LtCall *)>(dlsym(fake, "modelc_fake_cublaslt_last"));
    ASSERT_TRUE(lastCall);
    GemmChoiceTable::global().clear();
    runtime::assumeLoadAverage(0.0);

    plan = DevicePlan();
    plan.entry = "forward";
    plan.devices.push_back({0, kGemmSource, {}});
    runtime::Device gpu = runtime::Device::cuda(0);
    x = addBatchInput(gpu);
    SizeExpr rows = SizeExpr::symbol("B");
    res = addBuffer(gpu, {rows, 3}, BufferKind::Input, 1);
    w = addBuffer(gpu, {3, 4}, BufferKind::State, 0);
    bias = addBuffer(gpu, {3}, BufferKind::State, 1);
    out = addBuffer(gpu, {rows, 3}, BufferKind::Output);
    launch(0, "gemm_own", rows * 3,
           {KernelArg::ofBuffer(x), KernelArg::ofBuffer(w), KernelArg::ofBuffer(bias),
            KernelArg::ofBuffer(res), KernelArg::ofBuffer(out), KernelArg::ofSize(rows)});
    cudagen::GemmCall gemm;
    gemm.label = "gemm_own";
    gemm.firstStep = 0;
    gemm.stepCount = 1;
    gemm.m = rows;
    gemm.n = 3;
    gemm.k = 4;
    gemm.batch = 1;
    gemm.a = {x, false, 4, 0};
    gemm.b = {w, true, 4, 0}; // x @ w^T: w read transposed, in place
    gemm.out = out;
    gemm.bias = bias;
    gemm.residual = res;
    gemm.activation = cudagen::GemmActivation::Relu;
    plan.gemms.push_back(gemm);
  }

  void TearDown() override {
    runtime::assumeLoadAverage(std::nullopt);
    GemmChoiceTable::global().clear();
    cacheDir.reset();
    if (!cache.empty())
      llvm::sys::fs::remove_directories(cache);
  }

  std::unique_ptr<PlanExecutor> compileWith(GemmBackend gemm) {
    PlanOptions result = options();
    result.backends = [this](int device) -> llvm::Expected<cuda::CudaBackend &> {
      if (llvm::Error error = driverBackend->checkDevice(device))
        return error;
      return *driverBackend;
    };
    result.gemm = gemm;
    result.cublasLtWorkspaceBytes = 1 << 20;
    auto executor = PlanExecutor::compile(plan, result);
    EXPECT_TRUE(bool(executor)) << llvm::toString(executor.takeError());
    if (!executor)
      return nullptr;
    runtime::Tensor weights = runtime::Tensor::zeros(runtime::DType::F32, {3, 4});
    runtime::Tensor biases = runtime::Tensor::zeros(runtime::DType::F32, {3});
    for (int i = 0; i < 12; ++i)
      weights.mutableValues<float>()[i] = 0.25f * float(i % 5) - 0.5f;
    for (int i = 0; i < 3; ++i)
      biases.mutableValues<float>()[i] = 0.1f * float(i) - 0.1f;
    EXPECT_FALSE(bool((*executor)->bindState({weights, biases})));
    stateW = weights;
    stateBias = biases;
    return std::move(*executor);
  }

  runtime::Tensor residual(int64_t rows, float scale) {
    runtime::Tensor r = runtime::Tensor::zeros(runtime::DType::F32, {rows, 3});
    for (int64_t i = 0; i < rows * 3; ++i)
      r.mutableValues<float>()[i] = scale * float(i % 7) - 1.0f;
    return r;
  }

  /// Runs with `rows` and checks the output against float64.
  std::map<std::string, int> checkedRun(PlanExecutor &executor, int64_t rows, float scale = 0.3f) {
    resetCalls();
    runtime::Tensor xs = batch(rows), rs = residual(rows, scale);
    auto outputs = executor.run({xs, rs});
    EXPECT_TRUE(bool(outputs)) << llvm::toString(outputs.takeError());
    std::map<std::string, int> made;
    for (const char *name :
         {"cuMemAlloc", "cuLaunchKernel", "cuStreamBeginCapture", "cuGraphLaunch", "cuEventRecord",
          "cublasLtCreate", "cublasLtMatmul", "cublasLtMatmulAlgoGetHeuristic"})
      if (int count = calls(name))
        made[name] = count;
    if (!outputs)
      return made;
    if (!executor.lastRun().gemms.at(0).library)
      return made; // the own kernel computes nothing on the fake driver
    llvm::ArrayRef<float> got = (*outputs)[0].values<float>();
    llvm::ArrayRef<float> xv = xs.values<float>(), rv = rs.values<float>();
    llvm::ArrayRef<float> wv = stateW.values<float>(), bv = stateBias.values<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double sum = double(bv[j]) + double(rv[i * 3 + j]);
        for (int64_t q = 0; q < 4; ++q)
          sum += double(xv[i * 4 + q]) * double(wv[j * 4 + q]);
        EXPECT_NEAR(got[i * 3 + j], std::max(sum, 0.0), 1e-5) << "row " << i << " col " << j;
      }
    return made;
  }

  struct ScopedEnv {
    ScopedEnv(const char *name, const std::string &value) : name(name) {
      if (const char *old = getenv(name))
        previous = old;
      setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
      if (previous)
        setenv(name.c_str(), previous->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
    std::string name;
    std::optional<std::string> previous;
  };

  std::string cache; ///< the choice files' directory
  std::unique_ptr<ScopedEnv> cacheDir;
  std::unique_ptr<cuda::CublasLt> library;
  bool libraryPresent = true;
  bool (*lastCall)(fake::LtCall *) = nullptr;
  BufferId x = 0, res = 0, w = 0, bias = 0, out = 0;
  runtime::Tensor stateW, stateBias;
};

TEST_F(CublasLtPlanTest, CublasLtRunsTheGemmAndItsEpilogueInsideTheGraph) {
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::CublasLt);
  ASSERT_TRUE(executor);
  std::map<std::string, int> first = checkedRun(*executor, 5);
  EXPECT_EQ(first["cuMemAlloc"], 1) << "the buffers and cuBLASLt's workspace: one arena";
  EXPECT_EQ(first.count("cuLaunchKernel"), 0u) << "the own kernel is not run";
  EXPECT_EQ(first["cublasLtMatmul"], 1);
  EXPECT_EQ(first["cuStreamBeginCapture"], 1);
  EXPECT_EQ(first["cuGraphLaunch"], 1);
  const RunReport &report = executor->lastRun();
  ASSERT_EQ(report.gemms.size(), 1u);
  EXPECT_TRUE(report.gemms[0].library);
  EXPECT_EQ(report.gemms[0].why, "cuBLASLt: cuBLASLt asked for (MODELC_CUDA_GEMM=cublaslt)");
  EXPECT_EQ(report.gemms[0].problem, "f32 TN 3x5x4, bias+relu, beta=1");
  EXPECT_NE(report.gemmLibrary.find("cuBLASLt 13.1.0 (" MODELC_FAKE_CUBLASLT ") on cuda:0"),
            std::string::npos)
      << report.gemmLibrary;
  EXPECT_GE(report.arenaBytes, size_t(1) << 20);

  // What cuBLASLt was asked: out^T = w x^T, column-major, in place.
  fake::LtCall call;
  ASSERT_TRUE(lastCall(&call));
  EXPECT_TRUE(call.captured) << "enqueued while the graph was captured";
  EXPECT_EQ(call.transA, 1);
  EXPECT_EQ(call.transB, 0);
  EXPECT_EQ(call.cRows, 3u);
  EXPECT_EQ(call.cCols, 5u);
  EXPECT_EQ(call.lda, 4);
  EXPECT_EQ(call.ldb, 4);
  EXPECT_EQ(call.ldc, 3);
  EXPECT_EQ(call.epilogue, 6u); // CUBLASLT_EPILOGUE_RELU_BIAS
  EXPECT_EQ(call.beta, 1.0f);
  EXPECT_EQ(call.computeType, 68) << "exact f32 unless --tf32";
  EXPECT_NE(call.workspace, 0u);
  EXPECT_EQ(call.workspaceBytes, size_t(1) << 20);

  // Same shapes, new values: the graph replays the recorded cuBLASLt call.
  std::map<std::string, int> steady = checkedRun(*executor, 5, 0.7f);
  EXPECT_EQ(steady.count("cublasLtMatmul"), 0u);
  EXPECT_EQ(steady.count("cuStreamBeginCapture"), 0u);
  EXPECT_EQ(steady["cuGraphLaunch"], 1);
  EXPECT_TRUE(executor->lastRun().graphReplayed);
  // Other shapes: new descriptors and a new capture.
  std::map<std::string, int> other = checkedRun(*executor, 9);
  EXPECT_EQ(other["cublasLtMatmul"], 1);
  EXPECT_EQ(other["cuStreamBeginCapture"], 1);
  EXPECT_EQ(executor->lastRun().gemms[0].problem, "f32 TN 3x9x4, bias+relu, beta=1");
}

TEST_F(CublasLtPlanTest, TF32OnlyWhenThePlanAllowsIt) {
  plan.gemms[0].tf32 = true;
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::CublasLt);
  ASSERT_TRUE(executor);
  ASSERT_TRUE(bool(executor->run({batch(2), residual(2, 0.5f)})));
  fake::LtCall call;
  ASSERT_TRUE(lastCall(&call));
  EXPECT_EQ(call.computeType, 77); // CUBLAS_COMPUTE_32F_FAST_TF32
}

TEST_F(CublasLtPlanTest, MeasuresOnceKeepsTheFasterAndSavesTheChoice) {
  // Own kernel 10 us; cuBLASLt's algorithms 50, 3 and 20 us.
  ScopedEnv times("MODELC_FAKE_CUBLASLT_US", "50,3,20");
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::Auto);
  ASSERT_TRUE(executor);
  std::map<std::string, int> first = checkedRun(*executor, 5);
  EXPECT_GT(first["cuEventRecord"], 0) << "measured";
  const GemmRun &chosen = executor->lastRun().gemms.at(0);
  EXPECT_TRUE(chosen.library);
  EXPECT_EQ(chosen.why, "cuBLASLt: measured: cuBLASLt 0.003 ms (algorithm 2 of 3), own kernels "
                        "0.010 ms");
  fake::LtCall call;
  ASSERT_TRUE(lastCall(&call));
  EXPECT_EQ(call.algorithm, 1u) << "the heuristic's second algorithm runs";
  // The same shapes: no measurement.
  EXPECT_EQ(checkedRun(*executor, 5).count("cuEventRecord"), 0u);
  // The choice is on disk for this GPU and library...
  std::string file = GemmChoiceTable::fileFor("Fake GPU 0 (sm_90), driver 13000, cuBLASLt 13.1.0");
  auto text = llvm::MemoryBuffer::getFile(file);
  ASSERT_TRUE(bool(text)) << file;
  EXPECT_NE((*text)->getBuffer().find("f32 TN m2 n3 k2 b0 bias+relu beta1 after0\tcublaslt 1"),
            std::string::npos)
      << (*text)->getBuffer().str();
  // ... and a new process (a cleared table) reads it instead of measuring.
  GemmChoiceTable::global().clear();
  std::unique_ptr<PlanExecutor> again = compileWith(GemmBackend::Auto);
  std::map<std::string, int> read = checkedRun(*again, 5);
  EXPECT_EQ(read.count("cuEventRecord"), 0u);
  EXPECT_TRUE(again->lastRun().gemms[0].library);
  EXPECT_EQ(again->lastRun().gemms[0].why,
            "cuBLASLt: chosen before on this GPU for shape class f32 TN m2 n3 k2 b0 bias+relu "
            "beta1 after0");
  // Another shape class is measured anew.
  EXPECT_GT(checkedRun(*again, 40)["cuEventRecord"], 0);
}

TEST_F(CublasLtPlanTest, TheOwnKernelsWinWhenFasterAndBusyMachinesSaveNothing) {
  ScopedEnv times("MODELC_FAKE_CUBLASLT_US", "50");
  runtime::assumeLoadAverage(1000.0);
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::Auto);
  ASSERT_TRUE(executor);
  std::map<std::string, int> first = checkedRun(*executor, 5);
  EXPECT_EQ(first["cuLaunchKernel"], 1 + 20 + 1) << "timed once, then 20 times; then captured";
  const GemmRun &chosen = executor->lastRun().gemms.at(0);
  EXPECT_FALSE(chosen.library);
  EXPECT_EQ(chosen.why, "own kernels: measured: cuBLASLt 0.050 ms (algorithm 1 of 3), own "
                        "kernels 0.010 ms");
  EXPECT_FALSE(llvm::sys::fs::exists(
      GemmChoiceTable::fileFor("Fake GPU 0 (sm_90), driver 13000, cuBLASLt 13.1.0")))
      << "a choice measured on a busy machine serves this process only";
  EXPECT_EQ(checkedRun(*executor, 5).count("cuEventRecord"), 0u);
}

TEST_F(CublasLtPlanTest, WithoutCublasLtTheOwnKernelsRunAndTheReportSaysWhy) {
  libraryPresent = false;
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::CublasLt);
  ASSERT_TRUE(executor);
  std::map<std::string, int> made = checkedRun(*executor, 5);
  EXPECT_EQ(made["cuLaunchKernel"], 1);
  EXPECT_EQ(made.count("cublasLtMatmul"), 0u);
  const RunReport &report = executor->lastRun();
  EXPECT_EQ(report.gemmLibrary, "cuBLASLt is not used: cannot open /nonexistent/libcublasLt.so.13: "
                                "/nonexistent/libcublasLt.so.13: cannot open shared object file: "
                                "No such file or directory");
  EXPECT_FALSE(report.gemms.at(0).library);
  EXPECT_EQ(report.gemms[0].why, report.gemmLibrary);
}

TEST_F(CublasLtPlanTest, OwnKernelsWhenAskedWithoutTouchingTheLibrary) {
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::Own);
  ASSERT_TRUE(executor);
  std::map<std::string, int> made = checkedRun(*executor, 5);
  EXPECT_EQ(made["cuLaunchKernel"], 1);
  EXPECT_EQ(made.count("cublasLtCreate"), 0u);
  EXPECT_EQ(made.count("cublasLtMatmulAlgoGetHeuristic"), 0u);
  EXPECT_EQ(executor->lastRun().gemmLibrary,
            "cuBLASLt is not used: own kernels asked for (PlanOptions::gemm)");
}

TEST_F(CublasLtPlanTest, AFailingCublasLtCallFallsBackToTheOwnKernels) {
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::CublasLt);
  ASSERT_TRUE(executor);
  ScopedEnv failing("MODELC_FAKE_CUBLASLT_MATMUL_RESULT", "15");
  std::map<std::string, int> made = checkedRun(*executor, 5);
  EXPECT_EQ(made["cublasLtMatmul"], 1);
  EXPECT_EQ(made["cuLaunchKernel"], 1) << "the own kernel runs instead";
  const GemmRun &ran = executor->lastRun().gemms.at(0);
  EXPECT_FALSE(ran.library);
  EXPECT_EQ(ran.why, "own kernels: cuBLASLt failed: gemm_own: cublasLtMatmul failed: "
                     "CUBLAS_STATUS_NOT_SUPPORTED: the functionality requested is not supported");
  std::map<std::string, int> next = checkedRun(*executor, 5);
  EXPECT_EQ(next.count("cublasLtMatmul"), 0u) << "not tried again for these shapes";
}

TEST_F(CublasLtPlanTest, TheRestOfTheEpilogueRunsAfterTheLibraryCall) {
  cudagen::Launch after;
  after.device = 0;
  after.kernel = "gemm_after";
  after.grid[0] = SizeExpr::ceilDiv(SizeExpr::symbol("B") * 3, 64);
  after.block[0] = 64;
  after.args = {KernelArg::ofBuffer(out), KernelArg::ofSize(SizeExpr::symbol("B"))};
  plan.gemms[0].after = after;
  std::unique_ptr<PlanExecutor> executor = compileWith(GemmBackend::CublasLt);
  ASSERT_TRUE(executor);
  std::map<std::string, int> made = checkedRun(*executor, 5);
  EXPECT_EQ(made["cublasLtMatmul"], 1);
  EXPECT_EQ(made["cuLaunchKernel"], 1) << "the after kernel, captured after the call";
}

TEST_F(CublasLtPlanTest, AGemmOverStepsThatAreNotItsOwnIsAPlanError) {
  plan.gemms[0].stepCount = 2;
  PlanOptions result = options();
  result.backends = [this](int) -> llvm::Expected<cuda::CudaBackend &> { return *driverBackend; };
  auto executor = PlanExecutor::compile(plan, result);
  ASSERT_FALSE(bool(executor));
  EXPECT_EQ(failureText(executor.takeError()),
            "device plan: gemm 0 (gemm_own) names steps beyond the plan's");
}
