//===- CheckSubmodels.cpp - Submodel instances ----------------------------===//
//
// The model a submodel declaration builds: its arguments against the
// model's value parameters and devices, lists of instances
// (`[nn.Linear(d, d) for _ in 0..n]`), and conditional submodels.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <functional>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

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
      for (unsigned k = 0; k < p.slotCount(); ++k) {
        if (std::optional<Dim> d = defaultSlotValue(*callee, p, k, inst->values)) {
          inst->values.push_back(d);
          continue;
        }
        // A float's default is no dim; anything else left out is missing.
        if (!p.hasDefault || p.kind == ast::ScalarKind::Int) {
          if (ok)
            reportMissingArgument(
                argsRange.isValid() ? argsRange : init.range, calleeName, p.name,
                requiredValueParams(*callee), bound.size(), args->size(),
                llvm::any_of(*args, [](const ast::Arg &a) { return a.name.has_value(); }),
                modelSignature(calleeName, *callee));
          ok = false;
        }
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
      inst->values.append(p.slotCount(), std::nullopt);
      continue;
    }
    if (p.isTuple()) {
      ok &= tupleArgument(p, calleeName, *bound[i], v, inst->values);
      continue;
    }
    if (p.kind == ast::ScalarKind::DType) {
      std::optional<Dim> dtype = dtypeArgument(p, calleeName, *bound[i], v);
      ok &= dtype.has_value();
      inst->values.push_back(dtype);
      continue;
    }
    bool matches = (p.kind == ast::ScalarKind::Int && v.type.kind() == Type::Kind::Int) ||
                   (p.kind == ast::ScalarKind::Float &&
                    (v.type.kind() == Type::Kind::Float || v.type.kind() == Type::Kind::Int)) ||
                   (p.kind == ast::ScalarKind::Bool && v.type.kind() == Type::Kind::Bool) ||
                   (p.kind == ast::ScalarKind::Option && v.type.kind() == Type::Kind::String);
    if (!matches) {
      auto diag = diags_.report(DiagId::TypeMismatch, bound[i]->range, ast::scalarKindName(p.kind),
                                v.type.str());
      diag.primary("argument `" + p.name + "` of `" + calleeName + "`");
      if (p.kind == ast::ScalarKind::Int && v.type.kind() == Type::Kind::Tuple)
        diag.note("`" + p.name + "` is one int; only a parameter declared as a tuple (`" + p.name +
                  ": (int, int)`) takes one");
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
  sub.repeatBegin = bounds[0];
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
    checkRedeclaration(model, decl.name, decl.guards, /*isState=*/false);
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
    if (decl.stateNames && !sub.type.isError())
      checkStateNames(model, sub);
    program_.decls.push_back(
        {decl.name.range, decl.name.name, {}, sub.type, decl.doc, sub.placement});
    model.submodels.push_back(std::move(sub));
  }
  fn_ = nullptr;
  currentModel = nullptr;
}

void Checker::checkStateNames(const ModelInfo &model, SubmodelInfo &sub) {
  const ast::StateNameTemplate &written = *sub.decl->stateNames;
  auto *list = dyn_cast<ast::ListExpr>(sub.decl->init.get());
  const ast::ListExpr::Repeat *repeat = list ? list->repeat.get() : nullptr;
  auto fail = [&](const std::string &why, const std::string &label) {
    auto diag = diags_.report(DiagId::InvalidStateNames, written.range, sub.name,
                              "`as \"" + written.text + "\"`");
    diag.primary(label).note(why);
    return diag;
  };
  if (list && !repeat) {
    fail("the elements of a list written out have no index to tell their names apart",
         "a list written out")
        .help("build the list as `[Layer(...) for k in 0..n] as \"...{k}...\"`, or declare each "
              "element as a submodel of its own",
              {}, Applicability::HasPlaceholders);
    return;
  }
  StateNames names;
  size_t inner = 0;
  llvm::StringRef text = written.text;
  while (!text.empty()) {
    size_t open = text.find_first_of("{}");
    if (open == llvm::StringRef::npos) {
      names.parts.push_back({StateNames::Part::Kind::Text, text.str(), Dim(), false});
      break;
    }
    if (open > 0)
      names.parts.push_back(
          {StateNames::Part::Kind::Text, text.take_front(open).str(), Dim(), false});
    size_t close = text[open] == '{' ? text.find('}', open) : llvm::StringRef::npos;
    if (close == llvm::StringRef::npos) {
      fail("`{}` stands for the names inside the submodel and `{k}` for a value; braces come "
           "in pairs",
           "an unmatched `" + std::string(1, text[open]) + "`");
      return;
    }
    llvm::StringRef name = text.slice(open + 1, close).trim();
    text = text.drop_front(close + 1);
    if (name.empty()) {
      ++inner;
      names.parts.push_back({StateNames::Part::Kind::Inner, "", Dim(), false});
      continue;
    }
    if (repeat && name == repeat->var.name && name != "_") {
      names.parts.push_back({StateNames::Part::Kind::Value, "", *sub.repeatBegin, true});
      continue;
    }
    const ValueParamInfo *param = nullptr;
    for (const ValueParamInfo &p : model.valueParams)
      if (p.name == name && p.elementAtoms.empty() &&
          (p.kind == ast::ScalarKind::Int || p.kind == ast::ScalarKind::Bool))
        param = &p;
    if (!param) {
      std::string valid = repeat && repeat->var.name != "_"
                              ? "the list's variable `" + repeat->var.name + "` or "
                              : std::string();
      auto diag =
          fail("a name in braces is " + valid + "an int or bool argument of `" + model.name + "`",
               "`{" + name.str() + "}` is not a value here");
      if (repeat && repeat->var.name == "_")
        diag.help("name the list's variable to use its value: `for k in ...` and `{k}`", {},
                  Applicability::HasPlaceholders);
      return;
    }
    names.parts.push_back({StateNames::Part::Kind::Value, "", Dim::atom(param->atom), false});
  }
  if (inner != 1) {
    fail("`{}` marks where the names of the submodel's own state go (`as \"{}_l0\"` names its "
         "`weight` `weight_l0`), once",
         inner == 0 ? "no `{}`" : "`{}` " + std::to_string(inner) + " times");
    return;
  }
  sub.stateNames = std::move(names);
}
