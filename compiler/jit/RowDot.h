//===- RowDot.h - few rows of A against a Linear layer's weight -*- C++ -*-===//
//
// Internal to compiler/jit: part of GemmKernel::Tiles. At batch 1-4 a
// Linear layer's product c = a W.T is a pass over W ([n, k], rows of k
// floats) that the arithmetic cannot hide: 256x784 is 803 KB for 0.4
// MFLOP. The row-dot form reads W in place, four rows side by side (four
// sequential streams, which the L2-to-L1 prefetchers keep ahead of the
// loads better than one packed panel), each 16-float vector of a row
// multiplied with a's rows, every c element one horizontal sum at the end.
// On several threads each takes the same contiguous band of W's rows at
// every call, so that its band stays in its own core's L2.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_ROWDOT_H
#define MODELC_JIT_ROWDOT_H

#include "jit/GemmKernels.h"

namespace modelc::jit {

/// The most rows of A the row-dot form takes.
constexpr int64_t kRowDotMaxRows = 4;

/// Whether `problem` has the row-dot form's layout: at most kRowDotMaxRows
/// rows of A, A's rows and B's columns (W's rows) contiguous along k.
bool rowDotApplies(const GemmProblem &problem);

/// Runs `problem` (rowDotApplies must hold) with its epilogue; the AVX-512
/// kernels when `avx512`, else plain loops.
void rowDotGemm(const GemmProblem &problem, bool avx512);

} // namespace modelc::jit

#endif // MODELC_JIT_ROWDOT_H
