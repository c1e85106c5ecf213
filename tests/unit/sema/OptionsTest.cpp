//===- OptionsTest.cpp - Optional state, option arguments, `if` branches --===//

#include "SemaTestSupport.h"

#include "sema/Condition.h"

using namespace modelc;
using namespace modelc::sema;
using namespace modelc::test;

namespace {

std::vector<std::string> stateNames(const InstantiatedModel &m) {
  std::vector<std::string> out;
  for (const InstantiatedState &s : m.state)
    out.push_back(s.name);
  return out;
}

Substitution bind(llvm::ArrayRef<std::pair<llvm::StringRef, int64_t>> values) {
  Substitution s;
  for (const auto &[name, value] : values)
    s.dims.push_back({internSymbol(name), Dim::constant(value)});
  return s;
}

TEST(ConditionTest, EvaluatesComparisonsOfArguments) {
  Dim stride = Dim::symbol("cond_stride"), in = Dim::symbol("cond_in"),
      out = Dim::symbol("cond_out");
  ConditionPtr changes =
      Condition::either(Condition::compare(ast::BinaryOp::Ne, stride, Dim::constant(1)),
                        Condition::compare(ast::BinaryOp::Ne, in, out));
  EXPECT_EQ(changes->evaluate(bind({{"cond_stride", 2}})), true); // decided by one side
  EXPECT_EQ(changes->evaluate(bind({{"cond_stride", 1}})), std::nullopt);
  EXPECT_EQ(changes->evaluate(bind({{"cond_stride", 1}, {"cond_in", 8}, {"cond_out", 8}})), false);
  EXPECT_EQ(Condition::negate(changes)->evaluate(
                bind({{"cond_stride", 1}, {"cond_in", 8}, {"cond_out", 16}})),
            false);
  // Equal polynomials are equal whatever their values.
  EXPECT_EQ(Condition::compare(ast::BinaryOp::Le, in + out, out + in)->evaluate({}), true);
}

TEST(ConditionTest, AssumingABranchFixesArguments) {
  Dim flag = Dim::symbol("cond_flag"), stride = Dim::symbol("cond_stride2"),
      in = Dim::symbol("cond_in2"), out = Dim::symbol("cond_out2");
  ConditionPtr isSet = Condition::compare(ast::BinaryOp::Eq, flag, Dim::constant(1), 2);
  ArgumentFacts facts;
  Condition::negate(isSet)->assume(true, facts); // the `else` of `if flag`
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].second, Dim::constant(0));
  // The `else` of `stride != 1 or in != out`: stride is 1, in is out.
  facts.clear();
  Condition::either(Condition::compare(ast::BinaryOp::Ne, stride, Dim::constant(1)),
                    Condition::compare(ast::BinaryOp::Ne, in, out))
      ->assume(false, facts);
  ASSERT_EQ(facts.size(), 2u);
  EXPECT_EQ(facts[0].second, Dim::constant(1));
  EXPECT_EQ(facts[1].second, out);
  // Its `then` block fixes nothing.
  facts.clear();
  Condition::either(Condition::compare(ast::BinaryOp::Ne, stride, Dim::constant(1)),
                    Condition::compare(ast::BinaryOp::Ne, in, out))
      ->assume(true, facts);
  EXPECT_TRUE(facts.empty());
}

TEST(OptionsTest, OptionalStateFollowsTheArguments) {
  Checked c = checkSource(R"(import std.nn
model Net<D: device>(d: int) {
  plain = nn.Linear(d, d, bias: false)
  full = nn.Linear(d, d)
  norm = nn.LayerNorm(d, elementwise_affine: false)
  bn = nn.BatchNorm2d(d, affine: false)
  fn forward(x: f32[B, d] @ D) -> f32[B, d] @ D {
    return norm(full(plain(x)))
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*c.program().findModel("Net"), {Device::cpu()}, {4}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateNames(*m),
            (std::vector<std::string>{"plain.weight", "full.weight", "full.bias", "bn.running_mean",
                                      "bn.running_var", "bn.num_batches_tracked"}));
  // A buffer with a constant-fill initialiser may be absent from the file.
  EXPECT_EQ(m->state.back().fillValue, 0.0);
  EXPECT_FALSE(m->state.front().fillValue);
}

TEST(OptionsTest, UsingAbsentStateNamesTheArgument) {
  Checked c = checkSource(R"(import std.nn
model Net<D: device>(d: int) {
  fc = nn.Linear(d, d, bias: false)
  fn forward(x: f32[B, d] @ D) -> f32[B, d] @ D {
    return x @ fc.weight.T + fc.bias
  }
}
)");
  EXPECT_EQ(c.codes(), std::vector<std::string>{"E0115"}) << c.dump();
  const Diagnostic *d = c.find("E0115");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->message, "`fc.bias` exists only when `bias` is true");
}

TEST(OptionsTest, StateOfTheSameNameAsItsArgument) {
  // `bias` is the argument in the condition and the submodel's arguments,
  // the state in the expression.
  Checked c = checkSource(R"(import std.nn
model Affine<D: device>(n: int, bias: bool = true) {
  inner = nn.Linear(n, n, bias: bias)
  param weight: f32[n, n]
  if bias {
    param bias: f32[n]
  }
  fn forward(x: f32[B, n] @ D) -> f32[B, n] @ D {
    let y = inner(x) @ weight.T
    if bias {
      y = y + bias
    }
    return y
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> without =
      c.program().instantiate(*c.program().findModel("Affine"), {Device::cpu()}, {3, 0}, error);
  ASSERT_TRUE(without) << error;
  EXPECT_EQ(stateNames(*without), (std::vector<std::string>{"weight", "inner.weight"}));
  std::optional<InstantiatedModel> with =
      c.program().instantiate(*c.program().findModel("Affine"), {Device::cpu()}, {3}, error);
  ASSERT_TRUE(with) << error;
  EXPECT_EQ(stateNames(*with),
            (std::vector<std::string>{"weight", "bias", "inner.weight", "inner.bias"}));
}

TEST(OptionsTest, BranchesAreRecordedForEachInstance) {
  Checked c = checkSource(R"(
model Act<D: device>(activation: "relu" | "gelu" = "relu") {
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    if activation == "gelu" {
      return gelu(x)
    }
    return relu(x)
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *act = c.program().findModel("Act");
  ASSERT_NE(act, nullptr);
  ASSERT_EQ(act->valueParams[0].options, (std::vector<std::string>{"relu", "gelu"}));
  EXPECT_EQ(act->valueParams[0].defaultInt, 0);
  const auto &branch = llvm::cast<ast::IfStmt>(*act->findFn("forward")->decl->body[0]);
  Substitution gelu;
  gelu.dims.push_back({act->valueParams[0].atom, Dim::constant(1)});
  Substitution relu;
  relu.dims.push_back({act->valueParams[0].atom, Dim::constant(0)});
  EXPECT_EQ(c.program().branchTaken(branch, gelu), true);
  EXPECT_EQ(c.program().branchTaken(branch, relu), false);
  EXPECT_EQ(c.program().branchTaken(branch, Substitution()), std::nullopt);
}

TEST(OptionsTest, UnknownOptionsListTheValidOnes) {
  Checked c = checkSource(R"(import std.nn
model Net<D: device>(d: int) {
  layer = nn.TransformerEncoderLayer(d, 2, 4 * d, activation: "tanh")
  fn forward(x: f32[B, T, d] @ D) -> f32[B, T, d] @ D {
    return layer(x)
  }
}
)");
  EXPECT_EQ(c.codes(), std::vector<std::string>{"E0114"}) << c.dump();
  const Diagnostic *d = c.find("E0114");
  ASSERT_NE(d, nullptr);
  ASSERT_FALSE(d->notes.empty());
  EXPECT_EQ(d->notes[0].message, "the options of `activation` are \"relu\" and \"gelu\"");
}

TEST(OptionsTest, EveryBranchIsChecked) {
  // No instance needs to take a branch for its device mistake to be found.
  Checked c = checkSource(R"(
model Head<D: device>(n: int, offload: bool = false) {
  param weight: f32[n, n]
  fn forward(x: f32[B, n] @ D) -> f32[B, n] @ D {
    if offload {
      return (x @ weight.T).to(cpu)
    }
    return x @ weight.T
  }
}
)");
  EXPECT_EQ(c.codes(), std::vector<std::string>{"E0307"}) << c.dump();
}

TEST(OptionsTest, ConditionsOnTensorsAreNotBuildTime) {
  Checked c = checkSource(R"(
model Gate<D: device>(n: int) {
  fn forward(x: f32[B, n] @ D, k: int) -> f32[B, n] @ D {
    if k > 0 {
      return relu(x)
    }
    return x
  }
}
)");
  EXPECT_EQ(c.codes(), std::vector<std::string>{"E0116"}) << c.dump();
}

} // namespace
