//===- EpilogueMatch.h - elementwise loop bodies as library epilogues -----===//
//
// The runtime's matmul and conv entries apply bias adds, residual adds and
// activations while each block of the product is in cache (oneDNN post-ops;
// jit/GemmKernels.h has the encoding). These helpers recognise such an
// epilogue in the body of an elementwise linalg.generic on buffers, and
// check that moving a library call past other ops is safe.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_LOWER_EPILOGUEMATCH_H
#define MODELC_LOWER_EPILOGUEMATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"

namespace modelc::lower {

/// Epilogue steps as jit/GemmKernels.h encodes them (four bits each, the
/// first step in the low bits).
enum EpilogueStep : int64_t {
  kEpilogueAdd = 1,
  kEpilogueRelu = 2,
  kEpilogueGelu = 3,
  kEpilogueTanh = 4,
  kEpilogueSilu = 5,
  kEpilogueSigmoid = 6,
};
inline constexpr size_t kMaxEpilogueSteps = 8;
/// The bit above the steps that says B is the same on every call
/// (jit/GemmKernels.h).
inline constexpr int64_t kEpilogueConstantB = int64_t(1) << 62;

struct EpilogueMatch {
  llvm::SmallVector<int64_t> steps;
  /// The generic input (block argument number) each Add step reads.
  llvm::SmallVector<unsigned> addInputs;

  int64_t code() const;
};

/// Whether the generic's yielded value is `base` (a block argument) with
/// epilogue steps applied -- adds of block arguments `addable` allows,
/// ReLU, exact GELU, tanh, SiLU and sigmoid as ElementwiseLowering builds
/// them -- and appends those steps to `match`.
bool matchEpilogueBody(mlir::linalg::GenericOp generic, mlir::Value base,
                       llvm::ArrayRef<bool> addable, EpilogueMatch &match);

/// The buffer a chain of views (subview, cast, reshape, transpose) reads.
mlir::Value rootBuffer(mlir::Value value);

/// Whether `buffer` is (a view of) an entry block argument of its fn marked
/// `mdl.state` (kStateArgAttr): the same values on every call, so the
/// runtime may keep weights read from it in a layout of its own.
bool isStateBuffer(mlir::Value buffer);

/// Whether `op`, or an op nested in it, may write or free one of `roots`
/// (unknown effects count as writes).
bool mayWriteAny(mlir::Operation *op, llvm::ArrayRef<mlir::Value> roots);

/// Whether some op strictly between `from` and `to` (same block) may write
/// one of `roots`.
bool writtenBetween(mlir::Operation *from, mlir::Operation *to, llvm::ArrayRef<mlir::Value> roots);

/// Whether `value` is an arith.constant float equal to `expected` (within
/// 1e-6 relative; an infinity exactly).
bool isFloatConstant(mlir::Value value, double expected);

/// The private runtime function `name(argTypes) -> ()` with a C interface,
/// declared once per module: what the library-call passes call.
mlir::func::FuncOp declareRuntimeFunction(mlir::ModuleOp module, llvm::StringRef name,
                                          llvm::ArrayRef<mlir::Type> argTypes);

} // namespace modelc::lower

#endif // MODELC_LOWER_EPILOGUEMATCH_H
