//===- DiagnosticEngineTest.cpp - Reporting, counts, dedupe and sorting ---===//

#include "DiagnosticTestSupport.h"

using namespace modelc;

namespace {

class DiagnosticEngineTest : public modelc::testing::SourceFixture {
protected:
  void SetUp() override { load("let a = b\nlet c = d\nlet e = f\n"); }

  std::vector<std::string> codesAndLines(const DiagnosticEngine &engine) {
    std::vector<std::string> result;
    for (const Diagnostic &d : engine.diagnostics()) {
      Range r = d.primaryRange();
      unsigned line = r.isValid() ? sm.FindLineNumber(r.begin) : 0;
      result.push_back(d.code().str() + "@" + std::to_string(line));
    }
    return result;
  }
};

TEST_F(DiagnosticEngineTest, ReportFormatsTheHeadlineAndCounts) {
  DiagnosticEngine engine(sm);
  engine.report(DiagId::WrongArgumentCount, find("b"), "relu", "1 argument", 2);
  engine.report(DiagId::RedundantTransfer, find("d"), "cuda:0");
  ASSERT_EQ(engine.diagnostics().size(), 2u);
  const Diagnostic &first = engine.diagnostics()[0];
  EXPECT_EQ(first.message, "`relu` takes 1 argument, got 2");
  EXPECT_EQ(first.severity, Severity::Error);
  EXPECT_EQ(first.code(), "E0105");
  ASSERT_EQ(first.labels.size(), 1u);
  EXPECT_TRUE(first.labels[0].primary);
  EXPECT_EQ(first.primaryRange(), find("b"));
  EXPECT_EQ(engine.diagnostics()[1].severity, Severity::Warning);
  EXPECT_EQ(engine.errorCount(), 1u);
  EXPECT_EQ(engine.warningCount(), 1u);
  EXPECT_TRUE(engine.hasErrors());
}

TEST_F(DiagnosticEngineTest, MissingArgumentsStayVisibleInsteadOfCrashing) {
  DiagnosticEngine engine(sm);
  engine.report(DiagId::WrongArgumentCount, find("b"), "relu");
  EXPECT_EQ(engine.diagnostics()[0].message, "`relu` takes {1}, got {2}");
}

TEST_F(DiagnosticEngineTest, BuilderSetsAndMovesThePrimaryLabel) {
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("b"), "b").primary("not found");
  engine.report(DiagId::UnknownName, find("d"), "d")
      .label(find("c"), "declared here")
      .primary(find("f"), "moved");
  const Diagnostic &set = engine.diagnostics()[0];
  ASSERT_EQ(set.labels.size(), 1u);
  EXPECT_EQ(set.labels[0].message, "not found");

  const Diagnostic &moved = engine.diagnostics()[1];
  ASSERT_EQ(moved.labels.size(), 2u);
  EXPECT_TRUE(moved.labels[0].primary);
  EXPECT_EQ(moved.labels[0].range, find("f"));
  EXPECT_EQ(moved.labels[0].message, "moved");
  EXPECT_FALSE(moved.labels[1].primary);
  EXPECT_EQ(moved.primaryRange(), find("f"));
}

TEST_F(DiagnosticEngineTest, NotesAndHelpsAreRecorded) {
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("b"), "b")
      .note("plain")
      .note("located", find("a"), "here")
      .help("rename", {{find("b"), "a"}}, Applicability::MaybeIncorrect)
      .help("advice");
  const Diagnostic &d = engine.diagnostics()[0];
  ASSERT_EQ(d.notes.size(), 2u);
  EXPECT_TRUE(d.notes[0].labels.empty());
  ASSERT_EQ(d.notes[1].labels.size(), 1u);
  EXPECT_EQ(d.notes[1].labels[0].message, "here");
  EXPECT_TRUE(d.notes[1].labels[0].primary);
  ASSERT_EQ(d.suggestions.size(), 2u);
  EXPECT_EQ(d.suggestions[0].applicability, Applicability::MaybeIncorrect);
  ASSERT_EQ(d.suggestions[0].edits.size(), 1u);
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "a");
  EXPECT_TRUE(d.suggestions[1].edits.empty());
}

TEST_F(DiagnosticEngineTest, FileLevelDiagnosticsHaveNoPrimaryRange) {
  DiagnosticEngine engine(sm);
  engine.report(DiagId::InvalidUtf8, Range{});
  EXPECT_TRUE(engine.diagnostics()[0].labels.empty());
  EXPECT_FALSE(engine.diagnostics()[0].primaryRange().isValid());
}

TEST_F(DiagnosticEngineTest, ExactDuplicatesAreDroppedOnce) {
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("b"), "b");
  engine.report(DiagId::UnknownName, find("b"), "b").primary("again"); // same code, same range
  engine.report(DiagId::UnknownMember, find("b"), "x", "b");           // other code: kept
  engine.report(DiagId::UnknownName, find("d"), "d");                  // other range: kept
  engine.report(DiagId::InvalidUtf8, Range{});
  engine.report(DiagId::InvalidUtf8, Range{}); // file-level duplicates too
  EXPECT_EQ(codesAndLines(engine),
            (std::vector<std::string>{"E0101@1", "E0104@1", "E0101@2", "E0007@0"}));
  EXPECT_EQ(engine.errorCount(), 4u);
  EXPECT_EQ(engine.diagnostics()[0].labels[0].message, "") << "the first report wins";

  engine.clear();
  EXPECT_TRUE(engine.diagnostics().empty());
  EXPECT_EQ(engine.errorCount(), 0u);
  engine.report(DiagId::UnknownName, find("b"), "b");
  EXPECT_EQ(engine.diagnostics().size(), 1u) << "clear() forgets what was seen";
}

TEST_F(DiagnosticEngineTest, SortByLocationIsStableAndOrdersBuffers) {
  DiagnosticEngine engine(sm);
  unsigned firstBuffer = current_;
  Range f = find("f"), b = find("b"), d = find("d");
  load("let g = h\n", "other.mdl");
  Range h = find("h");
  engine.report(DiagId::UnknownName, h, "h");
  engine.report(DiagId::UnknownName, f, "f");
  engine.report(DiagId::UnknownMember, d, "x", "d");
  engine.report(DiagId::UnknownName, b, "b");
  engine.report(DiagId::UnknownName, d, "d"); // same position as E0104: keeps report order
  engine.report(DiagId::InvalidUtf8, Range{});
  engine.sortByLocation();
  EXPECT_EQ(codesAndLines(engine), (std::vector<std::string>{"E0007@0", "E0101@1", "E0104@2",
                                                             "E0101@2", "E0101@3", "E0101@1"}));
  EXPECT_EQ(sm.FindBufferContainingLoc(engine.diagnostics().back().primaryRange().begin),
            firstBuffer + 1);
}

} // namespace

namespace {

TEST(FormatHeadlineTest, SubstitutesPlaceholdersByIndex) {
  using modelc::formatHeadline;
  EXPECT_EQ(formatHeadline("missing argument `{1}` in call to `{0}`", {"f", "x"}),
            "missing argument `x` in call to `f`");
  EXPECT_EQ(formatHeadline("{0}{0}", {"ab"}), "abab");
  EXPECT_EQ(formatHeadline("no placeholders", {}), "no placeholders");
  EXPECT_EQ(formatHeadline("", {}), "");
}

TEST(FormatHeadlineTest, LeavesMissingOrMalformedPlaceholdersVisible) {
  using modelc::formatHeadline;
  EXPECT_EQ(formatHeadline("a {0} b {1}", {"x"}), "a x b {1}");
  EXPECT_EQ(formatHeadline("{x} {", {"y"}), "{x} {");
  EXPECT_EQ(formatHeadline("{}", {"y"}), "{}");
  EXPECT_EQ(formatHeadline("{0", {"y"}), "{0");
}

} // namespace
