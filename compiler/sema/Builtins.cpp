//===- Builtins.cpp - Typing rules of the built-in functions --------------===//
//
// Every built-in is declared once in kBuiltins with its parameter names
// (`?` marks optional ones); calls bind positional and named arguments to
// them, then one typing rule per built-in checks dtypes, devices and shapes.
// Every tensor operand of every op (index tensors and class weights
// included) must be on one device.
//
// This file: the table, binding, the argument accessors and the dispatch to
// the rules; the rules live by family (listed in BuiltinCall.h).
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinCall.h"
#include "sema/BuiltinList.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Casting.h"

using namespace modelc;
using namespace modelc::sema;
using llvm::dyn_cast;
using namespace modelc::sema::detail;

namespace modelc::sema::detail {

// The parameter lists as calls write them ("x dim? keepdim? "), from the
// same list as the slot constants (BuiltinSlots.h).
#define REQ(param) #param " "
#define OPT(param) #param "? "
#define BUILTIN(name, id, params) {#name, BI::id, params},
constexpr Spec kBuiltins[] = {
#include "sema/Builtins.def"
};
#undef BUILTIN
#undef OPT
#undef REQ

constexpr bool fitsSlots() {
  for (const Spec &s : kBuiltins) {
    size_t count = 0;
    for (const char *p = s.params; *p; ++p)
      count += *p == ' ';
    if (count > kMaxParams)
      return false;
  }
  return true;
}
static_assert(fitsSlots(), "a built-in has more parameters than BuiltinCall has slots");

const Spec *findSpec(llvm::StringRef name) {
  for (const Spec &s : kBuiltins)
    if (s.name == name)
      return &s;
  return nullptr;
}

bool BuiltinCall::bind(const Value *receiver) {
  bool ok = true;
  size_t positional = 0;
  if (receiver) {
    args[0] = BoundArg{receiver->expr, *receiver};
    given[0] = true;
    positional = 1;
    receiver_ = receiver;
  }
  for (const ast::Arg &arg : call.args) {
    if (!arg.value)
      continue;
    Value v = c.checkExpr(*arg.value);
    size_t slot;
    if (arg.name) {
      auto it = llvm::find(names, arg.name->name);
      if (it == names.end()) {
        auto diag = c.diags_.report(DiagId::UnknownNamedArgument, arg.name->range, spec.name,
                                    arg.name->name);
        diag.primary("parameters are: " + llvm::join(names, ", "));
        // PyTorch's `zeros(..., device=d)`: the device is written after the
        // value (`@ D`), or left to inference from the value's use.
        if (arg.name->name == "device")
          c.helpWithDeviceArgument(diag, call, arg);
        ok = false;
        continue;
      }
      slot = size_t(it - names.begin());
    } else {
      while (positional < names.size() && given[positional])
        ++positional;
      slot = positional++;
      if (slot >= names.size()) {
        if (slot == names.size()) {
          auto diag = c.reportArgumentCount(arg.range, spec.name, requiredCount(), names.size(),
                                            givenCount(), signature(), "unexpected argument");
          // PyTorch's `x.reshape(B, -1)`, `x.permute(0, 2, 3, 1)`: sizes and
          // dims one by one, where here they are one list (the last slot).
          size_t listArg = names.size() - 1 - (receiver ? 1 : 0);
          if (spec.name == "reshape" || spec.name == "permute")
            if (std::vector<Edit> wrap = Checker::wrapArgsInList(call, listArg); !wrap.empty())
              diag.help("PyTorch takes the " +
                            std::string(spec.name == "reshape" ? "sizes" : "dims") +
                            " one by one; here they are one list",
                        wrap);
        }
        ok = false;
        continue;
      }
    }
    if (given[slot]) {
      c.diags_.report(DiagId::DuplicateArgument, arg.range, names[slot]);
      ok = false;
      continue;
    }
    given[slot] = true;
    args[slot] = BoundArg{arg.value.get(), v};
    ok &= !v.type.isError();
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (required[i] && !given[i]) {
      if (ok)
        reportMissing(i);
      ok = false;
    }
  }
  if (receiver && receiver->type.isError())
    ok = false;
  return ok;
}

Value BuiltinCall::run(const Value *receiver, const Device *placement,
                       const DeviceOrigin *placementOrigin) {
  if (!bind(receiver))
    return failed();
  // Later phases read the binding rather than binding again.
  std::vector<const ast::Expr *> &bound = c.program_.infoFor(&call).builtinArgs;
  bound.assign(names.size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i)
    if (given[i])
      bound[i] = args[i].expr;
  return typeRule(placement, placementOrigin);
}

const Value *BuiltinCall::tensor(size_t i) {
  if (!given[i])
    return nullptr;
  const Value &v = args[i].value;
  if (v.type.isTensor())
    return &v;
  auto diag = c.diags_.report(DiagId::ExpectedTensor, rangeOf(i), spec.name, c.typeStr(v));
  diag.primary("argument `" + names[i].str() + "` must be a tensor");
  // PyTorch's `math.sqrt(d_k)`: a number's root is a power here.
  if (spec.name == "sqrt" && v.type.isScalar() && args[i].expr) {
    std::string operand = args[i].expr->range.text().str();
    if (!llvm::isa<ast::NameExpr, ast::IntLitExpr, ast::FloatLitExpr>(args[i].expr))
      operand = "(" + operand + ")";
    diag.help("the square root of a number is `" + operand + " ** 0.5`",
              {{call.range, operand + " ** 0.5"}});
  }
  return nullptr;
}

std::optional<int64_t> BuiltinCall::constInt(size_t i, int64_t dflt) {
  if (!given[i])
    return dflt;
  const Value &v = args[i].value;
  if (v.type.kind() == Type::Kind::Int && v.type.intValue)
    if (std::optional<int64_t> k = v.type.intValue->asConstant())
      return k;
  c.diags_.report(DiagId::ExpectedConstant, rangeOf(i), names[i], c.typeStr(v));
  return std::nullopt;
}

std::optional<unsigned> BuiltinCall::dimArg(size_t i, const Value &x, bool allowEnd) {
  std::optional<int64_t> d = constInt(i, 0);
  if (!d)
    return std::nullopt;
  return c.normalizeDim(*d, x, rangeOf(i), allowEnd);
}

std::optional<Dim> BuiltinCall::dimValue(size_t i) {
  const Value &v = args[i].value;
  if (v.type.kind() == Type::Kind::Int && v.type.intValue)
    return v.type.intValue;
  if (v.type.kind() == Type::Kind::Int)
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(i), names[i],
                    "a value known only at run time");
  else
    c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "int", c.typeStr(v))
        .primary("`" + names[i].str() + "` of `" + spec.name.str() + "`");
  return std::nullopt;
}

/// An int or a list of two ints (`stride: 2`, `padding: [1, 2]`); sizes
/// may be symbolic (`stride: stride` in a generic model).
std::optional<std::pair<Dim, Dim>> BuiltinCall::pair(size_t i, std::optional<int64_t> dflt) {
  if (!given[i]) {
    if (dflt)
      return std::make_pair(Dim::constant(*dflt), Dim::constant(*dflt));
    return std::nullopt;
  }
  const Value &v = args[i].value;
  auto size = [](const Type &t) -> std::optional<Dim> {
    if (t.kind() == Type::Kind::Int && t.intValue)
      return t.intValue;
    return std::nullopt;
  };
  std::optional<std::pair<Dim, Dim>> out;
  if (std::optional<Dim> k = size(v.type)) {
    out = std::make_pair(*k, *k);
  } else if ((v.type.kind() == Type::Kind::List || v.type.kind() == Type::Kind::Tuple) &&
             v.type.elements && v.type.elements->size() == 2) {
    // `stride: [2, 1]` or PyTorch's `stride=(2, 1)`: (height, width).
    std::optional<Dim> a = size((*v.type.elements)[0]), b = size((*v.type.elements)[1]);
    if (a && b)
      out = std::make_pair(*a, *b);
  }
  if (!out) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(i), names[i], c.typeStr(v))
        .primary("expected an int or a pair `(h, w)`");
    return std::nullopt;
  }
  for (Dim d : {out->first, out->second}) {
    std::optional<int64_t> k = d.asConstant();
    if (k && *k < 0) {
      c.diags_.report(DiagId::ConvShapeMismatch, rangeOf(i), spec.name,
                      "`" + names[i].str() + "` cannot be negative");
      return std::nullopt;
    }
  }
  return out;
}

std::optional<ElementType> BuiltinCall::dtypeArg(size_t i, ast::DType dflt) {
  if (!given[i])
    return dflt;
  const Value &v = args[i].value;
  if (v.type.kind() == Type::Kind::DType)
    return v.type.dtype;
  auto diag =
      c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a dtype (f32, i64, ...)", c.typeStr(v));
  diag.primary("`" + names[i].str() + "` of `" + spec.name.str() + "`");
  // PyTorch's `zeros(B, n)`: the sizes one by one, where here the shape is
  // one list (the first argument).
  if (v.type.kind() == Type::Kind::Int && !receiver_ && names.front() == "shape")
    if (std::vector<Edit> wrap = Checker::wrapArgsInList(call, 0); !wrap.empty())
      diag.help("PyTorch takes the sizes one by one; here the shape is one list", wrap);
  return std::nullopt;
}

std::optional<double> BuiltinCall::number(size_t i) {
  const Value &v = args[i].value;
  if (v.type.kind() == Type::Kind::Int && v.type.intValue)
    if (std::optional<int64_t> k = v.type.intValue->asConstant())
      return double(*k);
  const ast::Expr *e = args[i].expr;
  bool negate = false;
  if (auto *u = llvm::dyn_cast_if_present<ast::UnaryExpr>(e); u && u->op == ast::UnaryOp::Neg) {
    e = u->operand.get();
    negate = true;
  }
  if (auto *f = llvm::dyn_cast_if_present<ast::FloatLitExpr>(e))
    return negate ? -f->value : f->value;
  return std::nullopt;
}

bool BuiltinCall::floating(const Value &v) {
  if (v.type.dtype.isFloating())
    return true;
  auto diag = c.diags_.report(DiagId::ExpectedFloatDType, v.range(), spec.name, c.typeStr(v));
  diag.primary(c.typeStr(v));
  if (v.expr)
    diag.help("convert it with `cast`", c.castEdits(*v.expr, ast::DType::F32),
              Applicability::MaybeIncorrect);
  return false;
}

bool BuiltinCall::integerIndex(const Value &v) {
  if (v.type.dtype.isInteger())
    return true;
  auto diag = c.diags_.report(DiagId::ExpectedIntegerIndex, v.range(), spec.name, c.typeStr(v));
  diag.primary(c.typeStr(v));
  if (v.expr)
    diag.help("convert it with `cast`", c.castEdits(*v.expr, ast::DType::I64),
              Applicability::MaybeIncorrect);
  return false;
}

std::optional<Device> BuiltinCall::devices(llvm::ArrayRef<const Value *> operands) {
  return c.unifyDevices(spec.name, call.callee->range, call, operands);
}

Value BuiltinCall::result(ElementType dtype, Shape shape, Device dev, const Value &originFrom) {
  Value v;
  v.type = Type::tensor(dtype, std::move(shape), dev);
  v.origin = c.originOf(originFrom);
  return v;
}

std::optional<Shape> BuiltinCall::shapeArg(size_t i, bool allowInfer) {
  const Value &v = args[i].value;
  Shape shape;
  if (v.type.kind() == Type::Kind::Int) {
    if (std::optional<Dim> d = dimValue(i)) {
      shape.dims.push_back(*d);
      return shape;
    }
    return std::nullopt;
  }
  // A list, or a tuple of ints (`zeros(x.shape)`, as PyTorch takes a Size).
  bool listOrTuple = v.type.kind() == Type::Kind::List || v.type.kind() == Type::Kind::Tuple;
  if (!listOrTuple || !v.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a shape like `[B, 10]`", c.typeStr(v));
    return std::nullopt;
  }
  auto *list = llvm::dyn_cast_if_present<ast::ListExpr>(args[i].expr);
  for (size_t k = 0; k < v.type.elements->size(); ++k) {
    const Type &e = (*v.type.elements)[k];
    Range at = list && k < list->elements.size() ? list->elements[k]->range : rangeOf(i);
    if (e.kind() != Type::Kind::Int || !e.intValue) {
      c.diags_.report(DiagId::ExpectedConstant, at, "a dimension", e.str());
      return std::nullopt;
    }
    std::optional<int64_t> k0 = e.intValue->asConstant();
    if (k0 && *k0 < 0 && !(allowInfer && *k0 == -1)) {
      c.diags_.report(DiagId::ExpectedConstant, at, "a dimension", std::to_string(*k0))
          .primary("dimensions cannot be negative");
      return std::nullopt;
    }
    shape.dims.push_back(*e.intValue);
  }
  return shape;
}

Value BuiltinCall::typeRule(const Device *placement, const DeviceOrigin *placementOrigin) {
  switch (spec.id) {
  case BI::Relu:
  case BI::Abs:
  case BI::Neg:
    return elementwise(false);
  case BI::Gelu:
  case BI::Silu:
  case BI::Tanh:
  case BI::Sigmoid:
  case BI::Exp:
  case BI::Log:
  case BI::Sqrt:
  case BI::Sin:
  case BI::Cos:
  case BI::Dropout:
    return elementwise(true);
  case BI::Sum:
  case BI::Max:
  case BI::Min:
    return reduce(false, false);
  case BI::Mean:
    return reduce(true, false);
  case BI::Softmax:
  case BI::LogSoftmax:
    return reduce(true, true);
  case BI::Reshape:
    return reshape();
  case BI::Flatten:
    return flatten();
  case BI::Transpose:
    return transpose();
  case BI::Permute:
    return permute();
  case BI::Unsqueeze:
    return unsqueeze(false);
  case BI::Squeeze:
    return unsqueeze(true);
  case BI::Concat:
    return concat(false);
  case BI::Stack:
    return concat(true);
  case BI::Conv2d:
    return conv2d();
  case BI::MaxPool2d:
  case BI::AvgPool2d:
    return pool(false);
  case BI::AdaptiveAvgPool2d:
    return pool(true);
  case BI::LayerNorm:
    return layerNorm();
  case BI::BatchNorm:
    return batchNorm();
  case BI::Embedding:
    return embedding();
  case BI::Gather:
    return gatherLike(false);
  case BI::IndexSelect:
    return gatherLike(true);
  case BI::Where:
    return where();
  case BI::CrossEntropy:
  case BI::NllLoss:
    return loss();
  case BI::Zeros:
  case BI::Ones:
  case BI::Full:
  case BI::Randn:
  case BI::Arange:
  case BI::Eye:
    return create(placement, placementOrigin);
  case BI::Cast:
    return cast();
  case BI::To:
    return to();
  case BI::Matmul:
    return c.checkMatmul(call, "matmul", val(slot::matmul::a), val(slot::matmul::b));
  case BI::Split:
    return split(false);
  case BI::Chunk:
    return split(true);
  case BI::MaskedFill:
    return maskedFill();
  case BI::Triu:
  case BI::Tril:
    return triangle();
  case BI::Pad:
    return pad();
  case BI::Conv1d:
    return conv1d();
  case BI::ConvTranspose2d:
    return convTranspose2d();
  case BI::GroupNorm:
    return groupNorm();
  case BI::Interpolate:
    return interpolate();
  case BI::Maximum:
  case BI::Minimum:
    return elementwisePair();
  case BI::Clamp:
    return clamp();
  case BI::Argmax:
  case BI::Argmin:
    return argReduce();
  }
  return failed();
}

/// A string option (`mode: "reflect"`): a literal among `valid`.
std::optional<llvm::StringRef> BuiltinCall::modeArg(size_t i, llvm::StringRef dflt,
                                                    llvm::ArrayRef<llvm::StringRef> valid) {
  if (!has(i))
    return dflt;
  std::string options = "\"" + llvm::join(valid, "\", \"") + "\"";
  auto *lit = llvm::dyn_cast_if_present<ast::StringLitExpr>(args[i].expr);
  if (!lit) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a string literal", c.typeStr(val(i)))
        .primary("`" + names[i].str() + "` is one of " + options);
    return std::nullopt;
  }
  for (llvm::StringRef v : valid)
    if (v == lit->value)
      return v;
  c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(i), names[i], spec.name)
      .primary("expected one of " + options);
  return std::nullopt;
}

} // namespace modelc::sema::detail

bool Checker::isBuiltin(llvm::StringRef name) const { return findSpec(name) != nullptr; }

bool Checker::isCreationOp(llvm::StringRef name) const {
  return llvm::StringSwitch<bool>(name)
      .Cases({"zeros", "ones", "full", "randn", "arange", "eye"}, true)
      .Default(false);
}

Value Checker::checkBuiltinCall(const ast::CallExpr &call, llvm::StringRef name,
                                const Value *receiver, const Device *placement,
                                const DeviceOrigin *placementOrigin) {
  const Spec *spec = findSpec(name);
  if (!spec)
    return errorValue(&call);
  if (placement && !isCreationOp(name))
    placement = nullptr;
  program_.infoFor(&call).builtin = spec->name;
  BuiltinCall builtin(*this, call, *spec);
  Value v = builtin.run(receiver, placement, placementOrigin);
  v.expr = &call;
  return v;
}

std::string BuiltinCall::signatureOf(const Spec &spec) {
  if (spec.id == BI::Arange) // PyTorch's two overloads
    return "arange(end, dtype: i64)` or `arange(start, end, step: 1, dtype: i64)";
  llvm::SmallVector<llvm::StringRef, kMaxParams> params;
  llvm::StringRef(spec.params).split(params, ' ', -1, /*KeepEmpty=*/false);
  return spec.name.str() + "(" + llvm::join(params, ", ") + ")";
}

std::vector<BuiltinSignature> modelc::sema::builtinSignatures() {
  std::vector<BuiltinSignature> result;
  for (const Spec &spec : kBuiltins) {
    llvm::SmallVector<llvm::StringRef, kMaxParams> params;
    llvm::StringRef(spec.params).split(params, ' ', -1, /*KeepEmpty=*/false);
    result.push_back({spec.name, llvm::join(params, ", ")});
  }
  return result;
}
