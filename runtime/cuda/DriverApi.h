//===- DriverApi.h - The CUDA driver functions modelc calls ----*- C++ -*-===//
//
// The slice of cuda.h (CUDA 12/13) that CudaDriver uses, declared here so
// modelc builds where the toolkit is absent. Each pointer type matches the
// versioned entry point that cuGetProcAddress returns for CUDA 12.0 (e.g.
// "cuMemAlloc" -> cuMemAlloc_v2). tests/unit/cuda/DriverAbiTest.cpp checks
// every one against the real cuda.h wherever the toolkit is installed.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_DRIVERAPI_H
#define MODELC_RUNTIME_CUDA_DRIVERAPI_H

#include <cstddef>
#include <cstdint>

namespace modelc::cuda::driver {

using CUresult = int; // enum cudaError_enum
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUevent_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUgraph = CUgraph_st *;
using CUgraphExec = CUgraphExec_st *;
using CUevent = CUevent_st *;
using CUdevice_attribute = int;
using CUstreamCaptureMode = int; // enum CUstreamCaptureMode_enum

// cudaError_enum values modelc tells apart.
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
constexpr CUresult CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;

// cuStreamCreate flags and capture modes.
constexpr unsigned int CU_STREAM_NON_BLOCKING = 1;
constexpr CUstreamCaptureMode CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr unsigned int CU_EVENT_DEFAULT = 0;

// CUdevice_attribute values.
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

// cuGetProcAddress arguments.
constexpr int CUDA_VERSION_REQUESTED = 12000;
constexpr uint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
constexpr int CU_GET_PROC_ADDRESS_SUCCESS = 0;

using PFN_cuInit = CUresult (*)(unsigned int);
using PFN_cuGetProcAddress_v2 = CUresult (*)(const char *, void **, int, uint64_t, int *);
using PFN_cuDriverGetVersion = CUresult (*)(int *);
using PFN_cuGetErrorName = CUresult (*)(CUresult, const char **);
using PFN_cuGetErrorString = CUresult (*)(CUresult, const char **);
using PFN_cuDeviceGetCount = CUresult (*)(int *);
using PFN_cuDeviceGet = CUresult (*)(CUdevice *, int);
using PFN_cuDeviceGetName = CUresult (*)(char *, int, CUdevice);
using PFN_cuDeviceGetAttribute = CUresult (*)(int *, CUdevice_attribute, CUdevice);
using PFN_cuDeviceTotalMem_v2 = CUresult (*)(size_t *, CUdevice);
using PFN_cuDeviceCanAccessPeer = CUresult (*)(int *, CUdevice, CUdevice);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext *, CUdevice);
using PFN_cuDevicePrimaryCtxRelease_v2 = CUresult (*)(CUdevice);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuCtxEnablePeerAccess = CUresult (*)(CUcontext, unsigned int);
using PFN_cuModuleLoadData = CUresult (*)(CUmodule *, const void *);
using PFN_cuModuleUnload = CUresult (*)(CUmodule);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction *, CUmodule, const char *);
using PFN_cuMemAlloc_v2 = CUresult (*)(CUdeviceptr *, size_t);
using PFN_cuMemFree_v2 = CUresult (*)(CUdeviceptr);
using PFN_cuMemcpyHtoD_v2 = CUresult (*)(CUdeviceptr, const void *, size_t);
using PFN_cuMemcpyDtoH_v2 = CUresult (*)(void *, CUdeviceptr, size_t);
using PFN_cuMemcpyDtoD_v2 = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t);
using PFN_cuMemcpyPeer = CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t);
using PFN_cuStreamCreate = CUresult (*)(CUstream *, unsigned int);
using PFN_cuStreamDestroy_v2 = CUresult (*)(CUstream);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream);
using PFN_cuMemcpyHtoDAsync_v2 = CUresult (*)(CUdeviceptr, const void *, size_t, CUstream);
using PFN_cuMemcpyDtoHAsync_v2 = CUresult (*)(void *, CUdeviceptr, size_t, CUstream);
using PFN_cuMemcpyDtoDAsync_v2 = CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
using PFN_cuStreamBeginCapture_v2 = CUresult (*)(CUstream, CUstreamCaptureMode);
using PFN_cuStreamEndCapture = CUresult (*)(CUstream, CUgraph *);
using PFN_cuGraphInstantiateWithFlags = CUresult (*)(CUgraphExec *, CUgraph, unsigned long long);
using PFN_cuGraphLaunch = CUresult (*)(CUgraphExec, CUstream);
using PFN_cuGraphExecDestroy = CUresult (*)(CUgraphExec);
using PFN_cuGraphDestroy = CUresult (*)(CUgraph);
using PFN_cuEventCreate = CUresult (*)(CUevent *, unsigned int);
using PFN_cuEventRecord = CUresult (*)(CUevent, CUstream);
using PFN_cuEventSynchronize = CUresult (*)(CUevent);
using PFN_cuEventElapsedTime = CUresult (*)(float *, CUevent, CUevent);
using PFN_cuEventDestroy_v2 = CUresult (*)(CUevent);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction, unsigned int, unsigned int, unsigned int,
                                        unsigned int, unsigned int, unsigned int, unsigned int,
                                        CUstream, void **, void **);

/// Every entry point CudaDriver resolves: X(name as passed to
/// cuGetProcAddress, pointer type, member).
#define MODELC_CUDA_DRIVER_FUNCTIONS(X)                                                            \
  X("cuDriverGetVersion", PFN_cuDriverGetVersion, driverGetVersion)                                \
  X("cuGetErrorName", PFN_cuGetErrorName, getErrorName)                                            \
  X("cuGetErrorString", PFN_cuGetErrorString, getErrorString)                                      \
  X("cuDeviceGetCount", PFN_cuDeviceGetCount, deviceGetCount)                                      \
  X("cuDeviceGet", PFN_cuDeviceGet, deviceGet)                                                     \
  X("cuDeviceGetName", PFN_cuDeviceGetName, deviceGetName)                                         \
  X("cuDeviceGetAttribute", PFN_cuDeviceGetAttribute, deviceGetAttribute)                          \
  X("cuDeviceTotalMem", PFN_cuDeviceTotalMem_v2, deviceTotalMem)                                   \
  X("cuDeviceCanAccessPeer", PFN_cuDeviceCanAccessPeer, deviceCanAccessPeer)                       \
  X("cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain, primaryCtxRetain)                    \
  X("cuDevicePrimaryCtxRelease", PFN_cuDevicePrimaryCtxRelease_v2, primaryCtxRelease)              \
  X("cuCtxSetCurrent", PFN_cuCtxSetCurrent, ctxSetCurrent)                                         \
  X("cuCtxSynchronize", PFN_cuCtxSynchronize, ctxSynchronize)                                      \
  X("cuCtxEnablePeerAccess", PFN_cuCtxEnablePeerAccess, ctxEnablePeerAccess)                       \
  X("cuModuleLoadData", PFN_cuModuleLoadData, moduleLoadData)                                      \
  X("cuModuleUnload", PFN_cuModuleUnload, moduleUnload)                                            \
  X("cuModuleGetFunction", PFN_cuModuleGetFunction, moduleGetFunction)                             \
  X("cuMemAlloc", PFN_cuMemAlloc_v2, memAlloc)                                                     \
  X("cuMemFree", PFN_cuMemFree_v2, memFree)                                                        \
  X("cuMemcpyHtoD", PFN_cuMemcpyHtoD_v2, memcpyHtoD)                                               \
  X("cuMemcpyDtoH", PFN_cuMemcpyDtoH_v2, memcpyDtoH)                                               \
  X("cuMemcpyDtoD", PFN_cuMemcpyDtoD_v2, memcpyDtoD)                                               \
  X("cuMemcpyPeer", PFN_cuMemcpyPeer, memcpyPeer)                                                  \
  X("cuStreamCreate", PFN_cuStreamCreate, streamCreate)                                            \
  X("cuStreamDestroy", PFN_cuStreamDestroy_v2, streamDestroy)                                      \
  X("cuStreamSynchronize", PFN_cuStreamSynchronize, streamSynchronize)                             \
  X("cuLaunchKernel", PFN_cuLaunchKernel, launchKernel)                                            \
  X("cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v2, memcpyHtoDAsync)                                \
  X("cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v2, memcpyDtoHAsync)                                \
  X("cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v2, memcpyDtoDAsync)                                \
  X("cuStreamBeginCapture", PFN_cuStreamBeginCapture_v2, streamBeginCapture)                       \
  X("cuStreamEndCapture", PFN_cuStreamEndCapture, streamEndCapture)                                \
  X("cuGraphInstantiateWithFlags", PFN_cuGraphInstantiateWithFlags, graphInstantiate)              \
  X("cuGraphLaunch", PFN_cuGraphLaunch, graphLaunch)                                               \
  X("cuGraphExecDestroy", PFN_cuGraphExecDestroy, graphExecDestroy)                                \
  X("cuGraphDestroy", PFN_cuGraphDestroy, graphDestroy)                                            \
  X("cuEventCreate", PFN_cuEventCreate, eventCreate)                                               \
  X("cuEventRecord", PFN_cuEventRecord, eventRecord)                                               \
  X("cuEventSynchronize", PFN_cuEventSynchronize, eventSynchronize)                                \
  X("cuEventElapsedTime", PFN_cuEventElapsedTime, eventElapsedTime)                                \
  X("cuEventDestroy", PFN_cuEventDestroy_v2, eventDestroy)

/// The resolved entry points.
struct DriverFunctions {
  PFN_cuInit init = nullptr;
  PFN_cuGetProcAddress_v2 getProcAddress = nullptr;
#define MODELC_DECLARE_MEMBER(name, type, member) type member = nullptr;
  MODELC_CUDA_DRIVER_FUNCTIONS(MODELC_DECLARE_MEMBER)
#undef MODELC_DECLARE_MEMBER
};

} // namespace modelc::cuda::driver

#endif // MODELC_RUNTIME_CUDA_DRIVERAPI_H
