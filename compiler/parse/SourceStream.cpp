//===- SourceStream.cpp - ANTLR char stream over a UTF-8 buffer -----------===//
#include "parse/SourceStream.h"

#include "misc/Interval.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ConvertUTF.h"

using namespace modelc::parse;

std::optional<size_t> modelc::parse::findInvalidUtf8(llvm::StringRef text) {
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data());
  const auto *end = begin + text.size();
  const llvm::UTF8 *cursor = begin;
  if (llvm::isLegalUTF8String(&cursor, end))
    return std::nullopt;
  return size_t(cursor - begin);
}

SourceStream::SourceStream(llvm::StringRef text, llvm::StringRef sourceName) : text_(text) {
  name = sourceName.str();
  bool ascii = llvm::all_of(text, [](char c) { return (unsigned char)c < 0x80; });
  _data.clear();
  if (ascii) {
    _data.assign(text.begin(), text.end());
    return;
  }
  _data.reserve(text.size());
  byteOffsets_.reserve(text.size() + 1);
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  size_t i = 0, n = text.size();
  while (i < n) {
    unsigned char lead = bytes[i];
    unsigned length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (i + length > n) // cannot happen for validated text; stay in bounds
      length = unsigned(n - i);
    char32_t codePoint = length == 1 ? lead : lead & (0xFF >> (length + 1));
    for (unsigned k = 1; k < length; ++k)
      codePoint = (codePoint << 6) | (bytes[i + k] & 0x3F);
    byteOffsets_.push_back(uint32_t(i));
    _data.push_back(codePoint);
    i += length;
  }
  byteOffsets_.push_back(uint32_t(n));
}

std::string SourceStream::getText(const antlr4::misc::Interval &interval) {
  if (interval.a < 0 || interval.b < interval.a)
    return {};
  size_t begin = byteOffset(size_t(interval.a));
  size_t end = byteOffset(size_t(interval.b) + 1);
  if (begin >= end)
    return {};
  return text_.substr(begin, end - begin).str();
}
