//===- CheckedProgram.cpp - Look-ups and instantiation of checked models --===//

#include "sema/CheckedProgram.h"

using namespace modelc;
using namespace modelc::sema;

std::optional<int64_t> ValueParamInfo::optionIndex(llvm::StringRef option) const {
  for (size_t i = 0; i < options.size(); ++i)
    if (options[i] == option)
      return int64_t(i);
  return std::nullopt;
}

std::string ValueParamInfo::typeName() const {
  if (!isTuple())
    return ast::scalarKindName(kind).str();
  std::string text;
  for (size_t k = 0; k < elementAtoms.size(); ++k)
    text += (k ? ", " : "(") + ast::scalarKindName(kind).str();
  return text + ")";
}

std::optional<Dim> modelc::sema::defaultSlotValue(const ModelInfo &model,
                                                  const ValueParamInfo &param, unsigned k,
                                                  llvm::ArrayRef<std::optional<Dim>> earlier) {
  if (k < param.defaultTuple.size())
    return Dim::constant(param.defaultTuple[k]);
  if (param.defaultInt)
    return Dim::constant(*param.defaultInt);
  if (param.defaultParam && *param.defaultParam < model.valueParams.size()) {
    // `stride: int = kernel`; `stride: (int, int) = kernel_size` element by
    // element; an int default of a tuple stands for every element.
    const ValueParamInfo &from = model.valueParams[*param.defaultParam];
    unsigned slot = from.firstSlot + (from.isTuple() ? k : 0);
    if (slot < earlier.size())
      return earlier[slot];
  }
  return std::nullopt;
}

const StateInfo *ModelInfo::findState(llvm::StringRef n) const {
  for (const StateInfo &s : state)
    if (s.name == n)
      return &s;
  return nullptr;
}

const SubmodelInfo *ModelInfo::findSubmodel(llvm::StringRef n) const {
  for (const SubmodelInfo &s : submodels)
    if (s.name == n)
      return &s;
  return nullptr;
}

/// The declaration of `n` among `decls` that exists in `instance` (the
/// first one when the instance's arguments do not decide).
template <typename Info>
static const Info *presentDeclaration(const std::vector<Info> &decls, llvm::StringRef n,
                                      const Substitution &instance) {
  const Info *first = nullptr;
  for (const Info &d : decls) {
    if (d.name != n)
      continue;
    if (!first)
      first = &d;
    if (!d.presence.always() && d.presence.condition->evaluate(instance) == true)
      return &d;
  }
  return first;
}

const StateInfo *ModelInfo::findState(llvm::StringRef n, const Substitution &instance) const {
  return presentDeclaration(state, n, instance);
}

const SubmodelInfo *ModelInfo::findSubmodel(llvm::StringRef n, const Substitution &instance) const {
  return presentDeclaration(submodels, n, instance);
}

const FnInfo *ModelInfo::findFn(llvm::StringRef n) const {
  for (const FnInfo &f : fns)
    if (f.name == n)
      return &f;
  return nullptr;
}

std::optional<Device> ModelInfo::homeDevice() const {
  if (decl && !decl->deviceParams.empty())
    return Device::param(decl, 0);
  return std::nullopt;
}

const ModelInfo *CheckedProgram::findModel(llvm::StringRef name, const ast::Module *module) const {
  for (const auto &m : models)
    if (m->name == name && (!module || m->module == module))
      return m.get();
  return nullptr;
}

const ModelInfo *CheckedProgram::modelFor(const ast::ModelDecl *decl) const {
  return byDecl_.lookup(decl);
}

const ExprInfo *CheckedProgram::typeOf(const ast::Expr *expr) const {
  auto it = exprIndex_.find(expr);
  return it == exprIndex_.end() ? nullptr : &exprInfos_[it->second];
}

ExprInfo &CheckedProgram::infoFor(const ast::Expr *expr) {
  auto [it, inserted] = exprIndex_.try_emplace(expr, uint32_t(exprInfos_.size()));
  if (inserted)
    exprInfos_.emplace_back();
  return exprInfos_[it->second];
}

void CheckedProgram::forEachExpr(
    llvm::function_ref<void(const ast::Expr *, const ExprInfo &)> fn) const {
  for (const auto &[expr, index] : exprIndex_)
    fn(expr, exprInfos_[index]);
}

void CheckedProgram::recordBranch(const ast::IfStmt *stmt, ConditionPtr condition) {
  branches_[stmt] = std::move(condition);
}

std::optional<bool> CheckedProgram::branchTaken(const ast::IfStmt &stmt,
                                                const Substitution &subst) const {
  auto it = branches_.find(&stmt);
  if (it == branches_.end() || !it->second)
    return std::nullopt;
  return it->second->evaluate(subst);
}

bool modelc::sema::presentIn(const Presence &presence, const Substitution &subst) {
  return presence.always() || presence.condition->evaluate(subst).value_or(true);
}

ModelInfo &CheckedProgram::addModel(std::unique_ptr<ModelInfo> model) {
  ModelInfo &m = *model;
  byDecl_[m.decl] = &m;
  models.push_back(std::move(model));
  return m;
}

Substitution modelc::sema::substitutionFor(const ModelInstance &inst) {
  Substitution s;
  if (!inst.model)
    return s;
  s.model = inst.model->decl;
  s.devices = inst.devices;
  for (const ValueParamInfo &p : inst.model->valueParams)
    for (unsigned k = 0; k < p.slotCount(); ++k)
      if (p.firstSlot + k < inst.values.size() && inst.values[p.firstSlot + k])
        s.dims.push_back({p.slotAtom(k), *inst.values[p.firstSlot + k]});
  return s;
}

namespace {

constexpr unsigned kMaxNesting = 64;

/// The instances `sub` builds: one, or a list's (a repeated element once).
llvm::SmallVector<const ModelInstance *, 4> instancesOf(const SubmodelInfo &sub) {
  llvm::SmallVector<const ModelInstance *, 4> insts;
  if (sub.type.kind() == Type::Kind::Model && sub.type.instance)
    insts.push_back(sub.type.instance.get());
  else if (sub.type.kind() == Type::Kind::ModelList && sub.type.instances)
    for (const auto &i : *sub.type.instances)
      if (insts.empty() || insts.back() != i.get())
        insts.push_back(i.get());
  return insts;
}

/// How often a model may already be on the path for the collectors to
/// descend into it again: recursion under a condition is walked this many
/// levels deep, symbolically.
constexpr unsigned kRecursionLevelsWalked = 2;

/// Calls `visit(sub, inst)` for each submodel instance of `model` that the
/// collectors below descend into, with `model` on `path` meanwhile; none
/// below kMaxNesting levels. It skips a model that contains itself
/// unconditionally: it can never be built (instantiate() says so), and
/// walking its cycle to kMaxNesting levels took exponential time when the
/// cycle branches (fuzz_smoke: a block holding two copies of itself).
/// Recursion under a condition (`if n > 0 { left = Tree(n - 1); right =
/// Tree(n - 1) }`) is walked kRecursionLevelsWalked levels: each level has
/// the same asserts in other symbols, and walking a branching one to
/// kMaxNesting levels took 2^64 steps. instantiate() walks the real
/// instances, as deep as their values make them.
template <typename Visit>
void forEachNestedInstance(const ModelInfo &model, unsigned depth,
                           llvm::SmallVectorImpl<const ModelInfo *> &path, Visit visit) {
  if (depth > kMaxNesting)
    return;
  path.push_back(&model);
  for (const SubmodelInfo &sub : model.submodels)
    for (const ModelInstance *inst : instancesOf(sub)) {
      if (!inst->model)
        continue;
      size_t onPath = size_t(llvm::count(path, inst->model));
      if (onPath > (sub.presence.always() ? 0 : kRecursionLevelsWalked - 1))
        continue;
      visit(sub, *inst);
    }
  path.pop_back();
}

void collectExactDivisions(const ModelInfo &model, unsigned depth, std::vector<ExactDivision> &out,
                           llvm::SmallVectorImpl<const ModelInfo *> &path) {
  auto add = [&](const ExactDivision &d) {
    if (d.divisor.asConstant() && d.numerator.asConstant())
      return; // reported (or fine) where it became constant
    if (d.numerator.exactDiv(d.divisor))
      return;
    for (const ExactDivision &e : out)
      if (e.numerator == d.numerator && e.divisor == d.divisor)
        return;
    out.push_back(d);
  };
  for (const ExactDivision &d : model.exactDivisions)
    add(d);
  forEachNestedInstance(model, depth, path,
                        [&](const SubmodelInfo &sub, const ModelInstance &inst) {
                          std::vector<ExactDivision> inner;
                          collectExactDivisions(*inst.model, depth + 1, inner, path);
                          Substitution subst = substitutionFor(inst);
                          for (const ExactDivision &d : inner)
                            add({subst.apply(d.numerator), subst.apply(d.divisor),
                                 sub.decl ? sub.decl->init->range : d.range});
                        });
}

void collectRequirements(const ModelInfo &model, unsigned depth, std::vector<Requirement> &out,
                         llvm::SmallVectorImpl<const ModelInfo *> &path) {
  out.insert(out.end(), model.requirements.begin(), model.requirements.end());
  forEachNestedInstance(
      model, depth, path, [&](const SubmodelInfo &sub, const ModelInstance &inst) {
        std::vector<Requirement> inner;
        collectRequirements(*inst.model, depth + 1, inner, path);
        Substitution subst = substitutionFor(inst);
        for (Requirement r : inner) {
          r.condition = r.condition->substituted(subst);
          // A submodel that exists only under a condition asserts only there.
          if (!sub.presence.always())
            r.condition = Condition::either(Condition::negate(sub.presence.condition), r.condition);
          out.push_back(std::move(r));
        }
      });
}

bool collectState(const ModelInstance &inst, const StateAffixes &affixes, const std::string &path,
                  unsigned depth, std::vector<InstantiatedState> &out,
                  std::vector<std::string> &paths, std::string &error) {
  if (depth > kMaxNesting) {
    error =
        "submodels nest deeper than " + std::to_string(kMaxNesting) + " levels at `" + path + "`";
    return false;
  }
  Substitution subst = substitutionFor(inst);
  for (const StateInfo &s : inst.model->state)
    if (presentIn(s.presence, subst)) {
      out.push_back({affixes.name(s.name), s.isBuffer, subst.apply(s.type), s.fillValue});
      paths.push_back(path + s.name);
    }
  for (const SubmodelInfo &sub : inst.model->submodels) {
    if (!presentIn(sub.presence, subst))
      continue;
    Type t = subst.apply(sub.type);
    if (t.kind() == Type::Kind::Model && t.instance) {
      if (!collectState(*t.instance, affixes.nested(stateAffixes(sub, subst, std::nullopt)),
                        path + sub.name + ".", depth + 1, out, paths, error))
        return false;
    } else if (t.kind() == Type::Kind::ModelList && t.instances) {
      for (size_t i = 0; i < t.instances->size(); ++i)
        if (!collectState(*(*t.instances)[i], affixes.nested(stateAffixes(sub, subst, i)),
                          path + sub.name + "." + std::to_string(i) + ".", depth + 1, out, paths,
                          error))
          return false;
    }
  }
  return true;
}

} // namespace

StateAffixes modelc::sema::stateAffixes(const SubmodelInfo &sub, const Substitution &outer,
                                        std::optional<size_t> index) {
  if (!sub.stateNames)
    return {sub.name + "." + (index ? std::to_string(*index) + "." : std::string()), ""};
  StateAffixes affixes;
  std::string *side = &affixes.prefix;
  for (const StateNames::Part &part : sub.stateNames->parts) {
    switch (part.kind) {
    case StateNames::Part::Kind::Text:
      *side += part.text;
      break;
    case StateNames::Part::Kind::Inner:
      side = &affixes.suffix;
      break;
    case StateNames::Part::Kind::Value: {
      Dim value = outer.apply(part.value);
      if (part.isIndex)
        value = value + Dim::constant(int64_t(index.value_or(0)));
      std::optional<int64_t> n = value.asConstant();
      *side += n ? std::to_string(*n) : value.str();
      break;
    }
    }
  }
  return affixes;
}

std::vector<Requirement> modelc::sema::requiredConditions(const ModelInfo &model) {
  std::vector<Requirement> out;
  llvm::SmallVector<const ModelInfo *, 8> path;
  collectRequirements(model, 0, out, path);
  return out;
}

const Requirement *modelc::sema::firstUnmet(llvm::ArrayRef<Requirement> required,
                                            const Substitution &subst) {
  for (const Requirement &r : required)
    if (r.condition->evaluate(subst) == false)
      return &r;
  return nullptr;
}

std::vector<ExactDivision> modelc::sema::requiredExactDivisions(const ModelInfo &model) {
  std::vector<ExactDivision> out;
  llvm::SmallVector<const ModelInfo *, 8> path;
  collectExactDivisions(model, 0, out, path);
  return out;
}

std::optional<std::string> modelc::sema::inexactDivisionDetail(const ExactDivision &division,
                                                               Dim numerator, Dim divisor) {
  std::optional<int64_t> n = numerator.asConstant(), d = divisor.asConstant();
  if (!n || !d || (*d > 0 && *n % *d == 0))
    return std::nullopt;
  return "`" + division.numerator.str() + "` = " + std::to_string(*n) + " is " +
         (*d > 0 ? "not divisible by" : "divided by the non-positive") + " `" +
         division.divisor.str() + "` = " + std::to_string(*d);
}

std::optional<InstantiatedModel> CheckedProgram::instantiate(const ModelInfo &model,
                                                             llvm::ArrayRef<Device> devices,
                                                             llvm::ArrayRef<int64_t> values,
                                                             std::string &error) const {
  if (devices.size() != model.decl->deviceParams.size()) {
    error = "model `" + model.name + "` takes " + std::to_string(model.decl->deviceParams.size()) +
            " device argument(s) but " + std::to_string(devices.size()) + " were given";
    return std::nullopt;
  }
  for (const Device &d : devices) {
    if (!d.isConcrete()) {
      error = "instantiation needs concrete devices (cpu or cuda:N)";
      return std::nullopt;
    }
  }
  size_t slots = model.valueSlotCount();
  if (values.size() > slots) {
    error = "model `" + model.name + "` takes " + std::to_string(slots) +
            " argument value(s) but " + std::to_string(values.size()) + " were given";
    return std::nullopt;
  }
  auto inst = std::make_shared<ModelInstance>();
  inst->model = &model;
  inst->devices.append(devices.begin(), devices.end());
  for (const ValueParamInfo &p : model.valueParams) {
    for (unsigned k = 0; k < p.slotCount(); ++k) {
      size_t i = p.firstSlot + k;
      if (i < values.size()) {
        if (p.kind == ast::ScalarKind::Option &&
            (values[i] < 0 || values[i] >= int64_t(p.options.size()))) {
          error = "argument `" + p.name + "` of model `" + model.name + "` has no option " +
                  std::to_string(values[i]);
          return std::nullopt;
        }
        if (p.kind == ast::ScalarKind::DType &&
            (values[i] < 0 || values[i] > int64_t(ast::DType::Bool) ||
             !ast::isFloating(ast::DType(values[i])))) {
          error = "argument `" + p.name + "` of model `" + model.name +
                  "` takes a floating dtype (f16, bf16, f32 or f64)";
          return std::nullopt;
        }
        inst->values.push_back(p.hasDimValue() ? std::optional<Dim>(Dim::constant(values[i]))
                                               : std::nullopt);
      } else if (std::optional<Dim> d = defaultSlotValue(model, p, k, inst->values)) {
        inst->values.push_back(d);
      } else if (!p.hasDimValue() && p.hasDefault) {
        inst->values.push_back(std::nullopt);
      } else {
        error = "missing argument `" + p.name + "` of model `" + model.name + "`";
        return std::nullopt;
      }
    }
  }
  {
    Substitution subst = substitutionFor(*inst);
    for (const ExactDivision &d : requiredExactDivisions(model)) {
      if (std::optional<std::string> detail =
              inexactDivisionDetail(d, subst.apply(d.numerator), subst.apply(d.divisor))) {
        error = "[E0409] the dimension `" + d.numerator.exactQuotient(d.divisor).str() +
                "` of model `" + model.name + "` is not an exact division: " + *detail;
        return std::nullopt;
      }
    }
    std::vector<Requirement> required = requiredConditions(model);
    if (const Requirement *r = firstUnmet(required, subst)) {
      error = "[E0118] model `" + model.name + "` is built with arguments that fail `assert " +
              r->text + "` (in `" + r->model + "`)" +
              (r->message.empty() ? std::string() : ": " + r->message);
      return std::nullopt;
    }
  }
  InstantiatedModel result;
  result.model = &model;
  std::vector<std::string> paths;
  if (!collectState(*inst, {}, "", 0, result.state, paths, error))
    return std::nullopt;
  // `as` templates may give two states one name; the weights file could
  // then not tell them apart.
  llvm::StringMap<size_t> byName;
  for (size_t i = 0; i < result.state.size(); ++i) {
    auto [it, inserted] = byName.try_emplace(result.state[i].name, i);
    if (!inserted) {
      error = "[E0119] `" + paths[it->second] + "` and `" + paths[i] + "` of model `" + model.name +
              "` are both named `" + result.state[i].name +
              "` in the weights file (their submodels' `as` names)";
      return std::nullopt;
    }
  }
  Substitution subst = substitutionFor(*inst);
  for (const FnInfo &fn : model.fns) {
    FnInfo concrete = fn;
    // A fn's own dtype parameters (`fn forward<T: dtype>`) are bound by its
    // callers; run as an entry fn, they are f32.
    Substitution fnSubst = subst;
    for (const FnDTypeParam &d : fn.dtypeParams)
      fnSubst.dims.push_back({d.atom, ElementType(ast::DType::F32).asDim()});
    for (FnParamInfo &p : concrete.params)
      p.type = fnSubst.apply(p.type);
    concrete.result = fnSubst.apply(fn.result);
    result.fns.push_back(std::move(concrete));
  }
  return result;
}
