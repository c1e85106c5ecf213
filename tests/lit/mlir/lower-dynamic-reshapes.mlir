// Regression: `modelc emit --stage=llvm examples/mlp_block.mdl` crashed in
// memref::ReinterpretCastOp::build. A linear layer over [B, T, d] folds B*T
// into the rows of one matmul and expands them back: a memref.expand_shape
// with two dynamic dims in one group, which MLIR 22's expand-strided-metadata
// cannot expand. mdl-expand-dynamic-reshapes rewrites exactly those first.
// RUN: %modelc-opt %s --split-input-file --mdl-expand-dynamic-reshapes | FileCheck %s
// RUN: %modelc-opt %s --split-input-file --mdl-expand-dynamic-reshapes --expand-strided-metadata \
// RUN:   | FileCheck %s --check-prefix=EXPANDED
// RUN: %modelc emit %examples/mlp_block.mdl --stage=llvm --model MlpBlock \
// RUN:   --args dim=256,hidden=1024 | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @rows_back
// CHECK: %[[BASE:[^,]*]], {{.*}} = memref.extract_strided_metadata %arg0
// CHECK: %[[OUTER:.*]] = arith.muli
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%arg1, %arg2, 1024], strides: [%[[OUTER]], 1024, 1]
// CHECK-NOT: memref.expand_shape
// EXPANDED-LABEL: func.func @rows_back
// EXPANDED-NOT: memref.expand_shape
func.func @rows_back(%a: memref<?x1024xf32>, %b: index, %t: index) -> memref<?x?x1024xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %t, 1024]
      : memref<?x1024xf32> into memref<?x?x1024xf32>
  return %e : memref<?x?x1024xf32>
}

// -----

// One dynamic dim per group: left to expand-strided-metadata.
// CHECK-LABEL: func.func @one_dynamic_per_group
// CHECK: memref.expand_shape
func.func @one_dynamic_per_group(%a: memref<?x?xf32>, %b: index, %t: index) -> memref<?x?x1xf32> {
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [%b, %t, 1]
      : memref<?x?xf32> into memref<?x?x1xf32>
  return %e : memref<?x?x1xf32>
}

// LLVM: llvm.func @forward
// LLVM-NOT: memref.
