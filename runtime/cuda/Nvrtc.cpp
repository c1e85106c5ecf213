//===- Nvrtc.cpp - CUDA C++ to PTX/CUBIN through NVRTC --------------------===//

#include "runtime/cuda/Nvrtc.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <iterator>
#include <mutex>

namespace modelc::cuda {

namespace {

// NVRTC's C API, declared here because nvrtc.h may be absent where modelc is
// built. nvrtcResult is a C enum (int-sized); 0 is NVRTC_SUCCESS.
struct NvrtcProgramImpl;
using NvrtcProgram = NvrtcProgramImpl *;
constexpr int NvrtcSuccess = 0;

/// NVRTC has no C library headers, yet generated kernels (EmitC prints
/// `#include <stdint.h>` and int32_t) need the fixed-width integer types:
/// these in-memory headers supply them, sized as on the 64-bit host.
constexpr const char *StdintHeader = R"(#pragma once
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
)";
constexpr const char *CstdintHeader = R"(#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t;
}
)";
constexpr const char *BuiltinHeaders[] = {StdintHeader, CstdintHeader};
constexpr const char *BuiltinHeaderNames[] = {"stdint.h", "cstdint"};

} // namespace

struct Nvrtc::Api {
  int (*version)(int *, int *);
  int (*createProgram)(NvrtcProgram *, const char *, const char *, int, const char *const *,
                       const char *const *);
  int (*compileProgram)(NvrtcProgram, int, const char *const *);
  int (*destroyProgram)(NvrtcProgram *);
  int (*getPTXSize)(NvrtcProgram, size_t *);
  int (*getPTX)(NvrtcProgram, char *);
  int (*getCUBINSize)(NvrtcProgram, size_t *);
  int (*getCUBIN)(NvrtcProgram, char *);
  int (*getProgramLogSize)(NvrtcProgram, size_t *);
  int (*getProgramLog)(NvrtcProgram, char *);
  const char *(*getErrorString)(int);
};

std::vector<std::string> Nvrtc::defaultCandidates() {
  if (std::optional<std::string> forced = llvm::sys::Process::GetEnv("MODELC_NVRTC_LIBRARY"))
    return {*forced};
  const char *sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12"};
  std::vector<std::string> candidates(std::begin(sonames), std::end(sonames));
  std::vector<std::string> dirs;
  if (std::optional<std::string> home = llvm::sys::Process::GetEnv("CUDA_HOME"))
    if (!home->empty())
      dirs.push_back(*home + "/lib64");
  dirs.push_back("/usr/local/cuda/lib64");
  for (const std::string &dir : dirs)
    for (const char *soname : sonames)
      candidates.push_back(dir + "/" + soname);
  return candidates;
}

llvm::Expected<std::unique_ptr<Nvrtc>> Nvrtc::load(llvm::ArrayRef<std::string> candidates) {
  std::vector<std::string> failures;
  for (const std::string &candidate : candidates) {
    std::string reason;
    SharedLibrary library = SharedLibrary::open(candidate, &reason);
    if (!library) {
      failures.push_back(candidate);
      continue;
    }
    auto api = std::make_shared<Api>();
    api->version = library.function<decltype(api->version)>("nvrtcVersion");
    api->createProgram = library.function<decltype(api->createProgram)>("nvrtcCreateProgram");
    api->compileProgram = library.function<decltype(api->compileProgram)>("nvrtcCompileProgram");
    api->destroyProgram = library.function<decltype(api->destroyProgram)>("nvrtcDestroyProgram");
    api->getPTXSize = library.function<decltype(api->getPTXSize)>("nvrtcGetPTXSize");
    api->getPTX = library.function<decltype(api->getPTX)>("nvrtcGetPTX");
    api->getCUBINSize = library.function<decltype(api->getCUBINSize)>("nvrtcGetCUBINSize");
    api->getCUBIN = library.function<decltype(api->getCUBIN)>("nvrtcGetCUBIN");
    api->getProgramLogSize =
        library.function<decltype(api->getProgramLogSize)>("nvrtcGetProgramLogSize");
    api->getProgramLog = library.function<decltype(api->getProgramLog)>("nvrtcGetProgramLog");
    api->getErrorString = library.function<decltype(api->getErrorString)>("nvrtcGetErrorString");
    if (!api->version || !api->createProgram || !api->compileProgram || !api->destroyProgram ||
        !api->getPTXSize || !api->getPTX || !api->getCUBINSize || !api->getCUBIN ||
        !api->getProgramLogSize || !api->getProgramLog || !api->getErrorString)
      return makeCudaError(CudaErrorKind::NvrtcNotFound,
                           "NVRTC at '" + candidate +
                               "' lacks functions modelc needs (NVRTC 11.1 or newer is needed)");
    auto nvrtc = std::unique_ptr<Nvrtc>(new Nvrtc());
    if (api->version(&nvrtc->nvrtcVersion.major, &nvrtc->nvrtcVersion.minor) != NvrtcSuccess)
      return makeCudaError(CudaErrorKind::NvrtcNotFound,
                           "NVRTC at '" + candidate + "' does not report its version");
    nvrtc->library = std::move(library);
    nvrtc->path = candidate;
    nvrtc->api = std::move(api);
    return nvrtc;
  }
  return makeCudaError(CudaErrorKind::NvrtcNotFound,
                       "NVRTC not found (tried " + llvm::join(failures, ", ") +
                           "): install the CUDA toolkit 12 or 13, or set CUDA_HOME");
}

llvm::Expected<Nvrtc &> Nvrtc::get() {
  static std::once_flag once;
  static std::unique_ptr<Nvrtc> instance;
  static std::string failure;
  std::call_once(once, [] {
    llvm::Expected<std::unique_ptr<Nvrtc>> loaded = load(defaultCandidates());
    if (loaded)
      instance = std::move(*loaded);
    else
      failure = llvm::toString(loaded.takeError());
  });
  if (!instance)
    return makeCudaError(CudaErrorKind::NvrtcNotFound, failure);
  return *instance;
}

/// Kernel source NVRTC rejects is modelc's own output, so a rejection is a
/// compiler bug: keep the source for the bug report and say where it is.
static std::string saveRejectedSource(llvm::StringRef name, llvm::StringRef source) {
  int fd = -1;
  llvm::SmallString<128> path;
  llvm::StringRef stem = llvm::sys::path::stem(name);
  if (llvm::sys::fs::createTemporaryFile("modelc-rejected-" + (stem.empty() ? "kernel" : stem),
                                         "cu", fd, path))
    return "the kernel source could not be saved";
  llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
  out << source;
  out.close();
  if (out.has_error()) {
    out.clear_error();
    return "the kernel source could not be saved";
  }
  return ("the kernel source is saved in " + path).str();
}

std::vector<std::string> Nvrtc::optionsFor(const NvrtcRequest &request) {
  std::string arch = request.arch.str();
  // PTX targets the virtual architecture: sm_90 -> compute_90.
  if (request.output == NvrtcOutput::PTX && llvm::StringRef(arch).starts_with("sm_"))
    arch = "compute_" + arch.substr(3);
  std::vector<std::string> options = {"--gpu-architecture=" + arch};
  options.insert(options.end(), request.options.begin(), request.options.end());
  return options;
}

llvm::Expected<std::string> Nvrtc::compile(const NvrtcRequest &request) const {
  if (request.output == NvrtcOutput::CUBIN && !request.arch.starts_with("sm_"))
    return makeCudaError(CudaErrorKind::NvrtcCompileFailed,
                         "CUBIN needs a real GPU architecture such as sm_90, not '" + request.arch +
                             "'");
  std::string source = request.source.str();
  std::string name = request.name.str();
  NvrtcProgram program = nullptr;
  int status = api->createProgram(&program, source.c_str(), name.c_str(),
                                  static_cast<int>(std::size(BuiltinHeaders)), BuiltinHeaders,
                                  BuiltinHeaderNames);
  if (status != NvrtcSuccess)
    return makeCudaError(CudaErrorKind::NvrtcCompileFailed,
                         llvm::formatv("nvrtcCreateProgram failed for '{0}': {1}", name,
                                       api->getErrorString(status)));
  llvm::scope_exit destroy([&] { api->destroyProgram(&program); });

  std::vector<std::string> options = optionsFor(request);
  std::vector<const char *> optionPointers;
  for (const std::string &option : options)
    optionPointers.push_back(option.c_str());
  status =
      api->compileProgram(program, static_cast<int>(optionPointers.size()), optionPointers.data());

  std::string log;
  size_t logSize = 0;
  if (api->getProgramLogSize(program, &logSize) == NvrtcSuccess && logSize > 1) {
    log.resize(logSize);
    if (api->getProgramLog(program, log.data()) != NvrtcSuccess)
      log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
      log.pop_back();
  }
  if (status != NvrtcSuccess)
    return makeCudaError(CudaErrorKind::NvrtcCompileFailed,
                         llvm::formatv("internal compiler error: NVRTC could not compile '{0}' "
                                       "for {1}: {2}; {3}",
                                       name, request.arch, api->getErrorString(status),
                                       saveRejectedSource(name, source)),
                         log);

  bool ptx = request.output == NvrtcOutput::PTX;
  size_t size = 0;
  status = ptx ? api->getPTXSize(program, &size) : api->getCUBINSize(program, &size);
  std::string output(size, '\0');
  if (status == NvrtcSuccess && size)
    status = ptx ? api->getPTX(program, output.data()) : api->getCUBIN(program, output.data());
  if (status != NvrtcSuccess)
    return makeCudaError(CudaErrorKind::NvrtcCompileFailed,
                         llvm::formatv("NVRTC produced no {0} for '{1}': {2}",
                                       ptx ? "PTX" : "CUBIN", name, api->getErrorString(status)));
  if (ptx)
    while (!output.empty() && output.back() == '\0')
      output.pop_back();
  return output;
}

llvm::Expected<KernelCache::Payload> Nvrtc::compileCached(const NvrtcRequest &request,
                                                          KernelCache &cache) const {
  CacheKey key;
  key.add("modelc-nvrtc").add(request.source).add(request.arch);
  key.add(StdintHeader).add(CstdintHeader);
  key.add(request.output == NvrtcOutput::PTX ? "ptx" : "cubin");
  key.add(int64_t(nvrtcVersion.major)).add(int64_t(nvrtcVersion.minor));
  for (const std::string &option : optionsFor(request))
    key.add(option);
  return cache.getOrBuild(key, [&] { return compile(request); });
}

} // namespace modelc::cuda
