//===- HostCompiler.h - Build emulated kernels with c++ --------*- C++ -*-===//
//
// Compiles CUDA C++ kernel source into a shared object for the emulator:
// `c++ -std=c++20 -O2 -shared -fPIC -include cuda_emulation.h -x c++ k.cu`,
// with one MODELC_EMU_EXPORT_KERNEL line appended per __global__ function.
// The compiler is $MODELC_HOST_CXX, else $CXX, else c++, g++ or clang++
// from PATH.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_EMULATOR_HOSTCOMPILER_H
#define MODELC_RUNTIME_CUDA_EMULATOR_HOSTCOMPILER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace modelc::cuda {

/// The text of cuda_emulation.h, embedded at build time.
llvm::StringRef cudaEmulationHeader();
/// The text of warp_matrix_emulation.h, which cuda_emulation.h includes.
llvm::StringRef warpMatrixEmulationHeader();

/// Names of the __global__ functions defined in `source` (comments ignored).
std::vector<std::string> findKernelNames(llvm::StringRef source);

/// `source` with each `extern __shared__ T name[];` turned into a pointer to
/// the launch's dynamic shared memory: a local `T *const name = ...;` inside
/// a function, a macro at file scope. Line numbers are kept.
std::string rewriteDynamicShared(llvm::StringRef source);

struct HostCompiler {
  std::string path;
  /// The first line of `path --version`: part of every cache key, so a
  /// compiler upgrade rebuilds the kernels.
  std::string version;

  static llvm::Expected<HostCompiler> find();

  /// Flags of every compile, before `extraFlags`.
  static std::vector<std::string> baseFlags();

  /// Flags that outline a check of every load and store of kernel code, so
  /// that a kernel reaching host memory is caught (cuda_emulation.h's
  /// __asan_* hooks): KernelAddressSanitizer's instrumentation without its
  /// runtime, shadow memory, stack or global redzones.
  std::vector<std::string> hostAccessCheckFlags() const;

  /// Returns the bytes of the shared object built from `source`, or an error
  /// carrying the compiler's output. `name` labels the source in messages.
  llvm::Expected<std::string> compileKernels(llvm::StringRef source, llvm::StringRef name,
                                             llvm::ArrayRef<std::string> extraFlags) const;
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_EMULATOR_HOSTCOMPILER_H
