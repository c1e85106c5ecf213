//===- LibraryGemm.cpp - A matmul as a GEMM library takes it --------------===//

#include "cudagen/LibraryGemm.h"

#include "llvm/ADT/STLExtras.h"

#include <functional>

namespace modelc::cudagen {

using runtime::DType;

bool sameSize(const SizeExpr &a, const SizeExpr &b) {
  if (a == b)
    return true;
  llvm::SmallVector<std::string, 4> names;
  a.collectSymbols(names);
  b.collectSymbols(names);
  if (names.empty())
    return false; // two different constants
  // Polynomials that agree at three unrelated points are (in practice) one.
  for (int64_t base : {3, 7, 19}) {
    SymbolValues values;
    int64_t next = base;
    for (const std::string &name : names) {
      values[name] = next;
      next = next * 2 + 1;
    }
    llvm::Expected<int64_t> x = a.evaluate(values), y = b.evaluate(values);
    bool equal = x && y && *x == *y;
    if (!x)
      llvm::consumeError(x.takeError());
    if (!y)
      llvm::consumeError(y.takeError());
    if (!equal)
      return false;
  }
  return true;
}

namespace {

bool isOne(const SizeExpr &e) { return e.constant() == 1; }
bool isZero(const SizeExpr &e) { return e.constant() == 0; }

/// `op` as a GemmOperand whose batch index runs over `outBatch` (the
/// output's batch dims, row-major), or std::nullopt.
std::optional<GemmOperand> operandLayout(const MatmulOperand &op,
                                         llvm::ArrayRef<SizeExpr> outBatch) {
  const BufferRef &buffer = op.buffer;
  unsigned rank = op.shape.size(), bufferRank = buffer.shape.size();
  if (rank < 2 || op.dimMap.size() != bufferRank)
    return std::nullopt;
  // The step of each logical dim in the dense row-major buffer (0 where no
  // buffer dim maps to it: its coordinate is always 0).
  llvm::SmallVector<SizeExpr, 4> strides(rank, SizeExpr(0));
  llvm::SmallVector<bool, 4> mapped(rank, false);
  SizeExpr step = 1;
  for (int j = int(bufferRank) - 1; j >= 0; --j) {
    int d = op.dimMap[j];
    if (d >= int(rank))
      return std::nullopt;
    if (d >= 0) {
      if (mapped[d])
        return std::nullopt; // a diagonal: no leading dim describes it
      mapped[d] = true;
      strides[d] = isOne(op.shape[d]) ? SizeExpr(0) : step;
    }
    step = step * buffer.shape[j];
  }
  const SizeExpr &rows = op.shape[rank - 2], &cols = op.shape[rank - 1];
  const SizeExpr &rowStep = strides[rank - 2], &colStep = strides[rank - 1];
  GemmOperand result;
  result.buffer = buffer.id;
  if ((isOne(colStep) || isOne(cols)) && (isOne(rows) || !isZero(rowStep))) {
    result.transposed = false;
    result.ld = isOne(rows) || isZero(rowStep) ? cols : rowStep;
  } else if ((isOne(rowStep) || isOne(rows)) && (isOne(cols) || !isZero(colStep))) {
    result.transposed = true;
    result.ld = isOne(cols) || isZero(colStep) ? rows : colStep;
  } else {
    return std::nullopt;
  }

  // One stride for the flattened batch index: the operand's step along each
  // output batch dim must be that stride times the dims inside it.
  unsigned batchRank = rank - 2, outRank = outBatch.size();
  if (batchRank > outRank)
    return std::nullopt;
  llvm::SmallVector<SizeExpr, 4> steps(outRank, SizeExpr(0));
  for (unsigned d = 0; d < batchRank; ++d)
    steps[outRank - batchRank + d] = strides[d];
  int innermost = -1;
  for (int i = int(outRank) - 1; i >= 0 && innermost < 0; --i)
    if (!isOne(outBatch[i]))
      innermost = i;
  result.batchStride = innermost < 0 ? SizeExpr(0) : steps[innermost];
  SizeExpr inside = 1;
  for (int i = innermost - 1; i >= 0; --i) {
    inside = inside * outBatch[i + 1];
    if (isOne(outBatch[i]))
      continue;
    bool linear = isZero(result.batchStride) ? isZero(steps[i])
                                             : sameSize(steps[i], result.batchStride * inside);
    if (!linear)
      return std::nullopt;
  }
  return result;
}

bool isLoadOf(const ExprPtr &e) { return e && e->kind == Expr::Kind::Load && e->operands.empty(); }

/// A bias: a vector along the output's last dim, read from its buffer's
/// start (other buffer dims broadcast or of extent 1).
bool isBias(const ExprPtr &e, const BufferRef &out) {
  if (!isLoadOf(e) || e->buffer.dtype != out.dtype || e->buffer.shape.empty())
    return false;
  int last = int(out.shape.size()) - 1;
  const BufferRef &b = e->buffer;
  for (size_t j = 0; j + 1 < b.shape.size(); ++j)
    if (e->dimMap[j] >= 0 && !isOne(b.shape[j]))
      return false;
  return e->dimMap.back() == last && sameSize(b.shape.back(), out.shape.back());
}

/// A residual: a dense buffer shaped like the output, read at the same
/// coordinates.
bool isResidual(const ExprPtr &e, const BufferRef &out) {
  if (!isLoadOf(e) || e->buffer.dtype != out.dtype || e->buffer.id == out.id ||
      e->buffer.shape.size() != out.shape.size())
    return false;
  for (size_t d = 0; d < out.shape.size(); ++d)
    if (e->dimMap[d] != int(d) || !sameSize(e->buffer.shape[d], out.shape[d]))
      return false;
  return true;
}

/// `root` with the node `target` replaced by `replacement`.
ExprPtr replaced(const ExprPtr &root, const Expr *target, const ExprPtr &replacement) {
  if (root.get() == target)
    return replacement;
  bool changed = false;
  std::vector<ExprPtr> operands;
  for (const ExprPtr &operand : root->operands) {
    operands.push_back(replaced(operand, target, replacement));
    changed |= operands.back() != operand;
  }
  if (!changed)
    return root;
  auto copy = std::make_shared<Expr>(*root);
  copy->operands = std::move(operands);
  return copy;
}

/// The nodes from `root` down to the accumulator leaf; empty unless there is
/// exactly one such leaf.
std::vector<const Expr *> pathToAccumulator(const ExprPtr &root) {
  std::vector<const Expr *> path, found;
  int leaves = 0;
  std::function<void(const Expr *)> walk = [&](const Expr *e) {
    path.push_back(e);
    if (e->kind == Expr::Kind::Epilogue && ++leaves == 1)
      found = path;
    for (const ExprPtr &operand : e->operands)
      walk(operand.get());
    path.pop_back();
  };
  walk(root.get());
  return leaves == 1 ? found : std::vector<const Expr *>{};
}

} // namespace

std::optional<GemmCall> describeLibraryGemm(const MatmulOperand &lhs, const MatmulOperand &rhs,
                                            const ExprPtr &epilogue, const BufferRef &out,
                                            bool tf32, ExprPtr &rest) {
  rest = nullptr;
  DType type = out.dtype;
  if ((type != DType::F32 && type != DType::F16 && type != DType::BF16) ||
      lhs.buffer.dtype != type || rhs.buffer.dtype != type || out.shape.size() < 2 ||
      lhs.shape.size() < 2 || rhs.shape.size() < 2)
    return std::nullopt;
  unsigned rank = out.shape.size();
  llvm::ArrayRef<SizeExpr> outBatch = llvm::ArrayRef(out.shape).drop_back(2);
  std::optional<GemmOperand> a = operandLayout(lhs, outBatch), b = operandLayout(rhs, outBatch);
  if (!a || !b)
    return std::nullopt;

  GemmCall call;
  call.inputType = call.outputType = type;
  call.m = out.shape[rank - 2];
  call.n = out.shape[rank - 1];
  call.k = lhs.shape.back();
  call.batch = product(outBatch);
  call.a = *a;
  call.b = *b;
  call.out = out.id;
  call.tf32 = tf32 && type == DType::F32;
  // A shared right-hand side and a dense left-hand side: the batches are
  // rows of one taller product.
  if (!isOne(call.batch) && isZero(b->batchStride) && !a->transposed &&
      sameSize(a->batchStride, call.m * a->ld)) {
    call.m = call.m * call.batch;
    call.batch = 1;
    call.a.batchStride = 0;
  }

  if (!epilogue)
    return call;
  // From the accumulator up: bias and residual adds, then one activation.
  std::vector<const Expr *> path = pathToAccumulator(epilogue);
  const Expr *top = path.empty() ? nullptr : path.back();
  for (int i = int(path.size()) - 2; i >= 0 && !path.empty(); --i) {
    const Expr *node = path[size_t(i)];
    if (node->dtype != type || call.activation != GemmActivation::None)
      break;
    if (node->kind == Expr::Kind::Binary && node->op == "add" && node->operands.size() == 2) {
      const ExprPtr &other =
          node->operands[0].get() == path[size_t(i) + 1] ? node->operands[1] : node->operands[0];
      if (!call.bias && isBias(other, out))
        call.bias = other->buffer.id;
      else if (!call.residual && isResidual(other, out))
        call.residual = other->buffer.id;
      else
        break;
    } else if (node->kind == Expr::Kind::Unary && (node->op == "relu" || node->op == "gelu_tanh")) {
      call.activation = node->op == "relu" ? GemmActivation::Relu : GemmActivation::GeluTanh;
    } else {
      break;
    }
    top = node;
  }
  ExprPtr result = identityLoad(out, type, rank);
  if (!top) {
    // The accumulator is read more than once (or not at all): the library
    // computes the bare product and the whole epilogue runs after it.
    std::function<ExprPtr(const ExprPtr &)> substitute = [&](const ExprPtr &e) -> ExprPtr {
      if (e->kind == Expr::Kind::Epilogue)
        return result;
      auto copy = std::make_shared<Expr>(*e);
      for (ExprPtr &operand : copy->operands)
        operand = substitute(operand);
      return copy;
    };
    rest = substitute(epilogue);
    return call;
  }
  if (top != epilogue.get())
    rest = replaced(epilogue, top, result);
  return call;
}

} // namespace modelc::cudagen
