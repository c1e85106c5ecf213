//===- GenCalls.cpp - Calls of models and fns -----------------------------===//
//
// Which callee a call reaches (a submodel's forward, the model's own fn,
// a built-in) and how a model fn is inlined: each submodel instance is a
// ModelFrame with its concrete arguments and state_dict prefix.
//
//===----------------------------------------------------------------------===//

#include "mlirgen/Generator.h"

#include "llvm/ADT/STLExtras.h"

using llvm::dyn_cast;

namespace modelc::mlirgen::detail {

//===----------------------------------------------------------------------===//
// Models and fns
//===----------------------------------------------------------------------===//

ModelFrame *Generator::child(ModelFrame &parent, const std::string &name,
                             std::shared_ptr<const sema::ModelInstance> inst, const ast::Expr *init,
                             const sema::StateAffixes &affixes) {
  std::unique_ptr<ModelFrame> &slot = parent.children[name];
  if (slot)
    return slot.get();
  slot = std::make_unique<ModelFrame>();
  slot->instance = std::move(inst);
  slot->names = parent.names.nested(affixes);
  // Float and bool arguments: given in the submodel's construction, else
  // their literal defaults.
  const ast::ModelDecl *decl = slot->info().decl;
  const ast::CallExpr *call = llvm::dyn_cast_if_present<ast::CallExpr>(init);
  const ast::InstantiateExpr *instExpr = llvm::dyn_cast_if_present<ast::InstantiateExpr>(init);
  const std::vector<ast::Arg> *args = call ? &call->args : instExpr ? &instExpr->args : nullptr;
  for (size_t i = 0; decl && i < decl->valueParams.size(); ++i) {
    const ast::ValueParam &p = decl->valueParams[i];
    if (p.type == ast::ScalarKind::Int)
      continue;
    const ast::Expr *given = nullptr;
    if (args) {
      size_t positional = 0;
      for (const ast::Arg &a : *args) {
        if (a.name ? a.name->name == p.name.name : positional == i)
          given = a.value.get();
        if (!a.name)
          ++positional;
      }
    }
    const ast::Expr *source = given ? given : p.defaultValue.get();
    ModelFrame &from = given ? parent : *slot;
    if (source)
      if (std::optional<GenValue> v = constantOf(*source, from))
        slot->scalarArgs[p.name.name] = v->number;
  }
  return slot.get();
}

GenValue Generator::inlineFn(ModelFrame &frame, const ast::FnDecl &fn,
                             llvm::ArrayRef<GenValue> args) {
  if (++depth > kMaxInlineDepth) {
    --depth;
    return unsupported(fn.name.range, "calls nested deeper than 64 levels");
  }
  Scope scope;
  scope.frame = &frame;
  for (size_t i = 0; i < fn.params.size() && i < args.size(); ++i)
    scope.locals[fn.params[i].name.name] = args[i];
  // Symbolic dims of the signature take their extents from the arguments.
  if (const sema::FnInfo *info = frame.info().findFn(fn.name.name)) {
    for (size_t i = 0; i < info->params.size() && i < args.size(); ++i) {
      const sema::Type &type = info->params[i].type;
      if (args[i].kind != GenValue::Kind::Tensor || !type.isTensor())
        continue;
      RankedTensorType actual = typeOf(args[i].tensor);
      if (std::optional<sema::AtomId> dtype = type.dtype.param())
        for (ast::DType d : {ast::DType::F16, ast::DType::BF16, ast::DType::F32, ast::DType::F64})
          if (elementType(d) == actual.getElementType())
            scope.dtypes.try_emplace(*dtype, d);
      // Written dims follow the pack (`[..., T, n]`): they are the last ones.
      int64_t first = actual.getRank() - int64_t(type.shape.dims.size());
      if (first < 0 || (first > 0 && !type.shape.hasPack()))
        continue;
      if (type.shape.hasPack())
        scope.packExtents.try_emplace(type.shape.pack, actual.getShape().take_front(first));
      for (size_t k = 0; k < type.shape.dims.size(); ++k) {
        int64_t d = first + int64_t(k);
        std::optional<sema::AtomId> atom = type.shape.dims[k].asAtom();
        if (!atom || scope.dimExtents.count(*atom) || scope.dimSources.count(*atom))
          continue;
        if (!actual.isDynamicDim(d))
          scope.dimExtents[*atom] = actual.getDimSize(d);
        else
          scope.dimSources[*atom] = {args[i].tensor, d};
      }
    }
  }
  genStmts(fn.body, scope);
  --depth;
  if (failed)
    return {};
  if (!scope.returned) {
    // A fn declared without a result computes nothing observable.
    const sema::FnInfo *info = frame.info().findFn(fn.name.name);
    if (info && info->result.kind() == sema::Type::Kind::Void) {
      GenValue v;
      v.kind = GenValue::Kind::Void;
      return v;
    }
    return unsupported(fn.name.range, "a fn without a result value");
  }
  return *scope.returned;
}

GenValue Generator::callModel(ModelFrame &frame, llvm::StringRef fnName, const ast::CallExpr &call,
                              const GenValue *receiver, Scope &scope) {
  const sema::FnInfo *fn = frame.info().findFn(fnName);
  if (!fn || !fn->decl)
    return unsupported(call.range, "calling a model without a `" + fnName + "` fn");
  const ast::FnDecl &decl = *fn->decl;
  llvm::SmallVector<GenValue, 4> args(decl.params.size());
  size_t positional = 0;
  if (receiver)
    args[positional++] = *receiver;
  for (const ast::Arg &a : call.args) {
    size_t slot = positional;
    if (a.name) {
      auto it = llvm::find_if(decl.params,
                              [&](const ast::FnParam &p) { return p.name.name == a.name->name; });
      slot = size_t(it - decl.params.begin());
    } else {
      ++positional;
    }
    if (slot >= args.size() || !a.value)
      return unsupported(a.range, "this argument");
    args[slot] = gen(*a.value, scope);
    if (!args[slot].ok())
      return {};
  }
  return inlineFn(frame, decl, args);
}

GenValue Generator::genCall(const ast::CallExpr &call, Scope &scope,
                            std::optional<sema::Device> placement) {
  ModelFrame &frame = *scope.frame;
  if (auto *name = dyn_cast<ast::NameExpr>(call.callee.get())) {
    // A local (a loop variable over submodels) or a submodel: its forward.
    if (scope.locals.count(name->name) || frame.info().findSubmodel(name->name)) {
      GenValue callee = genName(*name, scope);
      if (!callee.ok())
        return {};
      if (callee.kind != GenValue::Kind::Model)
        return unsupported(call.callee->range, "calling this value");
      return callModel(*callee.model, "forward", call, nullptr, scope);
    }
    // One of the model's own fns.
    if (frame.info().findFn(name->name))
      return callModel(frame, name->name, call, nullptr, scope);
    if (isBuiltinCall(call))
      return genBuiltin(name->name, call, nullptr, scope, placement);
    return unsupported(call.callee->range, "calling `" + name->name + "`");
  }
  if (auto *member = dyn_cast<ast::MemberExpr>(call.callee.get())) {
    GenValue base = gen(*member->base, scope);
    if (!base.ok())
      return {};
    if (base.kind == GenValue::Kind::Model)
      return callModel(*base.model, member->member.name, call, nullptr, scope);
    if (isBuiltinCall(call))
      return genBuiltin(member->member.name, call, &base, scope, placement);
    return unsupported(call.callee->range, "the method `" + member->member.name + "`");
  }
  if (llvm::isa<ast::IndexExpr>(call.callee.get())) {
    // A submodel of a list by constant index, `features[2](x)`: its forward
    // (what an imported nn.Sequential calls).
    GenValue callee = gen(*call.callee, scope);
    if (!callee.ok())
      return {};
    if (callee.kind != GenValue::Kind::Model)
      return unsupported(call.callee->range, "calling this value");
    return callModel(*callee.model, "forward", call, nullptr, scope);
  }
  // `nn.ReLU()(x)`: a model without state, created where it is called.
  if (auto *created = dyn_cast<ast::CallExpr>(call.callee.get()))
    if (const sema::ExprInfo *info = program.typeOf(created))
      if (info->type.kind() == sema::Type::Kind::Model && info->type.instance) {
        sema::Type t = frame.subst().apply(info->type);
        std::string name = created->range.text().str();
        ModelFrame *inst = child(frame, name, t.instance, created, {name + ".", ""});
        return callModel(*inst, "forward", call, nullptr, scope);
      }
  return unsupported(call.callee->range, "calling this expression");
}

} // namespace modelc::mlirgen::detail
