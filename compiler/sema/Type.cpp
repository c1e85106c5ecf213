//===- Type.cpp - Printing and substituting types -------------------------===//

#include "sema/Type.h"
#include "sema/CheckedProgram.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace modelc;
using namespace modelc::sema;

std::string Device::str() const {
  switch (kind) {
  case Kind::Cpu:
    return "cpu";
  case Kind::Cuda:
    return "cuda:" + std::to_string(index);
  case Kind::Param:
    if (model && index >= 0 && size_t(index) < model->deviceParams.size())
      return model->deviceParams[index].name.name;
    return "?";
  case Kind::Var:
    return "?";
  }
  return "?";
}

std::optional<ElementType> ElementType::fromDim(Dim value) {
  if (std::optional<AtomId> atom = value.asAtom())
    return parameter(*atom);
  std::optional<int64_t> k = value.asConstant();
  if (!k || *k < 0 || *k > int64_t(ast::DType::Bool))
    return std::nullopt;
  return ElementType(ast::DType(*k));
}

Dim ElementType::asDim() const {
  return isParam_ ? Dim::atom(param_) : Dim::constant(int64_t(concrete_));
}

std::string ElementType::str() const {
  return isParam_ ? atomName(param_).str() : ast::dtypeName(concrete_).str();
}

std::string Shape::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  bool first = true;
  if (hasPack()) {
    os << "...";
    first = false;
  }
  for (Dim d : dims) {
    os << (first ? "" : ", ") << d;
    first = false;
  }
  os << "]";
  return s;
}

Dim Shape::numElements() const {
  Dim n = Dim::constant(1);
  for (Dim d : dims)
    n = n * d;
  return n;
}

std::string ModelInstance::str() const {
  std::string s = "model " + (model ? model->name : std::string("?"));
  if (!devices.empty()) {
    s += "<";
    for (size_t i = 0; i < devices.size(); ++i)
      s += (i ? ", " : "") + devices[i].str();
    s += ">";
  }
  return s;
}

Type Type::tensor(ElementType dtype, Shape shape, Device device) {
  Type t(Kind::Tensor);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.dev = device;
  return t;
}

Type Type::integer(std::optional<Dim> value) {
  Type t(Kind::Int);
  t.intValue = value;
  return t;
}

Type Type::device(Device d) {
  Type t(Kind::Device);
  t.dev = d;
  return t;
}

Type Type::dtypeValue(ElementType d) {
  Type t(Kind::DType);
  t.dtype = d;
  return t;
}

Type Type::model(std::shared_ptr<const ModelInstance> inst) {
  Type t(Kind::Model);
  t.instance = std::move(inst);
  return t;
}

Type Type::modelList(std::vector<std::shared_ptr<const ModelInstance>> insts) {
  Type t(Kind::ModelList);
  t.instances =
      std::make_shared<const std::vector<std::shared_ptr<const ModelInstance>>>(std::move(insts));
  return t;
}

Type Type::repeatedModel(std::shared_ptr<const ModelInstance> inst, Dim count) {
  if (std::optional<int64_t> n = count.asConstant())
    return modelList(std::vector<std::shared_ptr<const ModelInstance>>(
        size_t(std::max<int64_t>(*n, 0)), std::move(inst)));
  Type t = modelList({std::move(inst)});
  t.repeat = count;
  return t;
}

std::optional<int64_t> Type::listLength() const {
  if (kind_ != Kind::ModelList || !instances || repeat)
    return std::nullopt;
  return int64_t(instances->size());
}

Type Type::list(std::vector<Type> elements) {
  Type t(Kind::List);
  t.elements = std::make_shared<const std::vector<Type>>(std::move(elements));
  return t;
}

Type Type::tuple(std::vector<Type> elements) {
  Type t(Kind::Tuple);
  t.elements = std::make_shared<const std::vector<Type>>(std::move(elements));
  return t;
}

Type Type::module(const ast::Module *module) {
  Type t(Kind::Module);
  t.moduleDecl = module;
  return t;
}

Type Type::builtin(llvm::StringRef name) {
  Type t(Kind::Builtin);
  t.builtinName = name;
  return t;
}

std::string Type::str() const {
  switch (kind_) {
  case Kind::Error:
    return "{error}";
  case Kind::Void:
    return "()";
  case Kind::Tensor:
    // A device not inferred yet is left out (`f32[4, 4]`), not shown as `?`.
    return dtype.str() + shape.str() + (dev.isVar() ? "" : " @ " + dev.str());
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Bool:
    return "bool";
  case Kind::String:
    return "string";
  case Kind::Device:
    return "device";
  case Kind::DType:
    return "dtype";
  case Kind::Model:
    return instance ? instance->str() : "model";
  case Kind::ModelList:
    if (instances && !instances->empty())
      return "[" + instances->front()->str() + "; " +
             (repeat ? repeat->str() : std::to_string(instances->size())) + "]";
    return "[]";
  case Kind::List:
  case Kind::Tuple: {
    std::string s = kind_ == Kind::List ? "[" : "(";
    if (elements)
      for (size_t i = 0; i < elements->size(); ++i)
        s += (i ? ", " : "") + (*elements)[i].str();
    return s + (kind_ == Kind::List ? "]" : ")");
  }
  case Kind::Module:
    return "module " + (moduleDecl ? moduleDecl->fileName : std::string());
  case Kind::Builtin:
    return "built-in fn " + builtinName.str();
  }
  return "?";
}

std::optional<Dim> Substitution::lookup(AtomId atom) const {
  for (const auto &[from, to] : dims)
    if (from == atom)
      return to;
  return std::nullopt;
}

Dim Substitution::apply(Dim d) const {
  if (dims.empty())
    return d;
  return d.substitute([&](AtomId a) { return lookup(a); });
}

Device Substitution::apply(const Device &d) const {
  if (d.kind == Device::Kind::Param && d.model == model && d.index >= 0 &&
      size_t(d.index) < devices.size())
    return devices[d.index];
  return d;
}

ElementType Substitution::apply(const ElementType &e) const {
  if (std::optional<AtomId> atom = e.param())
    if (std::optional<Dim> value = lookup(*atom))
      if (std::optional<ElementType> to = ElementType::fromDim(*value))
        return *to;
  return e;
}

Shape Substitution::apply(const Shape &s) const {
  Shape out;
  out.pack = s.pack;
  if (packFrom != 0 && s.pack == packFrom) {
    out.pack = packTo;
    out.dims.append(packDims.begin(), packDims.end());
  }
  for (Dim d : s.dims)
    out.dims.push_back(apply(d));
  return out;
}

Type Substitution::apply(const Type &t) const {
  Type out = t;
  switch (t.kind()) {
  case Type::Kind::Tensor:
    out.dtype = apply(t.dtype);
    out.shape = apply(t.shape);
    out.dev = apply(t.dev);
    break;
  case Type::Kind::DType:
    out.dtype = apply(t.dtype);
    break;
  case Type::Kind::Int:
  case Type::Kind::Bool:
  case Type::Kind::String:
    if (t.intValue)
      out.intValue = apply(*t.intValue);
    break;
  case Type::Kind::Device:
    out.dev = apply(t.dev);
    break;
  case Type::Kind::Model:
  case Type::Kind::ModelList: {
    auto applyInst = [&](const ModelInstance &inst) {
      auto copy = std::make_shared<ModelInstance>(inst);
      for (Device &d : copy->devices)
        d = apply(d);
      for (std::optional<Dim> &v : copy->values)
        if (v)
          v = apply(*v);
      return std::shared_ptr<const ModelInstance>(std::move(copy));
    };
    if (t.kind() == Type::Kind::Model && t.instance)
      return Type::model(applyInst(*t.instance));
    if (t.kind() == Type::Kind::ModelList && t.instances) {
      std::vector<std::shared_ptr<const ModelInstance>> insts;
      for (const auto &inst : *t.instances)
        insts.push_back(applyInst(*inst));
      if (t.repeat && !insts.empty())
        return Type::repeatedModel(insts.front(), apply(*t.repeat));
      return Type::modelList(std::move(insts));
    }
    break;
  }
  case Type::Kind::List:
  case Type::Kind::Tuple:
    if (t.elements) {
      std::vector<Type> elements;
      for (const Type &e : *t.elements)
        elements.push_back(apply(e));
      return t.kind() == Type::Kind::List ? Type::list(std::move(elements))
                                          : Type::tuple(std::move(elements));
    }
    break;
  default:
    break;
  }
  return out;
}
