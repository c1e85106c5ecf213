// Round trip of every mdl op: print, re-parse, print again.
// RUN: %modelc-opt %s | %modelc-opt | FileCheck %s

!x = tensor<?x4xf32, #mdl.device<cpu>>
!g = tensor<2x4xf32, #mdl.device<cuda:1>>

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: !x, %b: tensor<4xf32, #mdl.device<cpu>>, %c: tensor<?x4xi1, #mdl.device<cpu>>) -> !x {
  // CHECK: mdl.add %{{.*}}, %{{.*}} : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %0 = mdl.add %a, %b : !x, tensor<4xf32, #mdl.device<cpu>> -> !x
  // CHECK: mdl.sub
  %1 = mdl.sub %0, %a : !x, !x -> !x
  // CHECK: mdl.mul
  %2 = mdl.mul %1, %a : !x, !x -> !x
  // CHECK: mdl.div
  %3 = mdl.div %2, %a : !x, !x -> !x
  // CHECK: mdl.pow
  %4 = mdl.pow %3, %a : !x, !x -> !x
  // CHECK: mdl.max
  %5 = mdl.max %4, %a : !x, !x -> !x
  // CHECK: mdl.min
  %6 = mdl.min %5, %a : !x, !x -> !x
  // CHECK: mdl.cmp "lt", %{{.*}}, %{{.*}} : {{.*}} -> tensor<?x4xi1, #mdl.device<cpu>>
  %7 = mdl.cmp "lt", %6, %a : !x, !x -> tensor<?x4xi1, #mdl.device<cpu>>
  // CHECK: mdl.where
  %8 = mdl.where %7, %6, %a : (tensor<?x4xi1, #mdl.device<cpu>>, !x, !x) -> !x
  // CHECK: mdl.relu
  %9 = mdl.relu %8 : !x
  // CHECK: mdl.gelu
  %10 = mdl.gelu %9 : !x
  // CHECK: mdl.silu
  %11 = mdl.silu %10 : !x
  // CHECK: mdl.tanh
  %12 = mdl.tanh %11 : !x
  // CHECK: mdl.sigmoid
  %13 = mdl.sigmoid %12 : !x
  // CHECK: mdl.exp
  %14 = mdl.exp %13 : !x
  // CHECK: mdl.log
  %15 = mdl.log %14 : !x
  // CHECK: mdl.sqrt
  %16 = mdl.sqrt %15 : !x
  // CHECK: mdl.neg
  %17 = mdl.neg %16 : !x
  // CHECK: mdl.abs
  %18 = mdl.abs %17 : !x
  // CHECK: mdl.cast %{{.*}} : tensor<?x4xi1, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %19 = mdl.cast %c : tensor<?x4xi1, #mdl.device<cpu>> -> !x
  %20 = mdl.add %18, %19 : !x, !x -> !x
  return %20 : !x
}

// CHECK-LABEL: func.func @devices
func.func @devices(%a: !g) -> tensor<2x4xf32, #mdl.device<cpu>> {
  // CHECK: mdl.transfer %{{.*}} : tensor<2x4xf32, #mdl.device<cuda:1>> -> tensor<2x4xf32, #mdl.device<cpu>>
  %0 = mdl.transfer %a : !g -> tensor<2x4xf32, #mdl.device<cpu>>
  return %0 : tensor<2x4xf32, #mdl.device<cpu>>
}

// CHECK-LABEL: func.func @linalg_like
func.func @linalg_like(%a: tensor<8x?x16xf32>, %b: tensor<16x32xf32>, %w: tensor<32xf32>,
                       %m: tensor<3xf32>, %img: tensor<2x3x8x8xf32>) {
  // CHECK: mdl.matmul
  %0 = mdl.matmul %a, %b : tensor<8x?x16xf32>, tensor<16x32xf32> -> tensor<8x?x32xf32>
  // CHECK: mdl.sum %{{.*}} {dims = array<i64: 0, 2>, keepdim = true}
  %1 = mdl.sum %0 {dims = array<i64: 0, 2>, keepdim = true} : tensor<8x?x32xf32> -> tensor<1x?x1xf32>
  // CHECK: mdl.mean
  %2 = mdl.mean %0 {dims = array<i64: 1>} : tensor<8x?x32xf32> -> tensor<8x32xf32>
  // CHECK: mdl.reduce_max
  %3 = mdl.reduce_max %0 {dims = array<i64: 2>} : tensor<8x?x32xf32> -> tensor<8x?xf32>
  // CHECK: mdl.softmax %{{.*}} {dim = 2 : i64}
  %4 = mdl.softmax %0 {dim = 2} : tensor<8x?x32xf32>
  // CHECK: mdl.log_softmax
  %5 = mdl.log_softmax %0 {dim = 1} : tensor<8x?x32xf32>
  // CHECK: mdl.layer_norm %{{.*}} weight %{{.*}} bias %{{.*}} {epsilon = 1.000000e-05 : f64, normalized_rank = 1 : i64}
  %6 = mdl.layer_norm %0 weight %w bias %w {normalized_rank = 1, epsilon = 1.0e-5}
      : (tensor<8x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<8x?x32xf32>
  // CHECK: mdl.layer_norm %{{.*}} {epsilon
  %7 = mdl.layer_norm %0 {normalized_rank = 2, epsilon = 1.0e-5} : (tensor<8x?x32xf32>) -> tensor<8x?x32xf32>
  // CHECK: mdl.batch_norm %{{.*}}, %{{.*}}, %{{.*}} weight %{{.*}} bias
  %8 = mdl.batch_norm %img, %m, %m weight %m bias %m {epsilon = 1.0e-5}
      : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8x8xf32>
  return
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%a: tensor<?x4x6xf32>, %b: tensor<?x2x6xf32>) {
  // CHECK: mdl.reshape
  %0 = mdl.reshape %a : tensor<?x4x6xf32> -> tensor<?x24xf32>
  // CHECK: mdl.transpose %{{.*}} {dim0 = 1 : i64, dim1 = 2 : i64}
  %1 = mdl.transpose %a {dim0 = 1, dim1 = 2} : tensor<?x4x6xf32> -> tensor<?x6x4xf32>
  // CHECK: mdl.permute %{{.*}} {permutation = array<i64: 2, 0, 1>}
  %2 = mdl.permute %a {permutation = array<i64: 2, 0, 1>} : tensor<?x4x6xf32> -> tensor<6x?x4xf32>
  // CHECK: mdl.concat %{{.*}}, %{{.*}} {dim = 1 : i64}
  %3 = mdl.concat %a, %b {dim = 1} : (tensor<?x4x6xf32>, tensor<?x2x6xf32>) -> tensor<?x6x6xf32>
  return
}

// CHECK-LABEL: func.func @conv_pool
func.func @conv_pool(%x: tensor<?x3x32x32xf32>, %w: tensor<8x3x5x5xf32>, %b: tensor<8xf32>) {
  // CHECK: mdl.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 2, 2>, stride = array<i64: 1, 1>}
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1}
      : (tensor<?x3x32x32xf32>, tensor<8x3x5x5xf32>, tensor<8xf32>) -> tensor<?x8x32x32xf32>
  // CHECK: mdl.conv2d %{{.*}}, %{{.*}} {
  %1 = mdl.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1}
      : (tensor<?x3x32x32xf32>, tensor<8x3x5x5xf32>) -> tensor<?x8x14x14xf32>
  // CHECK: mdl.max_pool2d
  %2 = mdl.max_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
      : tensor<?x8x32x32xf32> -> tensor<?x8x16x16xf32>
  // CHECK: mdl.avg_pool2d
  %3 = mdl.avg_pool2d %0 {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>}
      : tensor<?x8x32x32xf32> -> tensor<?x8x32x32xf32>
  // CHECK: mdl.adaptive_avg_pool2d
  %4 = mdl.adaptive_avg_pool2d %0 : tensor<?x8x32x32xf32> -> tensor<?x8x1x1xf32>
  return
}

// CHECK-LABEL: func.func @indexing_and_losses
func.func @indexing_and_losses(%emb: tensor<100x16xf32>, %ids: tensor<?x7xi64>, %x: tensor<?x10xf32>,
                               %t: tensor<?xi64>, %cw: tensor<10xf32>, %g: tensor<?x3xi64>) {
  // CHECK: mdl.embedding
  %0 = mdl.embedding %emb, %ids : (tensor<100x16xf32>, tensor<?x7xi64>) -> tensor<?x7x16xf32>
  // CHECK: mdl.gather %{{.*}}, %{{.*}} {dim = 1 : i64}
  %1 = mdl.gather %x, %g {dim = 1} : (tensor<?x10xf32>, tensor<?x3xi64>) -> tensor<?x3xf32>
  // CHECK: mdl.index_select
  %2 = mdl.index_select %x, %t {dim = 0} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x10xf32>
  // CHECK: mdl.cross_entropy %{{.*}}, %{{.*}} weight %{{.*}} :
  %3 = mdl.cross_entropy %x, %t weight %cw : (tensor<?x10xf32>, tensor<?xi64>, tensor<10xf32>) -> tensor<f32>
  // CHECK: mdl.nll_loss %{{.*}}, %{{.*}} {reduction = "none"}
  %4 = mdl.nll_loss %x, %t {reduction = "none"} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?xf32>
  return
}

// CHECK-LABEL: func.func @creation
func.func @creation(%n: index) {
  // CHECK: mdl.zeros(%{{.*}}) : tensor<?x4xf32, #mdl.device<cpu>>
  %0 = mdl.zeros(%n) : tensor<?x4xf32, #mdl.device<cpu>>
  // CHECK: mdl.ones : tensor<2x2xbf16>
  %1 = mdl.ones : tensor<2x2xbf16>
  // CHECK: mdl.full {value = 2.500000e+00 : f64} : tensor<3xf32>
  %2 = mdl.full {value = 2.5} : tensor<3xf32>
  // CHECK: mdl.randn(%{{.*}}) {seed = 42 : i64} : tensor<?x8xf32>
  %3 = mdl.randn(%n) {seed = 42} : tensor<?x8xf32>
  // CHECK: mdl.arange {start = 0.000000e+00 : f64, step = 2.000000e+00 : f64} : tensor<5xi64>
  %4 = mdl.arange {start = 0.0, step = 2.0} : tensor<5xi64>
  // CHECK: mdl.eye : tensor<3x3xf32, #mdl.device<cuda:0>>
  %5 = mdl.eye : tensor<3x3xf32, #mdl.device<cuda:0>>
  return
}
