//===- DTypeParamsTest.cpp - Models and fns generic over their dtype ------===//
//
// `model Lin(..., dtype: dtype = f32)` with types `dtype[out, in]`: the
// checker keeps the dtype parameter rigid in the model's body, instances
// substitute their argument, and `fn forward<T: dtype>(x: T[...])` binds T
// from each call's argument.
//
//===----------------------------------------------------------------------===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::sema;
using namespace modelc::test;

namespace {

constexpr const char *kLin = R"(
model Lin<D: device>(in: int, out: int, dtype: dtype = f32) {
  param weight: dtype[out, in]
  param bias: dtype[out]
  fn forward(x: dtype[B, in] @ D) -> dtype[B, out] @ D {
    return x @ weight.T + bias
  }
}
)";

/// `source` after kLin, checked.
Checked withLin(const std::string &source) { return checkSource(kLin + source); }

std::vector<std::string> stateLines(const InstantiatedModel &m) {
  std::vector<std::string> out;
  for (const InstantiatedState &s : m.state)
    out.push_back(s.name + ": " + s.type.str());
  return out;
}

TEST(DTypeParamsTest, InstancesSubstituteTheirDtypeThroughLayers) {
  Checked c = withLin(R"(
model Net<D: device>(dtype: dtype = f32) {
  fc1 = Lin(4, 8, dtype: dtype)
  fc2 = Lin(8, 3, dtype: dtype)
  fn forward(x: dtype[B, 4] @ D) -> dtype[B, 3] @ D {
    return fc2(relu(fc1(x)))
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *net = c.program().findModel("Net");
  ASSERT_NE(net, nullptr);
  std::string error;
  std::optional<InstantiatedModel> bf16 =
      c.program().instantiate(*net, {Device::cpu()}, {int64_t(ast::DType::BF16)}, error);
  ASSERT_TRUE(bf16) << error;
  EXPECT_EQ(stateLines(*bf16), (std::vector<std::string>{
                                   "fc1.weight: bf16[8, 4] @ cpu",
                                   "fc1.bias: bf16[8] @ cpu",
                                   "fc2.weight: bf16[3, 8] @ cpu",
                                   "fc2.bias: bf16[3] @ cpu",
                               }));
  EXPECT_EQ(bf16->fns.at(0).params.at(0).type.str(), "bf16[B, 4] @ cpu");
  EXPECT_EQ(bf16->fns.at(0).result.str(), "bf16[B, 3] @ cpu");
  // Left out, the dtype is the default.
  std::optional<InstantiatedModel> f32 = c.program().instantiate(*net, {Device::cpu()}, {}, error);
  ASSERT_TRUE(f32) << error;
  EXPECT_EQ(f32->state.at(0).type.str(), "f32[8, 4] @ cpu");
  // Only a floating dtype can be one.
  EXPECT_FALSE(c.program().instantiate(*net, {Device::cpu()}, {int64_t(ast::DType::I64)}, error));
  EXPECT_NE(error.find("takes a floating dtype"), std::string::npos) << error;
}

TEST(DTypeParamsTest, TheParameterIsRigidInTheBody) {
  auto body = [](const std::string &params, const std::string &expr) {
    return withLin("model M<D: device>(n: int, dtype: dtype = f32) {\n  fn f(" + params +
                   ") -> dtype[n] @ D {\n    return " + expr + "\n  }\n}\n");
  };
  EXPECT_TRUE(body("x: dtype[n] @ D", "relu(x) * 2.0 + x").ok);
  EXPECT_TRUE(body("x: dtype[n] @ D", "x + zeros([n], dtype: dtype)").ok);
  EXPECT_TRUE(body("x: f32[n] @ D", "x.to(dtype)").ok);
  EXPECT_TRUE(body("x: f32[n] @ D", "cast(x, dtype)").ok);
  EXPECT_TRUE(body("x: dtype[n] @ D", "softmax(x, dim: 0)").ok);
  // f32 is not the parameter, whatever the instance will be.
  Checked mixed = body("x: dtype[n] @ D", "x + zeros([n])");
  EXPECT_EQ(mixed.codes(), std::vector<std::string>{"E0201"}) << mixed.dump();
  EXPECT_EQ(mixed.find("E0201")->message, "mismatched dtypes: f32 and `dtype` in `+`");
  Checked result = body("x: f32[n] @ D", "x");
  EXPECT_EQ(result.codes(), std::vector<std::string>{"E0201"}) << result.dump();
  // The parameter is not a dimension.
  EXPECT_EQ(withLin("model M<D: device>(dtype: dtype = f32) { param w: f32[dtype] }").codes(),
            std::vector<std::string>{"E0502"});
}

TEST(DTypeParamsTest, ArgumentsAndDefaults) {
  EXPECT_EQ(withLin("model M<D: device>() { fc = Lin(2, 3, dtype: i64) }").codes(),
            std::vector<std::string>{"E0502"});
  EXPECT_EQ(withLin("model M<D: device>() { fc = Lin(2, 3, dtype: 3) }").codes(),
            std::vector<std::string>{"E0502"});
  EXPECT_EQ(withLin("model M<D: device>(n: int) { fc = Lin(2, 3, dtype: n) }").codes(),
            std::vector<std::string>{"E0502"});
  EXPECT_EQ(withLin("model M<D: device>(dtype: dtype = i32) {}").codes(),
            std::vector<std::string>{"E0502"});
  EXPECT_EQ(withLin("model M<D: device>(dtype: dtype = 1.5) {}").codes(),
            std::vector<std::string>{"E0502"});
  Checked torchName = withLin("model M<D: device>() { fc = Lin(2, 3, dtype: float16) }");
  ASSERT_EQ(torchName.codes(), std::vector<std::string>{"E0101"}) << torchName.dump();
  ASSERT_EQ(torchName.find("E0101")->suggestions.size(), 1u);
  EXPECT_EQ(torchName.find("E0101")->suggestions[0].edits.at(0).replacement, "f16");
  // A default naming an earlier dtype param takes its value.
  Checked chained = withLin(R"(
model M<D: device>(dtype: dtype = bf16, out_dtype: dtype = dtype) {
  fc = Lin(2, 3, dtype: out_dtype)
}
)");
  ASSERT_TRUE(chained.ok) << chained.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      chained.program().instantiate(*chained.program().findModel("M"), {Device::cpu()}, {}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->state.at(0).type.str(), "bf16[3, 2] @ cpu");
  // `type name` in a value param: `dtype` is the one written as a name.
  EXPECT_EQ(checkSource("model M(t: dtyp = f32) {}").codes(), std::vector<std::string>{"E0001"});
}

TEST(DTypeParamsTest, LayerInputMismatchPointsAtBothDtypes) {
  Checked c = withLin(R"(
model Head<D: device>() {
  fc = Lin(4, 3, dtype: bf16)
  fn forward(x: f32[B, 4] @ D) -> bf16[B, 3] @ D {
    return fc(x)
  }
}
)");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0201"}) << c.dump();
  const Diagnostic &d = *c.find("E0201");
  EXPECT_EQ(d.message, "mismatched dtypes: f32 and bf16 in `fc`");
  ASSERT_EQ(d.notes.size(), 2u) << c.dump();
  EXPECT_EQ(d.notes[0].message, "`x` is declared f32 here");
  EXPECT_EQ(d.notes[1].message, "`fc` is built with `dtype: bf16` here");
  ASSERT_EQ(d.suggestions.size(), 2u) << c.dump();
  EXPECT_EQ(d.suggestions[0].message, "convert it with `cast`");
  EXPECT_EQ(d.suggestions[1].message, "or build `fc` with `dtype: f32`");
  EXPECT_EQ(d.suggestions[1].edits.at(0).replacement, "f32");
}

constexpr const char *kAct = R"(
model Act<D: device>() {
  fn forward<T: dtype>(x: T[...] @ D) -> T[...] @ D {
    return relu(x) * 2.0
  }
  fn pair<T: dtype>(a: T[n] @ D, b: T[n] @ D) -> T[n] @ D {
    return a + b
  }
}
)";

TEST(DTypeParamsTest, FnDtypeParamsBindFromEachCall) {
  auto use = [](const std::string &params, const std::string &expr) {
    return checkSource(kAct + std::string("model M<D: device>() {\n  act = Act()\n  fn f(") +
                       params + ") -> bf16[B, 4] @ D {\n    return " + expr + "\n  }\n}\n");
  };
  EXPECT_TRUE(use("x: bf16[B, 4] @ D", "act(x)").ok);
  EXPECT_TRUE(use("x: f32[B, 4] @ D", "act(x).to(bf16)").ok);
  EXPECT_TRUE(use("x: bf16[B, 4] @ D", "act(act(x))").ok);
  // The result follows the argument: f32 in, f32 out.
  EXPECT_EQ(use("x: f32[B, 4] @ D", "act(x)").codes(), std::vector<std::string>{"E0201"});
  // A floating dtype only.
  Checked ints = use("x: i64[B, 4] @ D", "act(x)");
  EXPECT_EQ(ints.codes(), std::vector<std::string>{"E0202"}) << ints.dump();
  // Two arguments of T must agree.
  EXPECT_EQ(checkSource(kAct + std::string(R"(
model M<D: device>() {
  act = Act()
  fn f(a: bf16[4] @ D, b: f16[4] @ D) -> bf16[4] @ D {
    return act.pair(a, b)
  }
}
)"))
                .codes(),
            std::vector<std::string>{"E0201"});
  // T is not a dimension, and some parameter must bind it.
  EXPECT_EQ(checkSource("model M<D: device>() { fn f<T: dtype>(x: T[T] @ D) -> T[T] @ D { "
                        "return x } }")
                .codes()
                .front(),
            "E0502");
  EXPECT_EQ(checkSource("model M<D: device>() { fn f<T: dtype>(x: f32[4] @ D) -> T[4] @ D { "
                        "return cast(x, T) } }")
                .codes(),
            std::vector<std::string>{"E0507"});
  EXPECT_EQ(checkSource("model M<D: device>() { fn f<T: device>(x: f32[4] @ D) {} }").codes(),
            std::vector<std::string>{"E0001"});
}

TEST(DTypeParamsTest, EntryFnDtypeParamsAreF32) {
  Checked c = checkSource(kAct);
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*c.program().findModel("Act"), {Device::cpu()}, {}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->fns.at(0).params.at(0).type.str(), "f32[...] @ cpu");
  EXPECT_EQ(m->fns.at(0).result.str(), "f32[...] @ cpu");
}

} // namespace
