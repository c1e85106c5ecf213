//===- MdlOps.td - operations of the mdl dialect -------------*- tablegen -*-===//
//
// One op per language primitive. Verifiers (MdlOps.cpp) re-check what the
// type checker guarantees: one device per op (except mdl.transfer), agreeing
// dtypes, and agreeing static dims (dynamic `?` dims are accepted).
//
//===----------------------------------------------------------------------===//

#ifndef MDL_OPS_TD
#define MDL_OPS_TD

include "MdlDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

defvar Mdl_Tensor = AnyRankedTensor;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Binary ops broadcast like PyTorch: dims align from the right; a static 1
// stretches to the other side's extent.
//
// What each elementwise op computes on one element is the same on every back
// end and is written once, as the functions of runtime/ScalarOps.h that the
// generated CUDA calls; the cpu lowering builds the same arith ops, and
// tests/lit/cuda/semantics.test holds both to them. (The meanings are
// comments here, not `description`s, so that documenting them does not
// change the generated C++.) Integers are two's complement and wrap on
// overflow (add, sub, mul); no integer op traps. Floats are IEEE.
class Mdl_BinaryOp<string mnemonic> : Mdl_Op<mnemonic, [Pure, Mdl_SameDevice]> {
  let summary = "elementwise " # mnemonic # " with broadcasting";
  let arguments = (ins Mdl_Tensor:$lhs, Mdl_Tensor:$rhs);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_AddOp : Mdl_BinaryOp<"add">;
def Mdl_SubOp : Mdl_BinaryOp<"sub">;
def Mdl_MulOp : Mdl_BinaryOp<"mul">;
// div: floats divide (IEEE). Integers: floor division, Python's `//`
// (-7 / 2 == -4), so a == (a / b) * b + a % b; x / 0 is 0 and MIN / -1 wraps
// to MIN (mdl_floordiv).
def Mdl_DivOp : Mdl_BinaryOp<"div">;
// pow: floats as C's pow. Integers: repeated multiplication, wrapping; a
// negative exponent gives the integer part of 1 / base**-e: 1 for base 1,
// +-1 for base -1, else 0, 0 ** -n included (mdl_ipow).
def Mdl_PowOp : Mdl_BinaryOp<"pow">;
// max, min: floats propagate NaN and order -0 < +0, as torch.maximum and
// torch.minimum (mdl_max, mdl_min).
def Mdl_MaxOp : Mdl_BinaryOp<"max">;
def Mdl_MinOp : Mdl_BinaryOp<"min">;
// rem, in full: floats fmod(a, b), plus b when the signs differ (mdl_rem);
// integers x % 0 and x % -1 are 0, MIN % -1 included (mdl_irem).
def Mdl_RemOp : Mdl_BinaryOp<"rem"> {
  let description = [{
    `%` with Python/PyTorch semantics: the result has the sign of the divisor
    (floats: `a - floor(a / b) * b`). Integer `x % 0` is 0 (no trap).
  }];
}
def Mdl_AndOp : Mdl_BinaryOp<"and"> { let summary = "elementwise logical and of i1 tensors"; }
def Mdl_OrOp : Mdl_BinaryOp<"or"> { let summary = "elementwise logical or of i1 tensors"; }

def Mdl_CmpOp : Mdl_Op<"cmp", [Pure, Mdl_SameDevice]> {
  let summary = "elementwise comparison (eq, ne, lt, le, gt, ge) giving i1";
  let arguments = (ins StrAttr:$predicate, Mdl_Tensor:$lhs, Mdl_Tensor:$rhs);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$predicate `,` $lhs `,` $rhs attr-dict `:` type($lhs) `,` "
                       "type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_WhereOp : Mdl_Op<"where", [Pure, Mdl_SameDevice]> {
  let summary = "elementwise select: cond ? lhs : rhs, with broadcasting";
  let arguments = (ins Mdl_Tensor:$condition, Mdl_Tensor:$lhs, Mdl_Tensor:$rhs);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$condition `,` $lhs `,` $rhs attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

class Mdl_UnaryOp<string mnemonic>
    : Mdl_Op<mnemonic, [Pure, Mdl_SameDevice, SameOperandsAndResultType]> {
  let summary = "elementwise " # mnemonic;
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

// relu: max(x, 0) as max above: relu(NaN) is NaN, relu(-0) is +0.
def Mdl_ReluOp : Mdl_UnaryOp<"relu">;
// gelu: (0.5 * x) * (1 + erf(x / sqrt(2))) (mdl_gelu).
def Mdl_GeluOp : Mdl_UnaryOp<"gelu"> {
  let description = "Exact GELU: 0.5 * x * (1 + erf(x / sqrt(2))).";
}
// silu: x * sigmoid(x); sigmoid: 1 / (1 + exp(-x)) (mdl_silu, mdl_sigmoid).
def Mdl_SiluOp : Mdl_UnaryOp<"silu">;
def Mdl_TanhOp : Mdl_UnaryOp<"tanh">;
def Mdl_SigmoidOp : Mdl_UnaryOp<"sigmoid">;
def Mdl_ExpOp : Mdl_UnaryOp<"exp">;
def Mdl_LogOp : Mdl_UnaryOp<"log">;
def Mdl_SqrtOp : Mdl_UnaryOp<"sqrt">;
// sin, cos: radians, C's sinf/cosf (sin/cos for f64) on both back ends.
def Mdl_SinOp : Mdl_UnaryOp<"sin">;
def Mdl_CosOp : Mdl_UnaryOp<"cos">;
// neg, abs: integers wrap: -MIN and abs(MIN) are MIN (mdl_ineg, mdl_iabs).
def Mdl_NegOp : Mdl_UnaryOp<"neg">;
def Mdl_AbsOp : Mdl_UnaryOp<"abs">;
def Mdl_NotOp : Mdl_UnaryOp<"not"> {
  let summary = "elementwise logical not of an i1 tensor";
  let hasVerifier = 1;
}

// cast: integer to integer truncates (two's complement); integer to float
// rounds to nearest; float to integer truncates toward zero (NaN and values
// out of range are unspecified); anything to bool is x != 0 (NaN is true).
def Mdl_CastOp : Mdl_Op<"cast", [Pure, Mdl_SameDevice]> {
  let summary = "elementwise dtype conversion (same shape, same device)";
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_TransferOp : Mdl_Op<"transfer", [Pure]> {
  let summary = "copies a tensor to another device (the only op that may)";
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra, reductions, normalisation
//===----------------------------------------------------------------------===//

def Mdl_MatmulOp : Mdl_Op<"matmul", [Pure, Mdl_SameDevice]> {
  let summary = "matrix product with the batch/broadcast semantics of `@`";
  let description = [{
    Both operands have rank >= 2: [..., M, K] @ [..., K, N] -> [..., M, N];
    the leading (batch) dims broadcast.
  }];
  let arguments = (ins Mdl_Tensor:$lhs, Mdl_Tensor:$rhs);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)";
  let hasVerifier = 1;
}

class Mdl_ReduceOp<string mnemonic> : Mdl_Op<mnemonic, [Pure, Mdl_SameDevice]> {
  let summary = "reduction over `dims`, keeping them as 1s when `keepdim`";
  let arguments = (ins Mdl_Tensor:$input, DenseI64ArrayAttr:$dims,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdim);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_SumOp : Mdl_ReduceOp<"sum">;
def Mdl_MeanOp : Mdl_ReduceOp<"mean">;
def Mdl_ReduceMaxOp : Mdl_ReduceOp<"reduce_max">;

class Mdl_SoftmaxLikeOp<string mnemonic>
    : Mdl_Op<mnemonic, [Pure, Mdl_SameDevice, SameOperandsAndResultType]> {
  let summary = mnemonic # " along `dim`";
  let arguments = (ins Mdl_Tensor:$input, I64Attr:$dim);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mdl_SoftmaxOp : Mdl_SoftmaxLikeOp<"softmax">;
def Mdl_LogSoftmaxOp : Mdl_SoftmaxLikeOp<"log_softmax">;

def Mdl_LayerNormOp : Mdl_Op<"layer_norm",
    [Pure, Mdl_SameDevice, AttrSizedOperandSegments]> {
  let summary = "layer normalisation over the trailing `normalized_rank` dims";
  let arguments = (ins Mdl_Tensor:$input, Optional<Mdl_Tensor>:$weight,
                       Optional<Mdl_Tensor>:$bias, I64Attr:$normalized_rank,
                       F64Attr:$epsilon);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Mdl_BatchNormOp : Mdl_Op<"batch_norm",
    [Pure, Mdl_SameDevice, AttrSizedOperandSegments]> {
  let summary = "batch normalisation in inference mode over channel dim 1";
  let arguments = (ins Mdl_Tensor:$input, Mdl_Tensor:$running_mean,
                       Mdl_Tensor:$running_var, Optional<Mdl_Tensor>:$weight,
                       Optional<Mdl_Tensor>:$bias, F64Attr:$epsilon);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input `,` $running_mean `,` $running_var (`weight` $weight^)? "
                       "(`bias` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Mdl_ReshapeOp : Mdl_Op<"reshape", [Pure, Mdl_SameDevice]> {
  let summary = "reshape to the result type (at most one dynamic result dim)";
  let description = [{
    Several dynamic result dims need a pure expand or collapse, whose groups
    of dims (one per dim of the lower-rank side) are either told by the types
    or given by `groups`: the number of higher-rank dims in each group, in
    order (`flatten` of `[?, 3, ?, ?]` into `[?, ?]` is groups `[1, 3]`). A
    collapse group may merge several dynamic dims; an expand group may hold
    one.
  }];
  let arguments = (ins Mdl_Tensor:$input, OptionalAttr<DenseI64ArrayAttr>:$groups);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The dims of the higher-rank side grouped per lower-rank dim, from
    /// `groups` when present, else from the types; nullopt when the reshape
    /// is not a pure expand or collapse.
    std::optional<SmallVector<ReassociationIndices>> getReassociation();
  }];
}

def Mdl_TransposeOp : Mdl_Op<"transpose", [Pure, Mdl_SameDevice]> {
  let summary = "swap two dims";
  let arguments = (ins Mdl_Tensor:$input, I64Attr:$dim0, I64Attr:$dim1);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_PermuteOp : Mdl_Op<"permute", [Pure, Mdl_SameDevice]> {
  let summary = "permute dims: result dim i is input dim permutation[i]";
  let arguments = (ins Mdl_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_SliceOp : Mdl_Op<"slice", [Pure, Mdl_SameDevice]> {
  let summary = "basic indexing `x[i, a:b:s]` with Python semantics";
  let description = [{
    For each input dim d: `starts[d]`, `ends[d]` are Python bounds (negative
    counts from the end; both are clamped into [0, size], so a slice never
    reads outside the input), `steps[d]` >= 1. The dims listed in
    `index_dims` are single indices (`x[i]`): their slice has size 1 and the
    dim is dropped from the result. A dim an index cannot address (out of
    range at run time) reads the nearest valid position instead.
  }];
  let arguments = (ins Mdl_Tensor:$input, DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$ends,
                       DenseI64ArrayAttr:$steps, DenseI64ArrayAttr:$index_dims);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The extent of input dim `d` after slicing, for a static input extent.
    int64_t slicedExtent(int64_t d, int64_t inputExtent);
  }];
}

// Loops index with a variable known only at run time (`x[:, t]` in
// `for t in 0..T`): these take their positions as index operands.
def Mdl_SelectOp : Mdl_Op<"select", [Pure, Mdl_SameDevice]> {
  let summary = "`x[..., i, ...]` at run-time positions: the `dims` are dropped";
  let description = [{
    One index operand per entry of `dims` (ascending). A negative position
    counts from the end; a position outside the dim reads the nearest valid
    one, as mdl.slice does.
  }];
  let arguments = (ins Mdl_Tensor:$input, Variadic<Index>:$positions, DenseI64ArrayAttr:$dims);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input `[` $positions `]` attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_SelectScatterOp : Mdl_Op<"select_scatter", [Pure, Mdl_SameDevice]> {
  let summary = "`x[..., i, ...] = source` as a value: `input` with that part replaced";
  let description = [{
    torch.select_scatter over several dims: `source` has the shape of
    `input` without `dims`; positions are read as by mdl.select.
  }];
  let arguments = (ins Mdl_Tensor:$input, Mdl_Tensor:$source, Variadic<Index>:$positions,
                       DenseI64ArrayAttr:$dims);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat =
      "$input `[` $positions `]` `,` $source attr-dict `:` type($input) `,` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_ConcatOp : Mdl_Op<"concat", [Pure, Mdl_SameDevice]> {
  let summary = "concatenate along `dim`";
  let arguments = (ins Variadic<Mdl_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW)
//===----------------------------------------------------------------------===//

def Mdl_Conv2dOp : Mdl_Op<"conv2d", [Pure, Mdl_SameDevice]> {
  let summary = "2-D convolution: input [N,C,H,W], weight [O,C/groups,KH,KW], bias [O]";
  let arguments = (ins Mdl_Tensor:$input, Mdl_Tensor:$weight,
                       Optional<Mdl_Tensor>:$bias, DenseI64ArrayAttr:$stride,
                       DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                       I64Attr:$groups);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input `,` $weight (`,` $bias^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

class Mdl_Pool2dOp<string mnemonic> : Mdl_Op<mnemonic, [Pure, Mdl_SameDevice]> {
  let summary = "2-D pooling over [N,C,H,W] (padding counts as -inf for max, 0 for avg)";
  let arguments = (ins Mdl_Tensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Mdl_MaxPool2dOp : Mdl_Pool2dOp<"max_pool2d">;
def Mdl_AvgPool2dOp : Mdl_Pool2dOp<"avg_pool2d">;

def Mdl_AdaptiveAvgPool2dOp : Mdl_Op<"adaptive_avg_pool2d", [Pure, Mdl_SameDevice]> {
  let summary = "average pooling to a fixed [N,C,OH,OW] output";
  let arguments = (ins Mdl_Tensor:$input);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

def Mdl_EmbeddingOp : Mdl_Op<"embedding", [Pure, Mdl_SameDevice]> {
  let summary = "rows of weight [V,D] picked by integer indices: [...] -> [..., D]";
  let arguments = (ins Mdl_Tensor:$weight, Mdl_Tensor:$indices);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$weight `,` $indices attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Mdl_GatherOp : Mdl_Op<"gather", [Pure, Mdl_SameDevice]> {
  let summary = "torch.gather: out[i..] = input[i.. with dim replaced by index[i..]]";
  let arguments = (ins Mdl_Tensor:$input, Mdl_Tensor:$index, I64Attr:$dim);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input `,` $index attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Mdl_IndexSelectOp : Mdl_Op<"index_select", [Pure, Mdl_SameDevice]> {
  let summary = "select entries along `dim` by a 1-D index";
  let arguments = (ins Mdl_Tensor:$input, Mdl_Tensor:$index, I64Attr:$dim);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input `,` $index attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

class Mdl_LossOp<string mnemonic> : Mdl_Op<mnemonic, [Pure, Mdl_SameDevice]> {
  let summary = mnemonic # " over [N,C] scores and [N] class targets";
  let arguments = (ins Mdl_Tensor:$input, Mdl_Tensor:$target,
                       Optional<Mdl_Tensor>:$weight,
                       DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "$input `,` $target (`weight` $weight^)? attr-dict `:` "
                       "functional-type(operands, results)";
  let hasVerifier = 1;
}

def Mdl_CrossEntropyOp : Mdl_LossOp<"cross_entropy">;
def Mdl_NllLossOp : Mdl_LossOp<"nll_loss">;

//===----------------------------------------------------------------------===//
// Creation: one index operand per dynamic dim of the result
//===----------------------------------------------------------------------===//

class Mdl_CreationOp<string mnemonic, dag attrs = (ins)>
    : Mdl_Op<mnemonic, [Pure]> {
  let arguments = !con((ins Variadic<Index>:$dynamic_sizes), attrs);
  let results = (outs Mdl_Tensor:$result);
  let assemblyFormat = "(`(` $dynamic_sizes^ `)`)? attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Mdl_ZerosOp : Mdl_CreationOp<"zeros">;
def Mdl_OnesOp : Mdl_CreationOp<"ones">;
def Mdl_FullOp : Mdl_CreationOp<"full", (ins F64Attr:$value)>;
// randn: mdl_randn of runtime/ScalarOps.h: lowbias32 hashes of (2i, 2i + 1)
// mixed with the seed (mdl_randn_seed), Box-Muller in f32; independent of
// how the work is scheduled, so every back end draws the same numbers.
def Mdl_RandnOp : Mdl_CreationOp<"randn", (ins I64Attr:$seed)> {
  let summary = "standard normal samples, a pure function of (seed, element index)";
}
def Mdl_ArangeOp : Mdl_CreationOp<"arange", (ins F64Attr:$start, F64Attr:$step)> {
  let summary = "1-D: start + i * step";
}
def Mdl_EyeOp : Mdl_CreationOp<"eye"> { let summary = "2-D identity"; }

#endif // MDL_OPS_TD
