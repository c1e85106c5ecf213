//===- LoopsTest.cpp - `for` over ranges, carried state, indexed writes ---===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::test;

namespace {

/// `body` as the body of `fn forward(x: f32[B, T, i] @ D) -> f32[B, h] @ D`
/// of a model with a weight `w: f32[h, i]`.
Checked checkRnn(llvm::StringRef body, llvm::StringRef result = "f32[B, h] @ D") {
  std::string src = "model Rnn<D: device>(i: int, h: int, steps: int) {\n"
                    "  param w: f32[h, i]\n"
                    "  param u: f32[h, h]\n"
                    "  fn forward(x: f32[B, T, i] @ D) -> " +
                    result.str() + " {\n" + body.str() + "\n  }\n}\n";
  return checkSource(src);
}

TEST(LoopsTest, RangeOverAnInputDimCarriesState) {
  Checked c = checkRnn("    let state = zeros([B, h])\n"
                       "    for t in 0..T {\n"
                       "      state = tanh(x[:, t] @ w.T + state @ u.T)\n"
                       "    }\n"
                       "    return state");
  EXPECT_TRUE(c.ok) << c.dump();
}

TEST(LoopsTest, RangeBoundsAreIntsOfAnyKind) {
  // A model argument, arithmetic on dims, and the loop variable in int
  // arithmetic as an index.
  Checked c = checkRnn("    let state = x[:, 0] @ w.T\n"
                       "    for k in 1..steps * 2 {\n"
                       "      state = tanh(state @ u.T)\n"
                       "    }\n"
                       "    for t in 0..T - 1 {\n"
                       "      state = state + x[:, T - 1 - t] @ w.T\n"
                       "    }\n"
                       "    return state");
  EXPECT_TRUE(c.ok) << c.dump();
  Checked notInt = checkRnn("    for t in 0..x {\n    }\n    return x[:, 0] @ w.T");
  EXPECT_EQ(notInt.codes(), std::vector<std::string>{"E0502"}) << notInt.dump();
}

TEST(LoopsTest, TheLoopVariableIsAnIndexNotASize) {
  // `x[:, t]` drops the dim; `t:t + 1` keeps one element.
  Checked c = checkRnn("    let state = zeros([B, h])\n"
                       "    for t in 0..T {\n"
                       "      let step: f32[B, 1, i] = x[:, t:t + 1]\n"
                       "      state = state + reshape(step, [B, i]) @ w.T\n"
                       "    }\n"
                       "    return state");
  EXPECT_TRUE(c.ok) << c.dump();
  // It is not a `let` variable: it cannot be re-bound.
  Checked assign = checkRnn("    for t in 0..T {\n      t = 1\n    }\n    return x[:, 0] @ w.T");
  EXPECT_EQ(assign.codes(), std::vector<std::string>{"E0111"}) << assign.dump();
}

TEST(LoopsTest, ACarriedValueKeepsItsType) {
  Checked shape = checkRnn("    let state = zeros([B, h])\n"
                           "    for t in 0..T {\n"
                           "      state = concat([state, x[:, t] @ w.T], dim: 1)\n"
                           "    }\n"
                           "    return state");
  EXPECT_EQ(shape.codes(), std::vector<std::string>{"E0520"}) << shape.dump();
  Checked dtype = checkRnn("    let state = zeros([B, h])\n"
                           "    for t in 0..T {\n"
                           "      state = cast(state, f16)\n"
                           "    }\n"
                           "    return state");
  EXPECT_EQ(dtype.codes(), std::vector<std::string>{"E0520"}) << dtype.dump();
  // A `let` of the body is new each iteration: not carried, any type.
  Checked local = checkRnn("    let state = zeros([B, h])\n"
                           "    for t in 0..T {\n"
                           "      let wide = concat([state, state], dim: 1)\n"
                           "      wide = wide * 2\n"
                           "      state = wide[:, 0:h]\n"
                           "    }\n"
                           "    return state");
  EXPECT_TRUE(local.ok) << local.dump();
  // Outside a loop the old rule (E0408) applies.
  Checked outside = checkRnn("    let state = zeros([B, h])\n"
                             "    state = concat([state, state], dim: 1)\n"
                             "    return state");
  EXPECT_EQ(outside.codes(), std::vector<std::string>{"E0408"}) << outside.dump();
}

TEST(LoopsTest, DeviceRulesHoldInsideLoops) {
  // A state created in the body that nothing places: E0302 as anywhere.
  Checked created = checkRnn("    let out = x[:, 0] @ w.T\n"
                             "    for t in 0..T {\n"
                             "      let state = zeros([B, h])\n"
                             "      out = out + x[:, t] @ w.T\n"
                             "    }\n"
                             "    return out");
  EXPECT_EQ(created.codes(), std::vector<std::string>{"E0302"}) << created.dump();
  // A carried state moved to another device changes its type.
  Checked moved = checkRnn("    let state = zeros([B, h])\n"
                           "    for t in 0..T {\n"
                           "      state = (state + x[:, t] @ w.T).to(cpu)\n"
                           "    }\n"
                           "    return state");
  EXPECT_EQ(moved.codes(), std::vector<std::string>{"E0502"}) << moved.dump();
}

TEST(LoopsTest, WritingPartOfATensor) {
  Checked c = checkRnn("    let out = zeros([B, T, h])\n"
                       "    for t in 0..T {\n"
                       "      out[:, t] = tanh(x[:, t] @ w.T)\n"
                       "    }\n"
                       "    return out",
                       "f32[B, T, h] @ D");
  EXPECT_TRUE(c.ok) << c.dump();
  Checked shape = checkRnn("    let out = zeros([B, T, h])\n"
                           "    for t in 0..T {\n"
                           "      out[:, t] = x[:, t]\n"
                           "    }\n"
                           "    return out",
                           "f32[B, T, h] @ D");
  EXPECT_EQ(shape.codes(), std::vector<std::string>{"E0408"}) << shape.dump();
  // (`out` placed on D: an unplaced `zeros` would take the written device.)
  Checked device = checkRnn("    let out = zeros([B, T, h]) @ D\n"
                            "    for t in 0..T {\n"
                            "      out[:, t] = (x[:, t] @ w.T).to(cpu)\n"
                            "    }\n"
                            "    return out",
                            "f32[B, T, h] @ D");
  EXPECT_EQ(device.codes(), std::vector<std::string>{"E0502"}) << device.dump();
  Checked param =
      checkRnn("    for t in 0..T {\n      w[0] = x[0, t]\n    }\n    return x[:, 0] @ w.T");
  EXPECT_EQ(param.codes(), std::vector<std::string>{"E0111"}) << param.dump();
}

} // namespace
