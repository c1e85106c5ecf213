//===- RobustnessTest.cpp - Hostile and degenerate input ------------------===//
//
// Whatever the input, the parser returns, reports what is wrong with the
// project's own diagnostics, and hands back a module that keeps the AST's
// invariants (required children present, ranges inside the buffer).
//
//===----------------------------------------------------------------------===//
#include "ParseTestUtil.h"

#include "llvm/Support/Casting.h"

#include <gtest/gtest.h>

#include <ctime>
#include <random>

using namespace modelc;
using namespace modelc::ast;
using namespace modelc::test;

namespace {

/// Checks the invariants a partial module must keep.
class InvariantChecker {
public:
  explicit InvariantChecker(const Parsed &parsed)
      : buffer_(parsed.sm.getMemoryBuffer(parsed.bufferId)->getBuffer()) {}

  void check(const Module &module) {
    for (const ImportDecl &import : module.imports) {
      checkRange(import.range);
      EXPECT_FALSE(import.path.empty());
    }
    for (const ModelDecl &model : module.models)
      checkModel(model);
  }

private:
  void checkRange(Range range) {
    ASSERT_TRUE(range.isValid());
    const char *begin = range.begin.getPointer(), *end = range.end.getPointer();
    EXPECT_LE(buffer_.begin(), begin);
    EXPECT_LE(begin, end);
    EXPECT_LE(end, buffer_.end());
  }
  void checkIdent(const Ident &ident) {
    checkRange(ident.range);
    EXPECT_EQ(ident.range.text(), ident.name);
  }
  void checkType(const TypeExpr *type) {
    ASSERT_NE(type, nullptr);
    checkRange(type->range);
    for (const auto &dim : type->dims)
      checkDim(dim.get());
  }
  void checkDim(const DimExpr *dim) {
    ASSERT_NE(dim, nullptr);
    checkRange(dim->range);
    if (dim->kind == DimExpr::Kind::Binary) {
      checkDim(dim->lhs.get());
      checkDim(dim->rhs.get());
    }
  }
  void checkModel(const ModelDecl &model) {
    checkRange(model.range);
    checkIdent(model.name);
    for (const ValueParam &param : model.valueParams)
      if (param.defaultValue)
        checkExpr(param.defaultValue.get());
    for (const StateDecl &state : model.state) {
      checkIdent(state.name);
      checkType(state.type.get());
      if (state.init)
        checkExpr(state.init.get());
    }
    for (const SubmodelDecl &submodel : model.submodels)
      checkExpr(submodel.init.get());
    for (const FnDecl &fn : model.fns) {
      checkIdent(fn.name);
      for (const FnParam &param : fn.params)
        checkType(param.type.get());
      if (fn.result)
        checkType(fn.result.get());
      for (const StmtPtr &stmt : fn.body)
        checkStmt(stmt.get());
    }
  }
  void checkStmt(const Stmt *stmt) {
    ASSERT_NE(stmt, nullptr);
    checkRange(stmt->range);
    if (const auto *let = llvm::dyn_cast<LetStmt>(stmt)) {
      checkExpr(let->value.get());
    } else if (const auto *ret = llvm::dyn_cast<ReturnStmt>(stmt)) {
      if (ret->value)
        checkExpr(ret->value.get());
    } else if (const auto *loop = llvm::dyn_cast<ForStmt>(stmt)) {
      checkExpr(loop->iterable.get());
      for (const StmtPtr &inner : loop->body)
        checkStmt(inner.get());
    } else if (const auto *assign = llvm::dyn_cast<AssignStmt>(stmt)) {
      checkExpr(assign->value.get());
    } else {
      checkExpr(llvm::cast<ExprStmt>(stmt)->expr.get());
    }
  }
  void checkArgs(const std::vector<Arg> &args) {
    for (const Arg &arg : args)
      checkExpr(arg.value.get());
  }
  void checkExpr(const Expr *expr) {
    ASSERT_NE(expr, nullptr);
    checkRange(expr->range);
    if (const auto *list = llvm::dyn_cast<ListExpr>(expr)) {
      for (const ExprPtr &element : list->elements)
        checkExpr(element.get());
    } else if (const auto *unary = llvm::dyn_cast<UnaryExpr>(expr)) {
      checkExpr(unary->operand.get());
    } else if (const auto *binary = llvm::dyn_cast<BinaryExpr>(expr)) {
      checkExpr(binary->lhs.get());
      checkExpr(binary->rhs.get());
    } else if (const auto *call = llvm::dyn_cast<CallExpr>(expr)) {
      checkExpr(call->callee.get());
      checkArgs(call->args);
    } else if (const auto *member = llvm::dyn_cast<MemberExpr>(expr)) {
      checkExpr(member->base.get());
      checkIdent(member->member);
    } else if (const auto *index = llvm::dyn_cast<IndexExpr>(expr)) {
      checkExpr(index->base.get());
      EXPECT_FALSE(index->subscripts.empty());
      for (const Slice &slice : index->subscripts) {
        if (!slice.isSlice)
          checkExpr(slice.index.get());
      }
    } else if (const auto *inst = llvm::dyn_cast<InstantiateExpr>(expr)) {
      EXPECT_FALSE(inst->devices.empty());
      checkArgs(inst->args);
    }
  }

  llvm::StringRef buffer_;
};

std::unique_ptr<Parsed> parseChecked(llvm::StringRef text) {
  auto parsed = parse(text);
  InvariantChecker(*parsed).check(*parsed->module);
  EXPECT_LE(parsed->diags.diagnostics().size(), kMaxSyntaxErrors + 10);
  return parsed;
}

const char *kValidModel = R"mdl(import std.nn

/// A block.
model Block<D: device>(in: int, hidden: int, p: float = 0.1) {
  param scale: f32[hidden] @ D
  buffer mean: f32[in] @ cpu = zeros([in])
  fc1 = nn.Linear(in, hidden)
  enc = Enc<cuda:0>(in)
  fn forward(x: f32[B, in] @ D) -> f32[B, hidden] @ D {
    let h = relu(fc1(x - mean.to(D))) * scale
    let g: f32[B, hidden] @ D = dropout(h ** 2 + -h, p)
    for layer in layers { g = layer(g); }
    return log_softmax(g[:, 0:hidden] + x[1, ::2].sum(dim: 1, keepdim: true), dim: 1)
  }
}
)mdl";

TEST(RobustnessTest, EmptyAndCommentOnlyFiles) {
  for (const char *text : {"", " ", "\n\n\t\r\n", "// only a comment", "/// a dangling doc",
                           "/* block */", "/** doc-like block */\n// and a line\n"}) {
    auto parsed = parseChecked(text);
    EXPECT_TRUE(parsed->diagnostics().empty()) << text;
    EXPECT_TRUE(parsed->module->models.empty());
    EXPECT_TRUE(parsed->module->imports.empty());
  }
}

TEST(RobustnessTest, RandomBytes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(std::uniform_int_distribution<size_t>(1, 400)(rng), '\0');
    for (char &byte : bytes)
      byte = char(std::uniform_int_distribution<int>(0, 255)(rng));
    auto parsed = parseChecked(bytes);
    EXPECT_FALSE(parsed->diagnostics().empty());
  }
}

TEST(RobustnessTest, RandomAsciiIncludingNulAndControls) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(std::uniform_int_distribution<size_t>(1, 400)(rng), '\0');
    for (char &byte : bytes)
      byte = char(std::uniform_int_distribution<int>(0, 127)(rng));
    parseChecked(bytes);
  }
}

TEST(RobustnessTest, MutatedPrograms) {
  // Delete, duplicate or swap in random slices of a valid program: every
  // kind of half-written code an editor sends.
  const std::string base = kValidModel;
  const std::vector<std::string> inserts = {"(",     ")",  "[",  "]",  "{",  "}",   ",",
                                            ":",     "=",  "@",  "->", "**", "let", "fn",
                                            "model", "\"", "/*", "<",  ">",  "1e",  "..."};
  std::mt19937 rng(3);
  for (int round = 0; round < 1500; ++round) {
    std::string text = base;
    int edits = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng);
      size_t length = std::uniform_int_distribution<size_t>(0, 12)(rng);
      switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
      case 0:
        text.erase(at, length);
        break;
      case 1:
        text.insert(at, inserts[std::uniform_int_distribution<size_t>(0, inserts.size() - 1)(rng)]);
        break;
      default:
        text.insert(at, text.substr(at, length));
        break;
      }
    }
    parseChecked(text);
    if (HasFailure()) {
      ADD_FAILURE() << "input:\n" << text;
      break;
    }
  }
}

TEST(RobustnessTest, DeepBracketNesting) {
  for (std::string open : {"(", "[", "{"}) {
    std::string close = open == "(" ? ")" : open == "[" ? "]" : "}";
    std::string nested;
    for (int i = 0; i < 10000; ++i)
      nested += open;
    nested += "x";
    for (int i = 0; i < 10000; ++i)
      nested += close;
    auto parsed = parseChecked("model M { fn f() { return " + nested + " } }");
    EXPECT_EQ(parsed->codes(), std::vector<std::string>{"E0006"}) << open;
    // Unbalanced: only openers.
    auto unbalanced = parseChecked(std::string(10000, open[0]));
    EXPECT_EQ(unbalanced->codes(), std::vector<std::string>{"E0006"}) << open;
  }
  std::string types =
      "model M { param p: f32[" + std::string(5000, '(') + "1" + std::string(5000, ')') + "] }";
  EXPECT_EQ(parseChecked(types)->codes(), std::vector<std::string>{"E0006"});
}

TEST(RobustnessTest, LongChainsWithoutBrackets) {
  auto repeat = [](llvm::StringRef piece, int count) {
    std::string text;
    for (int i = 0; i < count; ++i)
      text += piece;
    return text;
  };
  // Each of these is one flat list in the parse tree; the AST they would
  // make is too deep, which is E0010, reported once.
  for (std::string expr :
       {repeat("- ", 20000) + "x", repeat("not ", 20000) + "x", "x" + repeat(" ** x", 20000),
        "x" + repeat(".y", 20000), "f" + repeat("()", 20000), "x" + repeat("[0]", 20000),
        "x" + repeat(" + x", 20000), "x" + repeat(" and x", 20000)}) {
    auto parsed = parseChecked("model M { fn f() { return " + expr + " } }");
    EXPECT_EQ(parsed->codes(), std::vector<std::string>{"E0010"}) << expr.substr(0, 20);
  }
  auto dims = parseChecked("model M { param p: f32[" + repeat("1 + ", 20000) + "1] @ cpu }");
  EXPECT_EQ(dims->codes(), std::vector<std::string>{"E0010"});
  // Long but shallow: many statements, many arguments, long lists.
  auto wide = parseChecked("model M { fn f() { " + repeat("let a = 1\n", 20000) + " return g(" +
                           repeat("1, ", 20000) + "1) } }");
  EXPECT_TRUE(wide->diagnostics().empty());
  EXPECT_EQ(wide->fn().body.size(), 20001u);
}

TEST(RobustnessTest, HugeLiterals) {
  std::string digits(100000, '7');
  auto parsed = parseChecked("model M { fn f() { return " + digits + " } }");
  ASSERT_EQ(parsed->codes(), std::vector<std::string>{"E0005"});
  // The message shows a bounded excerpt, the label covers the literal.
  EXPECT_LT(parsed->diags.diagnostics()[0].message.size(), 120u);
  EXPECT_EQ(parsed->diags.diagnostics()[0].primaryRange().size(), digits.size());
  auto floats =
      parseChecked("model M { fn f() { return 1" + std::string(5000, '0') + ".5e99999 } }");
  EXPECT_TRUE(floats->diagnostics().empty());
  auto text = parseChecked("model M { fn f() { return \"" + std::string(200000, 'a') + "\" } }");
  EXPECT_TRUE(text->diagnostics().empty());
}

TEST(RobustnessTest, UnterminatedAtEndOfFile) {
  EXPECT_EQ(parseChecked("model M { fn f() { return \"abc")->codes().front(), "E0002");
  EXPECT_EQ(parseChecked("model M { fn f() { return \"abc\\")->codes().front(), "E0002");
  EXPECT_EQ(parseChecked("model M {} /*")->codes(), std::vector<std::string>{"E0003"});
  EXPECT_EQ(parseChecked("/*/")->codes(), std::vector<std::string>{"E0003"});
  EXPECT_EQ(parseChecked("model M { fn f() { return x")->codes(),
            std::vector<std::string>{"E0001"});
}

/// CPU time of this thread: wall time means little on a busy machine.
double cpuSeconds() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}

TEST(RobustnessTest, FiveMegabyteFiles) {
  std::string big;
  int copies = 0;
  while (big.size() < 5 * 1024 * 1024) {
    std::string copy = kValidModel;
    if (copies != 0)
      copy.erase(0, copy.find('\n')); // imports come first
    copy.replace(copy.find("Block"), 5, "Block" + std::to_string(copies++));
    big += copy;
  }
  double start = cpuSeconds();
  auto parsed = parseChecked(big);
  double seconds = cpuSeconds() - start;
  EXPECT_TRUE(parsed->diagnostics().empty());
  EXPECT_EQ(parsed->module->models.size(), size_t(copies));
  EXPECT_LT(seconds, 20.0);

  // 5 MB of one line of garbage tokens: errors are capped, it finishes.
  std::string garbage;
  const char *pieces[] = {"model ", "{ ", "} ", "( ", ") ", "x ", "= ", "1 ", ", ", "fn "};
  std::mt19937 rng(5);
  while (garbage.size() < 5 * 1024 * 1024)
    garbage += pieces[std::uniform_int_distribution<int>(0, 9)(rng)];
  start = cpuSeconds();
  auto noise = parseChecked(garbage);
  seconds = cpuSeconds() - start;
  EXPECT_FALSE(noise->diagnostics().empty());
  EXPECT_LT(seconds, 60.0);
}

TEST(RobustnessTest, InvalidBufferId) {
  llvm::SourceMgr sm;
  DiagnosticEngine diags(sm);
  auto module = parseModule(sm, 7, diags);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(module->models.empty());
}

} // namespace
