//===- CheckOperators.cpp - Arithmetic, comparison, matmul, placement -----===//
//
// Binary and unary operators on tensors and scalars (broadcasting, dtype
// promotion of scalars), `@` as a matrix product, and `created @ device`.
//
//===----------------------------------------------------------------------===//

#include "sema/ResolveName.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"

#include <algorithm>

using namespace modelc;
using namespace modelc::sema;
using llvm::cast;
using llvm::dyn_cast;
using llvm::isa;
using namespace modelc::sema::detail;

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

static bool isComparison(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Eq:
  case ast::BinaryOp::Ne:
  case ast::BinaryOp::Lt:
  case ast::BinaryOp::Le:
  case ast::BinaryOp::Gt:
  case ast::BinaryOp::Ge:
    return true;
  default:
    return false;
  }
}

/// A bool in scalar arithmetic is the int 0 or 1, as in Python and in dims
/// (`(1 + bidirectional) * hidden_size`).
static Value boolAsInt(const Value &x, ast::BinaryOp op) {
  if (x.type.kind() != Type::Kind::Bool || !ast::isArithmetic(op))
    return x;
  Value v = x;
  v.type = Type::integer(x.type.intValue);
  return v;
}

Value Checker::checkBinary(const ast::BinaryExpr &b, const Value &lhsIn, const Value &rhsIn) {
  if (lhsIn.type.isError() || rhsIn.type.isError())
    return fail(b, {&lhsIn, &rhsIn});
  llvm::StringRef op = ast::binaryOpSpelling(b.op);
  if (b.op == ast::BinaryOp::MatMul)
    return checkMatmul(b, op, lhsIn, rhsIn);

  // Scalar op scalar: plain values (int dims fold symbolically).
  if (!lhsIn.type.isTensor() && !rhsIn.type.isTensor()) {
    Value lhs = boolAsInt(lhsIn, b.op), rhs = boolAsInt(rhsIn, b.op);
    Value v;
    auto numeric = [](const Type &t) {
      return t.kind() == Type::Kind::Int || t.kind() == Type::Kind::Float;
    };
    if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or) {
      for (const Value *x : {&lhs, &rhs})
        if (x->type.kind() != Type::Kind::Bool) {
          diags_.report(DiagId::ExpectedBoolMask, x->range(), op, typeStr(*x));
          return fail(b, {&lhs, &rhs});
        }
      v.type = Type::boolean();
      return v;
    }
    if (!numeric(lhs.type) || !numeric(rhs.type)) {
      const Value &bad = numeric(lhs.type) ? rhs : lhs;
      diags_.report(DiagId::TypeMismatch, bad.range(), "a number or a tensor", typeStr(bad))
          .primary("operand of `" + op.str() + "`");
      return fail(b, {&lhs, &rhs});
    }
    if (isComparison(b.op)) {
      v.type = Type::boolean();
      return v;
    }
    if (lhs.type.kind() == Type::Kind::Int && rhs.type.kind() == Type::Kind::Int &&
        b.op != ast::BinaryOp::Div && b.op != ast::BinaryOp::Pow && b.op != ast::BinaryOp::Mod) {
      std::optional<Dim> value;
      if (lhs.type.intValue && rhs.type.intValue) {
        Dim l = *lhs.type.intValue, r = *rhs.type.intValue;
        value = b.op == ast::BinaryOp::Add ? l + r : b.op == ast::BinaryOp::Sub ? l - r : l * r;
      }
      v.type = Type::integer(value);
      return v;
    }
    if (lhs.type.kind() == Type::Kind::Int && rhs.type.kind() == Type::Kind::Int &&
        b.op == ast::BinaryOp::Div) {
      // Integer division of dims stays an int (`in / 2`).
      std::optional<Dim> value;
      if (lhs.type.intValue && rhs.type.intValue) {
        if (std::optional<int64_t> c = rhs.type.intValue->asConstant()) {
          if (*c > 0)
            value = lhs.type.intValue->floorDiv(*c);
        } else if (currentModel) {
          // `embed_dim / num_heads`: exact, checked at instantiation.
          value = divideDims(*currentModel, *lhs.type.intValue, *rhs.type.intValue, b.range);
        }
      }
      v.type = Type::integer(value);
      return v;
    }
    v.type = Type::floating();
    return v;
  }

  // At least one tensor: dtypes, then devices, then shapes.
  const Value &lhs = lhsIn, &rhs = rhsIn;
  const Value &t = lhs.type.isTensor() ? lhs : rhs;
  const Value &other = lhs.type.isTensor() ? rhs : lhs;
  ElementType dtype = t.type.dtype;
  if (other.type.isTensor()) {
    if (!requireSameDType(op, lhs, rhs))
      return fail(b, {&lhs, &rhs});
  } else if (!checkScalarOperand(op, t, other)) {
    return fail(b, {&lhs, &rhs});
  }
  if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or) {
    if (dtype != ast::DType::Bool) {
      diags_.report(DiagId::ExpectedBoolMask, t.range(), op, typeStr(t));
      return fail(b, {&lhs, &rhs});
    }
  } else if (dtype == ast::DType::Bool && ast::isArithmetic(b.op)) {
    diags_.report(DiagId::TypeMismatch, t.range(), "a numeric tensor", typeStr(t))
        .primary("`" + op.str() + "` does not apply to bool tensors");
    return fail(b, {&lhs, &rhs});
  }
  std::optional<Device> device = unifyDevices(op, b.opRange, b, {&lhs, &rhs});
  if (!device)
    return fail(b, {&lhs, &rhs});
  Shape shape = t.type.shape;
  if (other.type.isTensor()) {
    std::optional<Shape> s = broadcast(lhs.type.shape, rhs.type.shape);
    if (!s) {
      diags_
          .report(DiagId::BroadcastMismatch, b.opRange, lhs.type.shape.str(), rhs.type.shape.str(),
                  op)
          .primary(rhs.range(), typeStr(rhs))
          .label(lhs.range(), typeStr(lhs));
      return fail(b, {&lhs, &rhs});
    }
    shape = *s;
  }
  Value v;
  v.type = Type::tensor(isComparison(b.op) ? ast::DType::Bool : dtype, std::move(shape), *device);
  v.origin = originOf(resolve(lhs.type.dev).isVar() && other.type.isTensor() ? rhs : t);
  return v;
}

bool Checker::checkScalarOperand(llvm::StringRef op, const Value &tensor, const Value &scalar) {
  Type::Kind k = scalar.type.kind();
  bool ok = k == Type::Kind::Int || k == Type::Kind::Bool ||
            (k == Type::Kind::Float && tensor.type.dtype.isFloating());
  if (ok)
    return true;
  if (k == Type::Kind::Float) {
    diags_.report(DiagId::DTypeMismatch, scalar.range(), "float", tensor.type.dtype.str(), op)
        .primary("a float scalar")
        .label(tensor.range(), typeStr(tensor))
        .help("convert the tensor with `cast`", castEdits(*tensor.expr, ast::DType::F32),
              Applicability::MaybeIncorrect);
    return false;
  }
  diags_.report(DiagId::TypeMismatch, scalar.range(), "a number or a tensor", typeStr(scalar))
      .primary("operand of `" + op.str() + "`");
  return false;
}

Value Checker::checkMatmul(const ast::Expr &expr, llvm::StringRef op, const Value &lhs,
                           const Value &rhs) {
  for (const Value *x : {&lhs, &rhs}) {
    if (!x->type.isTensor()) {
      diags_.report(DiagId::ExpectedTensor, x->range(), op, typeStr(*x));
      return fail(expr, {&lhs, &rhs});
    }
  }
  if (!requireSameDType(op, lhs, rhs))
    return fail(expr, {&lhs, &rhs});
  Range opRange = expr.range;
  if (auto *b = dyn_cast<ast::BinaryExpr>(&expr))
    opRange = b->opRange;
  std::optional<Device> device = unifyDevices(op, opRange, expr, {&lhs, &rhs});
  if (!device)
    return fail(expr, {&lhs, &rhs});
  const Shape &a = lhs.type.shape, &b = rhs.type.shape;
  auto rankError = [&](const Value &v) {
    diags_.report(DiagId::RankMismatch, v.range(), op, "1 or more", v.type.rank())
        .primary(typeStr(v));
    return fail(expr, {&lhs, &rhs});
  };
  if (a.dims.empty() && !a.hasPack())
    return rankError(lhs);
  if (b.dims.empty() && !b.hasPack())
    return rankError(rhs);
  if (b.hasPack() && b.dims.size() < 2) {
    diags_.report(DiagId::UnsupportedFeature, rhs.range(),
                  "a right operand of `@` whose last two dims are not both written");
    return fail(expr, {&lhs, &rhs});
  }
  Dim ka = a.dims.back();
  bool bIsVector = b.dims.size() == 1 && !b.hasPack();
  Dim kb = bIsVector ? b.dims.back() : b.dims[b.dims.size() - 2];
  if (ka != kb) {
    diags_.report(DiagId::MatmulInnerMismatch, opRange, ka.str(), kb.str())
        .primary(lhs.range(), typeStr(lhs))
        .label(rhs.range(), typeStr(rhs));
    return fail(expr, {&lhs, &rhs});
  }
  Shape out;
  bool aIsVector = a.dims.size() == 1 && !a.hasPack();
  if (aIsVector && bIsVector) {
    // [k] @ [k] -> []
  } else if (aIsVector) {
    out.pack = b.pack;
    out.dims.append(b.dims.begin(), b.dims.end() - 2);
    out.dims.push_back(b.dims.back());
  } else if (bIsVector) {
    out.pack = a.pack;
    out.dims.append(a.dims.begin(), a.dims.end() - 1);
  } else {
    // Batch dims broadcast; a packed lhs with one written dim is [..., k].
    Shape batchA, batchB;
    batchA.pack = a.pack;
    batchB.pack = b.pack;
    if (a.dims.size() >= 2)
      batchA.dims.append(a.dims.begin(), a.dims.end() - 2);
    batchB.dims.append(b.dims.begin(), b.dims.end() - 2);
    std::optional<Shape> batch = broadcast(batchA, batchB);
    if (!batch) {
      diags_.report(DiagId::BroadcastMismatch, opRange, batchA.str(), batchB.str(), op)
          .primary(rhs.range(), typeStr(rhs))
          .label(lhs.range(), typeStr(lhs));
      return fail(expr, {&lhs, &rhs});
    }
    out = *batch;
    if (a.dims.size() >= 2)
      out.dims.push_back(a.dims[a.dims.size() - 2]);
    out.dims.push_back(b.dims.back());
  }
  Value v;
  v.type = Type::tensor(lhs.type.dtype, std::move(out), *device);
  v.origin = originOf(resolve(lhs.type.dev).isVar() ? rhs : lhs);
  return v;
}

Value Checker::checkPlacement(const ast::BinaryExpr &expr) {
  Value target = checkExpr(*expr.rhs);
  Range suffix{expr.lhs->range.end, expr.rhs->range.end};
  if (target.type.isError()) {
    checkExpr(*expr.lhs);
    return record(expr, errorValue());
  }
  Device dev = target.type.dev;
  program_.infoFor(&expr).placement = true;
  if (auto *call = dyn_cast<ast::CallExpr>(expr.lhs.get())) {
    if (auto *callee = dyn_cast<ast::NameExpr>(call->callee.get())) {
      if (isCreationOp(callee->name) &&
          resolveName(*this, callee->name).kind == Resolved::Kind::Builtin) {
        DeviceOrigin origin;
        origin.kind = DeviceOrigin::Kind::Placed;
        origin.range = expr.range;
        origin.editRange = suffix;
        std::string created = shortText(call->range);
        origin.subject = program_.save(created);
        origin.message = program_.save("`" + created + "` is placed on " + dev.str() + " here");
        record(*callee, Value{Type::builtin(callee->name), {}, callee, {}});
        Value v = checkBuiltinCall(*call, callee->name, nullptr, &dev, &origin);
        record(*call, v);
        return record(expr, v);
      }
    }
  }
  Value lhs = checkExpr(*expr.lhs);
  if (lhs.type.isError())
    return record(expr, errorValue());
  auto diag = diags_.report(DiagId::PlacementOfNonCreated,
                            Range{expr.opRange.begin, expr.rhs->range.end}, dev.str());
  diag.primary("places an existing value")
      .label(expr.lhs->range, typeStr(lhs))
      .note("`@ device` only chooses where a creation op (zeros, ones, full, randn, arange, "
            "eye) allocates; an existing tensor is moved with `.to`");
  if (lhs.type.isTensor()) {
    std::vector<Edit> edits = toEdits(*expr.lhs, dev);
    edits.insert(edits.begin(), Edit{suffix, ""});
    // Keep edits ordered and non-overlapping: delete the suffix, then append.
    std::vector<Edit> ordered;
    for (const Edit &e : edits)
      if (e.range.begin.getPointer() < suffix.begin.getPointer())
        ordered.push_back(e);
    ordered.push_back(Edit{suffix, isPostfixSafe(*expr.lhs) ? ".to(" + dev.str() + ")"
                                                            : ").to(" + dev.str() + ")"});
    diag.help("move it with `.to`", ordered);
  }
  return record(expr, fail(expr, {&lhs}));
}
