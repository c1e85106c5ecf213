// Python slicing of a dim known only at run time: bounds of 0 and the open
// end are the plain values (0, the dim), and a slice from 0 with step 1
// takes its end as its size, with no clamping arithmetic left for later
// analyses to trace; other bounds are clamped into [0, size].
// RUN: %modelc-opt %s --mdl-to-linalg | FileCheck %s

// x[1:, :] of [?, ?]: dim 0 clamped (`1` may exceed the extent), dim 1 whole.
// CHECK-LABEL: func.func @open_ends(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?xf32>
// CHECK: arith.minsi
// CHECK: %[[D1:.*]] = tensor.dim %[[X]]
// CHECK-NOT: arith.minsi
// CHECK: tensor.extract_slice %[[X]][%{{.*}}, 0] [%{{.*}}, %[[D1]]] [1, 1]
func.func @open_ends(%x: tensor<?x?xf32, #mdl.device<cpu>>) -> tensor<?x?xf32, #mdl.device<cpu>> {
  %0 = mdl.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 9223372036854775807, 9223372036854775807>, steps = array<i64: 1, 1>, index_dims = array<i64>} : tensor<?x?xf32, #mdl.device<cpu>> -> tensor<?x?xf32, #mdl.device<cpu>>
  return %0 : tensor<?x?xf32, #mdl.device<cpu>>
}

// x[:, :4]: dim 0 whole, dim 1 from 0 to a clamped 4 (its size is that end).
// CHECK-LABEL: func.func @prefix(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?xf32>
// CHECK: %[[D0:.*]] = tensor.dim %[[X]]
// CHECK: %[[END:.*]] = arith.minsi
// CHECK-NOT: arith.ceildivsi
// CHECK: tensor.extract_slice %[[X]][0, 0] [%[[D0]], %[[END]]] [1, 1]
func.func @prefix(%x: tensor<?x?xf32, #mdl.device<cpu>>) -> tensor<?x?xf32, #mdl.device<cpu>> {
  %0 = mdl.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 9223372036854775807, 4>, steps = array<i64: 1, 1>, index_dims = array<i64>} : tensor<?x?xf32, #mdl.device<cpu>> -> tensor<?x?xf32, #mdl.device<cpu>>
  return %0 : tensor<?x?xf32, #mdl.device<cpu>>
}
