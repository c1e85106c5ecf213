//===- CheckExpr.cpp - Names and the expression dispatch ------------------===//
//
// checkExpr's dispatch over expression kinds, recording what each
// expression is, and names; operators, calls and members have files of
// their own (see Checker.h).
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

Value Checker::record(const ast::Expr &expr, Value value, std::optional<Range> definition,
                      llvm::StringRef name, llvm::StringRef doc) {
  value.expr = &expr;
  value.type = underFacts(value.type);
  if (fn_ && fn_->model && value.type.isTensor())
    value.type = withExactQuotients(*fn_->model, std::move(value.type));
  ExprInfo &info = program_.infoFor(&expr);
  info.type = value.type;
  info.origin = value.origin;
  if (definition)
    info.definition = definition;
  if (!name.empty())
    info.name = name.str();
  if (!doc.empty())
    info.doc = doc.str();
  auto hasVarDevice = [](const Type &type) {
    if (type.kind() == Type::Kind::Tuple && type.elements)
      return llvm::any_of(*type.elements,
                          [](const Type &e) { return e.isTensor() && e.dev.isVar(); });
    return type.isTensor() && type.dev.isVar();
  };
  if (fn_ && hasVarDevice(value.type))
    fn_->recorded.push_back(&expr);
  return value;
}

/// The declaration of state or submodel `name` among `decls` that a use in
/// the fn being checked means, and in `r.presence` where it exists. A name
/// declared in each of exclusive branches means the one the enclosing `if`s
/// pick; elsewhere the first, existing where any of them does (their types
/// must agree: `r.differingDeclarations` lists them when they do not).
template <typename Info>
static const Info *declarationInScope(Checker &c, const std::vector<Info> &decls,
                                      llvm::StringRef name, Resolved &r) {
  llvm::SmallVector<const Info *, 2> all;
  for (const Info &d : decls)
    if (d.name == name)
      all.push_back(&d);
  if (all.empty())
    return nullptr;
  r.presence = all.front()->presence;
  // A declaration without a condition beside others was reported (E0102).
  if (all.size() == 1 || llvm::any_of(all, [](const Info *d) { return d->presence.always(); }))
    return all.front();
  for (const Info *d : all)
    if (!d->presence.always() && c.knownPresent(d->presence)) {
      r.presence = d->presence;
      return d;
    }
  std::vector<const std::vector<ast::MemberGuard> *> guards;
  std::string firstType = all.front()->type.str();
  bool differ = false;
  for (const Info *d : all) {
    guards.push_back(&d->decl->guards);
    differ |= d->type.str() != firstType;
  }
  r.presence = c.presenceOfAny(guards);
  if (differ)
    for (const Info *d : all)
      r.differingDeclarations.push_back(d->decl->name.range);
  return all.front();
}

Resolved detail::resolveName(Checker &c, llvm::StringRef name) {
  Resolved r;
  Checker::FnContext &ctx = *c.fn_;
  for (auto scope = ctx.scopes.rbegin(); scope != ctx.scopes.rend(); ++scope) {
    auto it = scope->find(name);
    if (it != scope->end()) {
      r.kind = Resolved::Kind::Local;
      r.value = it->second.value;
      r.definition = it->second.declRange;
      return r;
    }
  }
  ModelInfo &model = *ctx.model;
  // A value argument may share its name with the state it decides
  // (`bias: bool` and `param bias`): the name means the argument only where
  // a value known when the model is built is expected.
  bool stateFirst = !c.compileTimeNames && (model.findState(name) || model.findSubmodel(name));
  for (const ValueParamInfo &p : model.valueParams) {
    if (p.name != name || stateFirst)
      continue;
    r.kind = Resolved::Kind::ValueParam;
    switch (p.kind) {
    case ast::ScalarKind::Int:
      r.value.type = Type::integer(Dim::atom(p.atom));
      if (p.isTuple()) { // `kernel_size`: (int, int), its elements `kernel_size[0]`, ...
        std::vector<Type> elements;
        for (AtomId a : p.elementAtoms)
          elements.push_back(Type::integer(Dim::atom(a)));
        r.value.type = Type::tuple(std::move(elements));
      }
      break;
    case ast::ScalarKind::Float:
      r.value.type = Type::floating();
      break;
    case ast::ScalarKind::Bool:
      r.value.type = Type::boolean();
      r.value.type.intValue = Dim::atom(p.atom);
      break;
    case ast::ScalarKind::Option:
      r.value.type = Type::string();
      r.value.type.intValue = Dim::atom(p.atom);
      break;
    case ast::ScalarKind::DType:
      r.value.type = Type::dtypeValue(ElementType::parameter(p.atom));
      break;
    }
    for (const ast::ValueParam &vp : model.decl->valueParams)
      if (vp.name.name == name)
        r.definition = vp.name.range;
    return r;
  }
  if (ctx.fn)
    for (const FnDTypeParam &d : ctx.fn->dtypeParams)
      if (d.name == name) {
        r.kind = Resolved::Kind::ValueParam;
        r.value.type = Type::dtypeValue(ElementType::parameter(d.atom));
        for (const ast::Ident &i : ctx.fn->decl->dtypeParams)
          if (i.name == name)
            r.definition = i.range;
        return r;
      }
  auto sym = ctx.sigSymbols.find(name);
  if (sym != ctx.sigSymbols.end()) {
    r.kind = Resolved::Kind::Symbol;
    r.value.type = Type::integer(sym->second);
    return r;
  }
  if (const StateInfo *s = declarationInScope(c, model.state, name, r)) {
    r.kind = Resolved::Kind::State;
    r.value.type = s->type;
    r.value.origin = s->origin;
    r.definition = s->decl->name.range;
    r.doc = s->decl->doc;
    return r;
  }
  if (const SubmodelInfo *s = declarationInScope(c, model.submodels, name, r)) {
    r.kind = Resolved::Kind::Submodel;
    r.value.type = s->type;
    r.value.origin = s->placement;
    r.definition = s->decl->name.range;
    r.doc = s->decl->doc;
    r.submodel = s;
    return r;
  }
  for (size_t i = 0; i < model.decl->deviceParams.size(); ++i) {
    if (model.decl->deviceParams[i].name.name != name)
      continue;
    r.kind = Resolved::Kind::DeviceParam;
    r.value.type = Type::device(Device::param(model.decl, unsigned(i)));
    r.definition = model.decl->deviceParams[i].name.range;
    return r;
  }
  if (const FnInfo *f = model.findFn(name)) {
    r.kind = Resolved::Kind::Fn;
    r.fn = f;
    r.definition = f->decl->name.range;
    r.doc = f->decl->doc;
    return r;
  }
  if (const auto *scope = c.scopeOf(model.module)) {
    if (ModelInfo *m = scope->models.lookup(name)) {
      r.kind = Resolved::Kind::Model;
      r.model = m;
      r.definition = m->decl->name.range;
      r.doc = m->decl->doc;
      return r;
    }
    // An import that failed to load is still a name, with the Error type.
    if (auto it = scope->imports.find(name); it != scope->imports.end()) {
      r.kind = Resolved::Kind::Import;
      r.value.type = it->second ? Type::module(it->second) : Type::error();
      return r;
    }
  }
  if (c.isBuiltin(name)) {
    r.kind = Resolved::Kind::Builtin;
    r.value.type = Type::builtin(name);
  }
  return r;
}

/// Where the submodel `base` names is built (`fc` in `fc.bias`), if it is one.
const ast::Expr *detail::builtAt(Checker &c, const ast::Expr &base) {
  auto *name = dyn_cast<ast::NameExpr>(&base);
  if (!name)
    return nullptr;
  Resolved r = resolveName(c, name->name);
  return r.submodel && r.submodel->decl ? r.submodel->decl->init.get() : nullptr;
}

void detail::reportUnknown(Checker &c, llvm::StringRef name, Range at) {
  if (!c.fn_->reportedUnknown.insert(name).second)
    return;
  auto diag = c.diags_.report(DiagId::UnknownName, at, name);
  diag.primary("not found in this scope");
  helpWithTorchDTypeName(diag, name, at);
  // Python's spellings of the literals.
  if (name == "True" || name == "False")
    diag.help("Python's `" + name.str() + "` is written `" + name.lower() + "`",
              {{at, name.lower()}});
}

/// The shape a model instance sees itself with (for calls of its own fns).
std::shared_ptr<const ModelInstance> detail::selfInstance(const ModelInfo &model) {
  auto inst = std::make_shared<ModelInstance>();
  inst->model = &model;
  for (size_t i = 0; i < model.decl->deviceParams.size(); ++i)
    inst->devices.push_back(Device::param(model.decl, unsigned(i)));
  for (const ValueParamInfo &p : model.valueParams)
    for (unsigned k = 0; k < p.slotCount(); ++k)
      inst->values.push_back(p.hasDimValue() ? std::optional<Dim>(Dim::atom(p.slotAtom(k)))
                                             : std::nullopt);
  return inst;
}

Value Checker::checkExpr(const ast::Expr &expr) {
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit: {
    auto &lit = cast<ast::IntLitExpr>(expr);
    if (lit.overflowed)
      return record(expr, errorValue());
    Value v;
    v.type = Type::integer(Dim::constant(lit.value));
    return record(expr, v);
  }
  case ast::Expr::Kind::FloatLit: {
    Value v;
    v.type = Type::floating();
    return record(expr, v);
  }
  case ast::Expr::Kind::BoolLit: {
    Value v;
    v.type = Type::boolean();
    v.type.intValue = Dim::constant(cast<ast::BoolLitExpr>(expr).value ? 1 : 0);
    return record(expr, v);
  }
  case ast::Expr::Kind::StringLit: {
    Value v;
    v.type = Type::string();
    return record(expr, v);
  }
  case ast::Expr::Kind::DeviceLit: {
    auto &lit = cast<ast::DeviceLitExpr>(expr);
    Value v;
    std::optional<Device> d;
    if (lit.device.kind == ast::DeviceExpr::Kind::Cpu)
      d = Device::cpu();
    else if (lit.device.kind == ast::DeviceExpr::Kind::Cuda &&
             Device::isValidCudaIndex(lit.device.cudaIndex))
      d = Device::cuda(lit.device.cudaIndex);
    if (!d) {
      diags_.report(DiagId::InvalidDevice, expr.range, expr.range.text())
          .primary("device indices range from 0 to 127")
          .note("a CUDA device index is an 8-bit number, as in PyTorch");
      return record(expr, errorValue());
    }
    v.type = Type::device(*d);
    return record(expr, v);
  }
  case ast::Expr::Kind::DTypeLit: {
    Value v;
    v.type = Type::dtypeValue(cast<ast::DTypeLitExpr>(expr).dtype);
    return record(expr, v);
  }
  case ast::Expr::Kind::Name: {
    auto &name = cast<ast::NameExpr>(expr);
    Resolved r = resolveName(*this, name.name);
    switch (r.kind) {
    case Resolved::Kind::None:
      reportUnknown(*this, name.name, expr.range);
      return record(expr, errorValue());
    case Resolved::Kind::Fn:
    case Resolved::Kind::Model:
      diags_
          .report(DiagId::TypeMismatch, expr.range, "a value",
                  r.fn ? "fn `" + name.name + "`" : "model `" + name.name + "`")
          .primary("call it instead");
      return record(expr, errorValue(), r.definition, name.name, r.doc);
    case Resolved::Kind::State:
    case Resolved::Kind::Submodel:
      if (!requirePresent(r.presence, name.name, expr.range) ||
          !requireOneType(name.name, expr.range, r.differingDeclarations))
        return record(expr, errorValue(), r.definition, name.name, r.doc);
      return record(expr, r.value, r.definition, name.name, r.doc);
    default:
      return record(expr, r.value, r.definition, name.name, r.doc);
    }
  }
  case ast::Expr::Kind::List: {
    auto &list = cast<ast::ListExpr>(expr);
    if (list.repeat) {
      diags_.report(DiagId::UnsupportedFeature, expr.range,
                    "a repeated list `[x for _ in a..b]` outside a submodel declaration");
      return record(expr, errorValue());
    }
    std::vector<Type> elements;
    bool ok = true;
    for (const ast::ExprPtr &e : list.elements) {
      Value v = checkExpr(*e);
      ok &= !v.type.isError();
      elements.push_back(v.type);
    }
    Value v;
    if (ok)
      v.type = Type::list(std::move(elements));
    return record(expr, v);
  }
  case ast::Expr::Kind::Unary: {
    auto &u = cast<ast::UnaryExpr>(expr);
    Value operand = checkExpr(*u.operand);
    if (operand.type.isError())
      return record(expr, errorValue());
    Value v = operand;
    if (u.op == ast::UnaryOp::Neg) {
      if (operand.type.kind() == Type::Kind::Int) {
        v.type = Type::integer(operand.type.intValue ? std::optional<Dim>(-*operand.type.intValue)
                                                     : std::nullopt);
      } else if (!(operand.type.isTensor() && operand.type.dtype != ast::DType::Bool) &&
                 operand.type.kind() != Type::Kind::Float) {
        diags_.report(DiagId::TypeMismatch, u.operand->range, "a number or a numeric tensor",
                      typeStr(operand));
        return record(expr, fail(expr, {&operand}));
      }
    } else {
      bool isBool = operand.type.kind() == Type::Kind::Bool ||
                    (operand.type.isTensor() && operand.type.dtype == ast::DType::Bool);
      if (!isBool) {
        diags_.report(DiagId::ExpectedBoolMask, u.operand->range, "not", typeStr(operand));
        return record(expr, fail(expr, {&operand}));
      }
    }
    return record(expr, v);
  }
  case ast::Expr::Kind::Binary: {
    auto &b = cast<ast::BinaryExpr>(expr);
    if (b.op == ast::BinaryOp::MatMul) {
      bool rhsIsDevice = isa<ast::DeviceLitExpr>(b.rhs.get());
      if (auto *n = dyn_cast<ast::NameExpr>(b.rhs.get()))
        rhsIsDevice = resolveName(*this, n->name).kind == Resolved::Kind::DeviceParam;
      if (rhsIsDevice)
        return checkPlacement(b);
    }
    Value lhs = checkExpr(*b.lhs);
    Value rhs = checkExpr(*b.rhs);
    return record(expr, checkBinary(b, lhs, rhs));
  }
  case ast::Expr::Kind::Call:
    return checkCall(cast<ast::CallExpr>(expr));
  case ast::Expr::Kind::Member:
    return checkMember(cast<ast::MemberExpr>(expr));
  case ast::Expr::Kind::Index:
    return checkIndex(cast<ast::IndexExpr>(expr));
  case ast::Expr::Kind::Tuple:
    return checkTuple(cast<ast::TupleExpr>(expr));
  case ast::Expr::Kind::Instantiate: {
    auto &inst = cast<ast::InstantiateExpr>(expr);
    for (const ast::Arg &a : inst.args)
      if (a.value)
        checkExpr(*a.value);
    reportModelCall(expr, (inst.module ? inst.module->name + "." : "") + inst.model.name);
    return record(expr, errorValue());
  }
  }
  return record(expr, errorValue());
}
