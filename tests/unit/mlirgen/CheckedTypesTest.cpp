//===- CheckedTypesTest.cpp - mlirgen gives every value the checker's type ===//
//
// Every built-in (and the operators and subscripts) is generated into one
// module per fn, with the batch dim known only at run time and with it
// bound; mlirgen's own check (every value has its expression's checked type)
// and the mdl verifiers (the type agrees with the op's operands) must both
// pass. A checker whose recorded type disagrees is simulated by changing a
// recorded type: mlirgen must then refuse with E0601, never emit the IR.
//
//===----------------------------------------------------------------------===//

#include "mlirgen/MlirGen.h"

#include "diagnostics/TextRenderer.h"
#include "sema/BuiltinList.h"
#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include <gtest/gtest.h>

using namespace modelc;

namespace {

// One call of every built-in; each fn returns what it computes so nothing
// is left out of the module.
constexpr const char *kSource = R"mdl(
model Every<D: device>(n: int) {
  fn unary(x: f32[B, n] @ D) -> f32[B, n] @ D {
    return dropout(neg(abs(cos(sin(sqrt(log(exp(sigmoid(tanh(silu(gelu(relu(x)))))))))))), p: 0.1)
  }
  fn reduce(x: f32[B, n, 3] @ D) -> (f32[B, 3] @ D, f32[B, n, 1] @ D, f32[B, n] @ D, f32[] @ D,
                                     f32[B, n, 3] @ D, f32[B, n, 3] @ D) {
    return (sum(x, 1), mean(x, -1, keepdim: true), max(x, 2), min(x), softmax(x, 1),
            log_softmax(x, -1))
  }
  fn shapes(x: f32[B, n, 4] @ D) -> (f32[B, 2, 2, n] @ D, f32[B, n * 4] @ D, f32[4, n, B] @ D,
                                     f32[B, 1, n, 4] @ D, f32[B, n, 4] @ D) {
    return (permute(reshape(x, [B, n, 2, 2]), [0, 2, 3, 1]), flatten(x, 1), transpose(x, 0, 2),
            unsqueeze(x, 1), squeeze(unsqueeze(x, 1), 1))
  }
  fn joins(x: f32[B, n] @ D, y: f32[B, 2] @ D) -> (f32[B, n + 2] @ D, f32[B, n + 2] @ D,
                                                   f32[2, B, 2] @ D, f32[B, n - 1] @ D,
                                                   f32[B, 1] @ D) {
    let parts = split(x, [1, n - 1], 1)
    return (concat([x, y], 1), cat([x, y], -1), stack([y, y]), parts[1], chunk(y, 2, 1)[0])
  }
  fn spatial(x: f32[B, 3, 8, 8] @ D, w: f32[4, 3, 3, 3] @ D, b: f32[4] @ D)
      -> (f32[B, 4, 4, 4] @ D, f32[B, 3, 4, 4] @ D, f32[B, 3, 4, 4] @ D, f32[B, 3, 2, 3] @ D,
          f32[4, 8, 8] @ D) {
    return (relu(conv2d(x, w, b, stride: 2, padding: 1)), max_pool2d(x, 2),
            avg_pool2d(x, 3, stride: 2, padding: 1), adaptive_avg_pool2d(x, [2, 3]),
            conv2d(x[0], w, padding: 1))
  }
  fn norms(x: f32[B, 6, 4] @ D, g: f32[4] @ D, m: f32[6] @ D)
      -> (f32[B, 6, 4] @ D, f32[B, 6, 4] @ D, f32[B, 6, 4] @ D) {
    return (layer_norm(x, g, g), batch_norm(x, m, m, m, m), group_norm(x, 2, m, m))
  }
  fn indexing(t: i64[B, 5] @ D, table: f32[10, n] @ D, x: f32[B, 5] @ D, i: i64[3] @ D)
      -> (f32[B, 5, n] @ D, f32[B, 5] @ D, f32[B, 3] @ D, f32[B, 5] @ D, f32[] @ D, f32[] @ D) {
    return (embedding(t, table), gather(x, 1, t), index_select(x, 1, i), where(x > 0.0, x, 0.0),
            cross_entropy(x, t[:, 0]), nll_loss(log_softmax(x, 1), t[:, 0], weight: ones([5]) @ D))
  }
  fn create(x: f32[B, n] @ D) -> (f32[B, n] @ D, i64[5] @ D, f32[3, 3] @ D, f32[4] @ D) {
    return (x + zeros([B, n]) + ones([B, 1]) + full([1, n], 2.0) + randn([B, n], seed: 3),
            arange(5) @ D, eye(3) @ D, arange(0.0, 2.0, 0.5) @ D)
  }
  fn convert(x: f32[B, n] @ D) -> (i32[B, n] @ D, f32[B, n] @ cuda:0) {
    return (cast(x, i32), x.to(cuda:0))
  }
  fn products(a: f32[B, 3, n] @ D, v: f32[n] @ D, m: f32[n, 2] @ D)
      -> (f32[B, 3, 2] @ D, f32[B, 3] @ D, f32[2] @ D, f32[] @ D, f32[2, n] @ D) {
    return (a @ m, matmul(a, v), v @ m, v @ v, m.T)
  }
  fn ported(x: f32[B, 4, 6] @ D, w1: f32[5, 4, 3] @ D, wt: f32[4, 2, 3, 3] @ D,
            img: f32[B, 4, 5, 5] @ D)
      -> (f32[B, 4, 6] @ D, f32[B, 4, 6] @ D, f32[B, 4, 8] @ D, f32[B, 5, 4] @ D,
          f32[B, 2, 11, 11] @ D, f32[B, 4, 10, 10] @ D, f32[B, 4, 12] @ D) {
    return (masked_fill(x, x > 0.0, 1.0), triu(x, 1) + tril(x, -1), pad(x, [1, 1], mode: "reflect"),
            conv1d(x, w1), conv_transpose2d(img, wt, stride: 2),
            interpolate(img, scale_factor: 2, mode: "bilinear"), interpolate(x, size: 12))
  }
  fn operators(x: f32[B, n] @ D, y: f32[n] @ D)
      -> (f32[B, n] @ D, bool[B, n] @ D, f32[B, 2] @ D, f32[n] @ D) {
    return (-(x * y + y / 2.0 - x) ** 2.0 % 3.0, x > y and not (x < 0.0), x[:, 1:3], x[0])
  }
  fn bounds(x: f32[B, n] @ D, t: i64[B, n] @ D)
      -> (f32[B, n] @ D, f32[B, n] @ D, f32[B, n] @ D, i64[B] @ D, i64[B, 1] @ D, i64[] @ D,
          i64[B] @ D) {
    return (clamp(x, min: 0.0, max: x), clip(x, max: 1.0), maximum(x, 0.5) + minimum(x, x),
            argmax(x, dim: 1), argmin(x, dim: -1, keepdim: true), argmax(t), sum(t > 0, dim: 1))
  }
  fn packed(x: f32[..., n] @ D) -> f32[..., n] @ D {
    return softmax(x * 2.0, -1) + sum(x, -1, keepdim: true)
  }
}
)mdl";

constexpr const char *kFns[] = {"unary",  "reduce",    "shapes", "joins",   "spatial",
                                "norms",  "indexing",  "create", "convert", "products",
                                "ported", "operators", "bounds", "packed"};

struct Fixture {
  Compilation compilation{[] {
    CompileOptions options;
    options.stdlibDir = MODELC_STDLIB_DIR;
    return options;
  }()};
  std::optional<mlirgen::ConcreteModel> model;
  mlir::MLIRContext context;

  std::string diagnostics() {
    std::string text;
    llvm::raw_string_ostream os(text);
    renderTextAll(compilation.diagnostics().diagnostics(), compilation.sourceMgr(), os);
    return text;
  }

  bool setUp() {
    compilation.addBuffer("every.mdl", kSource);
    if (!compilation.check())
      return false;
    auto instance =
        mlirgen::instantiateModel(*compilation.program(), "Every", "n=4", sema::Device::cpu());
    if (!instance) {
      llvm::consumeError(instance.takeError());
      return false;
    }
    model = std::move(*instance);
    return true;
  }

  /// fn `fn` as a module, with `B` known only at run time or bound to 2.
  mlir::OwningOpRef<mlir::ModuleOp> build(llvm::StringRef fn, bool bindBatch) {
    std::vector<std::pair<sema::AtomId, int64_t>> bindings;
    if (bindBatch)
      bindings.push_back({sema::internSymbol("B"), 2});
    mlirgen::EntryValues entry;
    entry.pack = std::vector<int64_t>{bindBatch ? int64_t(2) : mlir::ShapedType::kDynamic, 3};
    return mlirgen::buildModule(context, *compilation.program(), compilation.sourceMgr(), *model,
                                fn, compilation.diagnostics(), bindings, entry);
  }

  /// The checker's record of the first call of built-in `name` in the
  /// source (the test's stand-in for a checker that records a wrong type).
  sema::ExprInfo *recordOf(llvm::StringRef name) {
    const ast::Expr *found = nullptr;
    compilation.program()->forEachExpr([&](const ast::Expr *expr, const sema::ExprInfo &info) {
      if (info.builtin == name &&
          (!found || expr->range.begin.getPointer() < found->range.begin.getPointer()))
        found = expr;
    });
    if (!found)
      return nullptr;
    return &const_cast<sema::CheckedProgram *>(compilation.program())->infoFor(found);
  }
};

TEST(CheckedTypes, EveryBuiltinIsGeneratedWithTheCheckersType) {
  Fixture f;
  ASSERT_TRUE(f.setUp()) << f.diagnostics();
  for (bool bindBatch : {false, true}) {
    for (const char *fn : kFns) {
      mlir::OwningOpRef<mlir::ModuleOp> module = f.build(fn, bindBatch);
      EXPECT_TRUE(module) << fn << (bindBatch ? " (B = 2)" : " (B dynamic)") << ":\n"
                          << f.diagnostics();
      f.compilation.diagnostics().clear();
    }
  }
}

TEST(CheckedTypes, TheSourceCallsEveryBuiltin) {
  // A new built-in must be added to kSource, so that the test above covers it.
  std::string source = kSource;
  for (const sema::BuiltinSignature &builtin : sema::builtinSignatures())
    EXPECT_NE(source.find(builtin.name.str() + "("), std::string::npos)
        << "`" << builtin.name.str() << "` is not called in kSource";
}

TEST(CheckedTypes, AValueOfAnotherTypeThanTheCheckersIsAnError) {
  // dropout passes its operand through: a recorded type that disagrees with
  // the operand's is caught by mlirgen's own check.
  Fixture f;
  ASSERT_TRUE(f.setUp()) << f.diagnostics();
  sema::ExprInfo *dropout = f.recordOf("dropout");
  ASSERT_TRUE(dropout);
  dropout->type.shape.dims.back() = sema::Dim::constant(5);
  EXPECT_FALSE(f.build("unary", /*bindBatch=*/true));
  std::string text = f.diagnostics();
  EXPECT_NE(text.find("E0601"), std::string::npos) << text;
  EXPECT_NE(text.find("is not its checked type tensor<2x5xf32"), std::string::npos) << text;
}

TEST(CheckedTypes, ACheckedTypeTheOpDoesNotHaveIsAnError) {
  // conv2d's result is the checker's type: one that disagrees with the op's
  // operands and attributes is caught by the mdl verifier (relu, the
  // conv's user, keeps the checker's right type, so the fn's result fits).
  Fixture f;
  ASSERT_TRUE(f.setUp()) << f.diagnostics();
  sema::ExprInfo *conv = f.recordOf("conv2d");
  ASSERT_TRUE(conv);
  conv->type.shape.dims.back() = sema::Dim::constant(5);
  std::string verifier;
  mlir::ScopedDiagnosticHandler capture(&f.context, [&](mlir::Diagnostic &d) {
    verifier += d.str() + "\n";
    return mlir::success();
  });
  EXPECT_FALSE(f.build("spatial", /*bindBatch=*/true));
  std::string text = f.diagnostics();
  EXPECT_NE(text.find("the generated mdl IR does not verify"), std::string::npos) << text;
  EXPECT_NE(verifier.find("'mdl.conv2d' op result dim 3 is 5 but expected 4"), std::string::npos)
      << verifier;
}

} // namespace
