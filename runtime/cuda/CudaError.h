//===- CudaError.h - Errors of the CUDA runtime layer ----------*- C++ -*-===//
//
// Every failure of NVRTC, the driver, cuBLASLt, the kernel cache and the
// emulator is a CudaError: a kind that callers can branch on (NVRTC missing
// is not the same as a kernel that does not compile), a one-line message
// written for the user, and an optional multi-line log (the NVRTC or
// host-compiler output).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_CUDAERROR_H
#define MODELC_RUNTIME_CUDA_CUDAERROR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace modelc::cuda {

enum class CudaErrorKind {
  NvrtcNotFound,       ///< libnvrtc could not be loaded.
  NvrtcCompileFailed,  ///< NVRTC rejected the source; the log says why.
  DriverNotFound,      ///< No usable libcuda.so.1 (or only the toolkit's stub).
  DriverCallFailed,    ///< A driver call returned an error code.
  NoSuchDevice,        ///< cuda:N with N beyond the GPUs present.
  HostCompilerMissing, ///< The emulator found no C++ compiler.
  HostCompileFailed,   ///< The host compiler rejected an emulated kernel.
  KernelNotFound,      ///< No kernel of that name in the module.
  InvalidLaunch,       ///< Bad grid/block dimensions or arguments.
  InvalidCopy,         ///< A copy outside an allocation or across devices.
  InvalidFree,         ///< Freeing what is not the start of a live allocation.
  OutOfBounds,         ///< An emulated kernel touched memory outside its allocation.
  CrossDeviceAccess,   ///< An emulated kernel touched another device's memory.
  HostMemoryAccess,    ///< An emulated kernel touched host memory, as no GPU can.
  KernelFault,         ///< Other emulated-kernel faults: null pointer, stack
                       ///< overflow, integer division by zero, wild address.
  Deadlock,            ///< Emulated threads wait on a barrier that never releases.
  Timeout,             ///< An emulated launch ran past its time limit.
  OutOfMemory,         ///< An allocation failed.
  CacheFailure,        ///< The kernel cache could not be used.
  LibraryNotFound,     ///< No usable cuBLASLt (missing, too old, or off).
  LibraryCallFailed,   ///< A cuBLASLt call returned an error status.
};

/// The error every CUDA-layer API returns inside llvm::Error.
class CudaError : public llvm::ErrorInfo<CudaError> {
public:
  static char ID;

  CudaError(CudaErrorKind kind, std::string message, std::string log = {})
      : kind(kind), message(std::move(message)), compilerLog(std::move(log)) {}

  CudaErrorKind getKind() const { return kind; }
  llvm::StringRef getMessage() const { return message; }
  /// Compiler output (NVRTC or host compiler); empty where there is none.
  llvm::StringRef getLog() const { return compilerLog; }

  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  CudaErrorKind kind;
  std::string message;
  std::string compilerLog;
};

/// Builds an llvm::Error holding a CudaError.
llvm::Error makeCudaError(CudaErrorKind kind, const llvm::Twine &message, llvm::StringRef log = {});

/// Consumes `error` and returns its kind: std::nullopt for success or for an
/// error of another type. The full text (message and log) goes to `text`.
std::optional<CudaErrorKind> consumeCudaErrorKind(llvm::Error error, std::string *text = nullptr);

/// "cuda:3 does not exist: this machine has 1 GPU" (count-aware plural).
std::string noSuchDeviceMessage(int device, int deviceCount, llvm::StringRef machine);

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_CUDAERROR_H
