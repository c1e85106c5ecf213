//===- BuiltinsTest.cpp - Shapes, dtypes and devices of each built-in -----===//

#include "SemaTestSupport.h"

using namespace modelc;
using namespace modelc::test;

namespace {

// A fn of `model T<D: device>(n: int, m: int)`.
std::string type(llvm::StringRef params, llvm::StringRef expr, llvm::StringRef members = "") {
  ExprResult r = typeOfExpr(params, expr, members);
  return r.type;
}

TEST(BuiltinsTest, ElementwiseBroadcasts) {
  EXPECT_EQ(type("x: f32[B, n], y: f32[n]", "x + y"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, 1], y: f32[1, n]", "x * y"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x * 2"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "2.5 - x"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x ** 2"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n], y: f32[B, n]", "x < y"), "bool[B, n] @ D");
  EXPECT_EQ(type("x: bool[n], y: bool[n]", "x and not y"), "bool[n] @ D");
  EXPECT_EQ(type("x: f32[B, n], y: f32[m]", "x + y"), "error: E0401");
  EXPECT_EQ(type("x: i64[n]", "x * 0.5"), "error: E0201");
  EXPECT_EQ(type("x: f32[n], y: f16[n]", "x + y"), "error: E0201");
  EXPECT_EQ(type("x: f32[n]", "x and x"), "error: E0204");
}

TEST(BuiltinsTest, UnaryFunctions) {
  EXPECT_EQ(type("x: f32[B, n]", "relu(x)"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: i32[n]", "abs(x)"), "i32[n] @ D");
  for (const char *fn : {"gelu", "silu", "tanh", "sigmoid", "exp", "log", "sqrt"}) {
    EXPECT_EQ(type("x: f16[n]", std::string(fn) + "(x)"), "f16[n] @ D") << fn;
    EXPECT_EQ(type("x: i64[n]", std::string(fn) + "(x)"), "error: E0202") << fn;
  }
  EXPECT_EQ(type("x: f32[n]", "dropout(x, 0.1)"), "f32[n] @ D");
  EXPECT_EQ(type("x: f32[n]", "-x"), "f32[n] @ D");
}

TEST(BuiltinsTest, Matmul) {
  EXPECT_EQ(type("a: f32[n, m], b: f32[m, 4]", "a @ b"), "f32[n, 4] @ D");
  EXPECT_EQ(type("a: f32[m], b: f32[m]", "a @ b"), "f32[] @ D");
  EXPECT_EQ(type("a: f32[m], b: f32[m, 4]", "a @ b"), "f32[4] @ D");
  EXPECT_EQ(type("a: f32[n, m], b: f32[m]", "matmul(a, b)"), "f32[n] @ D");
  EXPECT_EQ(type("a: f32[B, T, m], b: f32[m, n]", "a @ b"), "f32[B, T, n] @ D");
  EXPECT_EQ(type("a: f32[B, 1, n, m], b: f32[H, m, 4]", "a @ b"), "f32[B, H, n, 4] @ D");
  EXPECT_EQ(type("a: f32[..., m], b: f32[m, n]", "a @ b"), "f32[..., n] @ D");
  EXPECT_EQ(type("a: f32[n, m], b: f32[n, m]", "a @ b"), "error: E0402");
  EXPECT_EQ(type("a: f32[n, m], b: f32[m, n]", "a @ b.T"), "error: E0402");
}

TEST(BuiltinsTest, Reductions) {
  EXPECT_EQ(type("x: f32[B, n]", "sum(x, dim: 1)"), "f32[B] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x.sum(dim: -1, keepdim: true)"), "f32[B, 1] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "mean(x)"), "f32[] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "max(x, dim: 0)"), "f32[n] @ D");
  EXPECT_EQ(type("x: i64[B, n]", "mean(x, dim: 0)"), "error: E0202");
  EXPECT_EQ(type("x: f32[B, n]", "sum(x, dim: 2)"), "error: E0406");
  EXPECT_EQ(type("x: f32[B, n]", "softmax(x, dim: 1)"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "log_softmax(x, dim: -1)"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: i32[B, n]", "softmax(x, dim: 1)"), "error: E0202");
  EXPECT_EQ(type("x: f32[B, n]", "softmax(x)"), "error: E0107");
}

TEST(BuiltinsTest, ShapeOps) {
  EXPECT_EQ(type("x: f32[B, 4, n]", "reshape(x, [B, 4 * n])"), "f32[B, 4*n] @ D");
  EXPECT_EQ(type("x: f32[B, 4, n]", "reshape(x, [B, -1])"), "f32[B, 4*n] @ D");
  EXPECT_EQ(type("x: f32[6, 4]", "x.reshape([-1, 3])"), "f32[8, 3] @ D");
  EXPECT_EQ(type("x: f32[6, 4]", "reshape(x, [5, 5])"), "error: E0404");
  EXPECT_EQ(type("x: f32[6, 4]", "reshape(x, [-1, -1])"), "error: E0404");
  EXPECT_EQ(type("x: f32[6, 4]", "reshape(x, [-1, 5])"), "error: E0404");
  EXPECT_EQ(type("x: f32[B, C, H, W]", "flatten(x, start_dim: 1)"), "f32[B, C*H*W] @ D");
  EXPECT_EQ(type("x: f32[B, C, H, W]", "flatten(x, start_dim: 1, end_dim: 2)"),
            "f32[B, C*H, W] @ D");
  EXPECT_EQ(type("x: f32[B, n, m]", "transpose(x, 1, 2)"), "f32[B, m, n] @ D");
  EXPECT_EQ(type("x: f32[n, m]", "x.T"), "f32[m, n] @ D");
  EXPECT_EQ(type("x: f32[B, n, m]", "x.T"), "error: E0403");
  EXPECT_EQ(type("x: f32[B, n, m]", "permute(x, [2, 0, 1])"), "f32[m, B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n, m]", "permute(x, [2, 0, 3])"), "error: E0406");
  EXPECT_EQ(type("x: f32[B, n]", "unsqueeze(x, 1)"), "f32[B, 1, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x.unsqueeze(-1)"), "f32[B, n, 1] @ D");
  EXPECT_EQ(type("x: f32[B, 1, n]", "squeeze(x, 1)"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, 1, n]", "squeeze(x, 2)"), "error: E0408");
  EXPECT_EQ(type("x: f32[1, n, 1]", "squeeze(x)"), "f32[n] @ D");
}

TEST(BuiltinsTest, ConcatAndStack) {
  EXPECT_EQ(type("a: f32[B, n], b: f32[B, m]", "concat([a, b], dim: 1)"), "f32[B, m + n] @ D");
  EXPECT_EQ(type("a: f32[B, n], b: f32[B, n]", "stack([a, b], dim: 0)"), "f32[2, B, n] @ D");
  EXPECT_EQ(type("a: f32[B, n], b: f32[B, m]", "concat([a, b], dim: 0)"), "error: E0405");
  EXPECT_EQ(type("a: f32[B, n], b: f32[B, m]", "stack([a, b])"), "error: E0405");
  EXPECT_EQ(type("a: f32[B, n], b: f16[B, n]", "concat([a, b], dim: 0)"), "error: E0201");
  EXPECT_EQ(type("a: f32[B, n], b: f32[B, n] @ cpu", "concat([a, b], dim: 0)"), "error: E0301");
}

TEST(BuiltinsTest, ConvolutionAndPooling) {
  std::string members = "  param w: f32[16, 3, 3, 3]\n  param b: f32[16]\n";
  EXPECT_EQ(type("x: f32[N, 3, 32, 32]", "conv2d(x, w, b, padding: 1)", members),
            "f32[N, 16, 32, 32] @ D");
  EXPECT_EQ(type("x: f32[N, 3, 32, 32]", "conv2d(x, w, stride: 2)", members),
            "f32[N, 16, 15, 15] @ D");
  EXPECT_EQ(type("x: f32[N, 3, 32, 32]", "conv2d(x, w, dilation: 2)", members),
            "f32[N, 16, 28, 28] @ D");
  EXPECT_EQ(type("x: f32[N, 3, H, W]", "conv2d(x, w, padding: 1)", members),
            "f32[N, 16, H, W] @ D");
  EXPECT_EQ(type("x: f32[N, 3, H, W]", "conv2d(x, w, stride: 2)", members),
            "f32[N, 16, (H - 3)/2 + 1, (W - 3)/2 + 1] @ D");
  EXPECT_EQ(type("x: f32[N, 4, 32, 32]", "conv2d(x, w)", members), "error: E0407");
  EXPECT_EQ(type("x: f32[N, 3, 32, 32], b2: f32[8]", "conv2d(x, w, b2)", members), "error: E0407");
  EXPECT_EQ(type("x: f32[3, 32]", "conv2d(x, w)", members), "error: E0403");
  EXPECT_EQ(type("x: f32[N, C, 28, 28]", "max_pool2d(x, 2)"), "f32[N, C, 14, 14] @ D");
  EXPECT_EQ(type("x: f32[N, C, 28, 28]", "avg_pool2d(x, 3, stride: 1, padding: 1)"),
            "f32[N, C, 28, 28] @ D");
  EXPECT_EQ(type("x: f32[N, C, H, W]", "adaptive_avg_pool2d(x, [1, 1])"), "f32[N, C, 1, 1] @ D");
  EXPECT_EQ(type("x: i32[N, C, 8, 8]", "avg_pool2d(x, 2)"), "error: E0202");
}

TEST(BuiltinsTest, Normalisation) {
  EXPECT_EQ(type("x: f32[B, T, n], w: f32[n], b: f32[n]", "layer_norm(x, w, b, eps: 0.001)"),
            "f32[B, T, n] @ D");
  EXPECT_EQ(type("x: f32[B, T, n], w: f32[m], b: f32[m]", "layer_norm(x, w, b)"), "error: E0408");
  EXPECT_EQ(type("x: f32[N, C, H, W], a: f32[C], b: f32[C], c: f32[C], d: f32[C]",
                 "batch_norm(x, a, b, c, d)"),
            "f32[N, C, H, W] @ D");
  EXPECT_EQ(type("x: f32[N, C, H, W], a: f32[H], b: f32[C], c: f32[C], d: f32[C]",
                 "batch_norm(x, a, b, c, d)"),
            "error: E0408");
}

TEST(BuiltinsTest, Indexing) {
  EXPECT_EQ(type("i: i64[B, T], t: f32[n, m]", "embedding(i, t)"), "f32[B, T, m] @ D");
  EXPECT_EQ(type("i: f32[B, T], t: f32[n, m]", "embedding(i, t)"), "error: E0203");
  EXPECT_EQ(type("i: i64[B, T], t: f32[n, m] @ cpu", "embedding(i, t)"), "error: E0301");
  EXPECT_EQ(type("x: f32[B, n], i: i64[B, 3]", "gather(x, 1, i)"), "f32[B, 3] @ D");
  EXPECT_EQ(type("x: f32[B, n], i: i64[3]", "gather(x, 1, i)"), "error: E0403");
  EXPECT_EQ(type("x: f32[B, n], i: i32[k]", "index_select(x, 1, i)"), "f32[B, k] @ D");
  EXPECT_EQ(type("x: f32[B, n], i: i32[k] @ cuda:1", "index_select(x, 1, i)"), "error: E0301");
  EXPECT_EQ(type("x: f32[B, n]", "x[0]"), "f32[n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x[:, 1:3]"), "f32[B, 2] @ D");
  EXPECT_EQ(type("x: f32[B, 10]", "x[:, ::2]"), "f32[B, 5] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x[0, 0, 0]"), "error: E0406");
}

TEST(BuiltinsTest, WhereAndLosses) {
  EXPECT_EQ(type("c: bool[B, n], a: f32[B, n], b: f32[n]", "where(c, a, b)"), "f32[B, n] @ D");
  EXPECT_EQ(type("c: bool[B, n], a: f32[B, n]", "where(c, a, 0.0)"), "f32[B, n] @ D");
  EXPECT_EQ(type("c: f32[B, n], a: f32[B, n]", "where(c, a, a)"), "error: E0204");
  EXPECT_EQ(type("l: f32[B, C], t: i64[B]", "cross_entropy(l, t)"), "f32[] @ D");
  EXPECT_EQ(type("l: f32[B, C], t: i64[B], w: f32[C]", "nll_loss(l, t, weight: w)"), "f32[] @ D");
  EXPECT_EQ(type("l: f32[B, C], t: f32[B]", "cross_entropy(l, t)"), "error: E0203");
  EXPECT_EQ(type("l: f32[B, C], t: i64[B], w: f32[n]", "cross_entropy(l, t, weight: w)"),
            "error: E0408");
  EXPECT_EQ(type("l: f32[B, C], t: i64[B] @ cpu", "cross_entropy(l, t)"), "error: E0301");
}

TEST(BuiltinsTest, CreationAndConversion) {
  EXPECT_EQ(type("", "zeros([n, 3]) @ D"), "f32[n, 3] @ D");
  EXPECT_EQ(type("", "ones([2], dtype: i32) @ cpu"), "i32[2] @ cpu");
  EXPECT_EQ(type("", "full([n], 1.5) @ cuda:1"), "f32[n] @ cuda:1");
  EXPECT_EQ(type("", "arange(n) @ D"), "i64[n] @ D");
  EXPECT_EQ(type("", "eye(n, dtype: f64) @ D"), "f64[n, n] @ D");
  EXPECT_EQ(type("", "randn([n], seed: 3) @ D"), "f32[n] @ D");
  EXPECT_EQ(type("", "randn([n], dtype: i64) @ D"), "error: E0202");
  EXPECT_EQ(type("", "full([n], 1.5, dtype: i32) @ D"), "error: E0201");
  EXPECT_EQ(type("x: f32[B, n]", "x + zeros([B, n])"), "f32[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "cast(x, f16)"), "f16[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x.to(cuda:1)"), "f32[B, n] @ cuda:1");
  EXPECT_EQ(type("x: f32[B, n]", "x.to(f16)"), "f16[B, n] @ D");
  EXPECT_EQ(type("x: f32[B, n]", "x.to(3)"), "error: E0502");
}

TEST(BuiltinsTest, ArgumentBinding) {
  EXPECT_EQ(type("x: f32[n]", "relu(x, x)"), "error: E0105");
  EXPECT_EQ(type("x: f32[n]", "sum(x, axis: 0)"), "error: E0106");
  EXPECT_EQ(type("x: f32[n]", "sum(x, dim: 0, dim: 0)"), "error: E0112");
  EXPECT_EQ(type("x: f32[n]", "transpose(x)"), "error: E0107");
  EXPECT_EQ(type("x: f32[n]", "x.frobnicate()"), "error: E0104");
  EXPECT_EQ(type("x: f32[B, n]", "sum(x, dim: n)"), "error: E0504");
}

} // namespace
