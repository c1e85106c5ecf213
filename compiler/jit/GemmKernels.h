//===- GemmKernels.h - one f32 product and the kernels that can run it ----===//
//
// Internal to compiler/jit: the runtime entries (BlasRuntime.cpp) describe a
// call as a GemmProblem, GemmChoice.cpp picks a kernel, GemmKernels.cpp runs
// it.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_GEMMKERNELS_H
#define MODELC_JIT_GEMMKERNELS_H

#include "jit/GemmChoice.h"

#include <array>
#include <cstdint>

namespace modelc::jit {

/// What follows the product in the same call, in order. Encoded by the
/// lowering as four bits per step, the first step in the low bits
/// (`modelc_matmul_epilogue`'s last argument); 0 ends the list.
enum class EpilogueStep : uint8_t {
  End = 0,
  /// + the next epilogue operand (a bias row broadcast over the rows, or a
  /// full matrix such as a residual).
  Add = 1,
  Relu = 2,
  /// Exact (erf) GELU, as torch.nn.functional.gelu.
  Gelu = 3,
  Tanh = 4,
  /// x * sigmoid(x).
  Silu = 5,
  Sigmoid = 6,
};
inline constexpr int kMaxEpilogueSteps = 8;
inline constexpr int kMaxEpilogueOperands = 2;
/// The bit of an epilogue code above the steps that says B is the same on
/// every call (a model's weight, an `mdl.state` argument): oneDNN's matmul
/// then reads a copy in its own blocked layout, made on the first call
/// (ConstantWeights.h) instead of packing B on every call. Part of the code,
/// so of the shape class and of the primitive's key.
inline constexpr int64_t kEpilogueConstantB = int64_t(1) << 62;

/// A matrix read by an Add step: element (i, j) at data[i * rowStride + j *
/// colStride]; rowStride 0 broadcasts one row (a bias).
struct EpilogueOperand {
  const float *data = nullptr;
  int64_t rowStride = 0, colStride = 1;
};

struct Epilogue {
  std::array<EpilogueStep, kMaxEpilogueSteps> steps{};
  int stepCount = 0;
  std::array<EpilogueOperand, kMaxEpilogueOperands> operands{};
  int operandCount = 0;
  /// The encoded steps: part of the shape class and the primitive cache key.
  int64_t code = 0;
  /// The code has kEpilogueConstantB.
  bool constantB = false;

  bool empty() const { return stepCount == 0; }
};

/// One activation step (not Add) on one value.
float applyActivation(EpilogueStep step, float x);

/// Decodes `code`; false when it names an unknown step or needs more
/// operands than `operands` holds.
bool decodeEpilogue(int64_t code, const EpilogueOperand *operands, int available,
                    Epilogue &epilogue);

/// c = epilogue(op(a) op(b) (+ c when accumulate)), row-major c.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  const float *a = nullptr;
  bool transposeA = false;
  int64_t lda = 0;
  const float *b = nullptr;
  bool transposeB = false;
  int64_t ldb = 0;
  float *c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
  Epilogue epilogue;

  double macs() const { return double(m) * double(n) * double(k); }
};

/// Runs `problem` with `kernel` (not Auto); false when the kernel's library
/// is missing or declined the operands (nothing was written then).
bool runGemmKernel(GemmKernel kernel, const GemmProblem &problem);

/// The epilogue as a separate pass over c (after a kernel without post-ops).
void applyEpilogue(const GemmProblem &problem);
/// The same over rows [rowBegin, rowEnd) and columns [colBegin, colEnd) of c.
void applyEpilogue(const GemmProblem &problem, int64_t rowBegin, int64_t rowEnd, int64_t colBegin,
                   int64_t colEnd);

/// Picks the kernel (GemmChoice.cpp) and runs the problem; falls back to
/// Loops when the pick declines.
void runGemm(const GemmProblem &problem);

} // namespace modelc::jit

#endif // MODELC_JIT_GEMMKERNELS_H
