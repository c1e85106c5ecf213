//===- SourcePosition.cpp - Line, column and line text of a location ------===//

#include "diagnostics/SourcePosition.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/SourceMgr.h"

#include <cstring>

using namespace modelc;

size_t modelc::utf8CharLength(llvm::StringRef text, size_t pos) {
  auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data() + pos);
  unsigned length = llvm::getNumBytesForUTF8(*begin);
  if (length <= 1 || pos + length > text.size() ||
      !llvm::isLegalUTF8Sequence(begin, begin + length))
    return 1;
  return length;
}

unsigned modelc::countCharacters(llvm::StringRef text) {
  unsigned count = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    // Runs of ASCII, eight bytes at a time: one character per byte.
    if (pos + 8 <= text.size()) {
      uint64_t word;
      std::memcpy(&word, text.data() + pos, sizeof(word));
      if ((word & 0x8080808080808080ULL) == 0) {
        count += 8;
        pos += 8;
        continue;
      }
    }
    pos += utf8CharLength(text, pos);
    ++count;
  }
  return count;
}

/// Strips the "\r" of a CRLF line ending.
static llvm::StringRef withoutCarriageReturn(llvm::StringRef line) {
  return line.ends_with("\r") ? line.drop_back() : line;
}

std::optional<SourcePosition> modelc::resolvePosition(const llvm::SourceMgr &sm, llvm::SMLoc loc) {
  if (!loc.isValid())
    return std::nullopt;
  unsigned buffer = sm.FindBufferContainingLoc(loc);
  if (buffer == 0)
    return std::nullopt;
  llvm::StringRef text = sm.getMemoryBuffer(buffer)->getBuffer();
  size_t offset = size_t(loc.getPointer() - text.data());
  // SourceMgr caches the offsets of line breaks: finding the line and its
  // ends is a binary search, never a scan (lines can be megabytes long).
  const auto &info = sm.getBufferInfo(buffer);
  unsigned line = info.getLineNumber(loc.getPointer());
  const char *lineBegin = info.getPointerForLineNumber(line);
  const char *nextLine = info.getPointerForLineNumber(line + 1);
  size_t lineStart = lineBegin ? size_t(lineBegin - text.data()) : 0;
  size_t lineEnd = nextLine ? size_t(nextLine - text.data()) - 1 : text.size();

  SourcePosition pos;
  pos.buffer = buffer;
  pos.line = line;
  pos.offset = offset;
  pos.lineText = withoutCarriageReturn(text.slice(lineStart, lineEnd));
  // A location on the "\r" of "\r\n" counts as the end of the line.
  pos.lineOffset = std::min(offset - lineStart, pos.lineText.size());
  pos.column = 1 + countCharacters(pos.lineText.take_front(pos.lineOffset));
  return pos;
}

std::optional<std::pair<SourcePosition, SourcePosition>>
modelc::resolveRange(const llvm::SourceMgr &sm, Range range) {
  std::optional<SourcePosition> begin = resolvePosition(sm, range.begin);
  if (!begin)
    return std::nullopt;
  std::optional<SourcePosition> end = resolvePosition(sm, range.end);
  if (!end || end->buffer != begin->buffer || end->offset < begin->offset)
    end = begin;
  return std::make_pair(*begin, *end);
}

llvm::StringRef modelc::lineOfBuffer(const llvm::SourceMgr &sm, unsigned buffer, unsigned line) {
  if (buffer == 0 || buffer > sm.getNumBuffers() || line == 0)
    return {};
  // A linear scan: SourceMgr's cached lookup is not const, and renderers
  // only ask for the few lines a diagnostic shows.
  llvm::StringRef text = sm.getMemoryBuffer(buffer)->getBuffer();
  for (unsigned current = 1; current < line; ++current) {
    size_t newline = text.find('\n');
    if (newline == llvm::StringRef::npos)
      return {};
    text = text.drop_front(newline + 1);
  }
  return withoutCarriageReturn(text.take_until([](char c) { return c == '\n'; }));
}

llvm::StringRef modelc::bufferName(const llvm::SourceMgr &sm, unsigned buffer) {
  if (buffer == 0 || buffer > sm.getNumBuffers())
    return {};
  return sm.getMemoryBuffer(buffer)->getBufferIdentifier();
}
