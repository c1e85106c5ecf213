//===- LibraryGemm.h - A matmul as a GEMM library takes it -----*- C++ -*-===//
//
// Describes a planned matmul as a GemmCall (DevicePlan.h), the form a GEMM
// library such as cuBLASLt takes, where its operands and epilogue allow:
//
// * operands: f32, f16 or bf16 (all three the output's), each matrix read
//   row-major or transposed with a leading dim, and the batch dims flattened
//   to one stride (0 for a broadcast operand). A batched product whose
//   right-hand side is shared and whose left-hand side is dense row-major
//   folds its batches into M (x[B, T, D] @ w[D, E] is one (B*T) x E GEMM).
// * epilogue: what cuBLASLt applies (D = act(A B + C + bias)) is taken from
//   the bottom of the plan's epilogue, walking up from the accumulator: one
//   add of a bias vector along the columns, one add of a residual shaped
//   like the output (C with beta = 1), then relu or the tanh gelu. Whatever
//   is above that (an exact gelu, silu, a scale, an add after the
//   activation) stays with the plan as an elementwise expression over the
//   output, which then runs after the library call as a kernel of its own,
//   reading the library's result in place.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAGEN_LIBRARYGEMM_H
#define MODELC_CUDAGEN_LIBRARYGEMM_H

#include "cudagen/DevicePlan.h"
#include "cudagen/KernelSource.h"

#include <optional>

namespace modelc::cudagen {

/// The GemmCall of `lhs @ rhs` stored through `epilogue` (null: none) into
/// `out`, without device, steps, label or `after`; std::nullopt when a
/// library cannot take the operands. `rest` is what of the epilogue the
/// library does not apply, as an expression over `out`'s coordinates that
/// reads `out` where the library's result is; null when nothing is left.
std::optional<GemmCall> describeLibraryGemm(const MatmulOperand &lhs, const MatmulOperand &rhs,
                                            const ExprPtr &epilogue, const BufferRef &out,
                                            bool tf32, ExprPtr &rest);

/// Whether `a` and `b` have the same value for every binding of their
/// symbols (structurally equal, or equal at several distinct bindings).
bool sameSize(const SizeExpr &a, const SizeExpr &b);

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_LIBRARYGEMM_H
