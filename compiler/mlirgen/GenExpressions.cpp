//===- GenExpressions.cpp - Expressions to the mdl dialect ----------------===//
//
// Names, members, literals, operators and subscripts: compile-time
// scalars fold, tensors become mdl ops, ints known only at run time
// become index arithmetic.
//
//===----------------------------------------------------------------------===//

#include "mlirgen/Generator.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using llvm::dyn_cast;

namespace modelc::mlirgen::detail {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<GenValue> Generator::constantOf(const ast::Expr &expr, ModelFrame &frame) {
  if (auto *i = dyn_cast<ast::IntLitExpr>(&expr))
    return GenValue::ofScalar(double(i->value), true);
  if (auto *f = dyn_cast<ast::FloatLitExpr>(&expr))
    return GenValue::ofScalar(f->value, false);
  if (auto *bl = dyn_cast<ast::BoolLitExpr>(&expr))
    return GenValue::ofScalar(bl->value ? 1 : 0, false);
  if (const sema::ExprInfo *info = program.typeOf(&expr)) {
    if (info->type.kind() == sema::Type::Kind::Int && info->type.intValue)
      if (std::optional<int64_t> k = concreteDim(*info->type.intValue, frame).asConstant())
        return GenValue::ofScalar(double(*k), true);
  }
  if (auto *name = dyn_cast<ast::NameExpr>(&expr)) {
    auto it = frame.scalarArgs.find(name->name);
    if (it != frame.scalarArgs.end())
      return GenValue::ofScalar(it->second, false);
  }
  if (auto *u = dyn_cast<ast::UnaryExpr>(&expr)) {
    std::optional<GenValue> v = constantOf(*u->operand, frame);
    if (!v)
      return std::nullopt;
    if (u->op == ast::UnaryOp::Not)
      return GenValue::ofScalar(v->number == 0 ? 1 : 0, false);
    return GenValue::ofScalar(-v->number, v->isInt);
  }
  if (auto *bin = dyn_cast<ast::BinaryExpr>(&expr)) {
    std::optional<GenValue> l = constantOf(*bin->lhs, frame), r = constantOf(*bin->rhs, frame);
    if (!l || !r)
      return std::nullopt;
    return foldScalars(bin->op, *l, *r);
  }
  return std::nullopt;
}

std::optional<GenValue> Generator::foldScalars(ast::BinaryOp op, const GenValue &l,
                                               const GenValue &r) {
  bool isInt = l.isInt && r.isInt;
  switch (op) {
  case ast::BinaryOp::Add:
    return GenValue::ofScalar(l.number + r.number, isInt);
  case ast::BinaryOp::Sub:
    return GenValue::ofScalar(l.number - r.number, isInt);
  case ast::BinaryOp::Mul:
    return GenValue::ofScalar(l.number * r.number, isInt);
  case ast::BinaryOp::Div:
    if (r.number == 0)
      return std::nullopt;
    return GenValue::ofScalar(isInt ? std::floor(l.number / r.number) : l.number / r.number, isInt);
  case ast::BinaryOp::Pow:
    return GenValue::ofScalar(std::pow(l.number, r.number), isInt);
  case ast::BinaryOp::Mod: {
    if (r.number == 0)
      return std::nullopt;
    // Python: the result has the divisor's sign.
    return GenValue::ofScalar(l.number - std::floor(l.number / r.number) * r.number, isInt);
  }
  case ast::BinaryOp::And:
    return GenValue::ofScalar(l.number != 0 && r.number != 0, false);
  case ast::BinaryOp::Or:
    return GenValue::ofScalar(l.number != 0 || r.number != 0, false);
  case ast::BinaryOp::Eq:
    return GenValue::ofScalar(l.number == r.number, false);
  case ast::BinaryOp::Ne:
    return GenValue::ofScalar(l.number != r.number, false);
  case ast::BinaryOp::Lt:
    return GenValue::ofScalar(l.number < r.number, false);
  case ast::BinaryOp::Le:
    return GenValue::ofScalar(l.number <= r.number, false);
  case ast::BinaryOp::Gt:
    return GenValue::ofScalar(l.number > r.number, false);
  case ast::BinaryOp::Ge:
    return GenValue::ofScalar(l.number >= r.number, false);
  default:
    return std::nullopt;
  }
}

GenValue Generator::gen(const ast::Expr &expr, Scope &scope) {
  return checkedResult(expr, genExpr(expr, scope), scope);
}

GenValue Generator::genExpr(const ast::Expr &expr, Scope &scope) {
  if (failed)
    return {};
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
  case ast::Expr::Kind::BoolLit:
    return *constantOf(expr, *scope.frame);
  case ast::Expr::Kind::StringLit:
    return unsupported(expr.range, "a string value");
  case ast::Expr::Kind::DeviceLit: {
    const ast::DeviceExpr &d = dyn_cast<ast::DeviceLitExpr>(&expr)->device;
    GenValue v;
    v.kind = GenValue::Kind::Device;
    v.device = d.kind == ast::DeviceExpr::Kind::Cuda ? sema::Device::cuda(d.cudaIndex)
                                                     : sema::Device::cpu();
    return v;
  }
  case ast::Expr::Kind::DTypeLit: {
    GenValue v;
    v.kind = GenValue::Kind::DType;
    v.dtype = dyn_cast<ast::DTypeLitExpr>(&expr)->dtype;
    return v;
  }
  case ast::Expr::Kind::Name:
    return genName(*dyn_cast<ast::NameExpr>(&expr), scope);
  case ast::Expr::Kind::List:
  case ast::Expr::Kind::Tuple: {
    GenValue v;
    const auto *list = dyn_cast<ast::ListExpr>(&expr);
    v.kind = list ? GenValue::Kind::List : GenValue::Kind::Tuple;
    for (const ast::ExprPtr &e :
         list ? list->elements : llvm::cast<ast::TupleExpr>(&expr)->elements) {
      v.elements.push_back(gen(*e, scope));
      if (!v.elements.back().ok())
        return {};
    }
    return v;
  }
  case ast::Expr::Kind::Unary: {
    auto *u = dyn_cast<ast::UnaryExpr>(&expr);
    bool isNot = u->op == ast::UnaryOp::Not;
    GenValue x = gen(*u->operand, scope);
    if (!x.ok())
      return {};
    if (x.kind == GenValue::Kind::Scalar)
      return isNot ? GenValue::ofScalar(x.number == 0 ? 1 : 0, false)
                   : GenValue::ofScalar(-x.number, x.isInt);
    if (x.kind != GenValue::Kind::Tensor)
      return unsupported(expr.range, isNot ? "`not` of this value" : "negating this value");
    std::optional<RankedTensorType> t = checkedType(expr, scope);
    if (!t)
      return unsupported(expr.range, isNot ? "`not` of this value" : "negating this value");
    if (isNot)
      return GenValue::ofTensor(mlir::mdl::NotOp::create(b, loc(expr.range), *t, x.tensor));
    return GenValue::ofTensor(mlir::mdl::NegOp::create(b, loc(expr.range), *t, x.tensor));
  }
  case ast::Expr::Kind::Binary:
    return genBinary(*dyn_cast<ast::BinaryExpr>(&expr), scope);
  case ast::Expr::Kind::Call:
    return genCall(*dyn_cast<ast::CallExpr>(&expr), scope);
  case ast::Expr::Kind::Member:
    return genMember(*dyn_cast<ast::MemberExpr>(&expr), scope);
  case ast::Expr::Kind::Index:
    return genIndex(*dyn_cast<ast::IndexExpr>(&expr), scope);
  case ast::Expr::Kind::Instantiate:
    return unsupported(expr.range, "instantiating a model inside a fn");
  }
  return unsupported(expr.range, "this expression");
}

GenValue Generator::genName(const ast::NameExpr &name, Scope &scope) {
  auto local = scope.locals.find(name.name);
  if (local != scope.locals.end())
    return local->second;
  ModelFrame &frame = *scope.frame;
  const sema::ModelInfo &info = frame.info();
  if (const sema::StateInfo *s = info.findState(name.name)) {
    (void)s;
    auto it = stateArgs.find(frame.stateKey(name.name));
    if (it == stateArgs.end())
      return unsupported(name.range, "state `" + frame.stateKey(name.name) + "` with no argument");
    return GenValue::ofTensor(it->second);
  }
  if (const sema::SubmodelInfo *sub = info.findSubmodel(name.name, frame.subst())) {
    sema::Type t = frame.subst().apply(sub->type);
    const ast::Expr *init = sub->decl ? sub->decl->init.get() : nullptr;
    GenValue v;
    if (t.kind() == sema::Type::Kind::Model && t.instance) {
      v.kind = GenValue::Kind::Model;
      v.model = child(frame, sub->name, t.instance, init,
                      sema::stateAffixes(*sub, frame.subst(), std::nullopt));
      return v;
    }
    if (t.kind() == sema::Type::Kind::ModelList && t.instances) {
      v.kind = GenValue::Kind::ModelList;
      for (size_t i = 0; i < t.instances->size(); ++i)
        v.models.push_back(child(frame, sub->name + "." + std::to_string(i), (*t.instances)[i],
                                 nullptr, sema::stateAffixes(*sub, frame.subst(), i)));
      return v;
    }
    return unsupported(name.range, "this submodel");
  }
  // A symbolic dim the call's arguments fixed (`T` of a callee) is what
  // they gave it, before the entry fn's `T` (which constantOf would read).
  const sema::ExprInfo *einfo = program.typeOf(&name);
  if (einfo && einfo->type.kind() == sema::Type::Kind::Int && einfo->type.intValue) {
    int64_t extent = extentOf(scopedDim(*einfo->type.intValue, scope), frame);
    if (extent != kDyn)
      return GenValue::ofScalar(double(extent), true);
  }
  if (std::optional<GenValue> c = constantOf(name, frame))
    return *c;
  // A tuple model argument (`stride: (int, int)`): its elements' values.
  if (einfo && einfo->type.kind() == sema::Type::Kind::Tuple && einfo->type.elements &&
      llvm::all_of(*einfo->type.elements, [&](const sema::Type &t) {
        return t.kind() == sema::Type::Kind::Int && t.intValue &&
               concreteDim(*t.intValue, frame).asConstant();
      })) {
    GenValue v;
    v.kind = GenValue::Kind::Tuple;
    for (const sema::Type &t : *einfo->type.elements)
      v.elements.push_back(
          GenValue::ofScalar(double(*concreteDim(*t.intValue, frame).asConstant()), true));
    return v;
  }
  if (einfo && einfo->type.kind() == sema::Type::Kind::Int && einfo->type.intValue)
    return intOfDim(*einfo->type.intValue, scope);
  if (einfo && einfo->type.kind() == sema::Type::Kind::DType) {
    // A dtype parameter (`zeros(s, dtype: dtype)`): the instance's argument.
    if (std::optional<ast::DType> d = concreteDType(einfo->type.dtype, scope)) {
      GenValue v;
      v.kind = GenValue::Kind::DType;
      v.dtype = *d;
      return v;
    }
  }
  if (einfo && einfo->type.kind() == sema::Type::Kind::Device) {
    std::optional<sema::Device> d = concreteDevice(einfo->type.dev, frame);
    if (d) {
      GenValue v;
      v.kind = GenValue::Kind::Device;
      v.device = *d;
      return v;
    }
  }
  return unsupported(name.range, "the value `" + name.name + "`");
}

GenValue Generator::genMember(const ast::MemberExpr &member, Scope &scope) {
  // `fc1.weight`: state of a submodel.
  if (auto *baseName = dyn_cast<ast::NameExpr>(member.base.get())) {
    if (!scope.locals.count(baseName->name) && scope.frame->info().findSubmodel(baseName->name)) {
      GenValue base = genName(*baseName, scope);
      if (base.kind == GenValue::Kind::Model) {
        auto it = stateArgs.find(base.model->stateKey(member.member.name));
        if (it != stateArgs.end())
          return GenValue::ofTensor(it->second);
      }
    }
  }
  GenValue base = gen(*member.base, scope);
  if (!base.ok())
    return {};
  if (base.kind == GenValue::Kind::Model) {
    auto it = stateArgs.find(base.model->stateKey(member.member.name));
    if (it != stateArgs.end())
      return GenValue::ofTensor(it->second);
  }
  if (base.kind == GenValue::Kind::Tensor && member.member.name == "T") {
    int64_t rank = typeOf(base.tensor).getRank();
    if (rank < 2)
      return base;
    std::optional<RankedTensorType> t = checkedType(member, scope);
    if (!t)
      return unsupported(member.range, "`.T` of this value");
    return GenValue::ofTensor(mlir::mdl::TransposeOp::create(b, loc(member.range), *t, base.tensor,
                                                             b.getI64IntegerAttr(rank - 2),
                                                             b.getI64IntegerAttr(rank - 1)));
  }
  if (base.kind == GenValue::Kind::Tensor && member.member.name == "shape") {
    // The checker's tuple of dims: constants where the instance fixes them,
    // the rest read from the inputs where a consumer needs them.
    const sema::ExprInfo *info = program.typeOf(&member);
    if (!info || info->type.kind() != sema::Type::Kind::Tuple || !info->type.elements)
      return unsupported(member.range, "`.shape` of this value");
    GenValue v;
    v.kind = GenValue::Kind::Tuple;
    for (const sema::Type &dim : *info->type.elements) {
      GenValue unknown;
      unknown.kind = GenValue::Kind::Size;
      v.elements.push_back(dim.intValue ? intOfDim(*dim.intValue, scope) : unknown);
    }
    return v;
  }
  return unsupported(member.range, "the member `" + member.member.name + "`");
}

mlir::Value Generator::broadcastScalar(const GenValue &scalar, mlir::Value like, Range at) {
  RankedTensorType t = typeOf(like);
  return mlir::mdl::FullOp::create(b, loc(at), tensorType({}, t.getElementType(), t.getEncoding()),
                                   mlir::ValueRange{}, b.getF64FloatAttr(scalar.number));
}

mlir::Value Generator::runtimeScalar(mlir::Value index, mlir::Value like, Range at) {
  // arange(0, index + 1)[index]: the mdl dialect makes tensors from
  // attributes and shapes, so a run-time int enters through a shape.
  RankedTensorType t = typeOf(like);
  mlir::Location l = loc(at);
  mlir::Value count =
      mlir::arith::AddIOp::create(b, l, index, mlir::arith::ConstantIndexOp::create(b, l, 1));
  mlir::Value positions = mlir::mdl::ArangeOp::create(
      b, l, tensorType({kDyn}, t.getElementType(), t.getEncoding()), mlir::ValueRange{count},
      b.getF64FloatAttr(0), b.getF64FloatAttr(1));
  return mlir::mdl::SelectOp::create(b, l, tensorType({}, t.getElementType(), t.getEncoding()),
                                     positions, mlir::ValueRange{index},
                                     b.getDenseI64ArrayAttr({0}));
}

mlir::Value Generator::binaryOp(ast::BinaryOp op, mlir::Value lhs, mlir::Value rhs,
                                RankedTensorType result, Range at) {
  mlir::Location l = loc(at);
  if (op == ast::BinaryOp::MatMul) {
    if (typeOf(lhs).getRank() < 2 || typeOf(rhs).getRank() < 2)
      return vectorMatmul(lhs, rhs, result, at);
    return mlir::mdl::MatmulOp::create(b, l, result, lhs, rhs);
  }
  auto cmp = [&](llvm::StringRef predicate) -> mlir::Value {
    return mlir::mdl::CmpOp::create(b, l, result, b.getStringAttr(predicate), lhs, rhs);
  };
  switch (op) {
  case ast::BinaryOp::Add:
    return mlir::mdl::AddOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Sub:
    return mlir::mdl::SubOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Mul:
    return mlir::mdl::MulOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Div:
    return mlir::mdl::DivOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Pow:
    return mlir::mdl::PowOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Mod:
    return mlir::mdl::RemOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::And:
    return mlir::mdl::AndOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Or:
    return mlir::mdl::OrOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Eq:
    return cmp("eq");
  case ast::BinaryOp::Ne:
    return cmp("ne");
  case ast::BinaryOp::Lt:
    return cmp("lt");
  case ast::BinaryOp::Le:
    return cmp("le");
  case ast::BinaryOp::Gt:
    return cmp("gt");
  case ast::BinaryOp::Ge:
    return cmp("ge");
  default:
    unsupported(at, "`" + ast::binaryOpSpelling(op) + "` on tensors");
    return {};
  }
}

mlir::Value Generator::vectorMatmul(mlir::Value lhs, mlir::Value rhs, RankedTensorType result,
                                    Range at) {
  // torch.matmul: a vector lhs is a [1, k] row and a vector rhs a [k, 1]
  // column; the product of those has the unit dims `result` drops.
  mlir::Location l = loc(at);
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  if (lt.getRank() < 1 || rt.getRank() < 1) {
    unsupported(at, "`@` with a rank-0 operand");
    return {};
  }
  bool rowVector = lt.getRank() == 1, columnVector = rt.getRank() == 1;
  mlir::Value a = rowVector ? reshape(lhs, {1, lt.getDimSize(0)}, l) : lhs;
  mlir::Value c = columnVector ? reshape(rhs, {rt.getDimSize(0), 1}, l) : rhs;
  llvm::SmallVector<int64_t> productShape(result.getShape());
  if (rowVector)
    productShape.insert(productShape.end() - (columnVector ? 0 : 1), 1);
  if (columnVector)
    productShape.push_back(1);
  mlir::Value product = binaryOp(ast::BinaryOp::MatMul, a, c, withShape(result, productShape), at);
  if (!product)
    return {};
  return reshape(product, result, l);
}

GenValue Generator::genBinary(const ast::BinaryExpr &binary, Scope &scope) {
  // `zeros([3]) @ cuda:0`: placement of a created tensor.
  if (binary.op == ast::BinaryOp::MatMul) {
    const sema::ExprInfo *rhsInfo = program.typeOf(binary.rhs.get());
    if (rhsInfo && rhsInfo->type.kind() == sema::Type::Kind::Device) {
      GenValue dev = gen(*binary.rhs, scope);
      if (!dev.ok())
        return {};
      if (auto *call = dyn_cast<ast::CallExpr>(binary.lhs.get()))
        return genCall(*call, scope, dev.device);
      return gen(*binary.lhs, scope);
    }
  }
  GenValue lhs = gen(*binary.lhs, scope);
  if (!lhs.ok())
    return {};
  GenValue rhs = gen(*binary.rhs, scope);
  if (!rhs.ok())
    return {};
  // A bool in arithmetic is the int 0 or 1, as the checker types it
  // (`t + reverse * (T - 1 - 2 * t)`).
  for (auto [value, operand] : {std::pair{&lhs, binary.lhs.get()}, {&rhs, binary.rhs.get()}}) {
    const sema::ExprInfo *info = program.typeOf(operand);
    if (value->kind == GenValue::Kind::Scalar && ast::isArithmetic(binary.op) && info &&
        info->type.kind() == sema::Type::Kind::Bool)
      value->isInt = true;
  }
  bool lt = lhs.kind == GenValue::Kind::Tensor, rt = rhs.kind == GenValue::Kind::Tensor;
  if (!lt && !rt && (lhs.kind == GenValue::Kind::Index || rhs.kind == GenValue::Kind::Index))
    return indexArithmetic(binary, lhs, rhs, scope);
  if (!lt && !rt) {
    if (lhs.kind == GenValue::Kind::Scalar && rhs.kind == GenValue::Kind::Scalar)
      if (std::optional<GenValue> c = foldScalars(binary.op, lhs, rhs))
        return *c;
    if (std::optional<GenValue> c = constantOf(binary, *scope.frame))
      return *c;
    if (lhs.kind == GenValue::Kind::Size || rhs.kind == GenValue::Kind::Size) {
      GenValue v;
      v.kind = GenValue::Kind::Size;
      return v;
    }
    return unsupported(binary.range, "this scalar expression");
  }
  // The scalar operand as a rank-0 tensor like the other: a constant, or an
  // int known only at run time (`x / T` for a dim the inputs give, `x + t`
  // in a loop over a run-time range).
  auto scalarOperand = [&](const GenValue &v, const ast::Expr &e, mlir::Value like) {
    if (v.kind == GenValue::Kind::Scalar)
      return broadcastScalar(v, like, e.range);
    if (v.kind != GenValue::Kind::Size && v.kind != GenValue::Kind::Index)
      return mlir::Value();
    std::optional<IntOperand> i = intOperandOf(v, e, scope);
    return i ? runtimeScalar(indexValue(*i, loc(e.range)), like, e.range) : mlir::Value();
  };
  mlir::Value l = lt ? lhs.tensor : scalarOperand(lhs, *binary.lhs, rhs.tensor);
  if (!l)
    return failed ? GenValue() : unsupported(binary.lhs->range, "this operand");
  mlir::Value r = rt ? rhs.tensor : scalarOperand(rhs, *binary.rhs, lhs.tensor);
  if (!r)
    return failed ? GenValue() : unsupported(binary.rhs->range, "this operand");
  std::optional<RankedTensorType> result = checkedType(binary, scope);
  if (!result)
    return unsupported(binary.range, "this operator here (the checker gave it no tensor type)");
  mlir::Value v = binaryOp(binary.op, l, r, *result, binary.range);
  if (!v)
    return fail();
  return GenValue::ofTensor(v);
}

GenValue Generator::genIndex(const ast::IndexExpr &index, Scope &scope) {
  GenValue base = gen(*index.base, scope);
  if (!base.ok())
    return {};
  auto constantInt = [&](const ast::Expr &e) -> std::optional<int64_t> {
    std::optional<GenValue> v = constantOf(e, *scope.frame);
    if (!v)
      return std::nullopt;
    return int64_t(v->number);
  };
  if (base.kind == GenValue::Kind::ModelList) {
    std::optional<int64_t> i;
    if (index.subscripts.size() == 1 && !index.subscripts[0].isSlice)
      i = constantInt(*index.subscripts[0].index);
    int64_t n = int64_t(base.models.size());
    if (!i || *i < -n || *i >= n)
      return unsupported(index.range, "this submodel index");
    GenValue v;
    v.kind = GenValue::Kind::Model;
    v.model = base.models[size_t(*i < 0 ? *i + n : *i)];
    return v;
  }
  if (base.kind == GenValue::Kind::List || base.kind == GenValue::Kind::Tuple) { // `chunk(x, 2)[1]`
    std::optional<int64_t> i;
    if (index.subscripts.size() == 1 && !index.subscripts[0].isSlice)
      i = constantInt(*index.subscripts[0].index);
    int64_t n = int64_t(base.elements.size());
    if (!i || *i < -n || *i >= n)
      return unsupported(index.range, "this list index");
    return base.elements[size_t(*i < 0 ? *i + n : *i)];
  }
  if (base.kind != GenValue::Kind::Tensor)
    return unsupported(index.base->range, "indexing this value");

  RankedTensorType xt = typeOf(base.tensor);
  int64_t rank = xt.getRank();
  if (int64_t(index.subscripts.size()) > rank)
    return unsupported(index.range, "more subscripts than dims");
  // Single indices known only now (a loop variable): constants of an
  // unrolled loop, or run-time positions read by mdl.select after the
  // static part of the subscripts.
  llvm::DenseMap<size_t, int64_t> generatedIndices;
  llvm::SmallVector<int64_t> runtimeDims;
  llvm::SmallVector<mlir::Value> runtimePositions;
  for (size_t d = 0; d < index.subscripts.size(); ++d) {
    const ast::Slice &sub = index.subscripts[d];
    if (sub.isSlice || constantInt(*sub.index))
      continue;
    std::optional<IntOperand> i = intOperand(*sub.index, scope);
    if (!i)
      return {};
    if (i->constant) {
      generatedIndices[d] = *i->constant;
      continue;
    }
    runtimeDims.push_back(int64_t(d));
    runtimePositions.push_back(i->value);
  }
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  llvm::SmallVector<int64_t> starts(rank, 0), ends(rank, kToEnd), steps(rank, 1), indexDims;
  for (size_t d = 0; d < index.subscripts.size(); ++d) {
    const ast::Slice &sub = index.subscripts[d];
    if (llvm::is_contained(runtimeDims, int64_t(d)))
      continue; // whole here; mdl.select picks the position
    int64_t extent = xt.getDimSize(d);
    auto bound = [&](const ast::ExprPtr &e, int64_t dflt) -> std::optional<int64_t> {
      if (!e)
        return dflt;
      if (auto it = generatedIndices.find(d); it != generatedIndices.end() && e == sub.index)
        return it->second;
      return constantInt(*e);
    };
    std::optional<int64_t> start = bound(sub.isSlice ? sub.begin : sub.index, 0),
                           end = bound(sub.end, kToEnd), step = bound(sub.step, 1);
    if (!start || !end || !step)
      return unsupported(sub.range, "a slice bound known only at run time");
    if (!sub.isSlice) {
      // PyTorch raises IndexError; a static extent lets us say so here.
      if (extent != kDyn && (*start < -extent || *start >= extent))
        return indexOutOfRange(sub.range, *start, extent, index.base->range);
      starts[d] = *start;
      ends[d] = *start + 1;
      indexDims.push_back(int64_t(d));
      continue;
    }
    if (*step < 1)
      return unsupported(sub.range, "a slice step below 1");
    starts[d] = *start;
    ends[d] = *end;
    steps[d] = *step;
  }
  std::optional<RankedTensorType> checked = checkedType(index, scope);
  if (!checked)
    return unsupported(index.range, "this subscript here (the checker gave it no tensor type)");
  // The checker sizes a slice as (end - begin) / step without clamping; when
  // the bounds leave the dim, PyTorch's (clamped) result disagrees with it.
  llvm::SmallVector<int64_t> kept; // the dims the subscripts leave, in order
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(indexDims, d) && !llvm::is_contained(runtimeDims, d))
      kept.push_back(d);
  if (int64_t(kept.size()) != checked->getRank())
    return unsupported(index.range, "this subscript here (its type has another rank)");
  for (auto [d, promised] : llvm::zip_equal(kept, checked->getShape())) {
    if (xt.isDynamicDim(d) || promised == kDyn)
      continue;
    int64_t actual = mlir::mdl::slicedExtent(starts[d], ends[d], steps[d], xt.getDimSize(d));
    if (actual != promised) {
      if (!failed)
        diags.report(DiagId::SliceOutsideDim, index.range, index.range.text(), actual, promised)
            .primary("dim " + std::to_string(d) + " has " + std::to_string(xt.getDimSize(d)) +
                     " elements here")
            .note("PyTorch would clamp the slice to the elements there are and fail later, "
                  "where the shorter tensor meets one of the length its type promises; here a "
                  "slice must stay inside its dim (is the input longer than the buffer it is "
                  "sliced from?)");
      return fail();
    }
  }
  // The slice keeps the dims mdl.select picks a run-time position of.
  llvm::SmallVector<int64_t> shape, selectDims;
  for (int64_t d = 0, next = 0; d < rank; ++d) {
    if (llvm::is_contained(runtimeDims, d)) {
      selectDims.push_back(int64_t(shape.size()));
      shape.push_back(xt.getDimSize(d));
    } else if (!llvm::is_contained(indexDims, d)) {
      shape.push_back(checked->getDimSize(next++));
    }
  }
  mlir::Location l = loc(index.range);
  mlir::Value result = base.tensor;
  bool wholeTensor = indexDims.empty() && llvm::all_of(llvm::seq<int64_t>(0, rank), [&](int64_t d) {
                       return starts[d] == 0 && ends[d] == kToEnd && steps[d] == 1;
                     });
  if (!wholeTensor)
    result = mlir::mdl::SliceOp::create(b, l, withShape(*checked, shape), base.tensor,
                                        b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps),
                                        b.getDenseI64ArrayAttr(indexDims));
  if (!selectDims.empty())
    result = mlir::mdl::SelectOp::create(b, l, *checked, result, runtimePositions,
                                         b.getDenseI64ArrayAttr(selectDims));
  return GenValue::ofTensor(result);
}

std::optional<IntOperand> Generator::intOperandOf(const GenValue &v, const ast::Expr &expr,
                                                  Scope &scope) {
  if (v.kind == GenValue::Kind::Scalar && v.isInt)
    return IntOperand{int64_t(v.number), {}};
  if (v.kind == GenValue::Kind::Index)
    return IntOperand{std::nullopt, v.index};
  if (v.kind == GenValue::Kind::Size) {
    // A symbolic dim (`T` of `x: f32[B, T, I]`): read from the input.
    const sema::ExprInfo *info = program.typeOf(&expr);
    if (info && info->type.intValue)
      if (mlir::Value size =
              sizeValue(scopedDim(*info->type.intValue, scope), scope, loc(expr.range)))
        return IntOperand{std::nullopt, size};
  }
  unsupported(expr.range, "this int as a loop bound or subscript");
  return std::nullopt;
}

GenValue Generator::indexArithmetic(const ast::BinaryExpr &binary, const GenValue &lhs,
                                    const GenValue &rhs, Scope &scope) {
  std::optional<IntOperand> l = intOperandOf(lhs, *binary.lhs, scope);
  std::optional<IntOperand> r = l ? intOperandOf(rhs, *binary.rhs, scope) : std::nullopt;
  if (!l || !r)
    return {};
  mlir::Location at = loc(binary.range);
  mlir::Value a = indexValue(*l, at), c = indexValue(*r, at);
  GenValue v;
  v.kind = GenValue::Kind::Index;
  switch (binary.op) {
  case ast::BinaryOp::Add:
    v.index = mlir::arith::AddIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Sub:
    v.index = mlir::arith::SubIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Mul:
    v.index = mlir::arith::MulIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Div: // Python's `//` on ints, as foldScalars
    v.index = mlir::arith::FloorDivSIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Mod: {
    mlir::Value quotient = mlir::arith::FloorDivSIOp::create(b, at, a, c);
    v.index =
        mlir::arith::SubIOp::create(b, at, a, mlir::arith::MulIOp::create(b, at, quotient, c));
    return v;
  }
  default:
    return unsupported(binary.range, "`" + ast::binaryOpSpelling(binary.op) +
                                         "` on an int known only at run time");
  }
}

} // namespace modelc::mlirgen::detail
