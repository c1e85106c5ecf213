//===- CudaTest.cpp - Models on cuda:N through the public API -------------===//
//
// Runs on the CPU emulator (setCudaBackend(Emulator)): the reference MLP
// placed on cuda:0 against PyTorch and the cpu, device tensors in and out,
// the boundary check for a host tensor, calls from several threads, a cuda
// artifact loaded through Model::load, and the structured error without a
// driver.
//
//===----------------------------------------------------------------------===//

#include "ApiTestSupport.h"

#include "../../../examples/embed/NpyF32.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <thread>

using namespace modelc::api;
using namespace modelc::api::test;

namespace {

std::string refFile(const std::string &name) { return std::string(MODELC_REF_DIR) + "/" + name; }

/// `values` as a tensor on cuda:0.
Tensor onGpu(const std::vector<int64_t> &shape, const std::vector<float> &values) {
  Result<Tensor> host = Tensor::fromValues<float>(shape, values);
  EXPECT_TRUE(host) << host.errorText();
  Result<Tensor> device = host->to(Device::cuda(0));
  EXPECT_TRUE(device) << device.errorText();
  return *device;
}

std::vector<float> valuesOf(const Result<Tensor> &t) {
  Result<std::vector<float>> values = t->toVector<float>();
  EXPECT_TRUE(values) << values.errorText();
  return values ? *values : std::vector<float>();
}

class ApiCuda : public ::testing::Test {
protected:
  void SetUp() override { setCudaBackend(CudaBackend::Emulator); }
  void TearDown() override { setCudaBackend(CudaBackend::Default); }
};

TEST_F(ApiCuda, ReferenceMlpOnAGpuMatchesPyTorch) {
  EXPECT_EQ(cudaBackend(), CudaBackend::Emulator);
  Function forward = compiledReferenceMlp(Device::cuda(0));
  EXPECT_EQ(forward.signature().signature,
            "fn forward(x: f32[B, 784] @ cuda:0) -> f32[B, 10] @ cuda:0");
  std::optional<npy::NpyArray> input = npy::readNpyF32(refFile("mlp/input.npy"));
  std::optional<npy::NpyArray> expected = npy::readNpyF32(refFile("mlp/output.npy"));
  ASSERT_TRUE(input && expected);
  Result<Tensor> y = forward.call({onGpu(input->shape, input->values)});
  ASSERT_TRUE(y) << y.errorText();
  // The result stays on the GPU until it is read back.
  EXPECT_EQ(y->str(), "f32[4, 10] @ cuda:0");
  EXPECT_EQ(y->hostData(), nullptr);
  std::vector<float> values = valuesOf(y);
  ASSERT_EQ(values.size(), expected->values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(values[i], expected->values[i], 1e-4) << "element " << i;

  // The same model on the cpu agrees, for another batch size too.
  Function cpu = compiledReferenceMlp(Device::cpu());
  std::vector<float> x = mlpInput(7, 3);
  Result<Tensor> gpuOut = forward.call({onGpu({7, 784}, x)});
  Result<Tensor> cpuOut = cpu.call({*Tensor::fromValues<float>({7, 784}, x)});
  ASSERT_TRUE(gpuOut && cpuOut) << gpuOut.errorText() << cpuOut.errorText();
  std::vector<float> a = valuesOf(gpuOut), b = valuesOf(cpuOut);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-4) << "element " << i;
}

TEST_F(ApiCuda, CpuRegionsOfAGpuModelTakeHostTensors) {
  // examples/mixed.mdl: x @ cpu is normalised on the cpu, the linear layers
  // run on the GPU, the result comes back to the cpu.
  auto weights = [](int64_t n, float scale) {
    std::vector<float> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = scale * float(int(i % 11) - 5);
    return values;
  };
  std::string image = safetensors({{"norm.weight", {6}, weights(6, 0.2f)},
                                   {"norm.bias", {6}, weights(6, 0.1f)},
                                   {"fc1.weight", {8, 6}, weights(48, 0.05f)},
                                   {"fc1.bias", {8}, weights(8, 0.1f)},
                                   {"fc2.weight", {4, 8}, weights(32, 0.07f)},
                                   {"fc2.bias", {4}, weights(4, 0.1f)}});
  Result<Program> program = Program::compileFile(sourcePath("examples/mixed.mdl"));
  ASSERT_TRUE(program) << program.errorText();
  std::vector<float> x = weights(18, 0.3f);
  std::vector<std::vector<float>> results;
  for (Device device : {Device::cuda(0), Device::cpu()}) {
    Result<Model> model =
        program->instantiate("Mixed", device, {{"in", 6}, {"hidden", 8}, {"out", 4}});
    ASSERT_TRUE(model) << model.errorText();
    ASSERT_TRUE(model->loadWeightsFromMemory(image.data(), image.size()));
    Result<Function> forward = model->compile();
    ASSERT_TRUE(forward) << forward.errorText();
    Result<Tensor> y = forward->call({*Tensor::fromValues<float>({3, 6}, x)});
    ASSERT_TRUE(y) << y.errorText();
    EXPECT_EQ(y->str(), "f32[3, 4] @ cpu");
    results.push_back(valuesOf(y));
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t i = 0; i < results[0].size(); ++i)
    EXPECT_NEAR(results[0][i], results[1][i], 1e-5) << "element " << i;
}

TEST_F(ApiCuda, AHostTensorForAGpuParameterIsE0606) {
  Function forward = compiledReferenceMlp(Device::cuda(0));
  std::vector<float> x = mlpInput(2, 1);
  Result<Tensor> y = forward.call({*Tensor::fromValues<float>({2, 784}, x)});
  ASSERT_FALSE(y);
  const Diagnostic &d = y.diagnostics().at(0);
  EXPECT_EQ(d.code, "E0606");
  EXPECT_EQ(d.message, "input 1 of `forward` is on cpu, expected cuda:0");
  ASSERT_NE(d.primaryLabel(), nullptr);
  EXPECT_EQ(d.primaryLabel()->message, "`x` is declared f32[B, 784] @ cuda:0");
  // A GPU the signature does not name is the same error.
  Result<Tensor> other = Tensor::fromValues<float>({2, 784}, x)->to(Device::cuda(1));
  ASSERT_TRUE(other) << other.errorText();
  Result<Tensor> wrong = forward.call({*other});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.diagnostics().at(0).message,
            "input 1 of `forward` is on cuda:1, expected cuda:0");
}

TEST_F(ApiCuda, CallsFromSeveralThreads) {
  // Runs of one model's plan are serialised (docs/embedding.md); every
  // thread still gets its own, correct result.
  Function forward = compiledReferenceMlp(Device::cuda(0));
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> expected(kThreads);
  for (int t = 0; t < kThreads; ++t)
    expected[t] = valuesOf(forward.call({onGpu({t + 1, 784}, mlpInput(t + 1, t))}));
  std::vector<std::vector<float>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) {
        Result<Tensor> y = forward.call({onGpu({t + 1, 784}, mlpInput(t + 1, t))});
        if (!y) {
          errors[t] = y.errorText();
          return;
        }
        got[t] = *y->toVector<float>();
        if (got[t] != expected[t])
          return;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_EQ(got[t], expected[t]) << "thread " << t;
  }
}

TEST_F(ApiCuda, ArtifactForAGpuLoadsAndRunsLikeTheJit) {
  std::string artifact = testing::TempDir() + "/api-mlp-cuda.mdlc";
  std::string command = std::string(MODELC_DRIVER) + " build " + sourcePath("examples/mlp.mdl") +
                        " --model Mlp --args in=784,hidden=256,out=10 --device cuda:0" +
                        " --gpu-arch=sm_90 -o " + artifact + " 2>&1";
  std::string output;
  if (runCommand(command, output) != 0) {
    if (output.find("NVRTC") != std::string::npos)
      GTEST_SKIP() << "NVRTC is not installed: " << output;
    FAIL() << command << "\n" << output;
  }
  Result<Model> model = Model::load(artifact);
  ASSERT_TRUE(model) << model.errorText();
  EXPECT_EQ(model->device(), Device::cuda(0));
  ASSERT_TRUE(model->loadWeights(refFile("mlp/weights.safetensors")));
  Result<Function> forward = model->compile();
  ASSERT_TRUE(forward) << forward.errorText();
  std::vector<float> x = mlpInput(3, 9);
  Result<Tensor> y = forward->call({onGpu({3, 784}, x)});
  ASSERT_TRUE(y) << y.errorText();
  EXPECT_EQ(y->str(), "f32[3, 10] @ cuda:0");
  Result<Tensor> jit = compiledReferenceMlp(Device::cuda(0)).call({onGpu({3, 784}, x)});
  EXPECT_EQ(valuesOf(y), valuesOf(jit)); // bit for bit

  Result<Tensor> host = forward->call({*Tensor::fromValues<float>({3, 784}, x)});
  ASSERT_FALSE(host);
  EXPECT_EQ(host.diagnostics().at(0).code, "E0606");
  EXPECT_EQ(host.diagnostics().at(0).message, "input 1 of `forward` is on cpu, expected cuda:0");
}

TEST(ApiCudaDriver, WithoutADriverCompilingIsAStructuredError) {
  // A driver library that does not exist: the same on a machine with a GPU.
  setenv("MODELC_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  setCudaBackend(CudaBackend::Driver);
  Result<Program> program = Program::compileFile(sourcePath("examples/mlp.mdl"));
  ASSERT_TRUE(program) << program.errorText();
  Result<Model> model =
      program->instantiate("Mlp", Device::cuda(0), {{"in", 784}, {"hidden", 256}, {"out", 10}});
  ASSERT_TRUE(model) << model.errorText();
  ASSERT_TRUE(model->loadWeights(refFile("mlp/weights.safetensors")));
  Result<Function> forward = model->compile();
  ASSERT_FALSE(forward);
  EXPECT_EQ(forward.diagnostics().at(0).message,
            "no CUDA driver found: cuda:0 needs an NVIDIA GPU (run with --cuda=emulate or "
            "MODELC_CUDA=emulate to use the CPU emulator)");
  Result<Tensor> zeros = Tensor::zeros(DType::F32, {2}, Device::cuda(0));
  ASSERT_FALSE(zeros);
  EXPECT_NE(zeros.errorText().find("no CUDA driver found"), std::string::npos);
  setCudaBackend(CudaBackend::Default);
  unsetenv("MODELC_CUDA_DRIVER_LIBRARY");
}

TEST_F(ApiCuda, SeveralResultsStayOnTheGpu) {
  Result<Function> forward = logitsAndLossModel(Device::cuda(0)).compile();
  ASSERT_TRUE(forward) << forward.errorText();
  Result<Tensor> y = Tensor::fromValues<int64_t>({2}, {1, 0});
  ASSERT_TRUE(y);
  Result<Tensor> yOnGpu = y->to(Device::cuda(0));
  ASSERT_TRUE(yOnGpu) << yOnGpu.errorText();
  Result<std::vector<Tensor>> results =
      forward->callResults({onGpu({2, 2}, {0, 1, 2, 0}), *yOnGpu});
  ASSERT_TRUE(results) << results.errorText();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].str(), "f32[2, 2] @ cuda:0");
  EXPECT_EQ((*results)[1].str(), "f32[] @ cuda:0");
  EXPECT_EQ(valuesOf((*results)[0]), (std::vector<float>{0, 1, 2, 0}));
  std::vector<float> loss = valuesOf((*results)[1]);
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_NEAR(loss[0], logitsAndLossExpected(), 1e-6);
}

} // namespace

namespace {

/// tests/lit/cuda/Inputs/half/models.mdl: std.nn models written once over
/// their dtype (`dtype: dtype = f32`).
Result<Program> halfModels() {
  return Program::compileFile(sourcePath("tests/lit/cuda/Inputs/half/models.mdl"));
}

} // namespace

TEST_F(ApiCuda, HalfWeightsLoadAsTheyAreAndRunOnAGpu) {
  // F16 / BF16 safetensors into f16 / bf16 params on cuda:0, PyTorch's
  // result at torch.testing.assert_close's tolerance for the dtype.
  Result<Program> program = halfModels();
  ASSERT_TRUE(program) << program.errorText();
  for (auto [dtype, rtol] : {std::pair{"f16", 1e-3}, std::pair{"bf16", 1.6e-2}}) {
    // The dtype argument by name, as `--args dtype=f16` gives it.
    Result<Model> model =
        program->instantiate("Mlp", Device::cuda(0), {{"dtype", std::string(dtype)}});
    ASSERT_TRUE(model) << model.errorText();
    std::string folder = sourcePath("tests/lit/cuda/Inputs/half/mlp/");
    Status loaded = model->loadWeights(folder + dtype + ".safetensors");
    ASSERT_TRUE(loaded) << loaded.errorText();
    Result<Function> forward = model->compile("forward");
    ASSERT_TRUE(forward) << forward.errorText();
    std::optional<npy::NpyArray> input = npy::readNpyF32(folder + "input.npy");
    std::optional<npy::NpyArray> expected =
        npy::readNpyF32(folder + "output_" + std::string(dtype) + ".npy");
    ASSERT_TRUE(input && expected);
    Result<Tensor> y = forward->call({onGpu(input->shape, input->values)});
    ASSERT_TRUE(y) << y.errorText();
    std::vector<float> values = valuesOf(y);
    ASSERT_EQ(values.size(), expected->values.size());
    for (size_t i = 0; i < values.size(); ++i)
      EXPECT_LE(std::fabs(values[i] - expected->values[i]),
                1e-5 + rtol * std::fabs(expected->values[i]))
          << dtype << " element " << i;
  }
}

TEST_F(ApiCuda, HalfTensorsGoInAndComeOutAsTheirBits) {
  Result<Program> program = Program::compileString(R"(
model Affine {
  fn forward(x: f16[B, 3] @ cuda:0) -> f16[B, 3] @ cuda:0 { return x * 3.0 + 0.5 }
}
)");
  ASSERT_TRUE(program) << program.errorText();
  Result<Model> model = program->instantiate("Affine", Device::cuda(0), {});
  ASSERT_TRUE(model) << model.errorText();
  Result<Function> forward = model->compile("forward");
  ASSERT_TRUE(forward) << forward.errorText();
  // 1.0, 0.333 (0x3555), 65504 (the largest half), -0.0, 2^-24, 1 + 2^-10.
  std::vector<uint16_t> bits = {0x3c00, 0x3555, 0x7bff, 0x8000, 0x0001, 0x3c01};
  Result<Tensor> host = Tensor::copyFromHost(DType::F16, {2, 3}, bits.data());
  ASSERT_TRUE(host) << host.errorText();
  Result<Tensor> device = host->to(Device::cuda(0));
  ASSERT_TRUE(device) << device.errorText();
  Result<Tensor> y = forward->call({*device});
  ASSERT_TRUE(y) << y.errorText();
  EXPECT_EQ(y->str(), "f16[2, 3] @ cuda:0");
  Result<Tensor> back = y->to(Device::cpu());
  ASSERT_TRUE(back) << back.errorText();
  const auto *out = static_cast<const uint16_t *>(back->hostData());
  // 3.5; 0.33325 * 3 + 0.5 = 1.49976 rounds up to 1.5; 3 * 65504 overflows to
  // +inf; 0.5; 3 * 2^-24 + 0.5 rounds to 0.5; (1 + 2^-10) * 3 + 0.5 =
  // 3.5029296875 is halfway between 3.50195 (odd) and 3.50391 (even): 0x4302.
  std::vector<uint16_t> expected = {0x4300, 0x3e00, 0x7c00, 0x3800, 0x3800, 0x4302};
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(out[i], expected[i]) << "element " << i;
}
