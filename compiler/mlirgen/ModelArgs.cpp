//===- ModelArgs.cpp - A model instantiated from command-line arguments ---===//

#include "mlirgen/ModelArgs.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace modelc;
using namespace modelc::mlirgen;

namespace {

llvm::Error argError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The value of a literal default (`0.1`, `-1`, `true`), if it is one.
std::optional<double> literalValue(const ast::Expr *expr) {
  if (!expr)
    return std::nullopt;
  if (auto *i = llvm::dyn_cast<ast::IntLitExpr>(expr))
    return double(i->value);
  if (auto *f = llvm::dyn_cast<ast::FloatLitExpr>(expr))
    return f->value;
  if (auto *b = llvm::dyn_cast<ast::BoolLitExpr>(expr))
    return b->value ? 1.0 : 0.0;
  if (auto *u = llvm::dyn_cast<ast::UnaryExpr>(expr))
    if (u->op == ast::UnaryOp::Neg)
      if (std::optional<double> v = literalValue(u->operand.get()))
        return -*v;
  return std::nullopt;
}

/// `7` (every element) or `(1,7)` with `arity` ints.
bool parseIntTuple(llvm::StringRef text, unsigned arity, llvm::SmallVectorImpl<int64_t> &out) {
  text = text.trim();
  int64_t one = 0;
  if (!text.getAsInteger(10, one)) {
    out.assign(arity, one);
    return true;
  }
  if (!text.consume_front("(") || !text.consume_back(")"))
    return false;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, ',');
  if (parts.size() != arity)
    return false;
  for (llvm::StringRef part : parts) {
    int64_t v = 0;
    if (part.trim().getAsInteger(10, v))
      return false;
    out.push_back(v);
  }
  return true;
}

llvm::Error missingArg(const sema::ModelInfo &model, llvm::StringRef name) {
  return argError("missing model argument '" + name + "' of model '" + model.name +
                  "'; give it with `--args " + name + "=VALUE` (" + modelSignature(*model.decl) +
                  ")");
}

/// `args` split at the commas outside parentheses (`kernel_size=(1,7),stride=2`).
llvm::SmallVector<llvm::StringRef, 8> splitArgs(llvm::StringRef args) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= args.size(); ++i) {
    char c = i < args.size() ? args[i] : ',';
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c != ',' || depth > 0)
      continue;
    if (!args.slice(start, i).trim().empty())
      parts.push_back(args.slice(start, i));
    start = i + 1;
  }
  return parts;
}

/// `in=784, hidden=256` by name.
llvm::Expected<llvm::StringMap<std::string>> parseArgs(llvm::StringRef args) {
  llvm::StringMap<std::string> given;
  for (llvm::StringRef part : splitArgs(args)) {
    auto [name, value] = part.split('=');
    name = name.trim();
    value = value.trim();
    if (name.empty() || value.empty() || !part.contains('='))
      return argError("malformed model argument '" + part + "' (expected name=value)");
    if (!given.try_emplace(name, value.str()).second)
      return argError("model argument '" + name + "' is given twice");
  }
  return given;
}

/// Whether `--args` = `given` names only parameters of `model` and leaves
/// out none without a default.
bool argsComplete(const sema::ModelInfo &model, const llvm::StringMap<std::string> &given) {
  for (const auto &entry : given)
    if (llvm::none_of(model.valueParams,
                      [&](const sema::ValueParamInfo &p) { return p.name == entry.getKey(); }))
      return false;
  return llvm::all_of(model.valueParams, [&](const sema::ValueParamInfo &p) {
    return p.hasDefault || given.contains(p.name);
  });
}

} // namespace

std::string mlirgen::modelSignature(const ast::ModelDecl &model) {
  std::string text = model.name.name;
  for (size_t i = 0; i < model.deviceParams.size(); ++i)
    text += (i ? ", " : "<") + model.deviceParams[i].name.name + ": device" +
            (i + 1 == model.deviceParams.size() ? ">" : "");
  text += "(";
  for (size_t i = 0; i < model.valueParams.size(); ++i)
    text += (i ? ", " : "") + model.valueParams[i].range.text().str();
  return text + ")";
}

llvm::Expected<std::string> mlirgen::chooseModel(const sema::CheckedProgram &program,
                                                 const ast::Module &file, llvm::StringRef args,
                                                 llvm::StringRef fnName) {
  llvm::Expected<llvm::StringMap<std::string>> given = parseArgs(args);
  if (!given)
    return given.takeError();
  std::vector<const sema::ModelInfo *> models, usable;
  for (const auto &m : program.models)
    if (m->module == &file)
      models.push_back(m.get());
  for (const sema::ModelInfo *m : models)
    if (argsComplete(*m, *given) &&
        llvm::any_of(m->fns, [&](const sema::FnInfo &fn) { return fn.name == fnName; }))
      usable.push_back(m);
  // A helper block of the file is a submodel of the model that uses it.
  if (usable.size() > 1) {
    std::vector<const sema::ModelInfo *> roots;
    for (const sema::ModelInfo *m : usable) {
      bool used = llvm::any_of(models, [&](const sema::ModelInfo *user) {
        return llvm::any_of(user->submodels, [&](const sema::SubmodelInfo &s) {
          if (s.type.instance && s.type.instance->model == m)
            return true;
          return s.type.instances &&
                 llvm::any_of(*s.type.instances, [&](const auto &i) { return i->model == m; });
        });
      });
      if (!used)
        roots.push_back(m);
    }
    if (roots.size() == 1)
      usable = roots;
  }
  if (usable.size() == 1)
    return usable.front()->name;

  std::string message;
  if (models.empty())
    message = "'" + file.fileName + "' declares no model";
  else if (usable.empty())
    message = "no model of '" + file.fileName + "' has fn `" + fnName.str() +
              "` and every value argument given (--args) or defaulted; name one with "
              "`--model NAME` and give its arguments with `--args NAME=VALUE,...`. Its models:";
  else
    message = "'" + file.fileName + "' has several models that could run; name one with " +
              "`--model NAME`. Its models:";
  for (const sema::ModelInfo *m : models)
    message += "\n  " + modelSignature(*m->decl);
  return argError(message);
}

const sema::FnInfo *ConcreteModel::findFn(llvm::StringRef name) const {
  for (const sema::FnInfo &fn : concrete.fns)
    if (fn.name == name)
      return &fn;
  return nullptr;
}

llvm::Expected<sema::Device> mlirgen::parseDevice(llvm::StringRef text) {
  if (text == "cpu")
    return sema::Device::cpu();
  llvm::StringRef index = text;
  int64_t n = 0;
  if (index.consume_front("cuda:") && !index.getAsInteger(10, n) && n >= 0)
    return sema::Device::cuda(n);
  return argError("invalid device '" + text + "' (expected cpu or cuda:N)");
}

llvm::Expected<ConcreteModel> mlirgen::instantiateModel(const sema::CheckedProgram &program,
                                                        llvm::StringRef modelName,
                                                        llvm::StringRef args, sema::Device device) {
  const sema::ModelInfo *model = nullptr;
  for (const auto &m : program.models)
    if (m->name == modelName) {
      model = m.get();
      break; // the main module comes first
    }
  if (!model) {
    std::string names;
    for (const auto &m : program.models)
      if (m->module == program.models.front()->module)
        names += (names.empty() ? "" : ", ") + m->name;
    return argError("no model named '" + modelName + "'" +
                    (names.empty() ? "" : " (models: " + names + ")"));
  }

  llvm::Expected<llvm::StringMap<std::string>> givenOrError = parseArgs(args);
  if (!givenOrError)
    return givenOrError.takeError();
  llvm::StringMap<std::string> &given = *givenOrError;
  for (const auto &entry : given)
    if (llvm::none_of(model->valueParams,
                      [&](const sema::ValueParamInfo &p) { return p.name == entry.getKey(); }))
      return argError("model '" + modelName + "' has no argument named '" + entry.getKey() + "'");

  ConcreteModel result;
  // One per value slot (ValueParamInfo::firstSlot): a tuple has one per element.
  llvm::SmallVector<int64_t, 8> ints;
  for (const sema::ValueParamInfo &p : model->valueParams) {
    auto it = given.find(p.name);
    const ast::ValueParam *decl = nullptr;
    for (const ast::ValueParam &vp : model->decl->valueParams)
      if (vp.name.name == p.name)
        decl = &vp;
    if (p.isTuple()) {
      llvm::SmallVector<int64_t, 2> values;
      if (it != given.end()) {
        if (!parseIntTuple(it->second, p.slotCount(), values))
          return argError("model argument '" + p.name + "' must be an int or " +
                          std::to_string(p.slotCount()) + " ints in parentheses (" + p.name +
                          "=(1,7)), got '" + it->second + "'");
      } else {
        llvm::SmallVector<std::optional<sema::Dim>, 8> earlier;
        for (int64_t v : ints)
          earlier.push_back(sema::Dim::constant(v));
        for (unsigned k = 0; k < p.slotCount(); ++k) {
          std::optional<sema::Dim> d = sema::defaultSlotValue(*model, p, k, earlier);
          std::optional<int64_t> v = d ? d->asConstant() : std::nullopt;
          if (!v)
            return missingArg(*model, p.name);
          values.push_back(*v);
        }
      }
      ints.append(values.begin(), values.end());
      continue;
    }
    if (p.kind == ast::ScalarKind::Option) {
      // `activation=gelu` (or `"gelu"`): the option's index.
      int64_t value = 0;
      if (it != given.end()) {
        llvm::StringRef text = llvm::StringRef(it->second);
        if (text.size() >= 2 && text.front() == '"' && text.back() == '"')
          text = text.drop_front().drop_back();
        std::optional<int64_t> index = p.optionIndex(text);
        if (!index) {
          std::string options;
          for (const std::string &o : p.options)
            options += (options.empty() ? "" : ", ") + o;
          return argError("model argument '" + p.name + "' has no option '" + text +
                          "' (options: " + options + ")");
        }
        value = *index;
      } else if (p.defaultInt) {
        value = *p.defaultInt;
      } else if (p.defaultParam) {
        value = ints[model->valueParams[*p.defaultParam].firstSlot];
      } else {
        return argError("missing model argument '" + p.name + "' of model '" + modelName + "'");
      }
      ints.push_back(value);
      continue;
    }
    if (p.kind == ast::ScalarKind::DType) {
      // `dtype=bf16`: the dtype's index (sema::ElementType::asDim).
      int64_t value = 0;
      if (it != given.end()) {
        std::optional<ast::DType> dtype = ast::dtypeFromName(it->second);
        if (!dtype || !ast::isFloating(*dtype))
          return argError("model argument '" + p.name + "' must be a floating dtype (f16, bf16, " +
                          "f32 or f64), got '" + it->second + "'");
        value = int64_t(*dtype);
      } else if (p.defaultInt) {
        value = *p.defaultInt;
      } else if (p.defaultParam) {
        value = ints[model->valueParams[*p.defaultParam].firstSlot];
      } else {
        return missingArg(*model, p.name);
      }
      ints.push_back(value);
      continue;
    }
    if (p.kind == ast::ScalarKind::Int) {
      int64_t value = 0;
      if (it != given.end()) {
        if (llvm::StringRef(it->second).getAsInteger(10, value))
          return argError("model argument '" + p.name + "' must be an int, got '" + it->second +
                          "'");
      } else if (p.defaultInt) {
        value = *p.defaultInt;
      } else if (p.defaultParam) {
        value = ints[model->valueParams[*p.defaultParam].firstSlot]; // `stride: int = kernel`
      } else {
        return missingArg(*model, p.name);
      }
      ints.push_back(value);
      continue;
    }
    double value = 0;
    if (it != given.end()) {
      llvm::StringRef text = it->second;
      if (p.kind == ast::ScalarKind::Bool && (text == "true" || text == "false"))
        value = text == "true";
      else if (p.kind != ast::ScalarKind::Float || text.getAsDouble(value))
        return argError("model argument '" + p.name + "' must be a " + ast::scalarKindName(p.kind) +
                        ", got '" + text + "'");
    } else if (std::optional<double> d = literalValue(decl ? decl->defaultValue.get() : nullptr)) {
      value = *d;
    } else if (p.defaultParam) {
      // `momentum: float = eps`: an earlier float (or int) param's value.
      const sema::ValueParamInfo &from = model->valueParams[*p.defaultParam];
      value = from.kind == ast::ScalarKind::Int ? double(ints[from.firstSlot])
                                                : result.scalarArgs[from.name];
    } else {
      return missingArg(*model, p.name);
    }
    result.scalarArgs[p.name] = value;
    ints.push_back(int64_t(value)); // a bool is 0 or 1; instantiate ignores floats
  }

  llvm::SmallVector<sema::Device, 2> devices(model->decl->deviceParams.size(), device);
  std::string error;
  std::optional<sema::InstantiatedModel> concrete =
      program.instantiate(*model, devices, ints, error);
  if (!concrete)
    return argError(error);
  result.concrete = std::move(*concrete);
  result.instance = std::make_shared<sema::ModelInstance>();
  result.instance->model = model;
  result.instance->devices.append(devices.begin(), devices.end());
  for (const sema::ValueParamInfo &p : model->valueParams)
    for (unsigned k = 0; k < p.slotCount(); ++k)
      result.instance->values.push_back(
          p.hasDimValue() ? std::optional<sema::Dim>(sema::Dim::constant(ints[p.firstSlot + k]))
                          : std::nullopt);
  return result;
}
