//===- RuntimeTestSupport.h - Helpers for the runtime unit tests -*- C++ -*-===//
//
// A self-deleting temporary directory, error-message helpers, and the path
// of the shared reference data (../shared beside the source tree).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_TESTS_UNIT_RUNTIME_RUNTIMETESTSUPPORT_H
#define MODELC_TESTS_UNIT_RUNTIME_RUNTIMETESTSUPPORT_H

#include "runtime/Tensor.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace modelc::runtime::testing {

/// A fresh directory under the system temp dir, removed with its contents.
class TempDir {
public:
  TempDir() {
    std::error_code ec = llvm::sys::fs::createUniqueDirectory("modelc-runtime-test", Path);
    EXPECT_FALSE(ec) << "cannot create a temp dir: " << ec.message();
  }
  ~TempDir() { llvm::sys::fs::remove_directories(Path); }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  std::string file(llvm::StringRef name) const {
    llvm::SmallString<128> path(Path);
    llvm::sys::path::append(path, name);
    return std::string(path);
  }
  /// Writes `bytes` to `name` and returns its path.
  std::string write(llvm::StringRef name, llvm::StringRef bytes) const {
    std::string path = file(name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    EXPECT_FALSE(ec) << "cannot write " << path << ": " << ec.message();
    os << bytes;
    return path;
  }

private:
  llvm::SmallString<128> Path;
};

/// The messages of every error joined in `err` (one per problem).
inline std::vector<std::string> errorMessages(llvm::Error err) {
  std::vector<std::string> messages;
  llvm::handleAllErrors(
      std::move(err), [&](const llvm::ErrorInfoBase &info) { messages.push_back(info.message()); });
  return messages;
}

/// The error's full text, or "<success>" for a value: lets a test say
/// EXPECT_THAT(failureText(parse(...)), HasSubstr("...")).
template <typename T> std::string failureText(llvm::Expected<T> value) {
  if (value)
    return "<success>";
  return llvm::toString(value.takeError());
}
inline std::string failureText(llvm::Error err) {
  if (!err)
    return "<success>";
  return llvm::toString(std::move(err));
}

/// A new row-major tensor whose elements are distinct small values: element
/// n holds n - 2.5 (floating point), n (integers) or n % 2 (bool).
inline Tensor sampleTensor(DType dtype, llvm::ArrayRef<int64_t> shape) {
  Tensor tensor = Tensor::zeros(dtype, shape);
  // Address element n through a flat view of the same storage.
  Tensor flat = Tensor::borrowMutable(dtype, {tensor.numel()}, tensor.mutableData());
  for (int64_t n = 0; n < tensor.numel(); ++n)
    flat.setFromDouble({n}, dtype == DType::Bool ? double(n % 2)
                                                 : double(n) - 2.5 * isFloatingPoint(dtype));
  return tensor;
}

/// `../shared/ref` beside the source tree, or "" when it is absent.
inline std::string sharedRefDir() {
  llvm::SmallString<256> path(MODELC_SOURCE_DIR);
  llvm::sys::path::append(path, "..", "shared", "ref");
  return llvm::sys::fs::is_directory(path) ? std::string(path) : std::string();
}

} // namespace modelc::runtime::testing

#endif // MODELC_TESTS_UNIT_RUNTIME_RUNTIMETESTSUPPORT_H
