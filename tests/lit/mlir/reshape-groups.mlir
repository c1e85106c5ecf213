// mdl.reshape with several dynamic result dims that the types cannot group
// (`flatten(x, start_dim: 1)` of [?, 3, ?, ?]) carries `groups`, which mlirgen
// fills from the checker's dims; it lowers to one tensor.collapse_shape.
// RUN: %modelc-opt %s --mdl-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @flatten_symbolic(
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<?x3x?x?xf32> into tensor<?x?xf32>
func.func @flatten_symbolic(%x: tensor<?x3x?x?xf32, #mdl.device<cpu>>) -> tensor<?x?xf32, #mdl.device<cpu>> {
  %0 = mdl.reshape %x {groups = array<i64: 1, 3>} : tensor<?x3x?x?xf32, #mdl.device<cpu>> -> tensor<?x?xf32, #mdl.device<cpu>>
  return %0 : tensor<?x?xf32, #mdl.device<cpu>>
}
