//===- SourcePosition.h - Line, column and line text of a location -*- C++ -*-===//
//
// Renderers turn SMLocs into 1-based lines and columns. Columns count
// characters (UTF-8 code points), not bytes; a byte that is not valid UTF-8
// counts as one character, so malformed source never breaks rendering.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DIAGNOSTICS_SOURCEPOSITION_H
#define MODELC_DIAGNOSTICS_SOURCEPOSITION_H

#include "basic/SourceRange.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstddef>
#include <optional>
#include <utility>

namespace llvm {
class SourceMgr;
}

namespace modelc {

/// Where a location lies in its buffer.
struct SourcePosition {
  unsigned buffer = 0;      // SourceMgr buffer id (1-based)
  unsigned line = 0;        // 1-based
  unsigned column = 0;      // 1-based, in characters
  size_t offset = 0;        // 0-based byte offset into the buffer
  llvm::StringRef lineText; // the whole line, without "\n" or "\r\n"
  size_t lineOffset = 0;    // byte offset of the location within lineText
};

/// Resolves `loc`, or returns nullopt when it lies in no buffer of `sm`.
std::optional<SourcePosition> resolvePosition(const llvm::SourceMgr &sm, llvm::SMLoc loc);

/// The resolved ends of `range`, or nullopt when its start lies in no
/// buffer. An end in another buffer, or before the start, collapses to the
/// start.
std::optional<std::pair<SourcePosition, SourcePosition>> resolveRange(const llvm::SourceMgr &sm,
                                                                      Range range);

/// The text of line `line` (1-based) of `buffer`, without its line break;
/// "" past the end.
llvm::StringRef lineOfBuffer(const llvm::SourceMgr &sm, unsigned buffer, unsigned line);

/// The name a buffer was registered under (its file path).
llvm::StringRef bufferName(const llvm::SourceMgr &sm, unsigned buffer);

/// The byte length of the character starting at `text[pos]`: the length of
/// a valid UTF-8 sequence, else 1.
size_t utf8CharLength(llvm::StringRef text, size_t pos);

/// The number of characters in `text`.
unsigned countCharacters(llvm::StringRef text);

} // namespace modelc

#endif // MODELC_DIAGNOSTICS_SOURCEPOSITION_H
