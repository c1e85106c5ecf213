//===- CheckedProgram.h - What the checker learned about a program -*- C++ -*-===//
//
// The checker's results, for later phases (the MLIR builder, `modelc run`)
// and the language server: per model its state with PyTorch state_dict
// names and types, its submodels and fn signatures (generic over the
// model's device and value parameters), a side table from every checked
// expression to its type and device origin, and the declarations that
// go-to-definition and hover need. `instantiate` produces the concrete
// types of a model for given devices and value arguments.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_CHECKEDPROGRAM_H
#define MODELC_SEMA_CHECKEDPROGRAM_H

#include "ast/AST.h"
#include "sema/Condition.h"
#include "sema/Type.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/StringSaver.h"

#include <deque>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::sema {

/// Why a value is on its device, for notes and hovers.
struct DeviceOrigin {
  enum class Kind : uint8_t {
    None,
    Declared, // a state declaration or a `let` annotation
    FnParam,  // a fn parameter's type
    Placed,   // `zeros(...) @ cuda:0`
    Inferred, // a creation op whose device was inferred from a use
    Submodel, // returned by a submodel placed on (or pinned to) a device
    Transfer, // `x.to(dev)`
  };
  Kind kind = Kind::None;
  Range range;
  /// Text lives in the CheckedProgram (see CheckedProgram::save), so origins
  /// copy cheaply.
  llvm::StringRef message; // "`bias` is declared on cpu here"
  /// Declared: the written device (`cpu` in `@ cpu`), valid when explicit.
  /// Placed: the ` @ cpu` suffix to delete.
  Range editRange;
  /// Placed/Inferred: the source text of the creation or use.
  llvm::StringRef subject;
  bool isKnown() const { return kind != Kind::None; }
};

/// A model's value parameter. Its value fills one slot of an instance's
/// values (ModelInstance::values), or, for a tuple of ints
/// (`kernel_size: (int, int)`, PyTorch's `_pair`), one slot per element.
struct ValueParamInfo {
  std::string name;
  ast::ScalarKind kind = ast::ScalarKind::Int;
  /// The symbol the param stands for. Int, bool, option and dtype params
  /// have dim values: a bool is 0 or 1, an option the index of its option,
  /// a dtype its ast::DType (see ElementType::fromDim).
  AtomId atom = 0;
  /// A tuple of ints: the symbol of each element (`kernel_size[0]`, ...);
  /// empty for a single value. `atom` is then the first element's.
  llvm::SmallVector<AtomId, 2> elementAtoms;
  /// Where the param's values start in ModelInstance::values.
  unsigned firstSlot = 0;
  std::vector<std::string> options; // ScalarKind::Option: the valid strings
  /// A constant default (int, bool, option, dtype); for a tuple, of every
  /// element (`stride: (int, int) = 1`).
  std::optional<int64_t> defaultInt;
  /// A tuple's constant default written as a tuple (`= (1, 1)`).
  std::vector<int64_t> defaultTuple;
  /// A default that names an earlier param (`stride: int = kernel`): its
  /// index; takes that param's value (an int one for every element of a
  /// tuple).
  std::optional<unsigned> defaultParam;
  bool hasDefault = false;
  /// Whether the param's value is a dim of its instances (int, bool, option,
  /// dtype).
  bool hasDimValue() const { return kind != ast::ScalarKind::Float; }
  bool isTuple() const { return !elementAtoms.empty(); }
  /// The number of slots: a tuple's arity, else 1.
  unsigned slotCount() const { return isTuple() ? unsigned(elementAtoms.size()) : 1; }
  /// The symbol of slot `k`.
  AtomId slotAtom(unsigned k) const { return isTuple() ? elementAtoms[k] : atom; }
  /// Whether `a` is the symbol of one of its slots.
  bool standsFor(AtomId a) const { return atom == a || llvm::is_contained(elementAtoms, a); }
  /// `int`, `(int, int)`, `str` (the type in messages).
  std::string typeName() const;
  /// The index of `option` among `options`, or nullopt.
  std::optional<int64_t> optionIndex(llvm::StringRef option) const;
};

/// `numerator / divisor` written with a symbolic divisor over value params
/// (`embed_dim / num_heads`): assumed exact while checking, so it must be
/// exact when the model is instantiated (E0409).
struct ExactDivision {
  Dim numerator;
  Dim divisor;
  Range range; // where it is written (or the submodel that needs it)
};

/// When a conditional member exists: `if bias { param bias: ... }`.
struct Presence {
  ConditionPtr condition;  // null: always
  std::string description; // "`bias` is true", for messages
  Range guardRange;        // the (innermost) condition in the source
  bool always() const { return !condition; }
};

/// `assert cond, "message"` in a model: a condition every instance's
/// arguments must meet.
struct Requirement {
  /// Over the model's value arguments; it holds wherever the assert's guards
  /// (an enclosing `if`) do not.
  ConditionPtr condition;
  std::string text;    // the condition as written
  std::string message; // may be empty
  Range range;         // the assert
  std::string model;   // the model that asserts it
};

struct StateInfo {
  std::string name;
  const ast::StateDecl *decl = nullptr;
  bool isBuffer = false;
  Type type; // generic over the model's params
  DeviceOrigin origin;
  Presence presence;
  /// The value of every element when the initialiser is a constant fill
  /// (`zeros(...)`, `ones(...)`, `full(..., v)`): the weights file may then
  /// leave the state out.
  std::optional<double> fillValue;
};

/// A submodel's `as "{}_l{k}"`, parsed: what its state is called in the
/// weights file. The text before `{}` goes before the name of each of its
/// states (as `fc1.` does by default), the text after it after the name.
struct StateNames {
  struct Part {
    enum class Kind : uint8_t { Text, Inner, Value } kind = Kind::Text;
    std::string text; // Kind::Text
    /// Kind::Value: an int or bool argument of the model, or a repeated
    /// list's variable (its first value plus the element's index).
    Dim value;
    bool isIndex = false;
  };
  std::vector<Part> parts; // exactly one Kind::Inner
};

struct SubmodelInfo {
  std::string name;
  const ast::SubmodelDecl *decl = nullptr;
  Type type;           // Kind::Model or Kind::ModelList
  bool pinned = false; // explicit device arguments
  DeviceOrigin placement;
  Presence presence;
  std::optional<StateNames> stateNames; // `as "..."`
  std::optional<Dim> repeatBegin;       // a repeated list's first index (`1` of `1..n`)
};

/// The text a submodel puts before and after the names of its state in the
/// weights file: `fc1.` and `` by default, `layers.3.` for element 3 of a
/// list, or what its `as` template makes of them.
struct StateAffixes {
  std::string prefix, suffix;

  /// The weights-file name of state `name` named with these affixes.
  std::string name(llvm::StringRef state) const { return prefix + state.str() + suffix; }
  /// A submodel's `inner` affixes inside these: both keep the path's order,
  /// outer text first (`{}_l{k}` around `{}_reverse` is `_l2_reverse`).
  StateAffixes nested(const StateAffixes &inner) const {
    return {prefix + inner.prefix, suffix + inner.suffix};
  }
};
/// `outer` substitutes the enclosing instance's arguments; `index` is the
/// element of a list.
StateAffixes stateAffixes(const SubmodelInfo &sub, const Substitution &outer,
                          std::optional<size_t> index);

struct FnParamInfo {
  std::string name;
  Type type;
  DeviceOrigin origin;
};

/// `T` of `fn forward<T: dtype>(x: T[...])`: a dtype each call binds from
/// its arguments (a floating one), rigid in the fn's body.
struct FnDTypeParam {
  std::string name;
  AtomId atom = 0; // of its ElementType::parameter
};

struct FnInfo {
  std::string name;
  const ast::FnDecl *decl = nullptr;
  std::vector<FnDTypeParam> dtypeParams;
  std::vector<FnParamInfo> params;
  Type result;               // Kind::Void when the fn returns nothing; Kind::Tuple for several
  DeviceOrigin resultOrigin; // where the result type names its device
  /// Kind::Tuple results: where each element's type is written.
  std::vector<DeviceOrigin> resultElementOrigins;
  bool valid = true; // false when its signature had errors
};

struct ModelInfo {
  std::string name;
  const ast::ModelDecl *decl = nullptr;
  const ast::Module *module = nullptr;
  std::vector<ValueParamInfo> valueParams;
  std::vector<StateInfo> state;
  std::vector<SubmodelInfo> submodels;
  std::vector<FnInfo> fns;
  /// The exact divisions written in this model (not its submodels').
  std::vector<ExactDivision> exactDivisions;
  /// Its `assert`s (not its submodels').
  std::vector<Requirement> requirements;

  /// The first declaration of `name`. A name may be declared once per
  /// exclusive branch (`if norm_first { norm = ... } else { norm = ... }`);
  /// the overloads taking an instance's substitution give the one it has.
  const StateInfo *findState(llvm::StringRef name) const;
  const SubmodelInfo *findSubmodel(llvm::StringRef name) const;
  const StateInfo *findState(llvm::StringRef name, const Substitution &instance) const;
  const SubmodelInfo *findSubmodel(llvm::StringRef name, const Substitution &instance) const;
  const FnInfo *findFn(llvm::StringRef name) const;
  /// The number of ModelInstance::values of its instances (a tuple param
  /// fills one per element).
  size_t valueSlotCount() const {
    return valueParams.empty() ? 0 : valueParams.back().firstSlot + valueParams.back().slotCount();
  }
  /// The device that state and un-annotated types default to.
  std::optional<Device> homeDevice() const;
};

/// What the checker recorded about one expression.
struct ExprInfo {
  /// For a built-in call, an operator or a subscript also the result type
  /// of the mdl op that computes it (mlirgen derives no shape itself).
  Type type;
  DeviceOrigin origin;
  std::optional<Range> definition; // for names: where they are declared
  std::string name;                // for names and members
  std::string doc;                 // doc comment of the declaration
  // What a call or `@` resolved to, so later phases need not resolve again.
  llvm::StringRef builtin;          // a built-in call (`relu`, `x.sum(...)`, `zeros(...) @ D`)
  const FnInfo *calledFn = nullptr; // a call of a model fn (a submodel's or the model's own)
  std::shared_ptr<const ModelInstance> calledInstance; // ... on this instance
  bool placement = false;                              // `created @ device` (not a matrix product)
  /// A built-in call's arguments as the checker bound them (positional and
  /// named): per parameter of the built-in, in its order, the argument given
  /// for it (the receiver of `x.sum(...)` first), or null where the
  /// parameter keeps its default. Set once the binding succeeded. Index it
  /// by name: `builtinArgs[slot::conv2d::stride]` (BuiltinSlots.h).
  std::vector<const ast::Expr *> builtinArgs;
};

/// A declaration that hovers and go-to-definition can land on.
struct DeclSymbol {
  Range range; // the declared name
  std::string name;
  std::string typeText; // for models and fns: "model Linear", "fn f(...) -> ..."
  Type type;            // for values (when typeText is empty)
  std::string doc;
  DeviceOrigin origin;
};

/// One tensor of an instantiated model, by its state_dict name.
struct InstantiatedState {
  std::string name; // "fc1.weight", "layers.0.attn.in_proj_weight"
  bool isBuffer = false;
  Type type;
  /// Set when the weights file may leave it out (StateInfo::fillValue).
  std::optional<double> fillValue;
};

struct InstantiatedModel {
  const ModelInfo *model = nullptr;
  std::vector<InstantiatedState> state;
  std::vector<FnInfo> fns; // signatures with the arguments substituted
};

class CheckedProgram {
public:
  CheckedProgram() : saver_(allocator_) {}
  CheckedProgram(const CheckedProgram &) = delete;
  CheckedProgram &operator=(const CheckedProgram &) = delete;

  /// Every model of every module, main module first, in source order.
  std::vector<std::unique_ptr<ModelInfo>> models;
  std::vector<DeclSymbol> decls;

  /// The record of `expr`, created empty on first use (the checker's use).
  ExprInfo &infoFor(const ast::Expr *expr);
  /// Calls `fn(expr, info)` for every checked expression.
  void forEachExpr(llvm::function_ref<void(const ast::Expr *, const ExprInfo &)> fn) const;
  /// Copies `text` into storage that lives as long as the program.
  llvm::StringRef save(llvm::StringRef text) { return saver_.save(text); }

  const ModelInfo *findModel(llvm::StringRef name, const ast::Module *module = nullptr) const;
  const ModelInfo *modelFor(const ast::ModelDecl *decl) const;
  const ExprInfo *typeOf(const ast::Expr *expr) const;

  /// The state and fn signatures of `model` with its device params set to
  /// `devices` and its value params to `values` (missing trailing values
  /// use defaults). Returns nullopt and sets `error` on bad arguments.
  std::optional<InstantiatedModel> instantiate(const ModelInfo &model,
                                               llvm::ArrayRef<Device> devices,
                                               llvm::ArrayRef<int64_t> values,
                                               std::string &error) const;

  /// Registers a model (the checker's use).
  ModelInfo &addModel(std::unique_ptr<ModelInfo> model);

  /// The condition of an `if` statement (the checker's use; null when it
  /// did not check).
  void recordBranch(const ast::IfStmt *stmt, ConditionPtr condition);
  /// Whether the `then` block of `stmt` runs for the instance `subst`
  /// describes; nullopt when its arguments do not decide it.
  std::optional<bool> branchTaken(const ast::IfStmt &stmt, const Substitution &subst) const;

private:
  llvm::DenseMap<const ast::ModelDecl *, ModelInfo *> byDecl_;
  llvm::DenseMap<const ast::IfStmt *, ConditionPtr> branches_;
  // Expression records live in a deque (stable, cheap to grow), indexed by node.
  llvm::DenseMap<const ast::Expr *, uint32_t> exprIndex_;
  std::deque<ExprInfo> exprInfos_;
  llvm::BumpPtrAllocator allocator_;
  llvm::StringSaver saver_;
};

/// The value of slot `k` of `param` (of `model`) when its argument is left
/// out: its constant default, or the value of the earlier param it names,
/// read from `earlier` (the instance's values so far). nullopt when it has
/// no default with a dim value.
std::optional<Dim> defaultSlotValue(const ModelInfo &model, const ValueParamInfo &param, unsigned k,
                                    llvm::ArrayRef<std::optional<Dim>> earlier);

/// Builds the substitution that instantiates `inst.model`'s generic types.
Substitution substitutionFor(const ModelInstance &inst);

/// Whether a member with `presence` exists in the instance `subst`
/// describes (a member whose condition the arguments do not decide counts
/// as present).
bool presentIn(const Presence &presence, const Substitution &subst);

/// The exact divisions `model` needs over its own value params: its own and
/// its submodels' (substituted; ranges are then the submodel declarations),
/// leaving out those that are provably exact or already constant there.
std::vector<ExactDivision> requiredExactDivisions(const ModelInfo &model);
/// The asserts of `model` and of every submodel it builds, over `model`'s
/// value arguments.
std::vector<Requirement> requiredConditions(const ModelInfo &model);
/// The first of `model`'s required conditions that `subst` (an instance's
/// arguments) decides false.
const Requirement *firstUnmet(llvm::ArrayRef<Requirement> required, const Substitution &subst);

/// When `numerator` and `divisor` (the division's, substituted) are both
/// constant and not exact (or the divisor is not positive), what E0409 says
/// about them: "`embed_dim` = 32 is not divisible by `num_heads` = 5".
std::optional<std::string> inexactDivisionDetail(const ExactDivision &division, Dim numerator,
                                                 Dim divisor);

} // namespace modelc::sema

#endif // MODELC_SEMA_CHECKEDPROGRAM_H
