// Each verifier's negative case.
// RUN: %modelc-opt %s -split-input-file -verify-diagnostics

func.func @mixed_devices(%a: tensor<4xf32, #mdl.device<cpu>>, %b: tensor<4xf32, #mdl.device<cuda:0>>) {
  // expected-error@+1 {{'mdl.add' op mixes devices: operand #1 is on cuda:0 but operand #0 is on cpu; only mdl.transfer moves a tensor between devices}}
  %0 = mdl.add %a, %b : tensor<4xf32, #mdl.device<cpu>>, tensor<4xf32, #mdl.device<cuda:0>> -> tensor<4xf32, #mdl.device<cpu>>
  return
}

// -----

func.func @result_on_other_device(%a: tensor<4xf32, #mdl.device<cuda:0>>) {
  // expected-error@+1 {{'mdl.relu' op mixes devices: result #0 is on cuda:1 but operand #0 is on cuda:0}}
  %0 = "mdl.relu"(%a) : (tensor<4xf32, #mdl.device<cuda:0>>) -> tensor<4xf32, #mdl.device<cuda:1>>
  return
}

// -----

func.func @device_vs_none(%a: tensor<4xf32, #mdl.device<cpu>>, %b: tensor<4xf32>) {
  // expected-error@+1 {{mixes devices: operand #1 is on no device but operand #0 is on cpu}}
  %0 = mdl.mul %a, %b : tensor<4xf32, #mdl.device<cpu>>, tensor<4xf32> -> tensor<4xf32, #mdl.device<cpu>>
  return
}

// -----

func.func @foreign_encoding(%a: tensor<4xf32, "dense">) {
  // expected-error@+1 {{operand #0 has encoding "dense", expected a #mdl.device}}
  %0 = mdl.exp %a : tensor<4xf32, "dense">
  return
}

// -----

// expected-error@+1 {{unknown device kind 'tpu' (expected cpu or cuda)}}
func.func @bad_device_kind(%a: tensor<4xf32, #mdl.device<tpu:0>>) {
  return
}

// -----

// expected-error@+1 {{the cpu device has no index other than 0}}
func.func @bad_cpu_index(%a: tensor<4xf32, #mdl.device<cpu:3>>) {
  return
}

// -----

func.func @dtype_mismatch(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'mdl.sub' op rhs has dtype 'f16' but expected 'f32'}}
  %0 = mdl.sub %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @no_broadcast(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error@+1 {{'mdl.add' op operand #1 dim 0 is 5 and does not broadcast to result dim 1 of 4}}
  %0 = mdl.add %a, %b : tensor<3x4xf32>, tensor<5xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @operands_disagree(%a: tensor<3x?xf32>, %b: tensor<5xf32>, %c: tensor<3x4xf32>) {
  // expected-error@+1 {{'mdl.max' op operand #1 dim 0 is 5 and does not broadcast to result dim 1 of 4}}
  %0 = mdl.max %a, %b : tensor<3x?xf32>, tensor<5xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @operands_disagree_dynamic_result(%a: tensor<3x4xf32>, %b: tensor<5xf32>) {
  // expected-error@+1 {{'mdl.min' op operands disagree at result dim 1: 4 vs 5}}
  %0 = mdl.min %a, %b : tensor<3x4xf32>, tensor<5xf32> -> tensor<3x?xf32>
  return
}

// -----

func.func @cmp_result(%a: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.cmp' op result must have dtype i1, got 'f32'}}
  %0 = mdl.cmp "lt", %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @cmp_predicate(%a: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.cmp' op unknown predicate 'less' (expected eq, ne, lt, le, gt or ge)}}
  %0 = mdl.cmp "less", %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @where_condition(%c: tensor<4xf32>, %a: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.where' op condition must have dtype i1, got 'f32'}}
  %0 = mdl.where %c, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @unary_type(%a: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.tanh' op requires the same type for all operands and results}}
  %0 = "mdl.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.cast' op result dim 0 is 5 but expected 4}}
  %0 = mdl.cast %a : tensor<4xf32> -> tensor<5xi32>
  return
}

// -----

func.func @transfer_dtype(%a: tensor<4xf32, #mdl.device<cuda:0>>) {
  // expected-error@+1 {{'mdl.transfer' op result has dtype 'f16' but expected 'f32'}}
  %0 = mdl.transfer %a : tensor<4xf32, #mdl.device<cuda:0>> -> tensor<4xf16, #mdl.device<cpu>>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<?x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+1 {{'mdl.matmul' op contraction dims disagree: lhs has 3 columns but rhs has 4 rows}}
  %0 = mdl.matmul %a, %b : tensor<?x3xf32>, tensor<4x5xf32> -> tensor<?x5xf32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error@+1 {{'mdl.matmul' op operands must have rank >= 2, got 1 and 2}}
  %0 = mdl.matmul %a, %b : tensor<3xf32>, tensor<3x5xf32> -> tensor<5xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error@+1 {{'mdl.matmul' op result must be [..., 2, 5]}}
  %0 = mdl.matmul %a, %b : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x2x3xf32>, %b: tensor<4x3x5xf32>) {
  // expected-error@+1 {{'mdl.matmul' op batch dim 0 is 2 in an operand but 4 in the result}}
  %0 = mdl.matmul %a, %b : tensor<2x2x3xf32>, tensor<4x3x5xf32> -> tensor<4x2x5xf32>
  return
}

// -----

func.func @reduce_dims(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.sum' op reduced dim 2 is out of range for rank 2}}
  %0 = mdl.sum %a {dims = array<i64: 2>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_twice(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.mean' op reduced dim 1 is listed twice}}
  %0 = mdl.mean %a {dims = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_keepdim(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.reduce_max' op result has rank 1 but expected rank 2}}
  %0 = mdl.reduce_max %a {dims = array<i64: 1>, keepdim = true} : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @softmax_dim(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.softmax' op dim 2 is out of range for rank 2}}
  %0 = mdl.softmax %a {dim = 2} : tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_weight(%a: tensor<2x3xf32>, %w: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.layer_norm' op weight dim 0 is 4 but expected 3}}
  %0 = mdl.layer_norm %a weight %w {normalized_rank = 1, epsilon = 1.0e-5} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_rank(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.layer_norm' op normalized_rank 3 must be in [1, 2]}}
  %0 = mdl.layer_norm %a {normalized_rank = 3, epsilon = 1.0e-5} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @batch_norm_channels(%a: tensor<2x3x4x4xf32>, %m: tensor<4xf32>) {
  // expected-error@+1 {{'mdl.batch_norm' op running_mean dim 0 is 4 but expected 3}}
  %0 = mdl.batch_norm %a, %m, %m {epsilon = 1.0e-5} : (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.reshape' op cannot reshape 6 elements into 8}}
  %0 = mdl.reshape %a : tensor<2x3xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @reshape_dynamic(%a: tensor<?x3xf32>) {
  // expected-error@+1 {{'mdl.reshape' op result may have at most one dynamic dim unless it only inserts or merges dims, got 2}}
  %0 = mdl.reshape %a : tensor<?x3xf32> -> tensor<?x?xf32>
  return
}

// -----

// Groups must cover the input's dims, one per result dim, and a static
// result dim must be their product: [?, 3, ?, ?] grouped [2, 2] would put
// 3 and ? into the first (dynamic) dim -- allowed -- but [1, 2] leaves a dim.
func.func @reshape_groups_short(%a: tensor<?x3x?x?xf32>) {
  // expected-error@+1 {{'mdl.reshape' op groups do not describe an expand or collapse of 'tensor<?x3x?x?xf32>' into 'tensor<?x?xf32>'}}
  %0 = mdl.reshape %a {groups = array<i64: 1, 2>} : tensor<?x3x?x?xf32> -> tensor<?x?xf32>
  return
}

// -----

// An expand group may hold one dynamic dim: [?] into [?, ?] cannot be split.
func.func @reshape_groups_split_dynamic(%a: tensor<?xf32>) {
  // expected-error@+1 {{'mdl.reshape' op groups do not describe an expand or collapse of 'tensor<?xf32>' into 'tensor<?x?xf32>'}}
  %0 = mdl.reshape %a {groups = array<i64: 2>} : tensor<?xf32> -> tensor<?x?xf32>
  return
}

// -----

func.func @transpose_shape(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.transpose' op result dim 0 is 2 but expected 3}}
  %0 = mdl.transpose %a {dim0 = 0, dim1 = 1} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @permute_twice(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.permute' op permutation lists dim 0 twice}}
  %0 = mdl.permute %a {permutation = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error@+1 {{'mdl.concat' op input #1 dim 0 is 4 but input #0 has 2}}
  %0 = mdl.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_result(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error@+1 {{'mdl.concat' op result dim 1 is 5 but expected 6}}
  %0 = mdl.concat %a, %b {dim = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'mdl.conv2d' op weight dim 1 is 2 but input channels / groups is 3}}
  %0 = mdl.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1}
      : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x3x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error@+1 {{'mdl.conv2d' op input channels 3 are not divisible by groups 2}}
  %0 = mdl.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 2}
      : (tensor<1x3x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_output(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'mdl.conv2d' op result dim 2 is 8 but expected 4}}
  %0 = mdl.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 1}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'mdl.conv2d' op stride entries must be >= 1, got 0}}
  %0 = mdl.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1}
      : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @pool_output(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'mdl.max_pool2d' op result dim 3 is 3 but expected 4}}
  %0 = mdl.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>}
      : tensor<1x3x8x8xf32> -> tensor<1x3x4x3xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'mdl.avg_pool2d' op padding must be at most half the kernel size}}
  %0 = mdl.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, padding = array<i64: 2, 2>}
      : tensor<1x3x8x8xf32> -> tensor<1x3x11x11xf32>
  return
}

// -----

func.func @adaptive_dynamic(%x: tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{'mdl.adaptive_avg_pool2d' op output height and width must be static}}
  %0 = mdl.adaptive_avg_pool2d %x : tensor<1x3x8x8xf32> -> tensor<1x3x?x1xf32>
  return
}

// -----

func.func @embedding_indices(%w: tensor<10x4xf32>, %i: tensor<3xf32>) {
  // expected-error@+1 {{'mdl.embedding' op indices must have an integer dtype, got 'f32'}}
  %0 = mdl.embedding %w, %i : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_rank(%x: tensor<4x5xf32>, %i: tensor<4xi64>) {
  // expected-error@+1 {{'mdl.gather' op index has rank 1 but input has rank 2}}
  %0 = mdl.gather %x, %i {dim = 1} : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<4xf32>
  return
}

// -----

func.func @index_select_result(%x: tensor<4x5xf32>, %i: tensor<2xi64>) {
  // expected-error@+1 {{'mdl.index_select' op result dim 1 is 5 but expected 2}}
  %0 = mdl.index_select %x, %i {dim = 1} : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
  return
}

// -----

func.func @loss_target(%x: tensor<4x10xf32>, %t: tensor<5xi64>) {
  // expected-error@+1 {{'mdl.cross_entropy' op target dim 0 is 5 but expected 4}}
  %0 = mdl.cross_entropy %x, %t : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @loss_reduction(%x: tensor<4x10xf32>, %t: tensor<4xi64>) {
  // expected-error@+1 {{'mdl.nll_loss' op reduction must be mean, sum or none, got 'avg'}}
  %0 = mdl.nll_loss %x, %t {reduction = "avg"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @loss_weight(%x: tensor<4x10xf32>, %t: tensor<4xi64>, %w: tensor<9xf32>) {
  // expected-error@+1 {{'mdl.nll_loss' op weight dim 0 is 9 but expected 10}}
  %0 = mdl.nll_loss %x, %t weight %w : (tensor<4x10xf32>, tensor<4xi64>, tensor<9xf32>) -> tensor<f32>
  return
}

// -----

func.func @creation_sizes(%n: index) {
  // expected-error@+1 {{'mdl.zeros' op needs one size operand per dynamic dim: 2 expected, 1 given}}
  %0 = mdl.zeros(%n) : tensor<?x?xf32>
  return
}

// -----

func.func @randn_dtype() {
  // expected-error@+1 {{'mdl.randn' op result must have a float dtype, got 'i32'}}
  %0 = mdl.randn {seed = 1} : tensor<4xi32>
  return
}

// -----

func.func @arange_step() {
  // expected-error@+1 {{'mdl.arange' op step must be non-zero}}
  %0 = mdl.arange {start = 0.0, step = 0.0} : tensor<4xf32>
  return
}

// -----

func.func @eye_rank() {
  // expected-error@+1 {{'mdl.eye' op result must have rank 2, got 1}}
  %0 = mdl.eye : tensor<4xf32>
  return
}
