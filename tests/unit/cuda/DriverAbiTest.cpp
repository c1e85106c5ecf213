//===- DriverAbiTest.cpp - DriverApi.h against the real cuda.h ------------===//
//
// Built only where the CUDA toolkit's cuda.h is found. The wrapper calls the
// driver through its own declarations (DriverApi.h); these compile-time
// checks prove each matches the versioned function cuGetProcAddress returns
// for CUDA 12.0: same arity, and per parameter the same size and kind.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include "AbiCheck.h"
#include "runtime/cuda/DriverApi.h"

#include "gtest/gtest.h"

namespace {

namespace api = modelc::cuda::driver;

#define CHECK_FUNCTION(real, ours)                                                                 \
  static_assert(modelc::test::Compatible<decltype(&::real), api::ours>::value,                     \
                #real " does not match DriverApi.h's " #ours);

CHECK_FUNCTION(cuInit, PFN_cuInit)
CHECK_FUNCTION(cuGetProcAddress_v2, PFN_cuGetProcAddress_v2)
CHECK_FUNCTION(cuDriverGetVersion, PFN_cuDriverGetVersion)
CHECK_FUNCTION(cuGetErrorName, PFN_cuGetErrorName)
CHECK_FUNCTION(cuGetErrorString, PFN_cuGetErrorString)
CHECK_FUNCTION(cuDeviceGetCount, PFN_cuDeviceGetCount)
CHECK_FUNCTION(cuDeviceGet, PFN_cuDeviceGet)
CHECK_FUNCTION(cuDeviceGetName, PFN_cuDeviceGetName)
CHECK_FUNCTION(cuDeviceGetAttribute, PFN_cuDeviceGetAttribute)
CHECK_FUNCTION(cuDeviceTotalMem_v2, PFN_cuDeviceTotalMem_v2)
CHECK_FUNCTION(cuDeviceCanAccessPeer, PFN_cuDeviceCanAccessPeer)
CHECK_FUNCTION(cuDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain)
CHECK_FUNCTION(cuDevicePrimaryCtxRelease_v2, PFN_cuDevicePrimaryCtxRelease_v2)
CHECK_FUNCTION(cuCtxSetCurrent, PFN_cuCtxSetCurrent)
CHECK_FUNCTION(cuCtxSynchronize, PFN_cuCtxSynchronize)
CHECK_FUNCTION(cuCtxEnablePeerAccess, PFN_cuCtxEnablePeerAccess)
CHECK_FUNCTION(cuModuleLoadData, PFN_cuModuleLoadData)
CHECK_FUNCTION(cuModuleUnload, PFN_cuModuleUnload)
CHECK_FUNCTION(cuModuleGetFunction, PFN_cuModuleGetFunction)
CHECK_FUNCTION(cuMemAlloc_v2, PFN_cuMemAlloc_v2)
CHECK_FUNCTION(cuMemFree_v2, PFN_cuMemFree_v2)
CHECK_FUNCTION(cuMemcpyHtoD_v2, PFN_cuMemcpyHtoD_v2)
CHECK_FUNCTION(cuMemcpyDtoH_v2, PFN_cuMemcpyDtoH_v2)
CHECK_FUNCTION(cuMemcpyDtoD_v2, PFN_cuMemcpyDtoD_v2)
CHECK_FUNCTION(cuMemcpyPeer, PFN_cuMemcpyPeer)
CHECK_FUNCTION(cuStreamCreate, PFN_cuStreamCreate)
CHECK_FUNCTION(cuStreamDestroy_v2, PFN_cuStreamDestroy_v2)
CHECK_FUNCTION(cuStreamSynchronize, PFN_cuStreamSynchronize)
CHECK_FUNCTION(cuLaunchKernel, PFN_cuLaunchKernel)
CHECK_FUNCTION(cuMemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v2)
CHECK_FUNCTION(cuMemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v2)
CHECK_FUNCTION(cuMemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v2)
CHECK_FUNCTION(cuStreamBeginCapture_v2, PFN_cuStreamBeginCapture_v2)
CHECK_FUNCTION(cuStreamEndCapture, PFN_cuStreamEndCapture)
CHECK_FUNCTION(cuGraphInstantiateWithFlags, PFN_cuGraphInstantiateWithFlags)
CHECK_FUNCTION(cuGraphLaunch, PFN_cuGraphLaunch)
CHECK_FUNCTION(cuGraphExecDestroy, PFN_cuGraphExecDestroy)
CHECK_FUNCTION(cuGraphDestroy, PFN_cuGraphDestroy)
CHECK_FUNCTION(cuEventCreate, PFN_cuEventCreate)
CHECK_FUNCTION(cuEventRecord, PFN_cuEventRecord)
CHECK_FUNCTION(cuEventSynchronize, PFN_cuEventSynchronize)
CHECK_FUNCTION(cuEventElapsedTime, PFN_cuEventElapsedTime)
CHECK_FUNCTION(cuEventDestroy_v2, PFN_cuEventDestroy_v2)

static_assert(sizeof(api::CUdeviceptr) == sizeof(::CUdeviceptr));
static_assert(sizeof(api::CUresult) == sizeof(::CUresult));
static_assert(api::CUDA_SUCCESS == ::CUDA_SUCCESS);
static_assert(api::CUDA_ERROR_NOT_INITIALIZED == ::CUDA_ERROR_NOT_INITIALIZED);
static_assert(api::CUDA_ERROR_NO_DEVICE == ::CUDA_ERROR_NO_DEVICE);
static_assert(api::CUDA_ERROR_INVALID_DEVICE == ::CUDA_ERROR_INVALID_DEVICE);
static_assert(api::CUDA_ERROR_STUB_LIBRARY == ::CUDA_ERROR_STUB_LIBRARY);
static_assert(api::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED ==
              ::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
static_assert(api::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK ==
              ::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(api::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK ==
              ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
static_assert(api::CU_DEVICE_ATTRIBUTE_WARP_SIZE == ::CU_DEVICE_ATTRIBUTE_WARP_SIZE);
static_assert(api::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ==
              ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
              ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(api::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
              ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(api::CU_GET_PROC_ADDRESS_DEFAULT == ::CU_GET_PROC_ADDRESS_DEFAULT);
static_assert(api::CU_STREAM_NON_BLOCKING == ::CU_STREAM_NON_BLOCKING);
static_assert(api::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL == ::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
static_assert(api::CU_GET_PROC_ADDRESS_SUCCESS == ::CU_GET_PROC_ADDRESS_SUCCESS);
static_assert(api::CU_EVENT_DEFAULT == ::CU_EVENT_DEFAULT);

// The checker itself must be able to fail.
static_assert(!modelc::test::Compatible<api::PFN_cuMemAlloc_v2,
                                        CUresult (*)(unsigned int *, unsigned int)>::value,
              "the legacy 32-bit cuMemAlloc must not pass as cuMemAlloc_v2");

TEST(DriverAbi, DeclarationsMatchTheToolkitHeader) {
  // Everything is checked at compile time; this records that it was.
  EXPECT_GE(CUDA_VERSION, 12000);
}

} // namespace
