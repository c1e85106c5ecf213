//===- OpenBlasLibrary.h - OpenBLAS, loaded with the kernels this CPU runs -===//
//
// OpenBLAS picks its kernels once, when the library is loaded: from the CPU's
// family and model, or from OPENBLAS_CORETYPE. On a CPU it does not know (a
// VM that reports "Intel Xeon Processor" with AVX-512) it falls back to its
// SSE3 Prescott kernels, 5-10x slower than the AVX-512 ones the CPU runs.
// So modelc does not link OpenBLAS: it loads it on first use (dlopen) with
// OPENBLAS_CORETYPE set from the CPU's feature bits -- the core OpenBLAS's
// detection names on CPUs it knows -- unless the user set that variable,
// which is then obeyed. Internal to compiler/jit.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_OPENBLASLIBRARY_H
#define MODELC_JIT_OPENBLASLIBRARY_H

#include <string>

namespace modelc::jit {

/// The entry points modelc calls, with cblas.h's signatures and enum values
/// (CBLAS_ORDER/CBLAS_TRANSPOSE are C enums, passed as int).
struct OpenBlasLibrary {
  using Sgemm = void (*)(int order, int transA, int transB, int m, int n, int k, float alpha,
                         const float *a, int lda, const float *b, int ldb, float beta, float *c,
                         int ldc);
  using Sgemv = void (*)(int order, int trans, int m, int n, float alpha, const float *a, int lda,
                         const float *x, int incx, float beta, float *y, int incy);
  using GetInt = int (*)();
  using SetInt = void (*)(int);
  using GetName = char *(*)();

  static constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

  Sgemm sgemm = nullptr;
  Sgemv sgemv = nullptr;
  GetInt getNumThreads = nullptr;
  SetInt setNumThreads = nullptr;
  GetName getCoreName = nullptr;
  GetName getConfig = nullptr;
  /// How the kernels were chosen, for --version and the benchmarks:
  /// "set from the CPU's features", "OPENBLAS_CORETYPE=... (the
  /// environment's)", or "as OpenBLAS detected them".
  std::string coreOrigin;
};

/// OpenBLAS, loaded on the first call (thread-safe); null when this build or
/// this machine has none (the other GEMM kernels run then).
const OpenBlasLibrary *openBlasLibrary();

/// The OpenBLAS core type whose kernels a CPU with these features runs:
/// "Cooperlake" (AVX-512 with BF16), "SkylakeX" (AVX-512 F/CD/BW/DQ/VL),
/// "Haswell" (AVX2 and FMA), or empty (leave it to OpenBLAS's detection).
struct CpuFeatures {
  bool avx512f = false, avx512cd = false, avx512bw = false, avx512dq = false, avx512vl = false,
       avx512bf16 = false, avx2 = false, fma = false;
  static CpuFeatures ofThisCpu();
};
std::string openBlasCoreTypeFor(const CpuFeatures &cpu);

/// OpenBLAS's and OpenMP's (oneDNN's) thread counts, as torch.set_num_threads
/// sets both (loads OpenBLAS first so that the count reaches it).
void setLibraryThreads(int threads);

} // namespace modelc::jit

#endif // MODELC_JIT_OPENBLASLIBRARY_H
