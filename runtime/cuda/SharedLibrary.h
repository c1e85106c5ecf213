//===- SharedLibrary.h - dlopen'ed library with an owner -------*- C++ -*-===//
//
// NVRTC, the driver and emulated kernels are loaded at run time, never
// linked, so modelc starts on machines without CUDA. llvm::sys::DynamicLibrary
// always opens with RTLD_GLOBAL and never closes; kernel modules need
// RTLD_LOCAL (two modules may both define `add`) and unloading, hence this.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_SHAREDLIBRARY_H
#define MODELC_RUNTIME_CUDA_SHAREDLIBRARY_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace modelc::cuda {

class SharedLibrary {
public:
  SharedLibrary() = default;
  SharedLibrary(SharedLibrary &&other) noexcept : handle(other.handle) { other.handle = nullptr; }
  SharedLibrary &operator=(SharedLibrary &&other) noexcept;
  SharedLibrary(const SharedLibrary &) = delete;
  SharedLibrary &operator=(const SharedLibrary &) = delete;
  ~SharedLibrary();

  /// Opens `path` (a soname or a file) with RTLD_NOW | RTLD_LOCAL. On failure
  /// the result is empty and `error` (if given) holds dlerror().
  static SharedLibrary open(const std::string &path, std::string *error = nullptr);

  explicit operator bool() const { return handle != nullptr; }
  /// The address of `name`, or nullptr.
  void *symbol(const std::string &name) const;
  template <typename F> F function(const std::string &name) const {
    return reinterpret_cast<F>(symbol(name));
  }

private:
  explicit SharedLibrary(void *handle) : handle(handle) {}
  void *handle = nullptr;
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_SHAREDLIBRARY_H
