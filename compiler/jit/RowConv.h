//===- RowConv.h - modelc's own conv for few channels, vectorised on rows -===//
//
// Internal to compiler/jit: the conv kernel MODELC_CONV_LAYOUT=rows names.
// oneDNN's direct kernels vectorise over channels and pad them to blocks of
// 8 or 16: a network's first conv (1 or 3 input channels) or one with 6
// output channels (LeNet) computes mostly padding there. This kernel
// vectorises over the output row instead: register tiles of up to 6 output
// channels x 64 columns, accumulated over every (input channel, kernel row,
// kernel column) tap of a zero-padded copy of one image, then bias,
// activations and an optional max pooling while the image's channels are in
// cache. Stride 1, no dilation, one group; ConvRuntime.cpp measures it
// against oneDNN's pick where it applies. AVX-512 where the CPU has it (and
// tileKernelsUseAvx512() says so), else plain loops.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_ROWCONV_H
#define MODELC_JIT_ROWCONV_H

#include "jit/GemmKernels.h"

#include <cstdint>

namespace modelc::jit {

/// A rank-4 operand: element (a, b, c, d) at data[a * strides[0] + b *
/// strides[1] + c * strides[2] + d * strides[3]].
struct ConvOperand {
  float *data = nullptr;
  int64_t sizes[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
};

/// output = act(conv2d(input, weight) (+ output when accumulate) (+ bias)),
/// or with a pooling, pooled = maxpool(that) and `output` only gives the
/// conv's dims.
struct RowConvProblem {
  ConvOperand input;  ///< [N, C, H, W], any strides
  ConvOperand weight; ///< [O, C, KH, KW], any strides
  ConvOperand output; ///< [N, O, OH, OW], unit stride along OW
  int64_t stride[2] = {1, 1}, pad[2] = {0, 0}, dilation[2] = {1, 1};
  bool accumulate = false;
  /// One value per output channel; null for none.
  const float *bias = nullptr;
  /// Activation steps only (no Add).
  Epilogue activations;
  /// Unpadded max pooling of the conv's output into `pooled` ([N, O, PH,
  /// PW], unit stride along PW) when poolKernel[0] > 0.
  int64_t poolKernel[2] = {0, 0}, poolStride[2] = {0, 0};
  ConvOperand pooled;
};

/// Whether rowConv can run `problem`: stride 1, no dilation, unit stride
/// along the written rows, no accumulation into a pooled conv, nonempty.
bool rowConvApplies(const RowConvProblem &problem);

/// Runs `problem` (rowConvApplies must hold), the images split over
/// OpenMP's threads.
void rowConv(const RowConvProblem &problem);

} // namespace modelc::jit

#endif // MODELC_JIT_ROWCONV_H
