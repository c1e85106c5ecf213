// The float arithmetic of a reduction is flagged reassoc, so that LLVM's loop
// vectorizer keeps partial sums (a row sum ran one element per FP-add
// latency); an elementwise loop keeps its exact order.
// RUN: %modelc-opt %s --mdl-reassociate-reductions | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// CHECK-LABEL: func.func @row_sum_of_squares(
// CHECK: linalg.generic
// CHECK: arith.mulf {{.*}} fastmath<reassoc>
// CHECK: arith.addf {{.*}} fastmath<reassoc>
func.func @row_sum_of_squares(%x: tensor<8x256xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %out : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Flags already there are kept.
// CHECK-LABEL: func.func @row_max(
// CHECK: arith.maximumf {{.*}} fastmath<reassoc,nnan>
func.func @row_max(%x: tensor<8x256xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x256xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out fastmath<nnan> : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// CHECK-LABEL: func.func @elementwise(
// CHECK: arith.addf
// CHECK-NOT: fastmath
// CHECK: linalg.yield
func.func @elementwise(%x: tensor<8x256xf32>, %y: tensor<8x256xf32>) -> tensor<8x256xf32> {
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x256xf32>) outs(%y : tensor<8x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<8x256xf32>
  return %0 : tensor<8x256xf32>
}
