//===- CudaTestSupport.h - Helpers shared by the CUDA tests ----*- C++ -*-===//
#ifndef MODELC_TESTS_UNIT_CUDA_CUDATESTSUPPORT_H
#define MODELC_TESTS_UNIT_CUDA_CUDATESTSUPPORT_H

#include "runtime/cuda/CudaError.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::cuda::test {

/// The text of tests/unit/cuda/kernels/<name>.
std::string readKernel(const std::string &name);
/// The names of every test kernel file (*.cu).
std::vector<std::string> allKernelFiles();

/// The kind and full text of `error`, which must be a failure.
struct Failure {
  std::optional<CudaErrorKind> kind;
  std::string text;
};
Failure failureOf(llvm::Error error);

/// A fresh directory, removed with everything in it on destruction.
class TemporaryDirectory {
public:
  TemporaryDirectory();
  ~TemporaryDirectory();
  const std::string &path() const { return dir; }

private:
  std::string dir;
};

/// Sets an environment variable for a scope, restoring it afterwards.
class ScopedEnvironment {
public:
  ScopedEnvironment(const char *name, std::optional<std::string> value);
  ~ScopedEnvironment();

private:
  std::string name;
  std::optional<std::string> previous;
};

} // namespace modelc::cuda::test

#define ASSERT_OK(expression)                                                                      \
  do {                                                                                             \
    if (llvm::Error assertError = (expression))                                                    \
      FAIL() << llvm::toString(std::move(assertError));                                            \
  } while (false)

#endif // MODELC_TESTS_UNIT_CUDA_CUDATESTSUPPORT_H
