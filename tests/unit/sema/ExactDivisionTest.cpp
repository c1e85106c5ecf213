//===- ExactDivisionTest.cpp - `embed_dim / num_heads` and param defaults -===//

#include "SemaTestSupport.h"

#include "sema/Dim.h"

using namespace modelc;
using namespace modelc::sema;
using namespace modelc::test;

namespace {

Dim sym(const char *name) { return Dim::symbol(name); }
Dim k(int64_t v) { return Dim::constant(v); }

TEST(ExactDivisionTest, QuotientIsAnAtomEqualToItself) {
  Dim e = sym("embed_dim"), h = sym("num_heads");
  Dim q = e.exactQuotient(h);
  ASSERT_TRUE(q.asAtom());
  EXPECT_EQ(q, e.exactQuotient(h));
  EXPECT_EQ(q.str(), "embed_dim/num_heads");
  auto parts = exactQuotientParts(*q.asAtom());
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->first, e);
  EXPECT_EQ(parts->second, h);
  // Not the floor quotient of the same text: that one does not cancel.
  EXPECT_NE(q, e.floorDiv(h));
  EXPECT_FALSE(exactQuotientParts(*e.floorDiv(h).asAtom()));
  EXPECT_NE(e.floorDiv(h) * h, e);
}

TEST(ExactDivisionTest, ProductsWithTheDivisorCancel) {
  Dim e = sym("embed_dim"), h = sym("num_heads"), b = sym("B"), t = sym("T");
  Dim q = e.exactQuotient(h);
  EXPECT_EQ(q * h, e);
  EXPECT_EQ(h * q, e);
  EXPECT_EQ(b * t * h * q, b * t * e);
  EXPECT_EQ(q * k(3) * h, k(3) * e);
  EXPECT_EQ((q + k(1)) * h, e + h);
  EXPECT_EQ(q * h * h, e * h);
  EXPECT_NE(q * b, e);
  // A monomial divisor with a coefficient: e / (2h) * 4h == 2e.
  Dim q2 = e.exactQuotient(k(2) * h);
  EXPECT_EQ(q2 * k(4) * h, k(2) * e);
  EXPECT_NE(q2 * h, e);
}

TEST(ExactDivisionTest, PolynomialQuotientsAndConstants) {
  Dim e = sym("embed_dim"), h = sym("num_heads");
  EXPECT_EQ((k(4) * e * h).exactQuotient(h), k(4) * e);
  EXPECT_EQ(k(32).exactQuotient(k(4)), k(8));
  EXPECT_EQ(e.exactQuotient(k(1)), e);
}

TEST(ExactDivisionTest, SubstitutionEvaluates) {
  Dim e = sym("embed_dim"), h = sym("num_heads"), d = sym("d_model");
  Dim q = e.exactQuotient(h);
  auto to = [&](int64_t ev, int64_t hv) {
    return q.substitute([&](AtomId a) -> std::optional<Dim> {
      if (a == *e.asAtom())
        return k(ev);
      if (a == *h.asAtom())
        return k(hv);
      return std::nullopt;
    });
  };
  EXPECT_EQ(to(32, 4), k(8));
  // Renaming keeps an exact quotient that still cancels.
  Dim renamed = q.substitute([&](AtomId a) -> std::optional<Dim> {
    if (a == *e.asAtom())
      return d;
    return std::nullopt;
  });
  EXPECT_EQ(renamed, d.exactQuotient(h));
  EXPECT_EQ(renamed * h, d);
}

const char *kHeads = R"(
model Heads<D: device>(embed_dim: int, num_heads: int) {
  param w: f32[num_heads, embed_dim / num_heads]
  fn forward(x: f32[B, T, embed_dim] @ D) -> f32[B, num_heads, T, embed_dim / num_heads] @ D {
    let y: f32[B, T, num_heads, embed_dim / num_heads] = reshape(x, [B, T, num_heads, embed_dim / num_heads])
    return permute(y, [0, 2, 1, 3])
  }
  fn back(x: f32[B, num_heads, T, embed_dim / num_heads] @ D) -> f32[B, T, embed_dim] @ D {
    return reshape(permute(x, [0, 2, 1, 3]), [B, T, embed_dim])
  }
}
)";

TEST(ExactDivisionTest, ReshapeToHeadsChecks) {
  Checked c = checkSource(kHeads);
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *m = c.program().findModel("Heads");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->exactDivisions.empty());
}

TEST(ExactDivisionTest, InstantiationNeedsAnExactDivision) {
  Checked c = checkSource(kHeads);
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *m = c.program().findModel("Heads");
  std::string error;
  std::optional<InstantiatedModel> ok =
      c.program().instantiate(*m, {Device::cpu()}, {32, 4}, error);
  ASSERT_TRUE(ok) << error;
  EXPECT_EQ(ok->state[0].type.str(), "f32[4, 8] @ cpu");
  std::optional<InstantiatedModel> bad =
      c.program().instantiate(*m, {Device::cpu()}, {32, 5}, error);
  EXPECT_FALSE(bad);
  EXPECT_NE(error.find("E0409"), std::string::npos) << error;
  EXPECT_NE(error.find("`embed_dim` = 32 is not divisible by `num_heads` = 5"), std::string::npos)
      << error;
}

TEST(ExactDivisionTest, SubmodelArgumentsAreChecked) {
  Checked c = checkSource(std::string(kHeads) + R"(
model Wrap<D: device>(d: int, h: int) {
  inner = Heads(d, h)
}
model Good<D: device>() {
  a = Wrap(32, 4)
}
model Bad<D: device>() {
  b = Wrap(32, 5)
}
)");
  EXPECT_EQ(c.count("E0409"), 1u) << c.dump();
  const Diagnostic *d = c.find("E0409");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->primaryRange().text(), "Wrap(32, 5)");
  // Wrap needs d / h exact: from the command line too.
  std::string error;
  EXPECT_FALSE(
      c.program().instantiate(*c.program().findModel("Wrap"), {Device::cpu()}, {6, 4}, error));
  EXPECT_NE(error.find("`d` = 6 is not divisible by `h` = 4"), std::string::npos) << error;
}

TEST(ExactDivisionTest, StdlibAttentionRejectsUnevenHeads) {
  Checked c = checkSource(R"(import std.nn
model M<D: device>() {
  attn = nn.MultiheadAttention(32, 5)
}
)");
  EXPECT_EQ(c.count("E0409"), 1u) << c.dump();
}

TEST(ParamDefaultTest, IntDefaultNamesAnEarlierParam) {
  Checked c = checkSource(R"(import std.nn
model Pool<D: device>(kernel: int, stride: int = kernel, padding: int = 0) {
  fn forward(x: f32[N, C, H, W] @ D) -> f32[N, C, (H - kernel) / stride + 1, (W - kernel) / stride + 1] @ D {
    return max_pool2d(x, kernel, stride: stride)
  }
}
model Net<D: device>() {
  p = nn.MaxPool2d(2)
  q = nn.AvgPool2d(3, padding: 1)
  fn forward(x: f32[1, 3, 8, 8] @ D) -> f32[1, 3, 4, 4] @ D {
    return p(x)
  }
  fn avg(x: f32[1, 3, 9, 9] @ D) -> f32[1, 3, 3, 3] @ D {
    return q(x)
  }
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  const ModelInfo *pool = c.program().findModel("Pool");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->valueParams[1].defaultParam, 0u);
}

TEST(ParamDefaultTest, DefaultMustNameAnEarlierParamOfItsKind) {
  Checked later = checkSource(R"(
model A<D: device>(stride: int = kernel, kernel: int) {
}
)");
  EXPECT_EQ(later.count("E0101"), 1u) << later.dump();
  Checked kind = checkSource(R"(
model A<D: device>(eps: float, n: int = eps) {
}
)");
  EXPECT_EQ(kind.count("E0502"), 1u) << kind.dump();
  Checked floats = checkSource(R"(
model A<D: device>(n: int, eps: float = n, rate: float = eps) {
}
)");
  EXPECT_TRUE(floats.ok) << floats.dump();
}

TEST(ParamDefaultTest, InstantiateUsesTheEarlierValue) {
  Checked c = checkSource(R"(
model P<D: device>(kernel: int, stride: int = kernel) {
  buffer b: f32[kernel, stride]
}
)");
  ASSERT_TRUE(c.ok) << c.dump();
  std::string error;
  std::optional<InstantiatedModel> m =
      c.program().instantiate(*c.program().findModel("P"), {Device::cpu()}, {3}, error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->state[0].type.str(), "f32[3, 3] @ cpu");
}

} // namespace
