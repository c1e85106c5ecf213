// A conv with padding, bias and ReLU is one runtime call: the unpadded
// input with padding 2 for the primitive, the bias as its bias (flags 2:
// overwrite, bias), ReLU as a post-op (activations 2). No padded copy, bias
// broadcast or ReLU loop remains. When an unpadded max pool is the only
// reader of the result, it folds too: modelc_conv2d_pool writes the pooled
// buffer (pool kernel 2x2, stride 2x2) and the full-size output is never
// allocated.
// RUN: %modelc-opt %s --pass-pipeline='builtin.module(mdl-to-linalg,func.func(canonicalize,mdl-fuse-elementwise,canonicalize),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,mdl-conv-to-runtime,cse)' | FileCheck %s

!x = tensor<?x1x28x28xf32, #mdl.device<cpu>>
!y = tensor<?x6x28x28xf32, #mdl.device<cpu>>
!p = tensor<?x6x14x14xf32, #mdl.device<cpu>>
!w = tensor<6x1x5x5xf32, #mdl.device<cpu>>
!b = tensor<6xf32, #mdl.device<cpu>>

// CHECK-LABEL: func.func @conv_bias_relu_pool(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x1x28x28xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.map
// CHECK-NOT: linalg.conv
// CHECK: %[[IN:.*]] = memref.cast %[[X]] : memref<?x1x28x28xf32> to memref<*xf32>
// CHECK: %[[C2:.*]] = arith.constant 2 : i64
// CHECK-NOT: memref.alloc({{.*}}) {{.*}} : memref<?x6x28x28xf32>
// CHECK: call @modelc_conv2d_pool(%[[IN]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C2]], %[[C2]], %{{.*}}, %{{.*}}, %[[C2]], %[[C2]], %[[C2]], %[[C2]], %[[C2]], %[[C2]])
// CHECK-NOT: linalg.generic
// CHECK-NOT: arith.maximumf
// CHECK: return
func.func @conv_bias_relu_pool(%x: !x, %w: !w, %b: !b) -> !p {
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w, !b) -> !y
  %1 = mdl.relu %0 : !y
  %2 = mdl.max_pool2d %1 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : !y -> !p
  return %2 : !p
}

// Without bias or activation: a zero-filled output is overwritten (flags 0,
// no activations), padding 0.
// CHECK-LABEL: func.func @conv_plain(
// CHECK-NOT: linalg.fill
// CHECK: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: call @modelc_conv2d_epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[C0]], %[[C0]], %{{.*}}, %{{.*}}, %[[C0]], %[[C0]])
func.func @conv_plain(%x: !x, %w: !w) -> tensor<?x6x24x24xf32, #mdl.device<cpu>> {
  %0 = mdl.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w) -> tensor<?x6x24x24xf32, #mdl.device<cpu>>
  return %0 : tensor<?x6x24x24xf32, #mdl.device<cpu>>
}

// The activation's result is also returned: the pool cannot take the place
// of the only reader, so the conv call writes it and the pool loop stays.
// CHECK-LABEL: func.func @conv_relu_pool_both_used(
// CHECK: call @modelc_conv2d_epilogue(
// CHECK-NOT: modelc_conv2d_pool
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @conv_relu_pool_both_used(%x: !x, %w: !w, %b: !b) -> (!y, !p) {
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w, !b) -> !y
  %1 = mdl.relu %0 : !y
  %2 = mdl.max_pool2d %1 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : !y -> !p
  return %1, %2 : !y, !p
}

// A padded pool reads a padded copy, not the conv's output: it stays a loop.
// CHECK-LABEL: func.func @conv_padded_pool(
// CHECK: call @modelc_conv2d_epilogue(
// CHECK-NOT: modelc_conv2d_pool
// CHECK: arith.maximumf
func.func @conv_padded_pool(%x: !x, %w: !w, %b: !b) -> tensor<?x6x15x15xf32, #mdl.device<cpu>> {
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1} : (!x, !w, !b) -> !y
  %1 = mdl.max_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : !y -> tensor<?x6x15x15xf32, #mdl.device<cpu>>
  return %1 : tensor<?x6x15x15xf32, #mdl.device<cpu>>
}

// Symbolic H and W (the embedding API keeps them dynamic): the padded copy
// still folds, its extents being `affine.apply (s0 + 2)` of the input's.
// CHECK-LABEL: func.func @conv_dynamic_extents(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x4x?x?xf32>
// CHECK-NOT: memref.copy
// CHECK: %[[IN:.*]] = memref.cast %[[X]] : memref<?x4x?x?xf32> to memref<*xf32>
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: call @modelc_conv2d_epilogue(%[[IN]], %{{.*}}, %{{.*}}, %{{.*}}, %[[C1]], %[[C1]], %[[C1]], %[[C1]],
func.func @conv_dynamic_extents(%x: tensor<?x4x?x?xf32, #mdl.device<cpu>>, %w: tensor<8x4x3x3xf32, #mdl.device<cpu>>) -> tensor<?x8x?x?xf32, #mdl.device<cpu>> {
  %0 = mdl.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<?x4x?x?xf32, #mdl.device<cpu>>, tensor<8x4x3x3xf32, #mdl.device<cpu>>) -> tensor<?x8x?x?xf32, #mdl.device<cpu>>
  %1 = mdl.relu %0 : tensor<?x8x?x?xf32, #mdl.device<cpu>>
  return %1 : tensor<?x8x?x?xf32, #mdl.device<cpu>>
}

// The second conv reads the first's activation: its padded copy's extents
// are those of the first conv's output expression, and fold as well.
// CHECK-LABEL: func.func @conv_chain_dynamic_extents(
// CHECK-NOT: memref.copy
// CHECK: call @modelc_conv2d_epilogue(
// CHECK-NOT: memref.copy
// CHECK: call @modelc_conv2d_epilogue(
// CHECK: return
func.func @conv_chain_dynamic_extents(%x: tensor<?x4x?x?xf32, #mdl.device<cpu>>, %w: tensor<8x4x3x3xf32, #mdl.device<cpu>>, %w2: tensor<8x8x3x3xf32, #mdl.device<cpu>>) -> tensor<?x8x?x?xf32, #mdl.device<cpu>> {
  %0 = mdl.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<?x4x?x?xf32, #mdl.device<cpu>>, tensor<8x4x3x3xf32, #mdl.device<cpu>>) -> tensor<?x8x?x?xf32, #mdl.device<cpu>>
  %1 = mdl.relu %0 : tensor<?x8x?x?xf32, #mdl.device<cpu>>
  %2 = mdl.conv2d %1, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<?x8x?x?xf32, #mdl.device<cpu>>, tensor<8x8x3x3xf32, #mdl.device<cpu>>) -> tensor<?x8x?x?xf32, #mdl.device<cpu>>
  return %2 : tensor<?x8x?x?xf32, #mdl.device<cpu>>
}

// Weights that are a state argument (`mdl.state`, marked by
// mdl-hoist-state-prep), directly or through a view, are the same on every
// call: flags 16 lets the runtime keep their copy in oneDNN's layout. An
// input's weights are not.
// CHECK-LABEL: func.func @state_weights(
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i64
// CHECK: call @modelc_conv2d_epilogue({{.*}}, %[[C16]], %[[C0]])
// CHECK: call @modelc_conv2d_epilogue({{.*}}, %[[C0]], %[[C0]])
// CHECK: return
func.func @state_weights(%w: tensor<6x8x3x3xf32, #mdl.device<cpu>> {mdl.state}, %x: tensor<?x8x10x10xf32, #mdl.device<cpu>>, %w2: tensor<6x6x1x1xf32, #mdl.device<cpu>>) -> tensor<?x6x8x8xf32, #mdl.device<cpu>> {
  %0 = mdl.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<?x8x10x10xf32, #mdl.device<cpu>>, tensor<6x8x3x3xf32, #mdl.device<cpu>>) -> tensor<?x6x8x8xf32, #mdl.device<cpu>>
  %1 = mdl.conv2d %0, %w2 {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1} : (tensor<?x6x8x8xf32, #mdl.device<cpu>>, tensor<6x6x1x1xf32, #mdl.device<cpu>>) -> tensor<?x6x8x8xf32, #mdl.device<cpu>>
  return %1 : tensor<?x6x8x8xf32, #mdl.device<cpu>>
}
