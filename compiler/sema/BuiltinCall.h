//===- BuiltinCall.h - Checking one built-in call ---------------*- C++ -*-===//
//
// Private to the checker: the built-ins' ids and table entries, and
// BuiltinCall, which binds one call's arguments to the built-in's
// parameters and applies its typing rule, which reads them by their slot
// constants (BuiltinSlots.h, made from the same Builtins.def as the table).
// The rules live by family:
//   Builtins.cpp             the table, argument binding, argument accessors,
//                            the dispatch (typeRule)
//   BuiltinsElementwise.cpp  activations, math, reductions, where, losses
//   BuiltinsShape.cpp        reshape ... concat, split, pad, gather
//   BuiltinsConv.cpp         convolutions, pooling, normalisation, resampling
//   BuiltinsCreation.cpp     zeros, ones, full, randn, arange, eye
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_BUILTINCALL_H
#define MODELC_SEMA_BUILTINCALL_H

#include "sema/BuiltinSlots.h"
#include "sema/Checker.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <utility>

namespace modelc::sema::detail {

enum class BI {
  Relu,
  Gelu,
  Silu,
  Tanh,
  Sigmoid,
  Exp,
  Log,
  Sqrt,
  Sin,
  Cos,
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
  Interpolate,
  Maximum,
  Minimum,
  Clamp,
  Argmax,
  Argmin
};

/// One entry of Builtins.def.
struct Spec {
  llvm::StringLiteral name;
  BI id;
  const char *params; // space-separated; a trailing `?` marks an optional one
};

const Spec *findSpec(llvm::StringRef name);

constexpr size_t kMaxParams = 8;

/// Checks one built-in call: binds its arguments, then applies its rule.
class BuiltinCall {
public:
  BuiltinCall(Checker &c, const ast::CallExpr &call, const Spec &spec)
      : c(c), call(call), spec(spec) {
    llvm::SmallVector<llvm::StringRef, kMaxParams> parts;
    llvm::StringRef(spec.params).split(parts, ' ', -1, /*KeepEmpty=*/false);
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
  /// A dim of `x` as a constant int, negative ones counting from the end
  /// (from one past it where `allowEnd`, as `unsqueeze` inserts).
  std::optional<unsigned> dimArg(size_t i, const Value &x, bool allowEnd = false);
  std::optional<std::pair<Dim, Dim>> pair(size_t i, std::optional<int64_t> dflt);
  std::optional<ElementType> dtypeArg(size_t i, ast::DType dflt);
  /// A compile-time number: a constant int or a float literal.
  std::optional<double> number(size_t i);
  std::optional<Dim> arangeLength(ast::DType &dflt);
  bool floating(const Value &v);
  bool integerIndex(const Value &v);
  /// False (after E0502 "a numeric tensor") for a bool tensor; `castHelp`
  /// adds the help to cast it to i64.
  bool numeric(const Value &x, bool castHelp);
  std::optional<Device> devices(llvm::ArrayRef<const Value *> operands);
  std::optional<Shape> shapeArg(size_t i, bool allowInfer);
  Value result(ElementType dtype, Shape shape, Device dev, const Value &originFrom);

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
  /// maximum / minimum: two operands, tensors or numbers, broadcast.
  Value elementwisePair();
  Value clamp();
  Value argReduce();
  /// The shape of `x` reduced over the `dimSlot` argument (over every dim
  /// without one: rank 0, or all ones with `keepdim` where `keepAllDims`),
  /// `keepdimSlot` a bool literal; nullopt after reporting.
  std::optional<Shape> reducedShape(const Value &x, size_t dimSlot, size_t keepdimSlot,
                                    bool keepAllDims);
  Value triangle();
  Value pad();
  std::optional<Dim> single(size_t i, int64_t dflt);
  /// x, weight and bias of a convolution over `spatial` dims, of one dtype
  /// and device; `weightRank` is what E0403 expects of the weight.
  std::optional<Device> convOperands(size_t spatial, llvm::StringRef weightRank, const Value *&x,
                                     const Value *&w, const Value *&b);
  /// E0407 unless every stride and the group count is positive (or symbolic).
  bool positiveStrides(std::initializer_list<Dim> strides, Dim groups);
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

} // namespace modelc::sema::detail

#endif // MODELC_SEMA_BUILTINCALL_H
