//===- BlasRuntime.h - the sgemm entry point compiled code calls ----------===//

#ifndef MODELC_JIT_BLASRUNTIME_H
#define MODELC_JIT_BLASRUNTIME_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

/// C += A * B for f32 matrices of any strides: OpenBLAS when each operand is
/// row- or column-major, a plain loop otherwise. Bound by the JIT to
/// `_mlir_ciface_modelc_sgemm`, which `mdl-matmul-to-blas` calls.
extern "C" void modelc_sgemm_ciface(StridedMemRefType<float, 2> *a, StridedMemRefType<float, 2> *b,
                                    StridedMemRefType<float, 2> *c);

#endif // MODELC_JIT_BLASRUNTIME_H
