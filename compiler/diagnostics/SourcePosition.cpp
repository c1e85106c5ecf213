//===- SourcePosition.cpp - Line, column and line text of a location ------===//

#include "diagnostics/SourcePosition.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/SourceMgr.h"

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
  for (size_t pos = 0; pos < text.size(); pos += utf8CharLength(text, pos))
    ++count;
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
  // rfind looks strictly before `offset`: the location's own byte may be '\n'.
  size_t lineStart = text.rfind('\n', offset);
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  size_t lineEnd = text.find('\n', lineStart);
  if (lineEnd == llvm::StringRef::npos)
    lineEnd = text.size();

  SourcePosition pos;
  pos.buffer = buffer;
  pos.line = sm.FindLineNumber(loc, buffer);
  pos.offset = offset;
  pos.lineText = withoutCarriageReturn(text.slice(lineStart, lineEnd));
  // A location on the "\r" of "\r\n" counts as the end of the line.
  pos.lineOffset = std::min(offset - lineStart, pos.lineText.size());
  pos.column = 1 + countCharacters(pos.lineText.take_front(pos.lineOffset));
  return pos;
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
