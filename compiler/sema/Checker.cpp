//===- Checker.cpp - Models, declarations, statements, device reports -----===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <functional>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Phases
//===----------------------------------------------------------------------===//

void Checker::addModule(const ast::Module &module, llvm::StringMap<const ast::Module *> imports) {
  auto scope = std::make_unique<ModuleScope>();
  scope->module = &module;
  scope->imports = std::move(imports);
  scopeByModule_[&module] = scope.get();
  modules_.push_back(std::move(scope));
}

const Checker::ModuleScope *Checker::scopeOf(const ast::Module *module) const {
  return scopeByModule_.lookup(module);
}

void Checker::checkAll() {
  for (auto &scope : modules_)
    declareModels(*scope);
  for (auto &m : program_.models)
    typeSignatures(*m);
  for (auto &m : program_.models)
    resolveSubmodels(*m);
  for (auto &m : program_.models)
    checkBodies(*m);
  for (auto &m : program_.models)
    checkSubmodelArguments(*m);
}

void Checker::checkSubmodelArguments(const ModelInfo &model) {
  for (const SubmodelInfo &sub : model.submodels) {
    auto *list = sub.decl ? llvm::dyn_cast<ast::ListExpr>(sub.decl->init.get()) : nullptr;
    llvm::SmallVector<std::pair<const ModelInstance *, Range>, 4> insts;
    if (sub.type.kind() == Type::Kind::Model && sub.type.instance)
      insts.push_back({sub.type.instance.get(), sub.decl->init->range});
    else if (sub.type.kind() == Type::Kind::ModelList && sub.type.instances)
      for (size_t i = 0; i < sub.type.instances->size(); ++i)
        insts.push_back({(*sub.type.instances)[i].get(), list && i < list->elements.size()
                                                             ? list->elements[i]->range
                                                             : sub.decl->init->range});
    for (const auto &[inst, range] : insts) {
      if (!inst->model)
        continue;
      // Divisions the callee needs exact, with these arguments.
      Substitution subst = substitutionFor(*inst);
      for (const ExactDivision &d : requiredExactDivisions(*inst->model)) {
        std::optional<std::string> detail =
            inexactDivisionDetail(d, subst.apply(d.numerator), subst.apply(d.divisor));
        if (!detail)
          continue;
        diags_
            .report(DiagId::InexactDivision, range, d.numerator.exactQuotient(d.divisor).str(),
                    inst->model->name)
            .primary(*detail)
            .note("`" + inst->model->name + "` uses `" +
                  d.numerator.exactQuotient(d.divisor).str() +
                  "` as a dimension, which needs the division to be exact")
            .help("give `" + inst->model->name + "` arguments that divide exactly", {},
                  Applicability::HasPlaceholders);
        break;
      }
      // The callee's asserts (and its submodels'), with these arguments.
      std::vector<Requirement> required = requiredConditions(*inst->model);
      if (const Requirement *r = firstUnmet(required, subst))
        reportUnmetAssertion(*r, range, range.text());
    }
  }
}

void Checker::declareModels(ModuleScope &scope) {
  for (const ast::ModelDecl &decl : scope.module->models) {
    auto [it, inserted] = scope.models.try_emplace(decl.name.name, nullptr);
    if (!inserted) {
      diags_.report(DiagId::DuplicateDefinition, decl.name.range, decl.name.name)
          .primary("redefined here")
          .label(it->second->decl->name.range, "first defined here");
      continue;
    }
    auto info = std::make_unique<ModelInfo>();
    info->name = decl.name.name;
    info->decl = &decl;
    info->module = scope.module;
    llvm::StringSet<> seen;
    for (const ast::DeviceParam &d : decl.deviceParams)
      if (!seen.insert(d.name.name).second)
        diags_.report(DiagId::DuplicateDefinition, d.name.range, d.name.name);
    for (const ast::ValueParam &p : decl.valueParams) {
      if (!seen.insert(p.name.name).second)
        diags_.report(DiagId::DuplicateDefinition, p.name.range, p.name.name);
      ValueParamInfo vp;
      vp.name = p.name.name;
      vp.kind = p.type;
      vp.atom = internSymbol(p.name.name);
      vp.hasDefault = p.defaultValue != nullptr;
      llvm::StringSet<> optionNames;
      for (const ast::Ident &option : p.options) {
        if (!optionNames.insert(option.name).second)
          diags_.report(DiagId::DuplicateDefinition, option.range, "\"" + option.name + "\"");
        vp.options.push_back(option.name);
      }
      if (auto *lit = llvm::dyn_cast_if_present<ast::IntLitExpr>(p.defaultValue.get()))
        vp.defaultInt = lit->value;
      // `padding_idx: int = -1`: a negated literal is a literal too.
      if (auto *neg = llvm::dyn_cast_if_present<ast::UnaryExpr>(p.defaultValue.get());
          neg && neg->op == ast::UnaryOp::Neg)
        if (auto *lit = llvm::dyn_cast<ast::IntLitExpr>(neg->operand.get()))
          vp.defaultInt = -lit->value;
      if (auto *lit = llvm::dyn_cast_if_present<ast::BoolLitExpr>(p.defaultValue.get());
          lit && p.type == ast::ScalarKind::Bool)
        vp.defaultInt = lit->value ? 1 : 0;
      if (auto *lit = llvm::dyn_cast_if_present<ast::StringLitExpr>(p.defaultValue.get())) {
        if (p.type != ast::ScalarKind::Option)
          diags_.report(DiagId::TypeMismatch, lit->range, ast::scalarKindName(p.type), "a string")
              .primary("the default of `" + p.name.name + "`");
        else if (std::optional<int64_t> index = vp.optionIndex(lit->value))
          vp.defaultInt = *index;
        else
          reportUnknownOption(lit->range, lit->value, vp, decl.name.name);
      }
      if (auto *ref = llvm::dyn_cast_if_present<ast::NameExpr>(p.defaultValue.get())) {
        // `stride: int = kernel`: the value of an earlier param of its kind.
        auto earlier = llvm::find_if(info->valueParams,
                                     [&](const ValueParamInfo &e) { return e.name == ref->name; });
        if (earlier == info->valueParams.end()) {
          diags_.report(DiagId::UnknownName, ref->range, ref->name)
              .primary("a default can name only an earlier parameter of `" + decl.name.name + "`");
        } else if ((earlier->kind != p.type &&
                    !(p.type == ast::ScalarKind::Float && earlier->kind == ast::ScalarKind::Int)) ||
                   earlier->options != vp.options) {
          diags_
              .report(DiagId::TypeMismatch, ref->range, ast::scalarKindName(p.type),
                      ast::scalarKindName(earlier->kind))
              .primary("the default of `" + p.name.name + "`");
        } else {
          vp.defaultParam = unsigned(earlier - info->valueParams.begin());
        }
      }
      info->valueParams.push_back(std::move(vp));
      std::string typeText = p.type == ast::ScalarKind::Option ? p.typeRange.text().str()
                                                               : ast::scalarKindName(p.type).str();
      program_.decls.push_back({p.name.range, p.name.name, typeText, {}, {}, {}});
    }
    it->second = &program_.addModel(std::move(info));
    program_.decls.push_back(
        {decl.name.range, decl.name.name, "model " + decl.name.name, {}, decl.doc, {}});
  }
}

std::optional<Device> Checker::deviceFromExpr(ModelInfo &model, const ast::DeviceExpr &dev) {
  switch (dev.kind) {
  case ast::DeviceExpr::Kind::Cpu:
    return Device::cpu();
  case ast::DeviceExpr::Kind::Cuda:
    if (!Device::isValidCudaIndex(dev.cudaIndex)) {
      diags_.report(DiagId::InvalidDevice, dev.range, dev.range.text())
          .primary("device indices range from 0 to 127")
          .note("a CUDA device index is an 8-bit number, as in PyTorch");
      return std::nullopt;
    }
    return Device::cuda(dev.cudaIndex);
  case ast::DeviceExpr::Kind::Var:
    for (size_t i = 0; i < model.decl->deviceParams.size(); ++i)
      if (model.decl->deviceParams[i].name.name == dev.varName)
        return Device::param(model.decl, unsigned(i));
    diags_.report(DiagId::UnknownDeviceVar, dev.range, dev.varName)
        .primary("not a device parameter of `" + model.name + "`")
        .help("declare it on the model: `model " + model.name + "<" + dev.varName + ": device>`",
              {}, Applicability::HasPlaceholders);
    return std::nullopt;
  }
  return std::nullopt;
}

Type Checker::withExactQuotients(const ModelInfo &model, Type type) {
  // Every instantiation makes these divisions exact (E0409), so the floor of
  // the same quotient (a conv's (img - patch) / patch + 1) is that size.
  if (model.exactDivisions.empty())
    return type;
  auto exact = [&](AtomId a) -> std::optional<Dim> {
    std::optional<std::pair<Dim, Dim>> parts = floorQuotientParts(a);
    if (!parts)
      return std::nullopt;
    for (const ExactDivision &e : model.exactDivisions)
      if (e.numerator == parts->first && e.divisor == parts->second)
        return e.numerator.exactQuotient(e.divisor);
    return std::nullopt;
  };
  for (Dim &d : type.shape.dims)
    d = d.substitute(exact);
  return type;
}

Dim Checker::divideDims(ModelInfo &model, Dim numerator, Dim divisor, Range range) {
  // Over value params only, with a symbolic divisor: an exact division
  // (`embed_dim / num_heads`), checked when the model is instantiated.
  auto overValueParams = [&](Dim d) {
    for (const Term &t : d.terms())
      for (AtomId a : t.atoms)
        if (!exactQuotientParts(a) &&
            llvm::none_of(model.valueParams, [&](const ValueParamInfo &p) { return p.atom == a; }))
          return false;
    return true;
  };
  if (divisor.asConstant() || !overValueParams(numerator) || !overValueParams(divisor))
    return numerator.floorDiv(divisor);
  if (std::optional<Dim> q = numerator.exactDiv(divisor))
    return *q;
  if (llvm::none_of(model.exactDivisions, [&](const ExactDivision &e) {
        return e.numerator == numerator && e.divisor == divisor;
      }))
    model.exactDivisions.push_back({numerator, divisor, range});
  return numerator.exactQuotient(divisor);
}

std::optional<Dim> Checker::dimFromExpr(ModelInfo &model, const ast::DimExpr &dim, bool allowLocal,
                                        bool &hasPack) {
  switch (dim.kind) {
  case ast::DimExpr::Kind::Int:
    return Dim::constant(dim.value);
  case ast::DimExpr::Kind::Ellipsis:
    hasPack = true;
    return std::nullopt;
  case ast::DimExpr::Kind::Name: {
    for (const ValueParamInfo &p : model.valueParams) {
      if (p.name != dim.name)
        continue;
      if (p.kind != ast::ScalarKind::Int) {
        diags_.report(DiagId::TypeMismatch, dim.range, "int", ast::scalarKindName(p.kind))
            .primary("a dimension must be an `int`");
        return std::nullopt;
      }
      return Dim::atom(p.atom);
    }
    if (fn_) {
      auto it = fn_->sigSymbols.find(dim.name);
      if (it != fn_->sigSymbols.end())
        return it->second;
    }
    if (!allowLocal) {
      diags_.report(DiagId::UnknownName, dim.range, dim.name)
          .primary("not a value parameter of `" + model.name + "`");
      return std::nullopt;
    }
    return Dim::symbol(dim.name);
  }
  case ast::DimExpr::Kind::Binary: {
    bool lhsPack = false, rhsPack = false;
    std::optional<Dim> l = dimFromExpr(model, *dim.lhs, allowLocal, lhsPack);
    std::optional<Dim> r = dimFromExpr(model, *dim.rhs, allowLocal, rhsPack);
    if (lhsPack || rhsPack) {
      diags_.report(DiagId::UnsupportedFeature, dim.range, "arithmetic on `...`");
      return std::nullopt;
    }
    if (!l || !r)
      return std::nullopt;
    switch (dim.op) {
    case '+':
      return *l + *r;
    case '-':
      return *l - *r;
    case '*':
      return *l * *r;
    case '/':
      if (std::optional<int64_t> c = r->asConstant(); c && *c <= 0) {
        diags_.report(DiagId::ExpectedConstant, dim.rhs->range, "divisor", r->str())
            .primary("a dimension can only be divided by a positive size");
        return std::nullopt;
      }
      return divideDims(model, *l, *r, dim.range);
    }
    return std::nullopt;
  }
  }
  return std::nullopt;
}

Type Checker::typeFromExpr(ModelInfo &model, const ast::TypeExpr &type, bool allowLocalDims,
                           DeviceOrigin *origin, llvm::StringRef subject) {
  if (type.kind == ast::TypeExpr::Kind::Tuple) {
    std::vector<Type> elements;
    bool ok = true;
    for (const std::unique_ptr<ast::TypeExpr> &element : type.elements) {
      DeviceOrigin ignored;
      elements.push_back(typeFromExpr(model, *element, allowLocalDims, &ignored, subject));
      ok &= !elements.back().isError();
    }
    return ok ? Type::tuple(std::move(elements)) : Type::error();
  }
  if (type.kind == ast::TypeExpr::Kind::Scalar) {
    switch (type.scalar) {
    case ast::ScalarKind::Int:
      return Type::integer();
    case ast::ScalarKind::Float:
      return Type::floating();
    case ast::ScalarKind::Bool:
      return Type::boolean();
    case ast::ScalarKind::Option: // model arguments only; the grammar has no such fn param
      return Type::string();
    }
  }
  Shape shape;
  bool ok = true;
  for (size_t i = 0; i < type.dims.size(); ++i) {
    bool isPack = false;
    std::optional<Dim> d = dimFromExpr(model, *type.dims[i], allowLocalDims, isPack);
    if (isPack) {
      if (i != 0 || shape.hasPack()) {
        diags_.report(DiagId::UnsupportedFeature, type.dims[i]->range,
                      "`...` anywhere but as the first dimension");
        ok = false;
      }
      shape.pack = 1;
      continue;
    }
    if (!d)
      ok = false;
    else
      shape.dims.push_back(*d);
  }
  std::optional<Device> device;
  bool explicitDevice = type.device.has_value();
  if (explicitDevice) {
    device = deviceFromExpr(model, *type.device);
  } else if (std::optional<Device> home = model.homeDevice()) {
    device = home;
  } else {
    auto diag = diags_.report(DiagId::NoDeviceForState, type.range, subject, model.name);
    diag.primary("this type names no device")
        .help("make the model device-generic", {{model.decl->name.range.after(), "<D: device>"}},
              Applicability::MaybeIncorrect)
        .help("or give the type an explicit device", {{type.range.after(), " @ cuda:0"}},
              Applicability::HasPlaceholders);
  }
  if (!device || !ok)
    return Type::error();
  if (origin) {
    std::string s = subject.str();
    origin->kind = DeviceOrigin::Kind::Declared;
    if (explicitDevice) {
      origin->range = type.device->range;
      origin->editRange = type.device->range;
      origin->message = program_.save("`" + s + "` is declared on " + device->str() + " here");
    } else {
      origin->range = type.range;
      origin->message = program_.save("`" + s + "` is on the model's device " + device->str() +
                                      " (its type names no device)");
    }
  }
  return Type::tensor(type.dtype, std::move(shape), *device);
}

void Checker::typeSignatures(ModelInfo &model) {
  currentModel = &model;
  checkMemberConditions(model);
  checkAsserts(model);
  for (const ast::StateDecl &decl : model.decl->state) {
    StateInfo s;
    s.name = decl.name.name;
    s.decl = &decl;
    s.isBuffer = decl.kind == ast::StateDecl::Kind::Buffer;
    s.presence = presenceOf(decl.guards);
    if (decl.type && decl.type->kind == ast::TypeExpr::Kind::Scalar) {
      diags_
          .report(DiagId::ExpectedTensor, decl.type->range, decl.name.name, decl.type->range.text())
          .primary("state must be a tensor");
      s.type = Type::error();
    } else if (decl.type) {
      s.type = typeFromExpr(model, *decl.type, /*allowLocalDims=*/false, &s.origin, decl.name.name);
    }
    if (model.findState(s.name) || model.findSubmodel(s.name))
      diags_.report(DiagId::DuplicateDefinition, decl.name.range, decl.name.name);
    program_.decls.push_back({decl.name.range, decl.name.name, {}, s.type, decl.doc, s.origin});
    model.state.push_back(std::move(s));
  }
  for (const ast::FnDecl &decl : model.decl->fns) {
    FnInfo fn;
    fn.name = decl.name.name;
    fn.decl = &decl;
    if (model.findFn(fn.name))
      diags_.report(DiagId::DuplicateDefinition, decl.name.range, decl.name.name);
    std::string sigText;
    llvm::StringSet<> paramNames;
    for (const ast::FnParam &p : decl.params) {
      if (!paramNames.insert(p.name.name).second)
        diags_.report(DiagId::DuplicateDefinition, p.name.range, p.name.name);
      FnParamInfo param;
      param.name = p.name.name;
      if (p.type)
        param.type =
            typeFromExpr(model, *p.type, /*allowLocalDims=*/true, &param.origin, p.name.name);
      if (param.origin.isKnown()) {
        param.origin.kind = DeviceOrigin::Kind::FnParam;
        param.origin.message =
            program_.save("`" + p.name.name + "` is a fn parameter declared on " +
                          param.type.dev.str() + " here");
      }
      fn.valid &= !param.type.isError();
      sigText += (sigText.empty() ? "" : ", ") + p.name.name + ": " + param.type.str();
      fn.params.push_back(std::move(param));
    }
    if (decl.result) {
      DeviceOrigin ignored;
      fn.result = typeFromExpr(model, *decl.result, /*allowLocalDims=*/true, &ignored, "result");
      fn.valid &= !fn.result.isError();
      fn.resultOrigin.kind = DeviceOrigin::Kind::Declared;
      fn.resultOrigin.range = decl.result->range;
      fn.resultOrigin.message =
          program_.save("`" + fn.name + "` is declared to return " + fn.result.str() + " here");
      for (size_t i = 0; i < fn.result.arity(); ++i) {
        const ast::TypeExpr &written = *decl.result->elements[i];
        DeviceOrigin element;
        element.kind = DeviceOrigin::Kind::Declared;
        element.range = written.device ? written.device->range : written.range;
        element.message =
            program_.save("result " + std::to_string(i + 1) + " of `" + fn.name + "` is declared " +
                          (*fn.result.elements)[i].str() + " here");
        fn.resultElementOrigins.push_back(element);
      }
    } else {
      fn.result = Type::voidType();
    }
    std::string sig = "fn " + fn.name + "(" + sigText + ")";
    if (decl.result)
      sig += " -> " + fn.result.str();
    program_.decls.push_back({decl.name.range, decl.name.name, sig, {}, decl.doc, {}});
    model.fns.push_back(std::move(fn));
  }
  currentModel = nullptr;
}

/// How many value arguments an instantiation of `model` must give.
static size_t requiredValueParams(const ModelInfo &model) {
  return size_t(llvm::count_if(model.valueParams, [](const ValueParamInfo &p) {
    return !p.defaultInt && !p.defaultParam && !p.hasDefault;
  }));
}

std::optional<Type> Checker::instanceFromExpr(ModelInfo &model, const ast::Expr &init,
                                              const std::string &name, DeviceOrigin &placement,
                                              bool &pinned) {
  // The callee model and its arguments, from `M(args)`, `nn.M(args)` or
  // `M<dev>(args)`.
  const ast::Module *lookIn = model.module;
  std::optional<ast::Ident> modelIdent;
  const std::vector<ast::Arg> *args = nullptr;
  const std::vector<ast::DeviceExpr> *devices = nullptr;
  Range argsRange;
  std::optional<ast::Ident> moduleAlias;
  if (auto *call = dyn_cast<ast::CallExpr>(&init)) {
    args = &call->args;
    argsRange = call->argsRange;
    if (auto *n = dyn_cast<ast::NameExpr>(call->callee.get())) {
      modelIdent = ast::Ident{n->name, n->range};
    } else if (auto *m = dyn_cast<ast::MemberExpr>(call->callee.get())) {
      if (auto *base = dyn_cast<ast::NameExpr>(m->base.get())) {
        moduleAlias = ast::Ident{base->name, base->range};
        modelIdent = m->member;
      }
    }
  } else if (auto *inst = dyn_cast<ast::InstantiateExpr>(&init)) {
    args = &inst->args;
    argsRange = inst->argsRange;
    modelIdent = inst->model;
    devices = &inst->devices;
    moduleAlias = inst->module;
  }
  if (!modelIdent) {
    diags_.report(DiagId::TypeMismatch, init.range, "a model instantiation", "an expression")
        .primary("a submodel is declared as `name = Model(args)`");
    return std::nullopt;
  }
  const ast::Ident *modelName = &*modelIdent;
  const ModuleScope *scope = scopeOf(model.module);
  if (moduleAlias) {
    auto it = scope->imports.find(moduleAlias->name);
    if (it == scope->imports.end()) {
      diags_.report(DiagId::UnknownName, moduleAlias->range, moduleAlias->name)
          .primary("no import is named `" + moduleAlias->name + "`");
      return std::nullopt;
    }
    lookIn = it->second;
    if (!lookIn)
      return std::nullopt; // the import failed and was reported
  }
  const ModuleScope *calleeScope = scopeOf(lookIn);
  ModelInfo *callee = calleeScope ? calleeScope->models.lookup(modelName->name) : nullptr;
  if (!callee) {
    if (moduleAlias)
      diags_.report(DiagId::UnknownMember, modelName->range, "module `" + moduleAlias->name + "`",
                    modelName->name);
    else
      diags_.report(DiagId::UnknownName, modelName->range, modelName->name)
          .primary("no model is named `" + modelName->name + "`");
    return std::nullopt;
  }
  std::string calleeName = (moduleAlias ? moduleAlias->name + "." : "") + callee->name;
  ExprInfo &initInfo = program_.infoFor(&init);
  initInfo.definition = callee->decl->name.range;
  initInfo.name = callee->name;
  initInfo.doc = callee->decl->doc;

  auto inst = std::make_shared<ModelInstance>();
  inst->model = callee;
  size_t wantDevices = callee->decl->deviceParams.size();
  if (devices) {
    pinned = true;
    if (devices->size() != wantDevices) {
      diags_
          .report(DiagId::WrongArgumentCount, init.range, calleeName + "<...>", wantDevices,
                  devices->size())
          .primary("wrong number of device arguments");
      return std::nullopt;
    }
    for (const ast::DeviceExpr &d : *devices) {
      std::optional<Device> dev = deviceFromExpr(model, d);
      if (!dev)
        return std::nullopt;
      inst->devices.push_back(*dev);
    }
    if (!devices->empty()) {
      placement.kind = DeviceOrigin::Kind::Submodel;
      placement.range = Range::join(devices->front().range, devices->back().range);
      // One device to re-pin: a fix may rewrite it.
      if (devices->size() == 1)
        placement.editRange = placement.range;
      placement.message =
          program_.save("submodel `" + name + "` is pinned to " + inst->devices[0].str() + " here");
    }
  } else if (wantDevices > 0) {
    std::optional<Device> home = model.homeDevice();
    if (!home) {
      diags_.report(DiagId::NoDeviceForState, init.range, name, model.name)
          .primary("`" + callee->name + "` needs a device and `" + model.name + "` has none")
          .help("make the model device-generic", {{model.decl->name.range.after(), "<D: device>"}},
                Applicability::MaybeIncorrect)
          .help("or pin the submodel to a device", {{modelName->range.after(), "<cuda:0>"}},
                Applicability::HasPlaceholders);
      return std::nullopt;
    }
    inst->devices.assign(wantDevices, *home);
    placement.kind = DeviceOrigin::Kind::Submodel;
    placement.range = init.range;
    placement.message = program_.save("submodel `" + name + "` is placed with the model on " +
                                      home->str() + " here");
  }

  // Value arguments: positional, then named.
  std::vector<const ast::Expr *> bound(callee->valueParams.size(), nullptr);
  size_t positional = 0;
  bool ok = true;
  for (const ast::Arg &arg : *args) {
    size_t slot;
    if (arg.name) {
      auto it = llvm::find_if(callee->valueParams,
                              [&](const ValueParamInfo &p) { return p.name == arg.name->name; });
      if (it == callee->valueParams.end()) {
        diags_.report(DiagId::UnknownNamedArgument, arg.name->range, calleeName, arg.name->name);
        ok = false;
        continue;
      }
      slot = size_t(it - callee->valueParams.begin());
    } else {
      slot = positional++;
      if (slot >= bound.size()) {
        if (slot == bound.size())
          reportArgumentCount(arg.range, calleeName, requiredValueParams(*callee), bound.size(),
                              args->size(), modelSignature(calleeName, *callee),
                              "unexpected argument");
        ok = false;
        continue;
      }
    }
    if (bound[slot]) {
      diags_.report(DiagId::DuplicateArgument, arg.range, callee->valueParams[slot].name);
      ok = false;
      continue;
    }
    bound[slot] = arg.value.get();
  }
  for (size_t i = 0; i < bound.size(); ++i) {
    const ValueParamInfo &p = callee->valueParams[i];
    if (!bound[i]) {
      if (p.defaultInt)
        inst->values.push_back(Dim::constant(*p.defaultInt));
      else if (p.defaultParam && *p.defaultParam < inst->values.size())
        inst->values.push_back(inst->values[*p.defaultParam]);
      else if (p.hasDefault && p.kind != ast::ScalarKind::Int)
        inst->values.push_back(std::nullopt);
      else {
        if (ok)
          reportMissingArgument(
              argsRange.isValid() ? argsRange : init.range, calleeName, p.name,
              requiredValueParams(*callee), bound.size(), args->size(),
              llvm::any_of(*args, [](const ast::Arg &a) { return a.name.has_value(); }),
              modelSignature(calleeName, *callee));
        ok = false;
        inst->values.push_back(std::nullopt);
      }
      continue;
    }
    // Arguments are known when the model is built: `bias: bias` passes on
    // the argument `bias`, not the state of that name.
    bool savedNames = compileTimeNames;
    compileTimeNames = true;
    Value v = checkExpr(*bound[i]);
    compileTimeNames = savedNames;
    if (v.type.isError()) {
      ok = false;
      inst->values.push_back(std::nullopt);
      continue;
    }
    bool matches = (p.kind == ast::ScalarKind::Int && v.type.kind() == Type::Kind::Int) ||
                   (p.kind == ast::ScalarKind::Float &&
                    (v.type.kind() == Type::Kind::Float || v.type.kind() == Type::Kind::Int)) ||
                   (p.kind == ast::ScalarKind::Bool && v.type.kind() == Type::Kind::Bool) ||
                   (p.kind == ast::ScalarKind::Option && v.type.kind() == Type::Kind::String);
    if (!matches) {
      diags_
          .report(DiagId::TypeMismatch, bound[i]->range, ast::scalarKindName(p.kind), v.type.str())
          .primary("argument `" + p.name + "` of `" + calleeName + "`");
      ok = false;
      inst->values.push_back(std::nullopt);
      continue;
    }
    if (p.kind == ast::ScalarKind::Option) {
      std::optional<Dim> option = optionArgument(p, calleeName, *bound[i], v);
      ok &= option.has_value();
      inst->values.push_back(option);
      continue;
    }
    if (p.kind == ast::ScalarKind::Bool) {
      inst->values.push_back(v.type.intValue);
      continue;
    }
    if (p.kind == ast::ScalarKind::Int && !v.type.intValue) {
      diags_.report(DiagId::ExpectedConstant, bound[i]->range, p.name,
                    "a value known only at run time");
      ok = false;
    }
    inst->values.push_back(p.kind == ast::ScalarKind::Int ? v.type.intValue : std::nullopt);
  }
  if (!ok)
    return std::nullopt;
  return Type::model(std::move(inst));
}

namespace {

/// Whether `expr` reads the name `name`.
bool mentions(const ast::Expr &expr, llvm::StringRef name) {
  bool found = false;
  ast::forEachSubexpr(expr, [&](const ast::Expr &e) {
    if (auto *n = dyn_cast<ast::NameExpr>(&e); n && n->name == name)
      found = true;
  });
  return found;
}

} // namespace

Type Checker::repeatedSubmodel(ModelInfo &model, const ast::ListExpr &list, SubmodelInfo &sub) {
  const ast::ListExpr::Repeat &repeat = *list.repeat;
  const ast::Expr &element = *list.elements.front();
  if (repeat.var.name != "_" && mentions(element, repeat.var.name)) {
    diags_
        .report(DiagId::UnsupportedFeature, repeat.var.range,
                "building the layers of a repeated list from their index")
        .primary("`" + repeat.var.name + "` is used in the layer")
        .note("every layer of `[layer for _ in a..b]` is built with the same arguments; write "
              "the list out (`[Block(1), Block(2)]`) when they differ");
    return Type::error();
  }
  std::optional<Dim> bounds[2];
  const ast::Expr *boundExprs[2] = {repeat.begin.get(), repeat.end.get()};
  for (int i = 0; i < 2; ++i) {
    Value v = checkExpr(*boundExprs[i]);
    if (v.type.isError())
      return Type::error();
    if (v.type.kind() != Type::Kind::Int || !v.type.intValue) {
      diags_
          .report(DiagId::ExpectedConstant, boundExprs[i]->range, boundExprs[i]->range.text(),
                  typeStr(v))
          .primary(i == 0 ? "the start of the range" : "the end of the range");
      return Type::error();
    }
    bounds[i] = *v.type.intValue;
  }
  DeviceOrigin placement;
  std::optional<Type> t = instanceFromExpr(model, element, sub.name + ".0", placement, sub.pinned);
  if (!t)
    return Type::error();
  sub.placement = placement;
  return Type::repeatedModel(t->instance, *bounds[1] - *bounds[0]);
}

void Checker::resolveSubmodels(ModelInfo &model) {
  currentModel = &model;
  FnContext ctx;
  ctx.model = &model;
  ctx.scopes.emplace_back();
  ctx.home = model.homeDevice();
  fn_ = &ctx;
  for (const ast::SubmodelDecl &decl : model.decl->submodels) {
    SubmodelInfo sub;
    sub.name = decl.name.name;
    sub.decl = &decl;
    sub.presence = presenceOf(decl.guards);
    if (model.findState(sub.name) || model.findSubmodel(sub.name))
      diags_.report(DiagId::DuplicateDefinition, decl.name.range, decl.name.name);
    if (auto *list = dyn_cast<ast::ListExpr>(decl.init.get()); list && list->repeat) {
      sub.type = repeatedSubmodel(model, *list, sub);
    } else if (auto *list = dyn_cast<ast::ListExpr>(decl.init.get())) {
      std::vector<std::shared_ptr<const ModelInstance>> insts;
      bool ok = true;
      for (size_t i = 0; i < list->elements.size(); ++i) {
        DeviceOrigin placement;
        std::optional<Type> t = instanceFromExpr(
            model, *list->elements[i], sub.name + "." + std::to_string(i), placement, sub.pinned);
        if (!t) {
          ok = false;
          continue;
        }
        if (!sub.placement.isKnown())
          sub.placement = placement;
        insts.push_back(t->instance);
      }
      sub.type = ok ? Type::modelList(std::move(insts)) : Type::error();
    } else if (decl.init) {
      std::optional<Type> t =
          instanceFromExpr(model, *decl.init, sub.name, sub.placement, sub.pinned);
      sub.type = t ? *t : Type::error();
    }
    program_.decls.push_back(
        {decl.name.range, decl.name.name, {}, sub.type, decl.doc, sub.placement});
    model.submodels.push_back(std::move(sub));
  }
  fn_ = nullptr;
  currentModel = nullptr;
}

/// The value every element of a state initialiser has when it is a constant
/// fill: `zeros(...)`, `ones(...)`, `full(shape, value)` (a literal value).
static std::optional<double> constantFill(const ast::Expr &init) {
  auto *call = dyn_cast<ast::CallExpr>(&init);
  auto *callee = call ? dyn_cast<ast::NameExpr>(call->callee.get()) : nullptr;
  if (!callee)
    return std::nullopt;
  if (callee->name == "zeros")
    return 0.0;
  if (callee->name == "ones")
    return 1.0;
  if (callee->name != "full")
    return std::nullopt;
  for (size_t i = 0; i < call->args.size(); ++i) {
    const ast::Arg &arg = call->args[i];
    if (arg.name ? arg.name->name != "value" : i != 1)
      continue;
    const ast::Expr *value = arg.value.get();
    bool negative = false;
    if (auto *neg = dyn_cast<ast::UnaryExpr>(value); neg && neg->op == ast::UnaryOp::Neg) {
      negative = true;
      value = neg->operand.get();
    }
    std::optional<double> v;
    if (auto *i = dyn_cast<ast::IntLitExpr>(value))
      v = double(i->value);
    else if (auto *f = dyn_cast<ast::FloatLitExpr>(value))
      v = f->value;
    if (v && negative)
      *v = -*v;
    return v;
  }
  return std::nullopt;
}

void Checker::checkBodies(ModelInfo &model) {
  currentModel = &model;
  // State initialisers are checked like a fn body without parameters.
  for (StateInfo &s : model.state) {
    if (!s.decl->init)
      continue;
    FnContext ctx;
    ctx.model = &model;
    ctx.scopes.emplace_back();
    ctx.home = model.homeDevice();
    fn_ = &ctx;
    Value v = checkExpr(*s.decl->init);
    if (!s.type.isError())
      checkAgainstDeclared(v, s.type, s.origin, s.decl->type->range, "`" + s.name + "`",
                           /*isReturn=*/false);
    finishFn();
    fn_ = nullptr;
    if (!v.type.isError())
      s.fillValue = constantFill(*s.decl->init);
  }
  for (const FnInfo &fn : model.fns)
    checkFn(model, fn);
  currentModel = nullptr;
}

static void collectLocalSymbols(const Type &t, const ModelInfo &model, llvm::StringMap<Dim> &out) {
  if (t.kind() == Type::Kind::Tuple && t.elements)
    for (const Type &element : *t.elements)
      collectLocalSymbols(element, model, out);
  if (!t.isTensor())
    return;
  for (Dim d : t.shape.dims)
    for (const Term &term : d.terms())
      for (AtomId a : term.atoms) {
        bool isParam =
            llvm::any_of(model.valueParams, [&](const ValueParamInfo &p) { return p.atom == a; });
        if (!isParam)
          out.try_emplace(atomName(a), Dim::atom(a));
      }
}

/// The device a model without device parameters mostly lives on: where its
/// first state or submodel is, else its fn's first tensor parameter.
static std::optional<Device> concreteHome(const ModelInfo &model, const FnInfo &fn) {
  for (const StateInfo &s : model.state)
    if (s.type.isTensor())
      return s.type.dev;
  for (const SubmodelInfo &s : model.submodels) {
    if (s.type.kind() == Type::Kind::Model && s.type.instance && !s.type.instance->devices.empty())
      return s.type.instance->devices.front();
    if (s.type.kind() == Type::Kind::ModelList && s.type.instances && !s.type.instances->empty() &&
        !s.type.instances->front()->devices.empty())
      return s.type.instances->front()->devices.front();
  }
  for (const FnParamInfo &p : fn.params)
    if (p.type.isTensor())
      return p.type.dev;
  return std::nullopt;
}

void Checker::checkFn(ModelInfo &model, const FnInfo &fn) {
  FnContext ctx;
  ctx.model = &model;
  ctx.fn = &fn;
  ctx.home = model.homeDevice();
  ctx.scopes.emplace_back();
  fn_ = &ctx;
  inFnBody = true;
  ctx.firstDecl = program_.decls.size();
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const FnParamInfo &p = fn.params[i];
    const ast::FnParam &decl = fn.decl->params[i];
    Local local;
    local.value.type = p.type;
    if (p.type.kind() == Type::Kind::Int)
      local.value.type = Type::integer(Dim::symbol(p.name));
    local.value.origin = p.origin;
    local.declRange = decl.name.range;
    ctx.scopes.back()[p.name] = local;
    collectLocalSymbols(p.type, model, ctx.sigSymbols);
  }
  if (!ctx.home)
    ctx.home = concreteHome(model, fn);
  collectLocalSymbols(fn.result, model, ctx.sigSymbols);
  checkStmts(fn.decl->body);
  if (fn.result.kind() != Type::Kind::Void && !fn.result.isError()) {
    if (!alwaysReturns(fn.decl->body))
      diags_.report(DiagId::MissingReturn, fn.decl->name.range, fn.name, fn.result.str())
          .primary("`" + fn.name + "` declares a result")
          .note("the last statement of the body must be `return <value>`");
  }
  finishFn();
  inFnBody = false;
  fn_ = nullptr;
}

void Checker::finishFn() {
  FnContext &ctx = *fn_;
  for (const DeviceUnifier::Unbound &u : ctx.unifier.unboundClasses()) {
    auto diag = diags_.report(DiagId::CannotInferDevice, u.creation, u.text);
    diag.primary("nothing that uses this tensor decides its device")
        .note("modelc never defaults a created tensor to cpu");
    if (std::optional<std::pair<Range, std::string>> to = transferAfter(u.creation))
      // `zeros([2, f]).to(cuda:0)`: the device belongs to the creation.
      diag.help("create it there: `@ " + to->second + "` instead of `.to(" + to->second + ")`",
                {{to->first, " @ " + to->second}});
    else if (ctx.home)
      diag.help("place it on the model's device", placementEdits(u.creation, ctx.home->str()),
                Applicability::MaybeIncorrect);
    else
      diag.help("place it explicitly", placementEdits(u.creation, "cuda:0"),
                Applicability::HasPlaceholders);
  }
  // Side-table types must not mention variables once the fn is done.
  std::function<void(Type &, DeviceOrigin &)> resolveVar = [&](Type &type, DeviceOrigin &origin) {
    if (type.kind() == Type::Kind::Tuple && type.elements) {
      std::vector<Type> elements = *type.elements;
      for (Type &element : elements) {
        DeviceOrigin ignored;
        resolveVar(element, ignored);
      }
      type = Type::tuple(std::move(elements));
      return;
    }
    if (!type.isTensor() || !type.dev.isVar())
      return;
    if (const DeviceOrigin *o = ctx.unifier.bindingOrigin(type.dev))
      origin = *o;
    type.dev = ctx.unifier.resolve(type.dev);
  };
  for (const ast::Expr *e : ctx.recorded) {
    ExprInfo &info = program_.infoFor(e);
    resolveVar(info.type, info.origin);
  }
  for (size_t i = ctx.firstDecl; i < program_.decls.size(); ++i)
    resolveVar(program_.decls[i].type, program_.decls[i].origin);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Checker::checkStmts(const std::vector<ast::StmtPtr> &body) {
  // What an `if` that returns tells the statements after it ends here.
  size_t facts = fn_->facts.size(), assumed = fn_->assumed.size();
  for (const ast::StmtPtr &s : body)
    if (s)
      checkStmt(*s);
  fn_->facts.resize(facts);
  fn_->assumed.resize(assumed);
}

void Checker::checkStmt(const ast::Stmt &stmt) {
  FnContext &ctx = *fn_;
  switch (stmt.kind()) {
  case ast::Stmt::Kind::Let: {
    auto &let = cast<ast::LetStmt>(stmt);
    letExpr = let.value.get();
    letStmt = &let;
    letName = let.name.name;
    Value v = let.value ? checkExpr(*let.value) : errorValue();
    letExpr = nullptr;
    letStmt = nullptr;
    Local local;
    local.declRange = let.name.range;
    local.isLet = true;
    local.value = v;
    if (let.type) {
      DeviceOrigin declared;
      Type t = underFacts(
          typeFromExpr(*ctx.model, *let.type, /*allowLocalDims=*/true, &declared, let.name.name));
      if (!t.isError()) {
        checkAgainstDeclared(v, t, declared, let.type->range, "`" + let.name.name + "`", false);
        local.value.type = t;
        local.value.origin = declared;
      }
    }
    ctx.scopes.back()[let.name.name] = local;
    program_.decls.push_back(
        {let.name.range, let.name.name, {}, local.value.type, {}, local.value.origin});
    return;
  }
  case ast::Stmt::Kind::LetTuple:
    checkLetTuple(cast<ast::LetTupleStmt>(stmt));
    return;
  case ast::Stmt::Kind::Assign:
    checkAssign(cast<ast::AssignStmt>(stmt));
    return;
  case ast::Stmt::Kind::Return: {
    auto &ret = cast<ast::ReturnStmt>(stmt);
    if (!ctx.fn)
      return;
    const FnInfo &fn = *ctx.fn;
    if (!ret.value) {
      if (fn.result.kind() != Type::Kind::Void && !fn.result.isError())
        diags_.report(DiagId::MissingReturn, stmt.range, fn.name, fn.result.str())
            .primary("returns no value");
      return;
    }
    Value v = checkExpr(*ret.value);
    if (fn.result.kind() == Type::Kind::Void) {
      diags_.report(DiagId::ReturnWithoutResult, ret.value->range, fn.name)
          .help("declare the result type", {{fn.decl->name.range.after(), ""}},
                Applicability::HasPlaceholders);
      return;
    }
    if (fn.result.isError())
      return;
    if (fn.result.kind() == Type::Kind::Tuple || v.type.kind() == Type::Kind::Tuple) {
      checkReturnedTuple(fn, v);
      return;
    }
    DeviceOrigin declared;
    declared.kind = DeviceOrigin::Kind::Declared;
    declared.range =
        fn.decl->result->device ? fn.decl->result->device->range : fn.decl->result->range;
    declared.message =
        program_.save("`" + fn.name + "` is declared to return " + fn.result.str() + " here");
    checkAgainstDeclared(v, underFacts(fn.result), declared, fn.decl->result->range, fn.name, true);
    return;
  }
  case ast::Stmt::Kind::For:
    checkForLoop(cast<ast::ForStmt>(stmt));
    return;
  case ast::Stmt::Kind::If:
    checkIf(cast<ast::IfStmt>(stmt));
    return;
  case ast::Stmt::Kind::Expr: {
    auto &e = cast<ast::ExprStmt>(stmt);
    if (e.expr) {
      Value v = checkExpr(*e.expr);
      warnIfDiscardedTransfer(e, v);
    }
    return;
  }
  }
}

void Checker::warnIfDiscardedTransfer(const ast::ExprStmt &stmt, const Value &result) {
  // PyTorch's `x.to(dev)` as a statement: nn.Module.to moves the module in
  // place, Tensor.to returns a copy and leaves `x` where it was.
  auto *call = dyn_cast<ast::CallExpr>(stmt.expr.get());
  auto *method = call ? dyn_cast<ast::MemberExpr>(call->callee.get()) : nullptr;
  if (!method || method->member.name != "to" || call->args.size() != 1 || !result.type.isTensor())
    return;
  const ExprInfo &receiver = program_.infoFor(method->base.get());
  if (!receiver.type.isTensor())
    return;
  Device from = resolve(receiver.type.dev), to = resolve(result.type.dev);
  if (from == to)
    return; // W0310 says it already
  std::string name = shortText(method->base->range);
  auto diag = diags_.report(DiagId::DiscardedTransfer, call->range, to.str(), name, from.str());
  diag.primary("the moved tensor is dropped here")
      .label(method->base->range, "still " + resolve(receiver.type).str())
      .note("`Tensor.to` returns a moved copy and leaves the tensor where it was (unlike "
            "`nn.Module.to`, which moves the module itself)");
  if (isa<ast::NameExpr>(method->base.get()))
    diag.help("bind the moved tensor to `" + name + "`",
              {{Range{stmt.range.begin, stmt.range.begin}, "let " + name + " = "}});
}

void Checker::checkAgainstDeclared(const Value &value, const Type &declared,
                                   const DeviceOrigin &declaredOrigin, Range declRange,
                                   llvm::StringRef what, bool isReturn) {
  if (value.type.isError() || declared.isError())
    return;
  Range at = value.range();
  // A value that fails its declared type is not also reported as having no
  // inferable device.
  auto poison = [&] {
    if (value.type.isTensor())
      fn_->unifier.poison(value.type.dev);
  };
  if (declared.kind() == Type::Kind::Tuple && value.type.kind() == Type::Kind::Tuple &&
      declared.arity() == value.type.arity()) {
    for (size_t i = 0; i < declared.arity(); ++i)
      checkAgainstDeclared(tupleElement(value, i), (*declared.elements)[i], declaredOrigin,
                           declRange, what, isReturn);
    return;
  }
  if (!declared.isTensor() || !value.type.isTensor()) {
    // (Tuples of the same arity were compared element by element above.)
    bool ok = (declared.kind() == value.type.kind() && declared.kind() != Type::Kind::Tuple) ||
              (declared.kind() == Type::Kind::Float && value.type.kind() == Type::Kind::Int);
    if (!ok) {
      poison();
      diags_.report(DiagId::TypeMismatch, at, declared.str(), typeStr(value))
          .primary("this is " + typeStr(value))
          .label(declRange, "expected because of this type");
    }
    return;
  }
  if (value.type.dtype != declared.dtype) {
    poison();
    diags_
        .report(DiagId::DTypeMismatch, at, ast::dtypeName(value.type.dtype),
                ast::dtypeName(declared.dtype), isReturn ? "return" : what)
        .primary(typeStr(value))
        .label(declRange, "declared " + ast::dtypeName(declared.dtype).str() + " here")
        .help("convert it with `cast`", castEdits(*value.expr, declared.dtype));
    return;
  }
  if (value.type.shape != declared.shape) {
    poison();
    diags_.report(DiagId::ShapeMismatch, at, declared.shape.str(), value.type.shape.str())
        .primary("this has shape " + value.type.shape.str())
        .label(declRange, "expected because of this type");
    return;
  }
  DeviceOrigin binding;
  if (resolve(value.type.dev).isVar()) {
    binding.kind = DeviceOrigin::Kind::Inferred;
    binding.range = declRange;
    binding.subject = program_.save(declRange.text());
    binding.message = program_.save("the device " + declared.dev.str() + " of `" +
                                    fn_->unifier.creationText(resolve(value.type.dev)).str() +
                                    "` was inferred from the type of " + what.str() + " here");
  }
  if (fn_->unifier.unify(value.type.dev, declared.dev, binding))
    return;
  Device actual = resolve(value.type.dev);
  DeviceOrigin valueOrigin = originOf(value);
  if (isReturn) {
    auto diag = diags_.report(DiagId::ReturnDeviceMismatch, at, actual.str(), what, declared.str());
    diag.primary(typeStr(value)).label(declaredOrigin.range, "declared on " + declared.dev.str());
    if (valueOrigin.isKnown())
      diag.note(valueOrigin.message.str(), valueOrigin.range);
    diag.help("move the result to " + declared.dev.str(), toEdits(*value.expr, declared.dev));
    return;
  }
  if (valueOrigin.kind == DeviceOrigin::Kind::Placed) {
    diags_
        .report(DiagId::PlacementConflict, valueOrigin.range, valueOrigin.subject, actual.str(),
                declared.dev.str())
        .primary("placed on " + actual.str())
        .label(declRange, what.str() + " is declared on " + declared.dev.str())
        .help("remove the placement; the device is then inferred", {{valueOrigin.editRange, ""}});
    return;
  }
  auto diag = diags_.report(DiagId::TypeMismatch, at, declared.str(), typeStr(value));
  diag.primary("this is on " + actual.str()).label(declRange, "expected because of this type");
  if (valueOrigin.isKnown())
    diag.note(valueOrigin.message.str(), valueOrigin.range);
  diag.help("move it to " + declared.dev.str(), toEdits(*value.expr, declared.dev));
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

Type Checker::resolve(const Type &t) {
  if (!t.isTensor() || !t.dev.isVar())
    return t;
  Type r = t;
  r.dev = resolve(t.dev);
  return r;
}

DeviceOrigin Checker::originOf(const Value &v) {
  if (fn_ && v.type.isTensor() && v.type.dev.isVar())
    if (const DeviceOrigin *o = fn_->unifier.bindingOrigin(v.type.dev))
      return *o;
  return v.origin;
}

std::string Checker::shortText(Range r) const {
  llvm::StringRef t = r.text();
  if (t.size() <= 40 && !t.contains('\n'))
    return t.str();
  size_t cut = std::min<size_t>(t.find('\n'), 37);
  return t.take_front(cut).rtrim().str() + "...";
}

bool Checker::isPostfixSafe(const ast::Expr &e) {
  switch (e.kind()) {
  case ast::Expr::Kind::Unary:
  case ast::Expr::Kind::Binary:
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
    return false;
  default:
    return true;
  }
}

std::vector<Edit> Checker::toEdits(const ast::Expr &operand, Device target) {
  std::string to = ".to(" + target.str() + ")";
  if (isPostfixSafe(operand))
    return {{operand.range.after(), to}};
  return {{Range{operand.range.begin, operand.range.begin}, "("},
          {operand.range.after(), ")" + to}};
}

/// The character after `r`'s trailing blanks, or before its leading ones.
static char nextChar(Range r) {
  const char *p = r.end.getPointer();
  while (*p == ' ' || *p == '\t')
    ++p;
  return p[0] == '/' && p[1] == '/' ? '\n' : *p;
}

std::vector<Edit> Checker::placementEdits(Range creation, llvm::StringRef device) {
  std::string at = " @ " + device.str();
  // Bare only where it stands alone: `let t = zeros([n])`, `f(zeros([n]), x)`;
  // `2.0 * zeros([n]) @ D` would place the product.
  const char *floor = fn_ && fn_->model && fn_->model->decl
                          ? fn_->model->decl->range.begin.getPointer()
                          : creation.begin.getPointer();
  llvm::StringRef before = llvm::StringRef(floor, creation.begin.getPointer() - floor).rtrim(" \t");
  bool aloneBefore = before.empty() || llvm::StringRef("=(,[{\n").contains(before.back()) ||
                     before.ends_with("return");
  bool aloneAfter =
      llvm::StringRef(")],}\n\r").contains(nextChar(creation)) || nextChar(creation) == '\0';
  if (aloneBefore && aloneAfter)
    return {{creation.after(), at}};
  return {{Range{creation.begin, creation.begin}, "("}, {creation.after(), at + ")"}};
}

std::optional<std::pair<Range, std::string>> Checker::transferAfter(Range creation) {
  llvm::StringRef rest(creation.end.getPointer());
  if (!rest.starts_with(".to("))
    return std::nullopt;
  int depth = 0;
  for (size_t i = 3; i < rest.size() && rest[i] != '\n'; ++i) {
    if (rest[i] == '(')
      ++depth;
    else if (rest[i] == ')' && --depth == 0) {
      llvm::StringRef device = rest.slice(4, i).trim();
      if (device.empty() || device.contains(','))
        return std::nullopt;
      return std::make_pair(
          Range{creation.end, llvm::SMLoc::getFromPointer(creation.end.getPointer() + i + 1)},
          device.str());
    }
  }
  return std::nullopt;
}

std::vector<Edit> Checker::castEdits(const ast::Expr &operand, ast::DType target) {
  return {{Range{operand.range.begin, operand.range.begin}, "cast("},
          {operand.range.after(), ", " + ast::dtypeName(target).str() + ")"}};
}

Value Checker::fail(const ast::Expr &expr, llvm::ArrayRef<const Value *> operands) {
  if (fn_)
    for (const Value *v : operands)
      if (v && v->type.isTensor())
        fn_->unifier.poison(v->type.dev);
  return errorValue(&expr);
}

std::optional<Device> Checker::unifyDevices(llvm::StringRef op, Range opRange,
                                            const ast::Expr &whole,
                                            llvm::ArrayRef<const Value *> operands) {
  const Value *first = nullptr;
  for (const Value *v : operands) {
    if (!v || !v->type.isTensor())
      continue;
    if (!first) {
      first = v;
      continue;
    }
    // Describe the binding only when a variable really gets a device.
    Device fd = resolve(first->type.dev), vd = resolve(v->type.dev);
    DeviceOrigin binding;
    if (fd.isVar() != vd.isVar()) {
      binding.kind = DeviceOrigin::Kind::Inferred;
      binding.range = whole.range;
      std::string use = shortText(whole.range);
      binding.subject = program_.save(use);
      binding.message = program_.save("the device " + (fd.isVar() ? vd : fd).str() + " of `" +
                                      fn_->unifier.creationText(fd.isVar() ? fd : vd).str() +
                                      "` was inferred from `" + use + "` here");
    }
    if (!fn_->unifier.unify(first->type.dev, v->type.dev, binding)) {
      reportDeviceMismatch(op, opRange, *first, *v, operands);
      return std::nullopt;
    }
  }
  return first ? std::optional<Device>(resolve(first->type.dev)) : std::nullopt;
}

std::optional<Device> Checker::meetingDevice(llvm::ArrayRef<const Value *> operands) {
  llvm::SmallVector<std::pair<Device, int>, 4> counts;
  for (const Value *v : operands) {
    if (!v || !v->type.isTensor() || resolve(v->type.dev).isVar())
      continue;
    Device d = resolve(v->type.dev);
    auto it = llvm::find_if(counts, [&](const auto &c) { return c.first == d; });
    if (it == counts.end())
      counts.push_back({d, 1});
    else
      ++it->second;
  }
  auto isOperandDevice = [&](Device d) {
    return llvm::any_of(counts, [&](const auto &c) { return c.first == d; });
  };
  // The odd one out of three (`where(mask, a, b)`) moves.
  llvm::stable_sort(counts, [](const auto &x, const auto &y) { return x.second > y.second; });
  if (counts.size() > 1 && counts[0].second > counts[1].second)
    return counts[0].first;
  // Else the device the fn declares its result on, then the model's.
  if (fn_ && fn_->fn && fn_->fn->result.isTensor()) {
    Device result = resolve(fn_->fn->result.dev);
    if (!result.isVar() && isOperandDevice(result))
      return result;
  }
  if (fn_ && fn_->home && isOperandDevice(*fn_->home))
    return *fn_->home;
  return std::nullopt;
}

void Checker::reportDeviceMismatch(llvm::StringRef op, Range opRange, const Value &first,
                                   const Value &second, llvm::ArrayRef<const Value *> operands) {
  // Report the operand that is not on the device the others meet on, next
  // to one that is (which need not be the pair unification failed on).
  if (std::optional<Device> meet = meetingDevice(operands)) {
    auto on = [&](const Value *v, bool want) {
      return v && v->type.isTensor() && !resolve(v->type.dev).isVar() &&
             (resolve(v->type.dev) == *meet) == want;
    };
    auto odd = llvm::find_if(operands, [&](const Value *v) { return on(v, false); });
    auto home = llvm::find_if(operands, [&](const Value *v) { return on(v, true); });
    if (odd != operands.end() && home != operands.end()) {
      reportDevicePair(op, opRange, **home, **odd, /*secondMoves=*/true);
      return;
    }
  }
  reportDevicePair(op, opRange, first, second, /*secondMoves=*/false);
}

void Checker::reportDevicePair(llvm::StringRef op, Range opRange, const Value &a, const Value &b,
                               bool secondMoves) {
  Device da = resolve(a.type.dev), db = resolve(b.type.dev);
  DeviceOrigin oa = originOf(a), ob = originOf(b);
  if (oa.kind == DeviceOrigin::Kind::Placed || ob.kind == DeviceOrigin::Kind::Placed) {
    bool aPlaced = oa.kind == DeviceOrigin::Kind::Placed;
    const Value &placed = aPlaced ? a : b, &other = aPlaced ? b : a;
    const DeviceOrigin &po = aPlaced ? oa : ob, &oo = aPlaced ? ob : oa;
    Device pd = aPlaced ? da : db, od = aPlaced ? db : da;
    auto diag =
        diags_.report(DiagId::PlacementConflict, po.range, po.subject.str(), pd.str(), od.str());
    diag.primary("placed on " + pd.str() + " here");
    if (placed.range() != po.range)
      diag.label(placed.range(), typeStr(placed));
    diag.label(other.range(), typeStr(other));
    if (oo.isKnown())
      diag.note(oo.message.str(), oo.range);
    if (po.editRange.isValid())
      diag.help("remove the placement; its device is then inferred from this use",
                {{po.editRange, ""}});
    diag.help("or move it to " + od.str() + " here", toEdits(*placed.expr, od));
    return;
  }
  // The odd one out is the operand that is not on the fn's device.
  std::optional<Device> home = fn_ ? fn_->home : std::nullopt;
  bool aOdd = !secondMoves && home && da != *home && db == *home;
  const Value &odd = aOdd ? a : b, &other = aOdd ? b : a;
  const DeviceOrigin &oddOrigin = aOdd ? oa : ob, &otherOrigin = aOdd ? ob : oa;
  Device target = aOdd ? db : da;
  auto diag = diags_.report(DiagId::DeviceMismatch, opRange, op);
  diag.primary(odd.range(), typeStr(odd)).label(other.range(), typeStr(other));
  if (oddOrigin.isKnown())
    diag.note(oddOrigin.message.str(), oddOrigin.range);
  if (otherOrigin.isKnown() && otherOrigin.range != oddOrigin.range)
    diag.note(otherOrigin.message.str(), otherOrigin.range);
  bool declFix = (oddOrigin.kind == DeviceOrigin::Kind::Declared ||
                  oddOrigin.kind == DeviceOrigin::Kind::FnParam) &&
                 oddOrigin.editRange.isValid() && !target.isVar();
  if (declFix)
    diag.help("declare it on " + target.str(), {{oddOrigin.editRange, target.str()}},
              Applicability::MaybeIncorrect);
  if (odd.expr && !target.isVar())
    diag.help((declFix ? "or move it to " : "move it to ") + target.str() + " here",
              toEdits(*odd.expr, target));
}

const ast::CallExpr *Checker::defaultDTypeCreation(const ast::Expr *e) {
  if (auto *placed = llvm::dyn_cast_or_null<ast::BinaryExpr>(e))
    if (program_.infoFor(placed).placement)
      e = placed->lhs.get();
  auto *call = llvm::dyn_cast_or_null<ast::CallExpr>(e);
  auto *callee = call ? dyn_cast<ast::NameExpr>(call->callee.get()) : nullptr;
  if (!callee || !isCreationOp(callee->name) || !call->argsRange.isValid())
    return nullptr;
  for (const ast::Arg &arg : call->args)
    if ((arg.name && arg.name->name == "dtype") ||
        (arg.value && program_.infoFor(arg.value.get()).type.kind() == Type::Kind::DType))
      return nullptr;
  return call;
}

bool Checker::requireSameDType(llvm::StringRef op, const Value &anchor, const Value &other) {
  if (anchor.type.dtype == other.type.dtype)
    return true;
  // Convert the operand whose dtype the fn's declared result does not have.
  const Value *odd = &other, *kept = &anchor;
  if (fn_ && fn_->fn && fn_->fn->result.isTensor() && fn_->fn->result.dtype == other.type.dtype)
    std::swap(odd, kept);
  ast::DType target = kept->type.dtype;
  auto diag = diags_.report(DiagId::DTypeMismatch, odd->range(), ast::dtypeName(odd->type.dtype),
                            ast::dtypeName(target), op);
  diag.primary(typeStr(*odd)).label(kept->range(), typeStr(*kept));
  if (!odd->expr)
    return false;
  // `eye(n)` next to f16 values: create it as f16 rather than convert it.
  if (const ast::CallExpr *creation = defaultDTypeCreation(odd->expr)) {
    llvm::SMLoc close = llvm::SMLoc::getFromPointer(creation->argsRange.end.getPointer() - 1);
    diag.help("create it as " + ast::dtypeName(target).str(),
              {{Range{close, close}, (creation->args.empty() ? "dtype: " : ", dtype: ") +
                                         ast::dtypeName(target).str()}});
    diag.help("or convert it with `cast`", castEdits(*odd->expr, target));
    return false;
  }
  diag.help("convert it with `cast`", castEdits(*odd->expr, target));
  return false;
}

std::optional<Shape> Checker::broadcast(const Shape &a, const Shape &b) {
  if (a.hasPack() && b.hasPack() && a.pack != b.pack)
    return std::nullopt;
  size_t na = a.dims.size(), nb = b.dims.size();
  if ((a.hasPack() && nb > na) || (b.hasPack() && na > nb))
    return std::nullopt;
  Shape out;
  out.pack = a.pack ? a.pack : b.pack;
  size_t n = std::max(na, nb);
  out.dims.resize(n);
  for (size_t i = 0; i < n; ++i) {
    std::optional<Dim> da = i < na ? std::optional<Dim>(a.dims[na - 1 - i]) : std::nullopt;
    std::optional<Dim> db = i < nb ? std::optional<Dim>(b.dims[nb - 1 - i]) : std::nullopt;
    Dim r;
    if (!da)
      r = *db;
    else if (!db)
      r = *da;
    else if (*da == *db || db->isConstant(1))
      r = *da;
    else if (da->isConstant(1))
      r = *db;
    else
      return std::nullopt;
    out.dims[n - 1 - i] = r;
  }
  return out;
}

std::optional<unsigned> Checker::normalizeDim(int64_t dim, const Value &tensor, Range at,
                                              bool allowEnd) {
  int64_t rank = int64_t(tensor.type.rank()) + (allowEnd ? 1 : 0);
  if (tensor.type.shape.hasPack()) {
    if (dim >= 0) {
      diags_
          .report(DiagId::UnsupportedFeature, at,
                  "a non-negative dimension index on a tensor with `...` dims")
          .primary("count from the end instead, e.g. -1");
      return std::nullopt;
    }
    if (-dim > rank) {
      diags_.report(DiagId::DimOutOfRange, at, dim, "at least " + std::to_string(rank))
          .primary("refers into `...`");
      return std::nullopt;
    }
    return unsigned(rank + dim);
  }
  if (dim < -rank || dim >= rank) {
    diags_.report(DiagId::DimOutOfRange, at, dim, tensor.type.rank())
        .primary("valid dims are " + std::to_string(-rank) + " to " + std::to_string(rank - 1))
        .label(tensor.range(), typeStr(tensor));
    return std::nullopt;
  }
  return unsigned(dim < 0 ? dim + rank : dim);
}
