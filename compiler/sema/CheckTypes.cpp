//===- CheckTypes.cpp - Types as written in the source --------------------===//
//
// Devices, dims (symbolic sizes, arithmetic on value parameters, exact
// divisions) and tensor types written in declarations and annotations.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Casting.h"

#include <functional>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

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
            llvm::none_of(model.valueParams,
                          [&](const ValueParamInfo &p) { return p.standsFor(a); }))
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
      // A bool counts as 0 or 1, as Python's int(True): PyTorch's
      // `2 if bidirectional else 1` directions is `1 + bidirectional`.
      if (p.isTuple()) {
        diags_.report(DiagId::TypeMismatch, dim.range, "int", p.typeName())
            .primary("a dimension is one int")
            .help("use one element of `" + p.name + "`", {{dim.range, p.name + "[0]"}},
                  Applicability::MaybeIncorrect);
        return std::nullopt;
      }
      if (p.kind != ast::ScalarKind::Int && p.kind != ast::ScalarKind::Bool) {
        diags_.report(DiagId::TypeMismatch, dim.range, "int", ast::scalarKindName(p.kind))
            .primary("a dimension must be an `int` (or a `bool`, 0 or 1)");
        return std::nullopt;
      }
      return Dim::atom(p.atom);
    }
    if (sigDTypes_ &&
        llvm::any_of(*sigDTypes_, [&](const FnDTypeParam &p) { return p.name == dim.name; })) {
      diags_.report(DiagId::TypeMismatch, dim.range, "int", "dtype")
          .primary("`" + dim.name + "` is a dtype parameter of this fn, not a dimension");
      return std::nullopt;
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
  case ast::DimExpr::Kind::Element:
    return tupleElementDim(model, dim);
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
    case ast::ScalarKind::DType:
      return Type::dtypeValue(ast::DType::F32);
    }
  }
  std::optional<ElementType> dtype = type.dtype;
  if (type.dtypeParam)
    dtype = dtypeParamFromName(model, *type.dtypeParam);
  Shape shape;
  bool ok = dtype.has_value();
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
    // The device the model's fns name, where they name one (`@ cpu`).
    std::string device = "cuda:0";
    auto named = [&](const ast::TypeExpr *t) {
      if (t && t->device && t->device->kind != ast::DeviceExpr::Kind::Var)
        device = t->device->range.text().str();
    };
    for (const ast::FnDecl &fn : llvm::reverse(model.decl->fns)) {
      named(fn.result.get());
      for (const ast::FnParam &param : llvm::reverse(fn.params))
        named(param.type.get());
    }
    auto diag = diags_.report(DiagId::NoDeviceForState, type.range, subject, model.name);
    diag.primary("this type names no device")
        .help("make the model device-generic", {{model.decl->name.range.after(), "<D: device>"}},
              Applicability::MaybeIncorrect)
        .help("or give the type an explicit device", {{type.range.after(), " @ " + device}},
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
  return Type::tensor(*dtype, std::move(shape), *device);
}

std::optional<ElementType> Checker::dtypeParamFromName(const ModelInfo &model,
                                                       const ast::Ident &name) {
  for (const ValueParamInfo &p : model.valueParams)
    if (p.name == name.name && p.kind == ast::ScalarKind::DType)
      return ElementType::parameter(p.atom);
  if (sigDTypes_)
    for (const FnDTypeParam &p : *sigDTypes_)
      if (p.name == name.name)
        return ElementType::parameter(p.atom);
  auto diag = diags_.report(DiagId::UnknownName, name.range, name.name);
  diag.primary("not a dtype");
  helpWithTorchDTypeName(diag, name.name, name.range);
  std::string params;
  for (const ValueParamInfo &p : model.valueParams)
    if (p.kind == ast::ScalarKind::DType)
      params += (params.empty() ? "`" : ", `") + p.name + "`";
  diag.note("a tensor type starts with a dtype (f16, bf16, f32, f64, i32, i64, bool)" +
            (params.empty() ? std::string(" or a dtype parameter of the model (`dtype: dtype`)")
                            : " or a dtype parameter of `" + model.name + "` (" + params + ")"));
  return std::nullopt;
}

std::optional<ast::DType> modelc::sema::dtypeOfTorchName(llvm::StringRef name) {
  name.consume_front("torch.");
  return llvm::StringSwitch<std::optional<ast::DType>>(name)
      .Cases({"float16", "half", "fp16"}, ast::DType::F16)
      .Cases({"bfloat16", "bf16"}, ast::DType::BF16)
      .Cases({"float32", "float", "fp32"}, ast::DType::F32)
      .Cases({"float64", "double", "fp64"}, ast::DType::F64)
      .Case("int32", ast::DType::I32)
      .Cases({"int64", "long"}, ast::DType::I64)
      .Default(std::nullopt);
}

void modelc::sema::helpWithTorchDTypeName(DiagnosticBuilder &diag, llvm::StringRef name, Range at) {
  if (std::optional<ast::DType> torch = dtypeOfTorchName(name))
    diag.help("PyTorch's " + name.str() + " is written " + ast::dtypeName(*torch).str(),
              {{at, ast::dtypeName(*torch).str()}});
}
