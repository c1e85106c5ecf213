//===- Builtins.cpp - Typing rules of the built-in functions --------------===//
//
// Every built-in is declared once in kBuiltins with its parameter names
// (`?` marks optional ones); calls bind positional and named arguments to
// them, then one typing rule per built-in checks dtypes, devices and shapes.
// Every tensor operand of every op (index tensors and class weights
// included) must be on one device.
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinList.h"
#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Casting.h"

using namespace modelc;
using namespace modelc::sema;
using llvm::dyn_cast;

namespace {

enum class BI {
  Relu,
  Gelu,
  Silu,
  Tanh,
  Sigmoid,
  Exp,
  Log,
  Sqrt,
  Abs,
  Neg,
  Sum,
  Mean,
  Max,
  Min,
  Softmax,
  LogSoftmax,
  Reshape,
  Flatten,
  Transpose,
  Permute,
  Unsqueeze,
  Squeeze,
  Concat,
  Stack,
  Conv2d,
  MaxPool2d,
  AvgPool2d,
  AdaptiveAvgPool2d,
  LayerNorm,
  BatchNorm,
  Embedding,
  Gather,
  IndexSelect,
  Where,
  CrossEntropy,
  NllLoss,
  Zeros,
  Ones,
  Full,
  Randn,
  Arange,
  Eye,
  Cast,
  To,
  Dropout,
  Matmul
};

struct Spec {
  llvm::StringLiteral name;
  BI id;
  const char *params; // space-separated; a trailing `?` marks an optional one
};

constexpr Spec kBuiltins[] = {
    {"relu", BI::Relu, "x"},
    {"gelu", BI::Gelu, "x"},
    {"silu", BI::Silu, "x"},
    {"tanh", BI::Tanh, "x"},
    {"sigmoid", BI::Sigmoid, "x"},
    {"exp", BI::Exp, "x"},
    {"log", BI::Log, "x"},
    {"sqrt", BI::Sqrt, "x"},
    {"abs", BI::Abs, "x"},
    {"neg", BI::Neg, "x"},
    {"sum", BI::Sum, "x dim? keepdim?"},
    {"mean", BI::Mean, "x dim? keepdim?"},
    {"max", BI::Max, "x dim? keepdim?"},
    {"min", BI::Min, "x dim? keepdim?"},
    {"softmax", BI::Softmax, "x dim"},
    {"log_softmax", BI::LogSoftmax, "x dim"},
    {"reshape", BI::Reshape, "x shape"},
    {"flatten", BI::Flatten, "x start_dim? end_dim?"},
    {"transpose", BI::Transpose, "x dim0 dim1"},
    {"permute", BI::Permute, "x dims"},
    {"unsqueeze", BI::Unsqueeze, "x dim"},
    {"squeeze", BI::Squeeze, "x dim?"},
    {"concat", BI::Concat, "tensors dim?"},
    {"stack", BI::Stack, "tensors dim?"},
    {"conv2d", BI::Conv2d, "x weight bias? stride? padding? dilation? groups?"},
    {"max_pool2d", BI::MaxPool2d, "x kernel_size stride? padding?"},
    {"avg_pool2d", BI::AvgPool2d, "x kernel_size stride? padding?"},
    {"adaptive_avg_pool2d", BI::AdaptiveAvgPool2d, "x output_size"},
    {"layer_norm", BI::LayerNorm, "x weight bias eps?"},
    {"batch_norm", BI::BatchNorm, "x mean var weight bias eps?"},
    {"embedding", BI::Embedding, "indices table"},
    {"gather", BI::Gather, "x dim index"},
    {"index_select", BI::IndexSelect, "x dim index"},
    {"where", BI::Where, "mask a b"},
    {"cross_entropy", BI::CrossEntropy, "logits target weight?"},
    {"nll_loss", BI::NllLoss, "logp target weight?"},
    {"zeros", BI::Zeros, "shape dtype?"},
    {"ones", BI::Ones, "shape dtype?"},
    {"full", BI::Full, "shape value dtype?"},
    {"randn", BI::Randn, "shape seed? dtype?"},
    {"arange", BI::Arange, "n dtype?"},
    {"eye", BI::Eye, "n dtype?"},
    {"cast", BI::Cast, "x dtype"},
    {"to", BI::To, "x device"},
    {"dropout", BI::Dropout, "x p?"},
    {"matmul", BI::Matmul, "a b"},
};

const Spec *findSpec(llvm::StringRef name) {
  for (const Spec &s : kBuiltins)
    if (s.name == name)
      return &s;
  return nullptr;
}

constexpr size_t kMaxParams = 8;

/// Checks one built-in call: binds its arguments, then applies its rule.
class BuiltinCall {
public:
  BuiltinCall(Checker &c, const ast::CallExpr &call, const Spec &spec)
      : c(c), call(call), spec(spec) {
    llvm::SmallVector<llvm::StringRef, kMaxParams> parts;
    llvm::StringRef(spec.params).split(parts, ' ');
    for (llvm::StringRef p : parts) {
      bool optional = p.consume_back("?");
      names.push_back(p);
      required.push_back(!optional);
    }
  }

  Value run(const Value *receiver, const Device *placement, const DeviceOrigin *placementOrigin);

private:
  bool bind(const Value *receiver);
  Value typeRule(const Device *placement, const DeviceOrigin *placementOrigin);

  bool has(size_t i) const { return given[i]; }
  const Value &val(size_t i) const { return args[i].value; }
  Range rangeOf(size_t i) const { return args[i].expr ? args[i].expr->range : call.range; }
  Value failed() {
    llvm::SmallVector<const Value *, kMaxParams> ops;
    for (size_t i = 0; i < names.size(); ++i)
      if (given[i])
        ops.push_back(&args[i].value);
    return c.fail(call, ops);
  }

  // Argument accessors; each reports its own error and returns nullopt.
  const Value *tensor(size_t i);
  std::optional<int64_t> constInt(size_t i, int64_t dflt);
  std::optional<Dim> dimValue(size_t i);
  std::optional<std::pair<Dim, Dim>> pair(size_t i, std::optional<int64_t> dflt);
  std::optional<ast::DType> dtypeArg(size_t i, ast::DType dflt);
  bool floating(const Value &v);
  bool integerIndex(const Value &v);
  std::optional<Device> devices(llvm::ArrayRef<const Value *> operands);
  std::optional<Shape> shapeArg(size_t i, bool allowInfer);
  Value result(ast::DType dtype, Shape shape, Device dev, const Value &originFrom);

  Value elementwise(bool floatOnly);
  Value reduce(bool floatOnly, bool isSoftmax);
  Value reshape();
  Value flatten();
  Value transpose();
  Value permute();
  Value unsqueeze(bool squeeze);
  Value concat(bool stack);
  Value conv2d();
  Value pool(bool adaptive);
  Value layerNorm();
  Value batchNorm();
  Value embedding();
  Value gatherLike(bool indexSelect);
  Value where();
  Value loss();
  Value create(const Device *placement, const DeviceOrigin *placementOrigin);
  Value cast();
  Value to();

  Checker &c;
  const ast::CallExpr &call;
  const Spec &spec;
  llvm::SmallVector<llvm::StringRef, kMaxParams> names;
  llvm::SmallVector<bool, kMaxParams> required;
  BoundArg args[kMaxParams];
  bool given[kMaxParams] = {};
  const Value *receiver_ = nullptr;
};

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
        c.diags_.report(DiagId::UnknownNamedArgument, arg.name->range, spec.name, arg.name->name)
            .primary("parameters are: " + llvm::join(names, ", "));
        ok = false;
        continue;
      }
      slot = size_t(it - names.begin());
    } else {
      while (positional < names.size() && given[positional])
        ++positional;
      slot = positional++;
      if (slot >= names.size()) {
        c.diags_.report(DiagId::WrongArgumentCount, arg.range, spec.name, names.size(),
                        call.args.size() + (receiver ? 1 : 0));
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
        c.diags_.report(DiagId::MissingArgument,
                        call.argsRange.isValid() ? call.argsRange : call.range, spec.name,
                        names[i]);
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
  return typeRule(placement, placementOrigin);
}

const Value *BuiltinCall::tensor(size_t i) {
  if (!given[i])
    return nullptr;
  const Value &v = args[i].value;
  if (v.type.isTensor())
    return &v;
  c.diags_.report(DiagId::ExpectedTensor, rangeOf(i), spec.name, c.typeStr(v))
      .primary("argument `" + names[i].str() + "` must be a tensor");
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
  } else if (v.type.kind() == Type::Kind::List && v.type.elements && v.type.elements->size() == 2) {
    std::optional<Dim> a = size((*v.type.elements)[0]), b = size((*v.type.elements)[1]);
    if (a && b)
      out = std::make_pair(*a, *b);
  }
  if (!out) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(i), names[i], c.typeStr(v))
        .primary("expected an int or a list of two");
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

std::optional<ast::DType> BuiltinCall::dtypeArg(size_t i, ast::DType dflt) {
  if (!given[i])
    return dflt;
  const Value &v = args[i].value;
  if (v.type.kind() == Type::Kind::DType)
    return v.type.dtype;
  c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a dtype (f32, i64, ...)", c.typeStr(v));
  return std::nullopt;
}

bool BuiltinCall::floating(const Value &v) {
  if (ast::isFloating(v.type.dtype))
    return true;
  auto diag = c.diags_.report(DiagId::ExpectedFloatDType, v.range(), spec.name, c.typeStr(v));
  diag.primary(c.typeStr(v));
  if (v.expr)
    diag.help("convert it with `cast`", c.castEdits(*v.expr, ast::DType::F32),
              Applicability::MaybeIncorrect);
  return false;
}

bool BuiltinCall::integerIndex(const Value &v) {
  if (ast::isInteger(v.type.dtype))
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

Value BuiltinCall::result(ast::DType dtype, Shape shape, Device dev, const Value &originFrom) {
  Value v;
  v.type = Type::tensor(dtype, std::move(shape), dev);
  v.origin = c.originOf(originFrom);
  return v;
}

Value BuiltinCall::elementwise(bool floatOnly) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  if (floatOnly ? !floating(*x) : x->type.dtype == ast::DType::Bool) {
    if (!floatOnly)
      c.diags_.report(DiagId::TypeMismatch, x->range(), "a numeric tensor", c.typeStr(*x))
          .primary("argument of `" + spec.name.str() + "`");
    return failed();
  }
  if (spec.id == BI::Dropout && has(1)) {
    Type::Kind k = val(1).type.kind();
    if (k != Type::Kind::Float && k != Type::Kind::Int) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "float", c.typeStr(val(1)));
      return failed();
    }
  }
  Value v = *x;
  v.expr = nullptr;
  return v;
}

Value BuiltinCall::reduce(bool floatOnly, bool isSoftmax) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  if (floatOnly && !floating(*x))
    return failed();
  if (isSoftmax) {
    std::optional<int64_t> d = constInt(1, 0);
    if (!d || !c.normalizeDim(*d, *x, rangeOf(1)))
      return failed();
    Value v = *x;
    v.expr = nullptr;
    return v;
  }
  bool keepdim = false;
  if (has(2)) {
    if (val(2).type.kind() != Type::Kind::Bool) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(2), "bool", c.typeStr(val(2)));
      return failed();
    }
    auto *lit = llvm::dyn_cast_if_present<ast::BoolLitExpr>(args[2].expr);
    if (!lit) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(2), "keepdim", "a run-time bool");
      return failed();
    }
    keepdim = lit->value;
  }
  Shape shape;
  if (has(1)) {
    std::optional<int64_t> d = constInt(1, 0);
    if (!d)
      return failed();
    std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1));
    if (!dim)
      return failed();
    shape = x->type.shape;
    if (keepdim)
      shape.dims[*dim] = Dim::constant(1);
    else
      shape.dims.erase(shape.dims.begin() + *dim);
  } // else: reducing everything gives a rank-0 tensor
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
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
  if (v.type.kind() != Type::Kind::List || !v.type.elements) {
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

Value BuiltinCall::reshape() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<Shape> target = shapeArg(1, /*allowInfer=*/true);
  if (!target)
    return failed();
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range, "reshaping a tensor with `...` dims");
    return failed();
  }
  Dim total = x->type.shape.numElements();
  Dim known = Dim::constant(1);
  std::optional<size_t> inferred;
  for (size_t k = 0; k < target->dims.size(); ++k) {
    if (target->dims[k].isConstant(-1)) {
      if (inferred) {
        c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(1), total.str(), target->str())
            .primary("only one dimension can be -1");
        return failed();
      }
      inferred = k;
      continue;
    }
    known = known * target->dims[k];
  }
  if (inferred) {
    std::optional<Dim> q = total.exactDiv(known);
    if (!q || known.isConstant(0)) {
      c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(1), total.str(), target->str())
          .primary(known.str() + " does not divide " + total.str())
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
    target->dims[*inferred] = *q;
  } else if (known != total) {
    c.diags_.report(DiagId::ReshapeCountMismatch, rangeOf(1), total.str(), target->str())
        .primary("this shape has " + known.str() + " elements")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, std::move(*target), x->type.dev, *x);
}

Value BuiltinCall::flatten() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<int64_t> s = constInt(1, 0), e = constInt(2, -1);
  if (!s || !e)
    return failed();
  if (x->type.rank() == 0 && !x->type.shape.hasPack()) {
    Shape one;
    one.dims.push_back(Dim::constant(1));
    return result(x->type.dtype, one, x->type.dev, *x);
  }
  std::optional<unsigned> start = c.normalizeDim(*s, *x, rangeOf(1));
  std::optional<unsigned> end = c.normalizeDim(*e, *x, rangeOf(2));
  if (!start || !end)
    return failed();
  if (*start > *end) {
    c.diags_.report(DiagId::DimOutOfRange, rangeOf(2), *e, x->type.rank())
        .primary("`end_dim` comes before `start_dim`");
    return failed();
  }
  Shape shape;
  shape.pack = x->type.shape.pack;
  const auto &dims = x->type.shape.dims;
  Dim product = Dim::constant(1);
  for (unsigned k = 0; k < dims.size(); ++k) {
    if (k < *start || k > *end) {
      shape.dims.push_back(dims[k]);
      continue;
    }
    product = product * dims[k];
    if (k == *end)
      shape.dims.push_back(product);
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::transpose() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<int64_t> a = constInt(1, 0), b = constInt(2, 0);
  if (!a || !b)
    return failed();
  std::optional<unsigned> d0 = c.normalizeDim(*a, *x, rangeOf(1));
  std::optional<unsigned> d1 = c.normalizeDim(*b, *x, rangeOf(2));
  if (!d0 || !d1)
    return failed();
  Shape shape = x->type.shape;
  std::swap(shape.dims[*d0], shape.dims[*d1]);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::permute() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  const Value &dims = val(1);
  if (dims.type.kind() != Type::Kind::List || !dims.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a list of dims", c.typeStr(dims));
    return failed();
  }
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range, "permuting a tensor with `...` dims");
    return failed();
  }
  size_t rank = x->type.rank();
  if (dims.type.elements->size() != rank) {
    c.diags_.report(DiagId::RankMismatch, rangeOf(1), spec.name, rank, dims.type.elements->size())
        .primary("needs one entry per dim of " + c.typeStr(*x));
    return failed();
  }
  Shape shape;
  std::vector<bool> seen(rank, false);
  for (const Type &e : *dims.type.elements) {
    std::optional<int64_t> k;
    if (e.kind() == Type::Kind::Int && e.intValue)
      k = e.intValue->asConstant();
    if (!k) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "dims", e.str());
      return failed();
    }
    std::optional<unsigned> d = c.normalizeDim(*k, *x, rangeOf(1));
    if (!d)
      return failed();
    if (seen[*d]) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a permutation of the dims",
                      "dim " + std::to_string(*d) + " twice");
      return failed();
    }
    seen[*d] = true;
    shape.dims.push_back(x->type.shape.dims[*d]);
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::unsqueeze(bool squeeze) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  Shape shape = x->type.shape;
  if (!squeeze) {
    std::optional<int64_t> d = constInt(1, 0);
    if (!d)
      return failed();
    std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1), /*allowEnd=*/true);
    if (!dim)
      return failed();
    shape.dims.insert(shape.dims.begin() + *dim, Dim::constant(1));
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  if (!has(1)) {
    llvm::erase_if(shape.dims, [](Dim d) { return d.isConstant(1); });
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  std::optional<int64_t> d = constInt(1, 0);
  if (!d)
    return failed();
  std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1));
  if (!dim)
    return failed();
  if (!shape.dims[*dim].isConstant(1)) {
    c.diags_
        .report(DiagId::ShapeMismatch, rangeOf(1), "a dim of size 1",
                "size " + shape.dims[*dim].str())
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  shape.dims.erase(shape.dims.begin() + *dim);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::concat(bool stack) {
  auto *list = llvm::dyn_cast_if_present<ast::ListExpr>(args[0].expr);
  if (!list || list->elements.empty()) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(0), "a list of tensors `[a, b]`",
                    c.typeStr(val(0)));
    return failed();
  }
  std::vector<Value> items;
  for (const ast::ExprPtr &e : list->elements) {
    const ExprInfo *info = c.program_.typeOf(e.get());
    Value v{info ? info->type : Type::error(), info ? info->origin : DeviceOrigin(), e.get()};
    if (!v.type.isTensor()) {
      c.diags_.report(DiagId::ExpectedTensor, e->range, spec.name, c.typeStr(v));
      return failed();
    }
    items.push_back(v);
  }
  std::optional<int64_t> d = constInt(1, 0);
  if (!d)
    return failed();
  const Value &first = items.front();
  std::optional<unsigned> dim = c.normalizeDim(*d, first, rangeOf(1), /*allowEnd=*/stack);
  if (!dim)
    return failed();
  llvm::SmallVector<const Value *, 4> operands;
  for (const Value &v : items) {
    operands.push_back(&v);
    if (!c.requireSameDType(spec.name, first, v))
      return failed();
  }
  std::optional<Device> dev = devices(operands);
  if (!dev)
    return failed();
  Shape shape = first.type.shape;
  Dim total;
  for (size_t k = 0; k < items.size(); ++k) {
    const Shape &s = items[k].type.shape;
    Shape expected = first.type.shape;
    if (!stack && s.dims.size() == expected.dims.size())
      expected.dims[*dim] = s.dims[*dim];
    if (s != expected) {
      c.diags_
          .report(DiagId::ConcatMismatch, items[k].range(), spec.name, k, s.str(), expected.str())
          .primary(c.typeStr(items[k]))
          .label(first.range(), c.typeStr(first));
      return failed();
    }
    if (!stack)
      total = total + s.dims[*dim];
  }
  if (stack)
    shape.dims.insert(shape.dims.begin() + *dim, Dim::constant(int64_t(items.size())));
  else
    shape.dims[*dim] = total;
  return result(first.type.dtype, std::move(shape), *dev, first);
}

/// floor((size + 2p - d(k-1) - 1) / s) + 1, symbolic when `size` is.
static Dim convOut(Dim size, Dim kernel, Dim stride, Dim padding, Dim dilation) {
  Dim one = Dim::constant(1);
  Dim num = size + Dim::constant(2) * padding - dilation * (kernel - one) - one;
  return num.floorDiv(stride) + one;
}

static bool positive(Dim d) {
  std::optional<int64_t> k = d.asConstant();
  return !k || *k > 0;
}

Value BuiltinCall::conv2d() {
  const Value *x = tensor(0), *w = tensor(1);
  const Value *b = has(2) ? tensor(2) : nullptr;
  if (!x || !w || (has(2) && !b))
    return failed();
  if (!floating(*x) || !c.requireSameDType(spec.name, *w, *x) ||
      (b && !c.requireSameDType(spec.name, *w, *b)))
    return failed();
  std::optional<Device> dev = devices({x, w, b});
  if (!dev)
    return failed();
  size_t xr = x->type.rank();
  if (x->type.shape.hasPack() || (xr != 3 && xr != 4)) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, "4 ([N, C, H, W])", xr)
        .primary(c.typeStr(*x));
    return failed();
  }
  if (w->type.rank() != 4 || w->type.shape.hasPack()) {
    c.diags_
        .report(DiagId::RankMismatch, w->range(), spec.name, "4 ([out, in/groups, kH, kW])",
                w->type.rank())
        .primary(c.typeStr(*w));
    return failed();
  }
  auto stride = pair(3, 1), padding = pair(4, 0), dilation = pair(5, 1);
  // Like stride, groups may be a model argument (`groups: g`).
  std::optional<Dim> groups = given[6] ? dimValue(6) : std::optional<Dim>(Dim::constant(1));
  if (!stride || !padding || !dilation || !groups)
    return failed();
  if (!positive(stride->first) || !positive(stride->second) || !positive(*groups)) {
    c.diags_.report(DiagId::ConvShapeMismatch, call.range, spec.name,
                    "stride and groups must be positive");
    return failed();
  }
  const auto &xd = x->type.shape.dims, &wd = w->type.shape.dims;
  size_t cAxis = xr - 3;
  Dim inChannels = xd[cAxis];
  Dim expected = wd[1] * *groups;
  if (inChannels != expected) {
    c.diags_
        .report(DiagId::ConvShapeMismatch, x->range(), spec.name,
                "the input has " + inChannels.str() + " channels but the weight expects " +
                    expected.str())
        .primary(c.typeStr(*x))
        .label(w->range(), c.typeStr(*w));
    return failed();
  }
  if (b && (b->type.rank() != 1 || b->type.shape.dims[0] != wd[0])) {
    c.diags_
        .report(DiagId::ConvShapeMismatch, b->range(), spec.name,
                "the bias must have shape [" + wd[0].str() + "]")
        .primary(c.typeStr(*b))
        .label(w->range(), c.typeStr(*w));
    return failed();
  }
  Shape shape;
  if (xr == 4)
    shape.dims.push_back(xd[0]);
  shape.dims.push_back(wd[0]);
  shape.dims.push_back(
      convOut(xd[cAxis + 1], wd[2], stride->first, padding->first, dilation->first));
  shape.dims.push_back(
      convOut(xd[cAxis + 2], wd[3], stride->second, padding->second, dilation->second));
  for (size_t k = shape.dims.size() - 2; k < shape.dims.size(); ++k) {
    std::optional<int64_t> size = shape.dims[k].asConstant();
    if (size && *size <= 0) {
      c.diags_
          .report(DiagId::ConvShapeMismatch, x->range(), spec.name,
                  "the output would be empty (size " + std::to_string(*size) + ")")
          .primary(c.typeStr(*x));
      return failed();
    }
  }
  return result(x->type.dtype, std::move(shape), *dev, *w);
}

Value BuiltinCall::pool(bool adaptive) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  if (spec.id != BI::MaxPool2d && !floating(*x))
    return failed();
  size_t xr = x->type.rank();
  if (x->type.shape.hasPack() ? xr < 2 : (xr != 3 && xr != 4)) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, "4 ([N, C, H, W])", xr)
        .primary(c.typeStr(*x));
    return failed();
  }
  Shape shape = x->type.shape;
  size_t h = shape.dims.size() - 2;
  if (adaptive) {
    const Value &out = val(1);
    if (out.type.kind() == Type::Kind::Int && out.type.intValue) {
      shape.dims[h] = shape.dims[h + 1] = *out.type.intValue;
    } else if (out.type.kind() == Type::Kind::List && out.type.elements &&
               out.type.elements->size() == 2 && (*out.type.elements)[0].intValue &&
               (*out.type.elements)[1].intValue) {
      shape.dims[h] = *(*out.type.elements)[0].intValue;
      shape.dims[h + 1] = *(*out.type.elements)[1].intValue;
    } else {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "output_size", c.typeStr(out));
      return failed();
    }
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  auto kernel = pair(1, std::nullopt);
  if (!kernel)
    return failed();
  auto stride = pair(2, std::nullopt);
  if (has(2) && !stride)
    return failed();
  if (!stride)
    stride = kernel;
  auto padding = pair(3, 0);
  if (!padding)
    return failed();
  if (!positive(kernel->first) || !positive(kernel->second) || !positive(stride->first) ||
      !positive(stride->second)) {
    c.diags_.report(DiagId::ConvShapeMismatch, call.range, spec.name,
                    "kernel size and stride must be positive");
    return failed();
  }
  Dim one = Dim::constant(1);
  shape.dims[h] = convOut(shape.dims[h], kernel->first, stride->first, padding->first, one);
  shape.dims[h + 1] =
      convOut(shape.dims[h + 1], kernel->second, stride->second, padding->second, one);
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

Value BuiltinCall::layerNorm() {
  const Value *x = tensor(0), *w = tensor(1), *b = tensor(2);
  if (!x || !w || !b)
    return failed();
  if (!floating(*x) || !c.requireSameDType(spec.name, *w, *x) ||
      !c.requireSameDType(spec.name, *w, *b))
    return failed();
  std::optional<Device> dev = devices({x, w, b});
  if (!dev)
    return failed();
  const auto &xd = x->type.shape.dims, &wd = w->type.shape.dims;
  bool fits = wd.size() <= xd.size() && !w->type.shape.hasPack() &&
              std::equal(wd.begin(), wd.end(), xd.end() - wd.size());
  if (!fits || b->type.shape != w->type.shape) {
    const Value &bad = fits ? *b : *w;
    c.diags_
        .report(DiagId::ShapeMismatch, bad.range(), "the trailing dims of the input",
                bad.type.shape.str())
        .primary(c.typeStr(bad))
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, x->type.shape, *dev, *x);
}

Value BuiltinCall::batchNorm() {
  const Value *x = tensor(0);
  const Value *stats[4] = {tensor(1), tensor(2), tensor(3), tensor(4)};
  if (!x || llvm::is_contained(stats, nullptr))
    return failed();
  if (!floating(*x))
    return failed();
  for (const Value *s : stats)
    if (!c.requireSameDType(spec.name, *x, *s))
      return failed();
  std::optional<Device> dev = devices({x, stats[0], stats[1], stats[2], stats[3]});
  if (!dev)
    return failed();
  if (x->type.rank() < 2 || x->type.shape.hasPack()) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, "2 or more ([N, C, ...])",
                    x->type.rank());
    return failed();
  }
  Shape channels;
  channels.dims.push_back(x->type.shape.dims[1]);
  for (const Value *s : stats) {
    if (s->type.shape != channels) {
      c.diags_.report(DiagId::ShapeMismatch, s->range(), channels.str(), s->type.shape.str())
          .primary(c.typeStr(*s))
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
  }
  return result(x->type.dtype, x->type.shape, *dev, *x);
}

Value BuiltinCall::embedding() {
  const Value *idx = tensor(0), *table = tensor(1);
  if (!idx || !table)
    return failed();
  if (!integerIndex(*idx))
    return failed();
  std::optional<Device> dev = devices({idx, table});
  if (!dev)
    return failed();
  if (table->type.rank() != 2 || table->type.shape.hasPack()) {
    c.diags_
        .report(DiagId::RankMismatch, table->range(), spec.name, "2 ([num, dim])",
                table->type.rank())
        .primary(c.typeStr(*table));
    return failed();
  }
  Shape shape = idx->type.shape;
  shape.dims.push_back(table->type.shape.dims[1]);
  return result(table->type.dtype, std::move(shape), *dev, *table);
}

Value BuiltinCall::gatherLike(bool indexSelect) {
  const Value *x = tensor(0), *idx = tensor(2);
  if (!x || !idx)
    return failed();
  std::optional<int64_t> d = constInt(1, 0);
  if (!d)
    return failed();
  std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(1));
  if (!dim || !integerIndex(*idx))
    return failed();
  std::optional<Device> dev = devices({x, idx});
  if (!dev)
    return failed();
  size_t wantRank = indexSelect ? 1 : x->type.rank();
  if (idx->type.rank() != wantRank ||
      idx->type.shape.hasPack() != (!indexSelect && x->type.shape.hasPack())) {
    c.diags_.report(DiagId::RankMismatch, idx->range(), spec.name, wantRank, idx->type.rank())
        .primary(c.typeStr(*idx))
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  Shape shape = indexSelect ? x->type.shape : idx->type.shape;
  if (indexSelect)
    shape.dims[*dim] = idx->type.shape.dims[0];
  return result(x->type.dtype, std::move(shape), *dev, *x);
}

Value BuiltinCall::where() {
  const Value *mask = tensor(0);
  if (!mask)
    return failed();
  if (mask->type.dtype != ast::DType::Bool) {
    c.diags_.report(DiagId::ExpectedBoolMask, mask->range(), spec.name, c.typeStr(*mask));
    return failed();
  }
  const Value &a = val(1), &b = val(2);
  const Value *t = a.type.isTensor() ? &a : b.type.isTensor() ? &b : nullptr;
  if (!t) {
    c.diags_.report(DiagId::ExpectedTensor, rangeOf(1), spec.name, c.typeStr(a))
        .primary("at least one of the values must be a tensor");
    return failed();
  }
  for (const Value *v : {&a, &b}) {
    if (v == t)
      continue;
    if (v->type.isTensor() ? !c.requireSameDType(spec.name, *t, *v)
                           : !c.checkScalarOperand(spec.name, *t, *v))
      return failed();
  }
  std::optional<Device> dev = devices({mask, &a, &b});
  if (!dev)
    return failed();
  std::optional<Shape> shape = mask->type.shape;
  for (const Value *v : {&a, &b})
    if (v->type.isTensor() && shape)
      shape = c.broadcast(*shape, v->type.shape);
  if (!shape) {
    c.diags_.report(DiagId::BroadcastMismatch, call.range, mask->type.shape.str(),
                    t->type.shape.str(), spec.name);
    return failed();
  }
  return result(t->type.dtype, std::move(*shape), *dev, *t);
}

Value BuiltinCall::loss() {
  const Value *logits = tensor(0), *target = tensor(1);
  const Value *weight = has(2) ? tensor(2) : nullptr;
  if (!logits || !target || (has(2) && !weight))
    return failed();
  if (!floating(*logits) || !integerIndex(*target) ||
      (weight && !c.requireSameDType(spec.name, *logits, *weight)))
    return failed();
  std::optional<Device> dev = devices({logits, target, weight});
  if (!dev)
    return failed();
  const Shape &ls = logits->type.shape;
  if (ls.hasPack() || ls.dims.empty() || ls.dims.size() > 2) {
    c.diags_.report(DiagId::RankMismatch, logits->range(), spec.name, "2 ([N, C])", ls.dims.size())
        .primary(c.typeStr(*logits));
    return failed();
  }
  Shape wantTarget;
  if (ls.dims.size() == 2)
    wantTarget.dims.push_back(ls.dims[0]);
  if (target->type.shape != wantTarget) {
    c.diags_
        .report(DiagId::ShapeMismatch, target->range(), wantTarget.str(), target->type.shape.str())
        .primary(c.typeStr(*target))
        .label(logits->range(), c.typeStr(*logits));
    return failed();
  }
  if (weight) {
    Shape wantWeight;
    wantWeight.dims.push_back(ls.dims.back());
    if (weight->type.shape != wantWeight) {
      c.diags_
          .report(DiagId::ShapeMismatch, weight->range(), wantWeight.str(),
                  weight->type.shape.str())
          .primary(c.typeStr(*weight))
          .note("class weights have one entry per class");
      return failed();
    }
  }
  return result(logits->type.dtype, Shape(), *dev, *logits);
}

Value BuiltinCall::create(const Device *placement, const DeviceOrigin *placementOrigin) {
  Shape shape;
  ast::DType dflt = spec.id == BI::Arange ? ast::DType::I64 : ast::DType::F32;
  size_t dtypeSlot = spec.id == BI::Full ? 2 : spec.id == BI::Randn ? 2 : 1;
  std::optional<ast::DType> dtype = dtypeArg(dtypeSlot, dflt);
  if (!dtype)
    return failed();
  if (spec.id == BI::Arange || spec.id == BI::Eye) {
    std::optional<Dim> n = dimValue(0);
    if (!n)
      return failed();
    shape.dims.push_back(*n);
    if (spec.id == BI::Eye)
      shape.dims.push_back(*n);
  } else {
    std::optional<Shape> s = shapeArg(0, /*allowInfer=*/false);
    if (!s)
      return failed();
    shape = std::move(*s);
  }
  if (spec.id == BI::Randn) {
    if (!ast::isFloating(*dtype)) {
      c.diags_.report(DiagId::ExpectedFloatDType, given[2] ? rangeOf(2) : call.range, spec.name,
                      ast::dtypeName(*dtype));
      return failed();
    }
    if (has(1) && val(1).type.kind() != Type::Kind::Int) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "int", c.typeStr(val(1)));
      return failed();
    }
  }
  if (spec.id == BI::Full) {
    Type::Kind k = val(1).type.kind();
    bool ok = k == Type::Kind::Int || k == Type::Kind::Bool ||
              (k == Type::Kind::Float && ast::isFloating(*dtype));
    if (!ok) {
      c.diags_.report(DiagId::DTypeMismatch, rangeOf(1), c.typeStr(val(1)), ast::dtypeName(*dtype),
                      spec.name);
      return failed();
    }
  }
  Value v;
  if (placement) {
    v.type = Type::tensor(*dtype, std::move(shape), *placement);
    v.origin = *placementOrigin;
    return v;
  }
  std::string text = c.shortText(call.range);
  v.type = Type::tensor(*dtype, std::move(shape), c.fn_->unifier.fresh(call.range, text));
  v.origin.kind = DeviceOrigin::Kind::Inferred;
  v.origin.range = call.range;
  v.origin.subject = c.program_.save(text);
  v.origin.message =
      c.program_.save("`" + text + "` is created here; its device is inferred from its uses");
  return v;
}

Value BuiltinCall::cast() {
  const Value *x = tensor(0);
  std::optional<ast::DType> dtype = dtypeArg(1, ast::DType::F32);
  if (!x || !dtype)
    return failed();
  Value v = *x;
  v.type.dtype = *dtype;
  v.expr = nullptr;
  return v;
}

Value BuiltinCall::to() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  const Value &d = val(1);
  if (d.type.kind() != Type::Kind::Device) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a device", c.typeStr(d));
    return failed();
  }
  Device from = c.resolve(x->type.dev), target = d.type.dev;
  if (from == target) {
    // `x.to(D)`: delete from the end of `x` to the closing parenthesis.
    Range transfer = receiver_ && receiver_->expr
                         ? Range{receiver_->expr->range.end, call.range.end}
                         : call.range;
    auto diag = c.diags_.report(DiagId::RedundantTransfer, transfer, target.str());
    diag.primary("this transfer does nothing").label(x->range(), c.typeStr(*x));
    DeviceOrigin origin = c.originOf(*x);
    if (origin.isKnown())
      diag.note(origin.message.str(), origin.range);
    if (receiver_ && receiver_->expr)
      diag.help("remove it", {{transfer, ""}});
    else if (x->expr)
      diag.help("remove it", {{Range{call.range.begin, x->expr->range.begin}, ""},
                              {Range{x->expr->range.end, call.range.end}, ""}});
  }
  Value v = *x;
  v.expr = nullptr;
  v.type.dev = target;
  v.origin.kind = DeviceOrigin::Kind::Transfer;
  v.origin.range = call.range;
  v.origin.editRange = Range();
  v.origin.message =
      c.program_.save("`" + c.shortText(call.range) + "` moves it to " + target.str() + " here");
  return v;
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
    return c.checkMatmul(call, "matmul", val(0), val(1));
  }
  return failed();
}

} // namespace

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

std::vector<BuiltinSignature> modelc::sema::builtinSignatures() {
  std::vector<BuiltinSignature> result;
  for (const Spec &spec : kBuiltins) {
    llvm::SmallVector<llvm::StringRef, kMaxParams> params;
    llvm::StringRef(spec.params).split(params, ' ', -1, /*KeepEmpty=*/false);
    result.push_back({spec.name, llvm::join(params, ", ")});
  }
  return result;
}
