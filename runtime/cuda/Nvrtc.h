//===- Nvrtc.h - CUDA C++ to PTX/CUBIN through NVRTC -----------*- C++ -*-===//
//
// NVRTC is opened with dlopen (libnvrtc.so.13, then .12; by soname, then in
// $CUDA_HOME/lib64 and /usr/local/cuda/lib64), never linked, so binaries
// start where CUDA is absent and report "NVRTC not found" only when a kernel
// must actually be compiled. NVRTC needs no GPU and no driver.
//
// NVRTC has no C library headers; compile() provides in-memory `stdint.h`
// and `cstdint` (the fixed-width integer types that EmitC output uses), so the
// same source also builds for the emulator against the host's real ones.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_NVRTC_H
#define MODELC_RUNTIME_CUDA_NVRTC_H

#include "runtime/cuda/KernelCache.h"
#include "runtime/cuda/SharedLibrary.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace modelc::cuda {

enum class NvrtcOutput { PTX, CUBIN };

struct NvrtcRequest {
  llvm::StringRef source;
  /// The program name NVRTC shows in its log ("softmax.cu").
  llvm::StringRef name = "kernel.cu";
  /// "sm_80", "sm_90"...: PTX is generated for the matching virtual
  /// architecture (compute_90), CUBIN for the real one.
  llvm::StringRef arch = "sm_80";
  NvrtcOutput output = NvrtcOutput::PTX;
  /// More NVRTC options ("-use_fast_math", "-lineinfo"...).
  std::vector<std::string> options;
};

struct NvrtcVersion {
  int major = 0, minor = 0;
};

class Nvrtc {
public:
  /// The process-wide NVRTC from the default search path; the error (kind
  /// NvrtcNotFound) names every place that was tried.
  static llvm::Expected<Nvrtc &> get();
  /// NVRTC from the first of `candidates` that loads (for tests and tools).
  static llvm::Expected<std::unique_ptr<Nvrtc>> load(llvm::ArrayRef<std::string> candidates);
  /// The default candidates, in search order.
  static std::vector<std::string> defaultCandidates();

  NvrtcVersion version() const { return nvrtcVersion; }
  /// Where the library was found.
  llvm::StringRef libraryPath() const { return path; }

  /// The options passed to NVRTC for `request` (architecture first).
  static std::vector<std::string> optionsFor(const NvrtcRequest &request);

  /// Compiles; PTX comes back as text (no trailing NUL), CUBIN as ELF bytes.
  /// A rejected source gives NvrtcCompileFailed with NVRTC's log.
  llvm::Expected<std::string> compile(const NvrtcRequest &request) const;
  /// compile() through `cache`: the key covers source, architecture, output
  /// kind, options and this NVRTC's version.
  llvm::Expected<KernelCache::Payload> compileCached(const NvrtcRequest &request,
                                                     KernelCache &cache) const;

  struct Api;

private:
  Nvrtc() = default;
  SharedLibrary library;
  std::string path;
  NvrtcVersion nvrtcVersion;
  std::shared_ptr<Api> api;
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_NVRTC_H
