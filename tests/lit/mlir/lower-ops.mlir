// Every mdl op lowers: to linalg/tensor/arith/math, and on to the LLVM dialect.
// RUN: %modelc-opt %s --mdl-to-linalg | FileCheck %s
// RUN: %modelc-opt %s --mdl-lower-cpu | FileCheck %s --check-prefix=LLVM
// RUN: %modelc-opt %s --mdl-lower-cpu | FileCheck %s --check-prefix=CONV-CALLS
// Without the runtime (--no-blas), convs become loops: no call remains.
// RUN: %modelc-opt %s --mdl-lower-cpu=use-blas=false | FileCheck %s --check-prefix=LOOPS

// LLVM-NOT: mdl.
// LLVM-NOT: linalg.
// LLVM-NOT: func.func
// LLVM: llvm.func @elementwise
// LLVM: llvm.func @reductions
// LLVM: llvm.func @shapes
// LLVM: llvm.func @conv_pool
// LLVM: llvm.func @indexing_and_losses
// LLVM: llvm.func @creation
// Both convs (plain and grouped) call the runtime with stride, padding,
// dilation, flags and activations (lower-conv-epilogue.mlir has the folds).
// CONV-CALLS-COUNT-2: llvm.call @modelc_conv2d_epilogue({{.*}}) : (i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
// CONV-CALLS-NOT: llvm.call @modelc_conv2d
// LOOPS-NOT: modelc_conv2d
// LOOPS: llvm.func @conv_pool
// LOOPS-NOT: modelc_conv2d

// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: mdl.
// CHECK: math.powf
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: math.erf
// CHECK: math.tanh
// CHECK: math.sqrt
// CHECK: math.absf
// CHECK: arith.uitofp
// CHECK: arith.cmpi sgt
// CHECK: math.ipowi
// CHECK: return
func.func @elementwise(%a: tensor<?x4xf32, #mdl.device<cpu>>, %b: tensor<4xf32, #mdl.device<cpu>>,
                       %c: tensor<?x4xi1, #mdl.device<cpu>>, %i: tensor<4xi32, #mdl.device<cpu>>)
    -> (tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xi32, #mdl.device<cpu>>) {
  %0 = mdl.add %a, %b : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %1 = mdl.sub %0, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %2 = mdl.mul %1, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %3 = mdl.div %2, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %4 = mdl.pow %3, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %5 = mdl.max %4, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %6 = mdl.min %5, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %7 = mdl.cmp "lt", %6, %a : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xi1, #mdl.device<cpu>>
  %8 = mdl.where %7, %6, %a : (tensor<?x4xi1, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>>) -> tensor<?x4xf32, #mdl.device<cpu>>
  %9 = mdl.relu %8 : tensor<?x4xf32, #mdl.device<cpu>>
  %10 = mdl.gelu %9 : tensor<?x4xf32, #mdl.device<cpu>>
  %11 = mdl.silu %10 : tensor<?x4xf32, #mdl.device<cpu>>
  %12 = mdl.tanh %11 : tensor<?x4xf32, #mdl.device<cpu>>
  %13 = mdl.sigmoid %12 : tensor<?x4xf32, #mdl.device<cpu>>
  %14 = mdl.exp %13 : tensor<?x4xf32, #mdl.device<cpu>>
  %15 = mdl.log %14 : tensor<?x4xf32, #mdl.device<cpu>>
  %16 = mdl.sqrt %15 : tensor<?x4xf32, #mdl.device<cpu>>
  %17 = mdl.neg %16 : tensor<?x4xf32, #mdl.device<cpu>>
  %18 = mdl.abs %17 : tensor<?x4xf32, #mdl.device<cpu>>
  %19 = mdl.cast %c : tensor<?x4xi1, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %20 = mdl.add %18, %19 : tensor<?x4xf32, #mdl.device<cpu>>, tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %21 = mdl.transfer %20 : tensor<?x4xf32, #mdl.device<cpu>> -> tensor<?x4xf32, #mdl.device<cpu>>
  %22 = mdl.cmp "gt", %i, %i : tensor<4xi32, #mdl.device<cpu>>, tensor<4xi32, #mdl.device<cpu>> -> tensor<4xi1, #mdl.device<cpu>>
  %23 = mdl.pow %i, %i : tensor<4xi32, #mdl.device<cpu>>, tensor<4xi32, #mdl.device<cpu>> -> tensor<4xi32, #mdl.device<cpu>>
  %24 = mdl.relu %23 : tensor<4xi32, #mdl.device<cpu>>
  return %21, %24 : tensor<?x4xf32, #mdl.device<cpu>>, tensor<4xi32, #mdl.device<cpu>>
}

// CHECK-LABEL: func.func @reductions
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: tensor.expand_shape
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: return
func.func @reductions(%a: tensor<8x?x16xf32>, %b: tensor<16x32xf32>, %w: tensor<32xf32>,
                      %m: tensor<3xf32>, %img: tensor<2x3x8x8xf32>, %bb: tensor<1x32x5xf32>)
    -> (tensor<1x?x1xf32>, tensor<8x32xf32>, tensor<8x?xf32>, tensor<8x?x32xf32>, tensor<8x?x32xf32>,
        tensor<8x?x32xf32>, tensor<2x3x8x8xf32>, tensor<8x?x5xf32>) {
  %0 = mdl.matmul %a, %b : tensor<8x?x16xf32>, tensor<16x32xf32> -> tensor<8x?x32xf32>
  %1 = mdl.sum %0 {dims = array<i64: 0, 2>, keepdim = true} : tensor<8x?x32xf32> -> tensor<1x?x1xf32>
  %2 = mdl.mean %0 {dims = array<i64: 1>} : tensor<8x?x32xf32> -> tensor<8x32xf32>
  %3 = mdl.reduce_max %0 {dims = array<i64: 2>} : tensor<8x?x32xf32> -> tensor<8x?xf32>
  %4 = mdl.softmax %0 {dim = 2} : tensor<8x?x32xf32>
  %5 = mdl.log_softmax %0 {dim = 1} : tensor<8x?x32xf32>
  %6 = mdl.layer_norm %0 weight %w bias %w {normalized_rank = 1, epsilon = 1.0e-5}
      : (tensor<8x?x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<8x?x32xf32>
  %7 = mdl.batch_norm %img, %m, %m weight %m bias %m {epsilon = 1.0e-5}
      : (tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x8x8xf32>
  %8 = mdl.matmul %0, %bb : tensor<8x?x32xf32>, tensor<1x32x5xf32> -> tensor<8x?x5xf32>
  return %1, %2, %3, %4, %5, %6, %7, %8 : tensor<1x?x1xf32>, tensor<8x32xf32>, tensor<8x?xf32>, tensor<8x?x32xf32>,
         tensor<8x?x32xf32>, tensor<8x?x32xf32>, tensor<2x3x8x8xf32>, tensor<8x?x5xf32>
}

// CHECK-LABEL: func.func @shapes
// Merging dims is one collapse_shape (no round trip through 1-D).
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]]
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.transpose {{.*}} permutation = [0, 2, 1]
// CHECK: linalg.transpose {{.*}} permutation = [2, 0, 1]
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
func.func @shapes(%a: tensor<?x4x6xf32>, %b: tensor<?x2x6xf32>)
    -> (tensor<?x24xf32>, tensor<?x6x4xf32>, tensor<6x?x4xf32>, tensor<?x6x6xf32>) {
  %0 = mdl.reshape %a : tensor<?x4x6xf32> -> tensor<?x24xf32>
  %1 = mdl.transpose %a {dim0 = 1, dim1 = 2} : tensor<?x4x6xf32> -> tensor<?x6x4xf32>
  %2 = mdl.permute %a {permutation = array<i64: 2, 0, 1>} : tensor<?x4x6xf32> -> tensor<6x?x4xf32>
  %3 = mdl.concat %a, %b {dim = 1} : (tensor<?x4x6xf32>, tensor<?x2x6xf32>) -> tensor<?x6x6xf32>
  return %0, %1, %2, %3 : tensor<?x24xf32>, tensor<?x6x4xf32>, tensor<6x?x4xf32>, tensor<?x6x6xf32>
}

// CHECK-LABEL: func.func @conv_pool
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %arg1 : tensor<?x4x36x36xf32>, tensor<8x4x5x5xf32>)
// The grouped conv runs over [N, G, C/G, H, W] views (2 groups).
// CHECK: tensor.expand_shape %arg3 {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 4, 2, 3, 3]
// CHECK: linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins({{.*}} : tensor<?x2x2x32x32xf32>, tensor<2x4x2x3x3xf32>) outs({{.*}} : tensor<?x2x4x15x15xf32>)
// CHECK: tensor.collapse_shape {{.*}} {{\[}}[0], [1, 2], [3], [4]] : tensor<?x2x4x15x15xf32> into tensor<?x8x15x15xf32>
// CHECK: arith.maximumf
// CHECK: arith.divf
func.func @conv_pool(%x: tensor<?x4x32x32xf32>, %w: tensor<8x4x5x5xf32>, %b: tensor<8xf32>, %gw: tensor<8x2x3x3xf32>)
    -> (tensor<?x8x16x16xf32>, tensor<?x8x32x32xf32>, tensor<?x8x1x1xf32>, tensor<?x8x15x15xf32>, tensor<?x8x8x8xf32>) {
  %0 = mdl.conv2d %x, %w, %b {stride = array<i64: 1, 1>, padding = array<i64: 2, 2>, dilation = array<i64: 1, 1>, groups = 1}
      : (tensor<?x4x32x32xf32>, tensor<8x4x5x5xf32>, tensor<8xf32>) -> tensor<?x8x32x32xf32>
  %1 = mdl.conv2d %x, %gw {stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2}
      : (tensor<?x4x32x32xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x15x15xf32>
  %2 = mdl.max_pool2d %0 {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
      : tensor<?x8x32x32xf32> -> tensor<?x8x16x16xf32>
  %3 = mdl.avg_pool2d %0 {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>}
      : tensor<?x8x32x32xf32> -> tensor<?x8x32x32xf32>
  %4 = mdl.adaptive_avg_pool2d %0 : tensor<?x8x32x32xf32> -> tensor<?x8x1x1xf32>
  %5 = mdl.adaptive_avg_pool2d %0 : tensor<?x8x32x32xf32> -> tensor<?x8x8x8xf32>
  return %2, %3, %4, %1, %5 : tensor<?x8x16x16xf32>, tensor<?x8x32x32xf32>, tensor<?x8x1x1xf32>, tensor<?x8x15x15xf32>, tensor<?x8x8x8xf32>
}

// CHECK-LABEL: func.func @indexing_and_losses
// CHECK: tensor.extract
// CHECK: arith.minsi
// CHECK: return
func.func @indexing_and_losses(%emb: tensor<100x16xf32>, %ids: tensor<?x7xi64>, %x: tensor<?x10xf32>,
                               %t: tensor<?xi64>, %cw: tensor<10xf32>, %g: tensor<?x3xi64>)
    -> (tensor<?x7x16xf32>, tensor<?x3xf32>, tensor<?x10xf32>, tensor<f32>, tensor<?xf32>, tensor<f32>) {
  %0 = mdl.embedding %emb, %ids : (tensor<100x16xf32>, tensor<?x7xi64>) -> tensor<?x7x16xf32>
  %1 = mdl.gather %x, %g {dim = 1} : (tensor<?x10xf32>, tensor<?x3xi64>) -> tensor<?x3xf32>
  %2 = mdl.index_select %x, %t {dim = 0} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?x10xf32>
  %3 = mdl.cross_entropy %x, %t weight %cw : (tensor<?x10xf32>, tensor<?xi64>, tensor<10xf32>) -> tensor<f32>
  %4 = mdl.nll_loss %x, %t {reduction = "none"} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<?xf32>
  %5 = mdl.nll_loss %x, %t {reduction = "sum"} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<f32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x7x16xf32>, tensor<?x3xf32>, tensor<?x10xf32>, tensor<f32>, tensor<?xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @creation
// CHECK: linalg.fill
// CHECK: linalg.index
// CHECK: math.cos
// CHECK: return
func.func @creation(%n: index) -> (tensor<?x4xf32>, tensor<2x2xbf16>, tensor<3xf32>, tensor<?x8xf32>, tensor<5xi64>, tensor<3x3xf32>) {
  %0 = mdl.zeros(%n) : tensor<?x4xf32>
  %1 = mdl.ones : tensor<2x2xbf16>
  %2 = mdl.full {value = 2.5} : tensor<3xf32>
  %3 = mdl.randn(%n) {seed = 42} : tensor<?x8xf32>
  %4 = mdl.arange {start = 0.0, step = 2.0} : tensor<5xi64>
  %5 = mdl.eye : tensor<3x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x4xf32>, tensor<2x2xbf16>, tensor<3xf32>, tensor<?x8xf32>, tensor<5xi64>, tensor<3x3xf32>
}
