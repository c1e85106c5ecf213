// mdl-conv-to-runtime keeps a tensor in oneDNN's nChw16c layout between the
// convs that share it (flags, jit/ConvRuntime.h: 2 bias, 4 input blocked,
// 8 output blocked): a conv whose output only another conv reads writes it
// blocked and the reader takes it so, and an input that several convs read
// is reordered once (modelc_to_blocked16). Not when anything else reads the
// tensor, or when its channels are not a multiple of 16.
// RUN: %modelc-opt %s --pass-pipeline='builtin.module(mdl-to-linalg,func.func(canonicalize,mdl-fuse-elementwise,canonicalize),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,mdl-conv-to-runtime,cse)' | FileCheck %s

!x = tensor<?x16x9x9xf32, #mdl.device<cpu>>
!h = tensor<?x32x9x9xf32, #mdl.device<cpu>>
!w1 = tensor<32x16x3x3xf32, #mdl.device<cpu>>
!w2 = tensor<16x32x3x3xf32, #mdl.device<cpu>>
!b = tensor<32xf32, #mdl.device<cpu>>

// conv1 (bias, ReLU) -> conv2: the intermediate stays blocked.
// CHECK-LABEL: func.func @chain(
// CHECK-NOT: modelc_to_blocked16
// CHECK: %[[MID:.*]] = memref.cast %{{.*}} : memref<?x32x9x9xf32> to memref<*xf32>
// CHECK: %[[C10:.*]] = arith.constant 10 : i64
// CHECK: call @modelc_conv2d_epilogue(%{{[^,]*}}, %{{[^,]*}}, %[[MID]], {{.*}}, %[[C10]], %{{[^,]*}})
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: call @modelc_conv2d_epilogue(%[[MID]], {{.*}}, %[[C4]], %{{[^,]*}})
func.func @chain(%x: !x, %w1: !w1, %b1: !b, %w2: !w2) -> !x {
  %0 = mdl.conv2d %x, %w1, %b1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w1, !b) -> !h
  %1 = mdl.relu %0 : !h
  %2 = mdl.conv2d %1, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!h, !w2) -> !x
  return %2 : !x
}

// Two convs read x: one reorder into a buffer both read blocked (flags 6:
// bias and blocked input).
// CHECK-LABEL: func.func @shared_input(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x16x9x9xf32>
// CHECK: %[[BUF:.*]] = memref.alloc(%{{.*}}) {alignment = 64 : i64} : memref<?x16x9x9xf32>
// CHECK: %[[BLOCKED:.*]] = memref.cast %[[BUF]] : memref<?x16x9x9xf32> to memref<*xf32>
// CHECK: %[[PLAIN:.*]] = memref.cast %[[X]] : memref<?x16x9x9xf32> to memref<*xf32>
// CHECK: call @modelc_to_blocked16(%[[PLAIN]], %[[BLOCKED]])
// CHECK: %[[C6:.*]] = arith.constant 6 : i64
// CHECK: call @modelc_conv2d_epilogue(%[[BLOCKED]], {{.*}}, %[[C6]], %{{[^,]*}})
// CHECK: call @modelc_conv2d_epilogue(%[[BLOCKED]], {{.*}}, %[[C6]], %{{[^,]*}})
func.func @shared_input(%x: !x, %w1: !w1, %b1: !b, %w3: !w1) -> (!h, !h) {
  %0 = mdl.conv2d %x, %w1, %b1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w1, !b) -> !h
  %1 = mdl.conv2d %x, %w3, %b1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w1, !b) -> !h
  return %0, %1 : !h, !h
}

// The intermediate is also returned: it stays NCHW (flags 2 and 0).
// CHECK-LABEL: func.func @also_returned(
// CHECK-NOT: arith.constant 10 : i64
// CHECK-NOT: arith.constant 4 : i64
// CHECK: return
func.func @also_returned(%x: !x, %w1: !w1, %b1: !b, %w2: !w2) -> (!h, !x) {
  %0 = mdl.conv2d %x, %w1, %b1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w1, !b) -> !h
  %1 = mdl.conv2d %0, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!h, !w2) -> !x
  return %0, %1 : !h, !x
}

// Eight channels between the convs: nChw16c would pad them; NCHW it is.
// CHECK-LABEL: func.func @eight_channels(
// CHECK-NOT: arith.constant 8 : i64
// CHECK-NOT: arith.constant 4 : i64
// CHECK: return
func.func @eight_channels(%x: !x, %w1: tensor<8x16x3x3xf32, #mdl.device<cpu>>, %w2: tensor<16x8x3x3xf32, #mdl.device<cpu>>) -> !x {
  %0 = mdl.conv2d %x, %w1 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (!x, tensor<8x16x3x3xf32, #mdl.device<cpu>>) -> tensor<?x8x9x9xf32, #mdl.device<cpu>>
  %1 = mdl.conv2d %0, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<?x8x9x9xf32, #mdl.device<cpu>>, tensor<16x8x3x3xf32, #mdl.device<cpu>>) -> !x
  return %1 : !x
}
