// A batch norm that is a conv's only user folds into the conv: the weights
// are scaled per output channel by weight / sqrt(var + eps) and the shift
// (bias - mean) * scale + beta becomes the conv's bias, as PyTorch's
// fuse_conv_bn_eval does. Anything else keeps its batch norm.
// RUN: %modelc-opt %s --mdl-fold-batch-norm | FileCheck %s

!x = tensor<?x8x16x16xf32, #mdl.device<cpu>>
!y = tensor<?x4x16x16xf32, #mdl.device<cpu>>
!w = tensor<4x8x3x3xf32, #mdl.device<cpu>>
!c = tensor<4xf32, #mdl.device<cpu>>

// CHECK-LABEL: func.func @affine(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x8x16x16xf32{{.*}}>, %[[W:[a-z0-9]+]]: tensor<4x8x3x3xf32{{.*}}>, %[[MEAN:[a-z0-9]+]]: {{.*}}, %[[VAR:[a-z0-9]+]]: {{.*}}, %[[G:[a-z0-9]+]]: {{.*}}, %[[BETA:[a-z0-9]+]]: {{.*}})
// CHECK: %[[EPS:.*]] = mdl.full {value = 1.000000e-03 : f64}
// CHECK: %[[VE:.*]] = mdl.add %[[VAR]], %[[EPS]]
// CHECK: %[[ROOT:.*]] = mdl.sqrt %[[VE]]
// CHECK: %[[S:.*]] = mdl.div %[[G]], %[[ROOT]]
// CHECK: %[[COL:.*]] = mdl.reshape %[[S]] {{.*}} -> tensor<4x1x1x1xf32
// CHECK: %[[WS:.*]] = mdl.mul %[[W]], %[[COL]]
// CHECK: %[[NEG:.*]] = mdl.neg %[[MEAN]]
// CHECK: %[[SH:.*]] = mdl.mul %[[NEG]], %[[S]]
// CHECK: %[[B:.*]] = mdl.add %[[SH]], %[[BETA]]
// CHECK: %[[Y:.*]] = mdl.conv2d %[[X]], %[[WS]], %[[B]] {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
// CHECK-NOT: mdl.batch_norm
// CHECK: return %[[Y]]
func.func @affine(%x: !x, %w: !w, %mean: !c, %var: !c, %g: !c, %beta: !c) -> !y {
  %0 = mdl.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!x, !w) -> !y
  %1 = mdl.batch_norm %0, %mean, %var weight %g bias %beta {epsilon = 1.0e-03 : f64} : (!y, !c, !c, !c, !c) -> !y
  return %1 : !y
}

// A conv bias is centred by the mean; without the norm's weight the scale
// is 1 / sqrt(var + eps).
// CHECK-LABEL: func.func @conv_bias_no_affine(
// CHECK-SAME: %[[X:[a-z0-9]+]]: {{.*}}, %[[W:[a-z0-9]+]]: {{.*}}, %[[CB:[a-z0-9]+]]: {{.*}}, %[[MEAN:[a-z0-9]+]]: {{.*}}, %[[VAR:[a-z0-9]+]]: {{.*}})
// CHECK: %[[ONE:.*]] = mdl.full {value = 1.000000e+00 : f64}
// CHECK: %[[S:.*]] = mdl.div %[[ONE]], %{{.*}}
// CHECK: %[[WS:.*]] = mdl.mul %[[W]], %{{.*}}
// CHECK: %[[C:.*]] = mdl.sub %[[CB]], %[[MEAN]]
// CHECK: %[[SH:.*]] = mdl.mul %[[C]], %[[S]]
// CHECK-NOT: mdl.add %[[SH]]
// CHECK: mdl.conv2d %[[X]], %[[WS]], %[[SH]]
// CHECK-NOT: mdl.batch_norm
func.func @conv_bias_no_affine(%x: !x, %w: !w, %cb: !c, %mean: !c, %var: !c) -> !y {
  %0 = mdl.conv2d %x, %w, %cb {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!x, !w, !c) -> !y
  %1 = mdl.batch_norm %0, %mean, %var {epsilon = 1.0e-05 : f64} : (!y, !c, !c) -> !y
  return %1 : !y
}

// The conv's output is also read elsewhere: both stay.
// CHECK-LABEL: func.func @shared(
// CHECK: mdl.conv2d
// CHECK: mdl.batch_norm
func.func @shared(%x: !x, %w: !w, %mean: !c, %var: !c) -> (!y, !y) {
  %0 = mdl.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!x, !w) -> !y
  %1 = mdl.batch_norm %0, %mean, %var {epsilon = 1.0e-05 : f64} : (!y, !c, !c) -> !y
  return %0, %1 : !y, !y
}

// Not after a conv: stays.
// CHECK-LABEL: func.func @alone(
// CHECK: mdl.batch_norm
func.func @alone(%y: !y, %mean: !c, %var: !c) -> !y {
  %1 = mdl.batch_norm %y, %mean, %var {epsilon = 1.0e-05 : f64} : (!y, !c, !c) -> !y
  return %1 : !y
}

// Half precision keeps its own rounding: stays.
// CHECK-LABEL: func.func @half(
// CHECK: mdl.conv2d
// CHECK: mdl.batch_norm
func.func @half(%x: tensor<1x8x4x4xf16, #mdl.device<cpu>>, %w: tensor<4x8x1x1xf16, #mdl.device<cpu>>, %mean: tensor<4xf16, #mdl.device<cpu>>, %var: tensor<4xf16, #mdl.device<cpu>>) -> tensor<1x4x4x4xf16, #mdl.device<cpu>> {
  %0 = mdl.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x4x4xf16, #mdl.device<cpu>>, tensor<4x8x1x1xf16, #mdl.device<cpu>>) -> tensor<1x4x4x4xf16, #mdl.device<cpu>>
  %1 = mdl.batch_norm %0, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<1x4x4x4xf16, #mdl.device<cpu>>, tensor<4xf16, #mdl.device<cpu>>, tensor<4xf16, #mdl.device<cpu>>) -> tensor<1x4x4x4xf16, #mdl.device<cpu>>
  return %1 : tensor<1x4x4x4xf16, #mdl.device<cpu>>
}
