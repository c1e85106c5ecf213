//===- ResolveName.h - What a name means in an expression -------*- C++ -*-===//
//
// Private to the expression checkers (CheckExpr.cpp, CheckOperators.cpp,
// CheckCalls.cpp, CheckMembers.cpp): name lookup in the current scope and
// the helpers around it.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_RESOLVENAME_H
#define MODELC_SEMA_RESOLVENAME_H

#include "sema/Checker.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::sema::detail {

/// A name resolved in the current scope.
struct Resolved {
  enum class Kind {
    None,
    Local,
    Symbol,
    State,
    Submodel,
    ValueParam,
    DeviceParam,
    Fn,
    Model,
    Import,
    Builtin
  };
  Kind kind = Kind::None;
  Value value;
  std::optional<Range> definition;
  std::string doc;
  const FnInfo *fn = nullptr;
  const ModelInfo *model = nullptr;
  const SubmodelInfo *submodel = nullptr;
  /// State and Submodel: where the name exists. For a name declared in
  /// each of exclusive branches, where any declaration does, unless the
  /// enclosing `if`s pick one.
  Presence presence;
  /// The declarations of a name used outside the `if`s that pick one have
  /// different types (then `value` is the first's).
  std::vector<Range> differingDeclarations;
};

/// `name` in the scope of the fn being checked: a local, the model's state,
/// submodels, params and fns, a model, an import or a built-in.
Resolved resolveName(Checker &c, llvm::StringRef name);
/// Where the submodel `base` names is built (`fc` in `fc.bias`), if it is one.
const ast::Expr *builtAt(Checker &c, const ast::Expr &base);
/// E0101 for `name`, once per fn.
void reportUnknown(Checker &c, llvm::StringRef name, Range at);
/// The shape a model instance sees itself with (for calls of its own fns).
std::shared_ptr<const ModelInstance> selfInstance(const ModelInfo &model);

} // namespace modelc::sema::detail

#endif // MODELC_SEMA_RESOLVENAME_H
