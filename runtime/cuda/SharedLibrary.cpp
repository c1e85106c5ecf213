//===- SharedLibrary.cpp - dlopen'ed library with an owner ----------------===//

#include "runtime/cuda/SharedLibrary.h"

#include <dlfcn.h>

namespace modelc::cuda {

SharedLibrary &SharedLibrary::operator=(SharedLibrary &&other) noexcept {
  if (this != &other) {
    if (handle)
      dlclose(handle);
    handle = other.handle;
    other.handle = nullptr;
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle)
    dlclose(handle);
}

SharedLibrary SharedLibrary::open(const std::string &path, std::string *error) {
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle && error) {
    const char *reason = dlerror();
    *error = reason ? reason : "unknown dlopen failure";
  }
  return SharedLibrary(handle);
}

void *SharedLibrary::symbol(const std::string &name) const {
  return handle ? dlsym(handle, name.c_str()) : nullptr;
}

} // namespace modelc::cuda
