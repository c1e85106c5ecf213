//===- TextRendererTest.cpp - Exact rustc-style text output ---------------===//

#include "DiagnosticTestSupport.h"

using namespace modelc;

namespace {

class TextRendererTest : public modelc::testing::SourceFixture {
protected:
  /// Reports one diagnostic through an engine and returns it.
  template <typename Build> Diagnostic make(DiagId id, Range at, Build build) {
    DiagnosticEngine engine(sm);
    {
      DiagnosticBuilder builder = engine.report(id, at, "+");
      build(builder);
    }
    EXPECT_EQ(engine.diagnostics().size(), 1u);
    return engine.diagnostics().front();
  }
};

constexpr const char *netSource = "model Net<D: device>(out: int) {\n"
                                  "  param weight: f32[out, out] @ D\n"
                                  "  param bias: f32[out] @ cpu\n"
                                  "  fn forward(x: f32[B, out] @ D) -> f32[B, out] @ D {\n"
                                  "    let y = x\n"
                                  "    let z = y\n"
                                  "    return weight @ x + bias\n"
                                  "  }\n"
                                  "}\n";

TEST_F(TextRendererTest, FullDeviceMismatchExample) {
  load(netSource);
  Diagnostic diag = make(DiagId::DeviceMismatch, find("+ bias"), [&](DiagnosticBuilder &b) {
    b.primary(find("bias", 1), "f32[out] @ cpu")
        .label(find("weight @ x"), "f32[B, out] @ cuda:0")
        .note("`bias` got its device from its declaration", find("cpu"), "declared on cpu")
        .help("move `bias` to cuda:0", {{find("bias", 1).after(), ".to(cuda:0)"}});
  });
  EXPECT_EQ(render(diag), "error[E0301]: operands of `+` are on different devices\n"
                          " --> net.mdl:7:25\n"
                          "  |\n"
                          "7 |     return weight @ x + bias\n"
                          "  |            ----------   ^^^^ f32[out] @ cpu\n"
                          "  |            |\n"
                          "  |            f32[B, out] @ cuda:0\n"
                          "  |\n"
                          "note: `bias` got its device from its declaration\n"
                          " --> net.mdl:3:26\n"
                          "  |\n"
                          "3 |   param bias: f32[out] @ cpu\n"
                          "  |                          ^^^ declared on cpu\n"
                          "help: move `bias` to cuda:0\n"
                          "  |\n"
                          "7 |     return weight @ x + bias.to(cuda:0)\n"
                          "  |                             +++++++++++\n"
                          "\n");
}

TEST_F(TextRendererTest, OnePrimaryLabel) {
  load("model M {\n  fn f(x: f32[4] @ cpu) -> f32[4] @ cpu { return missing }\n}\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("missing"), "missing").primary("not found");
  engine.report(DiagId::UnknownName, find("x:"), "x"); // no label message
  EXPECT_EQ(render(engine.diagnostics()[0]),
            "error[E0101]: cannot find `missing` in this scope\n"
            " --> net.mdl:2:50\n"
            "  |\n"
            "2 |   fn f(x: f32[4] @ cpu) -> f32[4] @ cpu { return missing }\n"
            "  |                                                  ^^^^^^^ not found\n"
            "\n");
  EXPECT_EQ(render(engine.diagnostics()[1]), "error[E0101]: cannot find `x` in this scope\n"
                                             " --> net.mdl:2:8\n"
                                             "  |\n"
                                             "2 |   fn f(x: f32[4] @ cpu) -> f32[4] @ cpu { "
                                             "return missing }\n"
                                             "  |        ^^\n"
                                             "\n");
}

TEST_F(TextRendererTest, ThreeLabelsOnOneLineHangWithoutOverlap) {
  load("return a + b * c\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::DeviceMismatch, find("b"), "*")
      .primary("on cuda:1")
      .label(find("a"), "on cpu")
      .label(find("c"), "on cuda:0");
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0301]: operands of `*` are on different "
                                             "devices\n"
                                             " --> net.mdl:1:12\n"
                                             "  |\n"
                                             "1 | return a + b * c\n"
                                             "  |        -   ^   - on cuda:0\n"
                                             "  |        |   |\n"
                                             "  |        |   on cuda:1\n"
                                             "  |        on cpu\n"
                                             "\n");
}

TEST_F(TextRendererTest, EnclosingLabelPushesEveryMessageBelow) {
  load("return a + b * c\n");
  DiagnosticEngine engine(sm);
  // The secondary label ends right of the primary one: no inline message.
  engine.report(DiagId::DeviceMismatch, find("b"), "*")
      .primary("here")
      .label(find("a + b * c"), "whole expression");
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0301]: operands of `*` are on different "
                                             "devices\n"
                                             " --> net.mdl:1:12\n"
                                             "  |\n"
                                             "1 | return a + b * c\n"
                                             "  |        ----^----\n"
                                             "  |        |   |\n"
                                             "  |        |   here\n"
                                             "  |        whole expression\n"
                                             "\n");
}

TEST_F(TextRendererTest, LabelsOnDifferentLinesShowShortGapsAndElideLongOnes) {
  load("let a = 1\n"
       "let b = a\n"
       "// one\n"
       "// two\n"
       "let c = b\n"
       "// three\n"
       "// four\n"
       "// five\n"
       "let d = c\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("c", 1), "c")
      .primary("used here")
      .label(find("a"), "first")
      .label(find("b"), "second")
      .label(find("c"), "third");
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0101]: cannot find `c` in this scope\n"
                                             " --> net.mdl:9:9\n"
                                             "  |\n"
                                             "1 | let a = 1\n"
                                             "  |     - first\n"
                                             "2 | let b = a\n"
                                             "  |     - second\n"
                                             "3 | // one\n"
                                             "4 | // two\n"
                                             "5 | let c = b\n"
                                             "  |     - third\n"
                                             "...\n"
                                             "9 | let d = c\n"
                                             "  |         ^ used here\n"
                                             "\n");
}

TEST_F(TextRendererTest, GutterFollowsTheLargestLineNumberShown) {
  std::string source;
  for (int i = 1; i <= 12; ++i)
    source += "let v" + std::to_string(i) + " = 0\n";
  load(source);
  DiagnosticEngine engine(sm);
  engine.report(DiagId::DuplicateDefinition, find("v12"), "v12")
      .primary("redefined")
      .note("first defined here", find("v9"), "first")
      .note("plain note");
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0102]: `v12` is defined more than once\n"
                                             "  --> net.mdl:12:5\n"
                                             "   |\n"
                                             "12 | let v12 = 0\n"
                                             "   |     ^^^ redefined\n"
                                             "   |\n"
                                             "   = note: plain note\n"
                                             "note: first defined here\n"
                                             "  --> net.mdl:9:5\n"
                                             "   |\n"
                                             "9  | let v9 = 0\n"
                                             "   |     ^^ first\n"
                                             "\n");
}

TEST_F(TextRendererTest, NotesAndHelpWithoutLocationGoUnderTheSnippet) {
  load("let x = y\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("y"), "y")
      .note("names are case-sensitive")
      .note("first line\nsecond line")
      .help("declare `y` before this line");
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0101]: cannot find `y` in this scope\n"
                                             " --> net.mdl:1:9\n"
                                             "  |\n"
                                             "1 | let x = y\n"
                                             "  |         ^\n"
                                             "  |\n"
                                             "  = note: names are case-sensitive\n"
                                             "  = note: first line\n"
                                             "          second line\n"
                                             "  = help: declare `y` before this line\n"
                                             "\n");
}

TEST_F(TextRendererTest, NoteInAnotherFile) {
  load("model Enc<D: device>() {}\n", "enc.mdl");
  Range declared = find("Enc");
  load("import enc\nlet e = Enc<cuda:0>()\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::NoEntryFunction, find("Enc"), "Enc", "forward")
      .label(declared, "declared here")
      .note("`Enc` is declared here", declared);
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0113]: model `Enc` has no fn named `forward`\n"
                                             " --> net.mdl:2:9\n"
                                             "  |\n"
                                             "2 | let e = Enc<cuda:0>()\n"
                                             "  |         ^^^\n"
                                             "  |\n"
                                             " ::: enc.mdl:1:7\n"
                                             "  |\n"
                                             "1 | model Enc<D: device>() {}\n"
                                             "  |       --- declared here\n"
                                             "  |\n"
                                             "note: `Enc` is declared here\n"
                                             " --> enc.mdl:1:7\n"
                                             "  |\n"
                                             "1 | model Enc<D: device>() {}\n"
                                             "  |       ^^^\n"
                                             "\n");
}

TEST_F(TextRendererTest, HelpWithReplacement) {
  load("  return log_softmax(x, axis: 1)\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownNamedArgument, find("axis"), "log_softmax", "axis")
      .help("the parameter is called `dim`", {{find("axis"), "dim"}});
  EXPECT_EQ(render(engine.diagnostics()[0]),
            "error[E0106]: `log_softmax` has no parameter named `axis`\n"
            " --> net.mdl:1:25\n"
            "  |\n"
            "1 |   return log_softmax(x, axis: 1)\n"
            "  |                         ^^^^\n"
            "  |\n"
            "help: the parameter is called `dim`\n"
            "  |\n"
            "1 |   return log_softmax(x, dim: 1)\n"
            "  |                         ~~~\n"
            "\n");
}

TEST_F(TextRendererTest, HelpWithSeveralInsertions) {
  load("return conv2d(x, w)\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::ArgumentDeviceMismatch, find("x"), "x", "conv2d", "cpu", "cuda:0")
      .help("move both to cuda:0",
            {{find("x").after(), ".to(cuda:0)"}, {find("w").after(), ".to(cuda:0)"}});
  std::string text = render(engine.diagnostics()[0]);
  EXPECT_NE(text.find("help: move both to cuda:0\n"
                      "  |\n"
                      "1 | return conv2d(x.to(cuda:0), w.to(cuda:0))\n"
                      "  |                +++++++++++   +++++++++++\n"),
            std::string::npos)
      << text;
}

TEST_F(TextRendererTest, HelpWithDeletion) {
  load("    return x.to(D) * gain\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::RedundantTransfer, find(".to(D)"), "D")
      .primary("`x` is already on D")
      .help("remove the transfer", {{find(".to(D)"), ""}});
  EXPECT_EQ(render(engine.diagnostics()[0]),
            "warning[W0310]: redundant transfer: value is already on D\n"
            " --> net.mdl:1:13\n"
            "  |\n"
            "1 |     return x.to(D) * gain\n"
            "  |             ^^^^^^ `x` is already on D\n"
            "  |\n"
            "help: remove the transfer\n"
            "  |\n"
            "1 |     return x.to(D) * gain\n"
            "  |             ------ remove this\n"
            "\n");
}

TEST_F(TextRendererTest, HelpMixingDeletionAndInsertionUsesTheDiffForm) {
  load("z = foo(a, b, c)\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::WrongArgumentCount, find("foo(a, b, c)"), "foo", "2 arguments", 3)
      .help("call `bar` with two arguments", {{find(", c"), ""}, {find("foo"), "bar"}});
  EXPECT_EQ(render(engine.diagnostics()[0]),
            "error[E0105]: `foo` takes 2 arguments, got 3\n"
            " --> net.mdl:1:5\n"
            "  |\n"
            "1 | z = foo(a, b, c)\n"
            "  |     ^^^^^^^^^^^^\n"
            "  |\n"
            "help: call `bar` with two arguments\n"
            "  |\n"
            "1 - z = foo(a, b, c)\n"
            "1 + z = bar(a, b)\n"
            "\n");
}

TEST_F(TextRendererTest, UnicodeColumnsCountCharacters) {
  // `α` and `β` are two bytes each, `中` three bytes and two columns wide.
  load("let αβ = 中 + bad\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("bad"), "bad")
      .primary("unknown")
      .label(find("中"), "wide")
      .help("use αβ", {{find("bad"), "αβ"}});
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0101]: cannot find `bad` in this scope\n"
                                             " --> net.mdl:1:14\n"
                                             "  |\n"
                                             "1 | let αβ = 中 + bad\n"
                                             "  |          --   ^^^ unknown\n"
                                             "  |          |\n"
                                             "  |          wide\n"
                                             "  |\n"
                                             "help: use αβ\n"
                                             "  |\n"
                                             "1 | let αβ = 中 + αβ\n"
                                             "  |               ~~\n"
                                             "\n");
}

TEST_F(TextRendererTest, TabsAreExpandedToFourColumns) {
  load("\tlet x =\ty\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("y"), "y").primary("here");
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0101]: cannot find `y` in this scope\n"
                                             " --> net.mdl:1:10\n"
                                             "  |\n"
                                             "1 |     let x =    y\n"
                                             "  |                ^ here\n"
                                             "\n");
}

TEST_F(TextRendererTest, MultiLineRangeUnderlinesItsFirstLine) {
  load("let x = (1 +\n    2)\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::TypeMismatch, Range::join(find("(1 +"), find("2)")), "f32", "int")
      .primary("this expression");
  EXPECT_EQ(render(engine.diagnostics()[0]),
            "error[E0502]: mismatched types: expected f32, found int\n"
            " --> net.mdl:1:9\n"
            "  |\n"
            "1 | let x = (1 +\n"
            "  |         ^^^^ this expression\n"
            "\n");
}

TEST_F(TextRendererTest, WarningAndFileLevelHeadlines) {
  load("\xff\n", "bad.mdl");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::InvalidUtf8, Range{});
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0007]: source is not valid UTF-8\n"
                                             " --> bad.mdl\n"
                                             "\n");
  llvm::SourceMgr empty;
  std::string text;
  llvm::raw_string_ostream os(text);
  renderText(engine.diagnostics()[0], empty, os);
  EXPECT_EQ(text, "error[E0007]: source is not valid UTF-8\n\n");
}

TEST_F(TextRendererTest, ColourOnlyWhenAsked) {
  load("x.to(D)\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::RedundantTransfer, find(".to(D)"), "D")
      .primary("already on D")
      .label(find("x"), "on D");
  const Diagnostic &diag = engine.diagnostics()[0];
  EXPECT_EQ(render(diag, /*color=*/false).find('\x1b'), std::string::npos);
  const std::string bold = "\x1b[1m", reset = "\x1b[0m";
  const std::string yellow = "\x1b[0;1;33m", blue = "\x1b[0;1;94m";
  EXPECT_EQ(render(diag, /*color=*/true),
            yellow + "warning[W0310]" + reset + bold +
                ": redundant transfer: value is already on D" + reset + "\n" + " " + blue + "-->" +
                reset + " net.mdl:1:2\n" + "  " + blue + "|" + reset + "\n" + blue + "1" + reset +
                " " + blue + "|" + reset + " x.to(D)\n" + "  " + blue + "|" + reset + " " + blue +
                "-" + reset + yellow + "^^^^^^" + reset + " " + yellow + "already on D" + reset +
                "\n" + "  " + blue + "|" + reset + " " + blue + "|" + reset + "\n" + "  " + blue +
                "|" + reset + " " + blue + "on D" + reset + "\n\n");
}

TEST_F(TextRendererTest, MalformedInputNeverBreaksRendering) {
  // A control character and a truncated UTF-8 sequence show as U+FFFD; a
  // reversed range collapses to its start; a range on "\r" sits at the end.
  load("a\x01\xc3(b)\r\nnext\n");
  DiagnosticEngine engine(sm);
  const char *text = sm.getMemoryBuffer(current_)->getBufferStart();
  Range beyond{llvm::SMLoc::getFromPointer(text - 100), llvm::SMLoc::getFromPointer(text - 90)};
  Range backwards{find("b").end, find("b").begin};
  engine.report(DiagId::UnknownName, find("b"), "b")
      .primary("after garbage")
      .label(beyond, "outside every buffer")
      .label(backwards, "reversed")
      .label(find("\r"), "carriage return")
      .help("outside", {{beyond, "x"}});
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0101]: cannot find `b` in this scope\n"
                                             " --> net.mdl:1:5\n"
                                             "  |\n"
                                             "1 | a\xEF\xBF\xBD\xEF\xBF\xBD(b)\n"
                                             "  |     ^-- carriage return\n"
                                             "  |     ||\n"
                                             "  |     |reversed\n"
                                             "  |     after garbage\n"
                                             "  |\n"
                                             "  = help: outside\n"
                                             "\n");
}

TEST_F(TextRendererTest, NoOpAndOverlappingEditsAreSkipped) {
  load("return a + b\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("b"), "b")
      .help("rename", {{find("a").after(), ""},  // no-op
                       {find("a + b"), "c + d"}, // kept
                       {find("b"), "e"}});       // overlaps the previous edit
  std::string text = render(engine.diagnostics()[0]);
  EXPECT_NE(text.find("1 | return c + d\n"
                      "  |        ~~~~~\n"),
            std::string::npos)
      << text;
}

TEST_F(TextRendererTest, LongLinesShowAWindowAroundTheLabels) {
  // 60 bytes of context either side of the label: " + 中" is 6 of them.
  std::string padding(5000, 'x');
  load("let v = " + padding + " + 中bad + " + padding + "\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("bad"), "bad")
      .primary("unknown")
      .help("rename", {{find("bad"), "ok"}});
  std::string before = "..." + std::string(54, 'x') + " + 中";
  std::string after = " + " + std::string(57, 'x') + "...";
  std::string indent(3 + 54 + 3 + 2, ' '); // "中" is two columns wide
  EXPECT_EQ(render(engine.diagnostics()[0]), "error[E0101]: cannot find `bad` in this scope\n"
                                             " --> net.mdl:1:5013\n"
                                             "  |\n"
                                             "1 | " +
                                                 before + "bad" + after +
                                                 "\n"
                                                 "  | " +
                                                 indent +
                                                 "^^^ unknown\n"
                                                 "  |\n"
                                                 "help: rename\n"
                                                 "  |\n"
                                                 "1 | " +
                                                 before + "ok" + after +
                                                 "\n"
                                                 "  | " +
                                                 indent +
                                                 "~~\n"
                                                 "\n");
}

TEST(TextSummaryTest, Wording) {
  auto summary = [](unsigned errors, unsigned warnings) {
    std::string text;
    llvm::raw_string_ostream os(text);
    renderSummary(errors, warnings, os);
    return text;
  };
  EXPECT_EQ(summary(0, 0), "");
  EXPECT_EQ(summary(1, 0), "error: aborting due to 1 error\n");
  EXPECT_EQ(summary(2, 1), "error: aborting due to 2 errors; 1 warning emitted\n");
  EXPECT_EQ(summary(0, 3), "warning: 3 warnings emitted\n");
}

} // namespace
