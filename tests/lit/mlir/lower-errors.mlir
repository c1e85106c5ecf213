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
