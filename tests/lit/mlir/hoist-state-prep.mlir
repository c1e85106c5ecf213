// What an entry fn computes from its state arguments alone moves into
// <fn>_prepare, run once per bound weights; the fn takes the results after
// the state and before its inputs. Views of the state stay where they are
// read, as do constants and whatever reads an input. The state and prepared
// arguments are marked `mdl.state` (the same values on every call), even
// when nothing is prepared.
// RUN: %modelc-opt %s --split-input-file "--mdl-hoist-state-prep=fn=forward state-args=3" | FileCheck %s

!x = tensor<?x8x16x16xf32, #mdl.device<cpu>>
!y = tensor<?x4x16x16xf32, #mdl.device<cpu>>
!w = tensor<4x8x3x3xf32, #mdl.device<cpu>>
!c = tensor<4xf32, #mdl.device<cpu>>
!s = tensor<f32, #mdl.device<cpu>>

// A batch norm folded into a conv: the scaled weights and the shift are
// prepared; the conv reads them as arguments 3 and 4.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x8x3x3xf32, #mdl.device<cpu>> {mdl.state}, %[[VAR:[a-z0-9]+]]: tensor<4xf32, #mdl.device<cpu>> {mdl.state}, %[[MEAN:[a-z0-9]+]]: tensor<4xf32, #mdl.device<cpu>> {mdl.state},
// CHECK-SAME: %[[PW:[a-z0-9]+]]: tensor<4x8x3x3xf32, #mdl.device<cpu>> {bufferization.writable = false, mdl.state}, %[[PB:[a-z0-9]+]]: tensor<4xf32, #mdl.device<cpu>> {bufferization.writable = false, mdl.state},
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x8x16x16xf32, #mdl.device<cpu>>)
// CHECK-NEXT: %[[Y:.*]] = mdl.conv2d %[[X]], %[[PW]], %[[PB]]
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func @forward_prepare(%[[W2:[a-z0-9]+]]: tensor<4x8x3x3xf32{{.*}}, %[[VAR2:[a-z0-9]+]]: {{.*}}, %[[MEAN2:[a-z0-9]+]]: {{.*}}) -> (tensor<4x8x3x3xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>>)
// CHECK: %[[EPS:.*]] = mdl.full {value = 1.000000e-05 : f64}
// CHECK: %[[VE:.*]] = mdl.add %[[VAR2]], %[[EPS]]
// CHECK: %[[S:.*]] = mdl.sqrt %[[VE]]
// CHECK: %[[COL:.*]] = mdl.reshape %[[S]]
// CHECK: %[[WS:.*]] = mdl.mul %[[W2]], %[[COL]]
// CHECK: %[[SH:.*]] = mdl.mul %[[MEAN2]], %[[S]]
// CHECK: return %[[WS]], %[[SH]]
func.func @forward(%w: !w, %var: !c, %mean: !c, %x: !x) -> !y {
  %eps = mdl.full {value = 1.0e-05 : f64} : !s
  %ve = mdl.add %var, %eps : !c, !s -> !c
  %s = mdl.sqrt %ve : !c
  %col = mdl.reshape %s : !c -> tensor<4x1x1x1xf32, #mdl.device<cpu>>
  %ws = mdl.mul %w, %col : !w, tensor<4x1x1x1xf32, #mdl.device<cpu>> -> !w
  %shift = mdl.mul %mean, %s : !c, !c -> !c
  %y = mdl.conv2d %x, %ws, %shift {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!x, !w, !c) -> !y
  return %y : !y
}

// -----

// A linear layer reads its weight through a transpose: nothing to prepare.
// A constant stays too, and so does the product with the input.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x8xf32, #mdl.device<cpu>> {mdl.state}, %[[B:[a-z0-9]+]]: {{.*}}, %[[U:[a-z0-9]+]]: {{.*}}, %[[X:[a-z0-9]+]]: tensor<?x8xf32, #mdl.device<cpu>>)
// CHECK-NEXT: %[[T:.*]] = mdl.transpose %[[W]]
// CHECK-NEXT: %[[M:.*]] = mdl.matmul %[[X]], %[[T]]
// CHECK-NEXT: %[[TWO:.*]] = mdl.full
// CHECK-NEXT: %[[Y:.*]] = mdl.mul %[[M]], %[[TWO]]
// CHECK-NEXT: %[[Z:.*]] = mdl.add %[[Y]], %[[B]]
// CHECK-NEXT: return %[[Z]]
// CHECK-NOT: forward_prepare
func.func @forward(%w: tensor<4x8xf32, #mdl.device<cpu>>, %b: tensor<4xf32, #mdl.device<cpu>>, %unused: tensor<4xf32, #mdl.device<cpu>>, %x: tensor<?x8xf32, #mdl.device<cpu>>) -> tensor<?x4xf32, #mdl.device<cpu>> {
  %t = mdl.transpose %w {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<4x8xf32, #mdl.device<cpu>> -> tensor<8x4xf32, #mdl.device<cpu>>
  %m = mdl.matmul %x, %t : tensor<?x8xf32, #mdl.device<cpu>>, tensor<8x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %two = mdl.full {value = 2.0 : f64} : tensor<f32, #mdl.device<cpu>>
  %y = mdl.mul %m, %two : tensor<?x4xf32, #mdl.device<cpu>>, tensor<f32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %z = mdl.add %y, %b : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  return %z : tensor<?x4xf32, #mdl.device<cpu>>
}

// -----

// The sum of two biases (an LSTM's b_ih + b_hh) is prepared, the transpose
// of the prepared product stays a view in the fn, and a state value that is
// read by another prepared value and by the fn is prepared once.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x4xf32{{.*}}, %[[B1:[a-z0-9]+]]: {{.*}}, %[[B2:[a-z0-9]+]]: {{.*}}, %[[PB:[a-z0-9]+]]: tensor<4xf32{{.*}}, %[[PW:[a-z0-9]+]]: tensor<4x4xf32{{.*}}, %[[X:[a-z0-9]+]]: tensor<?x4xf32
// CHECK-NEXT: %[[T:.*]] = mdl.transpose %[[PW]]
// CHECK-NEXT: %[[M:.*]] = mdl.matmul %[[X]], %[[T]]
// CHECK-NEXT: %[[Y:.*]] = mdl.add %[[M]], %[[PB]]
// CHECK: func.func @forward_prepare(
// CHECK: %[[SUM:.*]] = mdl.add
// CHECK: %[[SCALED:.*]] = mdl.mul
// CHECK: return %[[SUM]], %[[SCALED]]
func.func @forward(%w: tensor<4x4xf32, #mdl.device<cpu>>, %b1: tensor<4xf32, #mdl.device<cpu>>, %b2: tensor<4xf32, #mdl.device<cpu>>, %x: tensor<?x4xf32, #mdl.device<cpu>>) -> tensor<?x4xf32, #mdl.device<cpu>> {
  %bias = mdl.add %b1, %b2 : tensor<4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<4xf32, #mdl.device<cpu>>
  %scaled = mdl.mul %w, %bias : tensor<4x4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<4x4xf32, #mdl.device<cpu>>
  %t = mdl.transpose %scaled {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<4x4xf32, #mdl.device<cpu>> -> tensor<4x4xf32, #mdl.device<cpu>>
  %m = mdl.matmul %x, %t : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %y = mdl.add %m, %bias : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  return %y : tensor<?x4xf32, #mdl.device<cpu>>
}
