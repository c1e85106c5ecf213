// A result allocated in the fn and copied into its out-parameter at the end
// (a dynamic shape, which buffer-results-to-out-params leaves so) is
// computed in the out-parameter: no buffer, no copy.
// RUN: %modelc-opt %s --split-input-file --mdl-results-in-place | FileCheck %s

// CHECK-LABEL: func.func @dynamic_result(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<?x4xf32>, %[[OUT:[a-z0-9]+]]: memref<?x4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%[[X]] : memref<?x4xf32>) outs(%[[OUT]] : memref<?x4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @dynamic_result(%x: memref<?x4xf32>, %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x4xf32>
  %r = memref.alloc(%d) : memref<?x4xf32>
  linalg.copy ins(%x : memref<?x4xf32>) outs(%r : memref<?x4xf32>)
  memref.copy %r, %out : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// A buffer of a more static type reads the out-parameter through a cast.
// CHECK-LABEL: func.func @static_buffer(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x4xf32>, %[[OUT:[a-z0-9]+]]: memref<?x4xf32>)
// CHECK: %[[CAST:.*]] = memref.cast %[[OUT]] : memref<?x4xf32> to memref<2x4xf32>
// CHECK: linalg.copy ins(%[[X]] : memref<2x4xf32>) outs(%[[CAST]] : memref<2x4xf32>)
// CHECK-NOT: memref.copy
func.func @static_buffer(%x: memref<2x4xf32>, %out: memref<?x4xf32>) {
  %r = memref.alloc() : memref<2x4xf32>
  linalg.copy ins(%x : memref<2x4xf32>) outs(%r : memref<2x4xf32>)
  %c = memref.cast %r : memref<2x4xf32> to memref<?x4xf32>
  memref.copy %c, %out : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// The buffer is read after the copy, or the out-parameter is read before
// it: both keep their copy.
// CHECK-LABEL: func.func @read_after_copy(
// CHECK: %[[R:.*]] = memref.alloc
// CHECK: memref.copy %[[R]], %{{.*}}
// CHECK: linalg.copy ins(%[[R]]
func.func @read_after_copy(%x: memref<?x4xf32>, %out: memref<?x4xf32>, %out2: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x4xf32>
  %r = memref.alloc(%d) : memref<?x4xf32>
  linalg.copy ins(%x : memref<?x4xf32>) outs(%r : memref<?x4xf32>)
  memref.copy %r, %out : memref<?x4xf32> to memref<?x4xf32>
  linalg.copy ins(%r : memref<?x4xf32>) outs(%out2 : memref<?x4xf32>)
  return
}

// CHECK-LABEL: func.func @out_read_before(
// CHECK: %[[R:.*]] = memref.alloc
// CHECK: memref.copy %[[R]], %{{.*}}
func.func @out_read_before(%x: memref<?x4xf32>, %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %d = memref.dim %x, %c0 : memref<?x4xf32>
  %r = memref.alloc(%d) : memref<?x4xf32>
  linalg.copy ins(%out : memref<?x4xf32>) outs(%r : memref<?x4xf32>)
  memref.copy %r, %out : memref<?x4xf32> to memref<?x4xf32>
  return
}
