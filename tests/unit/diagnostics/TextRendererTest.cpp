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

} // namespace
