//===- BuiltinsConv.cpp - Convolution, pooling, normalisation built-ins ---===//
//
// Typing rules of conv2d, conv1d, conv_transpose2d, max/avg/adaptive
// pooling, layer_norm, batch_norm, group_norm and interpolate: PyTorch's
// output-size formulas over possibly symbolic sizes.
//
//===----------------------------------------------------------------------===//

#include "sema/BuiltinCall.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <cmath>

using llvm::dyn_cast;

namespace modelc::sema::detail {

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

/// F.conv2d: x [N, C, H, W] (or unbatched), weight [out, C / groups, kH, kW].
Value BuiltinCall::conv2d() {
  namespace P = slot::conv2d;
  const Value *x, *w, *b;
  std::optional<Device> dev = convOperands(2, "4 ([out, in/groups, kH, kW])", x, w, b);
  if (!dev)
    return failed();
  auto stride = pair(P::stride, 1), padding = pair(P::padding, 0), dilation = pair(P::dilation, 1);
  // Like stride, groups may be a model argument (`groups: g`).
  std::optional<Dim> groups = has(P::groups) ? dimValue(P::groups) : Dim::constant(1);
  if (!stride || !padding || !dilation || !groups ||
      !positiveStrides({stride->first, stride->second}, *groups))
    return failed();
  const auto &xd = x->type.shape.dims, &wd = w->type.shape.dims;
  size_t cAxis = xd.size() - 3;
  if (!convChannels(*x, *w, b, xd[cAxis], wd[1] * *groups, wd[0], ""))
    return failed();
  Shape shape;
  if (xd.size() == 4)
    shape.dims.push_back(xd[0]);
  shape.dims.push_back(wd[0]);
  shape.dims.push_back(
      convOut(xd[cAxis + 1], wd[2], stride->first, padding->first, dilation->first));
  shape.dims.push_back(
      convOut(xd[cAxis + 2], wd[3], stride->second, padding->second, dilation->second));
  if (!nonEmpty(*x, shape, 2))
    return failed();
  return result(x->type.dtype, std::move(shape), *dev, *w);
}

Value BuiltinCall::pool(bool adaptive) {
  namespace P = slot::max_pool2d;
  static_assert(slot::same(P::x, slot::avg_pool2d::x, slot::adaptive_avg_pool2d::x) &&
                slot::same(P::kernel_size, slot::avg_pool2d::kernel_size) &&
                slot::same(P::stride, slot::avg_pool2d::stride) &&
                slot::same(P::padding, slot::avg_pool2d::padding));
  const Value *x = tensor(P::x);
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
    constexpr size_t kOutputSize = slot::adaptive_avg_pool2d::output_size;
    const Value &out = val(kOutputSize);
    if (out.type.kind() == Type::Kind::Int && out.type.intValue) {
      shape.dims[h] = shape.dims[h + 1] = *out.type.intValue;
    } else if ((out.type.kind() == Type::Kind::List || out.type.kind() == Type::Kind::Tuple) &&
               out.type.elements && out.type.elements->size() == 2 &&
               (*out.type.elements)[0].intValue && (*out.type.elements)[1].intValue) {
      shape.dims[h] = *(*out.type.elements)[0].intValue;
      shape.dims[h + 1] = *(*out.type.elements)[1].intValue;
    } else {
      c.diags_.report(DiagId::ExpectedConstant, rangeOf(kOutputSize), "output_size",
                      c.typeStr(out));
      return failed();
    }
    return result(x->type.dtype, std::move(shape), x->type.dev, *x);
  }
  auto kernel = pair(P::kernel_size, std::nullopt);
  if (!kernel)
    return failed();
  auto stride = pair(P::stride, std::nullopt);
  if (has(P::stride) && !stride)
    return failed();
  if (!stride)
    stride = kernel;
  auto padding = pair(P::padding, 0);
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
  namespace P = slot::layer_norm;
  const Value *x = tensor(P::x), *w = tensor(P::weight), *b = tensor(P::bias);
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
  namespace P = slot::batch_norm;
  const Value *x = tensor(P::x);
  const Value *stats[4] = {tensor(P::mean), tensor(P::var), tensor(P::weight), tensor(P::bias)};
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
std::optional<Device> BuiltinCall::convOperands(size_t spatial, llvm::StringRef weightRank,
                                                const Value *&x, const Value *&w, const Value *&b) {
  namespace P = slot::conv2d;
  static_assert(slot::same(P::x, slot::conv1d::x, slot::conv_transpose2d::x) &&
                slot::same(P::weight, slot::conv1d::weight, slot::conv_transpose2d::weight) &&
                slot::same(P::bias, slot::conv1d::bias, slot::conv_transpose2d::bias));
  x = tensor(P::x), w = tensor(P::weight);
  b = has(P::bias) ? tensor(P::bias) : nullptr;
  if (!x || !w || (has(P::bias) && !b))
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
    c.diags_.report(DiagId::RankMismatch, w->range(), spec.name, weightRank, w->type.rank())
        .primary(c.typeStr(*w));
    return std::nullopt;
  }
  return dev;
}

bool BuiltinCall::positiveStrides(std::initializer_list<Dim> strides, Dim groups) {
  if (llvm::all_of(strides, positive) && positive(groups))
    return true;
  c.diags_.report(DiagId::ConvShapeMismatch, call.range, spec.name,
                  "stride and groups must be positive");
  return false;
}

/// The channel checks of the convolutions; `weightLayout` (when not empty)
/// labels the weight.
bool BuiltinCall::convChannels(const Value &x, const Value &w, const Value *b, Dim inChannels,
                               Dim expectedIn, Dim outChannels, llvm::StringRef weightLayout) {
  if (inChannels != expectedIn) {
    c.diags_
        .report(DiagId::ConvShapeMismatch, x.range(), spec.name,
                "the input has " + inChannels.str() + " channels but the weight expects " +
                    expectedIn.str())
        .primary(c.typeStr(x))
        .label(w.range(),
               weightLayout.empty() ? c.typeStr(w) : c.typeStr(w) + ": " + weightLayout.str());
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
  namespace P = slot::conv1d;
  const Value *x, *w, *b;
  std::optional<Device> dev = convOperands(1, "3", x, w, b);
  if (!dev)
    return failed();
  std::optional<Dim> stride = single(P::stride, 1), padding = single(P::padding, 0),
                     dilation = single(P::dilation, 1), groups = single(P::groups, 1);
  if (!stride || !padding || !dilation || !groups || !positiveStrides({*stride}, *groups))
    return failed();
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
  namespace P = slot::conv_transpose2d;
  const Value *x, *w, *b;
  std::optional<Device> dev = convOperands(2, "4", x, w, b);
  if (!dev)
    return failed();
  auto stride = pair(P::stride, 1), padding = pair(P::padding, 0),
       outputPadding = pair(P::output_padding, 0), dilation = pair(P::dilation, 1);
  std::optional<Dim> groups = single(P::groups, 1);
  if (!stride || !padding || !outputPadding || !dilation || !groups ||
      !positiveStrides({stride->first, stride->second}, *groups))
    return failed();
  for (auto [op, s, d] : {std::tuple{outputPadding->first, stride->first, dilation->first},
                          std::tuple{outputPadding->second, stride->second, dilation->second}}) {
    std::optional<int64_t> o = op.asConstant(), sk = s.asConstant(), dk = d.asConstant();
    if (o && sk && dk && *o >= std::max(*sk, *dk)) {
      c.diags_
          .report(DiagId::InvalidArgumentValue, rangeOf(P::output_padding), "output_padding",
                  spec.name)
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
  namespace P = slot::group_norm;
  const Value *x = tensor(P::x);
  const Value *w = has(P::weight) ? tensor(P::weight) : nullptr,
              *b = has(P::bias) ? tensor(P::bias) : nullptr;
  if (!x || (has(P::weight) && !w) || (has(P::bias) && !b))
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
  if (has(P::eps)) {
    Type::Kind k = val(P::eps).type.kind();
    if (k != Type::Kind::Float && k != Type::Kind::Int) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(P::eps), "float", c.typeStr(val(P::eps)));
      return failed();
    }
  }
  const Value &groupsArg = val(P::num_groups);
  if (groupsArg.type.kind() != Type::Kind::Int || !groupsArg.type.intValue) {
    c.diags_.report(DiagId::ExpectedConstant, rangeOf(P::num_groups), "num_groups",
                    c.typeStr(groupsArg));
    return failed();
  }
  Dim groups = *groupsArg.type.intValue, channels = x->type.shape.dims[1];
  std::optional<int64_t> g = groups.asConstant(), ch = channels.asConstant();
  // Symbolic counts (a generic GroupNorm) are checked when the model is run.
  bool divides = g && ch ? *g > 0 && *ch % *g == 0 : true;
  if (!divides) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(P::num_groups), "num_groups", spec.name)
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
  namespace P = slot::interpolate;
  const Value *x = tensor(P::x);
  if (!x)
    return failed();
  std::optional<llvm::StringRef> mode =
      modeArg(P::mode, "nearest", {"nearest", "linear", "bilinear"});
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
  if (has(P::align_corners)) {
    if (*mode == "nearest") {
      c.diags_
          .report(DiagId::InvalidArgumentValue, rangeOf(P::align_corners), "align_corners",
                  spec.name)
          .primary("only the linear modes take `align_corners`");
      return failed();
    }
    if (!llvm::isa_and_present<ast::BoolLitExpr>(args[P::align_corners].expr)) {
      c.diags_.report(DiagId::TypeMismatch, rangeOf(P::align_corners), "`true` or `false`",
                      c.typeStr(val(P::align_corners)));
      return failed();
    }
  }
  if (has(P::size) == has(P::scale_factor)) {
    c.diags_
        .report(DiagId::InvalidArgumentValue, has(P::size) ? rangeOf(P::scale_factor) : call.range,
                has(P::size) ? "scale_factor" : "size", spec.name)
        .primary("give either `size` or `scale_factor`");
    return failed();
  }
  size_t spatial = rank - 2, sizing = has(P::size) ? P::size : P::scale_factor;
  const Value &arg = val(sizing);
  std::vector<Type> items;
  if ((arg.type.kind() == Type::Kind::List || arg.type.kind() == Type::Kind::Tuple) &&
      arg.type.elements)
    items = *arg.type.elements; // `[2, 3]` or PyTorch's `(2, 3)`
  else
    items.assign(spatial, arg.type);
  if (items.size() != spatial) {
    c.diags_.report(DiagId::InvalidArgumentValue, rangeOf(sizing), names[sizing], spec.name)
        .primary("needs one entry per spatial dim (" + std::to_string(spatial) + ")");
    return failed();
  }
  auto *list = llvm::dyn_cast_if_present<ast::ListExpr>(args[sizing].expr);
  Shape shape = x->type.shape;
  for (size_t k = 0; k < spatial; ++k) {
    const Type &e = items[k];
    Dim &d = shape.dims[2 + k];
    if (e.kind() == Type::Kind::Int && e.intValue) {
      d = sizing == P::size ? *e.intValue : d * *e.intValue;
      continue;
    }
    // A float scale: a literal, and the input size must be known.
    const ast::Expr *at =
        list && k < list->elements.size() ? list->elements[k].get() : args[sizing].expr;
    auto *f = llvm::dyn_cast_if_present<ast::FloatLitExpr>(at);
    std::optional<int64_t> in = d.asConstant();
    if (sizing == P::scale_factor && f && f->value > 0 &&
        (in || f->value == std::floor(f->value))) {
      d = in ? Dim::constant(int64_t(std::floor(double(*in) * f->value)))
             : d * Dim::constant(int64_t(f->value));
      continue;
    }
    c.diags_
        .report(DiagId::ExpectedConstant, at ? at->range : rangeOf(sizing), names[sizing], e.str())
        .primary(sizing == P::size
                     ? "sizes are ints"
                     : "a scale is an int, or a float literal on a dim of known size");
    return failed();
  }
  return result(x->type.dtype, std::move(shape), x->type.dev, *x);
}

} // namespace modelc::sema::detail
