//===- NvrtcTest.cpp - Every test kernel compiles for real GPUs -----------===//
//
// Each kernel the emulator runs must also compile with NVRTC to PTX and to
// CUBIN for sm_80 and sm_90, and ptxas must accept the sm_90 PTX. Where the
// CUDA toolkit is absent these tests skip themselves with a message.
//
//===----------------------------------------------------------------------===//

#include "CudaTestSupport.h"

#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/emulator/HostCompiler.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace modelc::cuda;
using namespace modelc::cuda::test;

namespace {

#define REQUIRE_NVRTC(nvrtc)                                                                       \
  llvm::Expected<Nvrtc &> nvrtc##OrError = Nvrtc::get();                                           \
  if (!nvrtc##OrError)                                                                             \
    GTEST_SKIP() << "NVRTC not found, kernels not compiled for a GPU: "                            \
                 << llvm::toString(nvrtc##OrError.takeError());                                    \
  Nvrtc &nvrtc = *nvrtc##OrError

TEST(Nvrtc, MissingLibraryIsItsOwnError) {
  Failure failure =
      failureOf(Nvrtc::load({"/nonexistent/libnvrtc.so.13", "libnvrtc-not-here.so"}).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::NvrtcNotFound);
  EXPECT_EQ(failure.text.rfind("NVRTC not found", 0), 0u) << failure.text;
  EXPECT_NE(failure.text.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << failure.text;
}

TEST(Nvrtc, SearchOrderPrefersVersion13ThenFallsBackToToolkitDirectories) {
  ScopedEnvironment unforced("MODELC_NVRTC_LIBRARY", std::nullopt);
  ScopedEnvironment home("CUDA_HOME", std::string("/opt/cuda-x"));
  std::vector<std::string> candidates = Nvrtc::defaultCandidates();
  ASSERT_GE(candidates.size(), 4u);
  EXPECT_EQ(candidates[0], "libnvrtc.so.13");
  EXPECT_EQ(candidates[1], "libnvrtc.so.12");
  EXPECT_EQ(candidates[2], "/opt/cuda-x/lib64/libnvrtc.so.13");
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), "/usr/local/cuda/lib64/libnvrtc.so.12"),
            candidates.end());
}

TEST(Nvrtc, PtxTargetsTheVirtualArchitecture) {
  NvrtcRequest request;
  request.arch = "sm_90";
  request.options = {"-lineinfo"};
  EXPECT_EQ(Nvrtc::optionsFor(request),
            std::vector<std::string>({"--gpu-architecture=compute_90", "-lineinfo"}));
  request.output = NvrtcOutput::CUBIN;
  EXPECT_EQ(Nvrtc::optionsFor(request)[0], "--gpu-architecture=sm_90");
}

TEST(Nvrtc, CompileErrorCarriesTheLog) {
  REQUIRE_NVRTC(nvrtc);
  NvrtcRequest request;
  request.source = "extern \"C\" __global__ void broken(float *x) { x[0] = undefined_name; }";
  request.name = "broken.cu";
  Failure failure = failureOf(nvrtc.compile(request).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::NvrtcCompileFailed);
  EXPECT_NE(failure.text.find("broken.cu"), std::string::npos) << failure.text;
  EXPECT_NE(failure.text.find("undefined_name"), std::string::npos) << failure.text;
  // A rejected source is a compiler bug: the message says so and names a
  // file holding the source.
  EXPECT_NE(failure.text.find("internal compiler error"), std::string::npos) << failure.text;
  llvm::StringRef marker = "the kernel source is saved in ";
  size_t at = failure.text.find(marker.str());
  ASSERT_NE(at, std::string::npos) << failure.text;
  std::string savedPath = failure.text.substr(at + marker.size());
  savedPath = savedPath.substr(0, savedPath.find_first_of("\n"));
  auto saved = llvm::MemoryBuffer::getFile(savedPath);
  ASSERT_TRUE(bool(saved)) << savedPath;
  EXPECT_EQ((*saved)->getBuffer(), request.source);
  llvm::sys::fs::remove(savedPath);

  request.source = "extern \"C\" __global__ void fine() {}";
  request.arch = "sm_1";
  Failure badArch = failureOf(nvrtc.compile(request).takeError());
  EXPECT_EQ(badArch.kind, CudaErrorKind::NvrtcCompileFailed);
  if (size_t savedAt = badArch.text.find(marker.str()); savedAt != std::string::npos) {
    std::string path = badArch.text.substr(savedAt + marker.size());
    llvm::sys::fs::remove(path.substr(0, path.find_first_of("\n")));
  }
  request.arch = "compute_90";
  request.output = NvrtcOutput::CUBIN;
  EXPECT_EQ(failureOf(nvrtc.compile(request).takeError()).kind, CudaErrorKind::NvrtcCompileFailed);
}

TEST(Nvrtc, CachedCompilesAreKeyedByArchitectureAndVersion) {
  REQUIRE_NVRTC(nvrtc);
  TemporaryDirectory dir;
  KernelCache cache(dir.path());
  NvrtcRequest request;
  std::string source = readKernel("vector_add.cu");
  request.source = source;
  request.arch = "sm_90";
  auto first = nvrtc.compileCached(request, cache);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  auto second = nvrtc.compileCached(request, cache);
  ASSERT_TRUE(bool(second));
  EXPECT_EQ(first->get(), second->get());
  request.arch = "sm_80";
  auto other = nvrtc.compileCached(request, cache);
  ASSERT_TRUE(bool(other));
  EXPECT_NE(**first, **other);
  EXPECT_EQ(cache.stats().misses, 2u);
  EXPECT_EQ(cache.stats().memoHits, 1u);
}

TEST(Nvrtc, EmitCKernelIsCurrentWithItsSource) {
  // emitc_scale_relu.cu is mlir-translate's output for the .mlir beside it;
  // regenerate it to prove the EmitC route still prints what NVRTC accepts.
  std::string translate = "/usr/lib/llvm-22/bin/mlir-translate";
  if (!llvm::sys::fs::can_execute(translate))
    GTEST_SKIP() << "mlir-translate not found at " << translate;
  TemporaryDirectory dir;
  std::string output = dir.path() + "/out.cu";
  std::string input = std::string(MODELC_CUDA_TEST_KERNELS) + "/emitc_scale_relu.mlir";
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(output),
                                                std::nullopt};
  ASSERT_EQ(llvm::sys::ExecuteAndWait(translate, {translate, "--mlir-to-cpp", input}, std::nullopt,
                                      redirects, 60),
            0);
  auto generated = llvm::MemoryBuffer::getFile(output);
  ASSERT_TRUE(bool(generated));
  std::string checkedIn = readKernel("emitc_scale_relu.cu");
  // The checked-in file adds a two-line comment in front.
  llvm::StringRef body = checkedIn;
  body = body.split('\n').second.split('\n').second;
  EXPECT_EQ((*generated)->getBuffer(), body);
}

TEST(Nvrtc, StdintTypesAreAvailable) {
  REQUIRE_NVRTC(nvrtc);
  NvrtcRequest request;
  request.source = "#include <cstdint>\n#include <stdint.h>\n"
                   "static_assert(sizeof(int64_t) == 8 && sizeof(uint8_t) == 1, \"\");\n"
                   "extern \"C\" __global__ void k(std::int32_t *p, uint64_t n) {\n"
                   "  if (threadIdx.x < n) p[threadIdx.x] = (int32_t)n;\n}\n";
  llvm::Expected<std::string> ptx = nvrtc.compile(request);
  EXPECT_TRUE(bool(ptx)) << llvm::toString(ptx.takeError());
}

struct KernelTarget {
  std::string file;
  std::string arch;
  NvrtcOutput output;
};

std::vector<KernelTarget> allTargets() {
  std::vector<KernelTarget> targets;
  for (const std::string &file : allKernelFiles())
    for (const char *arch : {"sm_80", "sm_90"})
      for (NvrtcOutput output : {NvrtcOutput::PTX, NvrtcOutput::CUBIN})
        targets.push_back({file, arch, output});
  return targets;
}

class NvrtcKernel : public ::testing::TestWithParam<KernelTarget> {};

TEST_P(NvrtcKernel, Compiles) {
  REQUIRE_NVRTC(nvrtc);
  const KernelTarget &target = GetParam();
  std::string source = readKernel(target.file);
  NvrtcRequest request;
  request.source = source;
  request.name = target.file;
  request.arch = target.arch;
  request.output = target.output;
  llvm::Expected<std::string> compiled = nvrtc.compile(request);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  std::vector<std::string> kernels = findKernelNames(source);
  ASSERT_FALSE(kernels.empty());
  if (target.output == NvrtcOutput::PTX) {
    EXPECT_NE(compiled->find(".target " + target.arch), std::string::npos);
    for (const std::string &kernel : kernels)
      EXPECT_NE(compiled->find(".entry " + kernel), std::string::npos) << kernel;
  } else {
    ASSERT_GE(compiled->size(), 4u);
    EXPECT_EQ(compiled->substr(0, 4), "\x7f"
                                      "ELF");
    for (const std::string &kernel : kernels)
      EXPECT_NE(compiled->find(kernel), std::string::npos) << kernel;
  }
}

std::string targetName(const ::testing::TestParamInfo<KernelTarget> &info) {
  std::string name = info.param.file.substr(0, info.param.file.find('.')) + "_" + info.param.arch +
                     (info.param.output == NvrtcOutput::PTX ? "_ptx" : "_cubin");
  return name;
}

INSTANTIATE_TEST_SUITE_P(AllKernels, NvrtcKernel, ::testing::ValuesIn(allTargets()), targetName);

class PtxasAccepts : public ::testing::TestWithParam<std::string> {};

TEST_P(PtxasAccepts, Sm90Ptx) {
  REQUIRE_NVRTC(nvrtc);
  std::string ptxas = MODELC_PTXAS;
  if (ptxas.empty() || ptxas.find("NOTFOUND") != std::string::npos ||
      !llvm::sys::fs::can_execute(ptxas))
    GTEST_SKIP() << "ptxas not found (looked in $CUDA_HOME/bin and /usr/local/cuda/bin)";
  std::string source = readKernel(GetParam());
  NvrtcRequest request;
  request.source = source;
  request.name = GetParam();
  request.arch = "sm_90";
  llvm::Expected<std::string> ptx = nvrtc.compile(request);
  ASSERT_TRUE(bool(ptx)) << llvm::toString(ptx.takeError());

  TemporaryDirectory dir;
  std::string ptxPath = dir.path() + "/kernel.ptx", cubin = dir.path() + "/kernel.cubin",
              log = dir.path() + "/ptxas.log";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(ptxPath, ec);
    ASSERT_FALSE(ec);
    out << *ptx;
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  int status = llvm::sys::ExecuteAndWait(ptxas, {ptxas, "-arch=sm_90", ptxPath, "-o", cubin},
                                         std::nullopt, redirects, 120);
  auto logText = llvm::MemoryBuffer::getFile(log);
  EXPECT_EQ(status, 0) << (logText ? (*logText)->getBuffer().str() : "");
  EXPECT_TRUE(llvm::sys::fs::exists(cubin));
}

std::string fileName(const ::testing::TestParamInfo<std::string> &info) {
  return info.param.substr(0, info.param.find('.'));
}

INSTANTIATE_TEST_SUITE_P(AllKernels, PtxasAccepts, ::testing::ValuesIn(allKernelFiles()), fileName);

} // namespace
