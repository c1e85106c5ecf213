//===- InputCheckTest.cpp - Inputs against declared signatures ------------===//

#include "runtime/InputCheck.h"

#include "gtest/gtest.h"

using namespace modelc;
using namespace modelc::runtime;

namespace {

/// `coeff * symbol + offset`, as a caller declares an expression dim.
DeclaredDim linear(int64_t coeff, std::string symbol, int64_t offset = 0) {
  return DeclaredDim::ofExpression(
      [=](const llvm::StringMap<int64_t> &bound) -> std::optional<int64_t> {
        auto it = bound.find(symbol);
        if (it == bound.end())
          return std::nullopt;
        return coeff * it->second + offset;
      },
      {symbol});
}

DeclaredInput f32(std::vector<DeclaredDim> shape) {
  DeclaredInput input;
  input.shape = std::move(shape);
  return input;
}

struct Outcome {
  bool ok = false;
  InputBindings bindings;
  std::vector<InputMismatch> mismatches;
};

Outcome check(llvm::ArrayRef<DeclaredInput> declared, std::vector<std::vector<int64_t>> shapes) {
  std::vector<GivenInput> given;
  for (const std::vector<int64_t> &shape : shapes)
    given.push_back({DType::F32, Device::cpu(), shape});
  Outcome out;
  auto report = [&](const InputMismatch &m) {
    out.mismatches.push_back(m);
    return true;
  };
  out.ok = bindInputs(declared, given, out.bindings, report) &&
           checkCompoundDims(declared, given, out.bindings, report);
  return out;
}

} // namespace

TEST(InputCheckTest, ALinearDimBindsItsOnlySymbol) {
  // x: f32[B, 4 * H] given [2, 32]: H is 8.
  DeclaredInput x = f32({DeclaredDim::ofSymbol("B"), linear(4, "H")});
  Outcome out = check({x}, {{2, 32}});
  ASSERT_TRUE(out.ok);
  EXPECT_EQ(out.bindings.symbols.lookup("B"), 2);
  EXPECT_EQ(out.bindings.symbols.lookup("H"), 8);
}

TEST(InputCheckTest, ASolvedSymbolChecksTheOtherInputs) {
  // x: f32[4 * H], y: f32[H + 1]: H from x, then y's extent must be H + 1.
  DeclaredInput x = f32({linear(4, "H")}), y = f32({linear(1, "H", 1)});
  Outcome good = check({x, y}, {{12}, {4}});
  ASSERT_TRUE(good.ok);
  EXPECT_EQ(good.bindings.symbols.lookup("H"), 3);
  Outcome bad = check({x, y}, {{12}, {5}});
  EXPECT_FALSE(bad.ok);
  ASSERT_EQ(bad.mismatches.size(), 1u);
  EXPECT_EQ(bad.mismatches[0].input, 1u);
  EXPECT_EQ(bad.mismatches[0].expected, 4);
  EXPECT_EQ(bad.mismatches[0].actual, 5);
}

TEST(InputCheckTest, AnExtentTheDimCannotHaveIsADimMismatch) {
  // 4 * H cannot be 9: the nearest it can be is 8.
  Outcome out = check({f32({linear(4, "H")})}, {{9}});
  EXPECT_FALSE(out.ok);
  ASSERT_EQ(out.mismatches.size(), 1u);
  EXPECT_EQ(out.mismatches[0].kind, InputMismatch::Kind::Dim);
  EXPECT_EQ(out.mismatches[0].expected, 8);
  EXPECT_EQ(out.mismatches[0].actual, 9);
  EXPECT_FALSE(out.bindings.symbols.count("H"));
}

TEST(InputCheckTest, ANonLinearDimIsNotSolved) {
  // H * H: not linear in H, so it binds nothing (and checks nothing).
  DeclaredDim square = DeclaredDim::ofExpression(
      [](const llvm::StringMap<int64_t> &bound) -> std::optional<int64_t> {
        auto it = bound.find("H");
        if (it == bound.end())
          return std::nullopt;
        return it->second * it->second;
      },
      {"H"});
  Outcome out = check({f32({square})}, {{16}});
  EXPECT_TRUE(out.ok);
  EXPECT_FALSE(out.bindings.symbols.count("H"));
}
