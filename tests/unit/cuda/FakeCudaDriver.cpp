//===- FakeCudaDriver.cpp - A libcuda stand-in for the driver tests -------===//
//
// Exports cuInit and cuGetProcAddress_v2 like the real libcuda.so.1 and hands
// out the versioned entry points through the latter, with host memory in
// place of GPU memory. It is strict where the real driver is: calls need a
// current context, copies must stay inside allocations, modules must be PTX
// or ELF, and cuGetProcAddress only serves CUDA 12.0 or newer. The legacy
// `cuMemAlloc` symbol exists but fails, to prove the wrapper never uses dlsym
// for it.
//
// Streams and graphs: work on a stream that is being captured is recorded,
// not run (as on a GPU), and synchronising a capturing stream fails; a graph
// replays what was recorded in it. Kernels compute nothing; work that a
// library enqueues through modelc_fake_cuda_enqueue (the fake cuBLASLt,
// FakeCublasLt.cpp, which links this library) runs on the host, now or
// when its graph is launched. Every call of interest is counted by name, for
// tests that prove which calls an executor makes: modelc_fake_cuda_calls(name)
// and modelc_fake_cuda_reset_calls() (looked up with dlsym).
//
// Time: a fake clock advances by MODELC_FAKE_CUDA_KERNEL_US (default 10)
// per kernel run and by what enqueued work says it takes; events read it, so
// tests decide which of two candidates a measurement finds faster.
//
// Environment: MODELC_FAKE_CUDA_DEVICES (default 1),
// MODELC_FAKE_CUDA_INIT_RESULT (cuInit's result, default 0),
// MODELC_FAKE_CUDA_CAPTURE_RESULT (cuStreamBeginCapture's, default 0).
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/DriverApi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

using namespace modelc::cuda::driver;

namespace {

constexpr CUresult InvalidValue = 1;
constexpr CUresult InvalidImage = 200;
constexpr CUresult InvalidContext = 201;
constexpr CUresult NotFound = 500;
constexpr CUresult CaptureUnsupported = 900; // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
constexpr CUresult CaptureInvalidated = 901; // CUDA_ERROR_STREAM_CAPTURE_INVALIDATED

struct CUctx_fake {
  int device;
};

struct Allocation {
  size_t size;
  int device;
};

/// What a captured stream recorded: kernels (time only) and library work.
struct Recording {
  int kernels = 0;
  double microseconds = 0;
  std::vector<std::function<void()>> work;
};

struct FakeState {
  std::mutex mutex;
  bool initialized = false;
  int devices = 0; ///< Read from the environment by cuInit, like a real driver.
  CUctx_fake contexts[8];
  int retained[8] = {0};
  std::map<CUdeviceptr, Allocation> allocations;
  std::map<void *, std::string> modules;
  std::map<std::string, int> calls;
  std::map<void *, bool> capturing;   ///< by stream
  std::map<void *, Recording> graphs; ///< by capturing stream, graph and instance
  std::map<void *, double> events;    ///< event -> clock when recorded
  double clock = 0;                   ///< microseconds of GPU work so far
};

FakeState &state() {
  static FakeState fake;
  return fake;
}

thread_local CUcontext current = nullptr;

int envInt(const char *name, int fallback) {
  const char *value = std::getenv(name);
  return value ? std::atoi(value) : fallback;
}

int deviceCount() { return state().devices; }

void count(const char *call) {
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().calls[call];
}

bool isCapturing(CUstream stream) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return stream && state().capturing[stream];
}

double kernelMicroseconds() {
  static const double value = envInt("MODELC_FAKE_CUDA_KERNEL_US", 10);
  return value;
}

int currentDevice() { return current ? reinterpret_cast<CUctx_fake *>(current)->device : -1; }

/// True if [pointer, pointer + bytes) is inside one allocation.
bool inside(CUdeviceptr pointer, size_t bytes) {
  auto &allocations = state().allocations;
  auto it = allocations.upper_bound(pointer);
  if (it == allocations.begin())
    return false;
  --it;
  return pointer >= it->first && pointer + bytes <= it->first + it->second.size;
}

} // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
  if (flags != 0)
    return InvalidValue;
  CUresult result = envInt("MODELC_FAKE_CUDA_INIT_RESULT", CUDA_SUCCESS);
  state().initialized = result == CUDA_SUCCESS;
  state().devices = std::clamp(envInt("MODELC_FAKE_CUDA_DEVICES", 1), 0, 8);
  return result;
}

CUresult cuMemAlloc(unsigned int *, unsigned int) { return 999; } // the legacy ABI trap

int modelc_fake_cuda_calls(const char *name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().calls.find(name);
  return it == state().calls.end() ? 0 : it->second;
}

void modelc_fake_cuda_reset_calls() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().calls.clear();
}

void modelc_fake_cuda_count(const char *name) { count(name); }

/// The device of the calling thread's current context, -1 without one.
int modelc_fake_cuda_current_device() { return currentDevice(); }

bool modelc_fake_cuda_is_capturing(CUstream stream) { return isCapturing(stream); }

/// True if [pointer, pointer + bytes) lies inside one allocation.
bool modelc_fake_cuda_inside(CUdeviceptr pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return inside(pointer, bytes);
}

/// Runs `work` (taking `microseconds` of fake GPU time) on `stream`: now, or
/// when the graph being captured on the stream is launched.
CUresult modelc_fake_cuda_enqueue(CUstream stream, const std::function<void()> *work,
                                  double microseconds) {
  if (!current)
    return InvalidContext;
  {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (stream && state().capturing[stream]) {
      Recording &recording = state().graphs[stream];
      recording.work.push_back(*work);
      recording.microseconds += microseconds;
      return CUDA_SUCCESS;
    }
    state().clock += microseconds;
  }
  (*work)();
  return CUDA_SUCCESS;
}

CUresult fake_cuDriverGetVersion(int *version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult fake_cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case InvalidValue:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  case InvalidImage:
    *name = "CUDA_ERROR_INVALID_IMAGE";
    return CUDA_SUCCESS;
  case InvalidContext:
    *name = "CUDA_ERROR_INVALID_CONTEXT";
    return CUDA_SUCCESS;
  case NotFound:
    *name = "CUDA_ERROR_NOT_FOUND";
    return CUDA_SUCCESS;
  case CaptureUnsupported:
    *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    return CUDA_SUCCESS;
  case CaptureInvalidated:
    *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED";
    return CUDA_SUCCESS;
  default:
    *name = nullptr;
    return InvalidValue;
  }
}

CUresult fake_cuGetErrorString(CUresult error, const char **text) {
  switch (error) {
  case InvalidValue:
    *text = "invalid argument";
    return CUDA_SUCCESS;
  case InvalidImage:
    *text = "device kernel image is invalid";
    return CUDA_SUCCESS;
  case InvalidContext:
    *text = "invalid device context";
    return CUDA_SUCCESS;
  case NotFound:
    *text = "named symbol not found";
    return CUDA_SUCCESS;
  case CaptureUnsupported:
    *text = "operation not permitted when stream is capturing";
    return CUDA_SUCCESS;
  case CaptureInvalidated:
    *text = "operation failed due to a previous error during capture";
    return CUDA_SUCCESS;
  default:
    *text = nullptr;
    return InvalidValue;
  }
}

CUresult fake_cuDeviceGetCount(int *count) {
  if (!state().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = deviceCount();
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetName(char *name, int length, CUdevice device) {
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, length, "Fake GPU %d", device);
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice device) {
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = 9;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = 0;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 132;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = 49152;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *value = 32;
    return CUDA_SUCCESS;
  default:
    return InvalidValue;
  }
}

CUresult fake_cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceCanAccessPeer(int *can, CUdevice, CUdevice) {
  *can = 1;
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (device < 0 || device >= deviceCount())
    return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> lock(state().mutex);
  state().contexts[device].device = device;
  ++state().retained[device];
  *context = reinterpret_cast<CUcontext>(&state().contexts[device]);
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (device < 0 || device >= deviceCount() || state().retained[device] == 0)
    return InvalidContext;
  --state().retained[device];
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxSetCurrent(CUcontext context) {
  current = context;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxSynchronize() {
  count("cuCtxSynchronize");
  return current ? CUDA_SUCCESS : InvalidContext;
}

CUresult fake_cuCtxEnablePeerAccess(CUcontext, unsigned int) { return CUDA_SUCCESS; }

CUresult fake_cuModuleLoadData(CUmodule *module, const void *image) {
  if (!current)
    return InvalidContext;
  const char *text = static_cast<const char *>(image);
  std::string content;
  if (std::memcmp(text,
                  "\x7f"
                  "ELF",
                  4) == 0) {
    // The image ends with its section header table (e_shoff + e_shnum * e_shentsize).
    uint64_t tableOffset;
    uint16_t entrySize, entries;
    std::memcpy(&tableOffset, text + 0x28, 8);
    std::memcpy(&entrySize, text + 0x3A, 2);
    std::memcpy(&entries, text + 0x3C, 2);
    content.assign(text, tableOffset + uint64_t(entrySize) * entries);
  } else if (std::strstr(text, ".version") && std::strstr(text, ".entry"))
    content = text;
  else
    return InvalidImage;
  std::lock_guard<std::mutex> lock(state().mutex);
  auto *handle = new char;
  state().modules[handle] = content;
  *module = reinterpret_cast<CUmodule>(handle);
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleUnload(CUmodule module) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().modules.find(module);
  if (it == state().modules.end())
    return InvalidValue;
  delete static_cast<char *>(it->first);
  state().modules.erase(it);
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().modules.find(module);
  if (it == state().modules.end())
    return InvalidValue;
  if (it->second.find(std::string(".entry ") + name) == std::string::npos &&
      it->second.find(name) == std::string::npos)
    return NotFound;
  *function = reinterpret_cast<CUfunction>(module);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  count("cuMemAlloc");
  if (!current)
    return InvalidContext;
  if (bytes == 0 || bytes > (size_t(1) << 36))
    return bytes ? 2 /* CUDA_ERROR_OUT_OF_MEMORY */ : InvalidValue;
  void *memory = std::calloc(1, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  *pointer = reinterpret_cast<CUdeviceptr>(memory);
  state().allocations[*pointer] = {bytes, currentDevice()};
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFree_v2(CUdeviceptr pointer) {
  count("cuMemFree");
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().allocations.find(pointer);
  if (it == state().allocations.end())
    return InvalidValue;
  std::free(reinterpret_cast<void *>(pointer));
  state().allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyHtoD_v2(CUdeviceptr destination, const void *source, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!current)
    return InvalidContext;
  if (!inside(destination, bytes))
    return InvalidValue;
  std::memcpy(reinterpret_cast<void *>(destination), source, bytes);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyDtoH_v2(void *destination, CUdeviceptr source, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!current)
    return InvalidContext;
  if (!inside(source, bytes))
    return InvalidValue;
  std::memcpy(destination, reinterpret_cast<void *>(source), bytes);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyDtoD_v2(CUdeviceptr destination, CUdeviceptr source, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!current)
    return InvalidContext;
  if (!inside(destination, bytes) || !inside(source, bytes))
    return InvalidValue;
  std::memmove(reinterpret_cast<void *>(destination), reinterpret_cast<void *>(source), bytes);
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyPeer(CUdeviceptr destination, CUcontext destinationContext,
                           CUdeviceptr source, CUcontext sourceContext, size_t bytes) {
  count("cuMemcpyPeer");
  if (!destinationContext || !sourceContext)
    return InvalidContext;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!inside(destination, bytes) || !inside(source, bytes))
    return InvalidValue;
  std::memmove(reinterpret_cast<void *>(destination), reinterpret_cast<void *>(source), bytes);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamCreate(CUstream *stream, unsigned int) {
  if (!current)
    return InvalidContext;
  *stream = reinterpret_cast<CUstream>(new char);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamDestroy_v2(CUstream stream) {
  delete reinterpret_cast<char *>(stream);
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamSynchronize(CUstream stream) {
  count("cuStreamSynchronize");
  if (isCapturing(stream))
    return CaptureUnsupported;
  return current ? CUDA_SUCCESS : InvalidContext;
}

CUresult fake_cuMemcpyHtoDAsync_v2(CUdeviceptr destination, const void *source, size_t bytes,
                                   CUstream stream) {
  count("cuMemcpyHtoDAsync");
  if (isCapturing(stream))
    return CaptureUnsupported; // pageable host memory cannot be captured
  return fake_cuMemcpyHtoD_v2(destination, source, bytes);
}

CUresult fake_cuMemcpyDtoHAsync_v2(void *destination, CUdeviceptr source, size_t bytes,
                                   CUstream stream) {
  count("cuMemcpyDtoHAsync");
  if (isCapturing(stream))
    return CaptureUnsupported;
  return fake_cuMemcpyDtoH_v2(destination, source, bytes);
}

CUresult fake_cuMemcpyDtoDAsync_v2(CUdeviceptr destination, CUdeviceptr source, size_t bytes,
                                   CUstream stream) {
  count("cuMemcpyDtoDAsync");
  if (isCapturing(stream))
    return CUDA_SUCCESS; // recorded
  return fake_cuMemcpyDtoD_v2(destination, source, bytes);
}

CUresult fake_cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode) {
  count("cuStreamBeginCapture");
  if (!current)
    return InvalidContext;
  if (!stream) // the legacy default stream cannot be captured
    return CaptureUnsupported;
  if (CUresult result = envInt("MODELC_FAKE_CUDA_CAPTURE_RESULT", CUDA_SUCCESS))
    return result;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (state().capturing[stream])
    return CaptureInvalidated;
  state().capturing[stream] = true;
  state().graphs[stream] = Recording();
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  count("cuStreamEndCapture");
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().capturing[stream])
    return CaptureInvalidated;
  state().capturing[stream] = false;
  auto *handle = new char;
  state().graphs[handle] = state().graphs[stream];
  state().graphs.erase(stream);
  *graph = reinterpret_cast<CUgraph>(handle);
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long) {
  count("cuGraphInstantiate");
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().graphs.count(graph))
    return InvalidValue;
  auto *handle = new char;
  state().graphs[handle] = state().graphs[graph];
  *exec = reinterpret_cast<CUgraphExec>(handle);
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  count("cuGraphLaunch");
  if (!current)
    return InvalidContext;
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().graphs.find(exec);
  if (it == state().graphs.end() || state().capturing[stream])
    return InvalidValue;
  Recording replay = it->second;
  state().clock += replay.microseconds + replay.kernels * kernelMicroseconds();
  for (std::function<void()> &work : replay.work)
    work();
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphExecDestroy(CUgraphExec exec) {
  count("cuGraphExecDestroy");
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().graphs.erase(exec))
    return InvalidValue;
  delete reinterpret_cast<char *>(exec);
  return CUDA_SUCCESS;
}

CUresult fake_cuGraphDestroy(CUgraph graph) {
  count("cuGraphDestroy");
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().graphs.erase(graph))
    return InvalidValue;
  delete reinterpret_cast<char *>(graph);
  return CUDA_SUCCESS;
}

CUresult fake_cuLaunchKernel(CUfunction function, unsigned gridX, unsigned gridY, unsigned gridZ,
                             unsigned blockX, unsigned blockY, unsigned blockZ, unsigned,
                             CUstream stream, void **params, void **extra) {
  count("cuLaunchKernel");
  if (!current)
    return InvalidContext;
  if (!function || !params || extra)
    return InvalidValue;
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ ||
      uint64_t(blockX) * blockY * blockZ > 1024)
    return InvalidValue;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (stream && state().capturing[stream])
    ++state().graphs[stream].kernels;
  else
    state().clock += kernelMicroseconds();
  return CUDA_SUCCESS;
}

CUresult fake_cuEventCreate(CUevent *event, unsigned int flags) {
  if (!current)
    return InvalidContext;
  if (flags != CU_EVENT_DEFAULT)
    return InvalidValue;
  std::lock_guard<std::mutex> lock(state().mutex);
  auto *handle = new char;
  state().events[handle] = -1;
  *event = reinterpret_cast<CUevent>(handle);
  return CUDA_SUCCESS;
}

CUresult fake_cuEventRecord(CUevent event, CUstream stream) {
  count("cuEventRecord");
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().events.find(event);
  if (it == state().events.end())
    return InvalidValue;
  if (stream && state().capturing[stream])
    return CaptureUnsupported; // modelc never times inside a graph
  it->second = state().clock;
  return CUDA_SUCCESS;
}

CUresult fake_cuEventSynchronize(CUevent event) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().events.count(event) ? CUDA_SUCCESS : InvalidValue;
}

CUresult fake_cuEventElapsedTime(float *milliseconds, CUevent start, CUevent end) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto from = state().events.find(start), to = state().events.find(end);
  if (from == state().events.end() || to == state().events.end() || from->second < 0 ||
      to->second < 0)
    return InvalidValue;
  *milliseconds = float((to->second - from->second) / 1000.0);
  return CUDA_SUCCESS;
}

CUresult fake_cuEventDestroy_v2(CUevent event) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().events.erase(event))
    return InvalidValue;
  delete reinterpret_cast<char *>(event);
  return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **function, int cudaVersion, uint64_t flags,
                             int *symbolStatus) {
  struct Entry {
    const char *name;
    void *function;
  };
  static const Entry entries[] = {
// Each fake is converted to the pointer type the wrapper will call it as,
// so a signature that drifts from DriverApi.h does not compile.
#define MODELC_FAKE_ENTRY(name, function, type)                                                    \
  {name, reinterpret_cast<void *>(static_cast<type>(&function))}
      MODELC_FAKE_ENTRY("cuDriverGetVersion", fake_cuDriverGetVersion, PFN_cuDriverGetVersion),
      MODELC_FAKE_ENTRY("cuGetErrorName", fake_cuGetErrorName, PFN_cuGetErrorName),
      MODELC_FAKE_ENTRY("cuGetErrorString", fake_cuGetErrorString, PFN_cuGetErrorString),
      MODELC_FAKE_ENTRY("cuDeviceGetCount", fake_cuDeviceGetCount, PFN_cuDeviceGetCount),
      MODELC_FAKE_ENTRY("cuDeviceGet", fake_cuDeviceGet, PFN_cuDeviceGet),
      MODELC_FAKE_ENTRY("cuDeviceGetName", fake_cuDeviceGetName, PFN_cuDeviceGetName),
      MODELC_FAKE_ENTRY("cuDeviceGetAttribute", fake_cuDeviceGetAttribute,
                        PFN_cuDeviceGetAttribute),
      MODELC_FAKE_ENTRY("cuDeviceTotalMem", fake_cuDeviceTotalMem_v2, PFN_cuDeviceTotalMem_v2),
      MODELC_FAKE_ENTRY("cuDeviceCanAccessPeer", fake_cuDeviceCanAccessPeer,
                        PFN_cuDeviceCanAccessPeer),
      MODELC_FAKE_ENTRY("cuDevicePrimaryCtxRetain", fake_cuDevicePrimaryCtxRetain,
                        PFN_cuDevicePrimaryCtxRetain),
      MODELC_FAKE_ENTRY("cuDevicePrimaryCtxRelease", fake_cuDevicePrimaryCtxRelease_v2,
                        PFN_cuDevicePrimaryCtxRelease_v2),
      MODELC_FAKE_ENTRY("cuCtxSetCurrent", fake_cuCtxSetCurrent, PFN_cuCtxSetCurrent),
      MODELC_FAKE_ENTRY("cuCtxSynchronize", fake_cuCtxSynchronize, PFN_cuCtxSynchronize),
      MODELC_FAKE_ENTRY("cuCtxEnablePeerAccess", fake_cuCtxEnablePeerAccess,
                        PFN_cuCtxEnablePeerAccess),
      MODELC_FAKE_ENTRY("cuModuleLoadData", fake_cuModuleLoadData, PFN_cuModuleLoadData),
      MODELC_FAKE_ENTRY("cuModuleUnload", fake_cuModuleUnload, PFN_cuModuleUnload),
      MODELC_FAKE_ENTRY("cuModuleGetFunction", fake_cuModuleGetFunction, PFN_cuModuleGetFunction),
      MODELC_FAKE_ENTRY("cuMemAlloc", fake_cuMemAlloc_v2, PFN_cuMemAlloc_v2),
      MODELC_FAKE_ENTRY("cuMemFree", fake_cuMemFree_v2, PFN_cuMemFree_v2),
      MODELC_FAKE_ENTRY("cuMemcpyHtoD", fake_cuMemcpyHtoD_v2, PFN_cuMemcpyHtoD_v2),
      MODELC_FAKE_ENTRY("cuMemcpyDtoH", fake_cuMemcpyDtoH_v2, PFN_cuMemcpyDtoH_v2),
      MODELC_FAKE_ENTRY("cuMemcpyDtoD", fake_cuMemcpyDtoD_v2, PFN_cuMemcpyDtoD_v2),
      MODELC_FAKE_ENTRY("cuMemcpyPeer", fake_cuMemcpyPeer, PFN_cuMemcpyPeer),
      MODELC_FAKE_ENTRY("cuStreamCreate", fake_cuStreamCreate, PFN_cuStreamCreate),
      MODELC_FAKE_ENTRY("cuStreamDestroy", fake_cuStreamDestroy_v2, PFN_cuStreamDestroy_v2),
      MODELC_FAKE_ENTRY("cuStreamSynchronize", fake_cuStreamSynchronize, PFN_cuStreamSynchronize),
      MODELC_FAKE_ENTRY("cuLaunchKernel", fake_cuLaunchKernel, PFN_cuLaunchKernel),
      MODELC_FAKE_ENTRY("cuMemcpyHtoDAsync", fake_cuMemcpyHtoDAsync_v2, PFN_cuMemcpyHtoDAsync_v2),
      MODELC_FAKE_ENTRY("cuMemcpyDtoHAsync", fake_cuMemcpyDtoHAsync_v2, PFN_cuMemcpyDtoHAsync_v2),
      MODELC_FAKE_ENTRY("cuMemcpyDtoDAsync", fake_cuMemcpyDtoDAsync_v2, PFN_cuMemcpyDtoDAsync_v2),
      MODELC_FAKE_ENTRY("cuStreamBeginCapture", fake_cuStreamBeginCapture_v2,
                        PFN_cuStreamBeginCapture_v2),
      MODELC_FAKE_ENTRY("cuStreamEndCapture", fake_cuStreamEndCapture, PFN_cuStreamEndCapture),
      MODELC_FAKE_ENTRY("cuGraphInstantiateWithFlags", fake_cuGraphInstantiateWithFlags,
                        PFN_cuGraphInstantiateWithFlags),
      MODELC_FAKE_ENTRY("cuGraphLaunch", fake_cuGraphLaunch, PFN_cuGraphLaunch),
      MODELC_FAKE_ENTRY("cuGraphExecDestroy", fake_cuGraphExecDestroy, PFN_cuGraphExecDestroy),
      MODELC_FAKE_ENTRY("cuGraphDestroy", fake_cuGraphDestroy, PFN_cuGraphDestroy),
      MODELC_FAKE_ENTRY("cuEventCreate", fake_cuEventCreate, PFN_cuEventCreate),
      MODELC_FAKE_ENTRY("cuEventRecord", fake_cuEventRecord, PFN_cuEventRecord),
      MODELC_FAKE_ENTRY("cuEventSynchronize", fake_cuEventSynchronize, PFN_cuEventSynchronize),
      MODELC_FAKE_ENTRY("cuEventElapsedTime", fake_cuEventElapsedTime, PFN_cuEventElapsedTime),
      MODELC_FAKE_ENTRY("cuEventDestroy", fake_cuEventDestroy_v2, PFN_cuEventDestroy_v2),
#undef MODELC_FAKE_ENTRY
  };
  *function = nullptr;
  if (cudaVersion < 12000 || flags != CU_GET_PROC_ADDRESS_DEFAULT) {
    *symbolStatus = 2; // CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
    return NotFound;
  }
  for (const Entry &entry : entries) {
    if (std::strcmp(entry.name, symbol) == 0) {
      *function = entry.function;
      *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  }
  *symbolStatus = 1; // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
  return NotFound;
}

} // extern "C"
