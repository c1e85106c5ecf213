// matmul + bias + relu: after mdl-to-linalg and elementwise fusion, bias and
// activation are one linalg.generic reading the matmul result once.
// RUN: %modelc-opt %s --mdl-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: %modelc-opt %s --pass-pipeline='builtin.module(mdl-to-linalg,func.func(canonicalize,linalg-fuse-elementwise-ops))' | FileCheck %s --check-prefix=FUSED

!x = tensor<?x784xf32, #mdl.device<cpu>>
!h = tensor<?x256xf32, #mdl.device<cpu>>

// LINALG-LABEL: func.func @dense(
// LINALG-SAME: %{{.*}}: tensor<?x784xf32>, %{{.*}}: tensor<784x256xf32>, %{{.*}}: tensor<256xf32>) -> tensor<?x256xf32>
// LINALG: linalg.fill
// LINALG: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x784xf32>, tensor<784x256xf32>)
// LINALG: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// LINALG: arith.addf
// LINALG: linalg.generic
// LINALG: arith.maximumf
// LINALG-NOT: mdl.
// LINALG-NOT: #mdl.device

// FUSED-LABEL: func.func @dense(
// FUSED: linalg.matmul
// FUSED: linalg.generic
// FUSED: arith.addf
// FUSED-NEXT: arith.maximumf
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @dense(%x: !x, %w: tensor<784x256xf32, #mdl.device<cpu>>, %b: tensor<256xf32, #mdl.device<cpu>>) -> !h {
  %0 = mdl.matmul %x, %w : !x, tensor<784x256xf32, #mdl.device<cpu>> -> !h
  %1 = mdl.add %0, %b : !h, tensor<256xf32, #mdl.device<cpu>> -> !h
  %2 = mdl.relu %1 : !h
  return %2 : !h
}
