//===- LexerTest.cpp - The hand-written lexer matches the grammar ---------===//
//
// The lexer rules of grammar/Mdl.g4 are the specification; parse/Lexer is a
// faster implementation of them. These tests lex the same text with both
// and require identical token streams (type, channel, positions, lines).
//
//===----------------------------------------------------------------------===//
#include "parse/TokenDump.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ConvertUTF.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using modelc::parse::describeTokens;

namespace {

void expectSameTokens(llvm::StringRef text) {
  EXPECT_EQ(describeTokens(text, /*useAntlr=*/false), describeTokens(text, /*useAntlr=*/true))
      << "text: " << text.str();
}

TEST(LexerTest, MatchesGrammarOnHandPickedEdgeCases) {
  const char *cases[] = {
      "",
      " \t\r\n ",
      "model M<D: device>(in: int) { param w: f32[out, in] @ D }",
      "a->b - > c ** d * * e == f = g != h ! i <= j < k >= l > m",
      "... .. . .5 1. 1.5 1e5 1E+5 1e- 1.5e 1.5e-3 12abc 0x1F 007",
      "/// doc\n//// four\n// line\n/* block */ /* multi\nline */ x",
      "/*/ tricky */ y /**/ z /* ** */",
      "/* never closed",
      "/* never closed *",
      "\"str\" \"esc \\\" \\\\ \\n \\q\" \"open\n\"open at eof",
      "\"back\\\nslash\"",
      "$ # ? ` ~ ^ & | ! \\ '",
      "caf\xC3\xA9 \xE2\x80\x9Cquoted\xE2\x80\x9D \xF0\x9F\x98\x80 \xC2\xA0",
      "in for let return fn model import param buffer true false and or not device",
      "cpu cuda:0 int float bool f16 bf16 f32 f64 i32 i64 inx _ _1 A9",
      "x\r\ny\rz\n\nw",
      std::string("nul\0byte", 8).c_str(),
  };
  for (const char *text : cases)
    expectSameTokens(text);
  expectSameTokens(llvm::StringRef("nul\0byte\0", 9));
}

TEST(LexerTest, MatchesGrammarOnExampleFiles) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(MODELC_SOURCE_DIR) / "examples";
  if (!fs::exists(root))
    GTEST_SKIP() << "no examples folder";
  unsigned files = 0;
  for (const auto &entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".mdl")
      continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    expectSameTokens(text.str());
    ++files;
  }
  EXPECT_GT(files, 0u);
}

/// Random text over an alphabet that hits every lexer rule's edges.
TEST(LexerTest, MatchesGrammarOnRandomText) {
  const std::vector<std::string> pieces = {" ",
                                           "\n",
                                           "\r",
                                           "\t",
                                           "/",
                                           "*",
                                           "/*",
                                           "*/",
                                           "//",
                                           "///",
                                           "\"",
                                           "\\",
                                           "\\\"",
                                           ".",
                                           "..",
                                           "-",
                                           ">",
                                           "<",
                                           "=",
                                           "!",
                                           "e",
                                           "E",
                                           "+",
                                           "0",
                                           "7",
                                           "42",
                                           "a",
                                           "in",
                                           "f3",
                                           "f32",
                                           "cuda",
                                           ":",
                                           "(",
                                           ")",
                                           "[",
                                           "]",
                                           "{",
                                           "}",
                                           ",",
                                           "@",
                                           "%",
                                           ";",
                                           "$",
                                           "_",
                                           "\xC3\xA9",
                                           "\xE2\x80\x9C",
                                           std::string(1, '\0')};
  std::mt19937 rng(12345);
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    int length = std::uniform_int_distribution<int>(0, 40)(rng);
    for (int i = 0; i < length; ++i)
      text += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
    expectSameTokens(text);
    if (HasFailure())
      break;
  }
}

} // namespace
