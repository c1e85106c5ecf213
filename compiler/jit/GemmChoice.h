//===- GemmChoice.h - which library runs an f32 matrix product ------------===//
//
// Compiled code calls one entry point for every f32 matmul
// (`modelc_sgemm`, `modelc_matmul_epilogue`); the runtime runs it with one of
// several kernels. By default it measures: the first product of a shape
// class (each of m, n and k rounded up to a power of two, the transposes,
// the thread count and the epilogue) times every available kernel on the
// call's own operands and keeps the fastest, in memory and in a file per
// CPU model under $MODELC_CACHE_DIR (docs/performance.md) unless the machine
// was busy (machineBusyForMeasuring). MODELC_GEMM or
// setGemmKernel() forces one kernel instead, e.g. for parity tests.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_GEMMCHOICE_H
#define MODELC_JIT_GEMMCHOICE_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::jit {

enum class GemmKernel {
  /// Measure per shape class, cached on disk.
  Auto,
  /// oneDNN's matmul primitive, epilogues as post-ops.
  OneDnnMatmul,
  /// oneDNN's dnnl_sgemm, then the epilogue as a second pass.
  OneDnnSgemm,
  /// OpenBLAS's cblas_sgemm (sgemv for one row or column on one thread).
  OpenBlas,
  /// modelc's own register tiles over B in panels (TileGemm.h): few rows,
  /// a constant B.
  Tiles,
  /// A plain loop: the reference, never chosen by measurement.
  Loops,
};

/// "auto", "onednn-matmul", "onednn-sgemm", "openblas", "tiles", "loops".
llvm::StringRef gemmKernelName(GemmKernel kernel);
std::optional<GemmKernel> parseGemmKernel(llvm::StringRef name);

/// Whether this build has the library behind `kernel` (Auto and Loops: always).
bool gemmKernelAvailable(GemmKernel kernel);

/// Every kernel other than Auto that this build can run.
std::vector<GemmKernel> availableGemmKernels();

/// The process-wide setting: MODELC_GEMM until setGemmKernel() is called.
/// An unavailable kernel falls back to Auto (with a warning on stderr).
GemmKernel gemmKernelSetting();
void setGemmKernel(GemmKernel kernel);

/// Where measured choices are kept: a file per CPU model, or empty when
/// $MODELC_CACHE_DIR is set to the empty string.
std::string gemmChoiceFile();

/// Forgets the choices in memory; the next product reads the file again
/// (which $MODELC_CACHE_DIR names then).
void clearGemmChoices();

/// Whether timings taken now are too noisy to keep, and the load to assume
/// in tests: runtime/MachineLoad.h's, which the GPU's GEMM choice uses too.
bool machineBusyForMeasuring();
void assumeLoadAverage(std::optional<double> load);

/// The kernel measured (or read from the file) for the shape class of an m x n x k
/// product without transposes and epilogue on the current thread count;
/// Auto when none was measured yet.
GemmKernel measuredGemmKernel(int64_t m, int64_t n, int64_t k);

/// OpenBLAS's core name as loaded ("SkylakeX", "Haswell", "Prescott", ...),
/// empty without OpenBLAS. OpenBLAS picks its kernels once, when it is
/// loaded (OPENBLAS_CORETYPE overrides cpuid then); a process cannot change
/// them afterwards, so a wrong pick shows up as a slow OpenBLAS in the
/// measurement and another kernel wins.
std::string openBlasCoreName();

/// The CPU kernel libraries in use, for `modelc --version`: "oneDNN 2.6.3;
/// OpenBLAS 0.3.21 with its Cooperlake kernels (set from the CPU's
/// features)", or what is missing. Loads OpenBLAS.
std::string cpuKernelLibraries();

} // namespace modelc::jit

#endif // MODELC_JIT_GEMMCHOICE_H
