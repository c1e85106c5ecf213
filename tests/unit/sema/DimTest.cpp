//===- DimTest.cpp - Canonical dimension polynomials ----------------------===//

#include "sema/Dim.h"

#include <gtest/gtest.h>

using namespace modelc::sema;

namespace {

Dim sym(const char *name) { return Dim::symbol(name); }
Dim k(int64_t v) { return Dim::constant(v); }

TEST(DimTest, ConstantsFold) {
  EXPECT_EQ(k(2) + k(3), k(5));
  EXPECT_EQ(k(2) * k(3), k(6));
  EXPECT_EQ(k(2) - k(2), Dim());
  EXPECT_EQ((k(7)).asConstant(), 7);
  EXPECT_EQ(k(-3).str(), "-3");
}

TEST(DimTest, ProductsCommuteAndAssociate) {
  Dim in = sym("in"), c = sym("C"), h = sym("H"), w = sym("W");
  EXPECT_EQ(in * k(2), k(2) * in);
  EXPECT_EQ((c * h) * w, c * (h * w));
  EXPECT_EQ(c * h * w, w * h * c);
  EXPECT_NE(c * h, c + h);
}

TEST(DimTest, SumsCancel) {
  Dim h = sym("H");
  EXPECT_EQ(h + k(2) - k(2), h);
  EXPECT_EQ(h - h, Dim());
  EXPECT_EQ((h + k(1)) * (h - k(1)), h * h - k(1));
}

TEST(DimTest, PrintsCanonically) {
  Dim in = sym("in"), b = sym("B");
  EXPECT_EQ((in * k(2)).str(), "2*in");
  EXPECT_EQ((sym("H") - k(1)).str(), "H - 1");
  EXPECT_EQ((k(3) - sym("H")).str(), "-H + 3");
  EXPECT_EQ(b.str(), "B");
  EXPECT_EQ(Dim().str(), "0");
}

TEST(DimTest, ExactDivision) {
  Dim b = sym("B"), c = sym("C"), h = sym("H");
  EXPECT_EQ((b * c * h).exactDiv(c * h), b);
  EXPECT_EQ((k(6) * b).exactDiv(k(3)), k(2) * b);
  EXPECT_EQ((b * h + b).exactDiv(b), h + k(1));
  EXPECT_EQ((h * h - k(1)).exactDiv(h - k(1)), h + k(1));
  EXPECT_FALSE((b + k(1)).exactDiv(k(2)).has_value());
  EXPECT_FALSE(b.exactDiv(c).has_value());
  EXPECT_FALSE(b.exactDiv(Dim()).has_value());
}

TEST(DimTest, FloorDivisionIsExactWhenPossible) {
  EXPECT_EQ(k(27).floorDiv(2), k(13));
  EXPECT_EQ(k(-3).floorDiv(2), k(-2));
  Dim h = sym("H");
  EXPECT_EQ((k(2) * h + k(4)).floorDiv(2), h + k(2));
  Dim q = (h - k(1)).floorDiv(2);
  EXPECT_EQ(q.str(), "(H - 1)/2");
  // The same quotient is the same dim.
  EXPECT_EQ(q, (h - k(1)).floorDiv(2));
}

TEST(DimTest, MultiplesOfAConstantDivisorLeaveTheFloor) {
  Dim h = sym("H"), w = sym("W");
  // arange(0, 2 * h, step: 2) and x[0::2] of 2 * h elements: h of them.
  EXPECT_EQ((k(2) * h + k(1)).floorDiv(2), h);
  EXPECT_EQ((k(2) * h - k(1)).floorDiv(2), h - k(1));
  // Each coefficient splits as 2 * floor(c / 2) + (c mod 2).
  EXPECT_EQ((k(3) * h + k(1)).floorDiv(2), h + (h + k(1)).floorDiv(2));
  EXPECT_EQ((k(4) * h + w + k(5)).floorDiv(4), h + (w + k(5)).floorDiv(4));
  EXPECT_EQ((k(-3) * h).floorDiv(2), k(-2) * h + h.floorDiv(2));
  // Nothing to take out: the quotient atom, as before.
  EXPECT_EQ((h + k(3)).floorDiv(4).str(), "(H + 3)/4");
}

TEST(DimTest, MultiplesOfASymbolicDivisorLeaveTheFloor) {
  // A conv with kernel = stride = patch: (H - patch) / patch + 1 == H / patch.
  Dim h = sym("H"), p = sym("patch");
  EXPECT_EQ((h - p).floorDiv(p) + k(1), h.floorDiv(p));
  EXPECT_EQ((h + k(2) * p * h).floorDiv(p), k(2) * h + h.floorDiv(p));
  // Nothing divisible: one quotient atom, as before.
  EXPECT_EQ((h - k(1)).floorDiv(p).str(), "(H - 1)/patch");
  // 2 * patch does not divide patch * H + 1's terms by 2 * patch.
  EXPECT_EQ((p * h + k(1)).floorDiv(k(2) * p).str(), "(H*patch + 1)/(2*patch)");
}

TEST(DimTest, SubstitutionEvaluatesQuotients) {
  Dim h = sym("H"), s = sym("stride");
  Dim out = (h - k(3)).floorDiv(s) + k(1);
  AtomId hAtom = *h.asAtom(), sAtom = *s.asAtom();
  Dim concrete = out.substitute([&](AtomId a) -> std::optional<Dim> {
    if (a == hAtom)
      return k(28);
    if (a == sAtom)
      return k(2);
    return std::nullopt;
  });
  EXPECT_EQ(concrete, k(13));
  // Partial substitution keeps the rest symbolic.
  Dim partial = out.substitute([&](AtomId a) -> std::optional<Dim> {
    return a == sAtom ? std::optional<Dim>(k(1)) : std::nullopt;
  });
  EXPECT_EQ(partial, h - k(2));
}

TEST(DimTest, AtomsAndMentions) {
  Dim b = sym("B");
  EXPECT_TRUE(b.asAtom().has_value());
  EXPECT_FALSE((k(2) * b).asAtom().has_value());
  EXPECT_TRUE((b * b + k(1)).mentions(*b.asAtom()));
  EXPECT_FALSE(k(4).mentions(*b.asAtom()));
  EXPECT_EQ(atomName(*b.asAtom()), "B");
}

} // namespace
