//===- ConvRuntime.h - the f32 conv2d entry point compiled code calls -----===//

#ifndef MODELC_JIT_CONVRUNTIME_H
#define MODELC_JIT_CONVRUNTIME_H

#include "jit/ConstantWeights.h"

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstddef>
#include <cstdint>
#include <string>

/// output += conv2d(input, weight) for f32 buffers of any strides, bound by
/// the JIT to `_mlir_ciface_modelc_conv2d`, which `mdl-conv-to-runtime`
/// calls. Either all three are rank 4 (input NCHW, weight OIHW, output
/// NOHW: one group) or all rank 5 (input NGCHW, weight GOCHW, output NGOHW:
/// grouped). Padding is applied on both sides of H and W. Runs a oneDNN
/// convolution primitive (cached per shape, strides and parameters) when
/// oneDNN is available, a direct loop otherwise; safe to call from several
/// threads at once.
extern "C" void modelc_conv2d_ciface(UnrankedMemRefType<float> *input,
                                     UnrankedMemRefType<float> *weight,
                                     UnrankedMemRefType<float> *output, int64_t strideH,
                                     int64_t strideW, int64_t padH, int64_t padW, int64_t dilationH,
                                     int64_t dilationW);

/// `flags` of modelc_conv2d_epilogue and modelc_conv2d_pool. With
/// kConvSrcBlocked16 the input buffer holds oneDNN's nChw16c layout of the
/// NCHW tensor its type describes (a contiguous buffer, C a multiple of 16),
/// as a conv call with kConvDstBlocked16 wrote it: `mdl-conv-to-runtime`
/// keeps a tensor that one conv writes and only convs read in that layout,
/// so neither call reorders it.
///
/// With kConvConstantWeights the weight buffer holds the same values on
/// every call (a model's state, or what lower::createHoistStatePrepPass
/// prepared from it) until modelc::jit::forgetConstantWeights covers it: its
/// copy in the primitive's layout is made on the first call and kept
/// (jit/ConstantWeights.h).
enum : int64_t {
  kConvAccumulate = 1,
  kConvBias = 2,
  kConvSrcBlocked16 = 4,
  kConvDstBlocked16 = 8,
  kConvConstantWeights = 16
};

/// output = act(conv2d(input, weight) (+ output when flags has
/// kConvAccumulate) (+ bias[channel] when it has kConvBias)): the
/// activations (ReLU, GELU, tanh, SiLU, sigmoid; jit/GemmKernels.h's
/// four-bit codes, no Add) run as oneDNN post-ops while each block is in
/// cache, and without kConvAccumulate the output is only written. `bias` is
/// a contiguous rank-1 buffer of the output channels (any buffer when
/// unused). Bound to `_mlir_ciface_modelc_conv2d_epilogue`, which
/// `mdl-conv-to-runtime` calls.
extern "C" void modelc_conv2d_epilogue_ciface(UnrankedMemRefType<float> *input,
                                              UnrankedMemRefType<float> *weight,
                                              UnrankedMemRefType<float> *output,
                                              UnrankedMemRefType<float> *bias, int64_t strideH,
                                              int64_t strideW, int64_t padH, int64_t padW,
                                              int64_t dilationH, int64_t dilationW, int64_t flags,
                                              int64_t activations);

/// output = maxpool(act(conv2d(input, weight) (+ bias[channel]))), the
/// pooling unpadded with its own kernel and strides: what
/// modelc_conv2d_epilogue without kConvAccumulate followed by a max pool
/// computes, with the conv's output kept in oneDNN's blocked layout inside
/// the call (only the pooled result is reordered to the caller's layout).
/// `output` is the pooled buffer. Bound to `_mlir_ciface_modelc_conv2d_pool`,
/// which `mdl-conv-to-runtime` calls when a max pool is the conv's only
/// reader.
extern "C" void
modelc_conv2d_pool_ciface(UnrankedMemRefType<float> *input, UnrankedMemRefType<float> *weight,
                          UnrankedMemRefType<float> *output, UnrankedMemRefType<float> *bias,
                          int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
                          int64_t dilationH, int64_t dilationW, int64_t flags, int64_t activations,
                          int64_t poolKernelH, int64_t poolKernelW, int64_t poolStrideH,
                          int64_t poolStrideW);

/// output = input (NCHW, any strides) in oneDNN's nChw16c layout: one
/// reorder for several convs that read the same tensor (kConvSrcBlocked16).
/// `output` is a contiguous buffer of the input's dims, C a multiple of 16.
/// Bound to `_mlir_ciface_modelc_to_blocked16`, which `mdl-conv-to-runtime`
/// calls.
extern "C" void modelc_to_blocked16_ciface(UnrankedMemRefType<float> *input,
                                           UnrankedMemRefType<float> *output);

namespace modelc::jit {

/// The oneDNN implementation the conv entries chose for the primitive they
/// created last on this thread ("brgconv:avx512_core", "jit_wino_4x3:...";
/// empty before the first, or without oneDNN): for tests and benchmarks.
std::string lastCreatedConvKernel();

} // namespace modelc::jit

#endif // MODELC_JIT_CONVRUNTIME_H
