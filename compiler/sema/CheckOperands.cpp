//===- CheckOperands.cpp - What every op checks of its operands -----------===//
//
// One device for all operands (the report and the edits that move one),
// one dtype, broadcastable shapes, dims in range.
//
//===----------------------------------------------------------------------===//

#include "sema/Checker.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

#include <functional>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

Type Checker::resolve(const Type &t) {
  if (!t.isTensor() || !t.dev.isVar())
    return t;
  Type r = t;
  r.dev = resolve(t.dev);
  return r;
}

DeviceOrigin Checker::originOf(const Value &v) {
  if (fn_ && v.type.isTensor() && v.type.dev.isVar())
    if (const DeviceOrigin *o = fn_->unifier.bindingOrigin(v.type.dev))
      return *o;
  return v.origin;
}

std::string Checker::shortText(Range r) const {
  llvm::StringRef t = r.text();
  if (t.size() <= 40 && !t.contains('\n'))
    return t.str();
  size_t cut = std::min<size_t>(t.find('\n'), 37);
  return t.take_front(cut).rtrim().str() + "...";
}

bool Checker::isPostfixSafe(const ast::Expr &e) {
  switch (e.kind()) {
  case ast::Expr::Kind::Unary:
  case ast::Expr::Kind::Binary:
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
    return false;
  default:
    return true;
  }
}

std::vector<Edit> Checker::toEdits(const ast::Expr &operand, Device target) {
  std::string to = ".to(" + target.str() + ")";
  if (isPostfixSafe(operand))
    return {{operand.range.after(), to}};
  return {{Range{operand.range.begin, operand.range.begin}, "("},
          {operand.range.after(), ")" + to}};
}

/// The character after `r`'s trailing blanks, or before its leading ones.
static char nextChar(Range r) {
  const char *p = r.end.getPointer();
  while (*p == ' ' || *p == '\t')
    ++p;
  return p[0] == '/' && p[1] == '/' ? '\n' : *p;
}

std::vector<Edit> Checker::placementEdits(Range creation, llvm::StringRef device) {
  std::string at = " @ " + device.str();
  // Bare only where it stands alone: `let t = zeros([n])`, `f(zeros([n]), x)`;
  // `2.0 * zeros([n]) @ D` would place the product.
  const char *floor = fn_ && fn_->model && fn_->model->decl
                          ? fn_->model->decl->range.begin.getPointer()
                          : creation.begin.getPointer();
  llvm::StringRef before = llvm::StringRef(floor, creation.begin.getPointer() - floor).rtrim(" \t");
  bool aloneBefore = before.empty() || llvm::StringRef("=(,[{\n").contains(before.back()) ||
                     before.ends_with("return");
  bool aloneAfter =
      llvm::StringRef(")],}\n\r").contains(nextChar(creation)) || nextChar(creation) == '\0';
  if (aloneBefore && aloneAfter)
    return {{creation.after(), at}};
  return {{Range{creation.begin, creation.begin}, "("}, {creation.after(), at + ")"}};
}

std::optional<std::pair<Range, std::string>> Checker::transferAfter(Range creation) {
  llvm::StringRef rest(creation.end.getPointer());
  if (!rest.starts_with(".to("))
    return std::nullopt;
  int depth = 0;
  for (size_t i = 3; i < rest.size() && rest[i] != '\n'; ++i) {
    if (rest[i] == '(')
      ++depth;
    else if (rest[i] == ')' && --depth == 0) {
      llvm::StringRef device = rest.slice(4, i).trim();
      if (device.empty() || device.contains(','))
        return std::nullopt;
      return std::make_pair(
          Range{creation.end, llvm::SMLoc::getFromPointer(creation.end.getPointer() + i + 1)},
          device.str());
    }
  }
  return std::nullopt;
}

std::vector<Edit> Checker::castEdits(const ast::Expr &operand, const ElementType &target) {
  return {{Range{operand.range.begin, operand.range.begin}, "cast("},
          {operand.range.after(), ", " + target.str() + ")"}};
}

Value Checker::fail(const ast::Expr &expr, llvm::ArrayRef<const Value *> operands) {
  if (fn_)
    for (const Value *v : operands)
      if (v && v->type.isTensor())
        fn_->unifier.poison(v->type.dev);
  return errorValue(&expr);
}

std::optional<Device> Checker::unifyDevices(llvm::StringRef op, Range opRange,
                                            const ast::Expr &whole,
                                            llvm::ArrayRef<const Value *> operands) {
  const Value *first = nullptr;
  for (const Value *v : operands) {
    if (!v || !v->type.isTensor())
      continue;
    if (!first) {
      first = v;
      continue;
    }
    // Describe the binding only when a variable really gets a device.
    Device fd = resolve(first->type.dev), vd = resolve(v->type.dev);
    DeviceOrigin binding;
    if (fd.isVar() != vd.isVar()) {
      binding.kind = DeviceOrigin::Kind::Inferred;
      binding.range = whole.range;
      std::string use = shortText(whole.range);
      binding.subject = program_.save(use);
      binding.message = program_.save("the device " + (fd.isVar() ? vd : fd).str() + " of `" +
                                      fn_->unifier.creationText(fd.isVar() ? fd : vd).str() +
                                      "` was inferred from `" + use + "` here");
    }
    if (!fn_->unifier.unify(first->type.dev, v->type.dev, binding)) {
      reportDeviceMismatch(op, opRange, *first, *v, operands);
      return std::nullopt;
    }
  }
  return first ? std::optional<Device>(resolve(first->type.dev)) : std::nullopt;
}

std::optional<Device> Checker::meetingDevice(llvm::ArrayRef<const Value *> operands) {
  llvm::SmallVector<std::pair<Device, int>, 4> counts;
  for (const Value *v : operands) {
    if (!v || !v->type.isTensor() || resolve(v->type.dev).isVar())
      continue;
    Device d = resolve(v->type.dev);
    auto it = llvm::find_if(counts, [&](const auto &c) { return c.first == d; });
    if (it == counts.end())
      counts.push_back({d, 1});
    else
      ++it->second;
  }
  auto isOperandDevice = [&](Device d) {
    return llvm::any_of(counts, [&](const auto &c) { return c.first == d; });
  };
  // The odd one out of three (`where(mask, a, b)`) moves.
  llvm::stable_sort(counts, [](const auto &x, const auto &y) { return x.second > y.second; });
  if (counts.size() > 1 && counts[0].second > counts[1].second)
    return counts[0].first;
  // Else the device the fn declares its result on, then the model's.
  if (fn_ && fn_->fn && fn_->fn->result.isTensor()) {
    Device result = resolve(fn_->fn->result.dev);
    if (!result.isVar() && isOperandDevice(result))
      return result;
  }
  if (fn_ && fn_->home && isOperandDevice(*fn_->home))
    return *fn_->home;
  return std::nullopt;
}

void Checker::reportDeviceMismatch(llvm::StringRef op, Range opRange, const Value &first,
                                   const Value &second, llvm::ArrayRef<const Value *> operands) {
  // Report the operand that is not on the device the others meet on, next
  // to one that is (which need not be the pair unification failed on).
  if (std::optional<Device> meet = meetingDevice(operands)) {
    auto on = [&](const Value *v, bool want) {
      return v && v->type.isTensor() && !resolve(v->type.dev).isVar() &&
             (resolve(v->type.dev) == *meet) == want;
    };
    auto odd = llvm::find_if(operands, [&](const Value *v) { return on(v, false); });
    auto home = llvm::find_if(operands, [&](const Value *v) { return on(v, true); });
    if (odd != operands.end() && home != operands.end()) {
      reportDevicePair(op, opRange, **home, **odd, /*secondMoves=*/true);
      return;
    }
  }
  reportDevicePair(op, opRange, first, second, /*secondMoves=*/false);
}

void Checker::reportDevicePair(llvm::StringRef op, Range opRange, const Value &a, const Value &b,
                               bool secondMoves) {
  Device da = resolve(a.type.dev), db = resolve(b.type.dev);
  DeviceOrigin oa = originOf(a), ob = originOf(b);
  if (oa.kind == DeviceOrigin::Kind::Placed || ob.kind == DeviceOrigin::Kind::Placed) {
    bool aPlaced = oa.kind == DeviceOrigin::Kind::Placed;
    const Value &placed = aPlaced ? a : b, &other = aPlaced ? b : a;
    const DeviceOrigin &po = aPlaced ? oa : ob, &oo = aPlaced ? ob : oa;
    Device pd = aPlaced ? da : db, od = aPlaced ? db : da;
    auto diag =
        diags_.report(DiagId::PlacementConflict, po.range, po.subject.str(), pd.str(), od.str());
    diag.primary("placed on " + pd.str() + " here");
    if (placed.range() != po.range)
      diag.label(placed.range(), typeStr(placed));
    diag.label(other.range(), typeStr(other));
    if (oo.isKnown())
      diag.note(oo.message.str(), oo.range);
    if (po.editRange.isValid())
      diag.help("remove the placement; its device is then inferred from this use",
                {{po.editRange, ""}});
    diag.help("or move it to " + od.str() + " here", toEdits(*placed.expr, od));
    return;
  }
  // The odd one out is the operand that is not on the fn's device.
  std::optional<Device> home = fn_ ? fn_->home : std::nullopt;
  bool aOdd = !secondMoves && home && da != *home && db == *home;
  const Value &odd = aOdd ? a : b, &other = aOdd ? b : a;
  const DeviceOrigin &oddOrigin = aOdd ? oa : ob, &otherOrigin = aOdd ? ob : oa;
  Device target = aOdd ? db : da;
  auto diag = diags_.report(DiagId::DeviceMismatch, opRange, op);
  diag.primary(odd.range(), typeStr(odd)).label(other.range(), typeStr(other));
  if (oddOrigin.isKnown())
    diag.note(oddOrigin.message.str(), oddOrigin.range);
  if (otherOrigin.isKnown() && otherOrigin.range != oddOrigin.range)
    diag.note(otherOrigin.message.str(), otherOrigin.range);
  // A value whose device an earlier use inferred (`randn(...)` met `x` on
  // cuda:0) and that now meets another device: moving it here is the fix
  // that keeps the earlier use (`y + eps.to(cuda:1)`).
  Device oddDevice = aOdd ? da : db;
  if (otherOrigin.kind == DeviceOrigin::Kind::Inferred && other.expr && !oddDevice.isVar()) {
    diag.help("move `" + shortText(other.expr->range) + "` to " + oddDevice.str() +
                  " here: its device was inferred from an earlier use",
              toEdits(*other.expr, oddDevice));
    if (odd.expr && !target.isVar()) // the result may then be on the wrong device
      diag.help("or move it to " + target.str() + " here", toEdits(*odd.expr, target),
                Applicability::MaybeIncorrect);
    return;
  }
  bool declFix = (oddOrigin.kind == DeviceOrigin::Kind::Declared ||
                  oddOrigin.kind == DeviceOrigin::Kind::FnParam) &&
                 oddOrigin.editRange.isValid() && !target.isVar();
  if (declFix)
    diag.help("declare it on " + target.str(), {{oddOrigin.editRange, target.str()}},
              Applicability::MaybeIncorrect);
  if (odd.expr && !target.isVar())
    diag.help((declFix ? "or move it to " : "move it to ") + target.str() + " here",
              toEdits(*odd.expr, target));
}

const ast::CallExpr *Checker::defaultDTypeCreation(const ast::Expr *e) {
  if (auto *placed = llvm::dyn_cast_or_null<ast::BinaryExpr>(e))
    if (program_.infoFor(placed).placement)
      e = placed->lhs.get();
  auto *call = llvm::dyn_cast_or_null<ast::CallExpr>(e);
  auto *callee = call ? dyn_cast<ast::NameExpr>(call->callee.get()) : nullptr;
  if (!callee || !isCreationOp(callee->name) || !call->argsRange.isValid())
    return nullptr;
  for (const ast::Arg &arg : call->args)
    if ((arg.name && arg.name->name == "dtype") ||
        (arg.value && program_.infoFor(arg.value.get()).type.kind() == Type::Kind::DType))
      return nullptr;
  return call;
}

bool Checker::requireSameDType(llvm::StringRef op, const Value &anchor, const Value &other) {
  if (anchor.type.dtype == other.type.dtype)
    return true;
  // Convert the operand whose dtype the fn's declared result does not have.
  const Value *odd = &other, *kept = &anchor;
  if (fn_ && fn_->fn && fn_->fn->result.isTensor() && fn_->fn->result.dtype == other.type.dtype)
    std::swap(odd, kept);
  ElementType target = kept->type.dtype;
  auto diag = diags_.report(DiagId::DTypeMismatch, odd->range(), odd->type.dtype.prose(),
                            target.prose(), op);
  diag.primary(typeStr(*odd)).label(kept->range(), typeStr(*kept));
  if (!odd->expr)
    return false;
  // `eye(n)` next to f16 values: create it as f16 rather than convert it.
  if (const ast::CallExpr *creation = defaultDTypeCreation(odd->expr)) {
    llvm::SMLoc close = llvm::SMLoc::getFromPointer(creation->argsRange.end.getPointer() - 1);
    diag.help(
        "create it as " + target.str(),
        {{Range{close, close}, (creation->args.empty() ? "dtype: " : ", dtype: ") + target.str()}});
    diag.help("or convert it with `cast`", castEdits(*odd->expr, target));
    return false;
  }
  diag.help("convert it with `cast`", castEdits(*odd->expr, target));
  return false;
}

std::optional<Shape> Checker::broadcast(const Shape &a, const Shape &b) {
  if (a.hasPack() && b.hasPack() && a.pack != b.pack)
    return std::nullopt;
  size_t na = a.dims.size(), nb = b.dims.size();
  if ((a.hasPack() && nb > na) || (b.hasPack() && na > nb))
    return std::nullopt;
  Shape out;
  out.pack = a.pack ? a.pack : b.pack;
  size_t n = std::max(na, nb);
  out.dims.resize(n);
  for (size_t i = 0; i < n; ++i) {
    std::optional<Dim> da = i < na ? std::optional<Dim>(a.dims[na - 1 - i]) : std::nullopt;
    std::optional<Dim> db = i < nb ? std::optional<Dim>(b.dims[nb - 1 - i]) : std::nullopt;
    Dim r;
    if (!da)
      r = *db;
    else if (!db)
      r = *da;
    else if (*da == *db || db->isConstant(1))
      r = *da;
    else if (da->isConstant(1))
      r = *db;
    else
      return std::nullopt;
    out.dims[n - 1 - i] = r;
  }
  return out;
}

std::optional<unsigned> Checker::normalizeDim(int64_t dim, const Value &tensor, Range at,
                                              bool allowEnd) {
  int64_t rank = int64_t(tensor.type.rank()) + (allowEnd ? 1 : 0);
  if (tensor.type.shape.hasPack()) {
    if (dim >= 0) {
      diags_
          .report(DiagId::UnsupportedFeature, at,
                  "a non-negative dimension index on a tensor with `...` dims")
          .primary("count from the end instead, e.g. -1");
      return std::nullopt;
    }
    if (-dim > rank) {
      diags_.report(DiagId::DimOutOfRange, at, dim, "at least " + std::to_string(rank))
          .primary("refers into `...`");
      return std::nullopt;
    }
    return unsigned(rank + dim);
  }
  if (dim < -rank || dim >= rank) {
    diags_.report(DiagId::DimOutOfRange, at, dim, tensor.type.rank())
        .primary("valid dims are " + std::to_string(-rank) + " to " + std::to_string(rank - 1))
        .label(tensor.range(), typeStr(tensor));
    return std::nullopt;
  }
  return unsigned(dim < 0 ? dim + rank : dim);
}
