//===- ConvRuntime.h - the f32 conv2d entry point compiled code calls -----===//

#ifndef MODELC_JIT_CONVRUNTIME_H
#define MODELC_JIT_CONVRUNTIME_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

#include <cstdint>

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

#endif // MODELC_JIT_CONVRUNTIME_H
