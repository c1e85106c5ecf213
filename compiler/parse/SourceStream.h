//===- SourceStream.h - ANTLR char stream over a UTF-8 buffer ---*- C++ -*-===//
//
// ANTLR indexes characters by code point; diagnostics and the AST need byte
// pointers into the llvm::SourceMgr buffer. SourceStream decodes the buffer
// itself (it must be valid UTF-8; see findInvalidUtf8) and maps code-point
// indexes back to bytes, with a fast path for all-ASCII text. Token text is
// sliced from the original bytes rather than re-encoded.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PARSE_SOURCESTREAM_H
#define MODELC_PARSE_SOURCESTREAM_H

#include "ANTLRInputStream.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace modelc::parse {

/// The offset of the first byte that is not valid UTF-8, if any.
std::optional<size_t> findInvalidUtf8(llvm::StringRef text);

class SourceStream : public antlr4::ANTLRInputStream {
public:
  /// `text` must be valid UTF-8 and outlive the stream.
  SourceStream(llvm::StringRef text, llvm::StringRef sourceName);

  /// The byte offset of code point `index` (`index == size()` is the end).
  size_t byteOffset(size_t index) const {
    if (byteOffsets_.empty())
      return index < text_.size() ? index : text_.size();
    return index < byteOffsets_.size() ? byteOffsets_[index] : text_.size();
  }
  llvm::StringRef text() const { return text_; }
  const std::u32string &codePoints() const { return _data; }

  std::string getText(const antlr4::misc::Interval &interval) override;

private:
  llvm::StringRef text_;
  /// Byte offset of each code point, plus one for the end; empty for ASCII.
  std::vector<uint32_t> byteOffsets_;
};

} // namespace modelc::parse

#endif // MODELC_PARSE_SOURCESTREAM_H
