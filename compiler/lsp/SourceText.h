//===- SourceText.h - LSP positions over UTF-8 document text ----*- C++ -*-===//
//
// LSP addresses text by (line, character) where `character` counts UTF-16
// code units; the front end works in byte offsets into UTF-8 buffers. These
// helpers convert between the two and apply incremental edits, clamping the
// way the LSP specification asks (a character past the end of a line means
// the end of that line) and refusing lines that do not exist.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_LSP_SOURCETEXT_H
#define MODELC_LSP_SOURCETEXT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/LSP/Protocol.h"

#include <cstddef>
#include <optional>
#include <string>

namespace modelc::lsp {

/// The byte offset of `pos` in `text`, or std::nullopt when the line does
/// not exist. A character beyond the end of its line maps to the line's end;
/// a position inside a surrogate pair or a multi-byte sequence maps to the
/// start of that character.
std::optional<size_t> offsetOf(llvm::StringRef text, llvm::lsp::Position pos);

/// The LSP position of byte `offset` in `text` (clamped to the text's size).
llvm::lsp::Position positionOf(llvm::StringRef text, size_t offset);

/// The number of UTF-16 code units that encode `text` (invalid UTF-8 bytes
/// count as one unit each, as editors show them as one replacement char).
size_t utf16Length(llvm::StringRef text);

/// Applies one didChange content change: a range replacement, or the whole
/// text when the change has no range. Fails without touching `text` when the
/// range does not lie inside it.
llvm::Error applyChange(std::string &text, const llvm::lsp::TextDocumentContentChangeEvent &change);

} // namespace modelc::lsp

#endif // MODELC_LSP_SOURCETEXT_H
