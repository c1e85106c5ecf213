//===- ProblemList.h - Collect every problem into one llvm::Error -*- C++ -*-===//
//
// Readers and the weight loader report all they find, not just the first:
// each problem is one llvm::StringError prefixed with the source it is
// about, and take() joins them (llvm::joinErrors) into one Error.
// llvm::toString() on it prints one problem per line; handleAllErrors()
// visits them one by one.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_PROBLEMLIST_H
#define MODELC_RUNTIME_PROBLEMLIST_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace modelc::runtime {

class ProblemList {
public:
  /// `source` (a file name) prefixes every message: "source: message".
  explicit ProblemList(llvm::StringRef source) : Source(source) {}
  ProblemList(const ProblemList &) = delete;
  ProblemList &operator=(const ProblemList &) = delete;
  ~ProblemList() { llvm::consumeError(std::move(All)); }

  void add(const llvm::Twine &message) {
    All = llvm::joinErrors(std::move(All), llvm::createStringError(Source + ": " + message));
    Empty = false;
  }
  bool empty() const { return Empty; }
  /// All problems so far as one Error (success when there are none).
  llvm::Error take() {
    Empty = true;
    return std::move(All);
  }

private:
  std::string Source;
  llvm::Error All = llvm::Error::success();
  bool Empty = true;
};

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_PROBLEMLIST_H
