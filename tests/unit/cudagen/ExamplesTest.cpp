//===- ExamplesTest.cpp - Every kernel of the examples compiles and runs --===//
//
// Inputs/*.mlir are `modelc emit --stage=mdl --device cuda:0 --locations` of
// examples/{mlp,lenet5,mlp_block,pipeline}.mdl. Each plan's CUDA C++ must
// compile with NVRTC to PTX and CUBIN for sm_80 and sm_90, pass `ptxas`, and
// build with the host compiler against the emulation header; the MLP's and
// the MLP block's plans run on the CPU emulator and match a plain C++
// reference. Missing tools skip the test by name.
//
//===----------------------------------------------------------------------===//

#include "cudagen/Partition.h"
#include "cudagen/Report.h"

#include "cudaexec/CudaGemm.h"
#include "tests/unit/cuda/LtReference.h"

#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/emulator/Emulator.h"

#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace modelc;
using namespace modelc::cudagen;

namespace {

struct Example {
  const char *file;
  std::vector<std::string> state;
  unsigned kernels; ///< over all devices
  unsigned devices;
};

const Example examples[] = {
    {"mlp.mlir", {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}, 6, 1},
    {"lenet5.mlir",
     {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias",
      "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"},
     11,
     1},
    {"mlp_block.mlir",
     {"norm.weight", "norm.bias", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"},
     8, // with fc1's exact gelu as the kernel after cuBLASLt; fc1 and fc2 run
        // over B * T rows, so each may split K (a sum kernel each)
     1},
    {"pipeline.mlir",
     {"enc.proj.weight", "enc.proj.bias", "dec.proj.weight", "dec.proj.bias"},
     5, // likewise the encoder's gelu
     2},
};

class ExamplesTest : public ::testing::Test {
protected:
  ExamplesTest() {
    context.loadDialect<mlir::mdl::MdlDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                        mlir::tensor::TensorDialect>();
  }

  DevicePlan plan(const Example &example) {
    std::string path =
        std::string(MODELC_SOURCE_DIR) + "/tests/unit/cudagen/Inputs/" + example.file;
    auto text = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(text)) << path;
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>((*text)->getBuffer(), &context);
    EXPECT_TRUE(bool(module)) << path;
    PlanOptions options;
    options.stateNames = example.state;
    options.inputDimNames = {{"B"}};
    llvm::Expected<DevicePlan> p = buildDevicePlan(*module, options);
    EXPECT_TRUE(bool(p)) << example.file << ": " << (p ? "" : llvm::toString(p.takeError()));
    return p ? std::move(*p) : DevicePlan();
  }

  mlir::MLIRContext context;
};

TEST_F(ExamplesTest, PlansHaveTheExpectedKernels) {
  for (const Example &example : examples) {
    DevicePlan p = plan(example);
    unsigned kernels = 0;
    for (const DeviceCode &code : p.devices)
      kernels += code.kernels.size();
    EXPECT_EQ(kernels, example.kernels) << example.file;
    EXPECT_EQ(p.devices.size(), example.devices) << example.file;
    EXPECT_TRUE(p.cpuModule.empty()) << example.file;
    // Every kernel says where it came from.
    for (const DeviceCode &code : p.devices)
      for (const KernelInfo &k : code.kernels)
        EXPECT_FALSE(k.sourceLines.empty()) << k.name;
    // The plan survives its JSON form.
    llvm::Expected<DevicePlan> back = planFromJSON(toJSON(p));
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  }
}

TEST_F(ExamplesTest, EveryKernelCompilesWithNvrtcAndPtxas) {
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
  std::string ptxas = findPtxas();
  for (const Example &example : examples) {
    DevicePlan p = plan(example);
    for (const DeviceCode &code : p.devices)
      for (const char *arch : {"sm_80", "sm_90"}) {
        for (cuda::NvrtcOutput output : {cuda::NvrtcOutput::PTX, cuda::NvrtcOutput::CUBIN}) {
          cuda::NvrtcRequest request;
          request.source = code.source;
          request.name = example.file;
          request.arch = arch;
          request.output = output;
          llvm::Expected<std::string> binary = nvrtc->compile(request);
          ASSERT_TRUE(bool(binary)) << example.file << " " << arch << ": "
                                    << (binary ? "" : llvm::toString(binary.takeError()));
          if (output != cuda::NvrtcOutput::PTX || ptxas.empty())
            continue;
          llvm::Expected<std::string> log = runPtxas(ptxas, *binary, arch);
          ASSERT_TRUE(bool(log)) << (log ? "" : llvm::toString(log.takeError()));
          // ptxas -v names every kernel of the translation unit.
          llvm::StringMap<KernelResources> resources = parsePtxasVerbose(*log);
          for (const KernelInfo &k : code.kernels) {
            auto it = resources.find(k.name);
            ASSERT_NE(it, resources.end()) << k.name << " missing from ptxas -v";
            EXPECT_GT(it->second.registers, 0u) << k.name;
          }
        }
      }
  }
  if (ptxas.empty())
    GTEST_SKIP() << "ptxas not found: NVRTC compiled every kernel, ptxas did not check them";
}

TEST_F(ExamplesTest, EveryKernelBuildsAgainstTheEmulationHeader) {
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    GTEST_SKIP() << "no host C++ compiler (c++) found";
  std::string header = std::string(MODELC_SOURCE_DIR) + "/runtime/cuda/emulator/cuda_emulation.h";
  for (const Example &example : examples) {
    DevicePlan p = plan(example);
    for (const DeviceCode &code : p.devices) {
      llvm::SmallString<128> source;
      ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("cudagen", "cu", source));
      {
        std::error_code ec;
        llvm::raw_fd_ostream os(source, ec);
        os << code.source;
      }
      std::string message;
      llvm::SmallVector<llvm::StringRef> args = {*cxx,      "-std=c++20", "-fsyntax-only", "-Wall",
                                                 "-Werror", "-include",   header,          "-x",
                                                 "c++",     source};
      int status = llvm::sys::ExecuteAndWait(*cxx, args, std::nullopt, {}, 300, 0, &message);
      EXPECT_EQ(status, 0) << example.file << " cuda:" << code.device << " " << message;
      llvm::sys::fs::remove(source);
    }
  }
}

//===----------------------------------------------------------------------===//
// Running plans on the emulator
//===----------------------------------------------------------------------===//

/// Runs a plan that has only launches on the emulator. With `library`, each
/// GEMM call of the plan runs as cuBLASLt would run it instead of its own
/// kernels (tests/unit/cuda/LtReference.h on the emulator's memory, the
/// problem as the executor gives it to cuBLASLt), then its `after` kernel.
std::vector<float> runOnEmulator(const DevicePlan &p, const std::vector<std::vector<float>> &state,
                                 const std::vector<float> &input, const runtime::Shape &inputShape,
                                 bool library = false) {
  cuda::Emulator &emu = cuda::Emulator::global();
  llvm::Expected<SymbolValues> symbols = p.bindSymbols({inputShape});
  EXPECT_TRUE(bool(symbols));
  auto count = [&](const Buffer &b) {
    int64_t n = 1;
    for (const SizeExpr &d : b.shape)
      n *= *d.evaluate(*symbols);
    return n;
  };
  std::vector<void *> memory(p.buffers.size(), nullptr);
  for (const Buffer &b : p.buffers) {
    if (b.viewOf)
      continue;
    llvm::Expected<void *> m = emu.allocate(b.device.index, std::max<int64_t>(count(b), 1) * 4);
    EXPECT_TRUE(bool(m));
    memory[b.id] = *m;
    const std::vector<float> *host = b.kind == BufferKind::State   ? &state[b.index]
                                     : b.kind == BufferKind::Input ? &input
                                                                   : nullptr;
    if (host) {
      EXPECT_EQ(int64_t(host->size()), count(b)) << b.name;
      EXPECT_FALSE(bool(emu.copyHostToDevice(b.device.index, *m, host->data(), host->size() * 4)));
    }
  }
  for (const Buffer &b : p.buffers)
    if (b.viewOf)
      memory[b.id] = memory[*b.viewOf];
  std::map<int, std::shared_ptr<const cuda::EmulatedModule>> modules;
  for (const DeviceCode &code : p.devices) {
    auto module = emu.loadModule(code.source, "plan.cu");
    EXPECT_TRUE(bool(module)) << (module ? "" : llvm::toString(module.takeError()));
    modules[code.device] = *module;
  }
  auto launch = [&](const Launch &l) {
    llvm::Expected<cuda::EmulatedKernel> kernel = modules[l.device]->kernel(l.kernel);
    EXPECT_TRUE(bool(kernel));
    std::vector<void *> pointers(l.args.size());
    std::vector<int64_t> sizes(l.args.size());
    std::vector<void *> args(l.args.size());
    for (size_t i = 0; i < l.args.size(); ++i) {
      if (l.args[i].kind == KernelArg::Kind::Buffer) {
        pointers[i] = memory[l.args[i].buffer];
        args[i] = &pointers[i];
      } else {
        sizes[i] = *l.args[i].size.evaluate(*symbols);
        args[i] = &sizes[i];
      }
    }
    auto dim = [&](const std::array<SizeExpr, 3> &d) {
      return cuda::Dim3{unsigned(*d[0].evaluate(*symbols)), unsigned(*d[1].evaluate(*symbols)),
                        unsigned(*d[2].evaluate(*symbols))};
    };
    cuda::Dim3 grid = dim(l.grid);
    if (!grid.x || !grid.y || !grid.z)
      return; // no work: another size class's GEMM kernel, or an unneeded split-K sum
    llvm::Error err = emu.launch(l.device, *kernel, grid, dim(l.block), args.data());
    EXPECT_FALSE(bool(err)) << l.kernel << ": " << llvm::toString(std::move(err));
  };
  for (size_t index = 0; index < p.steps.size(); ++index) {
    const GemmCall *gemm = nullptr;
    for (const GemmCall &g : p.gemms)
      if (library && g.firstStep == index)
        gemm = &g;
    if (!gemm) {
      launch(std::get<Launch>(p.steps[index]));
      continue;
    }
    llvm::Expected<cuda::LtProblem> lt = cudaexec::ltProblemOf(*gemm, *symbols);
    EXPECT_TRUE(bool(lt)) << (lt ? "" : llvm::toString(lt.takeError()));
    if (!lt)
      return {};
    auto view = [&](BufferId id, cuda::LtType type, int64_t ld, int64_t stride) {
      return fake::LtMatrixView{cuda::ltDataType(type), uint64_t(uintptr_t(memory[id])), ld,
                                stride};
    };
    BufferId c = gemm->residual ? *gemm->residual : gemm->out;
    fake::computeLtProduct(
        lt->transA, lt->transB, uint64_t(lt->m), uint64_t(lt->n), uint64_t(lt->k), lt->batch,
        view(gemm->b.buffer, lt->inputType, lt->lda, lt->strideA),
        view(gemm->a.buffer, lt->inputType, lt->ldb, lt->strideB),
        view(c, lt->outputType, lt->ldc, lt->strideC),
        view(gemm->out, lt->outputType, lt->ldc, lt->strideC), 1.0, lt->accumulate ? 1.0 : 0.0,
        gemm->bias ? uint64_t(uintptr_t(memory[*gemm->bias])) : 0, cuda::ltDataType(lt->outputType),
        uint32_t(cuda::ltEpilogueValue(lt->epilogue)), lt->tf32);
    if (gemm->after)
      launch(*gemm->after);
    index += gemm->stepCount - 1;
  }
  const Buffer &out = p.buffer(p.buffersOfKind(BufferKind::Output).front());
  std::vector<float> result(count(out));
  EXPECT_FALSE(bool(
      emu.copyDeviceToHost(out.device.index, result.data(), memory[out.id], result.size() * 4)));
  for (const Buffer &b : p.buffers) {
    if (!b.viewOf) {
      EXPECT_FALSE(bool(emu.free(b.device.index, memory[b.id])));
    }
  }
  return result;
}

std::vector<float> randomValues(size_t n, unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// y[b, o] = sum_i x[b, i] * w[o, i] + bias[o]
std::vector<float> linear(const std::vector<float> &x, const std::vector<float> &w,
                          const std::vector<float> &bias, int64_t rows, int64_t in, int64_t out) {
  std::vector<float> y(rows * out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias[o];
      for (int64_t i = 0; i < in; ++i)
        acc += double(x[r * in + i]) * w[o * in + i];
      y[r * out + o] = float(acc);
    }
  return y;
}

void expectClose(const std::vector<float> &got, const std::vector<float> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i])) << "element " << i;
}

TEST_F(ExamplesTest, MlpRunsOnTheEmulator) {
  DevicePlan p = plan(examples[0]);
  const int64_t batch = 3, in = 784, hidden = 256, out = 10;
  std::vector<std::vector<float>> state = {
      randomValues(hidden * in, 1, 0.05f), randomValues(hidden, 2, 0.1f),
      randomValues(out * hidden, 3, 0.1f), randomValues(out, 4, 0.1f)};
  std::vector<float> x = randomValues(batch * in, 5, 1);
  std::vector<float> got = runOnEmulator(p, state, x, {batch, in});
  // The same plan with its GEMMs as cuBLASLt runs them (and their `after`
  // kernels).
  std::vector<float> library = runOnEmulator(p, state, x, {batch, in}, /*library=*/true);
  std::vector<float> h = linear(x, state[0], state[1], batch, in, hidden);
  for (float &v : h)
    v = std::max(v, 0.0f);
  std::vector<float> want = linear(h, state[2], state[3], batch, hidden, out);
  for (int64_t r = 0; r < batch; ++r) {
    double largest = -INFINITY, total = 0;
    for (int64_t o = 0; o < out; ++o)
      largest = std::max<double>(largest, want[r * out + o]);
    for (int64_t o = 0; o < out; ++o)
      total += std::exp(want[r * out + o] - largest);
    for (int64_t o = 0; o < out; ++o)
      want[r * out + o] = float(want[r * out + o] - largest - std::log(total));
  }
  expectClose(got, want);
  EXPECT_EQ(p.gemms.size(), 2u);
  expectClose(library, want);
}

TEST_F(ExamplesTest, MlpBlockRunsOnTheEmulator) {
  DevicePlan p = plan(examples[2]);
  const int64_t batch = 2, tokens = 3, dim = 256, hidden = 1024, rows = batch * tokens;
  std::vector<std::vector<float>> state = {randomValues(dim, 11, 1),
                                           randomValues(dim, 12, 0.2f),
                                           randomValues(hidden * dim, 13, 0.06f),
                                           randomValues(hidden, 14, 0.1f),
                                           randomValues(dim * hidden, 15, 0.03f),
                                           randomValues(dim, 16, 0.1f)};
  std::vector<float> x = randomValues(rows * dim, 17, 1);
  std::vector<float> got = runOnEmulator(p, state, x, {batch, tokens, dim});
  // The same plan with its GEMMs as cuBLASLt runs them (and their `after`
  // kernels).
  std::vector<float> library = runOnEmulator(p, state, x, {batch, tokens, dim}, /*library=*/true);
  // x + fc2(gelu(fc1(layer_norm(x))))
  std::vector<float> normed(rows * dim);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t d = 0; d < dim; ++d)
      mean += x[r * dim + d];
    mean /= dim;
    for (int64_t d = 0; d < dim; ++d)
      var += (x[r * dim + d] - mean) * (x[r * dim + d] - mean);
    var /= dim;
    for (int64_t d = 0; d < dim; ++d)
      normed[r * dim + d] =
          float((x[r * dim + d] - mean) / std::sqrt(var + 1e-5) * state[0][d] + state[1][d]);
  }
  std::vector<float> h = linear(normed, state[2], state[3], rows, dim, hidden);
  for (float &v : h)
    v = float(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
  std::vector<float> want = linear(h, state[4], state[5], rows, hidden, dim);
  for (int64_t i = 0; i < rows * dim; ++i)
    want[i] += x[i];
  expectClose(got, want);
  // fc1's bias in cuBLASLt's epilogue, its exact gelu after it; fc2's bias
  // and the residual x in cuBLASLt's (C, beta = 1).
  ASSERT_EQ(p.gemms.size(), 2u);
  EXPECT_TRUE(p.gemms[0].bias && p.gemms[0].after && !p.gemms[0].residual);
  EXPECT_TRUE(p.gemms[1].bias && p.gemms[1].residual && !p.gemms[1].after);
  expectClose(library, want);
}

/// NCHW conv2d (stride 1, no groups) with bias, then ReLU.
std::vector<float> convRelu(const std::vector<float> &x, const std::vector<float> &w,
                            const std::vector<float> &bias, int64_t n, int64_t c, int64_t h,
                            int64_t o, int64_t k, int64_t pad) {
  int64_t oh = h + 2 * pad - k + 1;
  std::vector<float> y(n * o * oh * oh);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < oh; ++j) {
          double acc = bias[oc];
          for (int64_t ic = 0; ic < c; ++ic)
            for (int64_t r = 0; r < k; ++r)
              for (int64_t t = 0; t < k; ++t) {
                int64_t ih = i - pad + r, iw = j - pad + t;
                if (ih >= 0 && ih < h && iw >= 0 && iw < h)
                  acc += double(x[((b * c + ic) * h + ih) * h + iw]) *
                         w[((oc * c + ic) * k + r) * k + t];
              }
          y[((b * o + oc) * oh + i) * oh + j] = std::max(float(acc), 0.0f);
        }
  return y;
}

/// 2x2 max pooling with stride 2.
std::vector<float> maxPool(const std::vector<float> &x, int64_t planes, int64_t h) {
  int64_t oh = h / 2;
  std::vector<float> y(planes * oh * oh);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < oh; ++j) {
        float m = -INFINITY;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t t = 0; t < 2; ++t)
            m = std::max(m, x[(p * h + 2 * i + r) * h + 2 * j + t]);
        y[(p * oh + i) * oh + j] = m;
      }
  return y;
}

TEST_F(ExamplesTest, LeNet5RunsOnTheEmulator) {
  DevicePlan p = plan(examples[1]);
  const int64_t batch = 2;
  std::vector<std::vector<float>> state = {
      randomValues(6 * 25, 21, 0.3f),     randomValues(6, 22, 0.1f),
      randomValues(16 * 150, 23, 0.1f),   randomValues(16, 24, 0.1f),
      randomValues(120 * 400, 25, 0.05f), randomValues(120, 26, 0.1f),
      randomValues(84 * 120, 27, 0.1f),   randomValues(84, 28, 0.1f),
      randomValues(10 * 84, 29, 0.1f),    randomValues(10, 30, 0.1f)};
  std::vector<float> x = randomValues(batch * 28 * 28, 31, 1);
  std::vector<float> got = runOnEmulator(p, state, x, {batch, 1, 28, 28});
  // The same plan with its GEMMs as cuBLASLt runs them (and their `after`
  // kernels).
  std::vector<float> library = runOnEmulator(p, state, x, {batch, 1, 28, 28}, /*library=*/true);
  std::vector<float> a =
      maxPool(convRelu(x, state[0], state[1], batch, 1, 28, 6, 5, 2), batch * 6, 28);
  std::vector<float> f =
      maxPool(convRelu(a, state[2], state[3], batch, 6, 14, 16, 5, 0), batch * 16, 10);
  std::vector<float> h1 = linear(f, state[4], state[5], batch, 400, 120);
  for (float &v : h1)
    v = std::max(v, 0.0f);
  std::vector<float> h2 = linear(h1, state[6], state[7], batch, 120, 84);
  for (float &v : h2)
    v = std::max(v, 0.0f);
  expectClose(got, linear(h2, state[8], state[9], batch, 84, 10));
  EXPECT_EQ(p.gemms.size(), 3u) << "the linear layers; the convolutions stay own";
  expectClose(library, linear(h2, state[8], state[9], batch, 84, 10));
}

} // namespace
