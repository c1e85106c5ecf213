//===- SyntaxErrorTest.cpp - Each syntax diagnostic, and recovery ---------===//
#include "ParseTestUtil.h"

#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

using namespace modelc;
using namespace modelc::ast;
using namespace modelc::test;

namespace {

using Lines = std::vector<std::string>;

const Diagnostic &only(const Parsed &parsed) {
  EXPECT_EQ(parsed.diags.diagnostics().size(), 1u)
      << ::testing::PrintToString(parsed.diagnostics());
  return parsed.diags.diagnostics().front();
}

std::string primaryText(const Diagnostic &diag) { return diag.primaryRange().text().str(); }

/// The text a suggestion's edits produce from the source.
std::string applied(const Parsed &parsed, const Suggestion &suggestion) {
  llvm::StringRef source = parsed.sm.getMemoryBuffer(parsed.bufferId)->getBuffer();
  std::string out;
  const char *cursor = source.begin();
  for (const Edit &edit : suggestion.edits) {
    out.append(cursor, edit.range.begin.getPointer());
    out += edit.replacement;
    cursor = edit.range.end.getPointer();
  }
  out.append(cursor, source.end());
  return out;
}

TEST(SyntaxErrorTest, E0001MissingCloserIsRepairedInPlace) {
  auto parsed = parse("model M {\n  fn f(x: f32[B] {\n    return x\n  }\n}\n");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0001");
  EXPECT_EQ(diag.message, "expected `)`, found `{`");
  EXPECT_EQ(primaryText(diag), "{");
  EXPECT_EQ(diag.labels.at(0).message, "expected `)`");
  ASSERT_EQ(diag.suggestions.size(), 1u);
  EXPECT_EQ(diag.suggestions[0].message, "insert `)`");
  EXPECT_EQ(applied(*parsed, diag.suggestions[0]),
            "model M {\n  fn f(x: f32[B]) {\n    return x\n  }\n}\n");
  // Recovery kept the whole fn.
  ASSERT_EQ(parsed->module->models.at(0).fns.size(), 1u);
  EXPECT_EQ(parsed->fn().params.size(), 1u);
  EXPECT_EQ(parsed->fn().body.size(), 1u);
}

TEST(SyntaxErrorTest, E0001DescribesTokensLikeAPerson) {
  EXPECT_EQ(parse("model { }")->diagnostics(), Lines{"E0001 1:7 expected identifier, found `{`"});
  EXPECT_EQ(parse("model M { fn f() { let model = 3 } }")->diagnostics(),
            Lines{"E0001 1:24 expected `(` or identifier, found keyword `model`"});
  EXPECT_EQ(parse("model M { fn f() -> { } }")->diagnostics(),
            Lines{"E0001 1:21 expected type or `(`, found `{`"});
  EXPECT_EQ(parse("model M { fn f() { x = } }")->diagnostics(),
            Lines{"E0001 1:24 expected expression, found `}`"});
  EXPECT_EQ(parse("model M { fn f() { return 1 + } }")->diagnostics(),
            Lines{"E0001 1:31 expected expression, found `}`"});
  EXPECT_EQ(parse("model M { fn f() { return g(1,, 2) } }")->diagnostics(),
            Lines{"E0001 1:31 expected expression, found `,`"});
  EXPECT_EQ(parse("model M { param p: f32[3] @ 7 }")->diagnostics(),
            Lines{"E0001 1:29 expected device, found integer literal `7`"});
  EXPECT_EQ(parse("model M {}\nmodel")->diagnostics(),
            Lines{"E0001 2:6 expected identifier, found end of file"});
  EXPECT_EQ(parse("model M {} }")->diagnostics(),
            Lines{"E0001 1:12 expected `model` or end of file, found `}`"});
}

TEST(SyntaxErrorTest, E0001AtEndOfFilePointsAtTheUnclosedBracket) {
  auto parsed = parse("model M {\n  fn f() {\n    return (x\n");
  const Diagnostic &diag = parsed->diags.diagnostics().at(0);
  EXPECT_EQ(diag.message, "expected `,` or `)`, found end of file");
  EXPECT_EQ(diag.primaryRange().size(), 0u); // an insertion point at the end
  ASSERT_EQ(diag.labels.size(), 2u);
  EXPECT_EQ(diag.labels[1].message, "unclosed delimiter");
  EXPECT_EQ(diag.labels[1].range.text(), "(");
}

TEST(SyntaxErrorTest, E0001KeywordTypoGetsAHelp) {
  auto parsed = parse("modle M {}");
  const Diagnostic &diag = only(*parsed);
  ASSERT_EQ(diag.suggestions.size(), 1u);
  EXPECT_EQ(diag.suggestions[0].message, "did you mean `model`?");
  EXPECT_EQ(applied(*parsed, diag.suggestions[0]), "model M {}");
}

TEST(SyntaxErrorTest, E0001KeywordAsNameGetsANote) {
  auto parsed = parse("model M { fn f() { let for = 1 } }");
  const Diagnostic &diag = only(*parsed);
  ASSERT_EQ(diag.notes.size(), 1u);
  EXPECT_EQ(diag.notes[0].message, "`for` is a keyword and cannot be used as a name");
}

TEST(SyntaxErrorTest, E0001ChainedComparison) {
  auto parsed = parseBody("let n = a < b < c");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.message, "expected an operator that is not a comparison, found `<`");
  EXPECT_EQ(diag.labels.at(0).message, "comparisons cannot be chained");
  EXPECT_EQ(diag.labels.at(1).message, "after this comparison");
  EXPECT_LT(diag.labels[1].range.begin.getPointer(), diag.labels[0].range.begin.getPointer());
  EXPECT_TRUE(parsed->fn().body.empty());
}

TEST(SyntaxErrorTest, E0002UnterminatedString) {
  auto parsed = parseBody("    let s = \"abc\n    let t = 1");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0002");
  EXPECT_EQ(diag.message, "unterminated string literal");
  EXPECT_EQ(primaryText(diag), "\"abc");
  EXPECT_EQ(diag.labels[0].message, "this string is never closed");
  ASSERT_EQ(diag.suggestions.size(), 1u);
  EXPECT_NE(applied(*parsed, diag.suggestions[0]).find("\"abc\"\n"), std::string::npos);
  // Parsing went on with the string as written.
  ASSERT_EQ(parsed->fn().body.size(), 2u);
  const auto &let = llvm::cast<LetStmt>(*parsed->fn().body[0]);
  EXPECT_EQ(llvm::cast<StringLitExpr>(*let.value).value, "abc");
}

TEST(SyntaxErrorTest, E0003UnterminatedCommentLabelsTheOpener) {
  auto parsed = parse("model M {}\n/* never\nclosed");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0003");
  EXPECT_EQ(diag.message, "unterminated block comment");
  EXPECT_EQ(primaryText(diag), "/*");
  EXPECT_EQ(parsed->module->models.size(), 1u);
}

TEST(SyntaxErrorTest, E0004InvalidCharacters) {
  EXPECT_EQ(parseBody("let n = a $ b")->diagnostics(),
            Lines{"E0004 3:11 invalid character `$` in source"});
  EXPECT_EQ(parseBody(llvm::StringRef("let n = a \0 b", 13))->diagnostics(),
            Lines{"E0004 3:11 invalid character U+0000 in source"});
  EXPECT_EQ(parseBody("let n = a \x7F b")->diagnostics(),
            Lines{"E0004 3:11 invalid character U+007F in source"});
  EXPECT_EQ(parseBody("let n = a \xC3\xA9 b")->diagnostics(),
            Lines{"E0004 3:11 invalid character U+00E9 in source"});
  // A run of bad characters is one error covering the run.
  auto run = parseBody("let n = a ### b");
  const Diagnostic &diag = only(*run);
  EXPECT_EQ(primaryText(diag), "###");
  // A typographic quote gets the ASCII one as a fix.
  auto quotes = parseBody("let n = f(\xE2\x80\x9C)");
  ASSERT_EQ(quotes->diags.diagnostics().size(), 1u);
  const Diagnostic &quote = quotes->diags.diagnostics()[0];
  EXPECT_EQ(quote.message, "invalid character U+201C in source");
  ASSERT_EQ(quote.suggestions.size(), 1u);
  EXPECT_EQ(quote.suggestions[0].edits.at(0).replacement, "\"");
}

TEST(SyntaxErrorTest, E0005IntegerTooLarge) {
  auto parsed = parseBody("let n = 9223372036854775808");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0005");
  EXPECT_EQ(diag.message, "integer literal `9223372036854775808` does not fit in 64 bits");
  const auto &let = llvm::cast<LetStmt>(*parsed->fn().body.at(0));
  const auto &lit = llvm::cast<IntLitExpr>(*let.value);
  EXPECT_TRUE(lit.overflowed);
  EXPECT_EQ(lit.value, 0);
  // In a dimension and a device index, too.
  EXPECT_EQ(parse("model M { param p: f32[99999999999999999999] @ cpu }")->codes(),
            std::vector<std::string>{"E0005"});
  EXPECT_EQ(parse("model M { param p: f32[1] @ cuda:99999999999999999999 }")->codes(),
            std::vector<std::string>{"E0005"});
}

TEST(SyntaxErrorTest, E0006NestingTooDeep) {
  std::string deep = "let n = " + std::string(300, '(') + "1" + std::string(300, ')');
  auto parsed = parseBody(deep);
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0006");
  EXPECT_EQ(diag.message, "brackets nested deeper than 256 levels");
  // The primary label is on the first bracket past the limit: the model's
  // `{` and the fn's `{` are open, so the 255th `(` is the 257th bracket.
  size_t offset = diag.primaryRange().begin.getPointer() -
                  parsed->sm.getMemoryBuffer(parsed->bufferId)->getBufferStart();
  std::string source = parsed->sm.getMemoryBuffer(parsed->bufferId)->getBuffer().str();
  size_t firstParen = source.find("((");
  EXPECT_EQ(offset, firstParen + 254);
  EXPECT_TRUE(parsed->module->models.empty());
  // Exactly at the limit is fine.
  std::string ok = "let n = " + std::string(254, '(') + "1" + std::string(254, ')');
  auto fine = parseBody(ok);
  EXPECT_TRUE(fine->diagnostics().empty());
  EXPECT_EQ(fine->fn().body.size(), 1u);
}

TEST(SyntaxErrorTest, E0007InvalidUtf8) {
  auto parsed = parse("model M {}\n// caf\xE9\n");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0007");
  EXPECT_EQ(diag.message, "source is not valid UTF-8");
  EXPECT_EQ(primaryText(diag), "\xE9");
  EXPECT_EQ(diag.labels[0].message, "byte 0xE9 is not valid UTF-8 here");
  EXPECT_TRUE(parsed->module->models.empty());
  // Overlong encodings and surrogates are invalid too.
  EXPECT_EQ(parse("\xC0\xAF")->codes(), std::vector<std::string>{"E0007"});
  EXPECT_EQ(parse("\xED\xA0\x80")->codes(), std::vector<std::string>{"E0007"});
  EXPECT_EQ(parse("ok \xF4\x90\x80\x80")->codes(), std::vector<std::string>{"E0007"});
}

TEST(SyntaxErrorTest, E0008ExpectedIn) {
  auto parsed = parseBody("for x of xs { }");
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0008");
  EXPECT_EQ(diag.message, "expected `in` after the loop variable, found `of`");
  EXPECT_EQ(primaryText(diag), "of");
  ASSERT_EQ(diag.suggestions.size(), 1u);
  EXPECT_NE(applied(*parsed, diag.suggestions[0]).find("for x in xs"), std::string::npos);
}

TEST(SyntaxErrorTest, E0009InvalidEscapes) {
  auto parsed = parseBody("let s = \"a\\qb\\\xC3\xA9\"");
  ASSERT_EQ(parsed->codes(), (std::vector<std::string>{"E0009", "E0009"}));
  EXPECT_EQ(parsed->diags.diagnostics()[0].message,
            "unknown escape sequence `\\q` in string literal");
  EXPECT_EQ(primaryText(parsed->diags.diagnostics()[0]), "\\q");
  EXPECT_EQ(primaryText(parsed->diags.diagnostics()[1]), "\\\xC3\xA9");
}

TEST(SyntaxErrorTest, E0010ExpressionTooDeep) {
  std::string chain = "let n = a";
  for (int i = 0; i < 1500; ++i)
    chain += " + a";
  auto parsed = parseBody(chain);
  const Diagnostic &diag = only(*parsed);
  EXPECT_EQ(diag.code(), "E0010");
  EXPECT_EQ(diag.message, "expression nested deeper than 1000 levels");
  EXPECT_TRUE(parsed->fn().body.empty());
  // Long flat lists are not deep.
  std::string list = "let n = [0";
  for (int i = 0; i < 5000; ++i)
    list += ", 1";
  EXPECT_TRUE(parseBody(list + "]")->diagnostics().empty());
}

TEST(SyntaxErrorTest, RecoveryReportsIndependentErrorsOnce) {
  auto parsed = parse("model A {\n"
                      "  fn f() { let x = (1 + }\n" // missing operand and `)`
                      "  fn g() { return 2 }\n"
                      "}\n"
                      "model B {\n"
                      "  param p f32[3] @ cpu\n"     // missing `:`
                      "  fn h() { let y = [1, 2 }\n" // missing `]`
                      "}\n"
                      "model C { fn k() { return 3 } }\n");
  EXPECT_EQ(parsed->diagnostics(), (Lines{"E0001 2:25 expected expression, found `}`",
                                          "E0001 6:11 expected `:`, found keyword `f32`",
                                          "E0001 7:26 expected `,` or `]`, found `}`"}));
  // Everything that was not broken is still there.
  const auto &models = parsed->module->models;
  ASSERT_EQ(models.size(), 3u);
  EXPECT_EQ(models[0].fns.size(), 2u);
  EXPECT_EQ(models[1].state.size(), 1u);
  EXPECT_EQ(models[1].fns.size(), 1u);
  EXPECT_EQ(models[2].fns.size(), 1u);
}

TEST(SyntaxErrorTest, RecoveryDoesNotCascadeAcrossAStatement) {
  auto parsed = parse("model M {\n"
                      "  fn f(x: f32[B]) -> f32[B] {\n"
                      "    let y = log_softmax(x + * 2, dim: 1)\n"
                      "    return y\n"
                      "  }\n"
                      "  fn g() { return 1 }\n"
                      "}\n");
  EXPECT_EQ(parsed->diagnostics(), Lines{"E0001 3:29 expected expression, found `*`"});
  const auto &fns = parsed->module->models.at(0).fns;
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[1].name.name, "g");
}

TEST(SyntaxErrorTest, NoRawAntlrTextReachesTheUser) {
  const char *inputs[] = {"model M { fn f( }",
                          "model M<D: cpu> {}",
                          "import 3",
                          "model M { x = = }",
                          "model M { fn f() { return [1, 2 } }",
                          "}}}",
                          "model M(a: f32) {}"};
  for (const char *input : inputs) {
    auto parsed = parse(input);
    EXPECT_FALSE(parsed->diagnostics().empty()) << input;
    for (const std::string &line : parsed->diagnostics()) {
      EXPECT_EQ(line.find("mismatched input"), std::string::npos) << line;
      EXPECT_EQ(line.find("extraneous"), std::string::npos) << line;
      EXPECT_EQ(line.find("no viable"), std::string::npos) << line;
      EXPECT_EQ(line.find("<missing"), std::string::npos) << line;
      EXPECT_EQ(line.find("T__"), std::string::npos) << line;
    }
  }
}

TEST(SyntaxErrorTest, ManyErrorsAreCapped) {
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += "model M" + std::to_string(i) + " { param p f32[1] }\n";
  auto parsed = parse(text);
  EXPECT_EQ(parsed->diags.diagnostics().size(), kMaxSyntaxErrors);
  // Recovery still built every model.
  EXPECT_EQ(parsed->module->models.size(), 500u);
}

} // namespace
