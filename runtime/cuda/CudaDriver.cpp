//===- CudaDriver.cpp - The CUDA driver, loaded at run time ---------------===//

#include "runtime/cuda/CudaDriver.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

namespace modelc::cuda {

using namespace driver;

namespace {

std::string noDriverMessage(int device) {
  return llvm::formatv("no CUDA driver found: cuda:{0} needs an NVIDIA GPU (set "
                       "MODELC_CUDA=emulate to run on the CPU emulator)",
                       device)
      .str();
}

/// Why the process-wide driver could not be opened; the message is rebuilt
/// for each device asked for.
struct DriverLoadFailure {
  CudaErrorKind kind;
  std::string detail;
};

} // namespace

std::string CudaDeviceInfo::arch() const {
  return llvm::formatv("sm_{0}{1}", computeMajor, computeMinor).str();
}

std::string CudaDriver::defaultLibrary() {
  if (std::optional<std::string> forced = llvm::sys::Process::GetEnv("MODELC_CUDA_DRIVER_LIBRARY"))
    if (!forced->empty())
      return *forced;
  return "libcuda.so.1";
}

CudaDriver::~CudaDriver() {
  if (!api.primaryCtxRelease || !api.deviceGet)
    return;
  for (int index = 0; index < static_cast<int>(contexts.size()); ++index) {
    CUdevice device = 0;
    if (contexts[index] && api.deviceGet(&device, index) == CUDA_SUCCESS)
      api.primaryCtxRelease(device);
  }
}

llvm::Expected<std::unique_ptr<CudaDriver>> CudaDriver::open(const std::string &libraryPath,
                                                             int device) {
  auto notFound = [&](const llvm::Twine &detail) {
    return makeCudaError(CudaErrorKind::DriverNotFound, noDriverMessage(device), detail.str());
  };
  std::string reason;
  SharedLibrary library = SharedLibrary::open(libraryPath, &reason);
  if (!library)
    return notFound("cannot open " + libraryPath + ": " + reason);

  std::unique_ptr<CudaDriver> cuda(new CudaDriver());
  DriverFunctions &api = cuda->api;
  api.init = library.function<PFN_cuInit>("cuInit");
  api.getProcAddress = library.function<PFN_cuGetProcAddress_v2>("cuGetProcAddress_v2");
  if (!api.init || !api.getProcAddress)
    return notFound(libraryPath + " is no CUDA 12 or newer driver (it lacks cuInit or "
                                  "cuGetProcAddress_v2)");
  CUresult status = api.init(0);
  if (status == CUDA_ERROR_STUB_LIBRARY)
    return notFound(libraryPath + " is the CUDA toolkit's stub library, not an NVIDIA driver");
  if (status != CUDA_SUCCESS && status != CUDA_ERROR_NO_DEVICE)
    return notFound(llvm::formatv("cuInit failed with CUDA error {0}", status));

  // Versioned entry points: cuGetProcAddress_v2("cuMemAlloc", 12000) is
  // cuMemAlloc_v2, where dlsym("cuMemAlloc") would be the legacy ABI.
  std::string missing;
#define MODELC_RESOLVE(name, type, member)                                                         \
  {                                                                                                \
    void *function = nullptr;                                                                      \
    int symbolStatus = -1;                                                                         \
    if (api.getProcAddress(name, &function, CUDA_VERSION_REQUESTED, CU_GET_PROC_ADDRESS_DEFAULT,   \
                           &symbolStatus) == CUDA_SUCCESS &&                                       \
        symbolStatus == CU_GET_PROC_ADDRESS_SUCCESS && function)                                   \
      api.member = reinterpret_cast<type>(function);                                               \
    else                                                                                           \
      missing += std::string(missing.empty() ? "" : ", ") + name;                                  \
  }
  MODELC_CUDA_DRIVER_FUNCTIONS(MODELC_RESOLVE)
#undef MODELC_RESOLVE
  if (!missing.empty())
    return notFound(libraryPath + " lacks " + missing);

  if (api.driverGetVersion(&cuda->version) != CUDA_SUCCESS)
    cuda->version = 0;
  if (status == CUDA_SUCCESS && api.deviceGetCount(&cuda->devices) != CUDA_SUCCESS)
    cuda->devices = 0;
  cuda->contexts.assign(static_cast<size_t>(std::max(cuda->devices, 0)), nullptr);
  cuda->library = std::move(library);
  cuda->libraryPath = libraryPath;
  return cuda;
}

llvm::Expected<CudaDriver &> CudaDriver::forDevice(int device) {
  static std::once_flag once;
  // Never destroyed: releasing contexts while the process exits races the
  // driver's own teardown.
  static CudaDriver *instance = nullptr;
  static DriverLoadFailure failure;
  std::call_once(once, [] {
    llvm::Expected<std::unique_ptr<CudaDriver>> opened = open(defaultLibrary());
    if (opened) {
      instance = opened->release();
      return;
    }
    llvm::handleAllErrors(opened.takeError(), [&](const CudaError &error) {
      failure = {error.getKind(), error.getLog().str()};
    });
  });
  if (!instance)
    return makeCudaError(failure.kind, noDriverMessage(device), failure.detail);
  if (llvm::Error error = instance->checkDevice(device))
    return error;
  return *instance;
}

llvm::Error CudaDriver::checkDevice(int device) const {
  if (device >= 0 && device < devices)
    return llvm::Error::success();
  std::string message = noSuchDeviceMessage(device, devices, "this machine");
  if (devices == 0)
    message += " (set MODELC_CUDA=emulate to run on the CPU emulator)";
  return makeCudaError(CudaErrorKind::NoSuchDevice, message);
}

std::string CudaDriver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (api.getErrorName)
    api.getErrorName(result, &name);
  if (api.getErrorString)
    api.getErrorString(result, &text);
  std::string described = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    described += std::string(": ") + text;
  return described;
}

llvm::Error CudaDriver::check(CUresult result, llvm::StringRef call, int device) const {
  if (result == CUDA_SUCCESS)
    return llvm::Error::success();
  return makeCudaError(CudaErrorKind::DriverCallFailed,
                       llvm::formatv("cuda:{0}: {1} failed: {2}", device, call, describe(result)));
}

llvm::Error CudaDriver::enter(int device) {
  if (llvm::Error error = checkDevice(device))
    return error;
  CUcontext context;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!contexts[device]) {
      CUdevice handle = 0;
      if (llvm::Error error = check(api.deviceGet(&handle, device), "cuDeviceGet", device))
        return error;
      if (llvm::Error error = check(api.primaryCtxRetain(&contexts[device], handle),
                                    "cuDevicePrimaryCtxRetain", device))
        return error;
    }
    context = contexts[device];
  }
  return check(api.ctxSetCurrent(context), "cuCtxSetCurrent", device);
}

llvm::Expected<CudaDeviceInfo> CudaDriver::deviceInfo(int device) {
  if (llvm::Error error = checkDevice(device))
    return error;
  CUdevice handle = 0;
  if (llvm::Error error = check(api.deviceGet(&handle, device), "cuDeviceGet", device))
    return error;
  CudaDeviceInfo info;
  info.index = device;
  char name[256] = {0};
  if (llvm::Error error =
          check(api.deviceGetName(name, sizeof(name) - 1, handle), "cuDeviceGetName", device))
    return error;
  info.name = name;
  struct {
    CUdevice_attribute attribute;
    int *field;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.computeMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.computeMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessors},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.maxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.maxSharedMemoryPerBlock},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &info.warpSize},
  };
  for (auto &[attribute, field] : attributes)
    if (llvm::Error error =
            check(api.deviceGetAttribute(field, attribute, handle), "cuDeviceGetAttribute", device))
      return error;
  if (llvm::Error error =
          check(api.deviceTotalMem(&info.totalMemory, handle), "cuDeviceTotalMem", device))
    return error;
  return info;
}

llvm::Expected<DevicePointer> CudaDriver::allocate(int device, size_t bytes) {
  if (llvm::Error error = enter(device))
    return error;
  DevicePointer pointer = 0;
  CUresult result = api.memAlloc(&pointer, bytes);
  if (result != CUDA_SUCCESS)
    return makeCudaError(
        CudaErrorKind::OutOfMemory,
        llvm::formatv("cuda:{0}: cannot allocate {1} bytes: {2}", device, bytes, describe(result)));
  return pointer;
}

llvm::Error CudaDriver::free(int device, DevicePointer pointer) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memFree(pointer), "cuMemFree", device);
}

llvm::Error CudaDriver::copyHostToDevice(int device, DevicePointer destination, const void *source,
                                         size_t bytes) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memcpyHtoD(destination, source, bytes), "cuMemcpyHtoD", device);
}

llvm::Error CudaDriver::copyDeviceToHost(int device, void *destination, DevicePointer source,
                                         size_t bytes) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memcpyDtoH(destination, source, bytes), "cuMemcpyDtoH", device);
}

llvm::Error CudaDriver::copyDeviceToDevice(int device, DevicePointer destination,
                                           DevicePointer source, size_t bytes) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memcpyDtoD(destination, source, bytes), "cuMemcpyDtoD", device);
}

llvm::Error CudaDriver::copyPeer(int destinationDevice, DevicePointer destination, int sourceDevice,
                                 DevicePointer source, size_t bytes) {
  if (llvm::Error error = enter(sourceDevice))
    return error;
  if (llvm::Error error = enter(destinationDevice))
    return error;
  CUcontext destinationContext, sourceContext;
  {
    std::lock_guard<std::mutex> lock(mutex);
    destinationContext = contexts[destinationDevice];
    sourceContext = contexts[sourceDevice];
  }
  // cuMemcpyPeer works with or without peer access (it stages through the
  // host when the GPUs cannot see each other).
  return check(api.memcpyPeer(destination, destinationContext, source, sourceContext, bytes),
               "cuMemcpyPeer", destinationDevice);
}

llvm::Expected<CUmodule> CudaDriver::loadModule(int device, llvm::StringRef image) {
  if (llvm::Error error = enter(device))
    return error;
  // A CUBIN is an ELF image; PTX is text that the driver reads up to a NUL.
  std::string text;
  const void *data = image.data();
  if (!image.starts_with("\x7f"
                         "ELF")) {
    text = image.str();
    data = text.c_str();
  }
  CUmodule module = nullptr;
  if (llvm::Error error = check(api.moduleLoadData(&module, data), "cuModuleLoadData", device))
    return error;
  return module;
}

llvm::Error CudaDriver::unloadModule(int device, CUmodule module) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.moduleUnload(module), "cuModuleUnload", device);
}

llvm::Expected<CUfunction> CudaDriver::getFunction(int device, CUmodule module,
                                                   llvm::StringRef name) {
  if (llvm::Error error = enter(device))
    return error;
  CUfunction function = nullptr;
  std::string nulTerminated = name.str();
  CUresult result = api.moduleGetFunction(&function, module, nulTerminated.c_str());
  if (result != CUDA_SUCCESS)
    return makeCudaError(CudaErrorKind::KernelNotFound,
                         llvm::formatv("cuda:{0}: no kernel named '{1}' in the module: {2}", device,
                                       name, describe(result)));
  return function;
}

llvm::Expected<CUstream> CudaDriver::createStream(int device) {
  if (llvm::Error error = enter(device))
    return error;
  CUstream stream = nullptr;
  if (llvm::Error error =
          check(api.streamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate", device))
    return error;
  return stream;
}

llvm::Error CudaDriver::destroyStream(int device, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.streamDestroy(stream), "cuStreamDestroy", device);
}

llvm::Error CudaDriver::launch(int device, CUfunction function, LaunchDims grid, LaunchDims block,
                               unsigned sharedMemoryBytes, CUstream stream, void **args) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.launchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                sharedMemoryBytes, stream, args, nullptr),
               "cuLaunchKernel", device);
}

llvm::Error CudaDriver::synchronizeStream(int device, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.streamSynchronize(stream), "cuStreamSynchronize", device);
}

llvm::Error CudaDriver::synchronize(int device) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.ctxSynchronize(), "cuCtxSynchronize", device);
}

llvm::Error CudaDriver::copyHostToDeviceAsync(int device, DevicePointer destination,
                                              const void *source, size_t bytes, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memcpyHtoDAsync(destination, source, bytes, stream), "cuMemcpyHtoDAsync",
               device);
}

llvm::Error CudaDriver::copyDeviceToHostAsync(int device, void *destination, DevicePointer source,
                                              size_t bytes, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memcpyDtoHAsync(destination, source, bytes, stream), "cuMemcpyDtoHAsync",
               device);
}

llvm::Error CudaDriver::copyDeviceToDeviceAsync(int device, DevicePointer destination,
                                                DevicePointer source, size_t bytes,
                                                CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.memcpyDtoDAsync(destination, source, bytes, stream), "cuMemcpyDtoDAsync",
               device);
}

llvm::Error CudaDriver::beginCapture(int device, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
               "cuStreamBeginCapture", device);
}

llvm::Expected<CUgraph> CudaDriver::endCapture(int device, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  CUgraph graph = nullptr;
  if (llvm::Error error = check(api.streamEndCapture(stream, &graph), "cuStreamEndCapture", device))
    return error;
  return graph;
}

llvm::Expected<CUgraphExec> CudaDriver::instantiateGraph(int device, CUgraph graph) {
  if (llvm::Error error = enter(device))
    return error;
  CUgraphExec exec = nullptr;
  if (llvm::Error error =
          check(api.graphInstantiate(&exec, graph, 0), "cuGraphInstantiateWithFlags", device))
    return error;
  return exec;
}

llvm::Error CudaDriver::launchGraph(int device, CUgraphExec graph, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.graphLaunch(graph, stream), "cuGraphLaunch", device);
}

llvm::Error CudaDriver::destroyGraphExec(int device, CUgraphExec graph) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.graphExecDestroy(graph), "cuGraphExecDestroy", device);
}

llvm::Error CudaDriver::destroyGraph(int device, CUgraph graph) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.graphDestroy(graph), "cuGraphDestroy", device);
}

llvm::Expected<CUevent> CudaDriver::createEvent(int device) {
  if (llvm::Error error = enter(device))
    return error;
  CUevent event = nullptr;
  if (llvm::Error error = check(api.eventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate", device))
    return error;
  return event;
}

llvm::Error CudaDriver::recordEvent(int device, CUevent event, CUstream stream) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.eventRecord(event, stream), "cuEventRecord", device);
}

llvm::Error CudaDriver::synchronizeEvent(int device, CUevent event) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.eventSynchronize(event), "cuEventSynchronize", device);
}

llvm::Expected<double> CudaDriver::elapsedMilliseconds(int device, CUevent start, CUevent end) {
  if (llvm::Error error = enter(device))
    return error;
  float milliseconds = 0;
  if (llvm::Error error =
          check(api.eventElapsedTime(&milliseconds, start, end), "cuEventElapsedTime", device))
    return error;
  return double(milliseconds);
}

llvm::Error CudaDriver::destroyEvent(int device, CUevent event) {
  if (llvm::Error error = enter(device))
    return error;
  return check(api.eventDestroy(event), "cuEventDestroy", device);
}

} // namespace modelc::cuda
