// f32 exp and tanh (softmax, sigmoid, SiLU, tanh) become polynomials the
// loop vectorizer widens; log and cos (randn's Box-Muller, log_softmax's
// per-row log), erf (GELU, whose 1 + erf cancels) and f64 stay libm calls.
// RUN: %modelc-opt %s --mdl-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @approximated(
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK: return
func.func @approximated(%x: f32, %v: vector<16xf32>) -> (f32, f32, vector<16xf32>) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.exp %v : vector<16xf32>
  return %0, %1, %2 : f32, f32, vector<16xf32>
}

// CHECK-LABEL: func.func @kept(
// CHECK: math.log
// CHECK: math.cos
// CHECK: math.erf
// CHECK: math.exp {{.*}} : f64
// CHECK: return
func.func @kept(%x: f32, %y: f64) -> (f32, f32, f32, f64) {
  %0 = math.log %x : f32
  %1 = math.cos %x : f32
  %2 = math.erf %x : f32
  %3 = math.exp %y : f64
  return %0, %1, %2, %3 : f32, f32, f32, f64
}
