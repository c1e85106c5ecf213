//===- BlasRuntime.h - the sgemm entry point compiled code calls ----------===//

#ifndef MODELC_JIT_BLASRUNTIME_H
#define MODELC_JIT_BLASRUNTIME_H

#include "mlir/ExecutionEngine/CRunnerUtils.h"

/// C += A * B for f32 matrices of any strides: a library kernel (oneDNN's
/// matmul primitive or sgemm, OpenBLAS; chosen by measurement, GemmChoice.h)
/// when each operand is row- or column-major, a plain loop otherwise. Bound
/// by the JIT to `_mlir_ciface_modelc_sgemm`, which `mdl-matmul-to-blas`
/// calls.
extern "C" void modelc_sgemm_ciface(StridedMemRefType<float, 2> *a, StridedMemRefType<float, 2> *b,
                                    StridedMemRefType<float, 2> *c);

/// C[i] += A[i] * B[i] for each i of the (first) batch dim, each product
/// as modelc_sgemm runs it. Bound to `_mlir_ciface_modelc_batch_sgemm`.
extern "C" void modelc_batch_sgemm_ciface(StridedMemRefType<float, 3> *a,
                                          StridedMemRefType<float, 3> *b,
                                          StridedMemRefType<float, 3> *c);

/// C = epilogue(A * B) in one call: `steps` lists what follows the product,
/// four bits per step from the low end (GemmKernels.h: 1 add the next of
/// X0, X1; 2 ReLU; 3 GELU (erf); 4 tanh; 5 SiLU; 6 sigmoid; 0 ends). An Add
/// operand with row stride 0 is a bias row. With oneDNN's matmul primitive
/// the epilogue runs as post-ops on each block while it is in cache.
/// Bound to `_mlir_ciface_modelc_matmul_epilogue`.
extern "C" void modelc_matmul_epilogue_ciface(StridedMemRefType<float, 2> *a,
                                              StridedMemRefType<float, 2> *b,
                                              StridedMemRefType<float, 2> *c,
                                              StridedMemRefType<float, 2> *x0,
                                              StridedMemRefType<float, 2> *x1, int64_t steps);

/// malloc/free for JIT-compiled code (the JIT binds its `malloc` and `free`
/// to these): blocks of 64 KiB and more are kept per thread and reused by
/// the next allocation of the same size, so a forward at batch 64+ does not
/// map, fault in and unmap its intermediates on every call. Up to 32 blocks
/// per thread stay cached until the thread exits.
#include <cstddef>
extern "C" void *modelc_jit_malloc(size_t size);
extern "C" void modelc_jit_free(void *ptr);

#endif // MODELC_JIT_BLASRUNTIME_H
