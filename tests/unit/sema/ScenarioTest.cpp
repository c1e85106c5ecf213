//===- ScenarioTest.cpp - The device bugs that must not compile -----------===//
//
// Each examples/device-bugs/*.mdl is a PyTorch run-time device error that
// modelc reports at compile time; each *.fixed.mdl twin checks clean.
//
//===----------------------------------------------------------------------===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::test;

namespace {

std::string example(llvm::StringRef name) {
  return std::string(MODELC_SOURCE_DIR) + "/examples/device-bugs/" + name.str() + ".mdl";
}

const Label *secondaryLabel(const Diagnostic &d) {
  for (const Label &l : d.labels)
    if (!l.primary)
      return &l;
  return nullptr;
}

bool hasNote(const Diagnostic &d, llvm::StringRef text) {
  return llvm::any_of(d.notes,
                      [&](const Note &n) { return llvm::StringRef(n.message).contains(text); });
}

const Suggestion *helpWith(const Diagnostic &d, llvm::StringRef replacement) {
  for (const Suggestion &s : d.suggestions)
    for (const Edit &e : s.edits)
      if (e.replacement == replacement)
        return &s;
  return nullptr;
}

TEST(ScenarioTest, FixedTwinsCheckClean) {
  for (const char *name :
       {"01-bias-on-cpu", "01-bias-on-cpu-generic", "02a-randn-no-device",
        "02b-randn-device-conflict", "03-submodel-in-forward", "04-buffer-pinned-cpu",
        "05a-conv-input-on-cpu", "05b-conv-input-f16", "06a-two-gpus", "06b-class-weight-device",
        "07-embedding-table-on-cpu", "08-redundant-to"}) {
    Checked c = checkFile(example(std::string(name) + ".fixed"));
    EXPECT_TRUE(c.ok) << name << "\n" << c.dump();
    EXPECT_TRUE(c.diagnostics().empty()) << name << "\n" << c.dump();
  }
}

TEST(ScenarioTest, BiasOnCpu) {
  Checked c = checkFile(example("01-bias-on-cpu"));
  ASSERT_FALSE(c.ok);
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.message, "operands of `+` are on different devices");
  EXPECT_EQ(d.primaryRange().text(), "bias.unsqueeze(1)");
  EXPECT_EQ(d.labels.front().message, "f32[out, 1] @ cpu");
  ASSERT_NE(secondaryLabel(d), nullptr);
  EXPECT_EQ(secondaryLabel(d)->range.text(), "weight @ x");
  EXPECT_EQ(secondaryLabel(d)->message, "f32[out, B] @ cuda:0");
  EXPECT_TRUE(hasNote(d, "`bias` is declared on cpu here")) << c.dump();
  EXPECT_TRUE(hasNote(d, "`weight` is declared on cuda:0 here")) << c.dump();
  // First fix: the declaration; the alternative: a transfer.
  ASSERT_GE(d.suggestions.size(), 2u);
  ASSERT_EQ(d.suggestions[0].edits.size(), 1u);
  EXPECT_EQ(d.suggestions[0].edits[0].range.text(), "cpu");
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "cuda:0");
  const Suggestion *to = helpWith(d, ".to(cuda:0)");
  ASSERT_NE(to, nullptr);
  EXPECT_EQ(to->applicability, Applicability::MachineApplicable);
  EXPECT_NE(applyEdits(c, *to).find("bias.unsqueeze(1).to(cuda:0)"), std::string::npos);
}

TEST(ScenarioTest, BiasOnCpuInGenericModel) {
  Checked c = checkFile(example("01-bias-on-cpu-generic"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.primaryRange().text(), "bias");
  EXPECT_EQ(d.labels.front().message, "f32[out] @ cpu");
  EXPECT_EQ(secondaryLabel(d)->message, "f32[B, out] @ D");
  EXPECT_TRUE(hasNote(d, "`bias` is declared on cpu here"));
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "D");
  EXPECT_NE(helpWith(d, ".to(D)"), nullptr);
}

TEST(ScenarioTest, RandnWithNoInferableDevice) {
  Checked c = checkFile(example("02a-randn-no-device"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0302"}) << c.dump();
  const Diagnostic &d = *c.find("E0302");
  EXPECT_EQ(d.message, "cannot infer the device of `randn([4, n])`");
  EXPECT_EQ(d.primaryRange().text(), "randn([4, n])");
  const Suggestion *place = helpWith(d, " @ D");
  ASSERT_NE(place, nullptr);
  EXPECT_NE(applyEdits(c, *place).find("randn([4, n]) @ D"), std::string::npos);
}

TEST(ScenarioTest, RandnPlacementConflictsWithUse) {
  Checked c = checkFile(example("02b-randn-device-conflict"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0303"}) << c.dump();
  const Diagnostic &d = *c.find("E0303");
  EXPECT_EQ(d.message, "`randn([B, n])` is placed on cpu but used on cuda:0");
  EXPECT_EQ(d.primaryRange().text(), "randn([B, n]) @ cpu");
  // Labels point at the use of the placed value and at the other operand.
  bool labelsUse = llvm::any_of(d.labels, [](const Label &l) { return l.range.text() == "noise"; });
  bool labelsX = llvm::any_of(d.labels, [](const Label &l) { return l.range.text() == "x"; });
  EXPECT_TRUE(labelsUse && labelsX) << c.dump();
  const Suggestion *remove = helpWith(d, "");
  ASSERT_NE(remove, nullptr);
  EXPECT_NE(applyEdits(c, *remove).find("let noise = randn([B, n])\n"), std::string::npos);
}

TEST(ScenarioTest, SubmodelCreatedInForward) {
  Checked c = checkFile(example("03-submodel-in-forward"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0304"}) << c.dump();
  const Diagnostic &d = *c.find("E0304");
  EXPECT_EQ(d.message, "submodel `proj` is created inside `fn forward`");
  EXPECT_EQ(d.primaryRange().text(), "nn.Linear(in, out)");
  EXPECT_TRUE(hasNote(d, "not placed with the model"));
  ASSERT_EQ(d.suggestions.size(), 1u);
  std::string fixed = applyEdits(c, d.suggestions[0]);
  EXPECT_NE(fixed.find("  proj = nn.Linear(in, out)\n  fn forward"), std::string::npos) << fixed;
  EXPECT_EQ(fixed.find("let proj"), std::string::npos) << fixed;
  // The edited program checks clean.
  Checked again = checkSource(fixed);
  EXPECT_TRUE(again.ok) << again.dump();
}

TEST(ScenarioTest, BufferPinnedToCpu) {
  Checked c = checkFile(example("04-buffer-pinned-cpu"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.message, "operands of `-` are on different devices");
  EXPECT_EQ(d.primaryRange().text(), "mean");
  EXPECT_EQ(d.labels.front().message, "f32[c] @ cpu");
  EXPECT_EQ(secondaryLabel(d)->message, "f32[B, c] @ D");
  EXPECT_TRUE(hasNote(d, "`mean` is declared on cpu here"));
  EXPECT_TRUE(hasNote(d, "`x` is a fn parameter declared on D here"));
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "D");
}

TEST(ScenarioTest, ConvInputOnCpu) {
  Checked c = checkFile(example("05a-conv-input-on-cpu"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.message, "operands of `conv2d` are on different devices");
  EXPECT_EQ(d.primaryRange().text(), "x");
  EXPECT_EQ(d.labels.front().message, "f32[N, cin, 32, 32] @ cpu");
  EXPECT_EQ(secondaryLabel(d)->range.text(), "weight");
  EXPECT_NE(helpWith(d, ".to(cuda:0)"), nullptr);
}

TEST(ScenarioTest, ConvInputF16) {
  Checked c = checkFile(example("05b-conv-input-f16"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0201"}) << c.dump();
  const Diagnostic &d = *c.find("E0201");
  EXPECT_EQ(d.message, "mismatched dtypes: f16 and f32 in `conv2d`");
  EXPECT_EQ(d.primaryRange().text(), "x");
  const Suggestion *cast = helpWith(d, ", f32)");
  ASSERT_NE(cast, nullptr);
  EXPECT_NE(applyEdits(c, *cast).find("conv2d(cast(x, f32), weight"), std::string::npos);
}

TEST(ScenarioTest, TwoGpus) {
  Checked c = checkFile(example("06a-two-gpus"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.primaryRange().text(), "b");
  EXPECT_EQ(d.labels.front().message, "f32[B, d] @ cuda:1");
  EXPECT_EQ(secondaryLabel(d)->message, "f32[B, d] @ cuda:0");
  EXPECT_TRUE(hasNote(d, "pinned to cuda:1")) << c.dump();
  EXPECT_NE(helpWith(d, ".to(cuda:0)"), nullptr);
}

TEST(ScenarioTest, ClassWeightOnAnotherDevice) {
  Checked c = checkFile(example("06b-class-weight-device"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.message, "operands of `cross_entropy` are on different devices");
  EXPECT_EQ(d.primaryRange().text(), "class_weight");
  EXPECT_EQ(d.labels.front().message, "f32[classes] @ cpu");
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "D");
}

TEST(ScenarioTest, EmbeddingTableOnCpu) {
  Checked c = checkFile(example("07-embedding-table-on-cpu"));
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0301"}) << c.dump();
  const Diagnostic &d = *c.find("E0301");
  EXPECT_EQ(d.message, "operands of `embedding` are on different devices");
  // The fn returns on cuda:0, so the table is the one to move (moving the
  // tokens to the cpu would return on the cpu: E0307).
  EXPECT_EQ(d.primaryRange().text(), "table");
  EXPECT_EQ(d.labels.front().message, "f32[vocab, dim] @ cpu");
  EXPECT_EQ(secondaryLabel(d)->range.text(), "tokens");
  EXPECT_EQ(secondaryLabel(d)->message, "i64[B, T] @ cuda:0");
  EXPECT_TRUE(hasNote(d, "`table` is declared on cpu here"));
  EXPECT_TRUE(hasNote(d, "`tokens` is a fn parameter declared on cuda:0 here"));
  const Suggestion *to = helpWith(d, ".to(cuda:0)");
  ASSERT_NE(to, nullptr);
  EXPECT_NE(applyEdits(c, *to).find("embedding(tokens, table.to(cuda:0))"), std::string::npos);
}

TEST(ScenarioTest, RedundantTransfer) {
  Checked c = checkFile(example("08-redundant-to"));
  EXPECT_TRUE(c.ok); // a warning only
  ASSERT_EQ(c.codes(), std::vector<std::string>{"W0310"}) << c.dump();
  const Diagnostic &d = *c.find("W0310");
  EXPECT_EQ(d.message, "redundant transfer: value is already on D");
  EXPECT_EQ(d.primaryRange().text(), ".to(D)");
  ASSERT_EQ(d.suggestions.size(), 1u);
  EXPECT_EQ(d.suggestions[0].applicability, Applicability::MachineApplicable);
  EXPECT_NE(applyEdits(c, d.suggestions[0]).find("return x * gain"), std::string::npos);
}

TEST(ScenarioTest, ReferenceExamplesCheckClean) {
  for (const char *name : {"mlp", "mlp_block", "lenet5", "pipeline"}) {
    Checked c = checkFile(std::string(MODELC_SOURCE_DIR) + "/examples/" + name + ".mdl");
    EXPECT_TRUE(c.ok) << name << "\n" << c.dump();
    EXPECT_TRUE(c.diagnostics().empty()) << name << "\n" << c.dump();
  }
}

} // namespace
