//===- Partition.cpp - Split an mdl function by device into a plan --------===//
//
// One walk over the entry block in program order. cpu ops collect into the
// open cpu region, which is outlined when anything else comes. cuda ops
// produce *pending* values where they can (an elementwise expression, a
// transposed view, a matmul or conv2d whose epilogue is still open) and are
// materialised into a buffer, by a kernel, only when a consumer needs memory:
// a kernel that cannot fuse, a copy, the result, or a second use. That
// laziness is the fusion: a chain of elementwise ops with one use each
// becomes one kernel, and folds into the matmul or conv2d that produced its
// input.
//
//===----------------------------------------------------------------------===//

#include "cudagen/Partition.h"
#include "cudagen/KernelSource.h"
#include "cudagen/LibraryGemm.h"

#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <limits>

#include <map>

namespace modelc::cudagen {

using runtime::Device;
using runtime::DType;

namespace {

/// The "file.mdl:12" of a location, looking through names, call sites and
/// fusions.
std::optional<std::string> sourceLine(mlir::Location loc) {
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}", llvm::sys::path::filename(file.getFilename().getValue()),
                         file.getLine())
        .str();
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return sourceLine(name.getChildLoc());
  if (auto call = mlir::dyn_cast<mlir::CallSiteLoc>(loc))
    return sourceLine(call.getCallee());
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location inner : fused.getLocations())
      if (std::optional<std::string> line = sourceLine(inner))
        return line;
  return std::nullopt;
}

std::string describeOp(mlir::Operation *op) {
  std::string where = sourceLine(op->getLoc()).value_or("an unknown line");
  return llvm::formatv("`{0}` at {1}", op->getName().getStringRef(), where).str();
}

Device deviceOf(mlir::Type type) {
  mlir::mdl::DeviceAttr attr = mlir::mdl::getDevice(type);
  if (!attr || attr.isCpu())
    return Device::cpu();
  return Device::cuda(int(attr.getIndex()));
}

bool sameShape(llvm::ArrayRef<SizeExpr> a, llvm::ArrayRef<SizeExpr> b) {
  return a.size() == b.size() && llvm::all_of(llvm::zip(a, b), [](auto pair) {
           return std::get<0>(pair) == std::get<1>(pair);
         });
}

bool isStaticOne(const SizeExpr &e) { return e.constant() == 1; }

constexpr llvm::StringLiteral runTimePositionError =
    "indexing with a position known only at run time (the variable of a loop over a run-time "
    "range) is not supported on cuda yet; a range of at most 16 steps known at compile time is "
    "unrolled, and then every position is a constant";

/// `from` clamped into a dim of `extent`: into [0, extent - 1] for an index,
/// [0, extent] for a slice start, as the cpu back end does.
SizeExpr clampedPosition(const SizeExpr &from, const SizeExpr &extent, bool isIndex) {
  SizeExpr last = isIndex ? extent - SizeExpr(1) : extent;
  return SizeExpr::min(SizeExpr::max(from, SizeExpr(0)), last);
}
/// Where Python reads position `position` of a dim of `extent`: negative
/// counts from the end, then clamped into the dim.
SizeExpr pythonPosition(int64_t position, const SizeExpr &extent, bool isIndex) {
  return clampedPosition(position < 0 ? extent + SizeExpr(position) : SizeExpr(position), extent,
                         isIndex);
}

/// A matmul or conv2d whose result is not written yet: an elementwise
/// consumer may still attach an epilogue.
struct Producer {
  enum class Kind { Matmul, Conv2d } kind = Kind::Matmul;
  MatmulOperand lhs, rhs;               // matmul
  BufferRef input, weight;              // conv2d
  std::optional<BufferRef> bias;        // conv2d
  Conv2dParams conv;                    // conv2d
  std::vector<std::string> sourceLines; // of the producing op
};

/// What the planner knows about one tensor value.
struct ValueInfo {
  Device device;
  DType dtype = DType::F32;
  llvm::SmallVector<SizeExpr, 4> shape;
  /// Set once the value is in memory.
  std::optional<BufferId> buffer;
  /// cuda, not in memory yet: an elementwise expression over `shape`...
  ExprPtr pending;
  /// ...whose Epilogue leaf (if any) is this producer's accumulator; or,
  /// with no `pending`, the raw result of this producer.
  std::shared_ptr<Producer> producer;
  /// The .mdl lines of every op folded into `pending`.
  std::vector<std::string> sourceLines;
  /// The mnemonics of the ops folded in, for the kernel's name.
  std::vector<std::string> opNames;
};

void appendUnique(std::vector<std::string> &to, llvm::ArrayRef<std::string> from) {
  for (const std::string &s : from)
    if (!llvm::is_contained(to, s))
      to.push_back(s);
}

/// `expr` over `from` re-expressed over `to` (right-aligned broadcasting).
ExprPtr rebase(const ExprPtr &expr, llvm::ArrayRef<SizeExpr> from, llvm::ArrayRef<SizeExpr> to) {
  int shift = int(to.size()) - int(from.size());
  if (shift == 0 && sameShape(from, to))
    return expr;
  llvm::DenseMap<const Expr *, ExprPtr> done;
  std::function<ExprPtr(const ExprPtr &)> walk = [&](const ExprPtr &e) -> ExprPtr {
    auto it = done.find(e.get());
    if (it != done.end())
      return it->second;
    auto copy = std::make_shared<Expr>(*e);
    for (int &d : copy->dimMap) {
      if (d < 0)
        continue;
      int target = d + shift;
      d = isStaticOne(from[d]) && !isStaticOne(to[target]) ? -1 : target;
    }
    for (ExprPtr &operand : copy->operands)
      operand = walk(operand);
    done[e.get()] = copy;
    return copy;
  };
  return walk(expr);
}

/// `expr` whose output dim i becomes dim `inverse[i]` (transpose/permute).
ExprPtr remapDims(const ExprPtr &expr, llvm::ArrayRef<int> newDimOfOld) {
  llvm::DenseMap<const Expr *, ExprPtr> done;
  std::function<ExprPtr(const ExprPtr &)> walk = [&](const ExprPtr &e) -> ExprPtr {
    auto it = done.find(e.get());
    if (it != done.end())
      return it->second;
    auto copy = std::make_shared<Expr>(*e);
    for (int &d : copy->dimMap)
      if (d >= 0)
        d = newDimOfOld[d];
    for (ExprPtr &operand : copy->operands)
      operand = walk(operand);
    done[e.get()] = copy;
    return copy;
  };
  return walk(expr);
}

ExprPtr makeExpr(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

class Planner {
public:
  Planner(mlir::ModuleOp module, const PlanOptions &options)
      : module(module), options(options), cpuBuilder(module.getContext()) {}

  llvm::Expected<DevicePlan> run();

private:
  // Buffers and values.
  BufferId newBuffer(const ValueInfo &info, BufferKind kind = BufferKind::Temporary);
  BufferRef ref(BufferId id) const;
  llvm::Error fail(mlir::Operation *op, const llvm::Twine &what);
  llvm::Expected<ValueInfo> describeValue(mlir::Value value);
  ValueInfo &info(mlir::Value value) { return values[value.getAsOpaquePointer()]; }
  /// An index value as a size expression over the inputs' dims: constants,
  /// `tensor.dim` of a value whose shape is known, and +, -, *, floor and
  /// ceil division, min and max of those (`zeros([B, 2 * H])`, `x / T`);
  /// nullopt for anything else (the variable of a loop).
  std::optional<SizeExpr> indexSize(mlir::Value index);
  /// Where an mdl.select / mdl.select_scatter reads each of `dims` of a
  /// tensor of `shape`: constant positions (as in an unrolled loop) as Python
  /// reads them, positions computed from the inputs' dims clamped into the
  /// dim; nullopt when one is known only at run time otherwise.
  std::optional<llvm::SmallVector<SizeExpr, 4>> selectPositions(mlir::ValueRange positions,
                                                                llvm::ArrayRef<int64_t> dims,
                                                                llvm::ArrayRef<SizeExpr> shape);

  // Steps.
  void addKernel(GeneratedKernel kernel);
  /// Records the matmul whose own kernels are the steps from `firstStep` on
  /// as a GemmCall where a library can run it instead.
  void describeForLibrary(const Producer &p, const ExprPtr &epilogue, BufferId target,
                          const KernelOrigin &origin, size_t firstStep);
  std::string kernelName(llvm::ArrayRef<std::string> opNames);
  llvm::Expected<BufferId> materialize(mlir::Value value,
                                       std::optional<BufferId> into = std::nullopt);
  llvm::Expected<BufferId> materialize(ValueInfo &v, std::optional<BufferId> into);
  llvm::Error flushCpuRegion();

  // cuda ops.
  llvm::Error planCudaOp(mlir::Operation *op);
  llvm::Error planElementwise(mlir::Operation *op);
  llvm::Expected<ExprPtr> operandExpr(mlir::Value operand, llvm::ArrayRef<SizeExpr> resultShape,
                                      ValueInfo &result);
  llvm::Expected<MatmulOperand> matmulOperand(mlir::Value value);
  llvm::Error planReturn(mlir::func::ReturnOp ret);
  llvm::Error planTransfer(mlir::mdl::TransferOp op);
  llvm::Expected<llvm::SmallVector<SizeExpr, 4>> resultShape(mlir::Operation *op);
  void finishValue(mlir::Operation *op, ValueInfo &v);

  mlir::ModuleOp module;
  const PlanOptions &options;
  DevicePlan plan;
  llvm::DenseMap<void *, ValueInfo> values;
  std::map<int, std::vector<GeneratedKernel>> kernels;
  unsigned kernelCount = 0;

  mlir::OpBuilder cpuBuilder;
  mlir::OwningOpRef<mlir::ModuleOp> cpuModule;
  llvm::SetVector<mlir::Operation *> cpuRegion;
  unsigned cpuRegionCount = 0;
};

llvm::Error Planner::fail(mlir::Operation *op, const llvm::Twine &what) {
  return llvm::createStringError(llvm::formatv("{0}: {1}", describeOp(op), what.str()).str());
}

BufferId Planner::newBuffer(const ValueInfo &v, BufferKind kind) {
  Buffer b;
  b.id = BufferId(plan.buffers.size());
  b.device = v.device;
  b.dtype = v.dtype;
  b.shape = v.shape;
  b.kind = kind;
  plan.buffers.push_back(std::move(b));
  return plan.buffers.back().id;
}

BufferRef Planner::ref(BufferId id) const {
  const Buffer &b = plan.buffers[id];
  return BufferRef{id, b.dtype, b.shape};
}

std::string Planner::kernelName(llvm::ArrayRef<std::string> opNames) {
  std::string name = "k" + std::to_string(kernelCount++);
  unsigned shown = 0;
  for (const std::string &op : opNames) {
    // Constants folded into an expression say nothing about the kernel.
    if (op == "full" || op == "zeros" || op == "ones")
      continue;
    if (shown++ == 4) {
      name += "_etc";
      break;
    }
    name += "_" + op;
  }
  return name;
}

void Planner::addKernel(GeneratedKernel kernel) {
  plan.steps.push_back(kernel.launch);
  kernels[kernel.launch.device].push_back(std::move(kernel));
}

void Planner::describeForLibrary(const Producer &p, const ExprPtr &epilogue, BufferId target,
                                 const KernelOrigin &origin, size_t firstStep) {
  ExprPtr rest;
  std::optional<GemmCall> call =
      describeLibraryGemm(p.lhs, p.rhs, epilogue, ref(target), options.tf32, rest);
  if (!call)
    return;
  int device = plan.buffers[target].device.index;
  call->device = device;
  call->firstStep = unsigned(firstStep);
  call->stepCount = unsigned(plan.steps.size() - firstStep);
  call->label = origin.name;
  if (rest) {
    // The part of the epilogue the library cannot apply, run on its result
    // in place: a kernel of the translation unit, launched only then.
    KernelOrigin after = origin;
    after.name += "_after_library";
    GeneratedKernel kernel = elementwiseKernel(after, device, rest, ref(target));
    call->after = kernel.launch;
    kernels[device].push_back(std::move(kernel));
  }
  plan.gemms.push_back(std::move(*call));
}

llvm::Expected<BufferId> Planner::materialize(mlir::Value value, std::optional<BufferId> into) {
  return materialize(info(value), into);
}

llvm::Expected<BufferId> Planner::materialize(ValueInfo &v, std::optional<BufferId> into) {
  if (v.buffer && !into)
    return *v.buffer;
  BufferId target = into ? *into : newBuffer(v);
  KernelOrigin origin{kernelName(v.opNames), v.sourceLines};
  int device = v.device.index;
  ExprPtr expr = v.pending;
  if (!expr && v.buffer) {
    // Copy an existing buffer into `into` (an output that must own its bytes).
    expr = identityLoad(ref(*v.buffer), v.dtype, v.shape.size());
    origin.name = kernelName({"copy"});
  }
  if (v.producer) {
    const Producer &p = *v.producer;
    for (const std::string &line : p.sourceLines)
      if (!llvm::is_contained(origin.sourceLines, line))
        origin.sourceLines.insert(origin.sourceLines.begin(), line);
    GemmPrecision precision = options.tf32 ? GemmPrecision::TF32 : GemmPrecision::Exact;
    // A split-K GEMM's partial sums: a temporary of their own.
    WorkspaceMaker workspace = [&](DType dtype, llvm::SmallVector<SizeExpr, 4> shape) {
      ValueInfo partial;
      partial.device = v.device;
      partial.dtype = dtype;
      partial.shape = std::move(shape);
      return ref(newBuffer(partial));
    };
    size_t firstStep = plan.steps.size();
    std::vector<GeneratedKernel> gemm =
        p.kind == Producer::Kind::Matmul
            ? matmulKernels(origin, device, p.lhs, p.rhs, expr, ref(target), workspace, precision)
            : conv2dKernels(origin, device, p.input, p.weight, p.bias, p.conv, expr, ref(target),
                            workspace, precision);
    for (GeneratedKernel &kernel : gemm)
      addKernel(std::move(kernel));
    if (p.kind == Producer::Kind::Matmul)
      describeForLibrary(p, expr, target, origin, firstStep);
  } else {
    addKernel(elementwiseKernel(origin, device, expr, ref(target)));
  }
  v.pending = nullptr;
  v.producer = nullptr;
  if (!into)
    v.buffer = target;
  return target;
}

llvm::Expected<ValueInfo> Planner::describeValue(mlir::Value value) {
  ValueInfo v;
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type)
    return llvm::createStringError("a value that is not a ranked tensor");
  std::optional<DType> dtype = dtypeOf(type);
  if (!dtype)
    return llvm::createStringError("an element type the CUDA back end does not know");
  v.dtype = *dtype;
  v.device = deviceOf(type);
  return v;
}

void Planner::finishValue(mlir::Operation *op, ValueInfo &v) {
  if (std::optional<std::string> line = sourceLine(op->getLoc()))
    appendUnique(v.sourceLines, {*line});
  llvm::StringRef name = op->getName().stripDialect();
  v.opNames.push_back(name.str());
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::optional<SizeExpr> Planner::indexSize(mlir::Value index) {
  mlir::Operation *def = index.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto constant = mlir::dyn_cast<mlir::arith::ConstantOp>(def)) {
    auto attr = mlir::dyn_cast<mlir::IntegerAttr>(constant.getValue());
    return attr ? std::optional<SizeExpr>(SizeExpr(attr.getInt())) : std::nullopt;
  }
  if (auto dim = mlir::dyn_cast<mlir::tensor::DimOp>(def)) {
    std::optional<int64_t> d = dim.getConstantIndex();
    auto found = values.find(dim.getSource().getAsOpaquePointer());
    if (!d || found == values.end() || *d < 0 || *d >= int64_t(found->second.shape.size()))
      return std::nullopt;
    return found->second.shape[size_t(*d)];
  }
  if (auto cast = mlir::dyn_cast<mlir::arith::IndexCastOp>(def))
    return indexSize(cast.getIn());
  if (def->getNumOperands() != 2)
    return std::nullopt;
  std::optional<SizeExpr> l = indexSize(def->getOperand(0)), r = indexSize(def->getOperand(1));
  if (!l || !r)
    return std::nullopt;
  // Dims are never negative, so C's truncating division is the floor.
  return llvm::TypeSwitch<mlir::Operation *, std::optional<SizeExpr>>(def)
      .Case<mlir::arith::AddIOp>([&](auto) { return *l + *r; })
      .Case<mlir::arith::SubIOp>([&](auto) { return *l - *r; })
      .Case<mlir::arith::MulIOp>([&](auto) { return *l * *r; })
      .Case<mlir::arith::DivSIOp, mlir::arith::DivUIOp, mlir::arith::FloorDivSIOp>(
          [&](auto) { return SizeExpr::floorDiv(*l, *r); })
      .Case<mlir::arith::CeilDivSIOp, mlir::arith::CeilDivUIOp>(
          [&](auto) { return SizeExpr::ceilDiv(*l, *r); })
      .Case<mlir::arith::MinSIOp, mlir::arith::MinUIOp>([&](auto) { return SizeExpr::min(*l, *r); })
      .Case<mlir::arith::MaxSIOp, mlir::arith::MaxUIOp>([&](auto) { return SizeExpr::max(*l, *r); })
      .Default([](mlir::Operation *) { return std::nullopt; });
}

std::optional<llvm::SmallVector<SizeExpr, 4>>
Planner::selectPositions(mlir::ValueRange positions, llvm::ArrayRef<int64_t> dims,
                         llvm::ArrayRef<SizeExpr> shape) {
  llvm::SmallVector<SizeExpr, 4> starts;
  for (auto [position, dim] : llvm::zip(positions, dims)) {
    auto constant = position.getDefiningOp<mlir::arith::ConstantOp>();
    if (auto attr = constant ? mlir::dyn_cast<mlir::IntegerAttr>(constant.getValue()) : nullptr) {
      starts.push_back(pythonPosition(attr.getInt(), shape[dim], /*isIndex=*/true));
      continue;
    }
    std::optional<SizeExpr> at = indexSize(position);
    if (!at)
      return std::nullopt;
    starts.push_back(clampedPosition(*at, shape[dim], /*isIndex=*/true));
  }
  return starts;
}

/// Dynamic dim `d` of a reshape from `from` (whose dims are `in`) to `to`.
/// A pure expand or collapse may have several dynamic dims, each tied to its
/// group (an input dim split into result dims, or input dims merged into
/// one); any other reshape has one, the elements left by the static dims.
static SizeExpr reshapedDim(mlir::mdl::ReshapeOp op, llvm::ArrayRef<SizeExpr> in, int64_t d) {
  auto from = mlir::cast<mlir::RankedTensorType>(op.getInput().getType());
  auto to = mlir::cast<mlir::RankedTensorType>(op.getType());
  auto groups = op.getReassociation();
  if (groups) {
    if (to.getRank() >= from.getRank()) { // expand: a group of result dims per input dim
      for (auto [inputDim, group] : llvm::enumerate(*groups))
        if (llvm::is_contained(group, d)) {
          int64_t known = 1;
          for (int64_t r : group)
            if (r != d)
              known *= to.getDimSize(r);
          return SizeExpr::floorDiv(in[inputDim], known);
        }
    } else { // collapse: result dim d merges its group of input dims
      SizeExpr merged(1);
      for (int64_t i : (*groups)[d])
        merged = merged * in[i];
      return merged;
    }
  }
  SizeExpr known(1);
  for (int64_t i = 0; i < to.getRank(); ++i)
    if (!to.isDynamicDim(i))
      known = known * to.getDimSize(i);
  return SizeExpr::floorDiv(product(in), known);
}

llvm::Expected<llvm::SmallVector<SizeExpr, 4>> Planner::resultShape(mlir::Operation *op) {
  auto type = mlir::cast<mlir::RankedTensorType>(op->getResult(0).getType());
  llvm::SmallVector<SizeExpr, 4> shape;
  auto operandShape = [&](unsigned i) -> llvm::ArrayRef<SizeExpr> {
    return info(op->getOperand(i)).shape;
  };
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      shape.push_back(type.getDimSize(d));
      continue;
    }
    std::optional<SizeExpr> dim;
    int64_t rank = type.getRank();
    // Elementwise-like (broadcasting) and same-shape ops: the first operand
    // whose aligned dim is not a static 1.
    auto fromBroadcast = [&](unsigned first, unsigned last, int64_t fromEnd) {
      for (unsigned i = first; i < last && !dim; ++i) {
        if (!mlir::isa<mlir::RankedTensorType>(op->getOperand(i).getType()))
          continue;
        llvm::ArrayRef<SizeExpr> s = operandShape(i);
        int64_t at = int64_t(s.size()) - fromEnd;
        if (at >= 0 && !isStaticOne(s[at]))
          dim = s[at];
      }
    };
    llvm::TypeSwitch<mlir::Operation *>(op)
        .Case<mlir::mdl::MatmulOp>([&](auto) {
          if (d == rank - 2)
            dim = operandShape(0)[operandShape(0).size() - 2];
          else if (d == rank - 1)
            dim = operandShape(1).back();
          else
            fromBroadcast(0, 2, rank - d);
        })
        .Case<mlir::mdl::SumOp, mlir::mdl::MeanOp, mlir::mdl::ReduceMaxOp>([&](auto r) {
          llvm::SmallVector<SizeExpr> kept;
          for (int64_t i = 0; i < int64_t(operandShape(0).size()); ++i) {
            bool reduced = llvm::is_contained(r.getDims(), i);
            if (!reduced || r.getKeepdim())
              kept.push_back(reduced ? SizeExpr(1) : operandShape(0)[i]);
          }
          dim = kept[d];
        })
        .Case<mlir::mdl::ReshapeOp>(
            [&](mlir::mdl::ReshapeOp r) { dim = reshapedDim(r, operandShape(0), d); })
        .Case<mlir::mdl::TransposeOp>([&](auto t) {
          int64_t from = d == int64_t(t.getDim0())   ? int64_t(t.getDim1())
                         : d == int64_t(t.getDim1()) ? int64_t(t.getDim0())
                                                     : d;
          dim = operandShape(0)[from];
        })
        .Case<mlir::mdl::PermuteOp>([&](auto p) { dim = operandShape(0)[p.getPermutation()[d]]; })
        .Case<mlir::mdl::SliceOp>([&](mlir::mdl::SliceOp s) {
          // Result dim d is the d-th input dim not indexed away.
          int64_t in = -1;
          for (int64_t seen = -1; seen < d;)
            if (!llvm::is_contained(s.getIndexDims(), ++in))
              ++seen;
          const SizeExpr &n = operandShape(0)[in];
          auto bound = [&](int64_t b) {
            if (b == std::numeric_limits<int64_t>::max()) // `x[a:]`
              return n;
            SizeExpr v = b < 0 ? n + SizeExpr(b) : SizeExpr(b);
            return SizeExpr::min(SizeExpr::max(v, SizeExpr(0)), n);
          };
          SizeExpr span = bound(s.getEnds()[in]) - bound(s.getStarts()[in]);
          dim = SizeExpr::max(SizeExpr::ceilDiv(span, s.getSteps()[in]), SizeExpr(0));
        })
        .Case<mlir::mdl::SelectOp>([&](mlir::mdl::SelectOp s) {
          // Result dim d is the d-th input dim not selected away.
          int64_t in = -1;
          for (int64_t seen = -1; seen < d;)
            if (!llvm::is_contained(s.getDims(), ++in))
              ++seen;
          dim = operandShape(0)[in];
        })
        .Case<mlir::mdl::SelectScatterOp>([&](auto) { dim = operandShape(0)[d]; })
        .Case<mlir::mdl::ConcatOp>([&](auto c) {
          if (d == int64_t(c.getDim())) {
            SizeExpr total(0);
            for (unsigned i = 0; i < op->getNumOperands(); ++i)
              total = total + operandShape(i)[d];
            dim = total;
          } else {
            dim = operandShape(0)[d];
          }
        })
        .Case<mlir::mdl::Conv2dOp, mlir::mdl::MaxPool2dOp, mlir::mdl::AvgPool2dOp>([&](auto) {
          if (d < 2) {
            dim = d == 0 ? operandShape(0)[0]
                         : (mlir::isa<mlir::mdl::Conv2dOp>(op) ? operandShape(1)[0]
                                                               : operandShape(0)[1]);
            return;
          }
          int64_t k, s, p, dil = 1;
          if (auto conv = mlir::dyn_cast<mlir::mdl::Conv2dOp>(op)) {
            k = *operandShape(1)[d].constant();
            s = conv.getStride()[d - 2];
            p = conv.getPadding()[d - 2];
            dil = conv.getDilation()[d - 2];
          } else {
            auto kernel = op->getAttrOfType<mlir::DenseI64ArrayAttr>("kernel");
            auto stride = op->getAttrOfType<mlir::DenseI64ArrayAttr>("stride");
            auto padding = op->getAttrOfType<mlir::DenseI64ArrayAttr>("padding");
            k = kernel[d - 2], s = stride[d - 2], p = padding[d - 2];
          }
          dim = SizeExpr::floorDiv(operandShape(0)[d] + SizeExpr(2 * p - dil * (k - 1) - 1), s) +
                SizeExpr(1);
        })
        .Case<mlir::mdl::ZerosOp, mlir::mdl::OnesOp, mlir::mdl::FullOp, mlir::mdl::RandnOp,
              mlir::mdl::ArangeOp, mlir::mdl::EyeOp>([&](auto) {
          // One size operand per dynamic dim, in order.
          unsigned k = 0;
          for (int64_t i = 0; i < d; ++i)
            k += type.isDynamicDim(i);
          if (k < op->getNumOperands())
            dim = indexSize(op->getOperand(k));
        })
        .Case<mlir::mdl::EmbeddingOp>([&](auto) { dim = operandShape(1)[d]; })
        .Case<mlir::mdl::GatherOp>([&](auto) { dim = operandShape(1)[d]; })
        .Case<mlir::mdl::IndexSelectOp>([&](auto s) {
          dim = d == int64_t(s.getDim()) ? operandShape(1)[0] : operandShape(0)[d];
        })
        .Case<mlir::mdl::CrossEntropyOp, mlir::mdl::NllLossOp>(
            [&](auto) { dim = operandShape(0)[0]; })
        .Case<mlir::mdl::CmpOp, mlir::mdl::WhereOp>(
            [&](auto) { fromBroadcast(0, op->getNumOperands(), rank - d); })
        .Default([&](mlir::Operation *) {
          // Unary ops, cast, transfer, softmax, norms, adaptive pooling: the
          // first operand's dims (binary ops broadcast).
          fromBroadcast(0, op->getNumOperands(), rank - d);
        });
    if (!dim)
      return fail(op, llvm::formatv("cannot tell the size of dynamic dim {0} of its result", d));
    shape.push_back(*dim);
  }
  return shape;
}

//===----------------------------------------------------------------------===//
// cpu regions
//===----------------------------------------------------------------------===//

llvm::Error Planner::flushCpuRegion() {
  if (cpuRegion.empty())
    return llvm::Error::success();
  llvm::SetVector<mlir::Value> inputs, outputs;
  llvm::SmallVector<std::pair<mlir::Operation *, mlir::Value>> sizes;
  for (mlir::Operation *op : cpuRegion) {
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation *def = operand.getDefiningOp();
      if (def && cpuRegion.contains(def))
        continue;
      if (!mlir::isa<mlir::RankedTensorType>(operand.getType()))
        sizes.push_back({op, operand}); // after every tensor input is known
      else
        inputs.insert(operand);
    }
  }
  // A size the region needs (`zeros([c.shape[0], 4])`) is index arithmetic
  // over constants and dims: it is cloned into the function. A dim of a cpu
  // tensor makes that tensor an input; a dim of a GPU tensor is read from a
  // cpu input whose dim has the same size expression, if there is one.
  llvm::DenseMap<mlir::Operation *, std::pair<mlir::Value, int64_t>> dimOnCpu;
  std::function<bool(mlir::Value)> addSize = [&](mlir::Value size) {
    mlir::Operation *def = size.getDefiningOp();
    if (!def || cpuRegion.contains(def))
      return def != nullptr;
    if (mlir::isa<mlir::arith::ConstantOp>(def))
      return true;
    if (auto dim = mlir::dyn_cast<mlir::tensor::DimOp>(def)) {
      if (deviceOf(dim.getSource().getType()) == Device::cpu()) {
        inputs.insert(dim.getSource());
        return addSize(dim.getIndex());
      }
      std::optional<SizeExpr> wanted = indexSize(size);
      for (mlir::Value in : inputs) {
        auto found = values.find(in.getAsOpaquePointer());
        if (!wanted || found == values.end())
          continue;
        for (auto [j, extent] : llvm::enumerate(found->second.shape))
          if (extent == *wanted) {
            dimOnCpu[def] = {in, int64_t(j)};
            return true;
          }
      }
      return false;
    }
    if (def->getDialect() != def->getContext()->getLoadedDialect<mlir::arith::ArithDialect>() ||
        def->getNumResults() != 1 || !def->getResult(0).getType().isIndex())
      return false;
    return llvm::all_of(def->getOperands(), addSize);
  };
  for (auto [op, size] : sizes)
    if (!addSize(size))
      return fail(op, "a non-tensor operand that is neither a constant nor a size of the "
                      "region's cpu values");
  for (mlir::Operation *op : cpuRegion) {
    for (mlir::Value result : op->getResults())
      for (mlir::Operation *user : result.getUsers())
        if (!cpuRegion.contains(user))
          outputs.insert(result);
  }
  if (!cpuModule)
    cpuModule = mlir::ModuleOp::create(module.getLoc());
  std::string name = "cpu_region_" + std::to_string(cpuRegionCount++);
  llvm::SmallVector<mlir::Type> argTypes, resultTypes;
  for (mlir::Value v : inputs)
    argTypes.push_back(v.getType());
  for (mlir::Value v : outputs)
    resultTypes.push_back(v.getType());
  cpuBuilder.setInsertionPointToEnd(cpuModule->getBody());
  auto func = mlir::func::FuncOp::create(cpuBuilder, (*cpuRegion.begin())->getLoc(), name,
                                         cpuBuilder.getFunctionType(argTypes, resultTypes));
  mlir::Block *body = func.addEntryBlock();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttr(i, "bufferization.writable", cpuBuilder.getBoolAttr(false));
  mlir::IRMapping mapping;
  for (auto [value, arg] : llvm::zip(inputs, body->getArguments()))
    mapping.map(value, arg);
  cpuBuilder.setInsertionPointToStart(body);
  std::function<void(mlir::Value)> cloneSize = [&](mlir::Value size) {
    if (mapping.contains(size))
      return;
    mlir::Operation *def = size.getDefiningOp();
    if (auto onCpu = dimOnCpu.find(def); onCpu != dimOnCpu.end()) {
      mapping.map(size, mlir::tensor::DimOp::create(cpuBuilder, def->getLoc(),
                                                    mapping.lookup(onCpu->second.first),
                                                    onCpu->second.second));
      return;
    }
    for (mlir::Value operand : def->getOperands())
      cloneSize(operand);
    cpuBuilder.clone(*def, mapping);
  };
  for (mlir::Operation *op : cpuRegion) {
    for (mlir::Value operand : op->getOperands())
      cloneSize(operand);
    cpuBuilder.clone(*op, mapping);
  }
  llvm::SmallVector<mlir::Value> returned;
  for (mlir::Value v : outputs)
    returned.push_back(mapping.lookup(v));
  mlir::func::ReturnOp::create(cpuBuilder, func.getLoc(), returned);

  CpuCall call;
  call.function = name;
  for (mlir::Value v : inputs) {
    llvm::Expected<BufferId> id = materialize(v);
    if (!id)
      return id.takeError();
    call.arguments.push_back(*id);
  }
  for (mlir::Value v : outputs) {
    ValueInfo &out = info(v);
    out.buffer = newBuffer(out);
    call.results.push_back(*out.buffer);
  }
  plan.steps.push_back(std::move(call));
  cpuRegion.clear();
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// cuda ops
//===----------------------------------------------------------------------===//

llvm::Expected<ExprPtr>
Planner::operandExpr(mlir::Value operand, llvm::ArrayRef<SizeExpr> resultShape, ValueInfo &result) {
  ValueInfo &v = info(operand);
  bool oneUse = operand.hasOneUse();
  // A raw matmul/conv result becomes the accumulator of its epilogue.
  if (v.producer && !v.pending && oneUse && !result.producer && sameShape(v.shape, resultShape)) {
    Expr acc;
    acc.kind = Expr::Kind::Epilogue;
    acc.dtype = v.dtype;
    result.producer = v.producer;
    appendUnique(result.sourceLines, v.sourceLines);
    result.opNames.insert(result.opNames.end(), v.opNames.begin(), v.opNames.end());
    v.producer = nullptr;
    return makeExpr(acc);
  }
  // A view (a lone Load) is cheap to re-read, so any number of uses inline it.
  bool isView = v.pending && !v.producer && v.pending->kind == Expr::Kind::Load;
  if (v.pending && (oneUse || isView) &&
      (!v.producer || (!result.producer && sameShape(v.shape, resultShape)))) {
    if (v.producer)
      result.producer = v.producer;
    appendUnique(result.sourceLines, v.sourceLines);
    result.opNames.insert(result.opNames.end(), v.opNames.begin(), v.opNames.end());
    return rebase(v.pending, v.shape, resultShape);
  }
  llvm::Expected<BufferId> id = materialize(v, std::nullopt);
  if (!id)
    return id.takeError();
  return rebase(identityLoad(ref(*id), v.dtype, v.shape.size()), v.shape, resultShape);
}

llvm::Error Planner::planElementwise(mlir::Operation *op) {
  mlir::Value resultValue = op->getResult(0);
  ValueInfo &result = info(resultValue);
  llvm::SmallVector<ExprPtr> operands;
  for (mlir::Value operand : op->getOperands()) {
    llvm::Expected<ExprPtr> e = operandExpr(operand, result.shape, result);
    if (!e)
      return e.takeError();
    operands.push_back(*e);
  }
  Expr e;
  e.dtype = result.dtype;
  e.operands.assign(operands.begin(), operands.end());
  llvm::StringRef name = op->getName().stripDialect();
  if (auto cmp = mlir::dyn_cast<mlir::mdl::CmpOp>(op)) {
    e.kind = Expr::Kind::Compare;
    e.op = cmp.getPredicate().str();
  } else if (mlir::isa<mlir::mdl::WhereOp>(op)) {
    e.kind = Expr::Kind::Select;
  } else if (mlir::isa<mlir::mdl::CastOp>(op)) {
    e.kind = Expr::Kind::Cast;
  } else if (op->getNumOperands() == 2) {
    e.kind = Expr::Kind::Binary;
    e.op = name.str();
  } else {
    e.kind = Expr::Kind::Unary;
    e.op = name.str();
  }
  result.pending = makeExpr(std::move(e));
  finishValue(op, result);
  return llvm::Error::success();
}

llvm::Expected<MatmulOperand> Planner::matmulOperand(mlir::Value value) {
  ValueInfo &v = info(value);
  MatmulOperand operand;
  operand.shape = v.shape;
  // A transposed or permuted view is read in place.
  if (v.pending && !v.producer && v.pending->kind == Expr::Kind::Load) {
    operand.buffer = v.pending->buffer;
    operand.dimMap = v.pending->dimMap;
    return operand;
  }
  llvm::Expected<BufferId> id = materialize(v, std::nullopt);
  if (!id)
    return id.takeError();
  operand.buffer = ref(*id);
  for (unsigned d = 0; d < v.shape.size(); ++d)
    operand.dimMap.push_back(int(d));
  return operand;
}

llvm::Error Planner::planCudaOp(mlir::Operation *op) {
  mlir::Value resultValue = op->getResult(0);
  ValueInfo &result = info(resultValue);
  int device = result.device.index;
  auto buffer = [&](mlir::Value v) -> llvm::Expected<BufferRef> {
    llvm::Expected<BufferId> id = materialize(v);
    if (!id)
      return id.takeError();
    return ref(*id);
  };
  // Runs `emit(input refs..., out ref)` for a kernel that needs its inputs
  // in memory and writes a new buffer.
  auto simple = [&](auto emit) -> llvm::Error {
    llvm::SmallVector<BufferRef> inputs;
    for (mlir::Value operand : op->getOperands()) {
      // A size (`randn([x.shape[0]])`) is already in the result's shape.
      if (!mlir::isa<mlir::RankedTensorType>(operand.getType()))
        continue;
      llvm::Expected<BufferRef> r = buffer(operand);
      if (!r)
        return r.takeError();
      inputs.push_back(*r);
    }
    finishValue(op, result);
    BufferId out = newBuffer(result);
    result.buffer = out;
    KernelOrigin origin{kernelName(result.opNames), result.sourceLines};
    addKernel(emit(origin, inputs, ref(out)));
    return llvm::Error::success();
  };
  // A copy kernel reading `input` at `starts[d] + steps[d] * c` (slice, and
  // select at fixed positions).
  auto slice = [&](const BufferRef &input, llvm::ArrayRef<SizeExpr> starts,
                   llvm::ArrayRef<int64_t> steps, llvm::ArrayRef<int> outDimOf) {
    finishValue(op, result);
    BufferId out = newBuffer(result);
    result.buffer = out;
    KernelOrigin origin{kernelName(result.opNames), result.sourceLines};
    addKernel(sliceKernel(origin, device, input, starts, steps, outDimOf, ref(out)));
    return llvm::Error::success();
  };
  auto creation = [&](Expr e) {
    e.dtype = result.dtype;
    result.pending = makeExpr(std::move(e));
    finishValue(op, result);
    return llvm::Error::success();
  };

  if (op->hasTrait<mlir::OpTrait::Elementwise>() ||
      mlir::isa<mlir::mdl::AddOp, mlir::mdl::SubOp, mlir::mdl::MulOp, mlir::mdl::DivOp,
                mlir::mdl::PowOp, mlir::mdl::MaxOp, mlir::mdl::MinOp, mlir::mdl::CmpOp,
                mlir::mdl::WhereOp, mlir::mdl::ReluOp, mlir::mdl::GeluOp, mlir::mdl::SiluOp,
                mlir::mdl::TanhOp, mlir::mdl::SigmoidOp, mlir::mdl::ExpOp, mlir::mdl::LogOp,
                mlir::mdl::SqrtOp, mlir::mdl::SinOp, mlir::mdl::CosOp, mlir::mdl::NegOp,
                mlir::mdl::AbsOp, mlir::mdl::CastOp>(op) ||
      llvm::is_contained({"rem", "and", "or", "not"}, op->getName().stripDialect()))
    return planElementwise(op);

  return llvm::TypeSwitch<mlir::Operation *, llvm::Error>(op)
      .Case<mlir::mdl::MatmulOp>([&](mlir::mdl::MatmulOp m) -> llvm::Error {
        llvm::Expected<MatmulOperand> lhs = matmulOperand(m.getLhs());
        if (!lhs)
          return lhs.takeError();
        llvm::Expected<MatmulOperand> rhs = matmulOperand(m.getRhs());
        if (!rhs)
          return rhs.takeError();
        auto p = std::make_shared<Producer>();
        p->lhs = *lhs;
        p->rhs = *rhs;
        finishValue(op, result);
        p->sourceLines = result.sourceLines;
        result.producer = p;
        return llvm::Error::success();
      })
      .Case<mlir::mdl::Conv2dOp>([&](mlir::mdl::Conv2dOp c) -> llvm::Error {
        auto p = std::make_shared<Producer>();
        p->kind = Producer::Kind::Conv2d;
        llvm::Expected<BufferRef> input = buffer(c.getInput()), weight = buffer(c.getWeight());
        if (!input)
          return input.takeError();
        if (!weight)
          return weight.takeError();
        p->input = *input;
        p->weight = *weight;
        if (c.getBias()) {
          llvm::Expected<BufferRef> bias = buffer(c.getBias());
          if (!bias)
            return bias.takeError();
          p->bias = *bias;
        }
        if (!weight->shape[2].isConstant() || !weight->shape[3].isConstant())
          return fail(op, "conv2d needs a static kernel size");
        p->conv = Conv2dParams{c.getStride()[0],      c.getStride()[1],   c.getPadding()[0],
                               c.getPadding()[1],     c.getDilation()[0], c.getDilation()[1],
                               int64_t(c.getGroups())};
        finishValue(op, result);
        p->sourceLines = result.sourceLines;
        result.producer = p;
        return llvm::Error::success();
      })
      .Case<mlir::mdl::SumOp, mlir::mdl::MeanOp, mlir::mdl::ReduceMaxOp>([&](auto r) {
        ReduceKind kind = mlir::isa<mlir::mdl::SumOp>(op)    ? ReduceKind::Sum
                          : mlir::isa<mlir::mdl::MeanOp>(op) ? ReduceKind::Mean
                                                             : ReduceKind::Max;
        llvm::SmallVector<int64_t> dims(r.getDims());
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          return reduceKernel(o, device, kind, in[0], dims, out);
        });
      })
      .Case<mlir::mdl::SoftmaxOp, mlir::mdl::LogSoftmaxOp>([&](auto s) {
        bool isLog = mlir::isa<mlir::mdl::LogSoftmaxOp>(op);
        int64_t dim = int64_t(s.getDim());
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          return softmaxKernel(o, device, isLog, in[0], dim, out);
        });
      })
      .Case<mlir::mdl::LayerNormOp>([&](mlir::mdl::LayerNormOp ln) {
        bool hasWeight = bool(ln.getWeight()), hasBias = bool(ln.getBias());
        int64_t rank = int64_t(ln.getNormalizedRank());
        double eps = ln.getEpsilon().convertToDouble();
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          std::optional<BufferRef> w, b;
          unsigned next = 1;
          if (hasWeight)
            w = in[next++];
          if (hasBias)
            b = in[next++];
          return layerNormKernel(o, device, in[0], w, b, rank, eps, out);
        });
      })
      .Case<mlir::mdl::BatchNormOp>([&](mlir::mdl::BatchNormOp bn) -> llvm::Error {
        // Inference batch norm is elementwise with per-channel (dim 1)
        // operands, so it fuses like any elementwise op (conv + bn + relu).
        llvm::Expected<ExprPtr> x = operandExpr(bn.getInput(), result.shape, result);
        if (!x)
          return x.takeError();
        auto channel = [&](mlir::Value v) -> llvm::Expected<ExprPtr> {
          llvm::Expected<BufferRef> r = buffer(v);
          if (!r)
            return r.takeError();
          Expr load;
          load.kind = Expr::Kind::Load;
          load.dtype = r->dtype;
          load.buffer = *r;
          load.dimMap = {1};
          return makeExpr(load);
        };
        auto binary = [&](const char *name, ExprPtr a, ExprPtr b) {
          Expr e;
          e.kind = Expr::Kind::Binary;
          e.op = name;
          e.dtype = result.dtype;
          e.operands = {std::move(a), std::move(b)};
          return makeExpr(std::move(e));
        };
        llvm::Expected<ExprPtr> mean = channel(bn.getRunningMean());
        if (!mean)
          return mean.takeError();
        llvm::Expected<ExprPtr> var = channel(bn.getRunningVar());
        if (!var)
          return var.takeError();
        Expr eps;
        eps.kind = Expr::Kind::Constant;
        // f16/bf16 values are f32 inside a kernel: eps is not rounded to them.
        eps.dtype =
            result.dtype == DType::F16 || result.dtype == DType::BF16 ? DType::F32 : result.dtype;
        eps.value = bn.getEpsilon().convertToDouble();
        Expr root;
        root.kind = Expr::Kind::Unary;
        root.op = "sqrt";
        root.dtype = result.dtype;
        root.operands = {binary("add", *var, makeExpr(eps))};
        ExprPtr value = binary("div", binary("sub", *x, *mean), makeExpr(std::move(root)));
        if (bn.getWeight()) {
          llvm::Expected<ExprPtr> w = channel(bn.getWeight());
          if (!w)
            return w.takeError();
          value = binary("mul", value, *w);
        }
        if (bn.getBias()) {
          llvm::Expected<ExprPtr> b = channel(bn.getBias());
          if (!b)
            return b.takeError();
          value = binary("add", value, *b);
        }
        result.pending = value;
        finishValue(op, result);
        return llvm::Error::success();
      })
      .Case<mlir::mdl::ReshapeOp>([&](mlir::mdl::ReshapeOp r) -> llvm::Error {
        // A reshape of a dense buffer moves no data: a view.
        llvm::Expected<BufferId> input = materialize(r.getInput());
        if (!input)
          return input.takeError();
        BufferId out = newBuffer(result);
        const Buffer &source = plan.buffers[*input];
        plan.buffers[out].viewOf = source.viewOf ? *source.viewOf : *input;
        result.buffer = out;
        finishValue(op, result);
        return llvm::Error::success();
      })
      .Case<mlir::mdl::TransposeOp, mlir::mdl::PermuteOp>([&](mlir::Operation *) -> llvm::Error {
        // A view: no kernel unless a consumer needs the permuted bytes.
        llvm::SmallVector<int> newDimOfOld(result.shape.size());
        if (auto t = mlir::dyn_cast<mlir::mdl::TransposeOp>(op)) {
          for (unsigned d = 0; d < newDimOfOld.size(); ++d)
            newDimOfOld[d] = int(d);
          std::swap(newDimOfOld[t.getDim0()], newDimOfOld[t.getDim1()]);
        } else {
          auto perm = mlir::cast<mlir::mdl::PermuteOp>(op).getPermutation();
          for (unsigned d = 0; d < perm.size(); ++d)
            newDimOfOld[perm[d]] = int(d);
        }
        mlir::Value input = op->getOperand(0);
        ValueInfo &in = info(input);
        ExprPtr base;
        if (in.pending && !in.producer && input.hasOneUse()) {
          base = in.pending;
          appendUnique(result.sourceLines, in.sourceLines);
          result.opNames = in.opNames;
        } else {
          llvm::Expected<BufferId> id = materialize(input);
          if (!id)
            return id.takeError();
          base = identityLoad(ref(*id), in.dtype, in.shape.size());
        }
        result.pending = remapDims(base, newDimOfOld);
        finishValue(op, result);
        return llvm::Error::success();
      })
      .Case<mlir::mdl::ConcatOp>([&](mlir::mdl::ConcatOp c) -> llvm::Error {
        llvm::SmallVector<BufferRef> inputs;
        for (mlir::Value operand : c.getInputs()) {
          llvm::Expected<BufferRef> r = buffer(operand);
          if (!r)
            return r.takeError();
          inputs.push_back(*r);
        }
        finishValue(op, result);
        BufferId out = newBuffer(result);
        result.buffer = out;
        int64_t dim = int64_t(c.getDim());
        SizeExpr offset(0);
        for (const BufferRef &in : inputs) {
          KernelOrigin origin{kernelName({"concat"}), result.sourceLines};
          addKernel(concatPieceKernel(origin, device, in, dim, offset, ref(out)));
          offset = offset + in.shape[dim];
        }
        return llvm::Error::success();
      })
      .Case<mlir::mdl::SliceOp>([&](mlir::mdl::SliceOp sliceOp) -> llvm::Error {
        // Python's bounds: a negative start counts from the end; both clamp.
        llvm::Expected<BufferRef> input = buffer(sliceOp.getInput());
        if (!input)
          return input.takeError();
        llvm::SmallVector<SizeExpr, 4> starts;
        llvm::SmallVector<int> outDimOf;
        int next = 0;
        for (size_t d = 0; d < input->shape.size(); ++d) {
          bool indexed = llvm::is_contained(sliceOp.getIndexDims(), int64_t(d));
          // An index reads the nearest valid position (as the cpu back end).
          starts.push_back(pythonPosition(sliceOp.getStarts()[d], input->shape[d], indexed));
          outDimOf.push_back(indexed ? -1 : next++);
        }
        return slice(*input, starts, sliceOp.getSteps(), outDimOf);
      })
      .Case<mlir::mdl::SelectOp>([&](mlir::mdl::SelectOp select) -> llvm::Error {
        // At fixed positions a select is a slice that indexes `dims` away.
        llvm::Expected<BufferRef> input = buffer(select.getInput());
        if (!input)
          return input.takeError();
        llvm::ArrayRef<int64_t> dims = select.getDims();
        std::optional<llvm::SmallVector<SizeExpr, 4>> at =
            selectPositions(select.getPositions(), dims, input->shape);
        if (!at)
          return fail(op, runTimePositionError);
        llvm::SmallVector<SizeExpr, 4> starts;
        llvm::SmallVector<int> outDimOf;
        int next = 0;
        for (int64_t d = 0; d < int64_t(input->shape.size()); ++d) {
          const int64_t *it = llvm::find(dims, d);
          bool selected = it != dims.end();
          starts.push_back(selected ? (*at)[it - dims.begin()] : SizeExpr(0));
          outDimOf.push_back(selected ? -1 : next++);
        }
        return slice(*input, starts, llvm::SmallVector<int64_t>(input->shape.size(), 1), outDimOf);
      })
      .Case<mlir::mdl::SelectScatterOp>([&](mlir::mdl::SelectScatterOp scatter) -> llvm::Error {
        llvm::Expected<BufferRef> source = buffer(scatter.getSource());
        if (!source)
          return source.takeError();
        llvm::Expected<BufferRef> input = buffer(scatter.getInput());
        if (!input)
          return input.takeError();
        std::optional<llvm::SmallVector<SizeExpr, 4>> at =
            selectPositions(scatter.getPositions(), scatter.getDims(), input->shape);
        if (!at)
          return fail(op, runTimePositionError);
        // `out[:, t] = h` in a loop: when nothing else reads the input (its
        // only use is this op and its buffer is a temporary of its own, not a
        // view), write `source` into that buffer instead of copying the rest.
        const Buffer &inputBuffer = plan.buffers[input->id];
        bool inPlace = scatter.getInput().hasOneUse() &&
                       inputBuffer.kind == BufferKind::Temporary && !inputBuffer.viewOf;
        finishValue(op, result);
        BufferId out = inPlace ? input->id : newBuffer(result);
        result.buffer = out;
        KernelOrigin origin{kernelName(result.opNames), result.sourceLines};
        std::optional<BufferRef> copied;
        if (!inPlace)
          copied = *input;
        addKernel(
            selectScatterKernel(origin, device, copied, *source, scatter.getDims(), *at, ref(out)));
        return llvm::Error::success();
      })
      .Case<mlir::mdl::MaxPool2dOp, mlir::mdl::AvgPool2dOp>([&](mlir::Operation *) {
        PoolKind kind = mlir::isa<mlir::mdl::MaxPool2dOp>(op) ? PoolKind::Max : PoolKind::Avg;
        llvm::SmallVector<int64_t> k(
            op->getAttrOfType<mlir::DenseI64ArrayAttr>("kernel").asArrayRef());
        llvm::SmallVector<int64_t> s(
            op->getAttrOfType<mlir::DenseI64ArrayAttr>("stride").asArrayRef());
        llvm::SmallVector<int64_t> p(
            op->getAttrOfType<mlir::DenseI64ArrayAttr>("padding").asArrayRef());
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          return pool2dKernel(o, device, kind, in[0], k, s, p, out);
        });
      })
      .Case<mlir::mdl::AdaptiveAvgPool2dOp>([&](auto) {
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          return pool2dKernel(o, device, PoolKind::AdaptiveAvg, in[0], {}, {}, {}, out);
        });
      })
      .Case<mlir::mdl::EmbeddingOp>([&](auto) {
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          return gatherKernel(o, device, GatherKind::Embedding, in[0], in[1], 0, out);
        });
      })
      .Case<mlir::mdl::GatherOp, mlir::mdl::IndexSelectOp>([&](auto g) {
        GatherKind kind =
            mlir::isa<mlir::mdl::GatherOp>(op) ? GatherKind::Gather : GatherKind::IndexSelect;
        int64_t dim = int64_t(g.getDim());
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          return gatherKernel(o, device, kind, in[0], in[1], dim, out);
        });
      })
      .Case<mlir::mdl::CrossEntropyOp, mlir::mdl::NllLossOp>([&](auto l) {
        bool logits = mlir::isa<mlir::mdl::CrossEntropyOp>(op);
        std::string reduction = l.getReduction().str();
        bool hasWeight = bool(l.getWeight());
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef> in, BufferRef out) {
          std::optional<BufferRef> w;
          if (hasWeight)
            w = in[2];
          return lossKernel(o, device, logits, in[0], in[1], w, reduction, out);
        });
      })
      .Case<mlir::mdl::ZerosOp, mlir::mdl::OnesOp>([&](auto) {
        Expr e;
        e.value = mlir::isa<mlir::mdl::OnesOp>(op) ? 1 : 0;
        return creation(e);
      })
      .Case<mlir::mdl::FullOp>([&](mlir::mdl::FullOp f) {
        Expr e;
        e.value = f.getValue().convertToDouble();
        return creation(e);
      })
      .Case<mlir::mdl::ArangeOp>([&](mlir::mdl::ArangeOp a) {
        Expr e;
        e.kind = Expr::Kind::Arange;
        e.start = a.getStart().convertToDouble();
        e.step = a.getStep().convertToDouble();
        e.dimMap = {0};
        return creation(e);
      })
      .Case<mlir::mdl::EyeOp>([&](auto) {
        Expr e;
        e.kind = Expr::Kind::Eye;
        e.dimMap = {0, 1};
        return creation(e);
      })
      .Case<mlir::mdl::RandnOp>([&](mlir::mdl::RandnOp r) {
        int64_t seed = int64_t(r.getSeed());
        return simple([&](const KernelOrigin &o, llvm::ArrayRef<BufferRef>, BufferRef out) {
          return randnKernel(o, device, seed, out);
        });
      })
      .Default([&](mlir::Operation *) {
        return fail(op, llvm::formatv("no CUDA kernel for this op on cuda:{0} yet", device));
      });
}

llvm::Error Planner::planTransfer(mlir::mdl::TransferOp op) {
  llvm::Expected<BufferId> source = materialize(op.getInput());
  if (!source)
    return source.takeError();
  ValueInfo &result = info(op.getResult());
  finishValue(op, result);
  BufferId destination = newBuffer(result);
  result.buffer = destination;
  plan.steps.push_back(Copy{*source, destination});
  return llvm::Error::success();
}

llvm::Error Planner::planReturn(mlir::func::ReturnOp ret) {
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    ValueInfo &v = info(value);
    bool ownsBuffer = v.buffer && plan.buffers[*v.buffer].kind == BufferKind::Temporary &&
                      !plan.buffers[*v.buffer].viewOf;
    BufferId out;
    if (ownsBuffer && !v.pending && !v.producer) {
      out = *v.buffer;
    } else if (v.device.isCPU()) {
      // Returning an argument (or a view of one) from the cpu: copy it with
      // an outlined identity function.
      BufferId source = *v.buffer;
      out = newBuffer(v);
      if (!cpuModule)
        cpuModule = mlir::ModuleOp::create(module.getLoc());
      std::string name = "cpu_region_" + std::to_string(cpuRegionCount++);
      cpuBuilder.setInsertionPointToEnd(cpuModule->getBody());
      auto func = mlir::func::FuncOp::create(
          cpuBuilder, ret.getLoc(), name,
          cpuBuilder.getFunctionType({value.getType()}, {value.getType()}));
      mlir::Block *body = func.addEntryBlock();
      cpuBuilder.setInsertionPointToStart(body);
      mlir::func::ReturnOp::create(cpuBuilder, ret.getLoc(), body->getArgument(0));
      plan.steps.push_back(CpuCall{name, {source}, {out}});
    } else {
      out = newBuffer(v);
      llvm::Expected<BufferId> written = materialize(v, out);
      if (!written)
        return written.takeError();
    }
    Buffer &b = plan.buffers[out];
    b.kind = BufferKind::Output;
    b.index = unsigned(index);
    b.name = "result";
  }
  return llvm::Error::success();
}

llvm::Expected<DevicePlan> Planner::run() {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(options.entry);
  if (!func || func.isExternal())
    return llvm::createStringError(
        llvm::formatv("the module has no function `{0}`", options.entry).str());
  plan.entry = options.entry;
  mlir::Block &entry = func.getBody().front();

  // Arguments: state first, then inputs; symbolic dims come from inputs.
  unsigned stateCount = options.stateNames.size();
  if (stateCount > entry.getNumArguments())
    return llvm::createStringError("more state names than function arguments");
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    llvm::Expected<ValueInfo> v = describeValue(arg);
    if (!v)
      return llvm::createStringError(llvm::formatv("argument {0} of `{1}`: {2}", i, options.entry,
                                                   llvm::toString(v.takeError()))
                                         .str());
    auto type = mlir::cast<mlir::RankedTensorType>(arg.getType());
    bool isState = i < stateCount;
    unsigned input = unsigned(i) - stateCount;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        v->shape.push_back(type.getDimSize(d));
        continue;
      }
      if (isState)
        return llvm::createStringError(
            llvm::formatv("state `{0}` has a dynamic shape", options.stateNames[i]).str());
      std::string name;
      if (input < options.inputDimNames.size() && d < int64_t(options.inputDimNames[input].size()))
        name = options.inputDimNames[input][d];
      if (name.empty())
        name = llvm::formatv("d{0}_{1}", input, d).str();
      v->shape.push_back(SizeExpr::symbol(name));
      plan.symbols.push_back(Symbol{name, BufferId(plan.buffers.size()), unsigned(d)});
    }
    BufferId id = newBuffer(*v, isState ? BufferKind::State : BufferKind::Input);
    plan.buffers[id].name = isState ? options.stateNames[i] : "input" + std::to_string(input);
    plan.buffers[id].index = isState ? unsigned(i) : input;
    v->buffer = id;
    info(arg) = std::move(*v);
  }

  // A loop that is not unrolled would need a host-driven loop over
  // launches; the plan has straight-line steps only (docs/cuda-codegen.md).
  // Checked first: the sizes such a loop reads come before it.
  for (mlir::Operation &op : entry.getOperations())
    if (mlir::isa<mlir::scf::ForOp>(op))
      return fail(&op, "a loop that is not unrolled (over more than 16 steps, or over a range "
                       "known only at run time such as `0..T` with `T` a dim of an artifact's "
                       "input) is not supported on cuda yet; a range of at most 16 steps known "
                       "at compile time is unrolled into straight-line code");

  for (mlir::Operation &op : entry.getOperations()) {
    if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
      if (llvm::Error err = flushCpuRegion())
        return err;
      if (llvm::Error err = planReturn(ret))
        return err;
      continue;
    }
    if (op.getNumResults() != 1 || !mlir::isa<mlir::RankedTensorType>(op.getResult(0).getType())) {
      // Index constants feed creation ops' dynamic sizes; cpu regions clone them.
      if (mlir::isa<mlir::arith::ConstantOp>(op))
        continue;
      // Other index arithmetic (a dim of an input, `T - 1 - t`) is judged
      // where it is used: a position or a size known only at run time is an
      // error there, naming that op.
      if (op.getNumRegions() == 0 && op.getNumResults() > 0 &&
          llvm::all_of(op.getResultTypes(), [](mlir::Type t) { return t.isIndex(); }))
        continue;
      return fail(&op, "an op the device planner does not know");
    }
    llvm::Expected<ValueInfo> v = describeValue(op.getResult(0));
    if (!v)
      return fail(&op, llvm::toString(v.takeError()));
    ValueInfo &result = info(op.getResult(0));
    result = std::move(*v);
    llvm::Expected<llvm::SmallVector<SizeExpr, 4>> shape = resultShape(&op);
    if (!shape)
      return shape.takeError();
    result.shape = std::move(*shape);
    if (auto transfer = mlir::dyn_cast<mlir::mdl::TransferOp>(op)) {
      if (llvm::Error err = flushCpuRegion())
        return err;
      if (llvm::Error err = planTransfer(transfer))
        return err;
      continue;
    }
    if (result.device.isCPU()) {
      cpuRegion.insert(&op);
      continue;
    }
    if (llvm::Error err = flushCpuRegion())
      return err;
    if (llvm::Error err = planCudaOp(&op))
      return err;
    // A pending value with several uses is computed once, now.
    ValueInfo &planned = info(op.getResult(0));
    bool isView = planned.pending && !planned.producer && planned.pending->kind == Expr::Kind::Load;
    if ((planned.pending || planned.producer) && !isView && !op.getResult(0).hasOneUse() &&
        !op.getResult(0).use_empty()) {
      llvm::Expected<BufferId> id = materialize(op.getResult(0));
      if (!id)
        return id.takeError();
    }
  }

  if (cpuModule) {
    llvm::raw_string_ostream os(plan.cpuModule);
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    cpuModule->print(os, flags);
  }
  for (auto &[device, list] : kernels) {
    DeviceCode code;
    code.device = device;
    code.source = kernelPrelude();
    for (GeneratedKernel &k : list) {
      code.source += "\n" + k.source;
      code.kernels.push_back(std::move(k.info));
    }
    plan.devices.push_back(std::move(code));
  }
  return std::move(plan);
}

} // namespace

llvm::Expected<DevicePlan> buildDevicePlan(mlir::ModuleOp module, const PlanOptions &options) {
  return Planner(module, options).run();
}

std::optional<DType> dtypeOf(mlir::Type type) {
  if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type))
    type = tensor.getElementType();
  if (type.isF32())
    return DType::F32;
  if (type.isF64())
    return DType::F64;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isInteger(1))
    return DType::Bool;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(64))
    return DType::I64;
  return std::nullopt;
}

} // namespace modelc::cudagen
