//===- RenderRobustnessTest.cpp - Arbitrary ranges never break rendering --===//
//
// Builds diagnostics with ranges at random offsets (inside characters,
// reversed, across lines, at the end of the buffer, outside it) over
// hostile sources, and checks that both renderers finish with well-formed
// output.
//
//===----------------------------------------------------------------------===//

#include "DiagnosticTestSupport.h"

#include "diagnostics/JsonRenderer.h"

#include <random>

using namespace modelc;

namespace {

class RenderRobustnessTest : public modelc::testing::SourceFixture {
protected:
  /// A range with ends at random offsets in [-8, size + 8) of the buffer.
  Range randomRange(std::mt19937 &rng) {
    const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(current_);
    long size = long(buffer->getBufferSize());
    std::uniform_int_distribution<long> offset(-8, size + 8);
    auto at = [&](long o) { return llvm::SMLoc::getFromPointer(buffer->getBufferStart() + o); };
    long begin = offset(rng), end = begin + std::uniform_int_distribution<long>(-3, 40)(rng);
    // Pointers outside the buffer are only formed, never read, by the library.
    return {at(begin), at(end)};
  }

  void renderRandomDiagnostics(unsigned seed) {
    std::mt19937 rng(seed);
    DiagnosticEngine engine(sm);
    for (int i = 0; i < 40; ++i) {
      DiagnosticBuilder b = engine.report(DiagId::DeviceMismatch, randomRange(rng), "+");
      b.primary("primary label");
      for (int j = 0, n = int(rng() % 4); j < n; ++j)
        b.label(randomRange(rng), j % 2 ? "" : "secondary\nwith a newline");
      if (rng() % 2)
        b.note("located note", randomRange(rng), "here");
      b.note("plain note");
      std::vector<Edit> edits;
      for (int j = 0, n = int(rng() % 4); j < n; ++j)
        edits.push_back({randomRange(rng), rng() % 3 ? "inserted\ttext\nnext" : ""});
      b.help("apply this", std::move(edits));
    }
    engine.sortByLocation();
    for (bool color : {false, true}) {
      std::string text;
      llvm::raw_string_ostream os(text);
      renderTextAll(engine.diagnostics(), sm, os, TextRenderOptions{color});
      EXPECT_NE(text.find("error[E0301]"), std::string::npos);
    }
    std::string json;
    llvm::raw_string_ostream os(json);
    os << diagnosticsToJson(engine.diagnostics(), sm);
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  }
};

TEST_F(RenderRobustnessTest, MixedUnicodeTabsAndCrlf) {
  load("model M<D: device>() {\r\n\tlet π = 中文 + \"é\"\r\n\r\n  x\t=\ty\n}");
  for (unsigned seed = 0; seed < 20; ++seed)
    renderRandomDiagnostics(seed);
}

TEST_F(RenderRobustnessTest, InvalidUtf8AndControlBytes) {
  load(std::string("\xff\xfe\x80\x01\x00\x1b[31m\xe2\x82\n\xc3\n\n\x7f", 16));
  for (unsigned seed = 0; seed < 20; ++seed)
    renderRandomDiagnostics(seed);
}

TEST_F(RenderRobustnessTest, EmptyAndOneLineBuffers) {
  load("");
  renderRandomDiagnostics(1);
  load(std::string(3000, 'x'));
  for (unsigned seed = 0; seed < 10; ++seed)
    renderRandomDiagnostics(seed);
}

} // namespace
