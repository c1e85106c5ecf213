//===- CudaDevices.h - Which backend runs code placed on cuda:N -*- C++ -*-===//
//
// `cuda:N` runs on a real GPU through the driver (the default) or on the CPU
// emulator (`modelc run --cuda=emulate`, or MODELC_CUDA=emulate). This picks
// the backend for a device and words what is missing for the user: no driver,
// no such GPU, no NVRTC. Those errors keep their CudaError kind, so the
// driver can tell "this machine cannot run it" (exit 2) from a failed run.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAEXEC_CUDADEVICES_H
#define MODELC_CUDAEXEC_CUDADEVICES_H

#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudaError.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>

namespace modelc::cudaexec {

enum class CudaMode {
  Driver,  ///< real GPUs through libcuda.so.1, kernels compiled by NVRTC
  Emulate, ///< emulated GPUs on the CPU, kernels built by the host compiler
};

/// Emulate when MODELC_CUDA=emulate, else Driver.
CudaMode cudaModeFromEnvironment();
/// "driver" or "emulate"; anything else is an error listing both.
llvm::Expected<CudaMode> parseCudaMode(llvm::StringRef text);
llvm::StringRef cudaModeName(CudaMode mode);

/// The process-wide backend that runs code on cuda:`device` in `mode`.
/// Fails with DriverNotFound ("no CUDA driver found: cuda:0 needs an NVIDIA
/// GPU (run with --cuda=emulate or MODELC_CUDA=emulate to use the CPU
/// emulator)"), NoSuchDevice, or, on the driver path when kernels are to be
/// compiled from source (`compilesKernels`), NvrtcNotFound. Kernels from an
/// artifact need no NVRTC.
llvm::Expected<cuda::CudaBackend &> backendFor(int device, CudaMode mode,
                                               bool compilesKernels = true);

/// Where a plan gets the backend of each device; tests substitute their own.
using BackendProvider = std::function<llvm::Expected<cuda::CudaBackend &>(int device)>;
BackendProvider backendProvider(CudaMode mode, bool compilesKernels = true);

/// True for the kinds that mean this machine cannot run the model at all
/// (no driver, no such GPU, no NVRTC, no host compiler for the emulator).
bool isDeviceUnavailable(cuda::CudaErrorKind kind);

} // namespace modelc::cudaexec

#endif // MODELC_CUDAEXEC_CUDADEVICES_H
