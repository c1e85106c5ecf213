//===- TupleParamsTest.cpp - `kernel_size: (int, int)` model arguments ----===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::sema;
using namespace modelc::test;

namespace {

/// A rectangular conv written as torchvision writes its layers.
constexpr const char *kConv = R"(
model Conv<D: device>(in_channels: int, out_channels: int, kernel_size: (int, int),
                      stride: (int, int) = 1, padding: (int, int) = (0, 0),
                      dilation: (int, int) = 1, groups: int = 1) {
  param weight: f32[out_channels, in_channels / groups, kernel_size[0], kernel_size[1]]
  fn forward(x: f32[N, in_channels, H, W] @ D) -> f32[N, out_channels, (H + 2 * padding[0] - dilation[0] * (kernel_size[0] - 1) - 1) / stride[0] + 1, (W + 2 * padding[1] - dilation[1] * (kernel_size[1] - 1) - 1) / stride[1] + 1] @ D {
    return conv2d(x, weight, stride: stride, padding: padding, dilation: dilation, groups: groups)
  }
}
)";

std::string stateType(const InstantiatedModel &m, llvm::StringRef name) {
  for (const InstantiatedState &s : m.state)
    if (s.name == name)
      return s.type.str();
  return "(none)";
}

TEST(TupleParamsTest, EachElementIsASlotOfTheInstance) {
  Checked c = checkSource(kConv);
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *conv = c.program().findModel("Conv");
  ASSERT_TRUE(conv);
  // in_channels, out_channels, kernel_size (2), stride (2), padding (2),
  // dilation (2), groups.
  EXPECT_EQ(conv->valueSlotCount(), 11u);
  EXPECT_EQ(conv->valueParams[2].firstSlot, 2u);
  EXPECT_EQ(conv->valueParams[2].typeName(), "(int, int)");
  EXPECT_EQ(conv->valueParams[6].firstSlot, 10u);

  std::string error;
  // kernel (1, 7), stride (1, 2), padding (0, 3): torchvision's Inception.
  auto m = c.program().instantiate(*conv, {Device::cpu()}, {3, 8, 1, 7, 1, 2, 0, 3}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateType(*m, "weight"), "f32[8, 3, 1, 7] @ cpu");
  // The result type reads each element: (W + 6 - 6 - 1) / 2 + 1.
  EXPECT_EQ(m->fns.front().result.str(), "f32[N, 8, H, (W - 1)/2 + 1] @ cpu");
}

TEST(TupleParamsTest, DefaultsBroadcastAndFollowEarlierParams) {
  Checked c = checkSource(R"(
model Pool<D: device>(kernel_size: (int, int), stride: (int, int) = kernel_size,
                      padding: (int, int) = 0, scale: int = 2, grid: (int, int) = scale) {
  param w: f32[kernel_size[0], stride[1], padding[0] + 1, grid[0] * grid[1]]
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *pool = c.program().findModel("Pool");
  std::string error;
  auto m = c.program().instantiate(*pool, {Device::cpu()}, {2, 3}, error);
  ASSERT_TRUE(m) << error;
  // stride = kernel_size = (2, 3), padding = (0, 0), grid = (scale, scale).
  EXPECT_EQ(stateType(*m, "w"), "f32[2, 3, 1, 4] @ cpu");
}

TEST(TupleParamsTest, ArgumentsTakeAnIntOrATupleOfTheArity) {
  std::string src = std::string(kConv) + R"(
model Net<D: device>(k: int) {
  square = Conv(3, 8, 3, padding: 1)
  rect = Conv(8, 8, kernel_size: (1, 7), stride: (1, 2), padding: (0, 3))
  given = Conv(8, 4, k)
  fn forward(x: f32[N, 3, 16, 16] @ D) -> f32[N, 8, 16, 8] @ D {
    return rect(square(x))
  }
}
)";
  Checked c = checkSource(src);
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *net = c.program().findModel("Net");
  std::string error;
  auto m = c.program().instantiate(*net, {Device::cpu()}, {5}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateType(*m, "square.weight"), "f32[8, 3, 3, 3] @ cpu");
  EXPECT_EQ(stateType(*m, "rect.weight"), "f32[8, 8, 1, 7] @ cpu");
  EXPECT_EQ(stateType(*m, "given.weight"), "f32[4, 8, 5, 5] @ cpu");
}

TEST(TupleParamsTest, ATupleParamPassesOnWhole) {
  std::string src = std::string(kConv) + R"(
model Block<D: device>(c: int, kernel_size: (int, int) = (3, 1)) {
  conv = Conv(c, c, kernel_size, padding: (kernel_size[0] / 2, kernel_size[1] / 2))
  fn forward(x: f32[N, c, H, W] @ D) -> f32[N, c, H + 2 * (kernel_size[0] / 2) - kernel_size[0] + 1, W + 2 * (kernel_size[1] / 2) - kernel_size[1] + 1] @ D {
    return conv(x)
  }
}
)";
  Checked c = checkSource(src);
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  auto m =
      c.program().instantiate(*c.program().findModel("Block"), {Device::cpu()}, {4, 5, 3}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->fns.front().result.str(), "f32[N, 4, H, W] @ cpu");
  m = c.program().instantiate(*c.program().findModel("Block"), {Device::cpu()}, {4}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateType(*m, "conv.weight"), "f32[4, 4, 3, 1] @ cpu"); // the default (3, 1)
}

TEST(TupleParamsTest, WrongArgumentsAreTypeErrors) {
  std::string src = std::string(kConv) + R"(
model Net<D: device>() {
  three = Conv(3, 8, (1, 7, 2))
  floats = Conv(3, 8, (1, 2.0))
  fn forward(x: f32[N, 3, 16, 16] @ D) -> f32[N, 3, 16, 16] @ D {
    return x
  }
}
)";
  Checked c = checkSource(src);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.count("E0502"), 2u) << c.dump();
  const Diagnostic *d = c.find("E0502");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->message, "mismatched types: expected int or (int, int), found (int, int, int)");
}

TEST(TupleParamsTest, ATupleIsNotAnInt) {
  Checked dim = checkSource(R"(
model M<D: device>(kernel_size: (int, int)) {
  param w: f32[kernel_size]
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
)");
  EXPECT_EQ(dim.codes(), std::vector<std::string>{"E0502"}) << dim.dump();
  ASSERT_TRUE(dim.find("E0502"));
  ASSERT_EQ(dim.find("E0502")->suggestions.size(), 1u);
  EXPECT_EQ(dim.find("E0502")->suggestions[0].edits[0].replacement, "kernel_size[0]");

  Checked index = checkSource(R"(
model M<D: device>(kernel_size: (int, int)) {
  param w: f32[kernel_size[2]]
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
)");
  EXPECT_EQ(index.codes(), std::vector<std::string>{"E0412"}) << index.dump();

  Checked toInt = checkSource(R"(
model Lin<D: device>(n: int) {
  param w: f32[n]
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
model M<D: device>(kernel_size: (int, int)) {
  lin = Lin(kernel_size)
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
)");
  EXPECT_EQ(toInt.codes(), std::vector<std::string>{"E0502"}) << toInt.dump();
}

TEST(TupleParamsTest, ElementsAreIntsInFnBodies) {
  Checked c = checkSource(R"(
model M<D: device>(kernel_size: (int, int)) {
  fn forward(x: f32[B, 4] @ D) -> f32[B, kernel_size[1] * 2] @ D {
    let k = kernel_size[-1]
    return x[:, 0:k * 2]
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  Checked out = checkSource(R"(
model M<D: device>(kernel_size: (int, int)) {
  fn forward(x: f32[B, 4] @ D) -> f32[B, 4] @ D {
    let k = kernel_size[-3]
    return x
  }
}
)");
  EXPECT_EQ(out.codes(), std::vector<std::string>{"E0412"}) << out.dump();
}

TEST(TupleParamsTest, ADeclaredTupleHoldsInts) {
  Checked c = checkSource(R"(
model M<D: device>(kernel_size: (int, float)) {
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
)");
  EXPECT_EQ(c.codes(), std::vector<std::string>{"E0001"}) << c.dump();
  Checked badDefault = checkSource(R"(
model M<D: device>(kernel_size: (int, int) = (1, 2, 3), stride: (int, int) = 1.5) {
  fn forward(x: f32[B] @ D) -> f32[B] @ D {
    return x
  }
}
)");
  EXPECT_EQ(badDefault.count("E0502"), 2u) << badDefault.dump();
}

} // namespace

namespace {

TEST(TupleParamsTest, StdNnLayersTakeInceptionsPairs) {
  // torchvision's Inception: nn.Conv2d(c, 64, kernel_size=(1, 7), stride=(1, 2),
  // padding=(0, 3)), a (3, 2) max pool, a (3, 1) transposed conv.
  Checked c = checkSource(R"(import std.nn
model Stem<D: device>(c: int) {
  conv = nn.Conv2d(in_channels: c, out_channels: 64, kernel_size: (1, 7), stride: (1, 2), padding: (0, 3), bias: false)
  square = nn.Conv2d(64, 64, 3, padding: 1, groups: 64)
  pool = nn.MaxPool2d((3, 2))
  up = nn.ConvTranspose2d(64, 8, (3, 1), stride: (2, 1), output_padding: (1, 0))
  gap = nn.AdaptiveAvgPool2d((2, 1))
  fn forward(x: f32[N, c, 9, 16] @ D) -> f32[N, 8, 2, 1] @ D {
    return gap(up(pool(square(conv(x)))))
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  auto m = c.program().instantiate(*c.program().findModel("Stem"), {Device::cpu()}, {3}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(stateType(*m, "conv.weight"), "f32[64, 3, 1, 7] @ cpu");
  EXPECT_EQ(stateType(*m, "conv.bias"), "(none)");
  EXPECT_EQ(stateType(*m, "square.weight"), "f32[64, 1, 3, 3] @ cpu");
  EXPECT_EQ(stateType(*m, "up.weight"), "f32[64, 8, 3, 1] @ cpu");
}

} // namespace
