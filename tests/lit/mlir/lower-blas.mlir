// After bufferization, f32 matmuls become calls into OpenBLAS.
// RUN: %modelc-opt %s --mdl-to-linalg --canonicalize --one-shot-bufferize="bufferize-function-boundaries" --mdl-matmul-to-blas | FileCheck %s

// CHECK: func.func private @modelc_sgemm(memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @mm
// CHECK: linalg.fill
// CHECK: %[[A:.*]] = memref.cast %{{.*}} : memref<?x64xf32{{.*}}> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[B:.*]] = memref.cast %{{.*}} : memref<64x32xf32{{.*}}> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: %[[C:.*]] = memref.cast %{{.*}} : memref<?x32xf32{{.*}}> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: call @modelc_sgemm(%[[A]], %[[B]], %[[C]])
// CHECK-NOT: linalg.matmul
func.func @mm(%a: tensor<?x64xf32>, %b: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %0 = mdl.matmul %a, %b : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  return %0 : tensor<?x32xf32>
}

// f64 matmuls stay loops.
// CHECK-LABEL: func.func @mm64
// CHECK: linalg.matmul
func.func @mm64(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %0 = mdl.matmul %a, %b : tensor<4x4xf64>, tensor<4x4xf64> -> tensor<4x4xf64>
  return %0 : tensor<4x4xf64>
}

// x @ W.T reads W in place: a transposed matmul, then a transposed view for BLAS.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: linalg.transpose
// CHECK: %[[WT:.*]] = memref.transpose %{{.*}} (d0, d1) -> (d1, d0)
// CHECK: %[[B:.*]] = memref.cast %[[WT]]
// CHECK: call @modelc_sgemm(%{{.*}}, %[[B]], %{{.*}})
func.func @linear(%x: tensor<?x6xf32>, %w: tensor<4x6xf32>) -> tensor<?x4xf32> {
  %wt = mdl.transpose %w {dim0 = 0, dim1 = 1} : tensor<4x6xf32> -> tensor<6x4xf32>
  %0 = mdl.matmul %x, %wt : tensor<?x6xf32>, tensor<6x4xf32> -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// Batched products of one rank without broadcasting (attention's scores):
// the batch dims merged into one, one call taking each matrix to the library.
// CHECK-LABEL: func.func @attention_scores
// CHECK: memref.collapse_shape
// CHECK: call @modelc_batch_sgemm(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<?x?x?xf32, strided<[?, ?, ?], offset: ?>>,
// CHECK-NOT: linalg.batch_matmul
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @attention_scores(%q: tensor<?x4x8x16xf32>, %k: tensor<?x4x16x8xf32>) -> tensor<?x4x8x8xf32> {
  %0 = mdl.matmul %q, %k : tensor<?x4x8x16xf32>, tensor<?x4x16x8xf32> -> tensor<?x4x8x8xf32>
  return %0 : tensor<?x4x8x8xf32>
}

// A stretched batch dim (1 against B) stays a loop nest.
// CHECK-LABEL: func.func @broadcast_batch
// CHECK-NOT: call @modelc_batch_sgemm
// CHECK: linalg.generic
func.func @broadcast_batch(%a: tensor<?x8x16xf32>, %b: tensor<1x16x8xf32>) -> tensor<?x8x8xf32> {
  %0 = mdl.matmul %a, %b : tensor<?x8x16xf32>, tensor<1x16x8xf32> -> tensor<?x8x8xf32>
  return %0 : tensor<?x8x8xf32>
}
