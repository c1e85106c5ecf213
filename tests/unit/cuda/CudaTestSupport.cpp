//===- CudaTestSupport.cpp - Helpers shared by the CUDA tests -------------===//

#include "CudaTestSupport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <stdexcept>

namespace modelc::cuda::test {

std::string readKernel(const std::string &name) {
  std::string path = std::string(MODELC_CUDA_TEST_KERNELS) + "/" + name;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    throw std::runtime_error("cannot read test kernel " + path);
  return (*file)->getBuffer().str();
}

std::vector<std::string> allKernelFiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(MODELC_CUDA_TEST_KERNELS, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".cu")
      names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  return names;
}

Failure failureOf(llvm::Error error) {
  Failure failure;
  if (!error) {
    failure.text = "(success)";
    return failure;
  }
  failure.kind = consumeCudaErrorKind(std::move(error), &failure.text);
  return failure;
}

TemporaryDirectory::TemporaryDirectory() {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createUniqueDirectory("modelc-cuda-test", path))
    throw std::runtime_error("cannot create a temporary directory");
  dir = std::string(path);
}

TemporaryDirectory::~TemporaryDirectory() { llvm::sys::fs::remove_directories(dir); }

ScopedEnvironment::ScopedEnvironment(const char *name, std::optional<std::string> value)
    : name(name) {
  if (const char *old = std::getenv(name))
    previous = old;
  if (value)
    setenv(name, value->c_str(), 1);
  else
    unsetenv(name);
}

ScopedEnvironment::~ScopedEnvironment() {
  if (previous)
    setenv(name.c_str(), previous->c_str(), 1);
  else
    unsetenv(name.c_str());
}

} // namespace modelc::cuda::test
