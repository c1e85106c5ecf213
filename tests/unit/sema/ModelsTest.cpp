//===- ModelsTest.cpp - Submodels, own fns, members and annotations -------===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::test;

namespace {

TEST(ModelsTest, OwnFnsAndSubmodelFns) {
  Checked c = checkSource(R"(import std.nn
model Encoder<D: device>(d: int, h: int) {
  proj = nn.Linear(d, h)
  fn encode(x: f32[B, d] @ D) -> f32[B, h] @ D { return tanh(proj(x)) }
  fn forward(x: f32[B, d] @ D) -> f32[B, h] @ D { return encode(x) * 2 }
}
model AutoEncoder<D: device>(d: int) {
  enc = Encoder(d, d * 2)
  dec = nn.Linear(d * 2, d)
  fn forward(x: f32[N, d] @ D) -> f32[N, d] @ D {
    let code = enc.encode(x)
    let w = enc.proj.weight
    let y = code @ w
    return dec(code) + y
  }
})");
  EXPECT_TRUE(c.ok) << c.dump();
  const ast::FnDecl &fn = c.compilation->mainModule()->models[1].fns[0];
  auto letType = [&](size_t i) {
    auto *let = llvm::cast<ast::LetStmt>(fn.body[i].get());
    return c.program().typeOf(let->value.get())->type.str();
  };
  EXPECT_EQ(letType(0), "f32[N, 2*d] @ D");
  EXPECT_EQ(letType(1), "f32[2*d, d] @ D");
  EXPECT_EQ(letType(2), "f32[N, d] @ D");

  // Calls record what they resolved to, for the later phases.
  auto *encodeCall = llvm::cast<ast::LetStmt>(fn.body[0].get())->value.get();
  const sema::ExprInfo *info = c.program().typeOf(encodeCall);
  ASSERT_NE(info->calledFn, nullptr);
  EXPECT_EQ(info->calledFn->name, "encode");
  ASSERT_TRUE(info->calledInstance);
  EXPECT_EQ(info->calledInstance->str(), "model Encoder<D>");
  auto *ret = llvm::cast<ast::ReturnStmt>(fn.body[3].get());
  auto *sum = llvm::cast<ast::BinaryExpr>(ret->value.get());
  EXPECT_EQ(c.program().typeOf(sum->lhs.get())->calledFn->name, "forward");
}

TEST(ModelsTest, BuiltinsAndPlacementsAreRecorded) {
  Checked c = checkSource(R"(model M<D: device>(n: int) {
  fn f(x: f32[n] @ D) -> f32[n] @ D { return relu(x) + x.sum(dim: 0) + zeros([n]) @ D }
})");
  ASSERT_TRUE(c.ok) << c.dump();
  const ast::FnDecl &fn = c.compilation->mainModule()->models[0].fns[0];
  auto *outer =
      llvm::cast<ast::BinaryExpr>(llvm::cast<ast::ReturnStmt>(fn.body[0].get())->value.get());
  auto *inner = llvm::cast<ast::BinaryExpr>(outer->lhs.get());
  EXPECT_EQ(c.program().typeOf(inner->lhs.get())->builtin, "relu");
  EXPECT_EQ(c.program().typeOf(inner->rhs.get())->builtin, "sum");
  const sema::ExprInfo *placed = c.program().typeOf(outer->rhs.get());
  EXPECT_TRUE(placed->placement);
  EXPECT_EQ(placed->type.str(), "f32[n] @ D");
  EXPECT_FALSE(c.program().typeOf(outer)->placement);
}

TEST(ModelsTest, BuiltinArgumentBindingsAreRecorded) {
  // Per parameter slot, the argument the checker bound to it: later phases
  // read this rather than binding named and positional arguments again.
  Checked c = checkSource(R"(model M<D: device>(n: int) {
  fn f(x: f32[n, n] @ D) -> f32[n, 1] @ D { return x.sum(keepdim: true, dim: 1) }
  fn g(x: f32[n, n] @ D) -> f32[n, n] @ D { return dropout(x) }
})");
  ASSERT_TRUE(c.ok) << c.dump();
  const ast::ModelDecl &model = c.compilation->mainModule()->models[0];
  auto returned = [&](size_t fn) {
    return llvm::cast<ast::CallExpr>(
        llvm::cast<ast::ReturnStmt>(model.fns[fn].body[0].get())->value.get());
  };
  const ast::CallExpr *sum = returned(0);
  const std::vector<const ast::Expr *> &sumArgs = c.program().typeOf(sum)->builtinArgs;
  ASSERT_EQ(sumArgs.size(), 3u); // x dim? keepdim?
  EXPECT_EQ(sumArgs[0], llvm::cast<ast::MemberExpr>(sum->callee.get())->base.get());
  EXPECT_EQ(sumArgs[1], sum->args[1].value.get());
  EXPECT_EQ(sumArgs[2], sum->args[0].value.get());

  const ast::CallExpr *dropout = returned(1);
  const std::vector<const ast::Expr *> &dropoutArgs = c.program().typeOf(dropout)->builtinArgs;
  ASSERT_EQ(dropoutArgs.size(), 2u); // x p?
  EXPECT_EQ(dropoutArgs[0], dropout->args[0].value.get());
  EXPECT_EQ(dropoutArgs[1], nullptr);
}

TEST(ModelsTest, PacksBindLeadingDims) {
  Checked c = checkSource(R"(import std.nn
model M<D: device>(d: int) {
  l = nn.Linear(d, 3)
  fn forward(x: f32[B, T, d] @ D, y: f32[d] @ D) -> f32[B, T, 3] @ D {
    let single = l(y)
    let z: f32[3] = single
    return l(x)
  }
})");
  EXPECT_TRUE(c.ok) << c.dump();
}

TEST(ModelsTest, SignatureDimsMustAgree) {
  Checked c = checkSource(R"(model Pair<D: device>(n: int) {
  fn forward(a: f32[B, n] @ D, b: f32[B, n] @ D) -> f32[B, n] @ D { return a + b }
}
model M<D: device>(n: int) {
  p = Pair(n)
  fn forward(x: f32[B, n] @ D, y: f32[C, n] @ D) -> f32[B, n] @ D { return p(x, y) }
})");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0408"}) << c.dump();
  EXPECT_EQ(c.find("E0408")->message, "shape mismatch: expected [B, n], found [C, n]");
}

TEST(ModelsTest, LetAnnotationsAreChecked) {
  std::string head = "model M<D: device>(n: int) {\n  fn f(x: f32[B, n] @ D) {\n";
  EXPECT_TRUE(checkSource(head + "    let y: f32[B, n] = x\n  }\n}").ok);
  EXPECT_TRUE(checkSource(head + "    let z: f32[B, n] @ D = zeros([B, n])\n  }\n}").ok);
  EXPECT_EQ(checkSource(head + "    let y: f32[B, n] @ cpu = x\n  }\n}").codes(),
            std::vector<std::string>{"E0502"});
  EXPECT_EQ(checkSource(head + "    let y: i32[B, n] = x\n  }\n}").codes(),
            std::vector<std::string>{"E0201"});
  EXPECT_EQ(checkSource(head + "    let y: f32[n] = x\n  }\n}").codes(),
            std::vector<std::string>{"E0408"});
  // An annotation decides the device of a creation.
  Checked placed =
      checkSource(head + "    let z: f32[3] @ cpu = ones([3])\n    let w = z + x\n  }\n}");
  ASSERT_EQ(placed.codes(), std::vector<std::string>{"E0301"}) << placed.dump();
}

TEST(ModelsTest, ScalarsAndValueParams) {
  Checked c = checkSource(R"(model M<D: device>(n: int, scale: float = 0.5, on: bool = true) {
  fn f(x: f32[B, n] @ D, k: int) -> f32[B, 2 * n] @ D {
    let y = x * scale + k
    let wide = reshape(concat([y, y], dim: 1), [B, n * 2])
    return wide
  }
})");
  EXPECT_TRUE(c.ok) << c.dump();
  Checked bad = checkSource(R"(model M<D: device>(n: int) {
  param w: f32[n]
  fn f(x: f32[n] @ D) -> f32[n] @ D { return x + "a" * w }
})");
  EXPECT_EQ(bad.codes(), std::vector<std::string>{"E0502"}) << bad.dump();
}

TEST(ModelsTest, InstantiatingInsideAFnIsAnError) {
  Checked c = checkSource(
      R"(model Inner<D: device>(n: int) { fn forward(x: f32[n] @ D) -> f32[n] @ D { return x } }
model M<D: device>(n: int) {
  fn forward(x: f32[n] @ D) -> f32[n] @ D {
    return Inner<cuda:0>(n)(x)
  }
})");
  ASSERT_EQ(c.codes(), std::vector<std::string>{"E0304"}) << c.dump();
  // Named for the fix that declares it in the model: `inner = Inner<cuda:0>(n)`.
  EXPECT_EQ(c.find("E0304")->message, "submodel `inner` is created inside `fn forward`");
}

TEST(ModelsTest, SubmodelArgumentsAreChecked) {
  EXPECT_EQ(checkSource("import std.nn\nmodel M<D: device>(n: int) { l = nn.Linear(n) }").codes(),
            std::vector<std::string>{"E0107"});
  EXPECT_EQ(
      checkSource("import std.nn\nmodel M<D: device>(n: int) { l = nn.Linear(n, n, true, f32, n) }")
          .codes(),
      std::vector<std::string>{"E0105"});
  EXPECT_EQ(checkSource("import std.nn\nmodel M<D: device>(n: int) { l = nn.Linear(n, size: n) }")
                .codes(),
            std::vector<std::string>{"E0106"});
  EXPECT_EQ(
      checkSource("import std.nn\nmodel M<D: device>(n: int) { l = nn.Linear(n, 0.5) }").codes(),
      std::vector<std::string>{"E0502"});
  EXPECT_EQ(
      checkSource("import std.nn\nmodel M<D: device>(n: int) { l = nn.Linear<cpu, cpu>(n, n) }")
          .codes(),
      std::vector<std::string>{"E0105"});
}

} // namespace
