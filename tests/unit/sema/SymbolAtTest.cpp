//===- SymbolAtTest.cpp - Hovers and definitions from the checker ---------===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::test;

namespace {

const char *kSource = R"(import std.nn

/// Adds noise.
model Noisy<D: device>(n: int) {
  /// The first layer.
  fc1 = nn.Linear(n, 256)
  param gain: f32[256]

  fn forward(x: f32[B, n] @ D) -> f32[B, 256] @ D {
    let h = fc1(x)
    let noise = randn([B, 256])
    return h * gain + noise
  }
}
)";

/// The symbol at the `occurrence`-th appearance of `needle` (plus `offset`).
std::optional<SymbolInfo> at(const Checked &c, llvm::StringRef needle, unsigned occurrence = 0,
                             size_t offset = 0) {
  const ast::Module *main = c.compilation->mainModule();
  llvm::StringRef buffer = c.compilation->sourceMgr().getMemoryBuffer(main->bufferId)->getBuffer();
  size_t pos = buffer.find(needle);
  for (unsigned i = 0; i < occurrence && pos != llvm::StringRef::npos; ++i)
    pos = buffer.find(needle, pos + 1);
  EXPECT_NE(pos, llvm::StringRef::npos) << needle.str();
  return c.compilation->symbolAt(llvm::SMLoc::getFromPointer(buffer.data() + pos + offset));
}

TEST(SymbolAtTest, LocalsShowTheirTypes) {
  Checked c = checkSource(kSource);
  ASSERT_TRUE(c.ok) << c.dump();
  std::optional<SymbolInfo> h = at(c, "h * gain");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "h");
  EXPECT_EQ(h->type, "f32[B, 256] @ D");
  ASSERT_TRUE(h->definition);
  EXPECT_EQ(h->definition->text(), "h");
  // The declaration itself.
  std::optional<SymbolInfo> decl = at(c, "h = fc1");
  ASSERT_TRUE(decl);
  EXPECT_EQ(decl->type, "f32[B, 256] @ D");
}

TEST(SymbolAtTest, InferredDevicesSayWhereFrom) {
  Checked c = checkSource(kSource);
  std::optional<SymbolInfo> noise = at(c, "noise\n");
  ASSERT_TRUE(noise);
  EXPECT_EQ(noise->type, "f32[B, 256] @ D");
  EXPECT_EQ(noise->deviceOrigin, "inferred from `h * gain + noise` at 12:12")
      << noise->deviceOrigin;
}

TEST(SymbolAtTest, StateSubmodelsAndModels) {
  Checked c = checkSource(kSource);
  std::optional<SymbolInfo> gain = at(c, "gain + noise");
  ASSERT_TRUE(gain);
  EXPECT_EQ(gain->type, "f32[256] @ D");
  ASSERT_TRUE(gain->definition);
  EXPECT_EQ(gain->definition->text(), "gain");

  std::optional<SymbolInfo> fc1 = at(c, "fc1(x)");
  ASSERT_TRUE(fc1);
  EXPECT_EQ(fc1->name, "fc1");
  EXPECT_EQ(fc1->type, "model Linear<D>");
  EXPECT_EQ(fc1->doc, "The first layer.");

  // `Linear` in `nn.Linear(...)` goes to the stdlib.
  std::optional<SymbolInfo> linear = at(c, "Linear(n, 256)");
  ASSERT_TRUE(linear);
  ASSERT_TRUE(linear->definition);
  EXPECT_EQ(linear->definition->text(), "Linear");
  unsigned buffer = c.compilation->sourceMgr().FindBufferContainingLoc(linear->definition->begin);
  EXPECT_NE(
      c.compilation->sourceMgr().getMemoryBuffer(buffer)->getBufferIdentifier().find("nn.mdl"),
      llvm::StringRef::npos);

  std::optional<SymbolInfo> model = at(c, "Noisy");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->type, "model Noisy");
  EXPECT_EQ(model->doc, "Adds noise.");
}

TEST(SymbolAtTest, ParametersAndNothing) {
  Checked c = checkSource(kSource);
  std::optional<SymbolInfo> x = at(c, "x)\n");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->type, "f32[B, n] @ D");
  EXPECT_EQ(x->deviceOrigin, "from the fn parameter declared at 9:29");
  EXPECT_FALSE(at(c, "import"));
}

} // namespace
