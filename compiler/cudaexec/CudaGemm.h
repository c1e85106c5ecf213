//===- CudaGemm.h - Own kernels or cuBLASLt, chosen by measurement -*- C++ -*-===//
//
// A plan's matmuls that a GEMM library can take (DevicePlan's GemmCall) run
// either on the plan's own kernels or on cuBLASLt. By default the executor
// measures: the first time a plan runs a GEMM of a shape class on a GPU, it
// times the own kernels and cuBLASLt's best few algorithms (CUDA events, on
// the plan's own buffers, before the run's first step) and keeps the
// fastest, in memory and in a file per GPU and library version under
// $MODELC_CACHE_DIR (cuda-gemm-<hash>.txt), unless the machine was too busy
// for the timings to mean anything (runtime/MachineLoad.h). A shape class is
// each of m, n, k and the batch rounded up to a power of two, with the
// dtypes, the transposes, the epilogue and whether a kernel runs after.
//
// MODELC_CUDA_GEMM=own|cublaslt|auto (or PlanOptions::gemm) forces one side,
// for tests and benchmarks; cuBLASLt that is missing, too old or failing is
// a fallback to the own kernels that the run report states, never an error.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAEXEC_CUDAGEMM_H
#define MODELC_CUDAEXEC_CUDAGEMM_H

#include "cudagen/DevicePlan.h"

#include "runtime/cuda/CublasLt.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace modelc::cudaexec {

/// Which implementation runs a plan's library-eligible GEMMs.
enum class GemmBackend {
  Auto,     ///< measured per GPU and shape class
  Own,      ///< the plan's own kernels
  CublasLt, ///< cuBLASLt's first heuristic algorithm wherever it can
};

/// "auto", "own", "cublaslt".
llvm::StringRef gemmBackendName(GemmBackend backend);
std::optional<GemmBackend> parseGemmBackend(llvm::StringRef name);
/// MODELC_CUDA_GEMM; Auto when unset, and, with a warning, when unknown.
GemmBackend gemmBackendFromEnvironment();

/// The cuBLASLt form of `gemm` for bound `symbols`: the row-major
/// out = a @ b as the column-major out^T = b^T a^T (cuBLASLt's A is the
/// plan's b). An error when a size does not evaluate, is empty, or is beyond
/// cuBLASLt (a batch over 2^31 - 1).
llvm::Expected<cuda::LtProblem> ltProblemOf(const cudagen::GemmCall &gemm,
                                            const cudagen::SymbolValues &symbols);

/// The shape class of `problem` (with `after`: a kernel runs after it), for
/// the choice table: "f32 NT m10 n12 k10 b0 bias+relu beta0 after1".
std::string gemmClassKey(const cuda::LtProblem &problem, bool after);

/// What a measurement chose.
struct GemmChoice {
  bool library = false;
  /// The rank of cuBLASLt's algorithm in its heuristic's list (0: first).
  int algorithm = 0;
  friend bool operator==(const GemmChoice &a, const GemmChoice &b) {
    return a.library == b.library && a.algorithm == b.algorithm;
  }
};

/// Measured choices by the identity of the GPU and library
/// (LtDevice::identity) and the shape class.
class GemmChoiceTable {
public:
  static GemmChoiceTable &global();

  std::optional<GemmChoice> lookup(const std::string &identity, const std::string &classKey);
  /// Keeps `choice` for this process; writes the identity's file too unless
  /// `provisional` (measured on a busy machine).
  void record(const std::string &identity, const std::string &classKey, GemmChoice choice,
              bool provisional);
  /// The file for `identity`; empty when $MODELC_CACHE_DIR is "".
  static std::string fileFor(const std::string &identity);
  /// Forgets every choice in memory; files are read again when next needed.
  void clear();

private:
  struct Identity {
    bool loaded = false;
    std::map<std::string, GemmChoice> choices;
    std::set<std::string> provisional;
  };
  Identity &load(const std::string &identity);
  void save(const std::string &identity, const Identity &table);

  std::mutex mutex;
  std::map<std::string, Identity> identities;
};

} // namespace modelc::cudaexec

#endif // MODELC_CUDAEXEC_CUDAGEMM_H
