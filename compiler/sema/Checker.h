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
// Its member functions live by kind of construct:
//   Checker.cpp          the phases, model declarations, fn bodies
//   CheckTypes.cpp       types, dims and devices as written
//   CheckSubmodels.cpp   submodel instances and lists of them
//   CheckStatements.cpp  statement dispatch, let, return, expression statements
//   CheckConditions.cpp  `if` and `assert` on compile-time conditions
//   CheckLoops.cpp       `for` loops and assignments
//   CheckTuples.cpp      tuples and their destructuring
//   CheckTupleParams.cpp tuple model parameters: `kernel_size: (int, int)`
//   CheckExpr.cpp        the expression dispatch, names (ResolveName.h)
//   CheckOperators.cpp   arithmetic, comparisons, matmul, `created @ device`
//   CheckCalls.cpp       calls of models and their fns; which callee a call reaches
//   CheckMembers.cpp     `a.b` and subscripts
//   Builtins*.cpp        built-in calls (BuiltinCall.h lists the families)
//   CheckOperands.cpp    one device, one dtype, broadcasting of operands
//   CallArity.cpp        "takes N arguments, got M"
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
  /// Tuple: why each element is on its device (one per element).
  std::shared_ptr<const std::vector<DeviceOrigin>> elementOrigins;
  Range range() const { return expr ? expr->range : Range(); }
};

/// One argument of a call after binding positional and named arguments.
struct BoundArg {
  const ast::Expr *expr = nullptr;
  Value value;
  Range range() const { return expr ? expr->range : Range(); }
};

/// The dtype PyTorch calls `name` (`float16`, `torch.bfloat16`, `half`), for
/// a help where a .mdl dtype was expected.
std::optional<ast::DType> dtypeOfTorchName(llvm::StringRef name);
/// When `name` (written at `at`) is PyTorch's name of a dtype, a help on
/// `diag` that replaces it with the .mdl dtype (`float16` -> `f16`).
void helpWithTorchDTypeName(DiagnosticBuilder &diag, llvm::StringRef name, Range at);

/// Whether `body` returns on every path: a `return`, or an `if` with an
/// `else` whose blocks both do.
bool alwaysReturns(const std::vector<ast::StmtPtr> &body);

class Checker {
public:
  Checker(DiagnosticEngine &diags, CheckedProgram &program) : diags_(diags), program_(program) {}

  /// Adds a module; `imports` maps each import's alias (`nn`) to its module.
  void addModule(const ast::Module &module, llvm::StringMap<const ast::Module *> imports);
  /// Runs every phase over every added module.
  void checkAll();

  // --- Used by the expression and built-in checkers (CheckExpr.cpp,
  // Builtins*.cpp); not an API for clients.
  struct Local {
    Value value;
    Range declRange;
    bool isLet = false;
    bool annotated = false; // `let h: f32[B, n] = ...`: its type is the user's
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
    /// The argument values the enclosing `if`s fix (`bias` in `if bias`),
    /// and their conditions with the truth value they have here.
    ArgumentFacts facts;
    std::vector<std::pair<ConditionPtr, bool>> assumed;
    /// For each enclosing `for`, the index in `scopes` of its body's scope:
    /// a local of an outer scope assigned in the body is carried.
    std::vector<size_t> loopScopes;
    /// The enclosing `for` statements, outermost first.
    std::vector<const ast::ForStmt *> loops;
  };

  // Compile-time conditions (CheckConditions.cpp)
  /// True while checking what must be known when the model is built (an
  /// `if` condition, a submodel's arguments): a name that is both a value
  /// argument and state (`bias`) then means the argument.
  bool compileTimeNames = false;
  /// The condition `expr` stands for; reports E0116 (and returns null) when
  /// it is not known when the model is built.
  ConditionPtr checkCondition(const ast::Expr &expr);
  void checkIf(const ast::IfStmt &stmt);
  /// `type` with the argument values the enclosing `if`s fix substituted
  /// (`stride` is 1 in `if stride == 1`), so a block is checked as the
  /// instances that take it see it.
  Type underFacts(const Type &type) const;
  /// Whether a member with `presence` exists where it is used at `at`:
  /// reports E0115 when it may not. `instance` is the substitution of the
  /// submodel it belongs to (`fc` in `fc.bias`), `instanceDecl` where that
  /// submodel is built.
  bool requirePresent(const Presence &presence, llvm::StringRef what, Range at,
                      const Substitution *instance = nullptr,
                      const ast::Expr *instanceDecl = nullptr);
  /// E0117 when the name used at `at` has declarations of different types
  /// (`differing`, one per branch) and no enclosing `if` picks one.
  bool requireOneType(llvm::StringRef name, Range at, llvm::ArrayRef<Range> differing);
  /// Whether a member with `presence` is known to exist in the fn being
  /// checked (its condition follows from the enclosing `if`s).
  bool knownPresent(const Presence &presence) const;
  /// Where any of the declarations guarded by `guards` exists: `if c` and
  /// `else` together always, so a name declared in both branches is always
  /// there.
  Presence presenceOfAny(llvm::ArrayRef<const std::vector<ast::MemberGuard> *> guards);
  /// E0102 for a member `name` declared under `guards` when `model` already
  /// has a member of that name that can coexist with it. A name may be
  /// declared again, as the same kind of member (`isState`), under a
  /// condition exclusive with each earlier one's (PyTorch's `if norm_first:
  /// self.norm = ... else: self.norm = ...`).
  void checkRedeclaration(const ModelInfo &model, const ast::Ident &name,
                          const std::vector<ast::MemberGuard> &guards, bool isState);
  /// The value of option argument `param` of `owner` given as `arg`: the
  /// index of a string literal among its options (E0114 when it is none),
  /// or the caller's own option argument of the same options.
  std::optional<Dim> optionArgument(const ValueParamInfo &param, llvm::StringRef owner,
                                    const ast::Expr &arg, const Value &value);
  void reportUnknownOption(Range at, llvm::StringRef given, const ValueParamInfo &param,
                           llvm::StringRef owner);
  /// The value of dtype argument `param` of `owner` given as `arg`: a
  /// floating dtype (its index) or the caller's own dtype parameter.
  std::optional<Dim> dtypeArgument(const ValueParamInfo &param, llvm::StringRef owner,
                                   const ast::Expr &arg, const Value &value);
  /// E0502 for an integer or bool dtype given to dtype parameter `param`.
  void reportNonFloatDTypeArgument(Range at, llvm::StringRef given, llvm::StringRef param,
                                   llvm::StringRef owner);

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
  /// Reports that `first` and `second`, two of `operands`, are on different
  /// devices, pointing at the operand that should move (see meetingDevice).
  void reportDeviceMismatch(llvm::StringRef op, Range opRange, const Value &first,
                            const Value &second, llvm::ArrayRef<const Value *> operands);
  /// E0301/E0303 for `b` against `a`: `b` is the one to move when
  /// `secondMoves`, else unless `a` is the one off the fn's device (a placed
  /// creation is always the one reported).
  void reportDevicePair(llvm::StringRef op, Range opRange, const Value &a, const Value &b,
                        bool secondMoves);
  /// Where operands on different devices should meet: the device most of
  /// them are on; on a tie, the fn's declared result device, then the
  /// model's; nullopt when none of these decides.
  std::optional<Device> meetingDevice(llvm::ArrayRef<const Value *> operands);
  std::vector<Edit> toEdits(const ast::Expr &operand, Device target);
  std::vector<Edit> castEdits(const ast::Expr &operand, const ElementType &target);
  /// Edits that place the creation op at `creation` on `device`, in
  /// parentheses unless it stands alone (a let value, an argument).
  std::vector<Edit> placementEdits(Range creation, llvm::StringRef device);
  /// `.to(dev)` written right after `creation`: its range and `dev`.
  std::optional<std::pair<Range, std::string>> transferAfter(Range creation);
  /// Whether `.to(...)` can be appended to `e` without parentheses.
  static bool isPostfixSafe(const ast::Expr &e);

  // Dtypes and shapes
  /// E0201 unless `anchor` and `other` have one dtype; the help converts
  /// `other`, or `anchor` when `other` has the fn's declared result dtype.
  bool requireSameDType(llvm::StringRef op, const Value &anchor, const Value &other);
  /// `e` when it is (or places) a creation op without a dtype argument
  /// (`eye(n)`, `zeros([n]) @ D`), so a fix can pass `dtype:`; else null.
  const ast::CallExpr *defaultDTypeCreation(const ast::Expr *e);
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
  /// The int `e` is, written with the model's int arguments only (`32`,
  /// `hidden * 2`); nullopt when it needs anything else.
  std::optional<std::string> modelArgumentsValue(const ast::Expr &e);
  /// A submodel name for an instance of `modelName` created inline in the
  /// fn being checked (`batch_norm2d`), free in its model and fn.
  std::string freshSubmodelName(llvm::StringRef modelName);
  /// `nn.ReLU()` in a fn body: the instance of a model without state (or
  /// an error value after reporting its arguments); nullopt for any other
  /// model, which is E0304 there.
  std::optional<Value> statelessInstance(const ast::CallExpr &call, const ModelInfo *callee,
                                         llvm::StringRef text);
  /// A model instantiated where a value is expected: E0304 in a fn body.
  void reportModelCall(const ast::Expr &expr, llvm::StringRef modelName);
  /// The `let` being checked, so E0304 can name the variable and fix it.
  const ast::Expr *letExpr = nullptr;
  const ast::LetStmt *letStmt = nullptr;
  std::string letName;
  Value callModelFn(const ast::CallExpr &call, std::shared_ptr<const ModelInstance> instance,
                    const FnInfo &fn, const DeviceOrigin &placement, llvm::StringRef calleeText);
  /// E0201 for an argument of `call` whose dtype is not the `expected` one of
  /// the callee's `param`; it points at where both dtypes are written (the
  /// argument's declaration, the callee's dtype argument) and fixes either.
  void reportArgumentDTypeMismatch(const ast::CallExpr &call, llvm::StringRef calleeText,
                                   const ModelInstance &inst, const FnParamInfo &param,
                                   const Type &expected, const Value &arg);
  bool isBuiltin(llvm::StringRef name) const;
  bool isCreationOp(llvm::StringRef name) const;
  /// E0105 "`callee` takes N arguments, got M" at `at`, with `label` under
  /// it and the callee's `signature` in a note (CallArity.cpp).
  DiagnosticBuilder reportArgumentCount(Range at, llvm::StringRef callee, size_t required,
                                        size_t total, size_t given, llvm::StringRef signature,
                                        std::string label);
  /// The helps for a PyTorch tensor method that is spelled differently here
  /// (`x.view(B, -1)` is `x.reshape([B, -1])`, `x.contiguous()` has nothing
  /// to do); false when `method` is none of them (PyTorchMethods.cpp).
  bool helpWithTorchMethod(DiagnosticBuilder &diag, const ast::CallExpr &call,
                           const ast::MemberExpr &method, const Type &tensor);
  /// E0101 (or E0104 for `nn.functional`) for a built-in called through
  /// PyTorch's namespaces (`torch.flatten(x, 1)`, `F.relu(x)`), with the
  /// help dropping the prefix; false when `callee` is not such a call.
  bool reportTorchNamespace(const ast::CallExpr &call, const ast::MemberExpr &callee);
  /// The edits that wrap positional arguments `first`.. of `call` in a list
  /// (`x.permute(0, 2, 3, 1)` -> `x.permute([0, 2, 3, 1])`); empty when one
  /// of them is named.
  static std::vector<Edit> wrapArgsInList(const ast::CallExpr &call, size_t first);
  /// PyTorch's `device=` argument of a creation: the help removes it (the
  /// device is inferred from the value's use) and names `@ DEVICE`.
  void helpWithDeviceArgument(DiagnosticBuilder &diag, const ast::CallExpr &call,
                              const ast::Arg &arg);
  /// E0107 for `missing`; the label counts the arguments when none is named.
  void reportMissingArgument(Range at, llvm::StringRef callee, llvm::StringRef missing,
                             size_t required, size_t total, size_t given, bool named,
                             llvm::StringRef signature);
  /// "1 argument", "2 to 4 arguments".
  static std::string argumentCount(size_t required, size_t total);
  /// `forward(x: f32[B, n] @ D) -> f32[B, n] @ D`, as the fn is written.
  static std::string fnSignature(const FnInfo &fn);
  /// `nn.Linear(in_features: int, out_features: int)`, as the model is written.
  static std::string modelSignature(llvm::StringRef calleeName, const ModelInfo &model);
  Value checkPlacement(const ast::BinaryExpr &expr);

  // Tuples (CheckTuples.cpp)
  Value checkTuple(const ast::TupleExpr &expr);
  /// Element `i` of the tuple `tuple`: its type, its origin and, when the
  /// tuple is written out (`(a, b)`), its own expression.
  Value tupleElement(const Value &tuple, size_t i);
  /// `x.shape`: the tuple of the dims of x's type (CheckMembers.cpp).
  Value tensorShape(const ast::MemberExpr &expr, const Value &tensor);
  void checkLetTuple(const ast::LetTupleStmt &let);
  /// A `return` in a fn declaring several results, or returning several.
  void checkReturnedTuple(const FnInfo &fn, const Value &value);

  // Tuple value parameters (CheckTupleParams.cpp): `kernel_size: (int, int)`
  /// The default of tuple param `param` (of `model`, declared as `vp`): an
  /// int for every element, a tuple of int literals, or an earlier int or
  /// tuple param.
  void declareTupleDefault(const ModelInfo &model, const ast::ValueParam &param,
                           ValueParamInfo &vp);
  /// Binds `value`, the argument `arg` given for tuple param `param` of
  /// `callee`: an int stands for every element, a tuple of its arity gives
  /// each. Appends one value per element to `values`; false after an error.
  bool tupleArgument(const ValueParamInfo &param, llvm::StringRef callee, const ast::Expr &arg,
                     const Value &value, llvm::SmallVectorImpl<std::optional<Dim>> &values);
  /// `kernel_size[0]` in a dim of `model`.
  std::optional<Dim> tupleElementDim(const ModelInfo &model, const ast::DimExpr &dim);
  /// E0412 for index `index` into the tuple `what` of `arity` elements.
  void reportTupleIndex(Range at, int64_t index, llvm::StringRef what, size_t arity,
                        bool negativeToo);

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
  /// What the condition being checked belongs to, for E0116.
  llvm::StringRef conditionKeyword_ = "if";
  /// Runs `check` with a fn context for `model`'s body (its value arguments
  /// in scope, no fn), as member conditions and asserts are checked.
  void inModelBody(ModelInfo &model, llvm::function_ref<void()> check);
  /// The model's `assert`s, as conditions on its value arguments.
  void checkAsserts(ModelInfo &model);
  void reportUnmetAssertion(const Requirement &r, Range at, llvm::StringRef instance);
  /// `[layer for _ in a..b]`: the layer's instance, repeated b - a times.
  Type repeatedSubmodel(ModelInfo &model, const ast::ListExpr &list, SubmodelInfo &sub);
  /// `as "{}_l{k}"`: parsed into SubmodelInfo::stateNames, or E0119.
  void checkStateNames(const ModelInfo &model, SubmodelInfo &sub);
  void checkBodies(ModelInfo &model);
  void checkFn(ModelInfo &model, const FnInfo &fn);
  /// The conditions of `model`'s `if` blocks among its members.
  void checkMemberConditions(ModelInfo &model);
  Presence presenceOf(const std::vector<ast::MemberGuard> &guards);
  ConditionPtr conditionOf(const ast::Expr &expr);
  ConditionPtr comparisonCondition(const ast::BinaryExpr &expr);
  /// Whether `d` is known when the current model is built (its value
  /// arguments and constants only).
  bool isBuildTime(Dim d) const;
  void reportNotBuildTime(const ast::Expr &expr, const Value &value);
  llvm::DenseMap<const ast::Expr *, ConditionPtr> memberConditions_;
  void checkStmts(const std::vector<ast::StmtPtr> &body);
  void checkStmt(const ast::Stmt &stmt);
  void finishFn();
  /// W0311 for a statement `x.to(dev)` whose result nothing uses.
  void warnIfDiscardedTransfer(const ast::ExprStmt &stmt, const Value &result);

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
  /// E0111 for `x = ...` where `x` is not a `let` variable (`target`, or
  /// null when it is state or a submodel), with the fix for where it stands.
  void reportAssignToNonLocal(const ast::AssignStmt &assign, const Local *target,
                              const Value &value);
  /// `max(x, dim: 1)` / `x.min(dim: 1)`: a reduction that PyTorch writes
  /// with a (values, indices) result; null for anything else.
  const ast::CallExpr *reductionWithDim(const ast::Expr &expr) const;
  /// E0120 for `max(x, dim)[0]` or `[1]`.
  void reportReductionIndexed(const ast::IndexExpr &expr, const ast::CallExpr &call, int64_t index);

  /// The type written at `type` inside `model`; `sigSymbols` collects
  /// signature-local dims, `pack` is the `...` id of this signature.
  Type typeFromExpr(ModelInfo &model, const ast::TypeExpr &type, bool allowLocalDims,
                    DeviceOrigin *origin, llvm::StringRef subject);
  /// E0409 for a submodel whose arguments make a division inexact, E0118
  /// for one whose arguments fail an `assert` of its model.
  /// E0121 when every instance of `model` declares, through its
  /// unconditional submodels, another instance of `model`.
  void checkContainsItself(const ModelInfo &model);
  void checkSubmodelArguments(const ModelInfo &model);
  /// A dim `numerator / divisor` written in `model` (see ExactDivision).
  Dim divideDims(ModelInfo &model, Dim numerator, Dim divisor, Range range);
  std::optional<Dim> dimFromExpr(ModelInfo &model, const ast::DimExpr &dim, bool allowLocal,
                                 bool &hasPack);
  std::optional<Device> deviceFromExpr(ModelInfo &model, const ast::DeviceExpr &dev);
  /// `dtype` in `dtype[n]`: a dtype parameter of `model` or of the fn whose
  /// signature or body is being checked (`sigDTypes_`); E0101 for any other
  /// name.
  std::optional<ElementType> dtypeParamFromName(const ModelInfo &model, const ast::Ident &name);
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
  /// The dtype parameters of the fn whose signature or body is checked.
  const std::vector<FnDTypeParam> *sigDTypes_ = nullptr;
  bool inFnBody = false;
};

} // namespace modelc::sema

#endif // MODELC_SEMA_CHECKER_H
