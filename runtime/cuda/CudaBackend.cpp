//===- CudaBackend.cpp - One interface over the driver and the emulator ---===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/cuda/CudaError.h"
#include "runtime/cuda/Nvrtc.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <mutex>

namespace modelc::cuda {

CudaBackend::~CudaBackend() = default;
CudaGraph::~CudaGraph() = default;

llvm::Error CudaBackend::beginCapture(int) {
  return makeCudaError(CudaErrorKind::DriverCallFailed,
                       "the " + name().str() + " cannot capture CUDA graphs");
}
llvm::Expected<std::unique_ptr<CudaGraph>> CudaBackend::endCapture(int) {
  return makeCudaError(CudaErrorKind::DriverCallFailed,
                       "the " + name().str() + " cannot capture CUDA graphs");
}
llvm::Error CudaBackend::launchGraph(int, const CudaGraph &) {
  return makeCudaError(CudaErrorKind::DriverCallFailed,
                       "the " + name().str() + " cannot launch CUDA graphs");
}

llvm::Expected<LtDevice> CudaBackend::cublasLt(int) {
  return makeCudaError(CudaErrorKind::LibraryNotFound,
                       "cuBLASLt is not used: the " + name().str() + " has no cuBLASLt");
}
llvm::Error CudaBackend::cublasLtMatmulAsync(int device, const LtMatmul &, const LtAlgorithm &,
                                             const LtOperands &) {
  llvm::Expected<LtDevice> lt = cublasLt(device);
  return lt ? makeCudaError(CudaErrorKind::LibraryCallFailed,
                            "the " + name().str() + " cannot run cuBLASLt")
            : lt.takeError();
}
llvm::Expected<double> CudaBackend::timeOnStream(int device,
                                                 llvm::function_ref<llvm::Error()> enqueue) {
  if (llvm::Error error = synchronize(device))
    return error;
  auto start = std::chrono::steady_clock::now();
  if (llvm::Error error = enqueue())
    return error;
  if (llvm::Error error = synchronize(device))
    return error;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

llvm::StringRef prebuiltImageName(PrebuiltImage image) {
  switch (image) {
  case PrebuiltImage::Cubin:
    return "cubin";
  case PrebuiltImage::Ptx:
    return "ptx";
  case PrebuiltImage::Source:
    return "source";
  }
  return "?";
}

namespace {

void *hostPointer(DeviceAddress address) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(address));
}

class EmulatorBackend final : public CudaBackend {
public:
  explicit EmulatorBackend(Emulator &emulator) : emulator(emulator) {}

  llvm::StringRef name() const override { return "emulator"; }
  bool separateAllocations() const override { return true; }
  int deviceCount() const override { return emulator.deviceCount(); }
  llvm::Error checkDevice(int device) const override { return emulator.checkDevice(device); }

  llvm::Expected<DeviceAddress> allocate(int device, size_t bytes) override {
    llvm::Expected<void *> pointer = emulator.allocate(device, bytes);
    if (!pointer)
      return pointer.takeError();
    return reinterpret_cast<uintptr_t>(*pointer);
  }
  llvm::Error free(int device, DeviceAddress address) override {
    return emulator.free(device, hostPointer(address));
  }
  llvm::Error copyHostToDevice(int device, DeviceAddress destination, const void *source,
                               size_t bytes) override {
    return emulator.copyHostToDevice(device, hostPointer(destination), source, bytes);
  }
  llvm::Error copyDeviceToHost(int device, void *destination, DeviceAddress source,
                               size_t bytes) override {
    return emulator.copyDeviceToHost(device, destination, hostPointer(source), bytes);
  }
  llvm::Error copyDeviceToDevice(int device, DeviceAddress destination, DeviceAddress source,
                                 size_t bytes) override {
    return emulator.copyDeviceToDevice(device, hostPointer(destination), hostPointer(source),
                                       bytes);
  }
  llvm::Error copyPeer(int destinationDevice, DeviceAddress destination, int sourceDevice,
                       DeviceAddress source, size_t bytes) override {
    return emulator.copyPeer(destinationDevice, hostPointer(destination), sourceDevice,
                             hostPointer(source), bytes);
  }

  llvm::Expected<CudaKernel> loadKernel(int device, llvm::StringRef source,
                                        llvm::StringRef sourceName,
                                        llvm::StringRef kernel) override {
    if (llvm::Error error = emulator.checkDevice(device))
      return error;
    llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
        emulator.loadModule(source, sourceName);
    if (!module)
      return module.takeError();
    llvm::Expected<EmulatedKernel> found = (*module)->kernel(kernel);
    if (!found)
      return found.takeError();
    return CudaKernel{kernel.str(), device, std::make_shared<EmulatedKernel>(std::move(*found))};
  }

  llvm::Expected<CudaKernel> loadPrebuiltKernel(int device, const PrebuiltModule &module,
                                                llvm::StringRef kernel,
                                                PrebuiltImage *used) override {
    if (used)
      *used = PrebuiltImage::Source;
    return loadKernel(device, module.source, module.name, kernel);
  }

  llvm::Error launch(const CudaKernel &kernel, Dim3 grid, Dim3 block, void **args,
                     size_t dynamicSharedBytes) override {
    auto *emulated = static_cast<const EmulatedKernel *>(kernel.state.get());
    if (!emulated)
      return makeCudaError(CudaErrorKind::InvalidLaunch, "launch of an empty kernel handle");
    return emulator.launch(kernel.device, *emulated, grid, block, args, dynamicSharedBytes);
  }

private:
  Emulator &emulator;
};

/// A loaded module and one of its functions; the module stays loaded for as
/// long as any CudaKernel refers to it.
struct DriverKernel {
  std::shared_ptr<driver::CUmod_st> module;
  driver::CUfunction function = nullptr;
};

class DriverBackend final : public CudaBackend {
public:
  DriverBackend(CudaDriver &driver, KernelCache &cache, CublasLtProvider provider)
      : driver(driver), cache(cache), ltProvider(std::move(provider)) {
    if (!ltProvider)
      ltProvider = []() -> llvm::Expected<const CublasLt &> {
        llvm::Expected<CublasLt &> library = CublasLt::get();
        if (!library)
          return library.takeError();
        return *library;
      };
  }

  llvm::StringRef name() const override { return "driver"; }
  int deviceCount() const override { return driver.deviceCount(); }
  llvm::Error checkDevice(int device) const override { return driver.checkDevice(device); }

  llvm::Expected<DeviceAddress> allocate(int device, size_t bytes) override {
    return driver.allocate(device, bytes);
  }
  llvm::Error free(int device, DeviceAddress address) override {
    return driver.free(device, address);
  }
  // The plain copies go on the device's stream too and wait for it: a result
  // that a run left on the GPU is read after the run's work, without a wait
  // at the end of every run.
  llvm::Error copyHostToDevice(int device, DeviceAddress destination, const void *source,
                               size_t bytes) override {
    if (llvm::Error error = copyHostToDeviceAsync(device, destination, source, bytes))
      return error;
    return synchronize(device);
  }
  llvm::Error copyDeviceToHost(int device, void *destination, DeviceAddress source,
                               size_t bytes) override {
    if (llvm::Error error = copyDeviceToHostAsync(device, destination, source, bytes))
      return error;
    return synchronize(device);
  }
  llvm::Error copyDeviceToDevice(int device, DeviceAddress destination, DeviceAddress source,
                                 size_t bytes) override {
    if (llvm::Error error = copyDeviceToDeviceAsync(device, destination, source, bytes))
      return error;
    return synchronize(device);
  }
  llvm::Error copyPeer(int destinationDevice, DeviceAddress destination, int sourceDevice,
                       DeviceAddress source, size_t bytes) override {
    // The peer copy is not on either stream: it follows their work.
    for (int device : {sourceDevice, destinationDevice})
      if (llvm::Error error = synchronize(device))
        return error;
    return driver.copyPeer(destinationDevice, destination, sourceDevice, source, bytes);
  }

  llvm::Expected<CudaKernel> loadKernel(int device, llvm::StringRef source,
                                        llvm::StringRef sourceName,
                                        llvm::StringRef kernel) override {
    llvm::Expected<std::shared_ptr<driver::CUmod_st>> module =
        moduleFor(device, source, sourceName);
    if (!module)
      return module.takeError();
    llvm::Expected<driver::CUfunction> function = driver.getFunction(device, module->get(), kernel);
    if (!function)
      return function.takeError();
    return CudaKernel{kernel.str(), device,
                      std::make_shared<DriverKernel>(DriverKernel{*module, *function})};
  }

  llvm::Expected<CudaKernel> loadPrebuiltKernel(int device, const PrebuiltModule &prebuilt,
                                                llvm::StringRef kernel,
                                                PrebuiltImage *used) override {
    llvm::Expected<CudaDeviceInfo> info = driver.deviceInfo(device);
    if (!info)
      return info.takeError();
    // The CUBIN runs only on the architecture it was built for; the PTX is
    // compiled by the driver for whatever GPU this is.
    bool cubin = !prebuilt.cubin.empty() && prebuilt.cubinArch == info->arch();
    if (!cubin && prebuilt.ptx.empty())
      return makeCudaError(CudaErrorKind::DriverCallFailed,
                           llvm::formatv("{0}: holds a CUBIN for {1} only, but cuda:{2} is {3}",
                                         prebuilt.name, prebuilt.cubinArch, device, info->arch()));
    llvm::StringRef image = cubin ? prebuilt.cubin : prebuilt.ptx;
    llvm::Expected<std::shared_ptr<driver::CUmod_st>> module = loadImage(device, image);
    if (!module)
      return llvm::handleErrors(module.takeError(), [&](const CudaError &failure) {
        return makeCudaError(failure.getKind(),
                             llvm::formatv("{0}: cannot load its {1} on cuda:{2} ({3}): {4}",
                                           prebuilt.name,
                                           cubin ? "CUBIN (" + prebuilt.cubinArch + ")"
                                                 : "PTX (" + prebuilt.ptxArch + ")",
                                           device, info->arch(), failure.getMessage()),
                             failure.getLog());
      });
    llvm::Expected<driver::CUfunction> function = driver.getFunction(device, module->get(), kernel);
    if (!function)
      return function.takeError();
    if (used)
      *used = cubin ? PrebuiltImage::Cubin : PrebuiltImage::Ptx;
    return CudaKernel{kernel.str(), device,
                      std::make_shared<DriverKernel>(DriverKernel{*module, *function})};
  }

  llvm::Error launch(const CudaKernel &kernel, Dim3 grid, Dim3 block, void **args,
                     size_t dynamicSharedBytes) override {
    auto *loaded = static_cast<const DriverKernel *>(kernel.state.get());
    if (!loaded)
      return makeCudaError(CudaErrorKind::InvalidLaunch, "launch of an empty kernel handle");
    if (llvm::Error error = launchAsync(kernel, grid, block, args, dynamicSharedBytes))
      return error;
    return synchronize(kernel.device);
  }

  llvm::Error launchAsync(const CudaKernel &kernel, Dim3 grid, Dim3 block, void **args,
                          size_t dynamicSharedBytes) override {
    auto *loaded = static_cast<const DriverKernel *>(kernel.state.get());
    if (!loaded)
      return makeCudaError(CudaErrorKind::InvalidLaunch, "launch of an empty kernel handle");
    llvm::Expected<driver::CUstream> stream = streamOf(kernel.device);
    if (!stream)
      return stream.takeError();
    return driver.launch(kernel.device, loaded->function, {grid.x, grid.y, grid.z},
                         {block.x, block.y, block.z}, static_cast<unsigned>(dynamicSharedBytes),
                         *stream, args);
  }
  llvm::Error copyHostToDeviceAsync(int device, DeviceAddress destination, const void *source,
                                    size_t bytes) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    return driver.copyHostToDeviceAsync(device, destination, source, bytes, *stream);
  }
  llvm::Error copyDeviceToHostAsync(int device, void *destination, DeviceAddress source,
                                    size_t bytes) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    return driver.copyDeviceToHostAsync(device, destination, source, bytes, *stream);
  }
  llvm::Error copyDeviceToDeviceAsync(int device, DeviceAddress destination, DeviceAddress source,
                                      size_t bytes) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    return driver.copyDeviceToDeviceAsync(device, destination, source, bytes, *stream);
  }
  llvm::Error synchronize(int device) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    return driver.synchronizeStream(device, *stream);
  }

  bool supportsGraphs() const override { return true; }
  llvm::Error beginCapture(int device) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    return driver.beginCapture(device, *stream);
  }
  llvm::Expected<std::unique_ptr<CudaGraph>> endCapture(int device) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    llvm::Expected<driver::CUgraph> graph = driver.endCapture(device, *stream);
    if (!graph)
      return graph.takeError();
    auto captured = std::make_unique<DriverGraph>(driver, device, *graph);
    llvm::Expected<driver::CUgraphExec> exec = driver.instantiateGraph(device, *graph);
    if (!exec)
      return exec.takeError();
    captured->exec = *exec;
    return std::unique_ptr<CudaGraph>(std::move(captured));
  }
  llvm::Error launchGraph(int device, const CudaGraph &graph) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    return driver.launchGraph(device, static_cast<const DriverGraph &>(graph).exec, *stream);
  }

  llvm::Expected<LtDevice> cublasLt(int device) override {
    llvm::Expected<const CublasLt &> library = ltProvider();
    if (!library)
      return library.takeError();
    llvm::Expected<CudaDeviceInfo> info = driver.deviceInfo(device);
    if (!info)
      return info.takeError();
    std::string identity =
        llvm::formatv("{0} ({1}), driver {2}, cuBLASLt {3}", info->name, info->arch(),
                      driver.driverVersion(), library->versionString())
            .str();
    std::lock_guard<std::mutex> lock(mutex);
    if (size_t(device) < ltHandles.size() && ltHandles[device])
      return LtDevice{&*library, ltHandles[device], identity};
    // The handle belongs to the context current when it is made.
    if (llvm::Error error = driver.makeCurrent(device))
      return error;
    llvm::Expected<blaslt::cublasLtHandle_t> handle = library->createHandle();
    if (!handle)
      return llvm::handleErrors(handle.takeError(), [&](const CudaError &failure) {
        return makeCudaError(CudaErrorKind::LibraryNotFound,
                             llvm::formatv("cuBLASLt is not used on cuda:{0}: {1} ({2})", device,
                                           failure.getMessage(), library->path()));
      });
    if (size_t(device) >= ltHandles.size())
      ltHandles.resize(device + 1, nullptr);
    ltHandles[device] = *handle;
    return LtDevice{&*library, *handle, identity};
  }

  llvm::Error cublasLtMatmulAsync(int device, const LtMatmul &matmul, const LtAlgorithm &algorithm,
                                  const LtOperands &operands) override {
    llvm::Expected<LtDevice> lt = cublasLt(device);
    if (!lt)
      return lt.takeError();
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    if (llvm::Error error = driver.makeCurrent(device))
      return error;
    return lt->library->run(lt->handle, matmul, algorithm, operands, *stream);
  }

  llvm::Expected<double> timeOnStream(int device,
                                      llvm::function_ref<llvm::Error()> enqueue) override {
    llvm::Expected<driver::CUstream> stream = streamOf(device);
    if (!stream)
      return stream.takeError();
    llvm::Expected<driver::CUevent> start = driver.createEvent(device);
    if (!start)
      return start.takeError();
    llvm::Expected<driver::CUevent> end = driver.createEvent(device);
    if (!end) {
      llvm::consumeError(driver.destroyEvent(device, *start));
      return end.takeError();
    }
    auto timed = [&]() -> llvm::Expected<double> {
      if (llvm::Error error = driver.recordEvent(device, *start, *stream))
        return error;
      if (llvm::Error error = enqueue())
        return error;
      if (llvm::Error error = driver.recordEvent(device, *end, *stream))
        return error;
      if (llvm::Error error = driver.synchronizeEvent(device, *end))
        return error;
      return driver.elapsedMilliseconds(device, *start, *end);
    };
    llvm::Expected<double> milliseconds = timed();
    llvm::consumeError(driver.destroyEvent(device, *start));
    llvm::consumeError(driver.destroyEvent(device, *end));
    return milliseconds;
  }

private:
  /// A graph and its executable instance, destroyed together.
  struct DriverGraph final : CudaGraph {
    DriverGraph(CudaDriver &driver, int device, driver::CUgraph graph)
        : driver(driver), device(device), graph(graph) {}
    ~DriverGraph() override {
      if (exec)
        llvm::consumeError(driver.destroyGraphExec(device, exec));
      llvm::consumeError(driver.destroyGraph(device, graph));
    }
    CudaDriver &driver;
    int device;
    driver::CUgraph graph;
    driver::CUgraphExec exec = nullptr;
  };

  /// The one stream of `device`, created on first use and kept (like the
  /// driver it lives in, for the whole process).
  llvm::Expected<driver::CUstream> streamOf(int device) {
    std::lock_guard<std::mutex> lock(mutex);
    if (size_t(device) < streams.size() && streams[device])
      return streams[device];
    llvm::Expected<driver::CUstream> stream = driver.createStream(device);
    if (!stream)
      return stream.takeError();
    if (size_t(device) >= streams.size())
      streams.resize(device + 1, nullptr);
    streams[device] = *stream;
    return *stream;
  }

  /// The module for (device, source), compiled to a CUBIN for the device's
  /// own architecture and loaded once.
  llvm::Expected<std::shared_ptr<driver::CUmod_st>> moduleFor(int device, llvm::StringRef source,
                                                              llvm::StringRef sourceName) {
    llvm::Expected<CudaDeviceInfo> info = driver.deviceInfo(device);
    if (!info)
      return info.takeError();
    CacheKey key;
    key.add(int64_t(device)).add(source);
    std::lock_guard<std::mutex> lock(mutex);
    std::string hex = key.hex();
    if (auto found = modules.find(hex); found != modules.end())
      if (std::shared_ptr<driver::CUmod_st> module = found->second.lock())
        return module;

    llvm::Expected<Nvrtc &> nvrtc = Nvrtc::get();
    if (!nvrtc)
      return nvrtc.takeError();
    std::string arch = info->arch();
    NvrtcRequest request;
    request.source = source;
    request.name = sourceName;
    request.arch = arch;
    request.output = NvrtcOutput::CUBIN;
    llvm::Expected<KernelCache::Payload> image = nvrtc->compileCached(request, cache);
    if (!image)
      return image.takeError();
    llvm::Expected<std::shared_ptr<driver::CUmod_st>> module = loadModule(device, **image);
    if (module)
      modules[hex] = *module;
    return module;
  }

  /// A CUBIN or PTX image loaded on `device` once (by its contents).
  llvm::Expected<std::shared_ptr<driver::CUmod_st>> loadImage(int device, llvm::StringRef image) {
    CacheKey key;
    key.add("image").add(int64_t(device)).add(image);
    std::lock_guard<std::mutex> lock(mutex);
    std::string hex = key.hex();
    if (auto found = modules.find(hex); found != modules.end())
      if (std::shared_ptr<driver::CUmod_st> module = found->second.lock())
        return module;
    llvm::Expected<std::shared_ptr<driver::CUmod_st>> module = loadModule(device, image);
    if (module)
      modules[hex] = *module;
    return module;
  }

  /// Loads `image`; the module is unloaded when its last kernel goes.
  llvm::Expected<std::shared_ptr<driver::CUmod_st>> loadModule(int device, llvm::StringRef image) {
    llvm::Expected<driver::CUmodule> loaded = driver.loadModule(device, image);
    if (!loaded)
      return loaded.takeError();
    CudaDriver *owner = &driver;
    return std::shared_ptr<driver::CUmod_st>(*loaded, [owner, device](driver::CUmodule module) {
      llvm::consumeError(owner->unloadModule(device, module));
    });
  }

  CudaDriver &driver;
  KernelCache &cache;
  CublasLtProvider ltProvider;
  std::mutex mutex;
  llvm::StringMap<std::weak_ptr<driver::CUmod_st>> modules;
  std::vector<driver::CUstream> streams;
  /// cuBLASLt handles by device, made on first use and kept like the streams.
  std::vector<blaslt::cublasLtHandle_t> ltHandles;
};

} // namespace

std::unique_ptr<CudaBackend> makeEmulatorBackend(Emulator &emulator) {
  return std::make_unique<EmulatorBackend>(emulator);
}

std::unique_ptr<CudaBackend> makeDriverBackend(CudaDriver &driver, KernelCache &cache,
                                               CublasLtProvider cublasLt) {
  return std::make_unique<DriverBackend>(driver, cache, std::move(cublasLt));
}

llvm::Expected<CudaBackend &> CudaBackend::forDevice(int device) {
  if (Emulator::requestedByEnvironment()) {
    static std::unique_ptr<CudaBackend> emulated = makeEmulatorBackend(Emulator::global());
    if (llvm::Error error = emulated->checkDevice(device))
      return error;
    return *emulated;
  }
  llvm::Expected<CudaDriver &> driver = CudaDriver::forDevice(device);
  if (!driver)
    return driver.takeError();
  // Never destroyed, like the driver it wraps.
  static CudaBackend *real = makeDriverBackend(*driver, KernelCache::global()).release();
  return *real;
}

} // namespace modelc::cuda
