// The whole cpu pipeline ends in the LLVM dialect, with BLAS or with loops.
// RUN: %modelc-opt %s --mdl-lower-cpu | FileCheck %s --check-prefix=BLAS
// RUN: %modelc-opt %s --mdl-lower-cpu="use-blas=false" | FileCheck %s --check-prefix=LOOPS

!x = tensor<?x8xf32, #mdl.device<cpu>>

// The matmul, bias and GELU are one library call (the epilogue runs in the
// library: no erf loop is left); the steps code is an i64 argument.
// BLAS: llvm.func private @modelc_matmul_epilogue(
// BLAS: llvm.call @_mlir_ciface_modelc_matmul_epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> ()
// BLAS: llvm.func @_mlir_ciface_modelc_matmul_epilogue(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64)
// BLAS-LABEL: llvm.func @mlp
// BLAS: llvm.call @modelc_matmul_epilogue(
// BLAS-NOT: llvm.call @erff
// BLAS-NOT: func.func
// BLAS-NOT: linalg.
// BLAS-NOT: mdl.

// LOOPS-NOT: modelc_sgemm
// LOOPS-LABEL: llvm.func @mlp
// LOOPS: llvm.fmul
// LOOPS: llvm.fadd
// LOOPS-NOT: func.func
func.func @mlp(%x: !x, %w: tensor<8x4xf32, #mdl.device<cpu>>, %b: tensor<4xf32, #mdl.device<cpu>>)
    -> tensor<?x4xf32, #mdl.device<cpu>> {
  %0 = mdl.matmul %x, %w : !x, tensor<8x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %1 = mdl.add %0, %b : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %2 = mdl.gelu %1 : tensor<?x4xf32, #mdl.device<cpu>>
  %3 = mdl.log_softmax %2 {dim = 1} : tensor<?x4xf32, #mdl.device<cpu>>
  return %3 : tensor<?x4xf32, #mdl.device<cpu>>
}
