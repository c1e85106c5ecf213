//===- SourceRange.h - Half-open ranges of source text ----------*- C++ -*-===//
//
// Locations are llvm::SMLoc pointers into buffers owned by an llvm::SourceMgr;
// every phase of the front end and every diagnostic uses this one range type.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_BASIC_SOURCERANGE_H
#define MODELC_BASIC_SOURCERANGE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstddef>

namespace modelc {

/// A half-open source range [begin, end). `end` points one past the last
/// character; an empty range (begin == end) marks an insertion point.
struct Range {
  llvm::SMLoc begin, end;

  bool isValid() const { return begin.isValid(); }
  size_t size() const { return size_t(end.getPointer() - begin.getPointer()); }
  llvm::StringRef text() const { return {begin.getPointer(), size()}; }
  /// The empty range just after this one (where a suffix is inserted).
  Range after() const { return {end, end}; }
  static Range join(Range a, Range b) { return {a.begin, b.end}; }
  friend bool operator==(Range a, Range b) { return a.begin == b.begin && a.end == b.end; }
};

} // namespace modelc

#endif // MODELC_BASIC_SOURCERANGE_H
