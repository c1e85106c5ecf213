//===- SourceText.cpp - LSP positions over UTF-8 document text ------------===//

#include "lsp/SourceText.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace modelc::lsp {

namespace {

/// Length in bytes of the UTF-8 sequence starting with `lead`, and how many
/// UTF-16 code units it takes. A malformed sequence is one byte, one unit.
struct CharWidth {
  size_t bytes;
  size_t units;
};

CharWidth widthAt(StringRef text, size_t at) {
  auto byte = static_cast<unsigned char>(text[at]);
  size_t bytes = byte < 0x80           ? 1
                 : (byte >> 5) == 0x6  ? 2
                 : (byte >> 4) == 0xE  ? 3
                 : (byte >> 3) == 0x1E ? 4
                                       : 1;
  if (at + bytes > text.size())
    return {1, 1};
  for (size_t i = 1; i < bytes; ++i)
    if ((static_cast<unsigned char>(text[at + i]) & 0xC0) != 0x80)
      return {1, 1};
  return {bytes, bytes == 4 ? 2u : 1u};
}

/// The end of the line starting at `lineStart`, before its "\n" or "\r\n".
size_t lineEnd(StringRef text, size_t lineStart) {
  size_t end = text.find('\n', lineStart);
  if (end == StringRef::npos)
    end = text.size();
  if (end > lineStart && text[end - 1] == '\r')
    --end;
  return end;
}

} // namespace

std::optional<size_t> offsetOf(StringRef text, llvm::lsp::Position pos) {
  if (pos.line < 0 || pos.character < 0)
    return std::nullopt;
  size_t lineStart = 0;
  for (int line = 0; line < pos.line; ++line) {
    size_t newline = text.find('\n', lineStart);
    if (newline == StringRef::npos)
      return std::nullopt;
    lineStart = newline + 1;
  }
  size_t end = lineEnd(text, lineStart);
  size_t offset = lineStart;
  size_t units = 0;
  while (offset < end) {
    CharWidth width = widthAt(text, offset);
    if (units + width.units > size_t(pos.character))
      break;
    units += width.units;
    offset += width.bytes;
  }
  return offset;
}

llvm::lsp::Position positionOf(StringRef text, size_t offset) {
  offset = std::min(offset, text.size());
  StringRef before = text.take_front(offset);
  size_t lineStart = before.rfind('\n');
  lineStart = lineStart == StringRef::npos ? 0 : lineStart + 1;
  // Count whole characters only: an offset inside one means its start.
  size_t units = 0;
  for (size_t at = lineStart; at < offset;) {
    CharWidth width = widthAt(text, at);
    if (at + width.bytes > offset)
      break;
    units += width.units;
    at += width.bytes;
  }
  return {static_cast<int>(before.count('\n')), static_cast<int>(units)};
}

size_t utf16Length(StringRef text) {
  size_t units = 0;
  for (size_t at = 0; at < text.size();) {
    CharWidth width = widthAt(text, at);
    units += width.units;
    at += width.bytes;
  }
  return units;
}

Error applyChange(std::string &text, const llvm::lsp::TextDocumentContentChangeEvent &change) {
  if (!change.range) {
    text = change.text;
    return Error::success();
  }
  std::optional<size_t> begin = offsetOf(text, change.range->start);
  std::optional<size_t> end = offsetOf(text, change.range->end);
  if (!begin || !end || *end < *begin)
    return make_error<llvm::lsp::LSPError>(formatv("edit range {0}-{1} is outside the document",
                                                   change.range->start, change.range->end)
                                               .str(),
                                           llvm::lsp::ErrorCode::InvalidParams);
  text.replace(*begin, *end - *begin, change.text);
  return Error::success();
}

} // namespace modelc::lsp
