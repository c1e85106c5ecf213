//===- CheckCalls.cpp - Calls of models, their fns and built-ins ----------===//
//
// Which callee a call reaches (a submodel's forward, a model fn, a
// stateless layer used inline, a built-in), binding its arguments and
// instantiating its signature; a model built inside a fn is reported with
// the submodel declaration that fixes it.
//
//===----------------------------------------------------------------------===//

#include "sema/ResolveName.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using namespace modelc::sema::detail;

namespace {

/// No params or buffers, in the model or any submodel (`nn.ReLU`).
bool hasNoState(const ModelInfo &model) {
  if (!model.state.empty())
    return false;
  return llvm::all_of(model.submodels, [](const SubmodelInfo &s) {
    if (s.type.kind() == Type::Kind::Model && s.type.instance)
      return hasNoState(*s.type.instance->model);
    if (s.type.kind() == Type::Kind::ModelList && s.type.instances)
      return llvm::all_of(*s.type.instances, [](const auto &i) { return hasNoState(*i->model); });
    return false;
  });
}

/// The argument of `init` (`nn.Linear(784, 256, dtype: bf16)`, `M<dev>(...)`)
/// bound to value param `index` of `callee`, or null where it is defaulted.
const ast::Arg *argumentFor(const ast::Expr &init, const ModelInfo &callee, size_t index) {
  const std::vector<ast::Arg> *args = nullptr;
  if (auto *call = dyn_cast<ast::CallExpr>(&init))
    args = &call->args;
  else if (auto *inst = dyn_cast<ast::InstantiateExpr>(&init))
    args = &inst->args;
  if (!args || index >= callee.valueParams.size())
    return nullptr;
  size_t positional = 0;
  for (const ast::Arg &arg : *args) {
    if (arg.name ? arg.name->name == callee.valueParams[index].name : positional++ == index)
      return arg.value ? &arg : nullptr;
  }
  return nullptr;
}

/// The range of the written dtype of `type` (`f32` in `f32[B, 4] @ D`).
Range dtypeRangeOf(const ast::TypeExpr &type) {
  if (type.dtypeParam)
    return type.dtypeParam->range;
  const char *begin = type.range.begin.getPointer();
  return {type.range.begin, llvm::SMLoc::getFromPointer(begin + ast::dtypeName(type.dtype).size())};
}

} // namespace

void Checker::reportArgumentDTypeMismatch(const ast::CallExpr &call, llvm::StringRef calleeText,
                                          const ModelInstance &inst, const FnParamInfo &param,
                                          const Type &expected, const Value &arg) {
  auto diag = diags_.report(DiagId::DTypeMismatch, arg.range(), arg.type.dtype.prose(),
                            expected.dtype.prose(), calleeText);
  diag.primary(typeStr(arg))
      .label(call.callee->range, "`" + calleeText.str() + "` takes " + expected.str());
  // Where the argument's dtype is written: a parameter of this fn.
  const ast::FnParam *declared = nullptr;
  auto *name = llvm::dyn_cast_if_present<ast::NameExpr>(arg.expr);
  Local *local = name ? findLocal(name->name).first : nullptr;
  if (local && !local->isLet && fn_->fn && fn_->fn->decl)
    for (const ast::FnParam &p : fn_->fn->decl->params)
      if (p.name.name == name->name && p.type && p.type->kind == ast::TypeExpr::Kind::Tensor)
        declared = &p;
  if (declared)
    diag.note("`" + declared->name.name + "` is declared " + arg.type.dtype.prose() + " here",
              dtypeRangeOf(*declared->type));
  // Where the callee's dtype comes from: its instance's dtype argument.
  const ast::Expr *init = builtAt(*this, *call.callee);
  std::optional<size_t> dtypeParam;
  if (std::optional<AtomId> atom = param.type.dtype.param())
    for (size_t i = 0; i < inst.model->valueParams.size(); ++i)
      if (inst.model->valueParams[i].atom == *atom &&
          inst.model->valueParams[i].kind == ast::ScalarKind::DType)
        dtypeParam = i;
  std::vector<Edit> rebuild;
  std::string paramName;
  if (init && dtypeParam) {
    paramName = inst.model->valueParams[*dtypeParam].name;
    if (const ast::Arg *given = argumentFor(*init, *inst.model, *dtypeParam)) {
      diag.note("`" + calleeText.str() + "` is built with `" + paramName + ": " +
                    given->value->range.text().str() + "` here",
                given->value->range);
      rebuild.push_back({given->value->range, arg.type.dtype.str()});
    } else {
      diag.note("`" + calleeText.str() + "` is built without `" + paramName + ":` here, so in " +
                    expected.dtype.str() + ", the default of `" + inst.model->name + "`",
                init->range);
      auto *c = dyn_cast<ast::CallExpr>(init);
      auto *i = dyn_cast<ast::InstantiateExpr>(init);
      Range args = c ? c->argsRange : i ? i->argsRange : Range();
      bool none = c ? c->args.empty() : i && i->args.empty();
      if (args.isValid()) {
        llvm::SMLoc close = llvm::SMLoc::getFromPointer(args.end.getPointer() - 1);
        rebuild.push_back(
            {{close, close}, (none ? "" : ", ") + paramName + ": " + arg.type.dtype.str()});
      }
    }
  }
  // Only a floating dtype can be a layer's dtype.
  if (!arg.type.dtype.isFloating())
    rebuild.clear();
  std::string build =
      "build `" + calleeText.str() + "` with `" + paramName + ": " + arg.type.dtype.str() + "`";
  std::vector<Edit> convert = castEdits(*arg.expr, expected.dtype);
  if (declared && expected.dtype.isParam() && !arg.type.dtype.isParam()) {
    // A model generic over its dtype passing a fn parameter written with a
    // fixed one: the parameter should take the model's dtype.
    diag.help("declare `" + declared->name.name + "` with the model's dtype `" +
                  expected.dtype.str() + "`",
              {{dtypeRangeOf(*declared->type), expected.dtype.str()}});
    diag.help("or convert it with `cast`", convert);
  } else if (!rebuild.empty() && arg.type.dtype.isParam()) {
    // The layer of a dtype-generic model built without its dtype (its
    // result is then f32 too: converting the argument alone may not do).
    diag.help(build, rebuild);
    diag.help("or convert it with `cast`", convert, Applicability::MaybeIncorrect);
  } else {
    diag.help("convert it with `cast`", convert);
    if (!rebuild.empty())
      diag.help("or " + build, rebuild, Applicability::MaybeIncorrect);
  }
}

std::optional<Value> Checker::statelessInstance(const ast::CallExpr &call, const ModelInfo *callee,
                                                llvm::StringRef text) {
  // Nothing of a stateless layer needs placing or loading, so creating it
  // in a fn (`nn.ReLU()(x)`) is not E0304: it runs on the fn's devices.
  if (!inFnBody || !fn_ || !fn_->model || !callee || !hasNoState(*callee))
    return std::nullopt;
  DeviceOrigin placement;
  bool pinned = false;
  std::optional<Type> type = instanceFromExpr(*fn_->model, call, text.str(), placement, pinned);
  Value v;
  v.type = type ? *type : Type::error();
  v.origin = placement;
  return v;
}

void Checker::reportModelCall(const ast::Expr &expr, llvm::StringRef modelName) {
  if (inFnBody) {
    reportSubmodelInFn(expr, modelName);
    return;
  }
  // A state initialiser: state is a tensor, submodels are declared as `name = Model(...)`.
  diags_.report(DiagId::TypeMismatch, expr.range, "a tensor", "model `" + modelName.str() + "`")
      .primary("declare it as a submodel: `name = " + modelName.str() + "(...)`");
}

namespace {

/// `BatchNorm2d` -> `batch_norm2d`, `ReLU` -> `relu`: a submodel name for an
/// instance of `modelName` (which may be `nn.BatchNorm2d`).
std::string snakeCase(llvm::StringRef modelName) {
  modelName = modelName.rsplit('.').second.empty() ? modelName : modelName.rsplit('.').second;
  std::string out;
  for (size_t i = 0; i < modelName.size(); ++i) {
    char c = modelName[i];
    bool wordStart = i > 0 && llvm::isUpper(c) && llvm::isLower(modelName[i - 1]) &&
                     i + 1 < modelName.size() && llvm::isLower(modelName[i + 1]);
    if (wordStart)
      out += '_';
    out += llvm::toLower(c);
  }
  return out;
}

/// Whether `e` reads only literals and the model's own arguments, so it
/// means the same in the model's body as in a fn.
bool onlyModelArguments(const ast::Expr *e, const ModelInfo &model) {
  if (!e)
    return false;
  switch (e->kind()) {
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
  case ast::Expr::Kind::BoolLit:
  case ast::Expr::Kind::StringLit:
  case ast::Expr::Kind::DeviceLit:
  case ast::Expr::Kind::DTypeLit:
    return true;
  case ast::Expr::Kind::Name: {
    llvm::StringRef name = cast<ast::NameExpr>(e)->name;
    return llvm::any_of(model.valueParams,
                        [&](const ValueParamInfo &p) { return p.name == name; }) ||
           llvm::any_of(model.decl->deviceParams,
                        [&](const ast::DeviceParam &p) { return p.name.name == name; });
  }
  case ast::Expr::Kind::Unary:
    return onlyModelArguments(cast<ast::UnaryExpr>(e)->operand.get(), model);
  case ast::Expr::Kind::Binary:
    return onlyModelArguments(cast<ast::BinaryExpr>(e)->lhs.get(), model) &&
           onlyModelArguments(cast<ast::BinaryExpr>(e)->rhs.get(), model);
  default:
    return false;
  }
}

} // namespace

std::optional<std::string> Checker::modelArgumentsValue(const ast::Expr &e) {
  const ExprInfo *info = program_.typeOf(&e);
  if (!info || info->type.kind() != Type::Kind::Int || !info->type.intValue)
    return std::nullopt;
  // Every symbol of the value must be one of the model's int arguments.
  const ModelInfo &model = *fn_->model;
  Dim probe = info->type.intValue->substitute([&](AtomId atom) -> std::optional<Dim> {
    for (const ValueParamInfo &p : model.valueParams)
      if (p.kind == ast::ScalarKind::Int && p.elementAtoms.empty() && p.atom == atom)
        return Dim::constant(0);
    return std::nullopt;
  });
  if (!probe.asConstant())
    return std::nullopt;
  return info->type.intValue->str();
}

std::string Checker::freshSubmodelName(llvm::StringRef modelName) {
  std::string base = snakeCase(modelName);
  const ModelInfo &model = *fn_->model;
  auto taken = [&](llvm::StringRef name) {
    if (model.findState(name) || model.findSubmodel(name) || model.findFn(name) || isBuiltin(name))
      return true;
    if (llvm::any_of(model.valueParams, [&](const ValueParamInfo &p) { return p.name == name; }))
      return true;
    return llvm::any_of(fn_->scopes, [&](const auto &scope) { return scope.contains(name); });
  };
  std::string name = base;
  for (int n = 2; taken(name); ++n)
    name = base + std::to_string(n);
  return name;
}

void Checker::reportSubmodelInFn(const ast::Expr &expr, llvm::StringRef modelName) {
  const ast::FnDecl *fnDecl = fn_->fn ? fn_->fn->decl : nullptr;
  bool named = letExpr == &expr && letStmt;
  std::string name = named ? letName : freshSubmodelName(modelName);
  auto diag = diags_.report(DiagId::SubmodelInFn, expr.range, name,
                            fnDecl ? fnDecl->name.name : std::string("?"));
  diag.primary("`" + modelName.str() + "` is instantiated here, on every call")
      .note("state created inside a fn is not placed with the model: moving or placing the "
            "model (`.to()`, `<cuda:0>`) never reaches it, and its weights are not loaded");
  if (!fnDecl)
    return;
  // Indentation of the fn, to insert the declaration just above it.
  const char *lineStart = fnDecl->range.begin.getPointer();
  const char *bufferStart = fn_->model->decl->range.begin.getPointer();
  while (lineStart > bufferStart && lineStart[-1] != '\n')
    --lineStart;
  std::string indent(lineStart, fnDecl->range.begin.getPointer());
  // A line of its own above the fn's line (the fn may not start its line).
  bool ownLine = llvm::all_of(indent, [](char c) { return c == ' ' || c == '\t'; });
  if (!ownLine)
    indent = "  ";
  // Its arguments must mean the same in the model's body: one that reads
  // the fn's values (`nn.Linear(h.shape[1], 10)`) is written as the int the
  // checker knows it is (`32`, `hidden * 2`) where that needs only the
  // model's arguments.
  const std::vector<ast::Arg> *args = nullptr;
  if (auto *inst = dyn_cast<ast::InstantiateExpr>(&expr))
    args = &inst->args;
  else if (auto *call = dyn_cast<ast::CallExpr>(&expr))
    args = &call->args;
  std::string text;
  const char *copied = expr.range.begin.getPointer();
  bool movable = args != nullptr;
  for (const ast::Arg &a : args ? llvm::ArrayRef(*args) : llvm::ArrayRef<ast::Arg>()) {
    if (!a.value || onlyModelArguments(a.value.get(), *fn_->model))
      continue;
    std::optional<std::string> value = modelArgumentsValue(*a.value);
    if (!value) {
      movable = false;
      continue;
    }
    text += llvm::StringRef(copied, a.value->range.begin.getPointer() - copied).str() + *value;
    copied = a.value->range.end.getPointer();
  }
  text += llvm::StringRef(copied, expr.range.end.getPointer() - copied).str();
  std::string declLine =
      ownLine ? indent + name + " = " + text + "\n" : name + " = " + text + "\n" + indent;
  llvm::SMLoc at = ownLine ? llvm::SMLoc::getFromPointer(lineStart) : fnDecl->range.begin;
  std::vector<Edit> edits = {{Range{at, at}, declLine}};
  Applicability applicability =
      movable ? Applicability::MachineApplicable : Applicability::MaybeIncorrect;
  if (!named) {
    // `nn.BatchNorm2d(c)(x)` -> `batch_norm2d(x)`.
    edits.push_back({expr.range, name});
  } else {
    // Delete the whole `let` line: the name then refers to the submodel.
    const char *begin = letStmt->range.begin.getPointer();
    const char *end = letStmt->range.end.getPointer();
    while (begin > bufferStart && (begin[-1] == ' ' || begin[-1] == '\t'))
      --begin;
    if (*end == '\n')
      ++end;
    edits.push_back(
        {Range{llvm::SMLoc::getFromPointer(begin), llvm::SMLoc::getFromPointer(end)}, ""});
  }
  if (!fn_->loops.empty()) {
    // One declaration is one set of weights; the loop made a layer per
    // iteration.
    const ast::ForStmt &loop = *fn_->loops.back();
    std::string range =
        loop.isRange() && loop.iterable && loop.rangeEnd
            ? loop.iterable->range.text().str() + ".." + loop.rangeEnd->range.text().str()
            : "0..n";
    diag.note("inside a loop this creates a new `" + modelName.str() +
              "` on every iteration, each with its own weights: a list of them (`" + name +
              "s = [" + expr.range.text().str() + " for _ in " + range +
              "]`, looped over as `for " + name + " in " + name +
              "s { ... }`) keeps them apart; one declaration shares one "
              "set of weights");
    applicability = Applicability::MaybeIncorrect;
  }
  diag.help("declare `" + name + "` in the body of model `" + fn_->model->name + "`", edits,
            applicability);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Value Checker::checkCall(const ast::CallExpr &call) {
  const ast::Expr &calleeExpr = *call.callee;
  auto checkArgsOnly = [&] {
    for (const ast::Arg &a : call.args)
      if (a.value)
        checkExpr(*a.value);
  };
  auto callModelValue = [&](const Value &callee, llvm::StringRef text) -> Value {
    if (callee.type.kind() == Type::Kind::Model && callee.type.instance) {
      const ModelInstance &inst = *callee.type.instance;
      const FnInfo *forward = inst.model->findFn("forward");
      if (!forward) {
        diags_.report(DiagId::NoEntryFunction, calleeExpr.range, inst.model->name, "forward")
            .primary("calling a submodel calls its `forward`");
        checkArgsOnly();
        return record(call, errorValue());
      }
      return record(call, callModelFn(call, callee.type.instance, *forward, callee.origin, text));
    }
    checkArgsOnly();
    if (!callee.type.isError())
      diags_.report(DiagId::NotCallable, calleeExpr.range,
                    "`" + text.str() + "`: " + typeStr(callee));
    return record(call, errorValue());
  };

  if (auto *name = dyn_cast<ast::NameExpr>(&calleeExpr)) {
    Resolved r = resolveName(*this, name->name);
    switch (r.kind) {
    case Resolved::Kind::None:
      reportUnknown(*this, name->name, name->range);
      record(*name, errorValue());
      checkArgsOnly();
      return record(call, errorValue());
    case Resolved::Kind::Builtin:
      record(*name, r.value);
      return record(call, checkBuiltinCall(call, name->name, nullptr, nullptr, nullptr));
    case Resolved::Kind::Fn: {
      record(*name, Value(), r.definition, name->name, r.doc);
      DeviceOrigin origin;
      return record(call, callModelFn(call, selfInstance(*fn_->model), *r.fn, origin, name->name));
    }
    case Resolved::Kind::Model:
      record(*name, Value(), r.definition, name->name, r.doc);
      if (std::optional<Value> v = statelessInstance(call, r.model, name->name))
        return record(call, *v);
      checkArgsOnly();
      reportModelCall(call, name->name);
      return record(call, errorValue());
    default: {
      Value callee = record(*name, r.value, r.definition, name->name, r.doc);
      return callModelValue(callee, name->name);
    }
    }
  }

  if (auto *member = dyn_cast<ast::MemberExpr>(&calleeExpr)) {
    if (reportTorchNamespace(call, *member))
      return record(call, errorValue());
    // `nn.Linear(...)`: a model of an imported module.
    if (auto *base = dyn_cast<ast::NameExpr>(member->base.get())) {
      Resolved r = resolveName(*this, base->name);
      if (r.kind == Resolved::Kind::Import) {
        record(*base, r.value, {}, base->name);
        const auto *scope = scopeOf(r.value.type.moduleDecl);
        ModelInfo *m = scope ? scope->models.lookup(member->member.name) : nullptr;
        if (m && !r.value.type.isError()) {
          std::string text = base->name + "." + m->name;
          if (std::optional<Value> v = statelessInstance(call, m, text)) {
            record(*member, Value(), m->decl->name.range, m->name, m->decl->doc);
            return record(call, *v);
          }
        }
        checkArgsOnly();
        if (r.value.type.isError()) {
          // Reported where the import failed.
        } else if (!m) {
          diags_.report(DiagId::UnknownMember, member->member.range, "module `" + base->name + "`",
                        member->member.name);
        } else {
          record(*member, Value(), m->decl->name.range, m->name, m->decl->doc);
          reportModelCall(call, base->name + "." + m->name);
        }
        return record(call, errorValue());
      }
    }
    Value base = checkExpr(*member->base);
    if (base.type.isError()) {
      checkArgsOnly();
      record(*member, errorValue());
      return record(call, errorValue());
    }
    llvm::StringRef m = member->member.name;
    if (base.type.kind() == Type::Kind::Model && base.type.instance) {
      const ModelInstance &inst = *base.type.instance;
      std::string text = shortText(member->range);
      if (const FnInfo *f = inst.model->findFn(m)) {
        record(*member, Value(), f->decl->name.range, f->name, f->decl->doc);
        return record(call, callModelFn(call, base.type.instance, *f, base.origin, text));
      }
      Substitution subst = substitutionFor(inst);
      if (const SubmodelInfo *s = inst.model->findSubmodel(m, subst)) {
        if (!requirePresent(s->presence, text, member->range, &subst,
                            builtAt(*this, *member->base))) {
          checkArgsOnly();
          record(*member, errorValue());
          return record(call, errorValue());
        }
        Value sub;
        sub.type = subst.apply(s->type);
        sub.origin = base.origin;
        Value callee = record(*member, sub, s->decl->name.range, s->name, s->decl->doc);
        return callModelValue(callee, text);
      }
    }
    if (base.type.isTensor()) {
      if (isBuiltin(m)) {
        record(*member, Value{Type::builtin(m), {}, member, {}});
        return record(call, checkBuiltinCall(call, m, &base, nullptr, nullptr));
      }
    }
    checkArgsOnly();
    auto diag = diags_.report(DiagId::UnknownMember, member->member.range, typeStr(base), m);
    diag.label(member->base->range, typeStr(base));
    if (base.type.isTensor())
      helpWithTorchMethod(diag, call, *member, base.type);
    record(*member, errorValue());
    return record(call, errorValue());
  }

  Value callee = checkExpr(calleeExpr);
  return callModelValue(callee, shortText(calleeExpr.range));
}

Value Checker::callModelFn(const ast::CallExpr &call, std::shared_ptr<const ModelInstance> instance,
                           const FnInfo &fn, const DeviceOrigin &placement,
                           llvm::StringRef calleeText) {
  const ModelInstance &inst = *instance;
  ExprInfo &info = program_.infoFor(&call);
  info.calledFn = &fn;
  info.calledInstance = std::move(instance);
  // Evaluate every argument once, then bind them to the parameters.
  std::vector<BoundArg> bound(fn.params.size());
  std::vector<bool> given(fn.params.size(), false);
  bool ok = true;
  size_t positional = 0;
  for (const ast::Arg &arg : call.args) {
    if (!arg.value)
      continue;
    Value v = checkExpr(*arg.value);
    ok &= !v.type.isError();
    size_t slot;
    if (arg.name) {
      auto it =
          llvm::find_if(fn.params, [&](const FnParamInfo &p) { return p.name == arg.name->name; });
      if (it == fn.params.end()) {
        diags_.report(DiagId::UnknownNamedArgument, arg.name->range, calleeText, arg.name->name);
        ok = false;
        continue;
      }
      slot = size_t(it - fn.params.begin());
    } else {
      slot = positional++;
      if (slot >= fn.params.size()) {
        if (slot == fn.params.size())
          reportArgumentCount(arg.range, calleeText, fn.params.size(), fn.params.size(),
                              call.args.size(), fnSignature(fn), "unexpected argument");
        ok = false;
        continue;
      }
    }
    if (given[slot]) {
      diags_.report(DiagId::DuplicateArgument, arg.range, fn.params[slot].name);
      ok = false;
      continue;
    }
    given[slot] = true;
    bound[slot] = BoundArg{arg.value.get(), v};
  }
  // Each missing argument once, the first one with the count when none is named.
  bool named = llvm::any_of(call.args, [](const ast::Arg &a) { return a.name.has_value(); });
  for (size_t i = 0; i < fn.params.size(); ++i) {
    if (given[i])
      continue;
    reportMissingArgument(call.argsRange.isValid() ? call.argsRange : call.range, calleeText,
                          fn.params[i].name, fn.params.size(), fn.params.size(), call.args.size(),
                          named, fnSignature(fn));
    named = true;
    ok = false;
  }
  std::vector<const Value *> operands;
  for (const BoundArg &b : bound)
    operands.push_back(&b.value);
  if (!ok || !fn.valid)
    return fail(call, operands);

  // Bind the callee's signature-local dims (`B`, `...`) to the arguments.
  Substitution subst = substitutionFor(inst);
  auto isValueParam = [&](AtomId a) {
    return llvm::any_of(inst.model->valueParams,
                        [&](const ValueParamInfo &p) { return p.standsFor(a); });
  };
  llvm::SmallVector<std::pair<AtomId, Dim>, 8> locals;
  bool packBound = false;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Type &param = fn.params[i].type;
    const Type &arg = bound[i].value.type;
    if (!param.isTensor() || !arg.isTensor())
      continue;
    // `fn forward<T: dtype>(x: T[...])`: the first argument of dtype T binds
    // it (later ones must match, as any dtype).
    if (std::optional<AtomId> atom = param.dtype.param();
        atom &&
        llvm::any_of(fn.dtypeParams, [&](const FnDTypeParam &d) { return d.atom == *atom; }) &&
        llvm::none_of(locals, [&](const auto &l) { return l.first == *atom; })) {
      if (!arg.dtype.isFloating()) {
        const Value &v = bound[i].value;
        diags_.report(DiagId::ExpectedFloatDType, v.range(), calleeText, typeStr(v))
            .primary(typeStr(v))
            .note("`" + fn.name + "` takes its dtype `" + atomName(*atom).str() +
                  "` from this argument, and it must be a floating dtype");
        return fail(call, operands);
      }
      locals.push_back({*atom, arg.dtype.asDim()});
    }
    const Shape &ps = param.shape, &as = arg.shape;
    if (as.dims.size() < ps.dims.size() ||
        (!ps.hasPack() && (as.dims.size() != ps.dims.size() || as.hasPack())))
      continue; // reported as a shape mismatch below
    size_t offset = as.dims.size() - ps.dims.size();
    if (ps.hasPack() && !packBound) {
      packBound = true;
      subst.packFrom = ps.pack;
      subst.packTo = as.pack;
      subst.packDims.assign(as.dims.begin(), as.dims.begin() + offset);
    }
    for (size_t d = 0; d < ps.dims.size(); ++d) {
      std::optional<AtomId> atom = ps.dims[d].asAtom();
      if (!atom || isValueParam(*atom))
        continue;
      if (llvm::none_of(locals, [&](const auto &l) { return l.first == *atom; }))
        locals.push_back({*atom, as.dims[offset + d]});
    }
  }
  subst.dims.append(locals.begin(), locals.end());

  for (size_t i = 0; i < fn.params.size(); ++i) {
    const FnParamInfo &param = fn.params[i];
    const Value &arg = bound[i].value;
    // Under the enclosing `if`s' facts: a call of the model's own fn inside
    // `if bidirectional` sees `(1 + bidirectional) * n` as `2 * n`.
    Type expected = underFacts(subst.apply(param.type));
    if (!expected.isTensor()) {
      bool matches = expected.kind() == arg.type.kind() ||
                     (expected.kind() == Type::Kind::Float && arg.type.kind() == Type::Kind::Int);
      if (!matches) {
        diags_.report(DiagId::TypeMismatch, arg.range(), expected.str(), typeStr(arg))
            .primary("argument `" + param.name + "` of `" + calleeText.str() + "`");
        ok = false;
      }
      continue;
    }
    if (!arg.type.isTensor()) {
      diags_.report(DiagId::ExpectedTensor, arg.range(), calleeText, typeStr(arg))
          .primary("argument `" + param.name + "` must be " + expected.str());
      ok = false;
      continue;
    }
    if (arg.type.dtype != expected.dtype) {
      reportArgumentDTypeMismatch(call, calleeText, inst, param, expected, arg);
      ok = false;
      continue;
    }
    if (arg.type.shape != expected.shape) {
      diags_.report(DiagId::ShapeMismatch, arg.range(), expected.shape.str(), arg.type.shape.str())
          .primary(typeStr(arg))
          .note("parameter `" + param.name + "` of `" + calleeText.str() + "` is " +
                expected.str());
      ok = false;
      continue;
    }
    DeviceOrigin binding;
    if (resolve(arg.type.dev).isVar()) {
      binding.kind = DeviceOrigin::Kind::Inferred;
      binding.range = call.range;
      std::string use = shortText(call.range);
      binding.subject = program_.save(use);
      binding.message = program_.save("the device " + expected.dev.str() + " of `" +
                                      fn_->unifier.creationText(resolve(arg.type.dev)).str() +
                                      "` was inferred from the call `" + use + "` here");
    }
    if (fn_->unifier.unify(arg.type.dev, expected.dev, binding))
      continue;
    Device actual = resolve(arg.type.dev);
    DeviceOrigin argOrigin = originOf(arg);
    auto diag = diags_.report(DiagId::ArgumentDeviceMismatch, arg.range(), param.name, calleeText,
                              actual.str(), expected.dev.str());
    diag.primary(typeStr(arg)).label(call.callee->range, "expects " + expected.str());
    if (argOrigin.isKnown())
      diag.note(argOrigin.message.str(), argOrigin.range);
    if (placement.isKnown())
      diag.note(placement.message.str(), placement.range);
    else if (param.origin.isKnown())
      diag.note("parameter `" + param.name + "` of `" + calleeText.str() + "` is declared on " +
                    expected.dev.str() + " here",
                param.origin.range);
    // `crit = Crit<cpu>(...)` called with values on D: pin it to D instead,
    // when D is where the fn returns (else its result would move too).
    bool repin = placement.kind == DeviceOrigin::Kind::Submodel && placement.editRange.isValid() &&
                 param.type.dev.kind == Device::Kind::Param && !actual.isVar() && fn_->fn &&
                 fn_->fn->result.isTensor() && resolve(fn_->fn->result.dev) == actual;
    if (repin)
      diag.help("pin `" + calleeText.str() + "` to " + actual.str(),
                {{placement.editRange, actual.str()}});
    // Into a submodel pinned away from where the fn returns, the moved
    // argument comes back on the pin: review it.
    bool returnsElsewhere = placement.kind == DeviceOrigin::Kind::Submodel && fn_->fn &&
                            fn_->fn->result.isTensor() &&
                            resolve(fn_->fn->result.dev) != expected.dev;
    // `let h = zeros([B, n]) @ cpu` passed to a layer on cuda:0: the
    // placement is what disagrees; a move is to review (a loop's carried
    // value would keep the placement and copy on every step).
    bool unplace = argOrigin.kind == DeviceOrigin::Kind::Placed && argOrigin.editRange.isValid();
    if (unplace)
      diag.help("remove the placement; its device is then inferred from this use",
                {{argOrigin.editRange, ""}});
    if (!expected.dev.isVar())
      diag.help((repin || unplace ? "or move the argument to " : "move the argument to ") +
                    expected.dev.str(),
                toEdits(*arg.expr, expected.dev),
                repin || returnsElsewhere || unplace ? Applicability::MaybeIncorrect
                                                     : Applicability::MachineApplicable);
    ok = false;
  }
  if (!ok)
    return fail(call, operands);
  Value result;
  result.type = subst.apply(fn.result);
  if (result.type.kind() == Type::Kind::Void)
    return result;
  // The result is where the submodel was placed, or where the fn says.
  result.origin = placement.isKnown() ? placement : fn.resultOrigin;
  if (result.type.kind() == Type::Kind::Tuple)
    result.elementOrigins = std::make_shared<const std::vector<DeviceOrigin>>(
        placement.isKnown() ? std::vector<DeviceOrigin>(result.type.arity(), placement)
                            : fn.resultElementOrigins);
  return result;
}
