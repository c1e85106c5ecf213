// A matmul into a zero-filled buffer whose only reader applies bias, residual
// and activations becomes one modelc_matmul_epilogue call (fill, matmul and
// the elementwise loop nest are gone); anything else stays modelc_sgemm.
// RUN: %modelc-opt %s --pass-pipeline='builtin.module(mdl-to-linalg,func.func(canonicalize,mdl-fuse-elementwise,canonicalize),eliminate-empty-tensors,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize,mdl-matmul-to-blas)' | FileCheck %s

!x = tensor<?x64xf32, #mdl.device<cpu>>
!h = tensor<?x32xf32, #mdl.device<cpu>>
!w = tensor<32x64xf32, #mdl.device<cpu>>
!wt = tensor<64x32xf32, #mdl.device<cpu>>
!b = tensor<32xf32, #mdl.device<cpu>>

// x @ W.T + b, ReLU: steps add (1), relu (2) -> 0x21 = 33; the bias row is a
// view with row stride 0; W is read transposed in place.
// CHECK-LABEL: func.func @linear_relu(
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: %[[WT:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0)
// CHECK: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [%{{.*}}, 32], strides: [0, 1]
// CHECK: %[[CODE:.*]] = arith.constant 33 : i64
// CHECK: call @modelc_matmul_epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[CODE]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_relu(%x: !x, %w: !w, %b: !b) -> !h {
  %wt = mdl.transpose %w {dim0 = 0, dim1 = 1} : !w -> !wt
  %0 = mdl.matmul %x, %wt : !x, !wt -> !h
  %1 = mdl.add %0, %b : !h, !b -> !h
  %2 = mdl.relu %1 : !h
  return %2 : !h
}

// Bias, exact GELU, then a residual: add (1), gelu (3), add (1) -> 0x131 = 305.
// CHECK-LABEL: func.func @linear_gelu_residual(
// CHECK: %[[CODE:.*]] = arith.constant 305 : i64
// CHECK: call @modelc_matmul_epilogue({{.*}}, %[[CODE]])
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @linear_gelu_residual(%x: !x, %w: !wt, %b: !b, %r: !h) -> !h {
  %0 = mdl.matmul %x, %w : !x, !wt -> !h
  %1 = mdl.add %0, %b : !h, !b -> !h
  %2 = mdl.gelu %1 : !h
  %3 = mdl.add %2, %r : !h, !h -> !h
  return %3 : !h
}

// tanh (4), SiLU (5), sigmoid (6) after a bias: 0x41, 0x51, 0x61.
// CHECK-LABEL: func.func @activations(
// CHECK: arith.constant 65 : i64
// CHECK: call @modelc_matmul_epilogue
// CHECK: arith.constant 81 : i64
// CHECK: call @modelc_matmul_epilogue
// CHECK: arith.constant 97 : i64
// CHECK: call @modelc_matmul_epilogue
func.func @activations(%x: !x, %w: !wt, %b: !b) -> (!h, !h, !h) {
  %0 = mdl.matmul %x, %w : !x, !wt -> !h
  %1 = mdl.add %0, %b : !h, !b -> !h
  %2 = mdl.tanh %1 : !h
  %3 = mdl.matmul %x, %w : !x, !wt -> !h
  %4 = mdl.add %3, %b : !h, !b -> !h
  %5 = mdl.silu %4 : !h
  %6 = mdl.matmul %x, %w : !x, !wt -> !h
  %7 = mdl.add %6, %b : !h, !b -> !h
  %8 = mdl.sigmoid %7 : !h
  return %2, %5, %8 : !h, !h, !h
}

// The product read twice (h + h is not an epilogue), and a product that is
// also returned: plain sgemm, the loop nest stays.
// CHECK-LABEL: func.func @not_an_epilogue(
// CHECK-NOT: modelc_matmul_epilogue
// CHECK: call @modelc_sgemm
// CHECK: linalg.generic
// CHECK: return
func.func @not_an_epilogue(%x: !x, %w: !wt) -> !h {
  %0 = mdl.matmul %x, %w : !x, !wt -> !h
  %1 = mdl.add %0, %0 : !h, !h -> !h
  return %1 : !h
}

// CHECK-LABEL: func.func @product_used_twice(
// CHECK-NOT: modelc_matmul_epilogue
// CHECK: call @modelc_sgemm
func.func @product_used_twice(%x: !x, %w: !wt) -> (!h, !h) {
  %0 = mdl.matmul %x, %w : !x, !wt -> !h
  %1 = mdl.relu %0 : !h
  return %0, %1 : !h, !h
}

// A Linear on [B, T, dim] (the product's rows are B * T): the epilogue reads
// the product expanded to 3-D; the call gets the output and the residual
// collapsed back to rows. Bias, GELU: 0x31 = 49; bias, residual: 0x11 = 17.
// CHECK-LABEL: func.func @block(
// CHECK: %[[G:.*]] = arith.constant 49 : i64
// CHECK: call @modelc_matmul_epilogue({{.*}}, %[[G]])
// CHECK: memref.collapse_shape %arg4 {{\[}}[0, 1], [2]]
// CHECK: %[[R:.*]] = arith.constant 17 : i64
// CHECK: call @modelc_matmul_epilogue({{.*}}, %[[R]])
// CHECK-NOT: linalg.generic
// CHECK: return
!t = tensor<?x?x32xf32, #mdl.device<cpu>>
!u = tensor<?x?x64xf32, #mdl.device<cpu>>
func.func @block(%w1: !wt, %b1: !b, %w2: tensor<32x64xf32, #mdl.device<cpu>>, %b2: tensor<64xf32, #mdl.device<cpu>>, %x: !u) -> !u {
  %0 = mdl.matmul %x, %w1 : !u, !wt -> !t
  %1 = mdl.add %0, %b1 : !t, !b -> !t
  %2 = mdl.gelu %1 : !t
  %3 = mdl.matmul %2, %w2 : !t, tensor<32x64xf32, #mdl.device<cpu>> -> !u
  %4 = mdl.add %3, %b2 : !u, tensor<64xf32, #mdl.device<cpu>> -> !u
  %5 = mdl.add %x, %4 : !u, !u -> !u
  return %5 : !u
}

// Attention's key projection: x [B, T, 64] @ W.T + b, then viewed as
// [B, T, 4, 8] heads and permuted. The bias add keeps the product's shape
// (mdl-fuse-elementwise does not expand it by the heads' reshape), so it is
// the call's epilogue: add (1) -> 1; only the permutation is a copy.
// CHECK-LABEL: func.func @projection_to_heads(
// CHECK-NOT: linalg.fill
// CHECK: %[[CODE:.*]] = arith.constant 1 : i64
// CHECK: call @modelc_matmul_epilogue({{.*}}, %[[CODE]])
// CHECK-NOT: linalg.generic
// CHECK: linalg.transpose
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @projection_to_heads(%x: tensor<?x?x64xf32, #mdl.device<cpu>>, %w: !w, %b: !b)
    -> tensor<?x4x?x8xf32, #mdl.device<cpu>> {
  %wt = mdl.transpose %w {dim0 = 0, dim1 = 1} : !w -> !wt
  %0 = mdl.matmul %x, %wt : tensor<?x?x64xf32, #mdl.device<cpu>>, !wt -> tensor<?x?x32xf32, #mdl.device<cpu>>
  %1 = mdl.add %0, %b : tensor<?x?x32xf32, #mdl.device<cpu>>, !b -> tensor<?x?x32xf32, #mdl.device<cpu>>
  %2 = mdl.reshape %1 : tensor<?x?x32xf32, #mdl.device<cpu>> -> tensor<?x?x4x8xf32, #mdl.device<cpu>>
  %3 = mdl.permute %2 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x4x8xf32, #mdl.device<cpu>> -> tensor<?x4x?x8xf32, #mdl.device<cpu>>
  return %3 : tensor<?x4x?x8xf32, #mdl.device<cpu>>
}

// A weight that is an `mdl.state` argument (mdl-hoist-state-prep marks the
// model's state) is the same on every call: bit 62 of the code
// (4611686018427387904 + 33) lets the runtime keep it in oneDNN's layout.
// (@linear_relu above, whose W is an input, has the plain code.)
// CHECK-LABEL: func.func @state_weight(
// CHECK: %[[CODE:.*]] = arith.constant 4611686018427387937 : i64
// CHECK: call @modelc_matmul_epilogue({{.*}}, %[[CODE]])
func.func @state_weight(%w: !w {mdl.state}, %b: !b {mdl.state}, %x: !x) -> !h {
  %wt = mdl.transpose %w {dim0 = 0, dim1 = 1} : !w -> !wt
  %0 = mdl.matmul %x, %wt : !x, !wt -> !h
  %1 = mdl.add %0, %b : !h, !b -> !h
  %2 = mdl.relu %1 : !h
  return %2 : !h
}
