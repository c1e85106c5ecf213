//===- CheckExpr.cpp - Names, operators, calls, members and indexing ------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

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

namespace {

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
  const Presence *presence = nullptr; // State and Submodel
};

} // namespace

static Resolved resolveName(Checker &c, llvm::StringRef name) {
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
    }
    for (const ast::ValueParam &vp : model.decl->valueParams)
      if (vp.name.name == name)
        r.definition = vp.name.range;
    return r;
  }
  auto sym = ctx.sigSymbols.find(name);
  if (sym != ctx.sigSymbols.end()) {
    r.kind = Resolved::Kind::Symbol;
    r.value.type = Type::integer(sym->second);
    return r;
  }
  if (const StateInfo *s = model.findState(name)) {
    r.kind = Resolved::Kind::State;
    r.value.type = s->type;
    r.value.origin = s->origin;
    r.definition = s->decl->name.range;
    r.doc = s->decl->doc;
    r.presence = &s->presence;
    return r;
  }
  if (const SubmodelInfo *s = model.findSubmodel(name)) {
    r.kind = Resolved::Kind::Submodel;
    r.value.type = s->type;
    r.value.origin = s->placement;
    r.definition = s->decl->name.range;
    r.doc = s->decl->doc;
    r.submodel = s;
    r.presence = &s->presence;
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
static const ast::Expr *builtAt(Checker &c, const ast::Expr &base) {
  auto *name = dyn_cast<ast::NameExpr>(&base);
  if (!name)
    return nullptr;
  Resolved r = resolveName(c, name->name);
  return r.submodel && r.submodel->decl ? r.submodel->decl->init.get() : nullptr;
}

static void reportUnknown(Checker &c, llvm::StringRef name, Range at) {
  if (c.fn_->reportedUnknown.insert(name).second)
    c.diags_.report(DiagId::UnknownName, at, name).primary("not found in this scope");
}

/// The shape a model instance sees itself with (for calls of its own fns).
static std::shared_ptr<const ModelInstance> selfInstance(const ModelInfo &model) {
  auto inst = std::make_shared<ModelInstance>();
  inst->model = &model;
  for (size_t i = 0; i < model.decl->deviceParams.size(); ++i)
    inst->devices.push_back(Device::param(model.decl, unsigned(i)));
  for (const ValueParamInfo &p : model.valueParams)
    inst->values.push_back(p.hasDimValue() ? std::optional<Dim>(Dim::atom(p.atom)) : std::nullopt);
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
      if (!requirePresent(*r.presence, name.name, expr.range))
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

} // namespace

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
  if (!llvm::all_of(indent, [](char c) { return c == ' ' || c == '\t'; }))
    indent = "  ";
  std::string declLine = name + " = " + expr.range.text().str() + "\n" + indent;
  llvm::SMLoc at = fnDecl->range.begin;
  std::vector<Edit> edits = {{Range{at, at}, declLine}};
  // Its arguments must mean the same in the model's body.
  const std::vector<ast::Arg> *args = nullptr;
  if (auto *inst = dyn_cast<ast::InstantiateExpr>(&expr))
    args = &inst->args;
  else if (auto *call = dyn_cast<ast::CallExpr>(&expr))
    args = &call->args;
  bool movable = args && llvm::all_of(*args, [&](const ast::Arg &a) {
                   return onlyModelArguments(a.value.get(), *fn_->model);
                 });
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
  diag.help("declare `" + name + "` in the body of model `" + fn_->model->name + "`", edits,
            applicability);
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

static bool isArithmetic(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Add:
  case ast::BinaryOp::Sub:
  case ast::BinaryOp::Mul:
  case ast::BinaryOp::Div:
  case ast::BinaryOp::Mod:
  case ast::BinaryOp::Pow:
    return true;
  default:
    return false;
  }
}

static bool isComparison(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Eq:
  case ast::BinaryOp::Ne:
  case ast::BinaryOp::Lt:
  case ast::BinaryOp::Le:
  case ast::BinaryOp::Gt:
  case ast::BinaryOp::Ge:
    return true;
  default:
    return false;
  }
}

Value Checker::checkBinary(const ast::BinaryExpr &b, const Value &lhs, const Value &rhs) {
  if (lhs.type.isError() || rhs.type.isError())
    return fail(b, {&lhs, &rhs});
  llvm::StringRef op = ast::binaryOpSpelling(b.op);
  if (b.op == ast::BinaryOp::MatMul)
    return checkMatmul(b, op, lhs, rhs);

  // Scalar op scalar: plain values (int dims fold symbolically).
  if (!lhs.type.isTensor() && !rhs.type.isTensor()) {
    Value v;
    auto numeric = [](const Type &t) {
      return t.kind() == Type::Kind::Int || t.kind() == Type::Kind::Float;
    };
    if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or) {
      for (const Value *x : {&lhs, &rhs})
        if (x->type.kind() != Type::Kind::Bool) {
          diags_.report(DiagId::ExpectedBoolMask, x->range(), op, typeStr(*x));
          return fail(b, {&lhs, &rhs});
        }
      v.type = Type::boolean();
      return v;
    }
    if (!numeric(lhs.type) || !numeric(rhs.type)) {
      const Value &bad = numeric(lhs.type) ? rhs : lhs;
      diags_.report(DiagId::TypeMismatch, bad.range(), "a number or a tensor", typeStr(bad))
          .primary("operand of `" + op.str() + "`");
      return fail(b, {&lhs, &rhs});
    }
    if (isComparison(b.op)) {
      v.type = Type::boolean();
      return v;
    }
    if (lhs.type.kind() == Type::Kind::Int && rhs.type.kind() == Type::Kind::Int &&
        b.op != ast::BinaryOp::Div && b.op != ast::BinaryOp::Pow && b.op != ast::BinaryOp::Mod) {
      std::optional<Dim> value;
      if (lhs.type.intValue && rhs.type.intValue) {
        Dim l = *lhs.type.intValue, r = *rhs.type.intValue;
        value = b.op == ast::BinaryOp::Add ? l + r : b.op == ast::BinaryOp::Sub ? l - r : l * r;
      }
      v.type = Type::integer(value);
      return v;
    }
    if (lhs.type.kind() == Type::Kind::Int && rhs.type.kind() == Type::Kind::Int &&
        b.op == ast::BinaryOp::Div) {
      // Integer division of dims stays an int (`in / 2`).
      std::optional<Dim> value;
      if (lhs.type.intValue && rhs.type.intValue) {
        if (std::optional<int64_t> c = rhs.type.intValue->asConstant()) {
          if (*c > 0)
            value = lhs.type.intValue->floorDiv(*c);
        } else if (currentModel) {
          // `embed_dim / num_heads`: exact, checked at instantiation.
          value = divideDims(*currentModel, *lhs.type.intValue, *rhs.type.intValue, b.range);
        }
      }
      v.type = Type::integer(value);
      return v;
    }
    v.type = Type::floating();
    return v;
  }

  // At least one tensor: dtypes, then devices, then shapes.
  const Value &t = lhs.type.isTensor() ? lhs : rhs;
  const Value &other = lhs.type.isTensor() ? rhs : lhs;
  ast::DType dtype = t.type.dtype;
  if (other.type.isTensor()) {
    if (!requireSameDType(op, lhs, rhs))
      return fail(b, {&lhs, &rhs});
  } else if (!checkScalarOperand(op, t, other)) {
    return fail(b, {&lhs, &rhs});
  }
  if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or) {
    if (dtype != ast::DType::Bool) {
      diags_.report(DiagId::ExpectedBoolMask, t.range(), op, typeStr(t));
      return fail(b, {&lhs, &rhs});
    }
  } else if (dtype == ast::DType::Bool && isArithmetic(b.op)) {
    diags_.report(DiagId::TypeMismatch, t.range(), "a numeric tensor", typeStr(t))
        .primary("`" + op.str() + "` does not apply to bool tensors");
    return fail(b, {&lhs, &rhs});
  }
  std::optional<Device> device = unifyDevices(op, b.opRange, b, {&lhs, &rhs});
  if (!device)
    return fail(b, {&lhs, &rhs});
  Shape shape = t.type.shape;
  if (other.type.isTensor()) {
    std::optional<Shape> s = broadcast(lhs.type.shape, rhs.type.shape);
    if (!s) {
      diags_
          .report(DiagId::BroadcastMismatch, b.opRange, lhs.type.shape.str(), rhs.type.shape.str(),
                  op)
          .primary(rhs.range(), typeStr(rhs))
          .label(lhs.range(), typeStr(lhs));
      return fail(b, {&lhs, &rhs});
    }
    shape = *s;
  }
  Value v;
  v.type = Type::tensor(isComparison(b.op) ? ast::DType::Bool : dtype, std::move(shape), *device);
  v.origin = originOf(resolve(lhs.type.dev).isVar() && other.type.isTensor() ? rhs : t);
  return v;
}

bool Checker::checkScalarOperand(llvm::StringRef op, const Value &tensor, const Value &scalar) {
  Type::Kind k = scalar.type.kind();
  bool ok = k == Type::Kind::Int || k == Type::Kind::Bool ||
            (k == Type::Kind::Float && ast::isFloating(tensor.type.dtype));
  if (ok)
    return true;
  if (k == Type::Kind::Float) {
    diags_
        .report(DiagId::DTypeMismatch, scalar.range(), "float", ast::dtypeName(tensor.type.dtype),
                op)
        .primary("a float scalar")
        .label(tensor.range(), typeStr(tensor))
        .help("convert the tensor with `cast`", castEdits(*tensor.expr, ast::DType::F32),
              Applicability::MaybeIncorrect);
    return false;
  }
  diags_.report(DiagId::TypeMismatch, scalar.range(), "a number or a tensor", typeStr(scalar))
      .primary("operand of `" + op.str() + "`");
  return false;
}

Value Checker::checkMatmul(const ast::Expr &expr, llvm::StringRef op, const Value &lhs,
                           const Value &rhs) {
  for (const Value *x : {&lhs, &rhs}) {
    if (!x->type.isTensor()) {
      diags_.report(DiagId::ExpectedTensor, x->range(), op, typeStr(*x));
      return fail(expr, {&lhs, &rhs});
    }
  }
  if (!requireSameDType(op, lhs, rhs))
    return fail(expr, {&lhs, &rhs});
  Range opRange = expr.range;
  if (auto *b = dyn_cast<ast::BinaryExpr>(&expr))
    opRange = b->opRange;
  std::optional<Device> device = unifyDevices(op, opRange, expr, {&lhs, &rhs});
  if (!device)
    return fail(expr, {&lhs, &rhs});
  const Shape &a = lhs.type.shape, &b = rhs.type.shape;
  auto rankError = [&](const Value &v) {
    diags_.report(DiagId::RankMismatch, v.range(), op, "1 or more", v.type.rank())
        .primary(typeStr(v));
    return fail(expr, {&lhs, &rhs});
  };
  if (a.dims.empty() && !a.hasPack())
    return rankError(lhs);
  if (b.dims.empty() && !b.hasPack())
    return rankError(rhs);
  if (b.hasPack() && b.dims.size() < 2) {
    diags_.report(DiagId::UnsupportedFeature, rhs.range(),
                  "a right operand of `@` whose last two dims are not both written");
    return fail(expr, {&lhs, &rhs});
  }
  Dim ka = a.dims.back();
  bool bIsVector = b.dims.size() == 1 && !b.hasPack();
  Dim kb = bIsVector ? b.dims.back() : b.dims[b.dims.size() - 2];
  if (ka != kb) {
    diags_.report(DiagId::MatmulInnerMismatch, opRange, ka.str(), kb.str())
        .primary(lhs.range(), typeStr(lhs))
        .label(rhs.range(), typeStr(rhs));
    return fail(expr, {&lhs, &rhs});
  }
  Shape out;
  bool aIsVector = a.dims.size() == 1 && !a.hasPack();
  if (aIsVector && bIsVector) {
    // [k] @ [k] -> []
  } else if (aIsVector) {
    out.pack = b.pack;
    out.dims.append(b.dims.begin(), b.dims.end() - 2);
    out.dims.push_back(b.dims.back());
  } else if (bIsVector) {
    out.pack = a.pack;
    out.dims.append(a.dims.begin(), a.dims.end() - 1);
  } else {
    // Batch dims broadcast; a packed lhs with one written dim is [..., k].
    Shape batchA, batchB;
    batchA.pack = a.pack;
    batchB.pack = b.pack;
    if (a.dims.size() >= 2)
      batchA.dims.append(a.dims.begin(), a.dims.end() - 2);
    batchB.dims.append(b.dims.begin(), b.dims.end() - 2);
    std::optional<Shape> batch = broadcast(batchA, batchB);
    if (!batch) {
      diags_.report(DiagId::BroadcastMismatch, opRange, batchA.str(), batchB.str(), op)
          .primary(rhs.range(), typeStr(rhs))
          .label(lhs.range(), typeStr(lhs));
      return fail(expr, {&lhs, &rhs});
    }
    out = *batch;
    if (a.dims.size() >= 2)
      out.dims.push_back(a.dims[a.dims.size() - 2]);
    out.dims.push_back(b.dims.back());
  }
  Value v;
  v.type = Type::tensor(lhs.type.dtype, std::move(out), *device);
  v.origin = originOf(resolve(lhs.type.dev).isVar() ? rhs : lhs);
  return v;
}

Value Checker::checkPlacement(const ast::BinaryExpr &expr) {
  Value target = checkExpr(*expr.rhs);
  Range suffix{expr.lhs->range.end, expr.rhs->range.end};
  if (target.type.isError()) {
    checkExpr(*expr.lhs);
    return record(expr, errorValue());
  }
  Device dev = target.type.dev;
  program_.infoFor(&expr).placement = true;
  if (auto *call = dyn_cast<ast::CallExpr>(expr.lhs.get())) {
    if (auto *callee = dyn_cast<ast::NameExpr>(call->callee.get())) {
      if (isCreationOp(callee->name) &&
          resolveName(*this, callee->name).kind == Resolved::Kind::Builtin) {
        DeviceOrigin origin;
        origin.kind = DeviceOrigin::Kind::Placed;
        origin.range = expr.range;
        origin.editRange = suffix;
        std::string created = shortText(call->range);
        origin.subject = program_.save(created);
        origin.message = program_.save("`" + created + "` is placed on " + dev.str() + " here");
        record(*callee, Value{Type::builtin(callee->name), {}, callee, {}});
        Value v = checkBuiltinCall(*call, callee->name, nullptr, &dev, &origin);
        record(*call, v);
        return record(expr, v);
      }
    }
  }
  Value lhs = checkExpr(*expr.lhs);
  if (lhs.type.isError())
    return record(expr, errorValue());
  auto diag = diags_.report(DiagId::PlacementOfNonCreated,
                            Range{expr.opRange.begin, expr.rhs->range.end}, dev.str());
  diag.primary("places an existing value")
      .label(expr.lhs->range, typeStr(lhs))
      .note("`@ device` only chooses where a creation op (zeros, ones, full, randn, arange, "
            "eye) allocates; an existing tensor is moved with `.to`");
  if (lhs.type.isTensor()) {
    std::vector<Edit> edits = toEdits(*expr.lhs, dev);
    edits.insert(edits.begin(), Edit{suffix, ""});
    // Keep edits ordered and non-overlapping: delete the suffix, then append.
    std::vector<Edit> ordered;
    for (const Edit &e : edits)
      if (e.range.begin.getPointer() < suffix.begin.getPointer())
        ordered.push_back(e);
    ordered.push_back(Edit{suffix, isPostfixSafe(*expr.lhs) ? ".to(" + dev.str() + ")"
                                                            : ").to(" + dev.str() + ")"});
    diag.help("move it with `.to`", ordered);
  }
  return record(expr, fail(expr, {&lhs}));
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
      if (const SubmodelInfo *s = inst.model->findSubmodel(m)) {
        Substitution subst = substitutionFor(inst);
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
    diags_.report(DiagId::UnknownMember, member->member.range, typeStr(base), m)
        .label(member->base->range, typeStr(base));
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
                        [&](const ValueParamInfo &p) { return p.atom == a; });
  };
  llvm::SmallVector<std::pair<AtomId, Dim>, 8> locals;
  bool packBound = false;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const Type &param = fn.params[i].type;
    const Type &arg = bound[i].value.type;
    if (!param.isTensor() || !arg.isTensor())
      continue;
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
    Type expected = subst.apply(param.type);
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
      diags_
          .report(DiagId::DTypeMismatch, arg.range(), ast::dtypeName(arg.type.dtype),
                  ast::dtypeName(expected.dtype), calleeText)
          .primary(typeStr(arg))
          .note("parameter `" + param.name + "` of `" + calleeText.str() + "` is " + expected.str())
          .help("convert it with `cast`", castEdits(*arg.expr, expected.dtype));
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
    if (!expected.dev.isVar())
      diag.help((repin ? "or move the argument to " : "move the argument to ") + expected.dev.str(),
                toEdits(*arg.expr, expected.dev),
                repin || returnsElsewhere ? Applicability::MaybeIncorrect
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

//===----------------------------------------------------------------------===//
// Members and indexing
//===----------------------------------------------------------------------===//

Value Checker::checkMember(const ast::MemberExpr &expr) {
  llvm::StringRef m = expr.member.name;
  if (auto *base = dyn_cast<ast::NameExpr>(expr.base.get())) {
    Resolved r = resolveName(*this, base->name);
    if (r.kind == Resolved::Kind::Import) {
      record(*base, r.value, {}, base->name);
      if (r.value.type.isError())
        return record(expr, errorValue());
      diags_.report(DiagId::TypeMismatch, expr.range, "a value", "model `" + m.str() + "`")
          .primary("a model is instantiated in the model body: `name = " + expr.range.text().str() +
                   "(...)`");
      return record(expr, errorValue());
    }
  }
  Value base = checkExpr(*expr.base);
  if (base.type.isError())
    return record(expr, errorValue());
  if (base.type.kind() == Type::Kind::Model && base.type.instance) {
    const ModelInstance &inst = *base.type.instance;
    Substitution subst = substitutionFor(inst);
    const ast::Expr *built = builtAt(*this, *expr.base);
    if (const StateInfo *s = inst.model->findState(m);
        s && !requirePresent(s->presence, shortText(expr.range), expr.range, &subst, built))
      return record(expr, errorValue(), s->decl->name.range, s->name, s->decl->doc);
    if (const SubmodelInfo *s = inst.model->findSubmodel(m);
        s && !requirePresent(s->presence, shortText(expr.range), expr.range, &subst, built))
      return record(expr, errorValue(), s->decl->name.range, s->name, s->decl->doc);
    if (const StateInfo *s = inst.model->findState(m)) {
      Value v;
      v.type = subst.apply(s->type);
      v.origin = base.origin; // the submodel's placement
      return record(expr, v, s->decl->name.range, s->name, s->decl->doc);
    }
    if (const SubmodelInfo *s = inst.model->findSubmodel(m)) {
      Value v;
      v.type = subst.apply(s->type);
      v.origin = base.origin;
      return record(expr, v, s->decl->name.range, s->name, s->decl->doc);
    }
    diags_.report(DiagId::UnknownMember, expr.member.range, inst.str(), m);
    return record(expr, errorValue());
  }
  if (base.type.isTensor() && m == "T") {
    if (base.type.rank() != 2 || base.type.shape.hasPack()) {
      diags_.report(DiagId::RankMismatch, expr.range, ".T", 2, base.type.rank())
          .primary(typeStr(base))
          .help("use `transpose(x, d0, d1)` for other ranks", {}, Applicability::HasPlaceholders);
      return record(expr, fail(expr, {&base}));
    }
    Value v = base;
    std::swap(v.type.shape.dims[0], v.type.shape.dims[1]);
    return record(expr, v);
  }
  diags_.report(DiagId::UnknownMember, expr.member.range, typeStr(base), m)
      .label(expr.base->range, typeStr(base));
  return record(expr, fail(expr, {&base}));
}

Value Checker::checkIndex(const ast::IndexExpr &expr) {
  Value base = checkExpr(*expr.base);
  // Check every subscript expression first.
  struct Sub {
    const ast::Slice *slice;
    Value index, begin, end, step;
  };
  std::vector<Sub> subs;
  bool ok = !base.type.isError();
  for (const ast::Slice &s : expr.subscripts) {
    Sub sub{&s, {}, {}, {}, {}};
    auto check = [&](const ast::ExprPtr &e, Value &out) {
      if (!e)
        return;
      out = checkExpr(*e);
      ok &= !out.type.isError();
    };
    check(s.index, sub.index);
    check(s.begin, sub.begin);
    check(s.end, sub.end);
    check(s.step, sub.step);
    subs.push_back(std::move(sub));
  }
  if (!ok)
    return record(expr, fail(expr, {&base}));

  // `chunk(x, 3, dim: 1)[0]`: one tensor of a list.
  if (base.type.kind() == Type::Kind::List && base.type.elements) {
    std::optional<int64_t> i;
    if (subs.size() == 1 && !subs[0].slice->isSlice &&
        subs[0].index.type.kind() == Type::Kind::Int && subs[0].index.type.intValue)
      i = subs[0].index.type.intValue->asConstant();
    if (!i) {
      diags_.report(DiagId::ExpectedConstant, expr.range, "list index", "a non-constant index")
          .primary("a list is indexed by one constant int");
      return record(expr, errorValue());
    }
    int64_t n = int64_t(base.type.elements->size());
    if (*i < -n || *i >= n) {
      diags_.report(DiagId::ListIndexOutOfRange, subs[0].slice->range, *i, n)
          .primary("valid indices are " + std::to_string(-n) + " to " + std::to_string(n - 1))
          .label(expr.base->range, typeStr(base));
      return record(expr, errorValue());
    }
    Value v = base;
    v.type = (*base.type.elements)[size_t(*i < 0 ? *i + n : *i)];
    return record(expr, v);
  }
  if (base.type.kind() == Type::Kind::ModelList && base.type.instances) {
    std::optional<int64_t> i;
    if (subs.size() == 1 && !subs[0].slice->isSlice &&
        subs[0].index.type.kind() == Type::Kind::Int && subs[0].index.type.intValue)
      i = subs[0].index.type.intValue->asConstant();
    if (!i) {
      diags_.report(DiagId::ExpectedConstant, expr.range, "submodel index", "a non-constant index");
      return record(expr, errorValue());
    }
    if (base.type.repeat) {
      // `[layer for _ in 0..n]` with `n` not known here: every layer is the
      // same instance; the index is checked against `n` per instance.
      if (*i < 0) {
        diags_.report(DiagId::UnsupportedFeature, subs[0].slice->range,
                      "a negative index into a list whose length is `" + base.type.repeat->str() +
                          "`");
        return record(expr, errorValue());
      }
      Value v;
      v.type = Type::model(base.type.instances->front());
      v.origin = base.origin;
      return record(expr, v);
    }
    int64_t n = int64_t(base.type.instances->size());
    if (*i < -n || *i >= n) {
      diags_.report(DiagId::DimOutOfRange, subs[0].slice->range, *i, n)
          .primary("this list has " + std::to_string(n) + " submodels");
      return record(expr, errorValue());
    }
    Value v;
    v.type = Type::model((*base.type.instances)[size_t(*i < 0 ? *i + n : *i)]);
    v.origin = base.origin;
    return record(expr, v);
  }
  if (!base.type.isTensor()) {
    diags_.report(DiagId::ExpectedTensor, expr.base->range, "[]", typeStr(base));
    return record(expr, errorValue());
  }
  const Shape &shape = base.type.shape;
  if (shape.hasPack()) {
    diags_.report(DiagId::UnsupportedFeature, expr.range, "indexing a tensor with `...` dims");
    return record(expr, fail(expr, {&base}));
  }
  if (subs.size() > shape.dims.size()) {
    diags_
        .report(DiagId::DimOutOfRange, subs[shape.dims.size()].slice->range,
                int64_t(shape.dims.size()), shape.dims.size())
        .primary("too many subscripts")
        .label(expr.base->range, typeStr(base));
    return record(expr, fail(expr, {&base}));
  }
  auto intOf = [&](const Value &v, Range at) -> std::optional<Dim> {
    if (v.type.kind() != Type::Kind::Int) {
      diags_.report(DiagId::TypeMismatch, at, "int", typeStr(v))
          .primary("tensor subscripts must be ints or slices");
      return std::nullopt;
    }
    if (!v.type.intValue)
      diags_.report(DiagId::ExpectedConstant, at, "subscript", "a value known only at run time");
    return v.type.intValue;
  };
  Shape out;
  for (size_t d = 0; d < subs.size(); ++d) {
    const Sub &sub = subs[d];
    Dim size = shape.dims[d];
    if (!sub.slice->isSlice) {
      if (sub.index.type.isTensor()) {
        diags_.report(DiagId::UnsupportedFeature, sub.slice->range,
                      "indexing with a tensor (use `gather` or `index_select`)");
        return record(expr, fail(expr, {&base}));
      }
      if (!intOf(sub.index, sub.slice->range))
        return record(expr, fail(expr, {&base}));
      continue; // the dim disappears
    }
    auto bound = [&](const ast::ExprPtr &e, const Value &v, Dim dflt) -> std::optional<Dim> {
      if (!e)
        return dflt;
      std::optional<Dim> x = intOf(v, e->range);
      if (!x)
        return std::nullopt;
      if (std::optional<int64_t> c = x->asConstant(); c && *c < 0)
        return size + *x;
      return x;
    };
    std::optional<Dim> b = bound(sub.slice->begin, sub.begin, Dim());
    std::optional<Dim> e = bound(sub.slice->end, sub.end, size);
    std::optional<Dim> s = bound(sub.slice->step, sub.step, Dim::constant(1));
    if (!b || !e || !s)
      return record(expr, fail(expr, {&base}));
    std::optional<int64_t> step = s->asConstant();
    if (!step || *step <= 0) {
      diags_.report(DiagId::ExpectedConstant, sub.slice->step->range, "slice step",
                    "a step that is not a positive constant");
      return record(expr, fail(expr, {&base}));
    }
    std::optional<int64_t> n = size.asConstant(), lo = b->asConstant(), hi = e->asConstant();
    if (n && lo && hi) {
      // Python clamps the bounds into the dim: x[:100] of 10 has 10.
      int64_t from = std::clamp<int64_t>(*lo, 0, *n), to = std::clamp<int64_t>(*hi, 0, *n);
      out.dims.push_back(Dim::constant(to > from ? (to - from + *step - 1) / *step : 0));
      continue;
    }
    out.dims.push_back((*e - *b + Dim::constant(*step - 1)).floorDiv(*step));
  }
  out.dims.append(shape.dims.begin() + subs.size(), shape.dims.end());
  Value v = base;
  v.type.shape = std::move(out);
  return record(expr, v);
}
