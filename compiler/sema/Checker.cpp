//===- Checker.cpp - Phases, model declarations, fn bodies ----------------===//
//
// The order of checking (declare every model, type its signatures, resolve
// its submodels, then check fn bodies) and the declarations of a model.
// Where the rest lives is listed in Checker.h.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
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
  for (auto &m : program_.models)
    checkContainsItself(*m);
}

void Checker::checkContainsItself(const ModelInfo &model) {
  // Follow the submodels every instance declares (no `if` around them, not
  // a list that may be empty) from `model`: reaching it again never ends.
  std::vector<const SubmodelInfo *> path;
  llvm::SmallPtrSet<const ModelInfo *, 8> visited;
  std::function<bool(const ModelInfo &)> reaches = [&](const ModelInfo &at) {
    for (const SubmodelInfo &sub : at.submodels) {
      if (!sub.presence.always() || sub.type.kind() != Type::Kind::Model || !sub.type.instance ||
          !sub.type.instance->model)
        continue;
      const ModelInfo &inner = *sub.type.instance->model;
      path.push_back(&sub);
      if (&inner == &model || (visited.insert(&inner).second && reaches(inner)))
        return true;
      path.pop_back();
    }
    return false;
  };
  if (!reaches(model) || path.empty() || !path.front()->decl)
    return;
  std::string chain = model.name;
  for (const SubmodelInfo *sub : path)
    chain += "." + sub->name;
  auto diag =
      diags_.report(DiagId::ModelContainsItself, path.front()->decl->init->range, model.name);
  diag.primary("every `" + model.name + "` declares this, which holds another `" + model.name +
               "` (" + chain + ")");
  if (path.size() > 1)
    for (const SubmodelInfo *sub : llvm::ArrayRef(path).drop_front())
      if (sub->decl)
        diag.label(sub->decl->init->range, "declared here");
  diag.note("each instance would create the next one without end; PyTorch recurses until "
            "`RecursionError`")
      .help("put the submodel under a condition of the model's arguments that ends the nesting "
            "(`if depth > 0 { " +
                path.front()->name + " = " + std::string(path.front()->decl->init->range.text()) +
                " }`, with `depth - 1` in the arguments)",
            {}, Applicability::HasPlaceholders);
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
    unsigned slots = 0;
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
      for (unsigned k = 0; k < p.arity; ++k)
        vp.elementAtoms.push_back(internSymbol(p.name.name + "[" + std::to_string(k) + "]"));
      vp.firstSlot = slots;
      slots += vp.slotCount();
      vp.hasDefault = p.defaultValue != nullptr;
      llvm::StringSet<> optionNames;
      for (const ast::Ident &option : p.options) {
        if (!optionNames.insert(option.name).second)
          diags_.report(DiagId::DuplicateDefinition, option.range, "\"" + option.name + "\"");
        vp.options.push_back(option.name);
      }
      if (vp.isTuple()) {
        declareTupleDefault(*info, p, vp);
        info->valueParams.push_back(std::move(vp));
        program_.decls.push_back(
            {p.name.range, p.name.name, ast::valueParamTypeText(p), {}, {}, {}});
        continue;
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
      // `dtype: dtype = f32`: a floating dtype, as every value of the param.
      if (auto *lit = llvm::dyn_cast_if_present<ast::DTypeLitExpr>(p.defaultValue.get())) {
        if (p.type != ast::ScalarKind::DType)
          diags_.report(DiagId::TypeMismatch, lit->range, ast::scalarKindName(p.type), "a dtype")
              .primary("the default of `" + p.name.name + "`");
        else if (!ast::isFloating(lit->dtype))
          reportNonFloatDTypeArgument(lit->range, ast::dtypeName(lit->dtype), p.name.name,
                                      decl.name.name);
        else
          vp.defaultInt = int64_t(lit->dtype);
      } else if (p.type == ast::ScalarKind::DType && p.defaultValue &&
                 !llvm::isa<ast::NameExpr>(p.defaultValue.get())) {
        diags_.report(DiagId::TypeMismatch, p.defaultValue->range, "dtype", "another value")
            .primary("the default of `" + p.name.name + "` must be a dtype (f16, bf16, f32, f64)");
        vp.defaultInt.reset();
      }
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
          auto diag = diags_.report(DiagId::UnknownName, ref->range, ref->name);
          diag.primary("a default can name only an earlier parameter of `" + decl.name.name + "`");
          helpWithTorchDTypeName(diag, ref->name, ref->range);
        } else if ((earlier->kind != p.type &&
                    !(p.type == ast::ScalarKind::Float && earlier->kind == ast::ScalarKind::Int)) ||
                   earlier->options != vp.options || earlier->isTuple()) {
          diags_
              .report(DiagId::TypeMismatch, ref->range, ast::scalarKindName(p.type),
                      earlier->typeName())
              .primary("the default of `" + p.name.name + "`");
        } else {
          vp.defaultParam = unsigned(earlier - info->valueParams.begin());
        }
      }
      info->valueParams.push_back(std::move(vp));
      program_.decls.push_back({p.name.range, p.name.name, ast::valueParamTypeText(p), {}, {}, {}});
    }
    it->second = &program_.addModel(std::move(info));
    program_.decls.push_back(
        {decl.name.range, decl.name.name, "model " + decl.name.name, {}, decl.doc, {}});
  }
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
    checkRedeclaration(model, decl.name, decl.guards, /*isState=*/true);
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
    for (const ast::Ident &d : decl.dtypeParams) {
      bool taken = !paramNames.insert(d.name).second ||
                   llvm::any_of(model.valueParams,
                                [&](const ValueParamInfo &p) { return p.name == d.name; }) ||
                   llvm::any_of(model.decl->deviceParams,
                                [&](const ast::DeviceParam &p) { return p.name.name == d.name; });
      if (taken)
        diags_.report(DiagId::DuplicateDefinition, d.range, d.name);
      fn.dtypeParams.push_back({d.name, internSymbol(d.name)});
      program_.decls.push_back({d.range, d.name, "dtype", {}, {}, {}});
    }
    sigDTypes_ = &fn.dtypeParams;
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
    sigDTypes_ = nullptr;
    for (const FnDTypeParam &d : fn.dtypeParams)
      if (llvm::none_of(fn.params, [&](const FnParamInfo &p) {
            return p.type.isTensor() && p.type.dtype.param() == d.atom;
          })) {
        auto at =
            llvm::find_if(decl.dtypeParams, [&](const ast::Ident &i) { return i.name == d.name; });
        diags_
            .report(DiagId::UnsupportedFeature, at->range, "a dtype parameter no fn parameter has")
            .primary("no parameter of `" + fn.name + "` has dtype `" + d.name + "`")
            .note("each call binds `" + d.name + "` from the dtype of its arguments");
        fn.valid = false;
      }
    std::string sig = "fn " + fn.name + "(" + sigText + ")";
    if (decl.result)
      sig += " -> " + fn.result.str();
    program_.decls.push_back({decl.name.range, decl.name.name, sig, {}, decl.doc, {}});
    model.fns.push_back(std::move(fn));
  }
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
        bool isParam = llvm::any_of(model.valueParams,
                                    [&](const ValueParamInfo &p) { return p.standsFor(a); });
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
  sigDTypes_ = &fn.dtypeParams;
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
  sigDTypes_ = nullptr;
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
