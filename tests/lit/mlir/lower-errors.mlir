// The cpu back end refuses tensors that live elsewhere.
// RUN: %modelc-opt %s --mdl-to-linalg -split-input-file -verify-diagnostics

func.func @on_gpu(%a: tensor<4xf32, #mdl.device<cuda:0>>) -> tensor<4xf32, #mdl.device<cuda:0>> {
  // expected-error@+1 {{cannot lower a tensor on cuda:0 with the cpu back end (only cpu tensors are supported)}}
  %0 = mdl.relu %a : tensor<4xf32, #mdl.device<cuda:0>>
  return %0 : tensor<4xf32, #mdl.device<cuda:0>>
}

// -----

func.func @adaptive(%x: tensor<1x3x7x7xf32>) -> tensor<1x3x2x2xf32> {
  // expected-error@+2 {{failed to legalize operation 'mdl.adaptive_avg_pool2d'}}
  // expected-error@+1 {{cpu lowering supports adaptive pooling only to 1x1 or to an output that evenly divides a static input}}
  %0 = mdl.adaptive_avg_pool2d %x : tensor<1x3x7x7xf32> -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}

// -----

func.func @index_dtype(%x: tensor<4xindex>) -> tensor<index> {
  // expected-error@+1 {{cannot lower a tensor of 'index' with the cpu back end (only signless integer and float dtypes)}}
  %0 = mdl.reduce_max %x {dims = array<i64: 0>} : tensor<4xindex> -> tensor<index>
  return %0 : tensor<index>
}

// -----

func.func @complex_dtype(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  // expected-error@+1 {{cannot lower a tensor of 'complex<f32>' with the cpu back end}}
  %0 = mdl.add %x, %x : tensor<2xcomplex<f32>>, tensor<2xcomplex<f32>> -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

func.func @int_gelu(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error@+1 {{failed to legalize operation 'mdl.gelu'}}
  %0 = mdl.gelu %x : tensor<4xi32>
  return %0 : tensor<4xi32>
}
