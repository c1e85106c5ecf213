// The cpu lowering computes a transcendental once per value it depends on:
// softmax takes one exp per element (exp(x - max) / sum, not
// exp(x - max - log(sum)) with a second exp in the sum); log_softmax's log,
// layer_norm's rsqrt and batch_norm's rsqrt run once per row or channel, in
// loops of their own, because elementwise fusion does not pull a producer
// into a consumer that reads it through a broadcasting map.
// RUN: %modelc-opt %s --pass-pipeline='builtin.module(mdl-to-linalg,func.func(canonicalize,mdl-fuse-elementwise))' | FileCheck %s

!x = tensor<8x64x256xf32, #mdl.device<cpu>>
!v = tensor<256xf32, #mdl.device<cpu>>

// CHECK-LABEL: func.func @soft(
// CHECK: math.exp
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK: return
func.func @soft(%x: !x) -> !x {
  %0 = mdl.softmax %x {dim = 2} : !x
  return %0 : !x
}

// CHECK-LABEL: func.func @logsoft(
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64x1xf32>) outs(%{{.*}} : tensor<8x64x1xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.log
// CHECK-NOT: math.
// CHECK: return
func.func @logsoft(%x: !x) -> !x {
  %0 = mdl.log_softmax %x {dim = 2} : !x
  return %0 : !x
}

// CHECK-LABEL: func.func @norm(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8x64x1xf32>) outs(%{{.*}} : tensor<8x64x1xf32>)
// CHECK: math.rsqrt
// CHECK-NOT: math.
// CHECK: return
func.func @norm(%x: !x, %w: !v, %b: !v) -> !x {
  %0 = mdl.layer_norm %x weight %w bias %b {normalized_rank = 1, epsilon = 1.0e-5} : (!x, !v, !v) -> !x
  return %0 : !x
}

// CHECK-LABEL: func.func @bn(
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<16{{(x1)*}}xf32>) outs(%{{.*}} : tensor<16{{(x1)*}}xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.rsqrt
// CHECK-NOT: math.
// CHECK: return
func.func @bn(%a: tensor<4x16x8x8xf32, #mdl.device<cpu>>, %m: tensor<16xf32, #mdl.device<cpu>>,
              %v: tensor<16xf32, #mdl.device<cpu>>) -> tensor<4x16x8x8xf32, #mdl.device<cpu>> {
  %0 = mdl.batch_norm %a, %m, %v {epsilon = 1.0e-5} : (tensor<4x16x8x8xf32, #mdl.device<cpu>>, tensor<16xf32, #mdl.device<cpu>>, tensor<16xf32, #mdl.device<cpu>>) -> tensor<4x16x8x8xf32, #mdl.device<cpu>>
  return %0 : tensor<4x16x8x8xf32, #mdl.device<cpu>>
}
