//===- KernelSource.h - CUDA C++ text for the generated kernels -*- C++ -*-===//
//
// Readable CUDA C++ generators, one per kernel family, over plain
// descriptions (no MLIR): fused elementwise expressions, tiled matmul and
// implicit-GEMM conv2d with an elementwise epilogue, block reductions,
// softmax, layer norm, pooling, gathers, losses and random fills. Each
// returns the kernel's text plus the Launch and KernelInfo the plan needs.
//
// Every kernel is `extern "C" __global__`, takes its buffers as `T *` and
// its symbolic dims as `int64_t`, and uses only what both NVRTC and
// runtime/cuda/emulator/cuda_emulation.h provide.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAGEN_KERNELSOURCE_H
#define MODELC_CUDAGEN_KERNELSOURCE_H

#include "cudagen/DevicePlan.h"
#include "cudagen/GemmKernels.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace modelc::cudagen {

/// A buffer as a kernel sees it: id, dtype and symbolic shape.
struct BufferRef {
  BufferId id = 0;
  runtime::DType dtype = runtime::DType::F32;
  llvm::SmallVector<SizeExpr, 4> shape;
};

/// An elementwise expression evaluated at each coordinate of an output
/// shape. Leaves read buffers through a dim map (broadcast, transpose and
/// permute are all dim maps), or compute from the coordinates.
struct Expr {
  enum class Kind {
    Load,     ///< buffer element; `dimMap[j]` = the output dim of buffer dim j, -1 = 0
    Constant, ///< `value`
    Arange,   ///< start + coord(dimMap[0]) * step
    Eye,      ///< coord(dimMap[0]) == coord(dimMap[1])
    Unary,    ///< `op`: relu gelu gelu_tanh silu tanh sigmoid exp log sqrt neg abs
    Binary,   ///< `op`: add sub mul div pow max min
    Compare,  ///< `op`: eq ne lt le gt ge
    Select,   ///< operands: condition, then, else
    Cast,     ///< operands[0] converted to `dtype`
    Epilogue, ///< the accumulator of the producer kernel (matmul, conv2d)
  };
  Kind kind = Kind::Constant;
  runtime::DType dtype = runtime::DType::F32;
  std::string op;
  double value = 0, start = 0, step = 1;
  BufferRef buffer;
  llvm::SmallVector<int, 4> dimMap;
  std::vector<std::shared_ptr<const Expr>> operands;
};
using ExprPtr = std::shared_ptr<const Expr>;

/// Reads `buffer` (of `rank` dims) element by element at the kernel's own
/// coordinates, as `dtype`.
ExprPtr identityLoad(BufferRef buffer, runtime::DType dtype, size_t rank);

/// Where a kernel came from, for its comment and its KernelInfo.
struct KernelOrigin {
  std::string name;
  std::vector<std::string> sourceLines;
};

/// One generated kernel.
struct GeneratedKernel {
  std::string source;
  Launch launch;
  KernelInfo info;
};

/// The helper functions every translation unit starts with.
std::string kernelPrelude();
/// The C type of a stored element: "float", "double", "int32_t", "int64_t",
/// "bool", and the prelude's 16-bit "mdl_f16" and "mdl_bf16" (arithmetic on
/// those happens in float).
llvm::StringRef cType(runtime::DType dtype);

/// `out[i] = expr(coords of i)` over `out.shape`.
GeneratedKernel elementwiseKernel(const KernelOrigin &origin, int device, const ExprPtr &expr,
                                  const BufferRef &out);

/// An operand of a matmul: a buffer read through a dim map as for
/// Expr::Kind::Load, with the operand's logical shape [..., rows, cols].
struct MatmulOperand {
  BufferRef buffer;
  llvm::SmallVector<int, 4> dimMap; ///< buffer dim -> logical dim (-1: broadcast)
  llvm::SmallVector<SizeExpr, 4> shape;
};

/// Makes the temporary buffer a split-K GEMM writes its partial sums to.
using WorkspaceMaker =
    std::function<BufferRef(runtime::DType, llvm::SmallVector<SizeExpr, 4> shape)>;

/// [..., M, K] @ [..., K, N] on the register-tiled GEMM (GemmKernels.h): one
/// kernel per size class, each launched only where its class applies, and
/// after a kernel that may split K the kernel adding its slices. `epilogue`
/// (may be null) maps the accumulator (an Expr::Kind::Epilogue leaf) to the
/// stored value, evaluated at the output coordinates. `precision` applies
/// to f32 products only (TF32 tensor cores when asked; others stay exact).
std::vector<GeneratedKernel> matmulKernels(const KernelOrigin &origin, int device,
                                           const MatmulOperand &lhs, const MatmulOperand &rhs,
                                           const ExprPtr &epilogue, const BufferRef &out,
                                           const WorkspaceMaker &makeWorkspace,
                                           GemmPrecision precision = GemmPrecision::Exact);

struct Conv2dParams {
  int64_t strideH = 1, strideW = 1, padH = 0, padW = 0, dilationH = 1, dilationW = 1, groups = 1;
};
/// Implicit-GEMM conv2d (NCHW) on the same tiles: rows are a group's output
/// channels, columns the output pixels; bias optional; kernels and epilogue
/// as for matmulKernels.
std::vector<GeneratedKernel>
conv2dKernels(const KernelOrigin &origin, int device, const BufferRef &input,
              const BufferRef &weight, const std::optional<BufferRef> &bias,
              const Conv2dParams &params, const ExprPtr &epilogue, const BufferRef &out,
              const WorkspaceMaker &makeWorkspace, GemmPrecision precision = GemmPrecision::Exact);

enum class ReduceKind { Sum, Mean, Max };
/// Reduces `dims` of `input` (one block per output element).
GeneratedKernel reduceKernel(const KernelOrigin &origin, int device, ReduceKind kind,
                             const BufferRef &input, llvm::ArrayRef<int64_t> dims,
                             const BufferRef &out);

/// softmax or log_softmax along `dim` (one block per row).
GeneratedKernel softmaxKernel(const KernelOrigin &origin, int device, bool logSoftmax,
                              const BufferRef &input, int64_t dim, const BufferRef &out);

/// Layer norm over the trailing `normalizedRank` dims.
GeneratedKernel layerNormKernel(const KernelOrigin &origin, int device, const BufferRef &input,
                                const std::optional<BufferRef> &weight,
                                const std::optional<BufferRef> &bias, int64_t normalizedRank,
                                double epsilon, const BufferRef &out);

enum class PoolKind { Max, Avg, AdaptiveAvg };
GeneratedKernel pool2dKernel(const KernelOrigin &origin, int device, PoolKind kind,
                             const BufferRef &input, llvm::ArrayRef<int64_t> kernel,
                             llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                             const BufferRef &out);

enum class GatherKind { Embedding, Gather, IndexSelect };
/// Index reads; indices are clamped into range like the cpu back end.
GeneratedKernel gatherKernel(const KernelOrigin &origin, int device, GatherKind kind,
                             const BufferRef &input, const BufferRef &index, int64_t dim,
                             const BufferRef &out);

/// Writes `input` into `out` at `offset` along `dim` (one kernel per concat
/// operand).
GeneratedKernel concatPieceKernel(const KernelOrigin &origin, int device, const BufferRef &input,
                                  int64_t dim, const SizeExpr &offset, const BufferRef &out);

/// Basic indexing `x[i, a:b:s]`: input dim d is read at `starts[d] +
/// steps[d] * c` of the output coordinate c it maps to (`outDimOf[d]`), or at
/// `starts[d]` when it is indexed away (`outDimOf[d]` = -1). Starts are
/// already normalised into the dim.
GeneratedKernel sliceKernel(const KernelOrigin &origin, int device, const BufferRef &input,
                            llvm::ArrayRef<SizeExpr> starts, llvm::ArrayRef<int64_t> steps,
                            llvm::ArrayRef<int> outDimOf, const BufferRef &out);

/// torch.select_scatter at fixed positions: `out` is `input` with the
/// element at `positions[k]` of each dim `dims[k]` taken from `source` (the
/// shape of `out` without `dims`). Positions are already normalised into
/// their dims. With `input`, one pass over `out` reads each element from
/// `input` or `source`; without it the kernel writes `source` into `out` in
/// place and leaves the rest of `out` as it is.
GeneratedKernel selectScatterKernel(const KernelOrigin &origin, int device,
                                    const std::optional<BufferRef> &input, const BufferRef &source,
                                    llvm::ArrayRef<int64_t> dims,
                                    llvm::ArrayRef<SizeExpr> positions, const BufferRef &out);

/// cross_entropy (`fromLogits`) or nll_loss over [N, C] and [N] targets.
GeneratedKernel lossKernel(const KernelOrigin &origin, int device, bool fromLogits,
                           const BufferRef &input, const BufferRef &target,
                           const std::optional<BufferRef> &weight, llvm::StringRef reduction,
                           const BufferRef &out);

/// Standard normal samples: a pure function of (seed, row-major index),
/// bit-compatible with the cpu back end's generator.
GeneratedKernel randnKernel(const KernelOrigin &origin, int device, int64_t seed,
                            const BufferRef &out);

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_KERNELSOURCE_H
