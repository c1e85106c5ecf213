//===- SourceTextTest.cpp - UTF-16 positions and incremental edits --------===//

#include "lsp/SourceText.h"

#include <gtest/gtest.h>

using namespace modelc::lsp;
using llvm::lsp::Position;
using llvm::lsp::TextDocumentContentChangeEvent;

namespace {

TextDocumentContentChangeEvent change(Position begin, Position end, std::string text) {
  TextDocumentContentChangeEvent event;
  event.range = llvm::lsp::Range(begin, end);
  event.text = std::move(text);
  return event;
}

std::string applied(std::string text, const TextDocumentContentChangeEvent &event) {
  llvm::Error error = applyChange(text, event);
  EXPECT_FALSE(error) << llvm::toString(std::move(error));
  return text;
}

TEST(SourceText, AsciiPositionsAreByteColumns) {
  llvm::StringRef text = "let a = 1\nlet bb = 2\n";
  EXPECT_EQ(offsetOf(text, {0, 0}), 0u);
  EXPECT_EQ(offsetOf(text, {0, 4}), 4u);
  EXPECT_EQ(offsetOf(text, {1, 4}), 14u);
  EXPECT_EQ(positionOf(text, 14), Position(1, 4));
  EXPECT_EQ(positionOf(text, 0), Position(0, 0));
}

TEST(SourceText, MultiByteCharactersCountAsUtf16Units) {
  // é is 2 bytes / 1 unit, € is 3 bytes / 1 unit, 😀 is 4 bytes / 2 units.
  llvm::StringRef text = "é€😀x\n";
  EXPECT_EQ(utf16Length("é€😀x"), 5u);
  EXPECT_EQ(offsetOf(text, {0, 1}), 2u);  // after é
  EXPECT_EQ(offsetOf(text, {0, 2}), 5u);  // after €
  EXPECT_EQ(offsetOf(text, {0, 4}), 9u);  // after 😀
  EXPECT_EQ(offsetOf(text, {0, 5}), 10u); // after x
  EXPECT_EQ(positionOf(text, 9), Position(0, 4));
  EXPECT_EQ(positionOf(text, 10), Position(0, 5));
}

TEST(SourceText, PositionInsideSurrogatePairMapsToItsStart) {
  llvm::StringRef text = "a😀b";
  EXPECT_EQ(offsetOf(text, {0, 2}), 1u);
}

TEST(SourceText, CharacterPastLineEndClampsToLineEnd) {
  llvm::StringRef text = "ab\r\ncd";
  EXPECT_EQ(offsetOf(text, {0, 99}), 2u); // before "\r\n"
  EXPECT_EQ(offsetOf(text, {1, 99}), 6u); // last line has no newline
}

TEST(SourceText, MissingLinesAndNegativeValuesAreRejected) {
  llvm::StringRef text = "one\ntwo";
  EXPECT_EQ(offsetOf(text, {2, 0}), std::nullopt);
  EXPECT_EQ(offsetOf(text, {-1, 0}), std::nullopt);
  EXPECT_EQ(offsetOf(text, {0, -3}), std::nullopt);
  // The line after a final newline exists (it is empty).
  EXPECT_EQ(offsetOf("one\n", {1, 0}), 4u);
}

TEST(SourceText, InvalidUtf8BytesCountAsOneUnit) {
  llvm::StringRef text = "a\xff\xfe"
                         "b";
  EXPECT_EQ(utf16Length(text), 4u);
  EXPECT_EQ(offsetOf(text, {0, 3}), 3u);
  // A truncated sequence at the end does not read past the text.
  EXPECT_EQ(utf16Length("x\xe2\x82"), 3u);
}

TEST(SourceText, OffsetsRoundTrip) {
  std::string text = "model M {\n  fn f(x: f32[B] @ cuda:0) { // é😀\n    return x\n  }\n}\n";
  for (size_t offset = 0; offset <= text.size(); ++offset) {
    Position pos = positionOf(text, offset);
    std::optional<size_t> back = offsetOf(text, pos);
    ASSERT_TRUE(back.has_value());
    // Offsets inside a multi-byte character map back to its start.
    EXPECT_LE(*back, offset);
    EXPECT_GT(*back + 4, offset);
  }
}

TEST(SourceText, IncrementalEditsInsertDeleteAndReplace) {
  std::string text = "let x = a + b\nreturn x\n";
  EXPECT_EQ(applied(text, change({0, 13}, {0, 13}, ".to(cuda:0)")),
            "let x = a + b.to(cuda:0)\nreturn x\n");
  EXPECT_EQ(applied(text, change({0, 9}, {0, 13}, "")), "let x = a\nreturn x\n");
  EXPECT_EQ(applied(text, change({0, 8}, {1, 6}, "y\nyield")), "let x = y\nyield x\n");
  EXPECT_EQ(applied(text, change({2, 0}, {2, 0}, "// end\n")), "let x = a + b\nreturn x\n// end\n");
}

TEST(SourceText, EditsUseUtf16Columns) {
  std::string text = "// 😀 x\n";
  // Replace "x" (UTF-16 column 6: "//", " ", 2 units of 😀, " ").
  EXPECT_EQ(applied(text, change({0, 6}, {0, 7}, "y")), "// 😀 y\n");
}

TEST(SourceText, WholeDocumentChangeReplacesText) {
  std::string text = "old";
  TextDocumentContentChangeEvent event;
  event.text = "new text";
  EXPECT_EQ(applied(text, event), "new text");
}

TEST(SourceText, EditOutsideTheDocumentFailsAndKeepsText) {
  std::string text = "one\ntwo\n";
  llvm::Error error = applyChange(text, change({5, 0}, {5, 1}, "x"));
  EXPECT_TRUE(static_cast<bool>(error));
  llvm::consumeError(std::move(error));
  EXPECT_EQ(text, "one\ntwo\n");
  // An end before the start is refused too.
  error = applyChange(text, change({1, 2}, {0, 1}, "x"));
  EXPECT_TRUE(static_cast<bool>(error));
  llvm::consumeError(std::move(error));
  EXPECT_EQ(text, "one\ntwo\n");
}

TEST(SourceText, SequenceOfEditsMatchesEditorModel) {
  // Type "abc" one character at a time, then delete "b", as an editor sends it.
  std::string text = "x\n";
  for (auto [column, ch] : {std::pair{1, "a"}, {2, "b"}, {3, "c"}})
    text = applied(text, change({0, column}, {0, column}, ch));
  EXPECT_EQ(text, "xabc\n");
  text = applied(text, change({0, 2}, {0, 3}, ""));
  EXPECT_EQ(text, "xac\n");
}

} // namespace
