//===- AstTest.cpp - The shape and ranges of parsed trees -----------------===//
#include "ParseTestUtil.h"

#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace modelc;
using namespace modelc::ast;
using namespace modelc::test;

namespace {

/// Every construct of the language once, checked through the dump (which
/// also pins the dump format used by `modelc emit --stage=ast`).
TEST(AstTest, EveryConstructDumps) {
  auto parsed = parse(R"mdl(import std.nn
import a.b.c

/// Doc line one.
///Doc line two
model Net<D: device, E: device>(in: int, rate: float = 0.5, flag: bool = true) {
  param w: f32[out, in * 2 + 1] @ D
  buffer m: i64[...] @ cuda:1 = zeros([in])
  buffer s: bool[] @ cpu
  /// The encoder.
  enc = nn.Linear<cuda:0>(in, 4)
  dec = Decoder<D, cpu>(4, out: 2,)
  fn forward(x: f32[B, (in - 1) / 2] @ D, n: int, b: bool) -> f32[B] {
    let a: bf16[B] = cast(x, bf16)
    let y = x @ w.T + 1.5e-3 * -x ** 2 % 3
    y = y[0, 1:, :2, ::3, 1:2:3]
    for layer in layers { y = layer(y); }
    return not a == b or a != b and a <= b
  }
  fn noresult() { return; x.to(cuda:2) }
}
model Empty {}
)mdl",
                      "test.mdl");
  EXPECT_TRUE(parsed->diagnostics().empty());
  EXPECT_EQ(parsed->dump(), R"mdl(Module "test.mdl"
  Import std.nn @1:1-1:14
  Import a.b.c @2:1-2:13
  Model Net @6:1-21:2
    Doc "Doc line one.\nDoc line two"
    DeviceParam D @6:11-6:20
    DeviceParam E @6:22-6:31
    ValueParam in: int @6:33-6:40
    ValueParam rate: float @6:42-6:59
      FloatLit 5.000000e-01 @6:56-6:59
    ValueParam flag: bool @6:61-6:78
      BoolLit true @6:74-6:78
    Param w @7:3-7:36
      Type f32[out, ((in * 2) + 1)] @ D @7:12-7:36
    Buffer m @8:3-8:44
      Type i64[...] @ cuda:1 @8:13-8:30
      Call @8:33-8:44
        Name zeros @8:33-8:38
        Arg @8:39-8:43
          List @8:39-8:43
            Name in @8:40-8:42
    Buffer s @9:3-9:25
      Type bool[] @ cpu @9:13-9:25
    Submodel enc @11:3-11:33
      Doc "The encoder."
      Instantiate nn.Linear<cuda:0> @11:9-11:33
        Arg @11:27-11:29
          Name in @11:27-11:29
        Arg @11:31-11:32
          IntLit 4 @11:31-11:32
    Submodel dec @12:3-12:36
      Instantiate Decoder<D, cpu> @12:9-12:36
        Arg @12:25-12:26
          IntLit 4 @12:25-12:26
        Arg out @12:28-12:34
          IntLit 2 @12:33-12:34
    Fn forward @13:3-19:4
      FnParam x @13:14-13:41
        Type f32[B, ((in - 1) / 2)] @ D @13:17-13:41
      FnParam n @13:43-13:49
        Type int @13:46-13:49
      FnParam b @13:51-13:58
        Type bool @13:54-13:58
      Result @13:63-13:69
        Type f32[B] @13:63-13:69
      Body @13:70-19:4
        Let a @14:5-14:35
          Type bf16[B] @14:12-14:19
          Call @14:22-14:35
            Name cast @14:22-14:26
            Arg @14:27-14:28
              Name x @14:27-14:28
            Arg @14:30-14:34
              DTypeLit bf16 @14:30-14:34
        Let y @15:5-15:43
          Binary + @15:13-15:43
            Binary @ @15:13-15:20
              Name x @15:13-15:14
              Member T @15:17-15:20
                Name w @15:17-15:18
            Binary % @15:23-15:43
              Binary * @15:23-15:39
                FloatLit 1.500000e-03 @15:23-15:29
                Unary - @15:32-15:39
                  Binary ** @15:33-15:39
                    Name x @15:33-15:34
                    IntLit 2 @15:38-15:39
              IntLit 3 @15:42-15:43
        Assign y @16:5-16:33
          Index @16:9-16:33
            Name y @16:9-16:10
            Subscript @16:11-16:12
              IntLit 0 @16:11-16:12
            Slice @16:14-16:16
              Begin
                IntLit 1 @16:14-16:15
            Slice @16:18-16:20
              End
                IntLit 2 @16:19-16:20
            Slice @16:22-16:25
              Step
                IntLit 3 @16:24-16:25
            Slice @16:27-16:32
              Begin
                IntLit 1 @16:27-16:28
              End
                IntLit 2 @16:29-16:30
              Step
                IntLit 3 @16:31-16:32
        For layer @17:5-17:42
          Name layers @17:18-17:24
          Body
            Assign y @17:27-17:39
              Call @17:31-17:39
                Name layer @17:31-17:36
                Arg @17:37-17:38
                  Name y @17:37-17:38
        Return @18:5-18:43
          Binary or @18:12-18:43
            Binary == @18:12-18:22
              Unary not @18:12-18:17
                Name a @18:16-18:17
              Name b @18:21-18:22
            Binary and @18:26-18:43
              Binary != @18:26-18:32
                Name a @18:26-18:27
                Name b @18:31-18:32
              Binary <= @18:37-18:43
                Name a @18:37-18:38
                Name b @18:42-18:43
    Fn noresult @20:3-20:41
      Body @20:17-20:41
        Return @20:19-20:25
        ExprStmt @20:27-20:39
          Call @20:27-20:39
            Member to @20:27-20:31
              Name x @20:27-20:28
            Arg @20:32-20:38
              DeviceLit cuda:2 @20:32-20:38
  Model Empty @22:1-22:15
)mdl");
}

/// The expression of `return <expr>` in a one-statement fn body.
const Expr &returned(const Parsed &parsed) {
  const auto &ret = llvm::cast<ReturnStmt>(*parsed.fn().body.at(0));
  return *ret.value;
}

/// The binary tree of an expression as fully parenthesised text.
std::string shape(const Expr &expr) {
  if (const auto *binary = llvm::dyn_cast<BinaryExpr>(&expr))
    return "(" + shape(*binary->lhs) + " " + binaryOpSpelling(binary->op).str() + " " +
           shape(*binary->rhs) + ")";
  if (const auto *unary = llvm::dyn_cast<UnaryExpr>(&expr))
    return std::string(unary->op == UnaryOp::Neg ? "-" : "not ") + shape(*unary->operand);
  return expr.range.text().str();
}

std::string shapeOf(llvm::StringRef expr) {
  auto parsed = parseBody(("return " + expr).str());
  EXPECT_TRUE(parsed->diagnostics().empty()) << expr.str();
  if (parsed->module->models.empty() || parsed->fn().body.empty())
    return "<nothing>";
  return shape(returned(*parsed));
}

TEST(AstTest, OperatorPrecedenceAndAssociativity) {
  EXPECT_EQ(shapeOf("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(shapeOf("a - b - c"), "((a - b) - c)");
  EXPECT_EQ(shapeOf("a @ b @ c"), "((a @ b) @ c)");
  EXPECT_EQ(shapeOf("a * b % c / d"), "(((a * b) % c) / d)");
  EXPECT_EQ(shapeOf("a ** b ** c"), "(a ** (b ** c))");
  EXPECT_EQ(shapeOf("-a ** 2"), "-(a ** 2)");
  EXPECT_EQ(shapeOf("-a ** -b ** c"), "-(a ** -(b ** c))");
  EXPECT_EQ(shapeOf("- - a"), "--a");
  EXPECT_EQ(shapeOf("not a and b or c"), "((not a and b) or c)");
  EXPECT_EQ(shapeOf("a or b and c"), "(a or (b and c))");
  EXPECT_EQ(shapeOf("a + b < c * d"), "((a + b) < (c * d))");
  EXPECT_EQ(shapeOf("a < b and b >= c"), "((a < b) and (b >= c))");
  EXPECT_EQ(shapeOf("(a + b) * c"), "((a + b) * c)");
  EXPECT_EQ(shapeOf("x @ w.T + b"), "((x @ w.T) + b)");
  EXPECT_EQ(shapeOf("randn([B, 10]) @ D"), "(randn([B, 10]) @ D)");
}

TEST(AstTest, RangesCoverTheirText) {
  auto parsed = parse("model M<D: device>(in: int = 3) {\n"
                      "  param w: f32[in, 2] @ D\n"
                      "  fn f(x: f32[B, in] @ D) -> f32[B] @ D {\n"
                      "    let y = w.sum(dim: 1) + x[0, 1:]\n"
                      "    return y\n"
                      "  }\n"
                      "}\n");
  ASSERT_TRUE(parsed->diagnostics().empty());
  const ModelDecl &model = parsed->module->models.at(0);
  EXPECT_EQ(model.name.range.text(), "M");
  EXPECT_TRUE(model.range.text().starts_with("model M<D"));
  EXPECT_TRUE(model.range.text().ends_with("}\n}"));
  EXPECT_EQ(model.deviceParams.at(0).range.text(), "D: device");
  EXPECT_EQ(model.valueParams.at(0).range.text(), "in: int = 3");
  EXPECT_EQ(model.valueParams.at(0).typeRange.text(), "int");
  EXPECT_EQ(model.state.at(0).range.text(), "param w: f32[in, 2] @ D");
  EXPECT_EQ(model.state.at(0).type->range.text(), "f32[in, 2] @ D");
  EXPECT_EQ(model.state.at(0).type->dims.at(1)->range.text(), "2");
  EXPECT_EQ(model.state.at(0).type->device->range.text(), "D");

  const FnDecl &fn = parsed->fn();
  EXPECT_EQ(fn.params.at(0).range.text(), "x: f32[B, in] @ D");
  EXPECT_EQ(fn.result->range.text(), "f32[B] @ D");
  EXPECT_TRUE(fn.bodyRange.text().starts_with("{\n    let"));
  EXPECT_TRUE(fn.bodyRange.text().ends_with("return y\n  }"));

  const auto &let = llvm::cast<LetStmt>(*fn.body.at(0));
  EXPECT_EQ(let.range.text(), "let y = w.sum(dim: 1) + x[0, 1:]");
  EXPECT_EQ(let.name.range.text(), "y");
  const auto &plus = llvm::cast<BinaryExpr>(*let.value);
  EXPECT_EQ(plus.opRange.text(), "+");
  const auto &call = llvm::cast<CallExpr>(*plus.lhs);
  EXPECT_EQ(call.range.text(), "w.sum(dim: 1)");
  EXPECT_EQ(call.argsRange.text(), "(dim: 1)");
  EXPECT_EQ(call.args.at(0).range.text(), "dim: 1");
  EXPECT_EQ(call.args.at(0).name->range.text(), "dim");
  EXPECT_EQ(llvm::cast<MemberExpr>(*call.callee).member.range.text(), "sum");
  const auto &index = llvm::cast<IndexExpr>(*plus.rhs);
  EXPECT_EQ(index.range.text(), "x[0, 1:]");
  EXPECT_EQ(index.subscripts.at(1).range.text(), "1:");
  EXPECT_TRUE(index.subscripts.at(1).isSlice);
  EXPECT_FALSE(index.subscripts.at(0).isSlice);
}

TEST(AstTest, RangesCountBytesAfterNonAsciiText) {
  // The comment holds 2- and 4-byte characters; ANTLR counts code points,
  // ranges must still land on the right bytes.
  auto parsed =
      parse("// caf\xC3\xA9 \xF0\x9F\x98\x80\nmodel M { fn f() { return \"\xC3\xA9t\xC3\xA9\" } }");
  ASSERT_TRUE(parsed->diagnostics().empty());
  const Expr &value = returned(*parsed);
  EXPECT_EQ(value.range.text(), "\"\xC3\xA9t\xC3\xA9\"");
  EXPECT_EQ(llvm::cast<StringLitExpr>(value).value, "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(parsed->module->models.at(0).name.range.text(), "M");
}

TEST(AstTest, ByteOrderMarkIsSkipped) {
  auto parsed = parse("\xEF\xBB\xBFmodel M {}");
  EXPECT_TRUE(parsed->diagnostics().empty());
  ASSERT_EQ(parsed->module->models.size(), 1u);
  EXPECT_EQ(parsed->module->models[0].range.text(), "model M {}");
}

TEST(AstTest, DocCommentsAttachToTheFollowingDeclaration) {
  auto parsed = parse("/// Not attached: a blank model follows? No, it is attached.\n"
                      "model A {\n"
                      "  /// One.\n"
                      "  ///  Two, indented.\n"
                      "  param p: f32[1] @ cpu\n"
                      "  // plain comment, not a doc\n"
                      "  sub = B<cpu>()\n"
                      "  /// Of the fn.\n"
                      "  fn f() { /// inside a body: ignored\n return }\n"
                      "}\n"
                      "model B {}\n");
  ASSERT_TRUE(parsed->diagnostics().empty());
  const auto &models = parsed->module->models;
  EXPECT_EQ(models[0].doc, "Not attached: a blank model follows? No, it is attached.");
  EXPECT_EQ(models[0].state[0].doc, "One.\n Two, indented.");
  EXPECT_EQ(models[0].submodels[0].doc, "");
  EXPECT_EQ(models[0].fns[0].doc, "Of the fn.");
  EXPECT_EQ(models[1].doc, "");
}

TEST(AstTest, LiteralValues) {
  auto parsed = parseBody("let a = 42\nlet b = 2.5e3\nlet c = false\n"
                          "let d = \"q\\\"\\\\\\n\\t\"\nlet e = cuda:3\nlet f = cpu\nlet g = i32\n"
                          "let h = 9223372036854775807");
  ASSERT_TRUE(parsed->diagnostics().empty());
  const auto &body = parsed->fn().body;
  auto value = [&](size_t i) -> const Expr & { return *llvm::cast<LetStmt>(*body.at(i)).value; };
  EXPECT_EQ(llvm::cast<IntLitExpr>(value(0)).value, 42);
  EXPECT_EQ(llvm::cast<FloatLitExpr>(value(1)).value, 2500.0);
  EXPECT_FALSE(llvm::cast<BoolLitExpr>(value(2)).value);
  EXPECT_EQ(llvm::cast<StringLitExpr>(value(3)).value, "q\"\\\n\t");
  EXPECT_EQ(llvm::cast<DeviceLitExpr>(value(4)).device.kind, DeviceExpr::Kind::Cuda);
  EXPECT_EQ(llvm::cast<DeviceLitExpr>(value(4)).device.cudaIndex, 3);
  EXPECT_EQ(llvm::cast<DeviceLitExpr>(value(5)).device.kind, DeviceExpr::Kind::Cpu);
  EXPECT_EQ(llvm::cast<DTypeLitExpr>(value(6)).dtype, DType::I32);
  EXPECT_EQ(llvm::cast<IntLitExpr>(value(7)).value, INT64_MAX);
  EXPECT_FALSE(llvm::cast<IntLitExpr>(value(7)).overflowed);
}

TEST(AstTest, InIsAnOrdinaryIdentifier) {
  auto parsed = parse("model M(in: int) {\n"
                      "  param w: f32[in] @ cpu\n"
                      "  fn f(in: f32[in]) { let in = in * 2\n for x in in { in = x } }\n"
                      "}\n");
  ASSERT_TRUE(parsed->diagnostics().empty());
  const FnDecl &fn = parsed->fn();
  EXPECT_EQ(fn.params[0].name.name, "in");
  EXPECT_EQ(llvm::cast<LetStmt>(*fn.body[0]).name.name, "in");
  const auto &loop = llvm::cast<ForStmt>(*fn.body[1]);
  EXPECT_EQ(loop.var.name, "x");
  EXPECT_EQ(llvm::cast<NameExpr>(*loop.iterable).name, "in");
  EXPECT_EQ(llvm::cast<AssignStmt>(*loop.body[0]).target.name, "in");
}

TEST(AstTest, InstantiationVersusComparison) {
  auto parsed = parseBody("let a = x < y\nlet b = Enc<cuda:0, D>(1)\nlet c = nn.Linear<cpu>(1, 2)\n"
                          "let d = a < b > c");
  const auto &body = parsed->fn().body;
  ASSERT_GE(body.size(), 3u);
  EXPECT_TRUE(llvm::isa<BinaryExpr>(*llvm::cast<LetStmt>(*body[0]).value));
  const auto &enc = llvm::cast<InstantiateExpr>(*llvm::cast<LetStmt>(*body[1]).value);
  EXPECT_EQ(enc.model.name, "Enc");
  EXPECT_FALSE(enc.module);
  ASSERT_EQ(enc.devices.size(), 2u);
  EXPECT_EQ(enc.devices[1].varName, "D");
  EXPECT_EQ(enc.argsRange.text(), "(1)");
  const auto &linear = llvm::cast<InstantiateExpr>(*llvm::cast<LetStmt>(*body[2]).value);
  EXPECT_EQ(linear.module->name, "nn");
  EXPECT_EQ(linear.model.name, "Linear");
  EXPECT_EQ(linear.args.size(), 2u);
  // `a < b > c` chains comparisons: reported, statement dropped.
  EXPECT_EQ(parsed->codes(), std::vector<std::string>{"E0001"});
  EXPECT_EQ(body.size(), 3u);
}

TEST(AstTest, EmptyAndTrailingCommaForms) {
  auto parsed = parseBody("let a = f()\nlet b = []\nlet c = [1, 2,]\nlet d = g(1, k: 2,)\n"
                          "let e = x[:]\nlet f = x[::]\nlet g = x[a:b:]");
  ASSERT_TRUE(parsed->diagnostics().empty());
  const auto &body = parsed->fn().body;
  ASSERT_EQ(body.size(), 7u);
  auto value = [&](size_t i) -> const Expr & { return *llvm::cast<LetStmt>(*body[i]).value; };
  EXPECT_TRUE(llvm::cast<CallExpr>(value(0)).args.empty());
  EXPECT_TRUE(llvm::cast<ListExpr>(value(1)).elements.empty());
  EXPECT_EQ(llvm::cast<ListExpr>(value(2)).elements.size(), 2u);
  EXPECT_EQ(llvm::cast<CallExpr>(value(3)).args.size(), 2u);
  const Slice &all = llvm::cast<IndexExpr>(value(4)).subscripts[0];
  EXPECT_TRUE(all.isSlice);
  EXPECT_FALSE(all.begin || all.end || all.step);
  EXPECT_TRUE(llvm::cast<IndexExpr>(value(5)).subscripts[0].isSlice);
  const Slice &ab = llvm::cast<IndexExpr>(value(6)).subscripts[0];
  EXPECT_TRUE(ab.begin && ab.end && !ab.step);
}

TEST(AstTest, NamesOfEnums) {
  EXPECT_EQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(dtypeName(DType::Bool), "bool");
  EXPECT_TRUE(isFloating(DType::F16));
  EXPECT_FALSE(isFloating(DType::I64));
  EXPECT_TRUE(isInteger(DType::I32));
  EXPECT_FALSE(isInteger(DType::Bool));
  EXPECT_EQ(scalarKindName(ScalarKind::Float), "float");
  EXPECT_EQ(binaryOpSpelling(BinaryOp::MatMul), "@");
  EXPECT_EQ(binaryOpSpelling(BinaryOp::And), "and");
  EXPECT_EQ(binaryOpSpelling(BinaryOp::Ge), ">=");
}

TEST(AstTest, ExampleFilesParseCleanly) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(MODELC_SOURCE_DIR) / "examples";
  if (!fs::exists(root))
    GTEST_SKIP() << "no examples folder";
  for (const auto &entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".mdl")
      continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = parse(text.str(), entry.path().string());
    EXPECT_TRUE(parsed->diagnostics().empty())
        << entry.path() << ": " << parsed->diagnostics().front();
    EXPECT_FALSE(parsed->module->models.empty()) << entry.path();
  }
}

} // namespace
