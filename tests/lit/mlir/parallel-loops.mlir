// Loop nests with enough work run on the OpenMP threads (their outer dims
// shared, the innermost dim a plain loop that vectorizes); small ones, and
// nests that call functions, stay on the calling thread.
// RUN: %modelc-opt %s --convert-linalg-to-parallel-loops --mdl-parallel-loops | FileCheck %s
// RUN: %modelc-opt %s --convert-linalg-to-parallel-loops --mdl-parallel-loops=min-work=0 \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: %modelc-opt %s --mdl-lower-cpu | FileCheck %s --check-prefix=LLVM

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// 1024 x 256 elements, 2 ops each: 524288 >= 131072.
// CHECK-LABEL: func.func @large_static(
// CHECK: scf.parallel (%[[ROW:.*]]) = {{.*}} {
// CHECK-NEXT: scf.for %[[COL:.*]] =
// CHECK: memref.load {{.*}}[%[[ROW]], %[[COL]]]
// CHECK: } {mdl.parallel}
// OFF-LABEL: func.func @large_static(
// OFF-NOT: scf.parallel
// OFF: scf.for
// OFF-NEXT: scf.for
// LLVM-LABEL: llvm.func @large_static(
// LLVM: omp.parallel
// LLVM: omp.wsloop
func.func @large_static(%x: memref<1024x256xf32>, %y: memref<1024x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1024x256xf32>) outs(%y : memref<1024x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  }
  return
}

// 8 x 256: plain loops.
// CHECK-LABEL: func.func @small_static(
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK-NEXT: scf.for
// LLVM-LABEL: llvm.func @small_static(
// LLVM-NOT: omp.
// LLVM: llvm.return
func.func @small_static(%x: memref<8x256xf32>, %y: memref<8x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x256xf32>) outs(%y : memref<8x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  }
  return
}

// Rows known at run time: the nest twice, shared from min-work on. A row
// reduction keeps its inner loop; only the rows are shared.
// CHECK-LABEL: func.func @dynamic_row_sum(
// CHECK: %[[ROWS:.*]] = memref.dim
// CHECK: %[[WORK:.*]] = arith.muli %[[ROWS]]
// CHECK: %[[LARGE:.*]] = arith.cmpi sge, %[[WORK]]
// CHECK: scf.if %[[LARGE]] {
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: } {mdl.parallel}
// CHECK: } else {
// CHECK-NOT: scf.parallel
// CHECK: scf.for
func.func @dynamic_row_sum(%x: memref<?x256xf32>, %acc: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x256xf32>) outs(%acc : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// A body that calls a function (which may keep state) stays serial.
// CHECK-LABEL: func.func @calls(
// CHECK-NOT: scf.parallel
// CHECK-NOT: scf.if
// CHECK: scf.for
func.func private @opaque(f32) -> f32
func.func @calls(%x: memref<1024x256xf32>, %y: memref<1024x256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1024x256xf32>) outs(%y : memref<1024x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = func.call @opaque(%in) : (f32) -> f32
    linalg.yield %d : f32
  }
  return
}
