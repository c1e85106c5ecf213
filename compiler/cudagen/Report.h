//===- Report.h - Per-kernel costs and a roofline estimate -------*- C++ -*-===//
//
// `modelc build --report`: for each kernel of a plan its FLOPs, bytes read
// and written, arithmetic intensity, registers and shared memory (from
// `ptxas -v`, when the toolkit exists) and a roofline time on a reference
// GPU; per forward the bytes `.to` moves, the launches, and the total
// estimated time; then the GEMMs a library (cuBLASLt) could run instead of
// their own kernels, which the executor measures against each other on the
// GPU that runs the plan. Symbolic dims are evaluated at given values (the
// batch).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAGEN_REPORT_H
#define MODELC_CUDAGEN_REPORT_H

#include "cudagen/DevicePlan.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace modelc::cudagen {

/// Peak rates of a reference GPU (compiler/cudagen/gpu-peaks.json).
struct GpuPeaks {
  std::string name;
  double fp32FlopsPerSecond = 0;
  double memoryBytesPerSecond = 0;
  double hostLinkBytesPerSecond = 0;
  double peerLinkBytesPerSecond = 0;
  double kernelLaunchSeconds = 0;
  std::string source;
};

/// The H100 SXM figures of gpu-peaks.json, built in.
const GpuPeaks &defaultGpuPeaks();
llvm::Expected<GpuPeaks> parseGpuPeaks(llvm::StringRef jsonText);
llvm::Expected<GpuPeaks> loadGpuPeaks(llvm::StringRef path);

/// What ptxas says about one kernel.
struct KernelResources {
  unsigned registers = 0;
  unsigned sharedBytes = 0;
  unsigned spillBytes = 0;
};

/// Parses `ptxas -v` output ("Compiling entry function 'k0' ...", "Used 32
/// registers, 2048 bytes smem").
llvm::StringMap<KernelResources> parsePtxasVerbose(llvm::StringRef log);

/// ptxas from $CUDA_HOME/bin, /usr/local/cuda/bin or PATH; empty if none.
std::string findPtxas();
/// Runs `ptxas -v -arch=ARCH` on `ptx`; returns its log (stderr and stdout),
/// or an error with the log when it rejects the PTX.
llvm::Expected<std::string> runPtxas(llvm::StringRef ptxas, llvm::StringRef ptx,
                                     llvm::StringRef arch, bool verbose = true);

struct ReportOptions {
  SymbolValues symbols;
  GpuPeaks peaks;
  /// Per device, per kernel: resources; a device without an entry prints
  /// `resourcesMissing` instead ("n/a (no ptxas)").
  std::map<int, llvm::StringMap<KernelResources>> resources;
  std::string resourcesMissing = "n/a (no ptxas)";
  std::string resourcesArch;
  /// What this machine offers for the GEMMs a library could run ("cuBLASLt
  /// 13.1.0 (libcublasLt.so.13)", or why none); empty: not said.
  std::string gemmLibrary;
};

/// The report as text (one table per device, then the totals).
llvm::Expected<std::string> formatReport(const DevicePlan &plan, const ReportOptions &options);

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_REPORT_H
