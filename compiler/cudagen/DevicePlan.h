//===- DevicePlan.h - What a compiled forward does, device by device -*- C++ -*-===//
//
// A DevicePlan is the output of the CUDA code generator and the input of the
// executors (emulated and real GPUs) and of the ahead-of-time artifact
// writer. It holds no MLIR types: a list of buffers, a list of steps run in
// order, a CPU-side MLIR module as text, and one CUDA C++ translation unit
// per GPU.
//
// Sizes are SizeExprs over the entry fn's symbolic dims (the batch `B` stays
// dynamic; everything the instance fixes is a constant). Each symbol is bound
// at run time from a dim of an input buffer (`Symbol::input`/`dim`).
//
// Calling convention of every kernel: its parameters are exactly
// `Launch::args`, in order; a buffer argument is a `T *` (T the buffer's
// element type, `const` for buffers the kernel only reads), a size argument
// is an `int64_t`. Buffers are dense row-major.
//
// docs/cuda-codegen.md describes the plan and its JSON form.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAGEN_DEVICEPLAN_H
#define MODELC_CUDAGEN_DEVICEPLAN_H

#include "runtime/Tensor.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace modelc::cudagen {

//===----------------------------------------------------------------------===//
// Size expressions
//===----------------------------------------------------------------------===//

/// Values of the symbolic dims by name (`B` = 4).
using SymbolValues = llvm::StringMap<int64_t>;

/// An integer expression over symbolic dims: constants, symbols, + - * and
/// floor/ceil division, min and max. Immutable and cheap to copy (shared
/// nodes). Constructors fold constants, so a fully static size is a constant.
/// Text form (also the JSON form): `ceildiv(B * 10, 256)`, `2 * B * 784 * 256`.
class SizeExpr {
public:
  enum class Kind : uint8_t { Constant, Symbol, Add, Sub, Mul, FloorDiv, CeilDiv, Min, Max };

  /// The constant 0.
  SizeExpr();
  SizeExpr(int64_t value);
  static SizeExpr symbol(llvm::StringRef name);
  static SizeExpr floorDiv(const SizeExpr &lhs, const SizeExpr &rhs);
  static SizeExpr ceilDiv(const SizeExpr &lhs, const SizeExpr &rhs);
  static SizeExpr min(const SizeExpr &lhs, const SizeExpr &rhs);
  static SizeExpr max(const SizeExpr &lhs, const SizeExpr &rhs);
  friend SizeExpr operator+(const SizeExpr &lhs, const SizeExpr &rhs);
  friend SizeExpr operator-(const SizeExpr &lhs, const SizeExpr &rhs);
  friend SizeExpr operator*(const SizeExpr &lhs, const SizeExpr &rhs);

  Kind kind() const;
  bool isConstant() const { return kind() == Kind::Constant; }
  /// The value of a constant expression.
  std::optional<int64_t> constant() const;
  /// The name of a symbol.
  llvm::StringRef symbolName() const;
  /// The operands of a binary expression.
  SizeExpr lhs() const;
  SizeExpr rhs() const;

  /// The value with `symbols` bound; an error names an unbound symbol or a
  /// division by zero.
  llvm::Expected<int64_t> evaluate(const SymbolValues &symbols) const;
  /// Symbols this expression uses, each once, in first-use order.
  void collectSymbols(llvm::SmallVectorImpl<std::string> &names) const;

  /// The text form; parse(str()) gives an equal expression.
  std::string str() const;
  /// A C++ expression over int64_t variables, each named `rename(symbol)`
  /// (the symbol's own name without `rename`).
  std::string cpp(llvm::function_ref<std::string(llvm::StringRef)> rename = nullptr) const;
  static llvm::Expected<SizeExpr> parse(llvm::StringRef text);

  friend bool operator==(const SizeExpr &lhs, const SizeExpr &rhs);

private:
  struct Node;
  explicit SizeExpr(std::shared_ptr<const Node> node) : node(std::move(node)) {}
  static SizeExpr binary(Kind kind, const SizeExpr &lhs, const SizeExpr &rhs);
  std::shared_ptr<const Node> node;
};

/// The product of `dims` (1 for none).
SizeExpr product(llvm::ArrayRef<SizeExpr> dims);

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

using BufferId = unsigned;

enum class BufferKind : uint8_t {
  State,     ///< a param or buffer of the model, bound from the weights
  Input,     ///< an argument of the entry fn
  Output,    ///< the entry fn's result (the executor hands it to the caller)
  Temporary, ///< produced and consumed inside the forward
};

struct Buffer {
  BufferId id = 0;
  runtime::Device device;
  runtime::DType dtype = runtime::DType::F32;
  llvm::SmallVector<SizeExpr, 4> shape;
  BufferKind kind = BufferKind::Temporary;
  /// State: the state_dict name ("enc.proj.weight") and index (state order,
  /// which is also the entry function's argument order). Input: the fn
  /// parameter index. Output: the result index.
  std::string name;
  unsigned index = 0;
  /// Set when this buffer is a view of another's bytes (a reshape moves no
  /// data): the executor allocates nothing and points at `viewOf`'s memory.
  std::optional<BufferId> viewOf;

  SizeExpr numElements() const { return product(shape); }
  SizeExpr byteSize() const;
};

/// A symbolic dim of the entry fn and where its value comes from.
struct Symbol {
  std::string name;
  BufferId input = 0; ///< an Input buffer
  unsigned dim = 0;   ///< the dim of that buffer that carries the value
};

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// Calls a function of the plan's CPU module (an outlined cpu region).
/// Arguments are cpu buffers; each result is written into a caller-allocated
/// cpu buffer (the CPU pipeline turns results into out-params).
struct CpuCall {
  std::string function;
  std::vector<BufferId> arguments;
  std::vector<BufferId> results;
};

/// One kernel parameter: a buffer's device pointer or an int64_t size.
struct KernelArg {
  enum class Kind : uint8_t { Buffer, Size };
  Kind kind = Kind::Buffer;
  BufferId buffer = 0;
  SizeExpr size;
  static KernelArg ofBuffer(BufferId id) { return {Kind::Buffer, id, SizeExpr()}; }
  static KernelArg ofSize(SizeExpr size) { return {Kind::Size, 0, std::move(size)}; }
};

/// Launches a kernel of `device`'s translation unit. A grid dimension that
/// evaluates to 0 means the launch has no work and is skipped.
struct Launch {
  int device = 0;
  std::string kernel;
  std::array<SizeExpr, 3> grid = {SizeExpr(1), SizeExpr(1), SizeExpr(1)};
  std::array<SizeExpr, 3> block = {SizeExpr(1), SizeExpr(1), SizeExpr(1)};
  SizeExpr dynamicSharedBytes;
  std::vector<KernelArg> args;
};

/// Copies a whole buffer to a buffer of the same dtype and shape on another
/// device (`.to`): host to device, device to host, or device to device.
struct Copy {
  BufferId source = 0;
  BufferId destination = 0;
};

using Step = std::variant<CpuCall, Launch, Copy>;

//===----------------------------------------------------------------------===//
// GEMMs as a library takes them
//===----------------------------------------------------------------------===//

/// One matrix operand of a GemmCall, row-major: element (row, col) of batch
/// b is at b * batchStride + row * ld + col, or at b * batchStride + col * ld
/// + row when `transposed` (a transposed view read in place).
struct GemmOperand {
  BufferId buffer = 0;
  bool transposed = false;
  SizeExpr ld;
  /// 0: one matrix for every batch (a broadcast operand).
  SizeExpr batchStride;
};

/// What a GEMM library applies after the product (cuBLASLt's epilogues).
enum class GemmActivation : uint8_t {
  None,
  Relu,
  /// gelu with the tanh approximation (cuBLASLt's GELU); the exact gelu is
  /// left to the `after` kernel.
  GeluTanh,
};

/// A matrix product of the plan as a GEMM library (cuBLASLt) can take it,
/// beside the plan's own kernels for it; an executor runs one or the other:
///
///   out[b] = activation(a[b] @ b[b] + bias + residual[b]),  b < batch,
///
/// a: m x k, b: k x n, `out` dense [batch, m, n], `bias` a vector of n added
/// to every row, `residual` a dense buffer shaped like `out`; then, when the
/// plan's epilogue holds more than that, the `after` kernel rewrites `out`
/// in place with the rest. Steps [firstStep, firstStep + stepCount) are the
/// plan's own kernels for the same product and epilogue.
struct GemmCall {
  int device = 0;
  unsigned firstStep = 0, stepCount = 0;
  runtime::DType inputType = runtime::DType::F32;  ///< of `a` and `b`
  runtime::DType outputType = runtime::DType::F32; ///< of `out`, `bias`, `residual`
  SizeExpr m, n, k, batch;
  GemmOperand a, b;
  BufferId out = 0;
  std::optional<BufferId> bias, residual;
  GemmActivation activation = GemmActivation::None;
  /// f32 products may use TF32 tensor cores (the user asked for --tf32).
  bool tf32 = false;
  /// An elementwise kernel of the device's translation unit (not a step)
  /// that applies the rest of the epilogue to `out` in place.
  std::optional<Launch> after;
  /// The name of the plan's (first) own kernel for it, for reports.
  std::string label;
};

llvm::StringRef gemmActivationName(GemmActivation activation);

//===----------------------------------------------------------------------===//
// Kernels and the plan
//===----------------------------------------------------------------------===//

/// What the report and the profilers know about one kernel.
struct KernelInfo {
  std::string name;
  /// What it computes: "elementwise", "matmul", "reduction", "softmax",
  /// "layer_norm", "conv2d", "pool", "copy", "fill", ...
  std::string category;
  /// The .mdl lines it came from: "mlp.mdl:12", one entry per line.
  std::vector<std::string> sourceLines;
  /// Floating point operations (a multiply-add counts 2) and bytes of global
  /// memory read and written, assuming every input is read once.
  SizeExpr flops, bytesRead, bytesWritten;
};

/// One GPU's code: a single CUDA C++ translation unit that compiles with
/// NVRTC and, against runtime/cuda/emulator/cuda_emulation.h, with the host
/// compiler.
struct DeviceCode {
  int device = 0;
  std::string source;
  std::vector<KernelInfo> kernels;
};

struct DevicePlan {
  /// The entry fn ("forward").
  std::string entry;
  std::vector<Symbol> symbols;
  std::vector<Buffer> buffers; ///< indexed by BufferId
  std::vector<Step> steps;
  /// MLIR (mdl dialect on cpu tensors) holding every CpuCall's function;
  /// empty when nothing runs on the cpu.
  std::string cpuModule;
  std::vector<DeviceCode> devices; ///< one per GPU used, by device index
  /// The products a GEMM library could run instead of their own kernels.
  std::vector<GemmCall> gemms;

  const Buffer &buffer(BufferId id) const { return buffers[id]; }
  /// The buffers of one kind in `index` order (state, inputs, outputs).
  std::vector<BufferId> buffersOfKind(BufferKind kind) const;
  /// The code of cuda:`device`, or null.
  const DeviceCode *deviceCode(int device) const;
  /// The metadata of a kernel, or null.
  const KernelInfo *kernel(int device, llvm::StringRef name) const;
  /// The symbol values a set of input shapes implies (one shape per Input
  /// buffer, in index order).
  llvm::Expected<SymbolValues> bindSymbols(llvm::ArrayRef<runtime::Shape> inputShapes) const;
  /// For each buffer, the index of the last step that uses it (-1: none), so
  /// an executor can free temporaries early.
  std::vector<int> lastUses() const;
};

/// JSON form of a plan (schema in docs/cuda-codegen.md), and back. Reading
/// validates: unknown kinds, buffer ids out of range, unparsable sizes are
/// errors naming the JSON path.
llvm::json::Value toJSON(const DevicePlan &plan);
llvm::Expected<DevicePlan> planFromJSON(const llvm::json::Value &value);
llvm::Expected<DevicePlan> parsePlan(llvm::StringRef jsonText);

llvm::StringRef bufferKindName(BufferKind kind);

} // namespace modelc::cudagen

#endif // MODELC_CUDAGEN_DEVICEPLAN_H
