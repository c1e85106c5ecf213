//===- Checker.h - The type checker of .mdl programs ------------*- C++ -*-===//
//
// Checks names, dtypes, shapes and devices of every model of a set of
// parsed modules and records the results in a CheckedProgram. The work is
// done in phases over all models, so models may use each other in any
// order: (1) declare models and their value params; (2) type state
// declarations and fn signatures; (3) resolve submodels; (4) check state
// initialisers and fn bodies. Errors never cascade: a failed expression has
// the Error type, which poisons everything built from it silently.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_CHECKER_H
#define MODELC_SEMA_CHECKER_H

#include "diagnostics/DiagnosticEngine.h"
#include "sema/CheckedProgram.h"
#include "sema/DeviceUnifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <memory>
#include <vector>

namespace modelc::sema {

/// A checked value: its type, why it is on its device, and where it was
/// written (for labels and edits).
struct Value {
  Type type;
  DeviceOrigin origin;
  const ast::Expr *expr = nullptr;
  Range range() const { return expr ? expr->range : Range(); }
};

/// One argument of a call after binding positional and named arguments.
struct BoundArg {
  const ast::Expr *expr = nullptr;
  Value value;
  Range range() const { return expr ? expr->range : Range(); }
};

class Checker {
public:
  Checker(DiagnosticEngine &diags, CheckedProgram &program) : diags_(diags), program_(program) {}

  /// Adds a module; `imports` maps each import's alias (`nn`) to its module.
  void addModule(const ast::Module &module, llvm::StringMap<const ast::Module *> imports);
  /// Runs every phase over every added module.
  void checkAll();

  // --- Used by the expression and built-in checkers (CheckExpr.cpp,
  // Builtins.cpp); not an API for clients.
  struct Local {
    Value value;
    Range declRange;
    bool isLet = false;
  };
  struct FnContext {
    ModelInfo *model = nullptr;
    const FnInfo *fn = nullptr; // null for model-level expressions
    std::vector<llvm::StringMap<Local>> scopes;
    llvm::StringMap<Dim> sigSymbols; // `B` of the signature
    llvm::StringSet<> reportedUnknown;
    DeviceUnifier unifier;
    std::optional<Device> home;              // the device errors are measured against
    std::vector<const ast::Expr *> recorded; // with inferred devices
    size_t firstDecl = 0;                    // decls recorded by this fn
    /// For each enclosing `for`, the index in `scopes` of its body's scope:
    /// a local of an outer scope assigned in the body is carried.
    std::vector<size_t> loopScopes;
  };

  Value checkExpr(const ast::Expr &expr);
  /// `type` with the floor quotients that `model` requires exact
  /// (`img / patch` in a state type) written as those exact quotients.
  static Type withExactQuotients(const ModelInfo &model, Type type);
  Value record(const ast::Expr &expr, Value value, std::optional<Range> definition = {},
               llvm::StringRef name = {}, llvm::StringRef doc = {});
  Value errorValue(const ast::Expr *expr = nullptr) {
    Value v;
    v.expr = expr;
    return v;
  }
  /// Marks the inferred devices of failed operands so they are not also
  /// reported as uninferable; returns the Error value.
  Value fail(const ast::Expr &expr, llvm::ArrayRef<const Value *> operands);

  // Devices
  Device resolve(Device d) { return fn_ ? fn_->unifier.resolve(d) : d; }
  Type resolve(const Type &t);
  DeviceOrigin originOf(const Value &v);
  std::string typeStr(const Value &v) { return resolve(v.type).str(); }
  /// Unifies the devices of the tensor operands of `op` (written at
  /// `opRange`, the whole expression `whole`); reports E0301/E0303 on a
  /// mismatch. Returns the common device, or nullopt after an error.
  std::optional<Device> unifyDevices(llvm::StringRef op, Range opRange, const ast::Expr &whole,
                                     llvm::ArrayRef<const Value *> operands);
  void reportDeviceMismatch(llvm::StringRef op, Range opRange, const Value &a, const Value &b);
  std::vector<Edit> toEdits(const ast::Expr &operand, Device target);
  std::vector<Edit> castEdits(const ast::Expr &operand, ast::DType target);
  /// Whether `.to(...)` can be appended to `e` without parentheses.
  static bool isPostfixSafe(const ast::Expr &e);

  // Dtypes and shapes
  bool requireSameDType(llvm::StringRef op, const Value &anchor, const Value &other);
  std::optional<Shape> broadcast(const Shape &a, const Shape &b);
  /// Normalizes a (possibly negative) dim index of a tensor of `rank`
  /// (rank counts the explicit dims; a pack blocks positive indices).
  std::optional<unsigned> normalizeDim(int64_t dim, const Value &tensor, Range at,
                                       bool allowEnd = false);

  // Calls
  Value checkCall(const ast::CallExpr &call);
  /// A built-in call; `receiver` is the checked `x` of `x.name(...)`,
  /// `placement` the device of `name(...) @ dev`.
  Value checkBuiltinCall(const ast::CallExpr &call, llvm::StringRef name, const Value *receiver,
                         const Device *placement, const DeviceOrigin *placementOrigin);
  Value checkBinary(const ast::BinaryExpr &b, const Value &lhs, const Value &rhs);
  bool checkScalarOperand(llvm::StringRef op, const Value &tensor, const Value &scalar);
  Value checkMatmul(const ast::Expr &expr, llvm::StringRef op, const Value &lhs, const Value &rhs);
  Value checkMember(const ast::MemberExpr &expr);
  Value checkIndex(const ast::IndexExpr &expr);
  void reportSubmodelInFn(const ast::Expr &expr, llvm::StringRef modelName);
  /// A model instantiated where a value is expected: E0304 in a fn body.
  void reportModelCall(const ast::Expr &expr, llvm::StringRef modelName);
  /// The `let` being checked, so E0304 can name the variable and fix it.
  const ast::Expr *letExpr = nullptr;
  const ast::LetStmt *letStmt = nullptr;
  std::string letName;
  Value callModelFn(const ast::CallExpr &call, std::shared_ptr<const ModelInstance> instance,
                    const FnInfo &fn, const DeviceOrigin &placement, llvm::StringRef calleeText);
  bool isBuiltin(llvm::StringRef name) const;
  bool isCreationOp(llvm::StringRef name) const;
  Value checkPlacement(const ast::BinaryExpr &expr);

  std::string text(Range r) const { return r.text().str(); }
  std::string shortText(Range r) const;

  DiagnosticEngine &diags_;
  CheckedProgram &program_;
  FnContext *fn_ = nullptr;

private:
  struct ModuleScope {
    const ast::Module *module = nullptr;
    llvm::StringMap<ModelInfo *> models;
    llvm::StringMap<const ast::Module *> imports;
  };

  void declareModels(ModuleScope &scope);
  void typeSignatures(ModelInfo &model);
  void resolveSubmodels(ModelInfo &model);
  void checkBodies(ModelInfo &model);
  void checkFn(ModelInfo &model, const FnInfo &fn);
  void checkStmts(const std::vector<ast::StmtPtr> &body);
  void checkStmt(const ast::Stmt &stmt);
  void finishFn();

  // Loops and assignments (CheckLoops.cpp)
  void checkForLoop(const ast::ForStmt &loop);
  void checkRangeLoop(const ast::ForStmt &loop);
  void checkAssign(const ast::AssignStmt &assign);
  /// The local `name` and the index of the scope that holds it.
  std::pair<Local *, size_t> findLocal(llvm::StringRef name);
  /// E0520 when `value` changes the dtype or shape of `target`, a local
  /// carried around an enclosing loop; true when it reported.
  bool reportCarriedTypeChange(const ast::AssignStmt &assign, const Local &target,
                               const Value &value);

  /// The type written at `type` inside `model`; `sigSymbols` collects
  /// signature-local dims, `pack` is the `...` id of this signature.
  Type typeFromExpr(ModelInfo &model, const ast::TypeExpr &type, bool allowLocalDims,
                    DeviceOrigin *origin, llvm::StringRef subject);
  /// E0409 for a submodel whose arguments make a division inexact.
  void checkExactDivisions(const ModelInfo &model);
  /// A dim `numerator / divisor` written in `model` (see ExactDivision).
  Dim divideDims(ModelInfo &model, Dim numerator, Dim divisor, Range range);
  std::optional<Dim> dimFromExpr(ModelInfo &model, const ast::DimExpr &dim, bool allowLocal,
                                 bool &hasPack);
  std::optional<Device> deviceFromExpr(ModelInfo &model, const ast::DeviceExpr &dev);
  std::optional<Type> instanceFromExpr(ModelInfo &model, const ast::Expr &init,
                                       const std::string &name, DeviceOrigin &placement,
                                       bool &pinned);
  /// Checks `value` against a declared type (let annotation, state init,
  /// return); reports with `what`.
  void checkAgainstDeclared(const Value &value, const Type &declared,
                            const DeviceOrigin &declaredOrigin, Range declRange,
                            llvm::StringRef what, bool isReturn);

public:
  const ModuleScope *scopeOf(const ast::Module *module) const;
  std::vector<std::unique_ptr<ModuleScope>> modules_;
  llvm::DenseMap<const ast::Module *, ModuleScope *> scopeByModule_;
  /// The model a model-level expression or fn belongs to.
  ModelInfo *currentModel = nullptr;
  bool inFnBody = false;
};

} // namespace modelc::sema

#endif // MODELC_SEMA_CHECKER_H
