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

#include <cmath>

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
  Matmul,
  Split,
  Chunk,
  MaskedFill,
  Triu,
  Tril,
  Pad,
  Conv1d,
  ConvTranspose2d,
  GroupNorm,
  Interpolate
};

struct Spec {
  llvm::StringLiteral name;
  BI id;
  const char *params; // space-separated; a trailing `?` marks an optional one
  /// What notes show for overloaded built-ins; otherwise `name(params)`.
  const char *overloads = nullptr;
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
    {"arange", BI::Arange, "start? end? step? dtype?",
     "arange(end, dtype: i64)` or `arange(start, end, step: 1, dtype: i64)"},
    {"eye", BI::Eye, "n dtype?"},
    {"cast", BI::Cast, "x dtype"},
    {"to", BI::To, "x device"},
    {"dropout", BI::Dropout, "x p?"},
    {"matmul", BI::Matmul, "a b"},
    // PyTorch's names and signatures for what a port needs (torch.cat, ...).
    {"cat", BI::Concat, "tensors dim?"},
    {"split", BI::Split, "x split_size_or_sections dim?"},
    {"chunk", BI::Chunk, "x chunks dim?"},
    {"masked_fill", BI::MaskedFill, "x mask value"},
    {"triu", BI::Triu, "x diagonal?"},
    {"tril", BI::Tril, "x diagonal?"},
    {"pad", BI::Pad, "x pad mode? value?"},
    {"conv1d", BI::Conv1d, "x weight bias? stride? padding? dilation? groups?"},
    {"conv_transpose2d", BI::ConvTranspose2d,
     "x weight bias? stride? padding? output_padding? groups? dilation?"},
    {"group_norm", BI::GroupNorm, "x num_groups weight? bias? eps?"},
    {"interpolate", BI::Interpolate, "x size? scale_factor? mode? align_corners?"},
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

  /// `relu(x)`, `sum(x, dim?, keepdim?)`: what notes show.
  static std::string signatureOf(const Spec &spec);

private:
  std::string signature() const { return signatureOf(spec); }
  size_t requiredCount() const { return size_t(llvm::count(required, true)); }
  size_t givenCount() const { return call.args.size() + (receiver_ ? 1 : 0); }
  /// E0107 for parameter `i`.
  void reportMissing(size_t i) {
    c.reportMissingArgument(
        call.argsRange.isValid() ? call.argsRange : call.range, spec.name, names[i],
        requiredCount(), names.size(), givenCount(),
        llvm::any_of(call.args, [](const ast::Arg &a) { return a.name.has_value(); }), signature());
  }

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
  /// A compile-time number: a constant int or a float literal.
  std::optional<double> number(size_t i);
  std::optional<Dim> arangeLength(ast::DType &dflt);
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
  // PyTorch's signatures for ports (the end of this file).
  std::optional<llvm::StringRef> modeArg(size_t i, llvm::StringRef dflt,
                                         llvm::ArrayRef<llvm::StringRef> valid);
  Value split(bool chunk);
  Value maskedFill();
  Value triangle();
  Value pad();
  std::optional<Dim> single(size_t i, int64_t dflt);
  std::optional<Device> convOperands(size_t spatial, const Value *&x, const Value *&w,
                                     const Value *&b);
  bool convChannels(const Value &x, const Value &w, const Value *b, Dim inChannels, Dim expectedIn,
                    Dim outChannels, llvm::StringRef weightLayout);
  bool nonEmpty(const Value &x, const Shape &shape, size_t spatial);
  Value conv1d();
  Value convTranspose2d();
  Value groupNorm();
  Value interpolate();

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
        if (slot == names.size())
          c.reportArgumentCount(arg.range, spec.name, requiredCount(), names.size(), givenCount(),
                                signature(), "unexpected argument");
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
  c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a dtype (f32, i64, ...)", c.typeStr(v))
      .primary("`" + names[i].str() + "` of `" + spec.name.str() + "`");
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

/// PyTorch's overloads: `arange(end)`, `arange(start, end, step: 1)`; the
/// length is ceil((end - start) / step), symbolic when the bounds are and
/// the step is a constant int. Float bounds make the default dtype f32.
std::optional<Dim> BuiltinCall::arangeLength(ast::DType &dflt) {
  dflt = ast::DType::I64;
  if (!has(0) && !has(1)) {
    reportMissing(1);
    return std::nullopt;
  }
  for (size_t i : {0, 1, 2}) {
    if (!has(i))
      continue;
    Type::Kind k = val(i).type.kind();
    if (k == Type::Kind::Int)
      continue;
    if (k == Type::Kind::Float) {
      dflt = ast::DType::F32;
      continue;
    }
    auto diag = c.diags_.report(DiagId::TypeMismatch, rangeOf(i), "a number", c.typeStr(val(i)));
    diag.primary("`" + names[i].str() + "` of `arange`");
    if (k == Type::Kind::DType && args[i].expr && !args[i].expr->range.text().contains(':'))
      diag.help("pass the dtype by name", {{Range{rangeOf(i).begin, rangeOf(i).begin}, "dtype: "}},
                Applicability::MachineApplicable);
    return std::nullopt;
  }
  // One bound is the end (`arange(5)`, `arange(end: 5)`).
  size_t startSlot = 0, endSlot = 1;
  bool startGiven = has(0) && has(1);
  if (!has(1))
    endSlot = 0;
  std::optional<double> step = has(2) ? number(2) : std::optional<double>(1);
  if (!step) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(2), "step", c.typeStr(val(2)))
        .primary("the step must be known to size the result");
    return std::nullopt;
  }
  if (*step == 0) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(2), "step", spec.name)
        .primary("the step must not be zero");
    return std::nullopt;
  }
  bool intStep = has(2) ? val(2).type.kind() == Type::Kind::Int : true;
  auto dimOf = [&](size_t i) -> std::optional<Dim> {
    if (val(i).type.kind() == Type::Kind::Int)
      return val(i).type.intValue;
    return std::nullopt;
  };
  std::optional<Dim> start = startGiven ? dimOf(startSlot) : Dim::constant(0);
  std::optional<Dim> end = dimOf(endSlot);
  if (start && end && intStep) {
    std::optional<int64_t> s = start->asConstant(), e = end->asConstant();
    int64_t k = int64_t(*step);
    if (s && e) {
      if ((k > 0 && *e < *s) || (k < 0 && *e > *s)) {
        c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(endSlot), "end", spec.name)
            .primary("`end` " + std::to_string(*e) + " lies " + (k > 0 ? "below" : "above") +
                     " `start` " + std::to_string(*s) + " with step " + std::to_string(k));
        return std::nullopt;
      }
      int64_t span = k > 0 ? *e - *s : *s - *e, by = k > 0 ? k : -k;
      return Dim::constant((span + by - 1) / by);
    }
    Dim span = k > 0 ? *end - *start : *start - *end;
    int64_t by = k > 0 ? k : -k;
    return (span + Dim::constant(by - 1)).floorDiv(by);
  }
  std::optional<double> s = startGiven ? number(startSlot) : std::optional<double>(0);
  std::optional<double> e = number(endSlot);
  if (!s || !e) {
    size_t bad = !e ? endSlot : startSlot;
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(bad), names[bad], c.typeStr(val(bad)))
        .primary("float bounds must be literals to size the result");
    return std::nullopt;
  }
  double length = std::ceil((*e - *s) / *step);
  if (length < 0) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(endSlot), "end", spec.name)
        .primary("`end` lies on the wrong side of `start` for the step");
    return std::nullopt;
  }
  return Dim::constant(int64_t(length));
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
  const Type &listType = val(0).type;
  bool listValue = !list && listType.kind() == Type::Kind::List && listType.elements &&
                   !listType.elements->empty(); // `cat(chunk(x, 2), 1)`
  if (!listValue && (!list || list->elements.empty())) {
    c.diags_
        .report(DiagId::TypeMismatch, rangeOf(0), "a list of tensors `[a, b]`", c.typeStr(val(0)))
        .primary("the tensors to join");
    return failed();
  }
  std::vector<Value> items;
  if (listValue) {
    for (const Type &t : *listType.elements) {
      Value v{t, val(0).origin, args[0].expr, {}};
      if (!v.type.isTensor()) {
        c.diags_.report(DiagId::ExpectedTensor, rangeOf(0), spec.name, c.typeStr(val(0)));
        return failed();
      }
      items.push_back(v);
    }
  }
  static const std::vector<ast::ExprPtr> kNoElements;
  for (const ast::ExprPtr &e : listValue ? kNoElements : list->elements) {
    const ExprInfo *info = c.program_.typeOf(e.get());
    Value v{info ? info->type : Type::error(), info ? info->origin : DeviceOrigin(), e.get(), {}};
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
  ast::DType dflt = ast::DType::F32;
  if (spec.id == BI::Arange) {
    std::optional<Dim> length = arangeLength(dflt);
    if (!length)
      return failed();
    shape.dims.push_back(*length);
  }
  size_t dtypeSlot = spec.id == BI::Full || spec.id == BI::Randn ? 2
                     : spec.id == BI::Arange                     ? 3
                                                                 : 1;
  std::optional<ast::DType> dtype = dtypeArg(dtypeSlot, dflt);
  if (!dtype)
    return failed();
  if (spec.id == BI::Arange) {
    // sized above
  } else if (spec.id == BI::Eye) {
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
  }
  return failed();
}

//===----------------------------------------------------------------------===//
// PyTorch's signatures for ports: split/chunk, masked_fill, triu/tril, pad
//===----------------------------------------------------------------------===//

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

/// torch.split / torch.chunk: a list of tensors along `dim`. A chunk holds
/// ceil(size / chunks) (the last one less, so there may be fewer chunks);
/// a symbolic size splits only into equal chunks that divide it exactly.
Value BuiltinCall::split(bool chunk) {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<int64_t> d = constInt(2, 0);
  if (!d)
    return failed();
  std::optional<unsigned> dim = c.normalizeDim(*d, *x, rangeOf(2));
  if (!dim)
    return failed();
  if (x->type.shape.hasPack()) {
    c.diags_.report(DiagId::UnsupportedFeature, call.range,
                    "`" + spec.name.str() + "` of a tensor with `...` dims");
    return failed();
  }
  Dim size = x->type.shape.dims[*dim];
  std::optional<int64_t> known = size.asConstant();
  std::string dimText = "dim " + std::to_string(*dim) + " of size " + size.str();
  auto invalid = [&](llvm::StringRef label) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), names[1], spec.name)
        .primary(label.str())
        .label(x->range(), c.typeStr(*x));
    return failed();
  };
  llvm::SmallVector<Dim, 4> pieces;
  auto equalPieces = [&](int64_t per) {
    for (int64_t at = 0; at < *known; at += per)
      pieces.push_back(Dim::constant(std::min(per, *known - at)));
  };
  const Value &arg = val(1);
  if (chunk || arg.type.kind() == Type::Kind::Int) {
    std::optional<int64_t> k = constInt(1, 1);
    if (!k)
      return failed();
    if (*k < 1)
      return invalid(chunk ? "at least one chunk" : "a split size of at least 1");
    if (known) {
      equalPieces(chunk ? std::max<int64_t>(1, (*known + *k - 1) / *k) : *k);
    } else if (std::optional<Dim> q = chunk ? size.exactDiv(Dim::constant(*k)) : std::nullopt) {
      pieces.assign(size_t(*k), *q);
    } else {
      return invalid(chunk ? "does not divide the size " + size.str() + " (known only at run time)"
                           : "the size " + size.str() +
                                 " is known only at run time: pass the sizes as a list");
    }
  } else if (arg.type.kind() == Type::Kind::List && arg.type.elements) {
    Dim total;
    for (const Type &e : *arg.type.elements) {
      std::optional<int64_t> k = e.intValue ? e.intValue->asConstant() : std::nullopt;
      if (e.kind() != Type::Kind::Int || !e.intValue || (k && *k < 0)) {
        c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "a split size", e.str());
        return failed();
      }
      pieces.push_back(*e.intValue);
      total = total + *e.intValue;
    }
    if (total != size)
      return invalid("the sizes add up to " + total.str() + ", not " + size.str() + " (" + dimText +
                     ")");
  } else {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a size or a list of sizes", c.typeStr(arg))
        .primary("`" + names[1].str() + "` of `" + spec.name.str() + "`");
    return failed();
  }
  std::vector<Type> parts;
  for (Dim piece : pieces) {
    Shape shape = x->type.shape;
    shape.dims[*dim] = piece;
    parts.push_back(Type::tensor(x->type.dtype, std::move(shape), x->type.dev));
  }
  Value v;
  v.type = Type::list(std::move(parts));
  v.origin = c.originOf(*x);
  return v;
}

/// torch.masked_fill: `value` where `mask` (broadcast to x's shape) holds.
Value BuiltinCall::maskedFill() {
  const Value *x = tensor(0), *mask = tensor(1);
  if (!x || !mask)
    return failed();
  if (mask->type.dtype != ast::DType::Bool) {
    c.diags_.report(DiagId::ExpectedBoolMask, mask->range(), spec.name, c.typeStr(*mask))
        .primary(c.typeStr(*mask));
    return failed();
  }
  const Value &value = val(2);
  if (value.type.isTensor()) {
    if (value.type.rank() != 0 || value.type.shape.hasPack()) {
      c.diags_.report(DiagId::RankMismatch, rangeOf(2), spec.name, 0, value.type.rank())
          .primary("the fill value is a number or a 0-dim tensor");
      return failed();
    }
    if (!c.requireSameDType(spec.name, *x, value))
      return failed();
  } else if (!c.checkScalarOperand(spec.name, *x, value)) {
    return failed();
  }
  std::optional<Device> dev = devices({x, mask, value.type.isTensor() ? &value : nullptr});
  if (!dev)
    return failed();
  std::optional<Shape> shape = c.broadcast(x->type.shape, mask->type.shape);
  if (!shape || *shape != x->type.shape) {
    c.diags_
        .report(DiagId::BroadcastMismatch, mask->range(), mask->type.shape.str(),
                x->type.shape.str(), spec.name)
        .primary("the mask must broadcast to the shape of `x`")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, x->type.shape, *dev, *x);
}

/// torch.triu / torch.tril over the last two dims.
Value BuiltinCall::triangle() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  if (!constInt(1, 0))
    return failed();
  if (x->type.rank() < 2) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, "2 or more", x->type.rank())
        .primary(c.typeStr(*x));
    return failed();
  }
  return result(x->type.dtype, x->type.shape, x->type.dev, *x);
}

/// torch.nn.functional.pad: `pad` lists (left, right) pairs from the last
/// dim backwards; constant padding may be negative (it crops).
Value BuiltinCall::pad() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<llvm::StringRef> mode =
      modeArg(2, "constant", {"constant", "reflect", "replicate", "circular"});
  if (!mode)
    return failed();
  const Value &list = val(1);
  if (list.type.kind() != Type::Kind::List || !list.type.elements) {
    c.diags_.report(DiagId::TypeMismatch, rangeOf(1), "a list of sizes", c.typeStr(list))
        .primary("(left, right) pairs from the last dim backwards");
    return failed();
  }
  const std::vector<Type> &sizes = *list.type.elements;
  size_t rank = x->type.rank();
  if (sizes.size() % 2 != 0 || sizes.size() > 2 * rank) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "pad", spec.name)
        .primary("needs (left, right) pairs for at most " + std::to_string(rank) + " dims, found " +
                 std::to_string(sizes.size()) + " sizes")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  if (has(3)) {
    if (*mode != "constant") {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(3), "value", spec.name)
          .primary("only `mode: \"constant\"` pads with a value");
      return failed();
    }
    if (!c.checkScalarOperand(spec.name, *x, val(3)))
      return failed();
  }
  Shape shape = x->type.shape;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const Type &e = sizes[k];
    if (e.kind() != Type::Kind::Int || !e.intValue) {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "a padding size", e.str());
      return failed();
    }
    Dim &d = shape.dims[rank - 1 - k / 2];
    std::optional<int64_t> amount = e.intValue->asConstant(), extent = d.asConstant();
    if (*mode != "constant" && amount) {
      bool wraps = *mode == "reflect" || *mode == "circular";
      int64_t limit = extent ? (*mode == "reflect" ? *extent - 1 : *extent) : INT64_MAX;
      if (*amount < 0 || (wraps && *amount > limit)) {
        c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "pad", spec.name)
            .primary("`" + mode->str() + "` padding of " + std::to_string(*amount) +
                     " on a dim of size " + d.str() + " (it takes 0 to " +
                     (limit == INT64_MAX ? std::string("the size") : std::to_string(limit)) + ")")
            .label(x->range(), c.typeStr(*x));
        return failed();
      }
    }
    // Symbolic reflect/circular widths are checked when the model is run.
    d = d + *e.intValue;
    if (std::optional<int64_t> out = d.asConstant(); out && *out < 0) {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "pad", spec.name)
          .primary("crops a dim below size 0")
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

//===----------------------------------------------------------------------===//
// conv1d, conv_transpose2d, group_norm, interpolate
//===----------------------------------------------------------------------===//

/// An int or a one-element list (`stride: 2`, `padding: [1]`) for conv1d.
std::optional<Dim> BuiltinCall::single(size_t i, int64_t dflt) {
  if (!given[i])
    return Dim::constant(dflt);
  const Value &v = val(i);
  std::optional<Dim> out;
  if (v.type.kind() == Type::Kind::Int && v.type.intValue)
    out = v.type.intValue;
  else if (v.type.kind() == Type::Kind::List && v.type.elements && v.type.elements->size() == 1 &&
           (*v.type.elements)[0].kind() == Type::Kind::Int)
    out = (*v.type.elements)[0].intValue;
  if (!out) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(i), names[i], c.typeStr(v))
        .primary("expected an int");
    return std::nullopt;
  }
  if (std::optional<int64_t> k = out->asConstant(); k && *k < 0) {
    c.diags_.report(DiagId::ConvShapeMismatch, rangeOf(i), spec.name,
                    "`" + names[i].str() + "` cannot be negative");
    return std::nullopt;
  }
  return out;
}

/// The operands of a convolution: x [N, C, ...] (or unbatched), the weight
/// of rank `spatial` + 2, the optional bias, one dtype, one device.
std::optional<Device> BuiltinCall::convOperands(size_t spatial, const Value *&x, const Value *&w,
                                                const Value *&b) {
  x = tensor(0), w = tensor(1);
  b = has(2) ? tensor(2) : nullptr;
  if (!x || !w || (has(2) && !b))
    return std::nullopt;
  if (!floating(*x) || !c.requireSameDType(spec.name, *w, *x) ||
      (b && !c.requireSameDType(spec.name, *w, *b)))
    return std::nullopt;
  std::optional<Device> dev = devices({x, w, b});
  if (!dev)
    return std::nullopt;
  size_t xr = x->type.rank();
  std::string layout = spatial == 1 ? "3 ([N, C, L])" : "4 ([N, C, H, W])";
  if (x->type.shape.hasPack() || (xr != spatial + 1 && xr != spatial + 2)) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, layout, xr).primary(c.typeStr(*x));
    return std::nullopt;
  }
  if (w->type.rank() != spatial + 2 || w->type.shape.hasPack()) {
    c.diags_
        .report(DiagId::RankMismatch, w->range(), spec.name, std::to_string(spatial + 2),
                w->type.rank())
        .primary(c.typeStr(*w));
    return std::nullopt;
  }
  return dev;
}

/// The channel checks shared by conv1d and conv_transpose2d.
bool BuiltinCall::convChannels(const Value &x, const Value &w, const Value *b, Dim inChannels,
                               Dim expectedIn, Dim outChannels, llvm::StringRef weightLayout) {
  if (inChannels != expectedIn) {
    c.diags_
        .report(DiagId::ConvShapeMismatch, x.range(), spec.name,
                "the input has " + inChannels.str() + " channels but the weight expects " +
                    expectedIn.str())
        .primary(c.typeStr(x))
        .label(w.range(), c.typeStr(w) + ": " + weightLayout.str());
    return false;
  }
  if (b && (b->type.rank() != 1 || b->type.shape.dims[0] != outChannels)) {
    c.diags_
        .report(DiagId::ConvShapeMismatch, b->range(), spec.name,
                "the bias must have shape [" + outChannels.str() + "]")
        .primary(c.typeStr(*b))
        .label(w.range(), c.typeStr(w));
    return false;
  }
  return true;
}

bool BuiltinCall::nonEmpty(const Value &x, const Shape &shape, size_t spatial) {
  for (size_t k = shape.dims.size() - spatial; k < shape.dims.size(); ++k) {
    std::optional<int64_t> size = shape.dims[k].asConstant();
    if (size && *size <= 0) {
      c.diags_
          .report(DiagId::ConvShapeMismatch, x.range(), spec.name,
                  "the output would be empty (size " + std::to_string(*size) + ")")
          .primary(c.typeStr(x));
      return false;
    }
  }
  return true;
}

/// F.conv1d: x [N, C, L], weight [out, C / groups, k].
Value BuiltinCall::conv1d() {
  const Value *x, *w, *b;
  std::optional<Device> dev = convOperands(1, x, w, b);
  if (!dev)
    return failed();
  std::optional<Dim> stride = single(3, 1), padding = single(4, 0), dilation = single(5, 1),
                     groups = single(6, 1);
  if (!stride || !padding || !dilation || !groups)
    return failed();
  if (!positive(*stride) || !positive(*groups)) {
    c.diags_.report(DiagId::ConvShapeMismatch, call.range, spec.name,
                    "stride and groups must be positive");
    return failed();
  }
  const auto &xd = x->type.shape.dims, &wd = w->type.shape.dims;
  size_t cAxis = xd.size() - 2;
  if (!convChannels(*x, *w, b, xd[cAxis], wd[1] * *groups, wd[0], "[out, in / groups, kernel]"))
    return failed();
  Shape shape;
  if (xd.size() == 3)
    shape.dims.push_back(xd[0]);
  shape.dims.push_back(wd[0]);
  shape.dims.push_back(convOut(xd[cAxis + 1], wd[2], *stride, *padding, *dilation));
  if (!nonEmpty(*x, shape, 1))
    return failed();
  return result(x->type.dtype, std::move(shape), *dev, *w);
}

/// F.conv_transpose2d: x [N, in, H, W], weight [in, out / groups, kH, kW];
/// H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1.
Value BuiltinCall::convTranspose2d() {
  const Value *x, *w, *b;
  std::optional<Device> dev = convOperands(2, x, w, b);
  if (!dev)
    return failed();
  auto stride = pair(3, 1), padding = pair(4, 0), outputPadding = pair(5, 0), dilation = pair(7, 1);
  std::optional<Dim> groups = single(6, 1);
  if (!stride || !padding || !outputPadding || !dilation || !groups)
    return failed();
  if (!positive(stride->first) || !positive(stride->second) || !positive(*groups)) {
    c.diags_.report(DiagId::ConvShapeMismatch, call.range, spec.name,
                    "stride and groups must be positive");
    return failed();
  }
  for (auto [op, s, d] : {std::tuple{outputPadding->first, stride->first, dilation->first},
                          std::tuple{outputPadding->second, stride->second, dilation->second}}) {
    std::optional<int64_t> o = op.asConstant(), sk = s.asConstant(), dk = d.asConstant();
    if (o && sk && dk && *o >= std::max(*sk, *dk)) {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(5), "output_padding", spec.name)
          .primary("must be smaller than the stride or the dilation");
      return failed();
    }
  }
  const auto &xd = x->type.shape.dims, &wd = w->type.shape.dims;
  size_t cAxis = xd.size() - 3;
  Dim outChannels = wd[1] * *groups;
  if (!convChannels(*x, *w, b, xd[cAxis], wd[0], outChannels, "[in, out / groups, kH, kW]"))
    return failed();
  Dim one = Dim::constant(1), two = Dim::constant(2);
  auto outSize = [&](Dim in, Dim k, Dim s, Dim p, Dim op, Dim d) {
    return (in - one) * s - two * p + d * (k - one) + op + one;
  };
  Shape shape;
  if (xd.size() == 4)
    shape.dims.push_back(xd[0]);
  shape.dims.push_back(outChannels);
  shape.dims.push_back(outSize(xd[cAxis + 1], wd[2], stride->first, padding->first,
                               outputPadding->first, dilation->first));
  shape.dims.push_back(outSize(xd[cAxis + 2], wd[3], stride->second, padding->second,
                               outputPadding->second, dilation->second));
  if (!nonEmpty(*x, shape, 2))
    return failed();
  return result(x->type.dtype, std::move(shape), *dev, *w);
}

/// F.group_norm: x [N, C, ...] normalised over each of `num_groups` groups
/// of C / num_groups channels (and every position); weight and bias [C].
Value BuiltinCall::groupNorm() {
  const Value *x = tensor(0);
  const Value *w = has(2) ? tensor(2) : nullptr, *b = has(3) ? tensor(3) : nullptr;
  if (!x || (has(2) && !w) || (has(3) && !b))
    return failed();
  if (!floating(*x) || (w && !c.requireSameDType(spec.name, *x, *w)) ||
      (b && !c.requireSameDType(spec.name, *x, *b)))
    return failed();
  std::optional<Device> dev = devices({x, w, b});
  if (!dev)
    return failed();
  if (x->type.rank() < 2 || x->type.shape.hasPack()) {
    c.diags_.report(DiagId::RankMismatch, x->range(), spec.name, "2 or more ([N, C, ...])",
                    x->type.rank());
    return failed();
  }
  if (has(4)) {
    Type::Kind k = val(4).type.kind();
    if (k != Type::Kind::Float && k != Type::Kind::Int) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(4), "float", c.typeStr(val(4)));
      return failed();
    }
  }
  const Value &groupsArg = val(1);
  if (groupsArg.type.kind() != Type::Kind::Int || !groupsArg.type.intValue) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(1), "num_groups", c.typeStr(groupsArg));
    return failed();
  }
  Dim groups = *groupsArg.type.intValue, channels = x->type.shape.dims[1];
  std::optional<int64_t> g = groups.asConstant(), ch = channels.asConstant();
  // Symbolic counts (a generic GroupNorm) are checked when the model is run.
  bool divides = g && ch ? *g > 0 && *ch % *g == 0 : true;
  if (!divides) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(1), "num_groups", spec.name)
        .primary(groups.str() + " groups do not divide " + channels.str() + " channels")
        .label(x->range(), c.typeStr(*x));
    return failed();
  }
  Shape perChannel;
  perChannel.dims.push_back(channels);
  for (const Value *s : {w, b}) {
    if (s && s->type.shape != perChannel) {
      c.diags_.report(DiagId::ShapeMismatch, s->range(), perChannel.str(), s->type.shape.str())
          .primary(c.typeStr(*s))
          .label(x->range(), c.typeStr(*x));
      return failed();
    }
  }
  return result(x->type.dtype, x->type.shape, *dev, *x);
}

/// F.interpolate of [N, C, L] (`nearest`, `linear`) or [N, C, H, W]
/// (`nearest`, `bilinear`) to `size`, or by `scale_factor` (floor(in * s)).
Value BuiltinCall::interpolate() {
  const Value *x = tensor(0);
  if (!x)
    return failed();
  std::optional<llvm::StringRef> mode = modeArg(3, "nearest", {"nearest", "linear", "bilinear"});
  if (!mode)
    return failed();
  size_t rank = x->type.rank();
  size_t want = *mode == "linear" ? 3 : *mode == "bilinear" ? 4 : 0;
  if (x->type.shape.hasPack() || (want ? rank != want : rank != 3 && rank != 4)) {
    c.diags_
        .report(DiagId::RankMismatch, x->range(), spec.name,
                want == 3   ? "3 ([N, C, L]) for `linear`"
                : want == 4 ? "4 ([N, C, H, W]) for `bilinear`"
                            : "3 or 4",
                rank)
        .primary(c.typeStr(*x));
    return failed();
  }
  if (*mode != "nearest" && !floating(*x))
    return failed();
  if (has(4)) {
    if (*mode == "nearest") {
      c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(4), "align_corners", spec.name)
          .primary("only the linear modes take `align_corners`");
      return failed();
    }
    if (!llvm::isa_and_present<ast::BoolLitExpr>(args[4].expr)) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(4), "`true` or `false`", c.typeStr(val(4)));
      return failed();
    }
  }
  if (has(1) == has(2)) {
    c.diags_
        .report(DiagId::InvalidArgumentValue, has(1) ? rangeOf(2) : call.range,
                has(1) ? "scale_factor" : "size", spec.name)
        .primary("give either `size` or `scale_factor`");
    return failed();
  }
  size_t spatial = rank - 2, slot = has(1) ? 1 : 2;
  const Value &arg = val(slot);
  std::vector<Type> items;
  if (arg.type.kind() == Type::Kind::List && arg.type.elements)
    items = *arg.type.elements;
  else
    items.assign(spatial, arg.type);
  if (items.size() != spatial) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(slot), names[slot], spec.name)
        .primary("needs one entry per spatial dim (" + std::to_string(spatial) + ")");
    return failed();
  }
  auto *list = llvm::dyn_cast_if_present<ast::ListExpr>(args[slot].expr);
  Shape shape = x->type.shape;
  for (size_t k = 0; k < spatial; ++k) {
    const Type &e = items[k];
    Dim &d = shape.dims[2 + k];
    if (e.kind() == Type::Kind::Int && e.intValue) {
      d = slot == 1 ? *e.intValue : d * *e.intValue;
      continue;
    }
    // A float scale: a literal, and the input size must be known.
    const ast::Expr *at =
        list && k < list->elements.size() ? list->elements[k].get() : args[slot].expr;
    auto *f = llvm::dyn_cast_if_present<ast::FloatLitExpr>(at);
    std::optional<int64_t> in = d.asConstant();
    if (slot == 2 && f && f->value > 0 && (in || f->value == std::floor(f->value))) {
      d = in ? Dim::constant(int64_t(std::floor(double(*in) * f->value)))
             : d * Dim::constant(int64_t(f->value));
      continue;
    }
    c.diags_.report(DiagId::ExpectedConstant, at ? at->range : rangeOf(slot), names[slot], e.str())
        .primary(slot == 1 ? "sizes are ints"
                           : "a scale is an int, or a float literal on a dim of known size");
    return failed();
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
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

std::string BuiltinCall::signatureOf(const Spec &spec) {
  if (spec.overloads)
    return spec.overloads;
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
