//===- JsonRendererTest.cpp - The JSON document and its positions ---------===//

#include "DiagnosticTestSupport.h"

#include "diagnostics/JsonRenderer.h"

using namespace modelc;
using llvm::json::Value;

namespace llvm::json {
// Lets GoogleTest print JSON values readably when a comparison fails.
void PrintTo(const Value &value, std::ostream *os) { *os << llvm::formatv("{0:2}", value).str(); }
} // namespace llvm::json

namespace {

class JsonRendererTest : public modelc::testing::SourceFixture {
protected:
  /// The JSON of `diags`, printed and parsed back, as a client would see it.
  Value roundTrip(llvm::ArrayRef<Diagnostic> diags) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << diagnosticsToJson(diags, sm);
    llvm::Expected<Value> parsed = llvm::json::parse(text);
    EXPECT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    return parsed ? std::move(*parsed) : Value(nullptr);
  }

  static Value position(int64_t line, int64_t column, int64_t offset) {
    return llvm::json::Object{{"line", line}, {"column", column}, {"offset", offset}};
  }
};

TEST_F(JsonRendererTest, FullDocument) {
  load("let x = a\n  return weight @ x + bias\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::DeviceMismatch, find("bias"), "+")
      .primary("f32[out] @ cpu")
      .label(find("weight @ x"), "f32[B, out] @ cuda:0")
      .note("`bias` is declared on cpu", find("a"), "declared here")
      .note("plain")
      .help("move `bias` to cuda:0", {{find("bias").after(), ".to(cuda:0)"}})
      .help("or declare it on cuda:0", {}, Applicability::MaybeIncorrect);
  engine.report(DiagId::RedundantTransfer, find("x", 1), "D");

  Value expected = llvm::json::Object{
      {"version", 1},
      {"errors", 1},
      {"warnings", 1},
      {"diagnostics",
       llvm::json::Array{
           llvm::json::Object{
               {"code", "E0301"},
               {"severity", "error"},
               {"message", "operands of `+` are on different devices"},
               {"labels", llvm::json::Array{llvm::json::Object{{"file", "net.mdl"},
                                                               {"primary", true},
                                                               {"message", "f32[out] @ cpu"},
                                                               {"start", position(2, 23, 32)},
                                                               {"end", position(2, 27, 36)}},
                                            llvm::json::Object{{"file", "net.mdl"},
                                                               {"primary", false},
                                                               {"message", "f32[B, out] @ cuda:0"},
                                                               {"start", position(2, 10, 19)},
                                                               {"end", position(2, 20, 29)}}}},
               {"notes",
                llvm::json::Array{
                    llvm::json::Object{{"message", "`bias` is declared on cpu"},
                                       {"labels", llvm::json::Array{llvm::json::Object{
                                                      {"file", "net.mdl"},
                                                      {"primary", true},
                                                      {"message", "declared here"},
                                                      {"start", position(1, 9, 8)},
                                                      {"end", position(1, 10, 9)}}}}},
                    llvm::json::Object{{"message", "plain"}, {"labels", llvm::json::Array{}}}}},
               {"suggestions",
                llvm::json::Array{
                    llvm::json::Object{{"message", "move `bias` to cuda:0"},
                                       {"applicability", "machine-applicable"},
                                       {"edits", llvm::json::Array{llvm::json::Object{
                                                     {"file", "net.mdl"},
                                                     {"start", position(2, 27, 36)},
                                                     {"end", position(2, 27, 36)},
                                                     {"replacement", ".to(cuda:0)"}}}}},
                    llvm::json::Object{{"message", "or declare it on cuda:0"},
                                       {"applicability", "maybe-incorrect"},
                                       {"edits", llvm::json::Array{}}}}}},
           llvm::json::Object{
               {"code", "W0310"},
               {"severity", "warning"},
               {"message", "redundant transfer: value is already on D"},
               {"labels", llvm::json::Array{llvm::json::Object{{"file", "net.mdl"},
                                                               {"primary", true},
                                                               {"message", ""},
                                                               {"start", position(2, 19, 28)},
                                                               {"end", position(2, 20, 29)}}}},
               {"notes", llvm::json::Array{}},
               {"suggestions", llvm::json::Array{}}}}}};
  EXPECT_EQ(roundTrip(engine.diagnostics()), expected);
}

TEST_F(JsonRendererTest, ColumnsCountCharactersAndOffsetsCountBytes) {
  load("let αβ = 中 + bad\n");
  DiagnosticEngine engine(sm);
  engine.report(DiagId::UnknownName, find("bad"), "bad");
  Value json = diagnosticToJson(engine.diagnostics()[0], sm);
  const llvm::json::Object *label = json.getAsObject()->getArray("labels")->front().getAsObject();
  EXPECT_EQ(*label->get("start"), position(1, 14, 17));
  EXPECT_EQ(*label->get("end"), position(1, 17, 20));
}

TEST_F(JsonRendererTest, FileLevelAndUnresolvableLocations) {
  load("x\n");
  DiagnosticEngine engine(sm);
  const char *text = sm.getMemoryBuffer(current_)->getBufferStart();
  Range nowhere{llvm::SMLoc::getFromPointer(text - 64), llvm::SMLoc::getFromPointer(text - 60)};
  engine.report(DiagId::InvalidUtf8, Range{})
      .label(nowhere, "dropped")
      .help("re-encode", {{nowhere, "y"}});
  Value json = diagnosticToJson(engine.diagnostics()[0], sm);
  const llvm::json::Object &object = *json.getAsObject();
  EXPECT_TRUE(object.getArray("labels")->empty());
  EXPECT_TRUE(object.getArray("suggestions")->front().getAsObject()->getArray("edits")->empty());
  EXPECT_EQ(object.getString("code"), "E0007");
}

TEST_F(JsonRendererTest, EmptyDocument) {
  EXPECT_EQ(
      roundTrip({}),
      Value(llvm::json::Object{
          {"version", 1}, {"diagnostics", llvm::json::Array{}}, {"errors", 0}, {"warnings", 0}}));
}

TEST_F(JsonRendererTest, EndOfFileAndLineEnds) {
  load("ab\r\ncd");
  DiagnosticEngine engine(sm);
  const char *text = sm.getMemoryBuffer(current_)->getBufferStart();
  Range eof{llvm::SMLoc::getFromPointer(text + 6), llvm::SMLoc::getFromPointer(text + 6)};
  engine.report(DiagId::UnexpectedToken, eof, "`}`", "end of file");
  engine.report(DiagId::UnexpectedToken, find("\r\n"), "`;`", "newline");
  Value first = diagnosticToJson(engine.diagnostics()[0], sm);
  const llvm::json::Object *atEof = first.getAsObject()->getArray("labels")->front().getAsObject();
  EXPECT_EQ(*atEof->get("start"), position(2, 3, 6));
  Value second = diagnosticToJson(engine.diagnostics()[1], sm);
  const llvm::json::Object *atLineEnd =
      second.getAsObject()->getArray("labels")->front().getAsObject();
  EXPECT_EQ(*atLineEnd->get("start"), position(1, 3, 2));
  EXPECT_EQ(*atLineEnd->get("end"), position(2, 1, 4));
}

} // namespace
