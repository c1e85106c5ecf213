//===- CublasLt.h - NVIDIA's cuBLASLt, loaded at run time ------*- C++ -*-===//
//
// cuBLASLt is one of the two ways a plan's GEMM can run on a GPU (the other
// is the plan's own kernels); the plan executor measures both and keeps the
// faster. Like the driver it is opened with dlopen, never linked: modelc
// builds and runs where it is absent, and then the own kernels run.
//
// Which library: $MODELC_CUBLASLT_LIBRARY (a soname or a file; "none" turns
// cuBLASLt off), else the first of libcublasLt.so.13, libcublasLt.so.12 and
// libcublasLt.so that opens. A library that lacks an entry point or
// reports a version below 12.0 is refused like a missing one; every refusal
// is a LibraryNotFound error whose message says why, and callers fall back.
//
// Problems are stated the way cuBLASLt takes them: column-major, D = m x n.
// A row-major product C = A B is the column-major C^T = B^T A^T, which is how
// the executor calls it (no copies, transposes as operations).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_CUBLASLT_H
#define MODELC_RUNTIME_CUDA_CUBLASLT_H

#include "runtime/cuda/CublasLtApi.h"
#include "runtime/cuda/SharedLibrary.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace modelc::cuda {

/// Element types of a cuBLASLt product.
enum class LtType { F32, F16, BF16 };
llvm::StringRef ltTypeName(LtType type);

/// What cuBLASLt applies to alpha * op(A) op(B) + beta * C: a bias vector
/// (one value per row of D) and then ReLU or GELU. cuBLASLt's GELU is the
/// tanh approximation (torch's gelu(approximate="tanh")).
enum class LtEpilogue { None, Relu, Gelu, Bias, ReluBias, GeluBias };
llvm::StringRef ltEpilogueName(LtEpilogue epilogue);
bool ltEpilogueHasBias(LtEpilogue epilogue);

/// The cuBLASLt values: CUDA_R_32F..., CUBLASLT_EPILOGUE_...
blaslt::cudaDataType ltDataType(LtType type);
blaslt::cublasLtEpilogue_t ltEpilogueValue(LtEpilogue epilogue);

/// One strided-batched product, column-major:
///   D[i] = epilogue(op(A[i]) op(B[i]) + (accumulate ? C[i] : 0)), i < batch,
/// with D and C m x n (leading dim ldc), op(A) m x k, op(B) k x n, A stored
/// k x m when transA (else m x k) with leading dim lda, likewise B.
struct LtProblem {
  LtType inputType = LtType::F32;  ///< A and B
  LtType outputType = LtType::F32; ///< C, D and the bias
  /// f32 inputs on TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32); else
  /// exact fp32 (CUBLAS_COMPUTE_32F), which 16-bit inputs accumulate in.
  bool tf32 = false;
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batch = 1, strideA = 0, strideB = 0, strideC = 0;
  LtEpilogue epilogue = LtEpilogue::None;
  /// beta = 1 and C read (a residual added); else beta = 0 and C is D.
  bool accumulate = false;

  /// "f32 TN 1024x4096x1024 batch 1, bias+relu, beta=1"
  std::string str() const;
  friend bool operator==(const LtProblem &, const LtProblem &) = default;
};

/// An algorithm the heuristic proposed for a problem.
struct LtAlgorithm {
  blaslt::cublasLtMatmulAlgo_t algo{};
  size_t workspaceBytes = 0;
};

/// Device addresses of one call. `c` is read only with `accumulate`;
/// `bias` only with a bias epilogue.
struct LtOperands {
  uint64_t a = 0, b = 0, c = 0, d = 0, bias = 0;
  uint64_t workspace = 0;
  size_t workspaceBytes = 0;
};

class CublasLt;

/// The descriptors of one problem, made once and reused for every call.
class LtMatmul {
public:
  ~LtMatmul();
  LtMatmul(const LtMatmul &) = delete;
  LtMatmul &operator=(const LtMatmul &) = delete;
  const LtProblem &problem() const { return spec; }

private:
  friend class CublasLt;
  LtMatmul(const CublasLt &library, LtProblem problem) : library(library), spec(problem) {}
  const CublasLt &library;
  LtProblem spec;
  blaslt::cublasLtMatmulDesc_t desc = nullptr;
  blaslt::cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
};

class CublasLt {
public:
  /// The oldest cuBLASLt accepted (cublasLtGetVersion's encoding).
  static constexpr size_t MinimumVersion = 120000;

  /// The process-wide library, opened once; LibraryNotFound says why not.
  static llvm::Expected<CublasLt &> get();
  /// Opens the library at `path` on its own.
  static llvm::Expected<std::unique_ptr<CublasLt>> open(const std::string &path);
  /// What get() tries, in order ($MODELC_CUBLASLT_LIBRARY alone when set;
  /// empty when it is "none").
  static std::vector<std::string> defaultLibraries();

  CublasLt(const CublasLt &) = delete;
  CublasLt &operator=(const CublasLt &) = delete;

  /// cublasLtGetVersion(): 130100 for 13.1.0.
  size_t version() const { return libraryVersion; }
  /// "13.1.0".
  std::string versionString() const;
  const std::string &path() const { return libraryPath; }

  /// A handle in the calling thread's current CUDA context.
  llvm::Expected<blaslt::cublasLtHandle_t> createHandle() const;
  void destroyHandle(blaslt::cublasLtHandle_t handle) const;

  llvm::Expected<std::unique_ptr<LtMatmul>> prepare(const LtProblem &problem) const;
  /// Up to `count` algorithms for `matmul` that need at most
  /// `maxWorkspaceBytes`, the heuristic's best first; an error when none.
  llvm::Expected<std::vector<LtAlgorithm>> algorithms(blaslt::cublasLtHandle_t handle,
                                                      const LtMatmul &matmul,
                                                      size_t maxWorkspaceBytes, int count) const;
  /// Enqueues the product on `stream` (capturable into a CUDA graph).
  llvm::Error run(blaslt::cublasLtHandle_t handle, const LtMatmul &matmul,
                  const LtAlgorithm &algorithm, const LtOperands &operands,
                  blaslt::cudaStream_t stream) const;

  /// "CUBLAS_STATUS_NOT_SUPPORTED: the functionality requested is not supported".
  std::string describe(blaslt::cublasStatus_t status) const;

private:
  friend class LtMatmul;
  CublasLt() = default;
  /// The library at `path`, or null with `why` set.
  static std::unique_ptr<CublasLt> tryOpen(const std::string &path, std::string &why);
  llvm::Error check(blaslt::cublasStatus_t status, llvm::StringRef call) const;

  SharedLibrary library;
  std::string libraryPath;
  blaslt::CublasLtFunctions api;
  size_t libraryVersion = 0;
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_CUBLASLT_H
