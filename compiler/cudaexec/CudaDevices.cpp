//===- CudaDevices.cpp - Which backend runs code placed on cuda:N ---------===//

#include "cudaexec/CudaDevices.h"

#include "runtime/cuda/Nvrtc.h"

#include "llvm/Support/Process.h"

namespace modelc::cudaexec {

using cuda::CudaErrorKind;

CudaMode cudaModeFromEnvironment() {
  return cuda::Emulator::requestedByEnvironment() ? CudaMode::Emulate : CudaMode::Driver;
}

llvm::Expected<CudaMode> parseCudaMode(llvm::StringRef text) {
  if (text == "driver")
    return CudaMode::Driver;
  if (text == "emulate")
    return CudaMode::Emulate;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown CUDA mode '" + text + "' (expected driver or emulate)");
}

llvm::StringRef cudaModeName(CudaMode mode) {
  return mode == CudaMode::Emulate ? "emulate" : "driver";
}

namespace {

std::string noDriverMessage(int device) {
  return "no CUDA driver found: cuda:" + std::to_string(device) +
         " needs an NVIDIA GPU (run with --cuda=emulate or MODELC_CUDA=emulate to use the CPU "
         "emulator)";
}

/// The runtime's own no-driver message points at MODELC_CUDA only; modelc
/// also has the --cuda flag, so the message names both.
llvm::Error rewordDriverError(llvm::Error error, int device) {
  return llvm::handleErrors(std::move(error), [&](const cuda::CudaError &cudaError) -> llvm::Error {
    if (cudaError.getKind() != CudaErrorKind::DriverNotFound)
      return cuda::makeCudaError(cudaError.getKind(), cudaError.getMessage(), cudaError.getLog());
    return cuda::makeCudaError(CudaErrorKind::DriverNotFound, noDriverMessage(device),
                               cudaError.getLog());
  });
}

cuda::CudaBackend &emulatorBackend() {
  static std::unique_ptr<cuda::CudaBackend> backend =
      cuda::makeEmulatorBackend(cuda::Emulator::global());
  return *backend;
}

} // namespace

llvm::Expected<cuda::CudaBackend &> backendFor(int device, CudaMode mode, bool compilesKernels) {
  if (mode == CudaMode::Emulate) {
    cuda::CudaBackend &backend = emulatorBackend();
    if (llvm::Error error = backend.checkDevice(device))
      return error;
    return backend;
  }
  llvm::Expected<cuda::CudaDriver &> driver = cuda::CudaDriver::forDevice(device);
  if (!driver)
    return rewordDriverError(driver.takeError(), device);
  // Kernels for a GPU are compiled by NVRTC: without it nothing can run, so
  // say so before anything is allocated.
  if (compilesKernels)
    if (llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get(); !nvrtc)
      return nvrtc.takeError();
  // Never destroyed, like the driver it wraps.
  static cuda::CudaBackend *backend =
      cuda::makeDriverBackend(*driver, cuda::KernelCache::global()).release();
  return *backend;
}

BackendProvider backendProvider(CudaMode mode, bool compilesKernels) {
  return [mode, compilesKernels](int device) { return backendFor(device, mode, compilesKernels); };
}

bool isDeviceUnavailable(CudaErrorKind kind) {
  switch (kind) {
  case CudaErrorKind::DriverNotFound:
  case CudaErrorKind::NoSuchDevice:
  case CudaErrorKind::NvrtcNotFound:
  case CudaErrorKind::HostCompilerMissing:
    return true;
  default:
    return false;
  }
}

} // namespace modelc::cudaexec
