//===- BlasRuntime.h - the sgemm entry point compiled code calls ----------===//

#ifndef MODELC_JIT_BLASRUNTIME_H
#define MODELC_JIT_BLASRUNTIME_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

/// C += A * B for f32 matrices of any strides: OpenBLAS when each operand is
/// row- or column-major, a plain loop otherwise. Bound by the JIT to
/// `_mlir_ciface_modelc_sgemm`, which `mdl-matmul-to-blas` calls.
extern "C" void modelc_sgemm_ciface(StridedMemRefType<float, 2> *a, StridedMemRefType<float, 2> *b,
                                    StridedMemRefType<float, 2> *c);

/// malloc/free for JIT-compiled code (the JIT binds its `malloc` and `free`
/// to these): blocks of 64 KiB and more are kept per thread and reused by
/// the next allocation of the same size, so a forward at batch 64+ does not
/// map, fault in and unmap its intermediates on every call. Up to 32 blocks
/// per thread stay cached until the thread exits.
#include <cstddef>
extern "C" void *modelc_jit_malloc(size_t size);
extern "C" void modelc_jit_free(void *ptr);

#endif // MODELC_JIT_BLASRUNTIME_H
