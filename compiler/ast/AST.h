//===- AST.h - The syntax tree of a .mdl file -------------------*- C++ -*-===//
//
// The parser (compiler/parse) builds this tree from ANTLR's parse tree; the
// checker (compiler/sema) reads it and records its findings in side tables,
// so the tree itself stays a plain description of the source. Every node
// carries the half-open byte range [begin, end) of the text it came from,
// as llvm::SMLoc pointers into the buffer owned by the llvm::SourceMgr.
//
// Nodes are owned by their parent through std::unique_ptr; kinds use
// LLVM-style RTTI so `llvm::dyn_cast<ast::CallExpr>(expr)` works.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_AST_AST_H
#define MODELC_AST_AST_H

#include "basic/SourceRange.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
class SourceMgr;
} // namespace llvm

namespace modelc::ast {

using modelc::Range;

/// An identifier together with where it was written.
struct Ident {
  std::string name;
  Range range;
};

/// Element types of tensors.
enum class DType : uint8_t { F16, BF16, F32, F64, I32, I64, Bool };
llvm::StringRef dtypeName(DType dtype); // "f32", ...
bool isFloating(DType dtype);
bool isInteger(DType dtype); // i32, i64 (not bool)

/// "f16" -> F16, ...; nullopt for any other name.
std::optional<DType> dtypeFromName(llvm::StringRef name);

/// Scalar (non-tensor) value types of model arguments and fn parameters.
/// Option: one of a list of strings (`activation: "relu" | "gelu"`); DType:
/// a floating dtype (`dtype: dtype = f32`, used in types as `dtype[n]`).
/// Both are model arguments only.
enum class ScalarKind : uint8_t { Int, Float, Bool, Option, DType };
llvm::StringRef scalarKindName(ScalarKind kind); // "int", ...

//===----------------------------------------------------------------------===//
// Devices and dimensions as written in types
//===----------------------------------------------------------------------===//

/// `cpu`, `cuda:N`, or the name of a device parameter (`D`).
struct DeviceExpr {
  enum class Kind : uint8_t { Cpu, Cuda, Var };
  Kind kind = Kind::Cpu;
  int64_t cudaIndex = 0; // Kind::Cuda only
  std::string varName;   // Kind::Var only
  Range range;
};

/// One dimension of a tensor type: `784`, `B`, `in`, `in * 2`, `...`, or
/// an element of a tuple value parameter, `kernel_size[0]`.
struct DimExpr {
  enum class Kind : uint8_t { Int, Name, Ellipsis, Binary, Element };
  Kind kind = Kind::Int;
  int64_t value = 0;                 // Int; Element: the index
  std::string name;                  // Name, Element
  char op = 0;                       // Binary: one of + - * /
  std::unique_ptr<DimExpr> lhs, rhs; // Binary
  Range range;
};

/// A type as written: `f32[B, 784] @ cuda:0`, `f32[10]` (device left to the
/// model), a scalar type `int`, or (as a fn result only) a tuple of two or
/// more types `(f32[B, 5] @ D, f32[] @ D)`.
struct TypeExpr {
  enum class Kind : uint8_t { Tensor, Scalar, Tuple };
  Kind kind = Kind::Tensor;
  DType dtype = DType::F32;                        // Tensor
  std::optional<Ident> dtypeParam;                 // Tensor: `dtype` in `dtype[n]`
  std::vector<std::unique_ptr<DimExpr>> dims;      // Tensor
  std::optional<DeviceExpr> device;                // Tensor; absent = model's device
  ScalarKind scalar = ScalarKind::Int;             // Scalar
  std::vector<std::unique_ptr<TypeExpr>> elements; // Tuple
  Range range;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind : uint8_t {
    IntLit,
    FloatLit,
    BoolLit,
    StringLit,
    DeviceLit,
    DTypeLit,
    Name,
    List,
    Unary,
    Binary,
    Call,
    Member,
    Index,
    Instantiate,
    Tuple
  };
  Expr(Kind kind, Range range) : kind_(kind), range(range) {}
  virtual ~Expr() = default;
  Kind kind() const { return kind_; }

private:
  Kind kind_;

public:
  Range range;
};

using ExprPtr = std::unique_ptr<Expr>;

/// An integer literal. `overflowed` is set (and value is 0) when the literal
/// does not fit in int64; the parser has already reported it.
class IntLitExpr : public Expr {
public:
  IntLitExpr(Range r, int64_t v) : Expr(Kind::IntLit, r), value(v) {}
  int64_t value;
  bool overflowed = false;
  static bool classof(const Expr *e) { return e->kind() == Kind::IntLit; }
};

class FloatLitExpr : public Expr {
public:
  FloatLitExpr(Range r, double v) : Expr(Kind::FloatLit, r), value(v) {}
  double value;
  static bool classof(const Expr *e) { return e->kind() == Kind::FloatLit; }
};

class BoolLitExpr : public Expr {
public:
  BoolLitExpr(Range r, bool v) : Expr(Kind::BoolLit, r), value(v) {}
  bool value;
  static bool classof(const Expr *e) { return e->kind() == Kind::BoolLit; }
};

/// A string literal; `value` has its escapes resolved.
class StringLitExpr : public Expr {
public:
  StringLitExpr(Range r, std::string v) : Expr(Kind::StringLit, r), value(std::move(v)) {}
  std::string value;
  static bool classof(const Expr *e) { return e->kind() == Kind::StringLit; }
};

/// `cpu` or `cuda:N` used as a value (`x.to(cuda:0)`, `randn(...) @ cpu`).
class DeviceLitExpr : public Expr {
public:
  DeviceLitExpr(Range r, DeviceExpr d) : Expr(Kind::DeviceLit, r), device(std::move(d)) {}
  DeviceExpr device;
  static bool classof(const Expr *e) { return e->kind() == Kind::DeviceLit; }
};

/// A dtype used as a value (`cast(x, f16)`).
class DTypeLitExpr : public Expr {
public:
  DTypeLitExpr(Range r, DType d) : Expr(Kind::DTypeLit, r), dtype(d) {}
  DType dtype;
  static bool classof(const Expr *e) { return e->kind() == Kind::DTypeLit; }
};

/// A bare name: a local, a fn parameter, model state, a model argument, a
/// device parameter, a model, an imported module or a built-in.
class NameExpr : public Expr {
public:
  NameExpr(Range r, std::string n) : Expr(Kind::Name, r), name(std::move(n)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->kind() == Kind::Name; }
};

/// `[a, b, c]` (shapes for creation ops, lists of tensors for concat), or
/// `[element for var in begin..end]` (a stack of submodels, PyTorch's
/// `nn.ModuleList([... for _ in range(n)])`): then `elements` holds the one
/// element and `repeat` the range.
class ListExpr : public Expr {
public:
  ListExpr(Range r) : Expr(Kind::List, r) {}
  std::vector<ExprPtr> elements;
  struct Repeat {
    Ident var;
    ExprPtr begin, end;
  };
  std::unique_ptr<Repeat> repeat; // null for a written-out list
  static bool classof(const Expr *e) { return e->kind() == Kind::List; }
};

enum class UnaryOp : uint8_t { Neg, Not };
class UnaryExpr : public Expr {
public:
  UnaryExpr(Range r, UnaryOp op, ExprPtr operand, Range opRange)
      : Expr(Kind::Unary, r), op(op), operand(std::move(operand)), opRange(opRange) {}
  UnaryOp op;
  ExprPtr operand;
  Range opRange;
  static bool classof(const Expr *e) { return e->kind() == Kind::Unary; }
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Pow,
  MatMul, // `a @ b`; sema treats `created @ device` as placement
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or
};
llvm::StringRef binaryOpSpelling(BinaryOp op); // "+", "@", "and", ...
/// `+ - * / % **`: arithmetic on numbers (not `@`, comparisons, `and`/`or`).
bool isArithmetic(BinaryOp op);

class BinaryExpr : public Expr {
public:
  BinaryExpr(Range r, BinaryOp op, ExprPtr lhs, ExprPtr rhs, Range opRange)
      : Expr(Kind::Binary, r), op(op), lhs(std::move(lhs)), rhs(std::move(rhs)), opRange(opRange) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
  Range opRange;
  static bool classof(const Expr *e) { return e->kind() == Kind::Binary; }
};

/// One call argument, positional or named (`dim: 1`).
struct Arg {
  std::optional<Ident> name;
  ExprPtr value;
  Range range; // the whole argument, name included
};

/// `callee(args)`. The callee is a NameExpr (built-in, model, fn, submodel),
/// a MemberExpr (method call: `x.to(cuda:0)`, `nn.Linear(...)`, `enc.encode(x)`).
class CallExpr : public Expr {
public:
  CallExpr(Range r, ExprPtr callee) : Expr(Kind::Call, r), callee(std::move(callee)) {}
  ExprPtr callee;
  std::vector<Arg> args;
  Range argsRange; // from '(' to ')' inclusive
  static bool classof(const Expr *e) { return e->kind() == Kind::Call; }
};

/// `base.member`: module members (`nn.Linear`), submodel state (`fc1.weight`),
/// tensor properties (`x.T`) and, as a callee, methods.
class MemberExpr : public Expr {
public:
  MemberExpr(Range r, ExprPtr base, Ident member)
      : Expr(Kind::Member, r), base(std::move(base)), member(std::move(member)) {}
  ExprPtr base;
  Ident member;
  static bool classof(const Expr *e) { return e->kind() == Kind::Member; }
};

/// One subscript: an index `i`, or a slice `a:b:c` with any part omitted.
struct Slice {
  bool isSlice = false;
  ExprPtr index;            // !isSlice
  ExprPtr begin, end, step; // isSlice; each may be null
  Range range;
};

/// `base[i, a:b]`.
class IndexExpr : public Expr {
public:
  IndexExpr(Range r, ExprPtr base) : Expr(Kind::Index, r), base(std::move(base)) {}
  ExprPtr base;
  std::vector<Slice> subscripts;
  static bool classof(const Expr *e) { return e->kind() == Kind::Index; }
};

/// A model instantiated with explicit device arguments: `Encoder<cuda:0>(d)`
/// or `nn.Linear<cuda:1>(d, d)`.
/// (`nn.Linear(a, b)` without device arguments is a plain CallExpr.)
class InstantiateExpr : public Expr {
public:
  InstantiateExpr(Range r, Ident model) : Expr(Kind::Instantiate, r), model(std::move(model)) {}
  std::optional<Ident> module; // `nn` in `nn.Linear<cuda:0>(d, d)`
  Ident model;
  std::vector<DeviceExpr> devices;
  std::vector<Arg> args;
  Range argsRange;
  static bool classof(const Expr *e) { return e->kind() == Kind::Instantiate; }
};

/// `(a, b)` (or `a, b` after `return`): several results of a fn.
class TupleExpr : public Expr {
public:
  TupleExpr(Range r) : Expr(Kind::Tuple, r) {}
  std::vector<ExprPtr> elements; // two or more
  static bool classof(const Expr *e) { return e->kind() == Kind::Tuple; }
};

/// Calls `visit` on `expr` and on every expression nested in it, outermost
/// first.
void forEachSubexpr(const Expr &expr, llvm::function_ref<void(const Expr &)> visit);

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind : uint8_t { Let, LetTuple, Return, For, Assign, Expr, If };
  Stmt(Kind kind, Range range) : kind_(kind), range(range) {}
  virtual ~Stmt() = default;
  Kind kind() const { return kind_; }

private:
  Kind kind_;

public:
  Range range;
};
using StmtPtr = std::unique_ptr<Stmt>;

class LetStmt : public Stmt {
public:
  LetStmt(Range r, Ident name) : Stmt(Kind::Let, r), name(std::move(name)) {}
  Ident name;
  std::unique_ptr<TypeExpr> type; // optional annotation
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind() == Kind::Let; }
};

/// `let (logits, loss) = head(x)`: one name per element of a tuple; `_`
/// binds nothing.
class LetTupleStmt : public Stmt {
public:
  LetTupleStmt(Range r) : Stmt(Kind::LetTuple, r) {}
  std::vector<Ident> names;
  Range namesRange; // '(' .. ')'
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind() == Kind::LetTuple; }
};

class ReturnStmt : public Stmt {
public:
  ReturnStmt(Range r) : Stmt(Kind::Return, r) {}
  ExprPtr value; // may be null; a TupleExpr for `return a, b`
  static bool classof(const Stmt *s) { return s->kind() == Kind::Return; }
};

/// `for x in xs { ... }` over a list of submodels, or `for t in 0..T { ... }`
/// over a range of ints (then `iterable` is the start and `rangeEnd` the
/// exclusive end).
class ForStmt : public Stmt {
public:
  ForStmt(Range r, Ident var) : Stmt(Kind::For, r), var(std::move(var)) {}
  Ident var;
  ExprPtr iterable;
  ExprPtr rangeEnd; // null unless a range loop
  bool isRange() const { return rangeEnd != nullptr; }
  std::vector<StmtPtr> body;
  static bool classof(const Stmt *s) { return s->kind() == Kind::For; }
};

/// `x = expr` re-binding a `let` variable (its type may not change), or
/// `x[:, t] = expr` writing part of a tensor `let` variable.
class AssignStmt : public Stmt {
public:
  AssignStmt(Range r, Ident target) : Stmt(Kind::Assign, r), target(std::move(target)) {}
  Ident target;
  /// `x[...]` (an IndexExpr whose base names `target`) for a partial write;
  /// null for a plain re-binding.
  ExprPtr indexedTarget;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->kind() == Kind::Assign; }
};

/// `if cond { ... } else { ... }` on a compile-time condition (the model's
/// value arguments); `else if` is an IfStmt alone in `elseBody`.
class IfStmt : public Stmt {
public:
  IfStmt(Range r) : Stmt(Kind::If, r) {}
  ExprPtr condition;
  std::vector<StmtPtr> thenBody;
  std::vector<StmtPtr> elseBody;
  bool hasElse = false;
  static bool classof(const Stmt *s) { return s->kind() == Kind::If; }
};

class ExprStmt : public Stmt {
public:
  ExprStmt(Range r, ExprPtr e) : Stmt(Kind::Expr, r), expr(std::move(e)) {}
  ExprPtr expr;
  static bool classof(const Stmt *s) { return s->kind() == Kind::Expr; }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// `<D: device>` - one device parameter of a model.
struct DeviceParam {
  Ident name;
  Range range;
};

/// `(in: int, p: float = 0.1)` - one value argument of a model.
struct ValueParam {
  Ident name;
  ScalarKind type = ScalarKind::Int;
  std::vector<Ident> options; // ScalarKind::Option: `"relu" | "gelu"`, unquoted
  /// `(int, int)`: a tuple of this many ints (type is Int); 0 for one value.
  unsigned arity = 0;
  Range typeRange;
  ExprPtr defaultValue; // may be null
  Range range;
};

/// The type of `param` as it reads: `int`, `(int, int)`, `"relu" | "gelu"`.
std::string valueParamTypeText(const ValueParam &param);

/// One condition a conditional member sits under: `if bias { ... }` gives
/// {bias, true}; its `else` block {bias, false}. The expression is owned by
/// the ModelDecl.
struct MemberGuard {
  const Expr *condition = nullptr;
  bool holds = true;
};

/// `param weight: f32[out, in]` or `buffer mean: f32[c] @ cpu = zeros([c])`.
struct StateDecl {
  enum class Kind : uint8_t { Param, Buffer };
  Kind kind = Kind::Param;
  Ident name;
  std::unique_ptr<TypeExpr> type;
  ExprPtr init;                    // may be null (loaded from weights)
  std::vector<MemberGuard> guards; // all must hold for the state to exist
  std::string doc;
  Range range;
};

/// `fc1 = nn.Linear(in, hidden)` in a model body.
/// `as "{}_l{k}"` after a submodel declaration: the template of its state's
/// names in the weights file; `{}` is the name inside the submodel.
struct StateNameTemplate {
  std::string text; // the string's value
  Range range;      // of the string literal
};

struct SubmodelDecl {
  Ident name;
  ExprPtr init;
  std::optional<StateNameTemplate> stateNames;
  std::vector<MemberGuard> guards; // all must hold for the submodel to exist
  std::string doc;
  Range range;
};

/// `assert num_layers >= 1 and num_layers <= 4, "message"`: a condition on
/// the value arguments every instance must meet (PyTorch's constructor
/// checks), decided when the model is instantiated.
struct AssertDecl {
  ExprPtr condition;
  std::string message;             // may be empty
  std::vector<MemberGuard> guards; // it applies only where these hold
  Range range;
};

struct FnParam {
  Ident name;
  std::unique_ptr<TypeExpr> type;
  Range range;
};

struct FnDecl {
  Ident name;
  /// `T` of `fn f<T: dtype>(...)`: dtypes each call's arguments bind.
  std::vector<Ident> dtypeParams;
  std::vector<FnParam> params;
  std::unique_ptr<TypeExpr> result; // may be null (no value returned); a Tuple for several
  std::vector<StmtPtr> body;
  std::string doc;
  Range range;
  Range bodyRange; // '{' .. '}'
};

struct ModelDecl {
  Ident name;
  std::vector<DeviceParam> deviceParams;
  std::vector<ValueParam> valueParams;
  // Members split by kind, each vector in source order.
  std::vector<StateDecl> state;
  std::vector<SubmodelDecl> submodels;
  std::vector<FnDecl> fns;
  std::vector<AssertDecl> asserts;
  /// The conditions of `if` blocks among the members (see MemberGuard).
  std::vector<ExprPtr> memberConditions;
  std::string doc;
  Range range;
};

/// `import std.nn`: `path` is {"std", "nn"}.
struct ImportDecl {
  std::vector<Ident> path;
  Range range;
};

/// One parsed .mdl file.
struct Module {
  std::string fileName;
  unsigned bufferId = 0;                      // in the llvm::SourceMgr
  const llvm::SourceMgr *sourceMgr = nullptr; // set by the parser; for dump()
  std::vector<ImportDecl> imports;
  std::vector<ModelDecl> models;
};

/// Prints the tree in an indented, stable text form (for tests and
/// `modelc emit --stage=ast`). Ranges print as line:col-line:col (1-based
/// bytes, end exclusive) when `module.sourceMgr` is set.
void dump(const Module &module, llvm::raw_ostream &os);

} // namespace modelc::ast

#endif // MODELC_AST_AST_H
