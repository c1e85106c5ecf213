//===- InstantiateTest.cpp - Concrete models and state_dict names ---------===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::sema;
using namespace modelc::test;

namespace {

std::vector<std::string> stateLines(const InstantiatedModel &m) {
  std::vector<std::string> out;
  for (const InstantiatedState &s : m.state)
    out.push_back(s.name + ": " + s.type.str() + (s.isBuffer ? " (buffer)" : ""));
  return out;
}

TEST(InstantiateTest, MlpOnCuda) {
  Checked c = checkFile(std::string(MODELC_SOURCE_DIR) + "/examples/mlp.mdl");
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *mlp = c.program().findModel("Mlp");
  ASSERT_NE(mlp, nullptr);
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*mlp, {Device::cuda(0)}, {784, 256, 10}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateLines(*m), (std::vector<std::string>{
                                "fc1.weight: f32[256, 784] @ cuda:0",
                                "fc1.bias: f32[256] @ cuda:0",
                                "fc2.weight: f32[10, 256] @ cuda:0",
                                "fc2.bias: f32[10] @ cuda:0",
                            }));
  const FnInfo *forward = nullptr;
  for (const FnInfo &f : m->fns)
    if (f.name == "forward")
      forward = &f;
  ASSERT_NE(forward, nullptr);
  ASSERT_EQ(forward->params.size(), 1u);
  EXPECT_EQ(forward->params[0].type.str(), "f32[B, 784] @ cuda:0");
  EXPECT_EQ(forward->result.str(), "f32[B, 10] @ cuda:0");
}

TEST(InstantiateTest, PinnedSubmodelsKeepTheirDevices) {
  Checked c = checkFile(std::string(MODELC_SOURCE_DIR) + "/examples/pipeline.mdl");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*c.program().findModel("Pipeline"), {}, {8, 16, 4}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateLines(*m), (std::vector<std::string>{
                                "enc.proj.weight: f32[16, 8] @ cuda:0",
                                "enc.proj.bias: f32[16] @ cuda:0",
                                "dec.proj.weight: f32[4, 16] @ cuda:1",
                                "dec.proj.bias: f32[4] @ cuda:1",
                            }));
}

TEST(InstantiateTest, DefaultsListsAndBuffers) {
  Checked c = checkSource(R"(import std.nn
model Block<D: device>(d: int) {
  buffer scale: f32[d]
  attn = nn.Linear(d, d * 3)
}
model Net<D: device>(d: int = 4, layers: int = 2) {
  blocks = [Block(d), Block(d)]
  head = nn.Conv2d(d, 8, 3, padding: 1)
})");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*c.program().findModel("Net"), {Device::cpu()}, {}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateLines(*m), (std::vector<std::string>{
                                "blocks.0.scale: f32[4] @ cpu (buffer)",
                                "blocks.0.attn.weight: f32[12, 4] @ cpu",
                                "blocks.0.attn.bias: f32[12] @ cpu",
                                "blocks.1.scale: f32[4] @ cpu (buffer)",
                                "blocks.1.attn.weight: f32[12, 4] @ cpu",
                                "blocks.1.attn.bias: f32[12] @ cpu",
                                "head.weight: f32[8, 4, 3, 3] @ cpu",
                                "head.bias: f32[8] @ cpu",
                            }));
}

TEST(InstantiateTest, StateNamesFromAsTemplates) {
  // PyTorch's LSTM naming: `{}_l{k}` around `{}_reverse` keeps the order of
  // the path; `{arg}` takes an argument; a bool counts 1 in arithmetic.
  Checked c = checkSource(R"(
model Scale<D: device>(n: int) {
  param scale: f32[n]
}
model Pair<D: device>(n: int) {
  fwd = Scale(n) as "{}"
  bwd = Scale(n) as "{}_reverse"
}
model Net<D: device>(n: int, depth: int, tag: int = 7, wide: bool = true) {
  first = Pair(n) as "{}_l0"
  rest = [Pair(n) for k in 1..depth] as "{}_l{k}"
  tagged = Scale((1 + wide) * n) as "t{tag}.{}.w{wide}"
  head = Scale(n)
})");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*c.program().findModel("Net"), {Device::cpu()}, {3, 3}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateLines(*m), (std::vector<std::string>{
                                "scale_l0: f32[3] @ cpu",
                                "scale_l0_reverse: f32[3] @ cpu",
                                "scale_l1: f32[3] @ cpu",
                                "scale_l1_reverse: f32[3] @ cpu",
                                "scale_l2: f32[3] @ cpu",
                                "scale_l2_reverse: f32[3] @ cpu",
                                "t7.scale.w1: f32[6] @ cpu",
                                "head.scale: f32[3] @ cpu",
                            }));
}

TEST(InstantiateTest, TwoStatesWithOneNameAreRejected) {
  Checked c = checkSource(R"(
model Scale<D: device>(n: int) {
  param scale: f32[n]
}
model Net<D: device>(n: int, same: bool) {
  a = Scale(n) as "{}_{same}"
  b = Scale(n) as "{}_1"
})");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  const ModelInfo *net = c.program().findModel("Net");
  EXPECT_TRUE(c.program().instantiate(*net, {Device::cpu()}, {3, 0}, error)) << error;
  EXPECT_FALSE(c.program().instantiate(*net, {Device::cpu()}, {3, 1}, error));
  EXPECT_NE(error.find("[E0119] `a.scale` and `b.scale` of model `Net` are both named `scale_1`"),
            std::string::npos)
      << error;
}

TEST(InstantiateTest, RejectsBadArguments) {
  Checked c = checkFile(std::string(MODELC_SOURCE_DIR) + "/examples/mlp.mdl");
  const ModelInfo *mlp = c.program().findModel("Mlp");
  ASSERT_NE(mlp, nullptr);
  std::string error;
  EXPECT_FALSE(c.program().instantiate(*mlp, {}, {1, 2, 3}, error));
  EXPECT_NE(error.find("device argument"), std::string::npos);
  EXPECT_FALSE(c.program().instantiate(*mlp, {Device::cuda(0)}, {1, 2}, error));
  EXPECT_NE(error.find("missing argument `out`"), std::string::npos);
  EXPECT_FALSE(c.program().instantiate(*mlp, {Device::cuda(0)}, {1, 2, 3, 4}, error));
  EXPECT_FALSE(c.program().instantiate(*mlp, {Device::param(mlp->decl, 0)}, {1, 2, 3}, error));
}

TEST(InstantiateTest, GenericSignaturesAreRecorded) {
  Checked c = checkFile(std::string(MODELC_SOURCE_DIR) + "/examples/lenet5.mdl");
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *lenet = c.program().findModel("LeNet5");
  ASSERT_NE(lenet, nullptr);
  ASSERT_EQ(lenet->submodels.size(), 5u);
  EXPECT_EQ(lenet->submodels[0].name, "conv1");
  EXPECT_EQ(lenet->submodels[0].type.str(), "model Conv2d<D>");
  EXPECT_EQ(lenet->fns[0].result.str(), "f32[B, classes] @ D");
  // The stdlib's Conv2d keeps its output size symbolic, and its dtype the
  // parameter `dtype`.
  const ModelInfo *conv = c.program().findModel("Conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(
      conv->fns[0].result.str(),
      "dtype[N, out_channels, (-dilation[0]*kernel_size[0] + H + dilation[0] + 2*padding[0] - "
      "1)/stride[0] + 1, (-dilation[1]*kernel_size[1] + W + dilation[1] + 2*padding[1] - "
      "1)/stride[1] + 1] @ D");
}

} // namespace

namespace {

// PyTorch's `if norm_first: self.norm = ... else: self.norm = ...`: a name
// declared in each of exclusive branches; each instance has the one its
// arguments pick, and submodels of the model see that one's type.
constexpr const char *kBranchDeclarations = R"(import std.nn
model Block<D: device>(n: int, wide: bool = false, pre: bool = false) {
  if wide {
    param proj: f32[2 * n, n]
  } else {
    param proj: f32[n, n]
  }
  if pre {
    norm = nn.LayerNorm(n)
  } else if n > 4 {
    norm = nn.LayerNorm(n, elementwise_affine: false)
  } else {
    norm = nn.LayerNorm(n)
  }
  fn forward(x: f32[B, n] @ D) -> f32[B, n] @ D {
    if wide {
      let h = x @ proj.T
      return h[:, 0:n]
    }
    return x @ proj.T
  }
}
model Outer<D: device>(n: int) {
  inner = Block(n, wide: true)
  fn forward(x: f32[B, n] @ D) -> f32[B, 2 * n] @ D {
    return x @ inner.proj.T
  }
})";

} // namespace

TEST(InstantiateTest, NameDeclaredInExclusiveBranches) {
  Checked c = checkSource(kBranchDeclarations);
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *block = c.program().findModel("Block");
  ASSERT_NE(block, nullptr);
  std::string error;
  std::optional<InstantiatedModel> wide =
      c.program().instantiate(*block, {Device::cpu()}, {3, 1, 1}, error);
  ASSERT_TRUE(wide) << error;
  EXPECT_EQ(stateLines(*wide), (std::vector<std::string>{
                                   "proj: f32[6, 3] @ cpu",
                                   "norm.weight: f32[3] @ cpu",
                                   "norm.bias: f32[3] @ cpu",
                               }));
  std::optional<InstantiatedModel> narrow =
      c.program().instantiate(*block, {Device::cpu()}, {5, 0, 0}, error);
  ASSERT_TRUE(narrow) << error;
  // `else if n > 4`: the LayerNorm without affine state.
  EXPECT_EQ(stateLines(*narrow), (std::vector<std::string>{"proj: f32[5, 5] @ cpu"}));
  std::optional<InstantiatedModel> outer =
      c.program().instantiate(*c.program().findModel("Outer"), {Device::cpu()}, {2}, error);
  ASSERT_TRUE(outer) << error;
  EXPECT_EQ(stateLines(*outer), (std::vector<std::string>{
                                    "inner.proj: f32[4, 2] @ cpu",
                                    "inner.norm.weight: f32[2] @ cpu",
                                    "inner.norm.bias: f32[2] @ cpu",
                                }));
}
