//===- CublasLtApi.h - The cuBLASLt functions modelc calls -----*- C++ -*-===//
//
// The slice of cublasLt.h (cuBLAS 12/13) that CublasLt uses, declared here
// so modelc builds where the toolkit is absent and never links the library.
// tests/unit/cuda/CublasLtAbiTest.cpp checks every declaration, enum value
// and struct layout against the real cublasLt.h wherever the toolkit is
// installed.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_CUBLASLTAPI_H
#define MODELC_RUNTIME_CUDA_CUBLASLTAPI_H

#include "runtime/cuda/DriverApi.h"

#include <cstddef>
#include <cstdint>

namespace modelc::cuda::blaslt {

using cublasStatus_t = int;      // enum cublasStatus_t
using cudaDataType = int;        // enum cudaDataType_t
using cublasComputeType_t = int; // enum cublasComputeType_t
using cublasOperation_t = int;   // enum cublasOperation_t
using cublasLtEpilogue_t = int;  // enum cublasLtEpilogue_t
using cublasLtMatmulDescAttributes_t = int;
using cublasLtMatrixLayoutAttribute_t = int;
using cublasLtMatmulPreferenceAttributes_t = int;
using cudaStream_t = driver::CUstream; // the runtime's stream is the driver's

struct cublasLtContext;
struct cublasLtMatmulDescOpaque_t;
struct cublasLtMatrixLayoutOpaque_t;
struct cublasLtMatmulPreferenceOpaque_t;
using cublasLtHandle_t = cublasLtContext *;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque_t *;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque_t *;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque_t *;

/// An algorithm as the heuristic returns it: opaque, copied by value.
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};

struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

// cublasStatus_t values modelc tells apart.
constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr cublasStatus_t CUBLAS_STATUS_NOT_INITIALIZED = 1;
constexpr cublasStatus_t CUBLAS_STATUS_INVALID_VALUE = 7;
constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;

// cudaDataType_t.
constexpr cudaDataType CUDA_R_32F = 0;
constexpr cudaDataType CUDA_R_16F = 2;
constexpr cudaDataType CUDA_R_16BF = 14;

// cublasComputeType_t.
constexpr cublasComputeType_t CUBLAS_COMPUTE_32F = 68;
constexpr cublasComputeType_t CUBLAS_COMPUTE_32F_FAST_TF32 = 77;

// cublasOperation_t.
constexpr cublasOperation_t CUBLAS_OP_N = 0;
constexpr cublasOperation_t CUBLAS_OP_T = 1;

// cublasLtEpilogue_t.
constexpr cublasLtEpilogue_t CUBLASLT_EPILOGUE_DEFAULT = 1;
constexpr cublasLtEpilogue_t CUBLASLT_EPILOGUE_RELU = 2;
constexpr cublasLtEpilogue_t CUBLASLT_EPILOGUE_BIAS = 4;
constexpr cublasLtEpilogue_t CUBLASLT_EPILOGUE_RELU_BIAS = 6;
constexpr cublasLtEpilogue_t CUBLASLT_EPILOGUE_GELU = 32;
constexpr cublasLtEpilogue_t CUBLASLT_EPILOGUE_GELU_BIAS = 36;

// cublasLtMatmulDescAttributes_t (value types: int32_t, int32_t, int32_t,
// uint32_t, const void *, int32_t).
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;

// cublasLtMatrixLayoutAttribute_t (int32_t, int64_t).
constexpr cublasLtMatrixLayoutAttribute_t CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;
constexpr cublasLtMatrixLayoutAttribute_t CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;

// cublasLtMatmulPreferenceAttributes_t (uint64_t).
constexpr cublasLtMatmulPreferenceAttributes_t CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;

using PFN_cublasLtGetVersion = size_t (*)();
using PFN_cublasLtGetStatusName = const char *(*)(cublasStatus_t);
using PFN_cublasLtGetStatusString = const char *(*)(cublasStatus_t);
using PFN_cublasLtCreate = cublasStatus_t (*)(cublasLtHandle_t *);
using PFN_cublasLtDestroy = cublasStatus_t (*)(cublasLtHandle_t);
using PFN_cublasLtMatmulDescCreate = cublasStatus_t (*)(cublasLtMatmulDesc_t *, cublasComputeType_t,
                                                        cudaDataType);
using PFN_cublasLtMatmulDescDestroy = cublasStatus_t (*)(cublasLtMatmulDesc_t);
using PFN_cublasLtMatmulDescSetAttribute = cublasStatus_t (*)(cublasLtMatmulDesc_t,
                                                              cublasLtMatmulDescAttributes_t,
                                                              const void *, size_t);
using PFN_cublasLtMatrixLayoutCreate = cublasStatus_t (*)(cublasLtMatrixLayout_t *, cudaDataType,
                                                          uint64_t, uint64_t, int64_t);
using PFN_cublasLtMatrixLayoutDestroy = cublasStatus_t (*)(cublasLtMatrixLayout_t);
using PFN_cublasLtMatrixLayoutSetAttribute = cublasStatus_t (*)(cublasLtMatrixLayout_t,
                                                                cublasLtMatrixLayoutAttribute_t,
                                                                const void *, size_t);
using PFN_cublasLtMatmulPreferenceCreate = cublasStatus_t (*)(cublasLtMatmulPreference_t *);
using PFN_cublasLtMatmulPreferenceDestroy = cublasStatus_t (*)(cublasLtMatmulPreference_t);
using PFN_cublasLtMatmulPreferenceSetAttribute = cublasStatus_t (*)(
    cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void *, size_t);
using PFN_cublasLtMatmulAlgoGetHeuristic =
    cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                       cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t[], int *);
using PFN_cublasLtMatmul = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                              const void *, cublasLtMatrixLayout_t, const void *,
                                              cublasLtMatrixLayout_t, const void *, const void *,
                                              cublasLtMatrixLayout_t, void *,
                                              cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
                                              void *, size_t, cudaStream_t);

/// Every entry point CublasLt resolves with dlsym: X(symbol, pointer type,
/// member).
#define MODELC_CUBLASLT_FUNCTIONS(X)                                                               \
  X("cublasLtGetVersion", PFN_cublasLtGetVersion, getVersion)                                      \
  X("cublasLtGetStatusName", PFN_cublasLtGetStatusName, getStatusName)                             \
  X("cublasLtGetStatusString", PFN_cublasLtGetStatusString, getStatusString)                       \
  X("cublasLtCreate", PFN_cublasLtCreate, create)                                                  \
  X("cublasLtDestroy", PFN_cublasLtDestroy, destroy)                                               \
  X("cublasLtMatmulDescCreate", PFN_cublasLtMatmulDescCreate, matmulDescCreate)                    \
  X("cublasLtMatmulDescDestroy", PFN_cublasLtMatmulDescDestroy, matmulDescDestroy)                 \
  X("cublasLtMatmulDescSetAttribute", PFN_cublasLtMatmulDescSetAttribute, matmulDescSetAttribute)  \
  X("cublasLtMatrixLayoutCreate", PFN_cublasLtMatrixLayoutCreate, matrixLayoutCreate)              \
  X("cublasLtMatrixLayoutDestroy", PFN_cublasLtMatrixLayoutDestroy, matrixLayoutDestroy)           \
  X("cublasLtMatrixLayoutSetAttribute", PFN_cublasLtMatrixLayoutSetAttribute,                      \
    matrixLayoutSetAttribute)                                                                      \
  X("cublasLtMatmulPreferenceCreate", PFN_cublasLtMatmulPreferenceCreate, preferenceCreate)        \
  X("cublasLtMatmulPreferenceDestroy", PFN_cublasLtMatmulPreferenceDestroy, preferenceDestroy)     \
  X("cublasLtMatmulPreferenceSetAttribute", PFN_cublasLtMatmulPreferenceSetAttribute,              \
    preferenceSetAttribute)                                                                        \
  X("cublasLtMatmulAlgoGetHeuristic", PFN_cublasLtMatmulAlgoGetHeuristic, algoGetHeuristic)        \
  X("cublasLtMatmul", PFN_cublasLtMatmul, matmul)

/// The resolved entry points.
struct CublasLtFunctions {
#define MODELC_DECLARE_MEMBER(name, type, member) type member = nullptr;
  MODELC_CUBLASLT_FUNCTIONS(MODELC_DECLARE_MEMBER)
#undef MODELC_DECLARE_MEMBER
};

} // namespace modelc::cuda::blaslt

#endif // MODELC_RUNTIME_CUDA_CUBLASLTAPI_H
