//===- SizeExprTest.cpp - Size expressions: folding, text, evaluation -----===//

#include "cudagen/DevicePlan.h"

#include <gtest/gtest.h>

using namespace modelc::cudagen;

namespace {

SizeExpr parsed(llvm::StringRef text) {
  llvm::Expected<SizeExpr> e = SizeExpr::parse(text);
  EXPECT_TRUE(bool(e)) << (e ? "" : llvm::toString(e.takeError()));
  return e ? *e : SizeExpr();
}

TEST(SizeExprTest, FoldsConstants) {
  SizeExpr b = SizeExpr::symbol("B");
  EXPECT_EQ((SizeExpr(3) * 4 + 2).constant(), 14);
  EXPECT_EQ(SizeExpr::ceilDiv(10, 4).constant(), 3);
  EXPECT_EQ(SizeExpr::floorDiv(-7, 2).constant(), -4);
  EXPECT_EQ(b * 1, b);
  EXPECT_EQ(b + 0, b);
  EXPECT_EQ((b * 0).constant(), 0);
  EXPECT_EQ((SizeExpr(4) * (SizeExpr(2) * b)).str(), "8 * B");
}

TEST(SizeExprTest, PrintsAndParsesBack) {
  SizeExpr b = SizeExpr::symbol("B"), t = SizeExpr::symbol("seq");
  SizeExpr e = SizeExpr::min(SizeExpr::ceilDiv(b * t * 10, 256), 65535) - (b - t);
  EXPECT_EQ(e.str(), "min(ceildiv(10 * B * seq, 256), 65535) - (B - seq)");
  EXPECT_EQ(parsed(e.str()), e);
  EXPECT_EQ(parsed("  2*B + floordiv(B, 3) - -4 ").str(), "2 * B + floordiv(B, 3) - -4");
}

TEST(SizeExprTest, Evaluates) {
  SymbolValues values;
  values["B"] = 5;
  EXPECT_EQ(*parsed("ceildiv(B * 10, 4) + max(B, 7)").evaluate(values), 13 + 7);
  llvm::Expected<int64_t> unbound = parsed("B * T").evaluate(values);
  ASSERT_FALSE(bool(unbound));
  EXPECT_NE(llvm::toString(unbound.takeError()).find("`T`"), std::string::npos);
  llvm::Expected<int64_t> byZero = parsed("floordiv(B, B - 5)").evaluate(values);
  ASSERT_FALSE(bool(byZero));
  EXPECT_NE(llvm::toString(byZero.takeError()).find("divides by zero"), std::string::npos);
}

TEST(SizeExprTest, CppRenamesSymbols) {
  SizeExpr e = SizeExpr::ceilDiv(SizeExpr::symbol("B") * 3, 4);
  EXPECT_EQ(e.cpp(), "((3 * B + 4 - 1) / (4))");
  EXPECT_EQ(e.cpp([](llvm::StringRef s) { return "dim_" + s.str(); }),
            "((3 * dim_B + 4 - 1) / (4))");
}

TEST(SizeExprTest, RejectsBadText) {
  for (const char *bad :
       {"", "B +", "(B", "ceildiv(B)", "B $ 2", "99999999999999999999", "min(1, 2", "3 4"}) {
    llvm::Expected<SizeExpr> e = SizeExpr::parse(bad);
    ASSERT_FALSE(bool(e)) << bad;
    EXPECT_NE(llvm::toString(e.takeError()).find("bad size expression"), std::string::npos);
  }
  // Deep nesting is an error, not a stack overflow.
  std::string deep(100000, '(');
  llvm::Expected<SizeExpr> nested = SizeExpr::parse(deep);
  ASSERT_FALSE(bool(nested));
  EXPECT_NE(llvm::toString(nested.takeError()).find("nested too deeply"), std::string::npos);
}

} // namespace
