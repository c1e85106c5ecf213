//===- CublasLtAbiTest.cpp - CublasLtApi.h against the real cublasLt.h ----===//
//
// Built only where the CUDA toolkit's cublasLt.h is found. modelc calls
// cuBLASLt through its own declarations (CublasLtApi.h); these compile-time
// checks prove that each function matches NVIDIA's (same arity, and per
// parameter the same size and kind), that every enum value modelc passes is
// NVIDIA's, and that the structs it copies by value have NVIDIA's layout.
//
//===----------------------------------------------------------------------===//

#include <cublasLt.h>

#include "AbiCheck.h"
#include "runtime/cuda/CublasLtApi.h"

#include "gtest/gtest.h"

#include <cstddef>

namespace {

namespace api = modelc::cuda::blaslt;

#define CHECK_FUNCTION(name)                                                                       \
  static_assert(modelc::test::Compatible<decltype(&::name), api::PFN_##name>::value,               \
                #name " does not match CublasLtApi.h");

CHECK_FUNCTION(cublasLtGetVersion)
CHECK_FUNCTION(cublasLtGetStatusName)
CHECK_FUNCTION(cublasLtGetStatusString)
CHECK_FUNCTION(cublasLtCreate)
CHECK_FUNCTION(cublasLtDestroy)
CHECK_FUNCTION(cublasLtMatmulDescCreate)
CHECK_FUNCTION(cublasLtMatmulDescDestroy)
CHECK_FUNCTION(cublasLtMatmulDescSetAttribute)
CHECK_FUNCTION(cublasLtMatrixLayoutCreate)
CHECK_FUNCTION(cublasLtMatrixLayoutDestroy)
CHECK_FUNCTION(cublasLtMatrixLayoutSetAttribute)
CHECK_FUNCTION(cublasLtMatmulPreferenceCreate)
CHECK_FUNCTION(cublasLtMatmulPreferenceDestroy)
CHECK_FUNCTION(cublasLtMatmulPreferenceSetAttribute)
CHECK_FUNCTION(cublasLtMatmulAlgoGetHeuristic)
CHECK_FUNCTION(cublasLtMatmul)

// The stream cuBLASLt takes is the driver's stream.
static_assert(std::is_same_v<std::remove_pointer_t<cudaStream_t>, CUstream_st>);
static_assert(sizeof(api::cudaStream_t) == sizeof(::cudaStream_t));

// Enums passed as int.
static_assert(sizeof(api::cublasStatus_t) == sizeof(::cublasStatus_t));
static_assert(sizeof(api::cudaDataType) == sizeof(::cudaDataType));
static_assert(sizeof(api::cublasComputeType_t) == sizeof(::cublasComputeType_t));
static_assert(sizeof(api::cublasLtEpilogue_t) == sizeof(::cublasLtEpilogue_t));
static_assert(api::CUBLAS_STATUS_SUCCESS == ::CUBLAS_STATUS_SUCCESS);
static_assert(api::CUBLAS_STATUS_NOT_INITIALIZED == ::CUBLAS_STATUS_NOT_INITIALIZED);
static_assert(api::CUBLAS_STATUS_INVALID_VALUE == ::CUBLAS_STATUS_INVALID_VALUE);
static_assert(api::CUBLAS_STATUS_NOT_SUPPORTED == ::CUBLAS_STATUS_NOT_SUPPORTED);
static_assert(api::CUDA_R_32F == ::CUDA_R_32F);
static_assert(api::CUDA_R_16F == ::CUDA_R_16F);
static_assert(api::CUDA_R_16BF == ::CUDA_R_16BF);
static_assert(api::CUBLAS_COMPUTE_32F == ::CUBLAS_COMPUTE_32F);
static_assert(api::CUBLAS_COMPUTE_32F_FAST_TF32 == ::CUBLAS_COMPUTE_32F_FAST_TF32);
static_assert(api::CUBLAS_OP_N == ::CUBLAS_OP_N);
static_assert(api::CUBLAS_OP_T == ::CUBLAS_OP_T);
static_assert(api::CUBLASLT_EPILOGUE_DEFAULT == ::CUBLASLT_EPILOGUE_DEFAULT);
static_assert(api::CUBLASLT_EPILOGUE_RELU == ::CUBLASLT_EPILOGUE_RELU);
static_assert(api::CUBLASLT_EPILOGUE_BIAS == ::CUBLASLT_EPILOGUE_BIAS);
static_assert(api::CUBLASLT_EPILOGUE_RELU_BIAS == ::CUBLASLT_EPILOGUE_RELU_BIAS);
static_assert(api::CUBLASLT_EPILOGUE_GELU == ::CUBLASLT_EPILOGUE_GELU);
static_assert(api::CUBLASLT_EPILOGUE_GELU_BIAS == ::CUBLASLT_EPILOGUE_GELU_BIAS);
static_assert(api::CUBLASLT_MATMUL_DESC_TRANSA == ::CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(api::CUBLASLT_MATMUL_DESC_TRANSB == ::CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(api::CUBLASLT_MATMUL_DESC_EPILOGUE == ::CUBLASLT_MATMUL_DESC_EPILOGUE);
static_assert(api::CUBLASLT_MATMUL_DESC_BIAS_POINTER == ::CUBLASLT_MATMUL_DESC_BIAS_POINTER);
static_assert(api::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE == ::CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
static_assert(api::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT == ::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
static_assert(api::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET ==
              ::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET);
static_assert(api::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ==
              ::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);

// Structs copied by value.
static_assert(sizeof(api::cublasLtMatmulAlgo_t) == sizeof(::cublasLtMatmulAlgo_t));
static_assert(alignof(api::cublasLtMatmulAlgo_t) == alignof(::cublasLtMatmulAlgo_t));
static_assert(sizeof(api::cublasLtMatmulHeuristicResult_t) ==
              sizeof(::cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(api::cublasLtMatmulHeuristicResult_t, workspaceSize) ==
              offsetof(::cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(api::cublasLtMatmulHeuristicResult_t, state) ==
              offsetof(::cublasLtMatmulHeuristicResult_t, state));
static_assert(offsetof(api::cublasLtMatmulHeuristicResult_t, wavesCount) ==
              offsetof(::cublasLtMatmulHeuristicResult_t, wavesCount));

// The checker must be able to fail: cublasLtMatrixLayoutCreate with an int
// leading dim (the 32-bit cublas habit) is not the 64-bit one.
static_assert(!modelc::test::Compatible<decltype(&::cublasLtMatrixLayoutCreate),
                                        api::cublasStatus_t (*)(api::cublasLtMatrixLayout_t *,
                                                                api::cudaDataType, uint64_t,
                                                                uint64_t, int32_t)>::value);

TEST(CublasLtAbi, DeclarationsMatchTheToolkitHeader) {
  // Everything is checked at compile time; this records that it was.
  EXPECT_GE(CUBLAS_VER_MAJOR, 12);
}

} // namespace
