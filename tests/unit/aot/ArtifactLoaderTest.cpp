//===- ArtifactLoaderTest.cpp - build, load and call artifacts in-process -===//

#include "aot/ArtifactLoader.h"
#include "aot/ArtifactWriter.h"

#include "exec/Executor.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/Nvrtc.h"
#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

using namespace modelc;
using namespace modelc::aot;

namespace {

// Matmul (BLAS), layer norm, exp and log (libm), a second entry fn.
constexpr const char *kSource = R"mdl(
import std.nn

model Tiny<D: device>(in: int, out: int) {
  fc = nn.Linear(in, out)
  norm = nn.LayerNorm(out)

  fn forward(x: f32[B, in] @ D, y: f32[B, out] @ D) -> f32[B, out] @ D {
    return log_softmax(norm(fc(x)) + y, dim: 1)
  }
  fn single(x: f32[B, in] @ D) -> f32[B, out] @ D {
    return relu(fc(x))
  }
}
)mdl";

struct Fixture {
  std::unique_ptr<Compilation> compilation;
  std::optional<mlirgen::ConcreteModel> model;
  std::optional<runtime::SafeTensorsFile> weights;
};

runtime::Tensor iota(llvm::ArrayRef<int64_t> shape, float scale) {
  runtime::Tensor t = runtime::Tensor::zeros(runtime::DType::F32, shape);
  llvm::MutableArrayRef<float> values = t.mutableValues<float>();
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = scale * float(int(i % 7) - 3) + 0.01f * float(i);
  return t;
}

Fixture tiny() {
  Fixture f;
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  f.compilation = std::make_unique<Compilation>(options);
  f.compilation->addBuffer("tiny.mdl", kSource);
  EXPECT_TRUE(f.compilation->check());
  auto model = mlirgen::instantiateModel(*f.compilation->program(), "Tiny", "in=5,out=3",
                                         sema::Device::cpu());
  EXPECT_TRUE(bool(model)) << llvm::toString(model.takeError());
  f.model = std::move(*model);
  std::vector<runtime::NamedTensor> tensors = {{"fc.weight", iota({3, 5}, 0.25f)},
                                               {"fc.bias", iota({3}, 0.5f)},
                                               {"norm.weight", iota({3}, 1.0f)},
                                               {"norm.bias", iota({3}, -0.5f)}};
  llvm::Expected<std::string> bytes = runtime::serializeSafeTensors(tensors);
  EXPECT_TRUE(bool(bytes));
  auto file = runtime::SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(*bytes, "tiny.safetensors"));
  EXPECT_TRUE(bool(file));
  f.weights = std::move(*file);
  return f;
}

std::string build(Fixture &f, ArtifactBuildOptions options = {}) {
  auto bytes = buildArtifact(*f.compilation->program(), f.compilation->sourceMgr(), *f.model,
                             options, f.compilation->diagnostics());
  EXPECT_TRUE(bool(bytes)) << llvm::toString(bytes.takeError());
  EXPECT_TRUE(bytes->has_value());
  return **bytes;
}

std::unique_ptr<LoadedArtifact> load(llvm::StringRef bytes) {
  auto loaded = LoadedArtifact::load(llvm::MemoryBuffer::getMemBufferCopy(bytes, "tiny.mdlc"));
  EXPECT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  return std::move(*loaded);
}

std::string errorText(llvm::Error err) { return llvm::toString(std::move(err)); }

/// The JIT's output for the same model, weights and inputs.
runtime::Tensor jitOutput(Fixture &f, llvm::StringRef fn, llvm::ArrayRef<runtime::Tensor> inputs) {
  auto weights = exec::bindModelWeights(*f.model, *f.weights, f.compilation->diagnostics());
  EXPECT_TRUE(weights.has_value());
  std::vector<exec::EntryInput> entryInputs;
  for (const runtime::Tensor &t : inputs)
    entryInputs.push_back({t, runtime::Device::cpu(), "input"});
  exec::RunOptions options;
  options.fnName = fn.str();
  auto out = exec::runModel(*f.compilation->program(), f.compilation->sourceMgr(), *f.model,
                            *weights, entryInputs, options, f.compilation->diagnostics());
  EXPECT_TRUE(bool(out)) << llvm::toString(out.takeError());
  EXPECT_TRUE(out->has_value());
  return **out;
}

void expectBitIdentical(const runtime::Tensor &a, const runtime::Tensor &b) {
  ASSERT_EQ(a.str(), b.str());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
}

TEST(ArtifactLoaderTest, RunsBitIdenticalToTheJit) {
  Fixture f = tiny();
  std::unique_ptr<LoadedArtifact> artifact = load(build(f));
  EXPECT_EQ(artifact->contents().modelName, "Tiny");
  ASSERT_EQ(artifact->stateLayout().size(), 4u);
  EXPECT_EQ(artifact->stateLayout()[0].name, "fc.weight");
  const EntryFn *fn = artifact->findFn("forward");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->params[0].declared, "f32[B, 5] @ cpu");
  ASSERT_EQ(fn->results.size(), 1u);
  EXPECT_EQ(fn->results[0].shapeString(), "[B, 3]");

  auto weights = artifact->bindWeights(*f.weights);
  ASSERT_TRUE(bool(weights)) << llvm::toString(weights.takeError());
  // One artifact serves every batch size.
  for (int64_t batch : {1, 4, 7}) {
    std::vector<runtime::Tensor> inputs = {iota({batch, 5}, 0.5f), iota({batch, 3}, 0.1f)};
    auto out = artifact->call("forward", *weights, inputs);
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    expectBitIdentical(*out, jitOutput(f, "forward", inputs));
  }
}

TEST(ArtifactLoaderTest, CallsFromManyThreads) {
  Fixture f = tiny();
  std::unique_ptr<LoadedArtifact> artifact = load(build(f));
  auto weights = artifact->bindWeights(*f.weights);
  ASSERT_TRUE(bool(weights));
  std::vector<runtime::Tensor> inputs = {iota({6, 5}, 0.5f), iota({6, 3}, 0.1f)};
  auto expected = artifact->call("forward", *weights, inputs);
  ASSERT_TRUE(bool(expected));
  std::vector<std::thread> threads;
  std::atomic<int> identical{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto out = artifact->call("forward", *weights, inputs);
        if (out && std::memcmp(out->data(), expected->data(), out->nbytes()) == 0)
          ++identical;
        else if (!out)
          llvm::consumeError(out.takeError());
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(identical, 100);
}

TEST(ArtifactLoaderTest, OtherEntryFn) {
  Fixture f = tiny();
  ArtifactBuildOptions options;
  options.fnName = "single";
  std::unique_ptr<LoadedArtifact> artifact = load(build(f, options));
  EXPECT_EQ(artifact->findFn("forward"), nullptr);
  auto weights = artifact->bindWeights(*f.weights);
  ASSERT_TRUE(bool(weights));
  std::vector<runtime::Tensor> inputs = {iota({2, 5}, 0.5f)};
  auto out = artifact->call("single", *weights, inputs);
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  expectBitIdentical(*out, jitOutput(f, "single", inputs));
  EXPECT_EQ(errorText(artifact->call("forward", *weights, inputs).takeError()),
            "tiny.mdlc: has no entry fn `forward` (it has `single`)");
}

TEST(ArtifactLoaderTest, EmbeddedWeightsOutliveTheArtifact) {
  Fixture f = tiny();
  ArtifactBuildOptions options;
  options.weights = &*f.weights;
  std::unique_ptr<LoadedArtifact> artifact = load(build(f, options));
  ASSERT_TRUE(artifact->hasEmbeddedWeights());
  auto weights = artifact->embeddedWeights();
  ASSERT_TRUE(bool(weights)) << llvm::toString(weights.takeError());
  std::vector<runtime::Tensor> inputs = {iota({3, 5}, 0.5f), iota({3, 3}, 0.1f)};
  auto out = artifact->call("forward", *weights, inputs);
  ASSERT_TRUE(bool(out));
  expectBitIdentical(*out, jitOutput(f, "forward", inputs));
  runtime::Tensor bias = weights->find("fc.bias")->tensor;
  artifact.reset();
  EXPECT_EQ(bias.values<float>()[1], iota({3}, 0.5f).values<float>()[1]);

  std::unique_ptr<LoadedArtifact> bare = load(build(f));
  EXPECT_FALSE(bare->hasEmbeddedWeights());
  EXPECT_EQ(errorText(bare->embeddedWeights().takeError()),
            "tiny.mdlc: holds no weights (build it with `modelc build --weights FILE`)");
}

TEST(ArtifactLoaderTest, WeightsThatDoNotFitAreRefused) {
  Fixture f = tiny();
  std::unique_ptr<LoadedArtifact> artifact = load(build(f));
  std::vector<runtime::NamedTensor> tensors = {{"fc.weight", iota({5, 3}, 1.0f)}};
  auto bytes = runtime::serializeSafeTensors(tensors);
  ASSERT_TRUE(bool(bytes));
  auto file = runtime::SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(*bytes, "wrong.safetensors"));
  ASSERT_TRUE(bool(file));
  std::string message = errorText(artifact->bindWeights(*file).takeError());
  EXPECT_NE(message.find("fc.weight: expected f32[3, 5], found f32[5, 3]"), std::string::npos)
      << message;
  EXPECT_NE(message.find("norm.bias"), std::string::npos) << message;
}

TEST(ArtifactLoaderTest, InputsAreCheckedLikeTheJit) {
  Fixture f = tiny();
  std::unique_ptr<LoadedArtifact> artifact = load(build(f));
  auto weights = artifact->bindWeights(*f.weights);
  ASSERT_TRUE(bool(weights));
  auto message = [&](std::vector<runtime::Tensor> inputs) {
    return errorText(artifact->call("forward", *weights, inputs, {"x.npy", "y.npy"}).takeError());
  };
  EXPECT_EQ(message({iota({2, 5}, 1)}),
            "error[E0602]: `forward` takes 2 input(s), but 1 were given\n"
            "  note: `forward` is declared with 2 parameter(s) (in tiny.mdlc)\n"
            "  note: given: x.npy (f32[2, 5] @ cpu)");
  EXPECT_EQ(message({runtime::Tensor::zeros(runtime::DType::F64, {2, 5}), iota({2, 3}, 1)}),
            "error[E0603]: input 1 of `forward` has dtype f64, expected f32\n"
            "  note: `x` is declared f32[B, 5] @ cpu (in tiny.mdlc)\n"
            "  note: x.npy holds f64[2, 5] @ cpu");
  runtime::Tensor onGpu = iota({2, 5}, 1);
  onGpu =
      runtime::Tensor::borrow(onGpu.dtype(), onGpu.shape(), onGpu.data(),
                              std::make_shared<runtime::Tensor>(onGpu), runtime::Device::cuda(0));
  EXPECT_EQ(message({onGpu, iota({2, 3}, 1)}),
            "error[E0606]: input 1 of `forward` is on cuda:0, expected cpu\n"
            "  note: `x` is declared f32[B, 5] @ cpu (in tiny.mdlc)");
  EXPECT_EQ(message({iota({2, 5, 1}, 1), iota({2, 3}, 1)}),
            "error[E0604]: input 1 of `forward` has shape [2, 5, 1], expected [B, 5]\n"
            "  note: `x` is declared f32[B, 5] @ cpu (in tiny.mdlc)\n"
            "  note: the input has rank 3, the parameter rank 2");
  EXPECT_EQ(message({iota({2, 5}, 1), iota({2, 4}, 1)}),
            "error[E0604]: input 2 of `forward` has shape [2, 4], expected [B, 3]\n"
            "  note: `y` is declared f32[B, 3] @ cpu (in tiny.mdlc)\n"
            "  note: dim 1 is 4, expected 3");
  EXPECT_EQ(message({iota({2, 5}, 1), iota({3, 3}, 1)}),
            "error[E0605]: input 2 of `forward` gives `B` = 3, but an earlier input gave 2\n"
            "  note: `y` is declared f32[B, 3] @ cpu (in tiny.mdlc)\n"
            "  note: input 1 (x.npy) has `B` = 2");
  // A strided (transposed) input is made contiguous, never misread.
  runtime::Tensor xT = iota({5, 2}, 0.5f).transpose(0, 1);
  auto strided = artifact->call("forward", *weights, {xT, iota({2, 3}, 1)});
  auto dense = artifact->call("forward", *weights, {xT.contiguous(), iota({2, 3}, 1)});
  ASSERT_TRUE(strided && dense);
  expectBitIdentical(*strided, *dense);
}

/// `bytes` with its target replaced, re-checksummed.
std::string retargeted(llvm::StringRef bytes, llvm::StringRef triple,
                       std::vector<std::string> features) {
  llvm::Expected<Artifact> artifact = parseArtifact(bytes, "tiny.mdlc");
  EXPECT_TRUE(bool(artifact));
  if (!triple.empty())
    artifact->target.triple = triple.str();
  artifact->target.features = std::move(features);
  return serializeArtifact(*artifact);
}

TEST(ArtifactLoaderTest, OtherHostsAreRefusedBeforeLinking) {
  Fixture f = tiny();
  std::string bytes = build(f);
  TargetInfo host = TargetInfo::host();
  auto refusal = [](llvm::StringRef artifact) {
    auto loaded = LoadedArtifact::load(llvm::MemoryBuffer::getMemBufferCopy(artifact, "t.mdlc"));
    EXPECT_FALSE(bool(loaded));
    return loaded ? std::string() : errorText(loaded.takeError());
  };
  std::string arm = refusal(retargeted(bytes, "aarch64-unknown-linux-gnu", {}));
  EXPECT_NE(arm.find("t.mdlc: compiled for aarch64-unknown-linux-gnu (cpu "), std::string::npos)
      << arm;
  EXPECT_NE(arm.find("but this machine is " + host.triple), std::string::npos) << arm;

  std::vector<std::string> features = host.features;
  features.push_back("made-up-feature");
  features.push_back("zz-another");
  std::string lacking = refusal(retargeted(bytes, "", features));
  EXPECT_NE(lacking.find("lacks: made-up-feature, zz-another; rebuild it here"), std::string::npos)
      << lacking;
}

TEST(ArtifactLoaderTest, BrokenObjectCodeIsALinkError) {
  Fixture f = tiny();
  llvm::Expected<Artifact> artifact = parseArtifact(build(f), "tiny.mdlc");
  ASSERT_TRUE(bool(artifact));
  std::string garbage(artifact->object.size(), '\x7f');
  artifact->object = garbage;
  auto loaded = LoadedArtifact::load(
      llvm::MemoryBuffer::getMemBufferCopy(serializeArtifact(*artifact), "tiny.mdlc"));
  ASSERT_FALSE(bool(loaded));
  std::string message = errorText(loaded.takeError());
  EXPECT_TRUE(llvm::StringRef(message).starts_with("tiny.mdlc: cannot link the object code: "))
      << message;
}

/// Tiny placed on cuda:0, as an artifact for `arch`; empty when NVRTC is
/// missing (the test then skips).
std::string cudaArtifact(Fixture &f, llvm::StringRef arch) {
  if (llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get(); !nvrtc) {
    llvm::consumeError(nvrtc.takeError());
    return "";
  }
  auto model = mlirgen::instantiateModel(*f.compilation->program(), "Tiny", "in=5,out=3",
                                         sema::Device::cuda(0));
  EXPECT_TRUE(bool(model)) << llvm::toString(model.takeError());
  f.model = std::move(*model);
  ArtifactBuildOptions options;
  options.gpuArch = arch.str();
  options.modelDevice = "cuda:0";
  return build(f, options);
}

/// Host bytes labelled with the device they are placed on (as `modelc run`
/// passes inputs).
runtime::Tensor placedOn(const runtime::Tensor &t, runtime::Device device) {
  return runtime::Tensor::borrow(t.dtype(), t.shape(), t.data(),
                                 std::make_shared<runtime::Tensor>(t), device);
}

TEST(ArtifactLoaderTest, CudaArtifactRunsOnTheEmulatorAsTheJitDoes) {
  Fixture f = tiny();
  std::string bytes = cudaArtifact(f, "sm_90");
  if (bytes.empty())
    GTEST_SKIP() << "NVRTC is not installed: cuda artifacts cannot be built";
  LoadOptions options;
  options.cudaMode = cudaexec::CudaMode::Emulate;
  auto loaded =
      LoadedArtifact::load(llvm::MemoryBuffer::getMemBufferCopy(bytes, "tiny.mdlc"), options);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  LoadedArtifact &artifact = **loaded;
  EXPECT_TRUE(artifact.contents().isCuda());
  ASSERT_EQ(artifact.contents().gpus.size(), 1u);
  EXPECT_EQ(artifact.contents().gpus[0].cubinArch, "sm_90");
  EXPECT_EQ(artifact.contents().gpus[0].ptxArch, "compute_90");
  EXPECT_EQ(artifact.kernelImage(0), cuda::PrebuiltImage::Source);
  EXPECT_EQ(artifact.findFn("forward")->params[0].declared, "f32[B, 5] @ cuda:0");

  auto weights = artifact.bindWeights(*f.weights);
  ASSERT_TRUE(bool(weights)) << llvm::toString(weights.takeError());
  for (int64_t batch : {1, 6}) {
    std::vector<runtime::Tensor> host = {iota({batch, 5}, 0.5f), iota({batch, 3}, 0.1f)};
    std::vector<runtime::Tensor> inputs = {placedOn(host[0], runtime::Device::cuda(0)),
                                           placedOn(host[1], runtime::Device::cuda(0))};
    auto out = artifact.call("forward", *weights, inputs);
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    exec::RunOptions jit;
    jit.cudaMode = cudaexec::CudaMode::Emulate;
    auto jitWeights = exec::bindModelWeights(*f.model, *f.weights, f.compilation->diagnostics());
    ASSERT_TRUE(jitWeights.has_value());
    std::vector<exec::EntryInput> entryInputs = {{host[0], runtime::Device::cuda(0), "x"},
                                                 {host[1], runtime::Device::cuda(0), "y"}};
    auto expected = exec::runModel(*f.compilation->program(), f.compilation->sourceMgr(), *f.model,
                                   *jitWeights, entryInputs, jit, f.compilation->diagnostics());
    ASSERT_TRUE(bool(expected)) << llvm::toString(expected.takeError());
    ASSERT_TRUE(expected->has_value());
    expectBitIdentical(*out, **expected);
  }
  // A host tensor for a cuda:0 parameter is E0606, never copied silently.
  auto wrong = artifact.call("forward", *weights, {iota({2, 5}, 0.5f), iota({2, 3}, 0.1f)});
  ASSERT_FALSE(bool(wrong));
  EXPECT_EQ(errorText(wrong.takeError()),
            "error[E0606]: input 1 of `forward` is on cpu, expected cuda:0\n"
            "  note: `x` is declared f32[B, 5] @ cuda:0 (in tiny.mdlc)");
}

/// The driver path against tests/unit/cuda's fake libcuda (a GPU of compute
/// capability 9.0): the CUBIN is loaded when it was built for sm_90, the PTX
/// otherwise - and neither needs NVRTC at load time.
TEST(ArtifactLoaderTest, DriverLoadsTheCubinForItsArchElseThePtx) {
  Fixture f = tiny();
  std::string sm90 = cudaArtifact(f, "sm_90");
  if (sm90.empty())
    GTEST_SKIP() << "NVRTC is not installed: cuda artifacts cannot be built";
  std::string sm80 = cudaArtifact(f, "sm_80");
  llvm::Expected<std::unique_ptr<cuda::CudaDriver>> driver =
      cuda::CudaDriver::open(MODELC_FAKE_CUDA_DRIVER);
  ASSERT_TRUE(bool(driver)) << llvm::toString(driver.takeError());
  cuda::KernelCache cache(std::nullopt);
  std::unique_ptr<cuda::CudaBackend> backend = cuda::makeDriverBackend(**driver, cache);
  LoadOptions options;
  options.backends = [&](int device) -> llvm::Expected<cuda::CudaBackend &> {
    if (llvm::Error error = backend->checkDevice(device))
      return error;
    return *backend;
  };
  for (auto [bytes, image] :
       {std::pair{&sm90, cuda::PrebuiltImage::Cubin}, std::pair{&sm80, cuda::PrebuiltImage::Ptx}}) {
    auto loaded =
        LoadedArtifact::load(llvm::MemoryBuffer::getMemBufferCopy(*bytes, "tiny.mdlc"), options);
    ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
    EXPECT_EQ((*loaded)->kernelImage(0), image) << cuda::prebuiltImageName(image).str();
    // The fake runs no kernels, but the whole call goes through the driver.
    auto weights = (*loaded)->bindWeights(*f.weights);
    ASSERT_TRUE(bool(weights));
    auto out = (*loaded)->call("forward", *weights,
                               {placedOn(iota({2, 5}, 0.5f), runtime::Device::cuda(0)),
                                placedOn(iota({2, 3}, 0.1f), runtime::Device::cuda(0))});
    ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
    EXPECT_EQ(out->str(), "f32[2, 3] @ cpu");
  }
}

} // namespace
