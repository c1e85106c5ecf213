// A reshape of a static input to a result with a dynamic dim (a size the
// generator could not fix) goes through a dynamic 1-D tensor: expand_shape
// rejects a static source whose expansion has a dynamic dim.
// RUN: %modelc-opt %s --mdl-to-linalg | FileCheck %s
// RUN: %modelc-opt %s --mdl-lower-cpu | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @static_to_dynamic
// CHECK: tensor.collapse_shape {{.*}} tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.cast {{.*}} tensor<24xf32> to tensor<?xf32>
// CHECK: tensor.expand_shape {{.*}} tensor<?xf32> into tensor<?x3x8xf32>
// LLVM: llvm.func @static_to_dynamic
func.func @static_to_dynamic(%a: tensor<2x3x4xf32>) -> tensor<?x3x8xf32> {
  %0 = mdl.reshape %a : tensor<2x3x4xf32> -> tensor<?x3x8xf32>
  return %0 : tensor<?x3x8xf32>
}
