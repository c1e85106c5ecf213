//===- MlirGen.cpp - Checked .mdl models to the mdl dialect ---------------===//
//
// Walks the AST of the entry fn with the checker's results at hand. Values
// are tensors (mlir::Value), compile-time scalars (model arguments, literals,
// sizes), devices, dtypes, submodels and lists. Calls into submodels are
// inlined: each submodel instance is a ModelFrame with its concrete devices
// and arguments and its state_dict prefix, so `weight` inside `fc1` is the
// function argument of `fc1.weight`. Result shapes are derived from the
// operand types (static where the operands make them static).
//
//===----------------------------------------------------------------------===//

#include "mlirgen/MlirGen.h"

#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <limits>

using namespace modelc;
using namespace modelc::mlirgen;
using llvm::dyn_cast;
using mlir::RankedTensorType;
using mlir::ShapedType;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
constexpr unsigned kMaxInlineDepth = 64;

struct ModelFrame;

/// A value during generation.
struct GenValue {
  /// Size: an int known only at run time (a symbolic dim such as `B`); only
  /// creation ops take it, through the checker's types.
  /// Void: what a fn without a result returns (it can only be discarded).
  /// Tuple: the several results of a fn, in `elements`.
  /// Index: an int computed at run time (the variable of a loop over a
  /// run-time range, and arithmetic on it), as an index value.
  enum class Kind {
    None,
    Tensor,
    Scalar,
    Size,
    Index,
    Device,
    DType,
    Model,
    ModelList,
    List,
    Tuple,
    Void
  };
  Kind kind = Kind::None;
  mlir::Value tensor;
  mlir::Value index; // Kind::Index
  double number = 0;
  bool isInt = false;
  sema::Device device;
  ast::DType dtype = ast::DType::F32;
  ModelFrame *model = nullptr;
  std::vector<ModelFrame *> models;
  std::vector<GenValue> elements;

  static GenValue ofTensor(mlir::Value v) {
    GenValue g;
    g.kind = Kind::Tensor;
    g.tensor = v;
    return g;
  }
  static GenValue ofScalar(double v, bool isInt) {
    GenValue g;
    g.kind = Kind::Scalar;
    g.number = v;
    g.isInt = isInt;
    return g;
  }
  bool ok() const { return kind != Kind::None; }
};

/// An int that a loop bound or a subscript needs: known now, or an index
/// value computed at run time.
struct IntOperand {
  std::optional<int64_t> constant;
  mlir::Value value;
};

/// One instance of a model: the entry model or an inlined submodel.
struct ModelFrame {
  std::shared_ptr<const sema::ModelInstance> instance; // concrete
  std::string prefix;                                  // "fc1.", "layers.0."
  llvm::StringMap<double> scalarArgs;                  // float/bool arguments
  llvm::StringMap<std::unique_ptr<ModelFrame>> children;

  const sema::ModelInfo &info() const { return *instance->model; }
  sema::Substitution subst() const { return sema::substitutionFor(*instance); }
};

/// The locals of one inlined fn call.
struct Scope {
  ModelFrame *frame = nullptr;
  llvm::StringMap<GenValue> locals;
  /// Extents of the fn's symbolic dims (`B`), from the arguments that bound
  /// them: static ones, and a tensor.dim for the dynamic ones.
  llvm::DenseMap<sema::AtomId, int64_t> dimExtents;
  llvm::DenseMap<sema::AtomId, mlir::Value> dimValues;
  /// The argument and dim each dynamic symbol comes from; its tensor.dim is
  /// made only when a size needs it (devices' planners need no size ops).
  llvm::DenseMap<sema::AtomId, std::pair<mlir::Value, int64_t>> dimSources;
  std::optional<GenValue> returned;
};

/// Raised (as a flag) once an error has been reported: generation stops.
class Generator {
public:
  Generator(mlir::MLIRContext &ctx, const sema::CheckedProgram &program,
            const llvm::SourceMgr &sourceMgr, DiagnosticEngine &diags, DimBindings bindings,
            const EntryValues &entry)
      : ctx(ctx), program(program), sourceMgr(sourceMgr), diags(diags), b(&ctx),
        bindings(bindings.begin(), bindings.end()), entry(entry) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(const ConcreteModel &model, llvm::StringRef fnName);

private:
  // --- helpers -------------------------------------------------------------
  mlir::Location loc(Range range);
  mlir::Type elementType(ast::DType dtype);
  mlir::mdl::DeviceAttr deviceAttr(const sema::Device &device);
  std::optional<sema::Device> concreteDevice(const sema::Device &device, ModelFrame &frame);
  RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, mlir::Type element,
                              mlir::Attribute encoding) {
    return RankedTensorType::get(shape, element, encoding);
  }
  RankedTensorType typeOf(mlir::Value v) { return mlir::cast<RankedTensorType>(v.getType()); }
  RankedTensorType withShape(mlir::Value v, llvm::ArrayRef<int64_t> shape) {
    RankedTensorType t = typeOf(v);
    return tensorType(shape, t.getElementType(), t.getEncoding());
  }
  std::optional<RankedTensorType> loweredType(const sema::Type &type, ModelFrame &frame, Range at);
  GenValue unsupported(Range at, const llvm::Twine &what);
  /// `d` with the frame's arguments and the bound symbols substituted.
  sema::Dim concreteDim(sema::Dim d, ModelFrame &frame);
  /// The extent of `d` in `frame` (its arguments and the bound symbols), or `?`.
  int64_t extentOf(sema::Dim d, ModelFrame &frame) {
    std::optional<int64_t> k = concreteDim(d, frame).asConstant();
    return k && *k >= 0 ? *k : kDyn;
  }
  /// `d` as an index value: a constant, or computed from the run-time
  /// extents of the scope's symbolic dims; null when it depends on anything
  /// else.
  mlir::Value sizeValue(sema::Dim d, Scope &scope, mlir::Location l);
  /// `d` with the scope's static symbol extents substituted (a callee's `T`
  /// is what its arguments gave it, whatever the entry fn's `T` is).
  sema::Dim scopedDim(sema::Dim d, Scope &scope) {
    return d.substitute([&](sema::AtomId atom) -> std::optional<sema::Dim> {
      auto it = scope.dimExtents.find(atom);
      if (it == scope.dimExtents.end())
        return std::nullopt;
      return sema::Dim::constant(it->second);
    });
  }
  /// The checker's shape of `expr` as a tensor shape plus one index value per
  /// dynamic dim; nullopt when a size cannot be computed.
  std::optional<std::pair<llvm::SmallVector<int64_t>, llvm::SmallVector<mlir::Value>>>
  checkedShape(const ast::Expr &expr, Scope &scope, mlir::Location l);
  GenValue fail() {
    failed = true;
    return {};
  }

  // --- expressions ----------------------------------------------------------
  GenValue gen(const ast::Expr &expr, Scope &scope);
  GenValue genName(const ast::NameExpr &name, Scope &scope);
  GenValue genMember(const ast::MemberExpr &member, Scope &scope);
  GenValue genBinary(const ast::BinaryExpr &binary, Scope &scope);
  GenValue genIndex(const ast::IndexExpr &index, Scope &scope);
  GenValue genCall(const ast::CallExpr &call, Scope &scope,
                   std::optional<sema::Device> placement = std::nullopt);
  /// Whether the checker resolved `call` to a built-in (and bound its
  /// arguments).
  bool isBuiltinCall(const ast::CallExpr &call) const {
    const sema::ExprInfo *info = program.typeOf(&call);
    return info && !info->builtin.empty();
  }
  GenValue genBuiltin(llvm::StringRef name, const ast::CallExpr &call, const GenValue *receiver,
                      Scope &scope, std::optional<sema::Device> placement);
  GenValue callModel(ModelFrame &frame, llvm::StringRef fnName, const ast::CallExpr &call,
                     const GenValue *receiver, Scope &scope);
  GenValue inlineFn(ModelFrame &frame, const ast::FnDecl &fn, llvm::ArrayRef<GenValue> args);
  bool genStmts(const std::vector<ast::StmtPtr> &stmts, Scope &scope);
  /// The statements of a nested block (a branch of an `if`).
  bool genBlock(const std::vector<ast::StmtPtr> &stmts, Scope &scope);
  /// `for t in a..b`: unrolled when the trip count is a small constant,
  /// else an scf.for carrying the re-bound tensors.
  bool genRangeLoop(const ast::ForStmt &loop, Scope &scope);
  /// `x[...] = v`: the new value of `x`.
  GenValue genIndexedWrite(const ast::IndexExpr &target, const GenValue &value, Scope &scope);
  /// `v` (generated from `expr`) as an int operand; nullopt after an error.
  std::optional<IntOperand> intOperandOf(const GenValue &v, const ast::Expr &expr, Scope &scope);
  std::optional<IntOperand> intOperand(const ast::Expr &expr, Scope &scope) {
    GenValue v = gen(expr, scope);
    return v.ok() ? intOperandOf(v, expr, scope) : std::nullopt;
  }
  mlir::Value indexValue(const IntOperand &i, mlir::Location l) {
    return i.value ? i.value : mlir::arith::ConstantIndexOp::create(b, l, *i.constant);
  }
  /// `l op r` on ints of which one is known only at run time.
  GenValue indexArithmetic(const ast::BinaryExpr &binary, const GenValue &l, const GenValue &r,
                           Scope &scope);
  std::optional<GenValue> constantOf(const ast::Expr &expr, ModelFrame &frame);
  /// `l op r` for two compile-time scalars (Python's `%` and `//` for ints).
  std::optional<GenValue> foldScalars(ast::BinaryOp op, const GenValue &l, const GenValue &r);
  ModelFrame *child(ModelFrame &parent, const std::string &name,
                    std::shared_ptr<const sema::ModelInstance> inst, const ast::Expr *init);

  mlir::Value broadcastScalar(const GenValue &scalar, mlir::Value like, Range at);
  mlir::Value binaryOp(ast::BinaryOp op, mlir::Value lhs, mlir::Value rhs, Range at);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape, mlir::Location l);
  /// `@` where an operand is a vector (rank 1), as torch.matmul does it.
  mlir::Value vectorMatmul(mlir::Value lhs, mlir::Value rhs, Range at);
  /// adaptive_avg_pool2d of a static [N, C, H, W] to [N, C, outH, outW] when
  /// the output does not divide the input: one mean per (overlapping) window.
  mlir::Value adaptiveAvgPoolByWindows(mlir::Value x, int64_t outH, int64_t outW, mlir::Location l);

  // Built-ins composed of other mdl ops (PyTorch's signatures for ports).
  static bool isComposedBuiltin(llvm::StringRef name);
  GenValue genComposedBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                              llvm::ArrayRef<std::optional<GenValue>> args,
                              llvm::ArrayRef<Range> ranges, llvm::ArrayRef<llvm::StringRef> strings,
                              Scope &scope);
  /// i64 [n]: start, start + 1, ... on `device`.
  mlir::Value indexVector(int64_t n, int64_t start, mlir::Attribute device, mlir::Location l);
  /// A 0-dim tensor of `value` with the dtype and device of `like`.
  mlir::Value scalarLike(double value, mlir::Value like, mlir::Location l);
  template <typename Op>
  mlir::Value elementwise(mlir::Value lhs, mlir::Value rhs, mlir::Location l);
  mlir::Value compare(llvm::StringRef predicate, mlir::Value lhs, mlir::Value rhs,
                      mlir::Location l);
  /// x[..., start:end, ...] along `dim` (static bounds).
  mlir::Value sliceDim(mlir::Value x, int64_t dim, int64_t start, int64_t end, mlir::Location l);
  /// index_select(x, dim, index).
  mlir::Value selectAlong(mlir::Value x, int64_t dim, mlir::Value index, mlir::Location l);
  /// A vector [n] reshaped to [n, 1, ...] so it broadcasts along `dim` of a rank-`rank` tensor.
  mlir::Value alongDim(mlir::Value vector, int64_t dim, int64_t rank, mlir::Location l);
  /// F.pad of one dim: an index_select of the source positions, and for
  /// `constant` a where() that fills the positions outside the input.
  mlir::Value padDim(mlir::Value x, int64_t dim, int64_t left, int64_t right, llvm::StringRef mode,
                     double value, mlir::Location l);
  /// conv1d (as conv2d), conv_transpose2d (as a conv2d of the zero-inserted
  /// input), group_norm (as layer_norm), interpolate (index_select and weights).
  GenValue genConvLike(llvm::StringRef name, const ast::CallExpr &call,
                       llvm::ArrayRef<std::optional<GenValue>> args,
                       llvm::ArrayRef<llvm::StringRef> strings, Scope &scope);
  /// conv_transpose2d's input along `dim`: `length` positions, x[t / stride]
  /// at t = j - lead when that is a multiple of the stride inside x, else 0.
  mlir::Value convTransposeInput(mlir::Value x, int64_t dim, int64_t stride, int64_t lead,
                                 int64_t length, mlir::Location l);
  /// F.interpolate along one dim to `out` positions.
  mlir::Value resampleDim(mlir::Value x, int64_t dim, int64_t out, llvm::StringRef mode,
                          bool alignCorners, std::optional<double> scaleFactor, mlir::Location l);

  mlir::MLIRContext &ctx;
  const sema::CheckedProgram &program;
  const llvm::SourceMgr &sourceMgr;
  DiagnosticEngine &diags;
  mlir::OpBuilder b;
  std::vector<std::pair<sema::AtomId, int64_t>> bindings;
  const EntryValues &entry;
  llvm::StringMap<mlir::Value> stateArgs; // by state_dict name
  unsigned depth = 0;
  bool failed = false;
};

mlir::Location Generator::loc(Range range) {
  if (!range.isValid())
    return b.getUnknownLoc();
  unsigned buffer = sourceMgr.FindBufferContainingLoc(range.begin);
  if (!buffer)
    return b.getUnknownLoc();
  auto [line, col] = sourceMgr.getLineAndColumn(range.begin, buffer);
  llvm::StringRef file = sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier();
  return mlir::FileLineColLoc::get(&ctx, file, line, col);
}

mlir::Type Generator::elementType(ast::DType dtype) {
  switch (dtype) {
  case ast::DType::F16:
    return b.getF16Type();
  case ast::DType::BF16:
    return b.getBF16Type();
  case ast::DType::F32:
    return b.getF32Type();
  case ast::DType::F64:
    return b.getF64Type();
  case ast::DType::I32:
    return b.getI32Type();
  case ast::DType::I64:
    return b.getI64Type();
  case ast::DType::Bool:
    return b.getI1Type();
  }
  return b.getF32Type();
}

mlir::mdl::DeviceAttr Generator::deviceAttr(const sema::Device &device) {
  if (device.kind == sema::Device::Kind::Cuda)
    return mlir::mdl::DeviceAttr::get(&ctx, "cuda", device.index);
  return mlir::mdl::DeviceAttr::get(&ctx, "cpu", 0);
}

std::optional<sema::Device> Generator::concreteDevice(const sema::Device &device,
                                                      ModelFrame &frame) {
  sema::Device d = frame.subst().apply(device);
  if (d.isConcrete())
    return d;
  // An unresolved device (a creation op the checker left generic): the
  // model's home device.
  if (!frame.instance->devices.empty())
    return frame.instance->devices.front();
  return std::nullopt;
}

std::optional<RankedTensorType> Generator::loweredType(const sema::Type &type, ModelFrame &frame,
                                                       Range at) {
  if (!type.isTensor())
    return std::nullopt;
  llvm::SmallVector<int64_t, 4> shape;
  if (type.shape.hasPack()) {
    // The entry's pack: the leading dims the call's inputs have.
    if (!entry.pack) {
      unsupported(at, "a `...` dimension pack in an entry fn's signature without the inputs' "
                      "ranks (`modelc run` binds it from its inputs)");
      return std::nullopt;
    }
    shape.append(entry.pack->begin(), entry.pack->end());
  }
  for (sema::Dim d : type.shape.dims)
    shape.push_back(extentOf(d, frame));
  std::optional<sema::Device> dev = concreteDevice(type.dev, frame);
  if (!dev)
    return std::nullopt;
  return tensorType(shape, elementType(type.dtype), deviceAttr(*dev));
}

sema::Dim Generator::concreteDim(sema::Dim d, ModelFrame &frame) {
  return frame.subst().apply(d).substitute([&](sema::AtomId atom) -> std::optional<sema::Dim> {
    for (const auto &[bound, value] : bindings)
      if (bound == atom)
        return sema::Dim::constant(value);
    return std::nullopt;
  });
}

mlir::Value Generator::sizeValue(sema::Dim d, Scope &scope, mlir::Location l) {
  auto constant = [&](int64_t v) -> mlir::Value {
    return mlir::arith::ConstantIndexOp::create(b, l, v);
  };
  sema::Dim concrete = concreteDim(d, *scope.frame);
  if (std::optional<int64_t> k = concrete.asConstant())
    return *k >= 0 ? constant(*k) : mlir::Value();
  mlir::Value total;
  for (const sema::Term &term : concrete.terms()) {
    mlir::Value product = constant(term.coeff);
    for (sema::AtomId atom : term.atoms) {
      mlir::Value &extent = scope.dimValues[atom];
      if (!extent) {
        auto source = scope.dimSources.find(atom);
        if (source == scope.dimSources.end())
          return {};
        extent = mlir::tensor::DimOp::create(b, l, source->second.first, source->second.second);
      }
      product = mlir::arith::MulIOp::create(b, l, product, extent);
    }
    total = total ? mlir::Value(mlir::arith::AddIOp::create(b, l, total, product)) : product;
  }
  return total ? total : constant(0);
}

std::optional<std::pair<llvm::SmallVector<int64_t>, llvm::SmallVector<mlir::Value>>>
Generator::checkedShape(const ast::Expr &expr, Scope &scope, mlir::Location l) {
  const sema::ExprInfo *info = program.typeOf(&expr);
  if (!info || !info->type.isTensor() || info->type.shape.hasPack())
    return std::nullopt;
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<mlir::Value> dynamic;
  for (sema::Dim dim : info->type.shape.dims) {
    sema::Dim d = scopedDim(dim, scope);
    shape.push_back(extentOf(d, *scope.frame));
    if (shape.back() != kDyn)
      continue;
    mlir::Value v = sizeValue(d, scope, l);
    if (!v)
      return std::nullopt;
    dynamic.push_back(v);
  }
  return std::make_pair(shape, dynamic);
}

GenValue Generator::unsupported(Range at, const llvm::Twine &what) {
  if (!failed)
    diags.report(DiagId::UnsupportedOnCpu, at, what.str())
        .primary("the checker accepts this, but modelc cannot compile it for execution yet");
  return fail();
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp> Generator::run(const ConcreteModel &model,
                                                 llvm::StringRef fnName) {
  const sema::ModelInfo &info = model.model();
  const sema::FnInfo *fn = model.findFn(fnName);
  const sema::FnInfo *generic = info.findFn(fnName);
  Range modelRange = info.decl ? info.decl->name.range : Range{};
  if (!fn || !generic || !generic->decl) {
    diags.report(DiagId::NoEntryFunction, modelRange, info.name, fnName);
    return nullptr;
  }

  ModelFrame root;
  root.instance = model.instance;
  for (const auto &entry : model.scalarArgs)
    root.scalarArgs[entry.getKey()] = entry.getValue();

  // Scalar parameters are constants of this compilation; an `int` one also
  // fixes the dims that name it (`zeros([B, k])`), so it is bound first.
  llvm::SmallVector<std::optional<GenValue>> scalarInputs(fn->params.size());
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const sema::FnParamInfo &p = fn->params[i];
    if (p.type.isTensor())
      continue;
    Range at = i < generic->decl->params.size() ? generic->decl->params[i].range
                                                : generic->decl->name.range;
    auto given = llvm::find_if(entry.scalars, [&](const auto &s) { return s.first == p.name; });
    if (given == entry.scalars.end()) {
      unsupported(at, "a scalar parameter of an entry fn without a value (`modelc run` takes it "
                      "as `--input VALUE`)");
      return nullptr;
    }
    bool isInt = p.type.kind() == sema::Type::Kind::Int;
    if (isInt)
      bindings.push_back({sema::internSymbol(p.name), int64_t(given->second)});
    scalarInputs[i] = GenValue::ofScalar(given->second, isInt);
  }

  llvm::SmallVector<mlir::Type> argTypes;
  for (const sema::InstantiatedState &s : model.concrete.state) {
    std::optional<RankedTensorType> t = loweredType(s.type, root, modelRange);
    if (!t)
      return nullptr;
    argTypes.push_back(*t);
  }
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const sema::FnParamInfo &p = fn->params[i];
    if (scalarInputs[i])
      continue;
    Range at = i < generic->decl->params.size() ? generic->decl->params[i].range
                                                : generic->decl->name.range;
    std::optional<RankedTensorType> t = loweredType(p.type, root, at);
    if (!t)
      return nullptr;
    argTypes.push_back(*t);
  }
  // The results: one tensor, or a tuple of tensors (one function result each).
  std::vector<sema::Type> resultTypes = fn->result.kind() == sema::Type::Kind::Tuple
                                            ? *fn->result.elements
                                            : std::vector<sema::Type>{fn->result};
  if (!llvm::all_of(resultTypes, [](const sema::Type &t) { return t.isTensor(); })) {
    unsupported(generic->decl->name.range, "an entry fn whose results are not all tensors");
    return nullptr;
  }

  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc(modelRange));
  b.setInsertionPointToEnd(module->getBody());
  auto func = mlir::func::FuncOp::create(b, loc(generic->decl->name.range), fnName,
                                         b.getFunctionType(argTypes, {}));
  mlir::Block *entry = func.addEntryBlock();
  // Weights are memory-mapped read-only and inputs belong to the caller:
  // bufferization must never write into an argument.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttr(i, "bufferization.writable", b.getBoolAttr(false));
  b.setInsertionPointToStart(entry);

  for (size_t i = 0; i < model.concrete.state.size(); ++i)
    stateArgs[model.concrete.state[i].name] = entry->getArgument(i);
  llvm::SmallVector<GenValue> inputs;
  unsigned nextArg = unsigned(model.concrete.state.size());
  for (const std::optional<GenValue> &scalar : scalarInputs)
    inputs.push_back(scalar ? *scalar : GenValue::ofTensor(entry->getArgument(nextArg++)));

  GenValue returned = inlineFn(root, *generic->decl, inputs);
  if (failed || !returned.ok())
    return nullptr;
  llvm::SmallVector<GenValue> results;
  if (returned.kind == GenValue::Kind::Tuple)
    results.append(returned.elements.begin(), returned.elements.end());
  else
    results.push_back(returned);
  if (results.size() != resultTypes.size() ||
      llvm::any_of(results, [](const GenValue &r) { return r.kind != GenValue::Kind::Tensor; })) {
    unsupported(generic->decl->name.range, "an entry fn that does not return its tensors");
    return nullptr;
  }
  llvm::SmallVector<mlir::Value> resultValues;
  for (const auto &[result, type] : llvm::zip_equal(results, resultTypes)) {
    // The caller sizes each output from the signature: a result of another
    // static shape would be written out of bounds.
    if (std::optional<RankedTensorType> promised = loweredType(type, root, modelRange)) {
      RankedTensorType actual = typeOf(result.tensor);
      bool fits = actual.getRank() == promised->getRank() &&
                  actual.getElementType() == promised->getElementType();
      for (int64_t d = 0; fits && d < actual.getRank(); ++d)
        fits = actual.isDynamicDim(d) || promised->isDynamicDim(d) ||
               actual.getDimSize(d) == promised->getDimSize(d);
      if (!fits) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "a result of type " << actual << " where the signature promises " << *promised;
        unsupported(generic->decl->name.range, text);
        return nullptr;
      }
    }
    resultValues.push_back(result.tensor);
  }
  mlir::func::ReturnOp::create(b, loc(generic->decl->bodyRange), resultValues);
  func.setType(b.getFunctionType(argTypes, mlir::ValueRange(resultValues).getTypes()));
  if (mlir::failed(mlir::verify(*module))) {
    unsupported(generic->decl->name.range, "this model (the generated mdl IR does not verify)");
    return nullptr;
  }
  return module;
}

//===----------------------------------------------------------------------===//
// Models and fns
//===----------------------------------------------------------------------===//

ModelFrame *Generator::child(ModelFrame &parent, const std::string &name,
                             std::shared_ptr<const sema::ModelInstance> inst,
                             const ast::Expr *init) {
  std::unique_ptr<ModelFrame> &slot = parent.children[name];
  if (slot)
    return slot.get();
  slot = std::make_unique<ModelFrame>();
  slot->instance = std::move(inst);
  slot->prefix = parent.prefix + name + ".";
  // Float and bool arguments: given in the submodel's construction, else
  // their literal defaults.
  const ast::ModelDecl *decl = slot->info().decl;
  const ast::CallExpr *call = llvm::dyn_cast_if_present<ast::CallExpr>(init);
  const ast::InstantiateExpr *instExpr = llvm::dyn_cast_if_present<ast::InstantiateExpr>(init);
  const std::vector<ast::Arg> *args = call ? &call->args : instExpr ? &instExpr->args : nullptr;
  for (size_t i = 0; decl && i < decl->valueParams.size(); ++i) {
    const ast::ValueParam &p = decl->valueParams[i];
    if (p.type == ast::ScalarKind::Int)
      continue;
    const ast::Expr *given = nullptr;
    if (args) {
      size_t positional = 0;
      for (const ast::Arg &a : *args) {
        if (a.name ? a.name->name == p.name.name : positional == i)
          given = a.value.get();
        if (!a.name)
          ++positional;
      }
    }
    const ast::Expr *source = given ? given : p.defaultValue.get();
    ModelFrame &from = given ? parent : *slot;
    if (source)
      if (std::optional<GenValue> v = constantOf(*source, from))
        slot->scalarArgs[p.name.name] = v->number;
  }
  return slot.get();
}

GenValue Generator::inlineFn(ModelFrame &frame, const ast::FnDecl &fn,
                             llvm::ArrayRef<GenValue> args) {
  if (++depth > kMaxInlineDepth) {
    --depth;
    return unsupported(fn.name.range, "calls nested deeper than 64 levels");
  }
  Scope scope;
  scope.frame = &frame;
  for (size_t i = 0; i < fn.params.size() && i < args.size(); ++i)
    scope.locals[fn.params[i].name.name] = args[i];
  // Symbolic dims of the signature take their extents from the arguments.
  if (const sema::FnInfo *info = frame.info().findFn(fn.name.name)) {
    for (size_t i = 0; i < info->params.size() && i < args.size(); ++i) {
      const sema::Type &type = info->params[i].type;
      if (args[i].kind != GenValue::Kind::Tensor || !type.isTensor())
        continue;
      RankedTensorType actual = typeOf(args[i].tensor);
      // Written dims follow the pack (`[..., T, n]`): they are the last ones.
      int64_t first = actual.getRank() - int64_t(type.shape.dims.size());
      if (first < 0 || (first > 0 && !type.shape.hasPack()))
        continue;
      for (size_t k = 0; k < type.shape.dims.size(); ++k) {
        int64_t d = first + int64_t(k);
        std::optional<sema::AtomId> atom = type.shape.dims[k].asAtom();
        if (!atom || scope.dimExtents.count(*atom) || scope.dimSources.count(*atom))
          continue;
        if (!actual.isDynamicDim(d))
          scope.dimExtents[*atom] = actual.getDimSize(d);
        else
          scope.dimSources[*atom] = {args[i].tensor, d};
      }
    }
  }
  genStmts(fn.body, scope);
  --depth;
  if (failed)
    return {};
  if (!scope.returned) {
    // A fn declared without a result computes nothing observable.
    const sema::FnInfo *info = frame.info().findFn(fn.name.name);
    if (info && info->result.kind() == sema::Type::Kind::Void) {
      GenValue v;
      v.kind = GenValue::Kind::Void;
      return v;
    }
    return unsupported(fn.name.range, "a fn without a result value");
  }
  return *scope.returned;
}

bool Generator::genStmts(const std::vector<ast::StmtPtr> &stmts, Scope &scope) {
  for (const ast::StmtPtr &stmt : stmts) {
    if (failed || scope.returned)
      return !failed;
    if (auto *let = dyn_cast<ast::LetStmt>(stmt.get())) {
      GenValue v = gen(*let->value, scope);
      if (!v.ok())
        return false;
      scope.locals[let->name.name] = v;
    } else if (auto *let = dyn_cast<ast::LetTupleStmt>(stmt.get())) {
      GenValue v = gen(*let->value, scope);
      if (!v.ok())
        return false;
      if (v.kind != GenValue::Kind::Tuple || v.elements.size() != let->names.size()) {
        unsupported(let->value->range, "destructuring this value");
        return false;
      }
      for (size_t i = 0; i < let->names.size(); ++i)
        if (let->names[i].name != "_")
          scope.locals[let->names[i].name] = v.elements[i];
    } else if (auto *assign = dyn_cast<ast::AssignStmt>(stmt.get())) {
      GenValue v = gen(*assign->value, scope);
      if (!v.ok())
        return false;
      if (auto *target = llvm::dyn_cast_if_present<ast::IndexExpr>(assign->indexedTarget.get()))
        v = genIndexedWrite(*target, v, scope);
      if (!v.ok())
        return false;
      scope.locals[assign->target.name] = v;
    } else if (auto *ret = dyn_cast<ast::ReturnStmt>(stmt.get())) {
      if (!ret->value) { // `return` in a fn without a result
        GenValue v;
        v.kind = GenValue::Kind::Void;
        scope.returned = v;
        return true;
      }
      GenValue v = gen(*ret->value, scope);
      if (!v.ok())
        return false;
      scope.returned = v;
    } else if (auto *expr = dyn_cast<ast::ExprStmt>(stmt.get())) {
      if (!gen(*expr->expr, scope).ok())
        return false;
    } else if (auto *branch = dyn_cast<ast::IfStmt>(stmt.get())) {
      // The checker recorded the condition; this instance's arguments
      // decide it, and only the block taken is generated.
      std::optional<bool> taken = program.branchTaken(*branch, scope.frame->subst());
      if (!taken) {
        unsupported(branch->condition ? branch->condition->range : branch->range,
                    "an `if` whose condition this instance's arguments do not decide");
        return false;
      }
      if (!genBlock(*taken ? branch->thenBody : branch->elseBody, scope))
        return false;
    } else if (auto *loop = dyn_cast<ast::ForStmt>(stmt.get()); loop && loop->isRange()) {
      if (!genRangeLoop(*loop, scope))
        return false;
    } else if (auto *loop = dyn_cast<ast::ForStmt>(stmt.get())) {
      GenValue list = gen(*loop->iterable, scope);
      if (!list.ok())
        return false;
      if (list.kind != GenValue::Kind::ModelList) {
        unsupported(loop->iterable->range, "a `for` loop over anything but a list of submodels");
        return false;
      }
      // Unrolled: one copy of the body per submodel.
      for (ModelFrame *m : list.models) {
        GenValue var;
        var.kind = GenValue::Kind::Model;
        var.model = m;
        scope.locals[loop->var.name] = var;
        if (!genStmts(loop->body, scope))
          return false;
        if (scope.returned)
          break;
      }
      scope.locals.erase(loop->var.name);
    }
  }
  return !failed;
}

bool Generator::genBlock(const std::vector<ast::StmtPtr> &stmts, Scope &scope) {
  // The block's own `let`s end with it; assignments to outer locals stay.
  llvm::StringMap<std::optional<GenValue>> shadowed;
  for (const ast::StmtPtr &stmt : stmts)
    if (auto *let = llvm::dyn_cast_if_present<ast::LetStmt>(stmt.get())) {
      auto it = scope.locals.find(let->name.name);
      shadowed.try_emplace(let->name.name, it == scope.locals.end()
                                               ? std::nullopt
                                               : std::optional<GenValue>(it->second));
    }
  bool ok = genStmts(stmts, scope);
  for (const auto &entry : shadowed) {
    if (entry.getValue())
      scope.locals[entry.getKey()] = *entry.getValue();
    else
      scope.locals.erase(entry.getKey());
  }
  return ok;
}

GenValue Generator::callModel(ModelFrame &frame, llvm::StringRef fnName, const ast::CallExpr &call,
                              const GenValue *receiver, Scope &scope) {
  const sema::FnInfo *fn = frame.info().findFn(fnName);
  if (!fn || !fn->decl)
    return unsupported(call.range, "calling a model without a `" + fnName + "` fn");
  const ast::FnDecl &decl = *fn->decl;
  llvm::SmallVector<GenValue, 4> args(decl.params.size());
  size_t positional = 0;
  if (receiver)
    args[positional++] = *receiver;
  for (const ast::Arg &a : call.args) {
    size_t slot = positional;
    if (a.name) {
      auto it = llvm::find_if(decl.params,
                              [&](const ast::FnParam &p) { return p.name.name == a.name->name; });
      slot = size_t(it - decl.params.begin());
    } else {
      ++positional;
    }
    if (slot >= args.size() || !a.value)
      return unsupported(a.range, "this argument");
    args[slot] = gen(*a.value, scope);
    if (!args[slot].ok())
      return {};
  }
  return inlineFn(frame, decl, args);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::optional<GenValue> Generator::constantOf(const ast::Expr &expr, ModelFrame &frame) {
  if (auto *i = dyn_cast<ast::IntLitExpr>(&expr))
    return GenValue::ofScalar(double(i->value), true);
  if (auto *f = dyn_cast<ast::FloatLitExpr>(&expr))
    return GenValue::ofScalar(f->value, false);
  if (auto *bl = dyn_cast<ast::BoolLitExpr>(&expr))
    return GenValue::ofScalar(bl->value ? 1 : 0, false);
  if (const sema::ExprInfo *info = program.typeOf(&expr)) {
    if (info->type.kind() == sema::Type::Kind::Int && info->type.intValue)
      if (std::optional<int64_t> k = concreteDim(*info->type.intValue, frame).asConstant())
        return GenValue::ofScalar(double(*k), true);
  }
  if (auto *name = dyn_cast<ast::NameExpr>(&expr)) {
    auto it = frame.scalarArgs.find(name->name);
    if (it != frame.scalarArgs.end())
      return GenValue::ofScalar(it->second, false);
  }
  if (auto *u = dyn_cast<ast::UnaryExpr>(&expr)) {
    std::optional<GenValue> v = constantOf(*u->operand, frame);
    if (!v)
      return std::nullopt;
    if (u->op == ast::UnaryOp::Not)
      return GenValue::ofScalar(v->number == 0 ? 1 : 0, false);
    return GenValue::ofScalar(-v->number, v->isInt);
  }
  if (auto *bin = dyn_cast<ast::BinaryExpr>(&expr)) {
    std::optional<GenValue> l = constantOf(*bin->lhs, frame), r = constantOf(*bin->rhs, frame);
    if (!l || !r)
      return std::nullopt;
    return foldScalars(bin->op, *l, *r);
  }
  return std::nullopt;
}

std::optional<GenValue> Generator::foldScalars(ast::BinaryOp op, const GenValue &l,
                                               const GenValue &r) {
  bool isInt = l.isInt && r.isInt;
  switch (op) {
  case ast::BinaryOp::Add:
    return GenValue::ofScalar(l.number + r.number, isInt);
  case ast::BinaryOp::Sub:
    return GenValue::ofScalar(l.number - r.number, isInt);
  case ast::BinaryOp::Mul:
    return GenValue::ofScalar(l.number * r.number, isInt);
  case ast::BinaryOp::Div:
    if (r.number == 0)
      return std::nullopt;
    return GenValue::ofScalar(isInt ? std::floor(l.number / r.number) : l.number / r.number, isInt);
  case ast::BinaryOp::Pow:
    return GenValue::ofScalar(std::pow(l.number, r.number), isInt);
  case ast::BinaryOp::Mod: {
    if (r.number == 0)
      return std::nullopt;
    // Python: the result has the divisor's sign.
    return GenValue::ofScalar(l.number - std::floor(l.number / r.number) * r.number, isInt);
  }
  case ast::BinaryOp::And:
    return GenValue::ofScalar(l.number != 0 && r.number != 0, false);
  case ast::BinaryOp::Or:
    return GenValue::ofScalar(l.number != 0 || r.number != 0, false);
  case ast::BinaryOp::Eq:
    return GenValue::ofScalar(l.number == r.number, false);
  case ast::BinaryOp::Ne:
    return GenValue::ofScalar(l.number != r.number, false);
  case ast::BinaryOp::Lt:
    return GenValue::ofScalar(l.number < r.number, false);
  case ast::BinaryOp::Le:
    return GenValue::ofScalar(l.number <= r.number, false);
  case ast::BinaryOp::Gt:
    return GenValue::ofScalar(l.number > r.number, false);
  case ast::BinaryOp::Ge:
    return GenValue::ofScalar(l.number >= r.number, false);
  default:
    return std::nullopt;
  }
}

GenValue Generator::gen(const ast::Expr &expr, Scope &scope) {
  if (failed)
    return {};
  switch (expr.kind()) {
  case ast::Expr::Kind::IntLit:
  case ast::Expr::Kind::FloatLit:
  case ast::Expr::Kind::BoolLit:
    return *constantOf(expr, *scope.frame);
  case ast::Expr::Kind::StringLit:
    return unsupported(expr.range, "a string value");
  case ast::Expr::Kind::DeviceLit: {
    const ast::DeviceExpr &d = dyn_cast<ast::DeviceLitExpr>(&expr)->device;
    GenValue v;
    v.kind = GenValue::Kind::Device;
    v.device = d.kind == ast::DeviceExpr::Kind::Cuda ? sema::Device::cuda(d.cudaIndex)
                                                     : sema::Device::cpu();
    return v;
  }
  case ast::Expr::Kind::DTypeLit: {
    GenValue v;
    v.kind = GenValue::Kind::DType;
    v.dtype = dyn_cast<ast::DTypeLitExpr>(&expr)->dtype;
    return v;
  }
  case ast::Expr::Kind::Name:
    return genName(*dyn_cast<ast::NameExpr>(&expr), scope);
  case ast::Expr::Kind::List:
  case ast::Expr::Kind::Tuple: {
    GenValue v;
    const auto *list = dyn_cast<ast::ListExpr>(&expr);
    v.kind = list ? GenValue::Kind::List : GenValue::Kind::Tuple;
    for (const ast::ExprPtr &e :
         list ? list->elements : llvm::cast<ast::TupleExpr>(&expr)->elements) {
      v.elements.push_back(gen(*e, scope));
      if (!v.elements.back().ok())
        return {};
    }
    return v;
  }
  case ast::Expr::Kind::Unary: {
    auto *u = dyn_cast<ast::UnaryExpr>(&expr);
    bool isNot = u->op == ast::UnaryOp::Not;
    GenValue x = gen(*u->operand, scope);
    if (!x.ok())
      return {};
    if (x.kind == GenValue::Kind::Scalar)
      return isNot ? GenValue::ofScalar(x.number == 0 ? 1 : 0, false)
                   : GenValue::ofScalar(-x.number, x.isInt);
    if (x.kind != GenValue::Kind::Tensor)
      return unsupported(expr.range, isNot ? "`not` of this value" : "negating this value");
    if (isNot)
      return GenValue::ofTensor(
          mlir::mdl::NotOp::create(b, loc(expr.range), x.tensor.getType(), x.tensor));
    return GenValue::ofTensor(
        mlir::mdl::NegOp::create(b, loc(expr.range), x.tensor.getType(), x.tensor));
  }
  case ast::Expr::Kind::Binary:
    return genBinary(*dyn_cast<ast::BinaryExpr>(&expr), scope);
  case ast::Expr::Kind::Call:
    return genCall(*dyn_cast<ast::CallExpr>(&expr), scope);
  case ast::Expr::Kind::Member:
    return genMember(*dyn_cast<ast::MemberExpr>(&expr), scope);
  case ast::Expr::Kind::Index:
    return genIndex(*dyn_cast<ast::IndexExpr>(&expr), scope);
  case ast::Expr::Kind::Instantiate:
    return unsupported(expr.range, "instantiating a model inside a fn");
  }
  return unsupported(expr.range, "this expression");
}

GenValue Generator::genName(const ast::NameExpr &name, Scope &scope) {
  auto local = scope.locals.find(name.name);
  if (local != scope.locals.end())
    return local->second;
  ModelFrame &frame = *scope.frame;
  const sema::ModelInfo &info = frame.info();
  if (const sema::StateInfo *s = info.findState(name.name)) {
    (void)s;
    auto it = stateArgs.find(frame.prefix + name.name);
    if (it == stateArgs.end())
      return unsupported(name.range, "state `" + frame.prefix + name.name + "` with no argument");
    return GenValue::ofTensor(it->second);
  }
  if (const sema::SubmodelInfo *sub = info.findSubmodel(name.name)) {
    sema::Type t = frame.subst().apply(sub->type);
    const ast::Expr *init = sub->decl ? sub->decl->init.get() : nullptr;
    GenValue v;
    if (t.kind() == sema::Type::Kind::Model && t.instance) {
      v.kind = GenValue::Kind::Model;
      v.model = child(frame, sub->name, t.instance, init);
      return v;
    }
    if (t.kind() == sema::Type::Kind::ModelList && t.instances) {
      v.kind = GenValue::Kind::ModelList;
      for (size_t i = 0; i < t.instances->size(); ++i)
        v.models.push_back(
            child(frame, sub->name + "." + std::to_string(i), (*t.instances)[i], nullptr));
      return v;
    }
    return unsupported(name.range, "this submodel");
  }
  // A symbolic dim the call's arguments fixed (`T` of a callee) is what
  // they gave it, before the entry fn's `T` (which constantOf would read).
  const sema::ExprInfo *einfo = program.typeOf(&name);
  if (einfo && einfo->type.kind() == sema::Type::Kind::Int && einfo->type.intValue) {
    int64_t extent = extentOf(scopedDim(*einfo->type.intValue, scope), frame);
    if (extent != kDyn)
      return GenValue::ofScalar(double(extent), true);
  }
  if (std::optional<GenValue> c = constantOf(name, frame))
    return *c;
  if (einfo && einfo->type.kind() == sema::Type::Kind::Int && einfo->type.intValue) {
    int64_t extent = extentOf(scopedDim(*einfo->type.intValue, scope), frame);
    if (extent != kDyn)
      return GenValue::ofScalar(double(extent), true);
    GenValue v;
    v.kind = GenValue::Kind::Size;
    return v;
  }
  if (einfo && einfo->type.kind() == sema::Type::Kind::Device) {
    std::optional<sema::Device> d = concreteDevice(einfo->type.dev, frame);
    if (d) {
      GenValue v;
      v.kind = GenValue::Kind::Device;
      v.device = *d;
      return v;
    }
  }
  return unsupported(name.range, "the value `" + name.name + "`");
}

GenValue Generator::genMember(const ast::MemberExpr &member, Scope &scope) {
  // `fc1.weight`: state of a submodel.
  if (auto *baseName = dyn_cast<ast::NameExpr>(member.base.get())) {
    if (!scope.locals.count(baseName->name) && scope.frame->info().findSubmodel(baseName->name)) {
      GenValue base = genName(*baseName, scope);
      if (base.kind == GenValue::Kind::Model) {
        auto it = stateArgs.find(base.model->prefix + member.member.name);
        if (it != stateArgs.end())
          return GenValue::ofTensor(it->second);
      }
    }
  }
  GenValue base = gen(*member.base, scope);
  if (!base.ok())
    return {};
  if (base.kind == GenValue::Kind::Model) {
    auto it = stateArgs.find(base.model->prefix + member.member.name);
    if (it != stateArgs.end())
      return GenValue::ofTensor(it->second);
  }
  if (base.kind == GenValue::Kind::Tensor && member.member.name == "T") {
    RankedTensorType t = typeOf(base.tensor);
    int64_t rank = t.getRank();
    if (rank < 2)
      return base;
    llvm::SmallVector<int64_t> shape(t.getShape());
    std::swap(shape[rank - 2], shape[rank - 1]);
    return GenValue::ofTensor(mlir::mdl::TransposeOp::create(
        b, loc(member.range), withShape(base.tensor, shape), base.tensor,
        b.getI64IntegerAttr(rank - 2), b.getI64IntegerAttr(rank - 1)));
  }
  return unsupported(member.range, "the member `" + member.member.name + "`");
}

mlir::Value Generator::broadcastScalar(const GenValue &scalar, mlir::Value like, Range at) {
  RankedTensorType t = typeOf(like);
  return mlir::mdl::FullOp::create(b, loc(at), tensorType({}, t.getElementType(), t.getEncoding()),
                                   mlir::ValueRange{}, b.getF64FloatAttr(scalar.number));
}

/// The broadcast of two shapes (the checker has verified they broadcast).
static llvm::SmallVector<int64_t> broadcastShape(llvm::ArrayRef<int64_t> a,
                                                 llvm::ArrayRef<int64_t> c) {
  size_t rank = std::max(a.size(), c.size());
  llvm::SmallVector<int64_t> out(rank, kDyn);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < c.size() ? c[c.size() - 1 - i] : 1;
    int64_t r;
    if (x == 1)
      r = y;
    else if (y == 1)
      r = x;
    else if (x != kDyn)
      r = x;
    else
      r = y;
    out[rank - 1 - i] = r;
  }
  return out;
}

mlir::Value Generator::binaryOp(ast::BinaryOp op, mlir::Value lhs, mlir::Value rhs, Range at) {
  mlir::Location l = loc(at);
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  if (op == ast::BinaryOp::MatMul) {
    if (lt.getRank() < 2 || rt.getRank() < 2)
      return vectorMatmul(lhs, rhs, at);
    auto ls = lt.getShape(), rs = rt.getShape();
    llvm::SmallVector<int64_t> shape = broadcastShape(ls.drop_back(2), rs.drop_back(2));
    shape.push_back(ls[ls.size() - 2]);
    shape.push_back(rs.back());
    return mlir::mdl::MatmulOp::create(b, l, withShape(lhs, shape), lhs, rhs);
  }
  llvm::SmallVector<int64_t> shape = broadcastShape(lt.getShape(), rt.getShape());
  RankedTensorType result = withShape(lhs, shape);
  auto cmp = [&](llvm::StringRef predicate) -> mlir::Value {
    RankedTensorType boolType = tensorType(shape, b.getI1Type(), lt.getEncoding());
    return mlir::mdl::CmpOp::create(b, l, boolType, b.getStringAttr(predicate), lhs, rhs);
  };
  switch (op) {
  case ast::BinaryOp::Add:
    return mlir::mdl::AddOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Sub:
    return mlir::mdl::SubOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Mul:
    return mlir::mdl::MulOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Div:
    return mlir::mdl::DivOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Pow:
    return mlir::mdl::PowOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Mod:
    return mlir::mdl::RemOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::And:
    return mlir::mdl::AndOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Or:
    return mlir::mdl::OrOp::create(b, l, result, lhs, rhs);
  case ast::BinaryOp::Eq:
    return cmp("eq");
  case ast::BinaryOp::Ne:
    return cmp("ne");
  case ast::BinaryOp::Lt:
    return cmp("lt");
  case ast::BinaryOp::Le:
    return cmp("le");
  case ast::BinaryOp::Gt:
    return cmp("gt");
  case ast::BinaryOp::Ge:
    return cmp("ge");
  default:
    unsupported(at, "`" + ast::binaryOpSpelling(op) + "` on tensors");
    return {};
  }
}

mlir::Value Generator::vectorMatmul(mlir::Value lhs, mlir::Value rhs, Range at) {
  // torch.matmul: a vector lhs is a [1, k] row and a vector rhs a [k, 1]
  // column; the unit dim they add is dropped from the product.
  mlir::Location l = loc(at);
  RankedTensorType lt = typeOf(lhs), rt = typeOf(rhs);
  if (lt.getRank() < 1 || rt.getRank() < 1) {
    unsupported(at, "`@` with a rank-0 operand");
    return {};
  }
  bool rowVector = lt.getRank() == 1, columnVector = rt.getRank() == 1;
  mlir::Value a = rowVector ? reshape(lhs, {1, lt.getDimSize(0)}, l) : lhs;
  mlir::Value c = columnVector ? reshape(rhs, {rt.getDimSize(0), 1}, l) : rhs;
  mlir::Value product = binaryOp(ast::BinaryOp::MatMul, a, c, at);
  if (!product)
    return {};
  llvm::SmallVector<int64_t> shape(typeOf(product).getShape());
  if (columnVector)
    shape.pop_back();
  if (rowVector)
    shape.erase(shape.end() - 1 - (columnVector ? 0 : 1));
  return reshape(product, shape, l);
}

GenValue Generator::genBinary(const ast::BinaryExpr &binary, Scope &scope) {
  // `zeros([3]) @ cuda:0`: placement of a created tensor.
  if (binary.op == ast::BinaryOp::MatMul) {
    const sema::ExprInfo *rhsInfo = program.typeOf(binary.rhs.get());
    if (rhsInfo && rhsInfo->type.kind() == sema::Type::Kind::Device) {
      GenValue dev = gen(*binary.rhs, scope);
      if (!dev.ok())
        return {};
      if (auto *call = dyn_cast<ast::CallExpr>(binary.lhs.get()))
        return genCall(*call, scope, dev.device);
      return gen(*binary.lhs, scope);
    }
  }
  GenValue lhs = gen(*binary.lhs, scope);
  if (!lhs.ok())
    return {};
  GenValue rhs = gen(*binary.rhs, scope);
  if (!rhs.ok())
    return {};
  bool lt = lhs.kind == GenValue::Kind::Tensor, rt = rhs.kind == GenValue::Kind::Tensor;
  if (!lt && !rt && (lhs.kind == GenValue::Kind::Index || rhs.kind == GenValue::Kind::Index))
    return indexArithmetic(binary, lhs, rhs, scope);
  if (!lt && !rt) {
    if (lhs.kind == GenValue::Kind::Scalar && rhs.kind == GenValue::Kind::Scalar)
      if (std::optional<GenValue> c = foldScalars(binary.op, lhs, rhs))
        return *c;
    if (std::optional<GenValue> c = constantOf(binary, *scope.frame))
      return *c;
    if (lhs.kind == GenValue::Kind::Size || rhs.kind == GenValue::Kind::Size) {
      GenValue v;
      v.kind = GenValue::Kind::Size;
      return v;
    }
    return unsupported(binary.range, "this scalar expression");
  }
  if (!lt && lhs.kind != GenValue::Kind::Scalar)
    return unsupported(binary.lhs->range, "this operand");
  if (!rt && rhs.kind != GenValue::Kind::Scalar)
    return unsupported(binary.rhs->range, "this operand");
  mlir::Value l = lt ? lhs.tensor : broadcastScalar(lhs, rhs.tensor, binary.lhs->range);
  mlir::Value r = rt ? rhs.tensor : broadcastScalar(rhs, lhs.tensor, binary.rhs->range);
  mlir::Value v = binaryOp(binary.op, l, r, binary.range);
  if (!v)
    return fail();
  return GenValue::ofTensor(v);
}

GenValue Generator::genIndex(const ast::IndexExpr &index, Scope &scope) {
  GenValue base = gen(*index.base, scope);
  if (!base.ok())
    return {};
  auto constantInt = [&](const ast::Expr &e) -> std::optional<int64_t> {
    std::optional<GenValue> v = constantOf(e, *scope.frame);
    if (!v)
      return std::nullopt;
    return int64_t(v->number);
  };
  if (base.kind == GenValue::Kind::ModelList) {
    std::optional<int64_t> i;
    if (index.subscripts.size() == 1 && !index.subscripts[0].isSlice)
      i = constantInt(*index.subscripts[0].index);
    int64_t n = int64_t(base.models.size());
    if (!i || *i < -n || *i >= n)
      return unsupported(index.range, "this submodel index");
    GenValue v;
    v.kind = GenValue::Kind::Model;
    v.model = base.models[size_t(*i < 0 ? *i + n : *i)];
    return v;
  }
  if (base.kind == GenValue::Kind::List) { // `chunk(x, 2)[1]`
    std::optional<int64_t> i;
    if (index.subscripts.size() == 1 && !index.subscripts[0].isSlice)
      i = constantInt(*index.subscripts[0].index);
    int64_t n = int64_t(base.elements.size());
    if (!i || *i < -n || *i >= n)
      return unsupported(index.range, "this list index");
    return base.elements[size_t(*i < 0 ? *i + n : *i)];
  }
  if (base.kind != GenValue::Kind::Tensor)
    return unsupported(index.base->range, "indexing this value");

  RankedTensorType xt = typeOf(base.tensor);
  int64_t rank = xt.getRank();
  if (int64_t(index.subscripts.size()) > rank)
    return unsupported(index.range, "more subscripts than dims");
  // Single indices known only now (a loop variable): constants of an
  // unrolled loop, or run-time positions read by mdl.select after the
  // static part of the subscripts.
  llvm::DenseMap<size_t, int64_t> generatedIndices;
  llvm::SmallVector<int64_t> runtimeDims;
  llvm::SmallVector<mlir::Value> runtimePositions;
  for (size_t d = 0; d < index.subscripts.size(); ++d) {
    const ast::Slice &sub = index.subscripts[d];
    if (sub.isSlice || constantInt(*sub.index))
      continue;
    std::optional<IntOperand> i = intOperand(*sub.index, scope);
    if (!i)
      return {};
    if (i->constant) {
      generatedIndices[d] = *i->constant;
      continue;
    }
    runtimeDims.push_back(int64_t(d));
    runtimePositions.push_back(i->value);
  }
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  llvm::SmallVector<int64_t> starts(rank, 0), ends(rank, kToEnd), steps(rank, 1), indexDims, shape;
  for (size_t d = 0; d < index.subscripts.size(); ++d) {
    const ast::Slice &sub = index.subscripts[d];
    if (llvm::is_contained(runtimeDims, int64_t(d)))
      continue; // whole here; mdl.select picks the position
    int64_t extent = xt.getDimSize(d);
    auto bound = [&](const ast::ExprPtr &e, int64_t dflt) -> std::optional<int64_t> {
      if (!e)
        return dflt;
      if (auto it = generatedIndices.find(d); it != generatedIndices.end() && e == sub.index)
        return it->second;
      return constantInt(*e);
    };
    std::optional<int64_t> start = bound(sub.isSlice ? sub.begin : sub.index, 0),
                           end = bound(sub.end, kToEnd), step = bound(sub.step, 1);
    if (!start || !end || !step)
      return unsupported(sub.range, "a slice bound known only at run time");
    if (!sub.isSlice) {
      // PyTorch raises IndexError; a static extent lets us say so here.
      if (extent != kDyn && (*start < -extent || *start >= extent))
        return unsupported(sub.range, "the out-of-range index " + std::to_string(*start) +
                                          " into a dim of size " + std::to_string(extent));
      starts[d] = *start;
      ends[d] = *start + 1;
      indexDims.push_back(int64_t(d));
      continue;
    }
    if (*step < 1)
      return unsupported(sub.range, "a slice step below 1");
    starts[d] = *start;
    ends[d] = *end;
    steps[d] = *step;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(indexDims, d))
      shape.push_back(xt.isDynamicDim(d) ? kDyn
                                         : mlir::mdl::slicedExtent(starts[d], ends[d], steps[d],
                                                                   xt.getDimSize(d)));
  // The run-time dims, renumbered after the static indices dropped theirs.
  llvm::SmallVector<int64_t> selectDims, finalShape;
  for (int64_t d : runtimeDims)
    selectDims.push_back(d - llvm::count_if(indexDims, [&](int64_t i) { return i < d; }));
  for (size_t d = 0; d < shape.size(); ++d)
    if (!llvm::is_contained(selectDims, int64_t(d)))
      finalShape.push_back(shape[d]);
  // The checker sizes a slice as (end - begin) / step without clamping; when
  // the bounds leave the dim, PyTorch's (clamped) result disagrees with it.
  if (const sema::ExprInfo *info = program.typeOf(&index);
      info && info->type.isTensor() && info->type.shape.dims.size() == finalShape.size()) {
    for (size_t d = 0; d < finalShape.size(); ++d) {
      int64_t promised = extentOf(scopedDim(info->type.shape.dims[d], scope), *scope.frame);
      if (promised != kDyn && finalShape[d] != kDyn && promised != finalShape[d])
        return unsupported(index.range, "a slice that reaches outside its dim (it has " +
                                            std::to_string(finalShape[d]) +
                                            " elements, its type says " + std::to_string(promised) +
                                            ")");
    }
  }
  mlir::Location l = loc(index.range);
  mlir::Value result = base.tensor;
  bool wholeTensor = indexDims.empty() && llvm::all_of(llvm::seq<int64_t>(0, rank), [&](int64_t d) {
                       return starts[d] == 0 && ends[d] == kToEnd && steps[d] == 1;
                     });
  if (!wholeTensor)
    result = mlir::mdl::SliceOp::create(b, l, withShape(base.tensor, shape), base.tensor,
                                        b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps),
                                        b.getDenseI64ArrayAttr(indexDims));
  if (!selectDims.empty())
    result = mlir::mdl::SelectOp::create(b, l, withShape(result, finalShape), result,
                                         runtimePositions, b.getDenseI64ArrayAttr(selectDims));
  return GenValue::ofTensor(result);
}

GenValue Generator::genIndexedWrite(const ast::IndexExpr &target, const GenValue &value,
                                    Scope &scope) {
  GenValue base = gen(*target.base, scope);
  if (!base.ok())
    return {};
  if (base.kind != GenValue::Kind::Tensor || value.kind != GenValue::Kind::Tensor)
    return unsupported(target.range, "writing this value into part of a tensor");
  // `x[i, :, j] = v`: single indices and whole dims (`:`).
  mlir::Location l = loc(target.range);
  llvm::SmallVector<int64_t> dims, sourceShape;
  llvm::SmallVector<mlir::Value> positions;
  RankedTensorType xt = typeOf(base.tensor);
  for (size_t d = 0; d < target.subscripts.size(); ++d) {
    const ast::Slice &sub = target.subscripts[d];
    if (sub.isSlice) {
      if (sub.begin || sub.end || sub.step)
        return unsupported(sub.range, "writing into a slice `a:b` (write whole dims `:` and "
                                      "single indices)");
      continue;
    }
    std::optional<IntOperand> i = intOperand(*sub.index, scope);
    if (!i)
      return {};
    if (i->constant && xt.getDimSize(d) != kDyn &&
        (*i->constant < -xt.getDimSize(d) || *i->constant >= xt.getDimSize(d)))
      return unsupported(sub.range, "the out-of-range index " + std::to_string(*i->constant) +
                                        " into a dim of size " + std::to_string(xt.getDimSize(d)));
    dims.push_back(int64_t(d));
    positions.push_back(indexValue(*i, l));
  }
  for (int64_t d = 0; d < xt.getRank(); ++d)
    if (!llvm::is_contained(dims, d))
      sourceShape.push_back(xt.getDimSize(d));
  mlir::Value source = value.tensor;
  if (typeOf(source).getShape() != llvm::ArrayRef<int64_t>(sourceShape))
    source = mlir::tensor::CastOp::create(b, l, withShape(source, sourceShape), source);
  return GenValue::ofTensor(mlir::mdl::SelectScatterOp::create(
      b, l, xt, base.tensor, source, positions, b.getDenseI64ArrayAttr(dims)));
}

std::optional<IntOperand> Generator::intOperandOf(const GenValue &v, const ast::Expr &expr,
                                                  Scope &scope) {
  if (v.kind == GenValue::Kind::Scalar && v.isInt)
    return IntOperand{int64_t(v.number), {}};
  if (v.kind == GenValue::Kind::Index)
    return IntOperand{std::nullopt, v.index};
  if (v.kind == GenValue::Kind::Size) {
    // A symbolic dim (`T` of `x: f32[B, T, I]`): read from the input.
    const sema::ExprInfo *info = program.typeOf(&expr);
    if (info && info->type.intValue)
      if (mlir::Value size =
              sizeValue(scopedDim(*info->type.intValue, scope), scope, loc(expr.range)))
        return IntOperand{std::nullopt, size};
  }
  unsupported(expr.range, "this int as a loop bound or subscript");
  return std::nullopt;
}

GenValue Generator::indexArithmetic(const ast::BinaryExpr &binary, const GenValue &lhs,
                                    const GenValue &rhs, Scope &scope) {
  std::optional<IntOperand> l = intOperandOf(lhs, *binary.lhs, scope);
  std::optional<IntOperand> r = l ? intOperandOf(rhs, *binary.rhs, scope) : std::nullopt;
  if (!l || !r)
    return {};
  mlir::Location at = loc(binary.range);
  mlir::Value a = indexValue(*l, at), c = indexValue(*r, at);
  GenValue v;
  v.kind = GenValue::Kind::Index;
  switch (binary.op) {
  case ast::BinaryOp::Add:
    v.index = mlir::arith::AddIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Sub:
    v.index = mlir::arith::SubIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Mul:
    v.index = mlir::arith::MulIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Div: // Python's `//` on ints, as foldScalars
    v.index = mlir::arith::FloorDivSIOp::create(b, at, a, c);
    return v;
  case ast::BinaryOp::Mod: {
    mlir::Value quotient = mlir::arith::FloorDivSIOp::create(b, at, a, c);
    v.index =
        mlir::arith::SubIOp::create(b, at, a, mlir::arith::MulIOp::create(b, at, quotient, c));
    return v;
  }
  default:
    return unsupported(binary.range, "`" + ast::binaryOpSpelling(binary.op) +
                                         "` on an int known only at run time");
  }
}

/// The `let` variables of an enclosing scope that `body` re-binds (in nested
/// loops too): a loop carries them from one iteration to the next.
static void collectCarried(const std::vector<ast::StmtPtr> &body, llvm::StringSet<> &out) {
  llvm::StringSet<> bound; // `let`s of this body shadow outer names after them
  for (const ast::StmtPtr &stmt : body) {
    if (auto *let = llvm::dyn_cast_or_null<ast::LetStmt>(stmt.get())) {
      bound.insert(let->name.name);
    } else if (auto *assign = llvm::dyn_cast_or_null<ast::AssignStmt>(stmt.get())) {
      if (!bound.contains(assign->target.name))
        out.insert(assign->target.name);
    } else if (auto *loop = llvm::dyn_cast_or_null<ast::ForStmt>(stmt.get())) {
      llvm::StringSet<> inner;
      collectCarried(loop->body, inner);
      for (const auto &name : inner)
        if (!bound.contains(name.getKey()))
          out.insert(name.getKey());
    }
  }
}

bool Generator::genRangeLoop(const ast::ForStmt &loop, Scope &scope) {
  std::optional<IntOperand> lo = intOperand(*loop.iterable, scope);
  std::optional<IntOperand> hi = lo ? intOperand(*loop.rangeEnd, scope) : std::nullopt;
  if (!lo || !hi)
    return false;
  llvm::StringSet<> carriedSet;
  collectCarried(loop.body, carriedSet);
  llvm::SmallVector<std::string> carried;
  for (const auto &name : carriedSet)
    if (scope.locals.count(name.getKey()))
      carried.push_back(name.getKey().str());
  llvm::sort(carried);
  // The body's own `let`s end with the loop; only the carried names live on.
  llvm::StringMap<GenValue> outer = scope.locals;
  auto restore = [&](llvm::function_ref<GenValue(size_t)> carriedValue) {
    llvm::StringMap<GenValue> after = outer;
    for (size_t i = 0; i < carried.size(); ++i)
      after[carried[i]] = carriedValue(i);
    scope.locals = std::move(after);
  };

  // A few steps known now are unrolled: their shapes stay static and
  // elementwise fusion crosses steps; a longer or run-time range is one loop.
  constexpr int64_t kMaxUnrolledSteps = 16;
  if (lo->constant && hi->constant && *hi->constant - *lo->constant <= kMaxUnrolledSteps) {
    for (int64_t t = *lo->constant; t < *hi->constant && !scope.returned; ++t) {
      scope.locals[loop.var.name] = GenValue::ofScalar(double(t), true);
      if (!genStmts(loop.body, scope))
        return false;
    }
    llvm::StringMap<GenValue> last = scope.locals;
    restore([&](size_t i) { return last[carried[i]]; });
    return true;
  }

  mlir::Location l = loc(loop.range);
  llvm::SmallVector<mlir::Value> inits;
  for (const std::string &name : carried) {
    const GenValue &v = scope.locals[name];
    if (v.kind != GenValue::Kind::Tensor) {
      unsupported(loop.range, "re-binding `" + name +
                                  "`, which is not a tensor, in a loop over a run-time range");
      return false;
    }
    inits.push_back(v.tensor);
  }
  mlir::Value lb = indexValue(*lo, l), ub = indexValue(*hi, l);
  mlir::Value step = mlir::arith::ConstantIndexOp::create(b, l, 1);
  // Sizes read inside the body are defined there: not visible after it.
  auto outerDimValues = scope.dimValues;
  bool ok = true;
  auto forOp = mlir::scf::ForOp::create(
      b, l, lb, ub, step, inits,
      [&](mlir::OpBuilder &, mlir::Location, mlir::Value iv, mlir::ValueRange args) {
        for (size_t i = 0; i < carried.size(); ++i)
          scope.locals[carried[i]] = GenValue::ofTensor(args[i]);
        GenValue var;
        var.kind = GenValue::Kind::Index;
        var.index = iv;
        scope.locals[loop.var.name] = var;
        ok = genStmts(loop.body, scope);
        if (ok && scope.returned) {
          unsupported(loop.range, "`return` inside a loop over a run-time range");
          ok = false;
        }
        if (!ok)
          return;
        llvm::SmallVector<mlir::Value> yielded;
        for (size_t i = 0; i < carried.size(); ++i) {
          mlir::Value v = scope.locals[carried[i]].tensor;
          // The checker kept the type; only static and `?` extents may differ.
          if (v.getType() != inits[i].getType())
            v = mlir::tensor::CastOp::create(b, l, inits[i].getType(), v);
          yielded.push_back(v);
        }
        mlir::scf::YieldOp::create(b, l, yielded);
      });
  scope.dimValues = std::move(outerDimValues);
  if (!ok)
    return false;
  restore([&](size_t i) { return GenValue::ofTensor(forOp.getResult(i)); });
  return true;
}

GenValue Generator::genCall(const ast::CallExpr &call, Scope &scope,
                            std::optional<sema::Device> placement) {
  ModelFrame &frame = *scope.frame;
  if (auto *name = dyn_cast<ast::NameExpr>(call.callee.get())) {
    // A local (a loop variable over submodels) or a submodel: its forward.
    if (scope.locals.count(name->name) || frame.info().findSubmodel(name->name)) {
      GenValue callee = genName(*name, scope);
      if (!callee.ok())
        return {};
      if (callee.kind != GenValue::Kind::Model)
        return unsupported(call.callee->range, "calling this value");
      return callModel(*callee.model, "forward", call, nullptr, scope);
    }
    // One of the model's own fns.
    if (frame.info().findFn(name->name))
      return callModel(frame, name->name, call, nullptr, scope);
    if (isBuiltinCall(call))
      return genBuiltin(name->name, call, nullptr, scope, placement);
    return unsupported(call.callee->range, "calling `" + name->name + "`");
  }
  if (auto *member = dyn_cast<ast::MemberExpr>(call.callee.get())) {
    GenValue base = gen(*member->base, scope);
    if (!base.ok())
      return {};
    if (base.kind == GenValue::Kind::Model)
      return callModel(*base.model, member->member.name, call, nullptr, scope);
    if (isBuiltinCall(call))
      return genBuiltin(member->member.name, call, &base, scope, placement);
    return unsupported(call.callee->range, "the method `" + member->member.name + "`");
  }
  if (llvm::isa<ast::IndexExpr>(call.callee.get())) {
    // A submodel of a list by constant index, `features[2](x)`: its forward
    // (what an imported nn.Sequential calls).
    GenValue callee = gen(*call.callee, scope);
    if (!callee.ok())
      return {};
    if (callee.kind != GenValue::Kind::Model)
      return unsupported(call.callee->range, "calling this value");
    return callModel(*callee.model, "forward", call, nullptr, scope);
  }
  // `nn.ReLU()(x)`: a model without state, created where it is called.
  if (auto *created = dyn_cast<ast::CallExpr>(call.callee.get()))
    if (const sema::ExprInfo *info = program.typeOf(created))
      if (info->type.kind() == sema::Type::Kind::Model && info->type.instance) {
        sema::Type t = frame.subst().apply(info->type);
        ModelFrame *inst = child(frame, created->range.text().str(), t.instance, created);
        return callModel(*inst, "forward", call, nullptr, scope);
      }
  return unsupported(call.callee->range, "calling this expression");
}

mlir::Value Generator::adaptiveAvgPoolByWindows(mlir::Value x, int64_t outH, int64_t outW,
                                                mlir::Location l) {
  // PyTorch's windows: output i averages rows floor(i*H/OH) to ceil((i+1)*H/OH).
  RankedTensorType xt = typeOf(x);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2), w = xt.getDimSize(3);
  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  auto window = [](int64_t i, int64_t in, int64_t out) {
    return std::pair<int64_t, int64_t>{i * in / out, ((i + 1) * in + out - 1) / out};
  };
  llvm::SmallVector<mlir::Value> rows;
  for (int64_t i = 0; i < outH; ++i) {
    auto [top, bottom] = window(i, h, outH);
    llvm::SmallVector<mlir::Value> cells;
    for (int64_t j = 0; j < outW; ++j) {
      auto [left, right] = window(j, w, outW);
      mlir::Value cell = mlir::mdl::SliceOp::create(
          b, l, withShape(x, {n, c, bottom - top, right - left}), x,
          b.getDenseI64ArrayAttr({0, 0, top, left}),
          b.getDenseI64ArrayAttr({kAll, kAll, bottom, right}), b.getDenseI64ArrayAttr({1, 1, 1, 1}),
          b.getDenseI64ArrayAttr({}));
      cells.push_back(mlir::mdl::MeanOp::create(b, l, withShape(x, {n, c, 1, 1}), cell,
                                                b.getDenseI64ArrayAttr({2, 3}),
                                                b.getBoolAttr(true)));
    }
    rows.push_back(mlir::mdl::ConcatOp::create(b, l, withShape(x, {n, c, 1, outW}), cells,
                                               b.getI64IntegerAttr(3)));
  }
  return mlir::mdl::ConcatOp::create(b, l, withShape(x, {n, c, outH, outW}), rows,
                                     b.getI64IntegerAttr(2));
}

mlir::Value Generator::reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape, mlir::Location l) {
  return mlir::mdl::ReshapeOp::create(b, l, withShape(x, shape), x);
}

//===----------------------------------------------------------------------===//
// Built-ins
//===----------------------------------------------------------------------===//

GenValue Generator::genBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                               const GenValue *receiver, Scope &scope,
                               std::optional<sema::Device> placement) {
  // The arguments go to the parameter slots the checker bound them to; they
  // are generated in source order.
  llvm::ArrayRef<const ast::Expr *> bound = program.typeOf(&call)->builtinArgs;
  llvm::SmallVector<std::optional<GenValue>, 8> args(bound.size());
  llvm::SmallVector<Range, 8> ranges(bound.size(), call.range);
  llvm::SmallVector<llvm::StringRef, 8> strings(bound.size()); // `mode: "reflect"`
  if (receiver && !args.empty())
    args[0] = *receiver;
  for (const ast::Arg &a : call.args) {
    if (!a.value)
      continue;
    size_t slot = size_t(llvm::find(bound, a.value.get()) - bound.begin());
    if (slot >= bound.size())
      return unsupported(a.range, "this argument");
    if (auto *text = dyn_cast<ast::StringLitExpr>(a.value.get())) {
      strings[slot] = text->value;
      args[slot] = GenValue();
      ranges[slot] = a.value->range;
      continue;
    }
    GenValue v = gen(*a.value, scope);
    if (!v.ok())
      return {};
    args[slot] = v;
    ranges[slot] = a.value->range;
  }

  if (isComposedBuiltin(name))
    return genComposedBuiltin(name, call, args, ranges, strings, scope);

  mlir::Location l = loc(call.range);
  auto tensorArg = [&](size_t i) -> mlir::Value {
    if (i < args.size() && args[i] && args[i]->kind == GenValue::Kind::Tensor)
      return args[i]->tensor;
    return {};
  };
  auto intArg = [&](size_t i, int64_t dflt) -> int64_t {
    if (i < args.size() && args[i] && args[i]->kind == GenValue::Kind::Scalar)
      return int64_t(args[i]->number);
    return dflt;
  };
  auto has = [&](size_t i) { return i < args.size() && args[i].has_value(); };
  auto normDim = [](int64_t d, int64_t rank) { return d < 0 ? d + rank : d; };
  // An int or a two-element list (`stride: 2`, `padding: [1, 2]`).
  auto pairArg = [&](size_t i, int64_t dflt) -> std::array<int64_t, 2> {
    if (!has(i))
      return {dflt, dflt};
    const GenValue &v = *args[i];
    if (v.kind == GenValue::Kind::List && v.elements.size() == 2)
      return {int64_t(v.elements[0].number), int64_t(v.elements[1].number)};
    return {int64_t(v.number), int64_t(v.number)};
  };
  auto listArg = [&](size_t i) -> std::optional<llvm::SmallVector<int64_t>> {
    if (!has(i))
      return std::nullopt;
    const GenValue &v = *args[i];
    llvm::SmallVector<int64_t> out;
    if (v.kind == GenValue::Kind::Scalar) {
      out.push_back(int64_t(v.number));
      return out;
    }
    if (v.kind != GenValue::Kind::List)
      return std::nullopt;
    for (const GenValue &e : v.elements) {
      if (e.kind != GenValue::Kind::Scalar)
        return std::nullopt;
      out.push_back(int64_t(e.number));
    }
    return out;
  };
  // The dtype and device the checker gave the call (creation ops).
  auto callType = [&]() -> std::optional<std::pair<mlir::Type, mlir::Attribute>> {
    const sema::ExprInfo *info = program.typeOf(&call);
    if (!info || !info->type.isTensor())
      return std::nullopt;
    std::optional<sema::Device> dev =
        placement ? placement : concreteDevice(info->type.dev, *scope.frame);
    if (!dev)
      return std::nullopt;
    return std::make_pair(elementType(info->type.dtype), mlir::Attribute(deviceAttr(*dev)));
  };

  mlir::Value x = tensorArg(0);
  auto needX = [&]() -> bool {
    if (x)
      return true;
    unsupported(ranges[0], "`" + name + "` on a non-tensor value");
    return false;
  };
  RankedTensorType xt = x ? typeOf(x) : RankedTensorType();
  int64_t rank = x ? xt.getRank() : 0;
  auto unary = [&](auto tag) -> GenValue {
    using Op = decltype(tag);
    if (!needX())
      return {};
    return GenValue::ofTensor(Op::create(b, l, x.getType(), x));
  };

  if (name == "relu")
    return unary(mlir::mdl::ReluOp());
  if (name == "gelu")
    return unary(mlir::mdl::GeluOp());
  if (name == "silu")
    return unary(mlir::mdl::SiluOp());
  if (name == "tanh")
    return unary(mlir::mdl::TanhOp());
  if (name == "sigmoid")
    return unary(mlir::mdl::SigmoidOp());
  if (name == "exp")
    return unary(mlir::mdl::ExpOp());
  if (name == "log")
    return unary(mlir::mdl::LogOp());
  if (name == "sqrt")
    return unary(mlir::mdl::SqrtOp());
  if (name == "abs")
    return unary(mlir::mdl::AbsOp());
  if (name == "neg")
    return unary(mlir::mdl::NegOp());
  if (name == "dropout") { // inference: the identity
    if (!needX())
      return {};
    return *args[0];
  }
  if (name == "matmul") {
    mlir::Value a = tensorArg(0), c = tensorArg(1);
    if (!a || !c)
      return unsupported(call.range, "`matmul` on non-tensors");
    mlir::Value v = binaryOp(ast::BinaryOp::MatMul, a, c, call.range);
    return v ? GenValue::ofTensor(v) : fail();
  }

  if (name == "sum" || name == "mean" || name == "max" || name == "min") {
    if (!needX())
      return {};
    bool keepdim = has(2) && args[2]->number != 0;
    llvm::SmallVector<int64_t> dims;
    if (has(1))
      dims.push_back(normDim(intArg(1, 0), rank));
    else
      for (int64_t d = 0; d < rank; ++d)
        dims.push_back(d);
    llvm::SmallVector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (!llvm::is_contained(dims, d))
        shape.push_back(xt.getDimSize(d));
      else if (keepdim)
        shape.push_back(1);
    }
    RankedTensorType rt = withShape(x, shape);
    auto dimsAttr = b.getDenseI64ArrayAttr(dims);
    auto keep = b.getBoolAttr(keepdim);
    if (name == "sum")
      return GenValue::ofTensor(mlir::mdl::SumOp::create(b, l, rt, x, dimsAttr, keep));
    if (name == "mean")
      return GenValue::ofTensor(mlir::mdl::MeanOp::create(b, l, rt, x, dimsAttr, keep));
    if (name == "max")
      return GenValue::ofTensor(mlir::mdl::ReduceMaxOp::create(b, l, rt, x, dimsAttr, keep));
    // min(x) = -max(-x)
    mlir::Value negated = mlir::mdl::NegOp::create(b, l, x.getType(), x);
    mlir::Value m = mlir::mdl::ReduceMaxOp::create(b, l, rt, negated, dimsAttr, keep);
    return GenValue::ofTensor(mlir::mdl::NegOp::create(b, l, rt, m));
  }
  if (name == "softmax" || name == "log_softmax") {
    if (!needX())
      return {};
    int64_t dim = normDim(intArg(1, 0), rank);
    if (name == "softmax")
      return GenValue::ofTensor(
          mlir::mdl::SoftmaxOp::create(b, l, x.getType(), x, b.getI64IntegerAttr(dim)));
    return GenValue::ofTensor(
        mlir::mdl::LogSoftmaxOp::create(b, l, x.getType(), x, b.getI64IntegerAttr(dim)));
  }

  if (name == "reshape") {
    if (!needX())
      return {};
    // Dims the instance fixes are static; symbolic ones (`B`) are `?`.
    const GenValue *shapeArg = has(1) ? &*args[1] : nullptr;
    llvm::SmallVector<int64_t> shape;
    const sema::ExprInfo *info = program.typeOf(&call);
    if (info && info->type.isTensor()) {
      // A callee's symbols take the extents its arguments gave them, so a
      // static input keeps a static result (`[B, L, H, E / H]` in a head split).
      for (sema::Dim d : info->type.shape.dims)
        shape.push_back(extentOf(scopedDim(d, scope), *scope.frame));
    } else if (shapeArg && shapeArg->kind == GenValue::Kind::List) {
      for (const GenValue &e : shapeArg->elements)
        shape.push_back(e.kind == GenValue::Kind::Scalar && e.number >= 0 ? int64_t(e.number)
                                                                          : kDyn);
    } else {
      return unsupported(call.range, "`reshape` to this shape");
    }
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "flatten") {
    if (!needX())
      return {};
    if (rank == 0)
      return GenValue::ofTensor(reshape(x, {1}, l));
    int64_t start = normDim(intArg(1, 0), rank), end = normDim(intArg(2, -1), rank);
    llvm::SmallVector<int64_t> shape;
    int64_t product = 1;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t e = xt.getDimSize(d);
      if (d < start || d > end) {
        shape.push_back(e);
        continue;
      }
      product = (product == kDyn || e == kDyn) ? kDyn : product * e;
      if (d == end)
        shape.push_back(product);
    }
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "unsqueeze") {
    if (!needX())
      return {};
    int64_t d = intArg(1, 0);
    if (d < 0)
      d += rank + 1;
    llvm::SmallVector<int64_t> shape(xt.getShape());
    shape.insert(shape.begin() + d, 1);
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "squeeze") {
    if (!needX())
      return {};
    llvm::SmallVector<int64_t> shape;
    std::optional<int64_t> only;
    if (has(1))
      only = normDim(intArg(1, 0), rank);
    for (int64_t d = 0; d < rank; ++d)
      if (!(xt.getDimSize(d) == 1 && (!only || *only == d)))
        shape.push_back(xt.getDimSize(d));
    return GenValue::ofTensor(reshape(x, shape, l));
  }
  if (name == "transpose") {
    if (!needX())
      return {};
    int64_t d0 = normDim(intArg(1, 0), rank), d1 = normDim(intArg(2, 0), rank);
    llvm::SmallVector<int64_t> shape(xt.getShape());
    std::swap(shape[d0], shape[d1]);
    return GenValue::ofTensor(mlir::mdl::TransposeOp::create(
        b, l, withShape(x, shape), x, b.getI64IntegerAttr(d0), b.getI64IntegerAttr(d1)));
  }
  if (name == "permute") {
    if (!needX())
      return {};
    std::optional<llvm::SmallVector<int64_t>> perm = listArg(1);
    if (!perm || int64_t(perm->size()) != rank)
      return unsupported(ranges[1], "`permute` with these dims");
    llvm::SmallVector<int64_t> shape;
    for (int64_t &p : *perm) {
      p = normDim(p, rank);
      shape.push_back(xt.getDimSize(p));
    }
    return GenValue::ofTensor(
        mlir::mdl::PermuteOp::create(b, l, withShape(x, shape), x, b.getDenseI64ArrayAttr(*perm)));
  }
  if (name == "concat" || name == "cat" || name == "stack") {
    if (!has(0) || args[0]->kind != GenValue::Kind::List || args[0]->elements.empty())
      return unsupported(ranges[0], "`" + name + "` of anything but a list of tensors");
    llvm::SmallVector<mlir::Value> inputs;
    for (const GenValue &e : args[0]->elements) {
      if (e.kind != GenValue::Kind::Tensor)
        return unsupported(ranges[0], "`" + name + "` of anything but a list of tensors");
      inputs.push_back(e.tensor);
    }
    int64_t r0 = typeOf(inputs[0]).getRank();
    int64_t dim = intArg(1, 0);
    if (name == "stack") {
      dim = dim < 0 ? dim + r0 + 1 : dim;
      for (mlir::Value &in : inputs) {
        llvm::SmallVector<int64_t> shape(typeOf(in).getShape());
        shape.insert(shape.begin() + dim, 1);
        in = reshape(in, shape, l);
      }
    } else {
      dim = normDim(dim, r0);
    }
    llvm::SmallVector<int64_t> shape(typeOf(inputs[0]).getShape());
    int64_t total = 0;
    for (mlir::Value in : inputs) {
      int64_t e = typeOf(in).getDimSize(dim);
      total = (total == kDyn || e == kDyn) ? kDyn : total + e;
    }
    shape[dim] = total;
    return GenValue::ofTensor(mlir::mdl::ConcatOp::create(b, l, withShape(inputs[0], shape), inputs,
                                                          b.getI64IntegerAttr(dim)));
  }

  // conv2d and the pools, on [N, C, H, W].
  auto spatial = [&]() -> GenValue {
    if (name == "conv2d") {
      mlir::Value w = tensorArg(1), bias = tensorArg(2);
      if (!needX() || !w)
        return unsupported(call.range, "`conv2d` on non-tensors");
      if (rank != 4)
        return unsupported(call.range, "`conv2d` on an input without a batch dim");
      auto stride = pairArg(3, 1), pad = pairArg(4, 0), dil = pairArg(5, 1);
      int64_t groups = intArg(6, 1);
      RankedTensorType wt = typeOf(w);
      llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), wt.getDimSize(0)};
      for (int i = 0; i < 2; ++i) {
        int64_t in = xt.getDimSize(2 + i), k = wt.getDimSize(2 + i);
        shape.push_back(in == kDyn || k == kDyn
                            ? kDyn
                            : (in + 2 * pad[i] - dil[i] * (k - 1) - 1) / stride[i] + 1);
      }
      return GenValue::ofTensor(mlir::mdl::Conv2dOp::create(
          b, l, withShape(x, shape), x, w, bias, b.getDenseI64ArrayAttr(stride),
          b.getDenseI64ArrayAttr(pad), b.getDenseI64ArrayAttr(dil), b.getI64IntegerAttr(groups)));
    }
    if (name == "max_pool2d" || name == "avg_pool2d") {
      if (!needX())
        return {};
      if (rank != 4)
        return unsupported(call.range, "`" + name + "` on an input without a batch dim");
      auto kernel = pairArg(1, 1);
      auto stride = pairArg(2, kernel[0]);
      if (!has(2))
        stride = kernel;
      auto pad = pairArg(3, 0);
      llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), xt.getDimSize(1)};
      for (int i = 0; i < 2; ++i) {
        int64_t in = xt.getDimSize(2 + i);
        shape.push_back(in == kDyn ? kDyn : (in + 2 * pad[i] - kernel[i]) / stride[i] + 1);
      }
      auto k = b.getDenseI64ArrayAttr(kernel), s = b.getDenseI64ArrayAttr(stride),
           p = b.getDenseI64ArrayAttr(pad);
      if (name == "max_pool2d")
        return GenValue::ofTensor(
            mlir::mdl::MaxPool2dOp::create(b, l, withShape(x, shape), x, k, s, p));
      return GenValue::ofTensor(
          mlir::mdl::AvgPool2dOp::create(b, l, withShape(x, shape), x, k, s, p));
    }
    if (name == "adaptive_avg_pool2d") {
      if (!needX())
        return {};
      if (rank != 4)
        return unsupported(call.range, "`" + name + "` on an input without a batch dim");
      auto out = pairArg(1, 1);
      llvm::SmallVector<int64_t> shape = {xt.getDimSize(0), xt.getDimSize(1), out[0], out[1]};
      int64_t h = xt.getDimSize(2), w = xt.getDimSize(3);
      bool global = out[0] == 1 && out[1] == 1;
      bool divides =
          h != kDyn && w != kDyn && out[0] > 0 && out[1] > 0 && h % out[0] == 0 && w % out[1] == 0;
      if (global || divides)
        return GenValue::ofTensor(
            mlir::mdl::AdaptiveAvgPool2dOp::create(b, l, withShape(x, shape), x));
      if (h == kDyn || w == kDyn || out[0] < 1 || out[1] < 1)
        return unsupported(call.range, "`adaptive_avg_pool2d` of an input whose size is known only "
                                       "at run time, to an output that does not divide it");
      return GenValue::ofTensor(adaptiveAvgPoolByWindows(x, out[0], out[1], l));
    }
    return unsupported(call.range, "`" + name + "`");
  };
  if (name == "conv2d" || name == "max_pool2d" || name == "avg_pool2d" ||
      name == "adaptive_avg_pool2d") {
    if (!x || rank != 3)
      return spatial();
    // PyTorch's unbatched [C, H, W]: a batch of one, dropped again after.
    llvm::SmallVector<int64_t> batched(xt.getShape());
    batched.insert(batched.begin(), 1);
    x = reshape(x, batched, l);
    xt = typeOf(x);
    rank = 4;
    GenValue result = spatial();
    if (result.kind != GenValue::Kind::Tensor)
      return result;
    return GenValue::ofTensor(
        reshape(result.tensor, typeOf(result.tensor).getShape().drop_front(), l));
  }
  if (name == "layer_norm") {
    mlir::Value w = tensorArg(1), bias = tensorArg(2);
    if (!needX() || !w || !bias)
      return unsupported(call.range, "`layer_norm` on non-tensors");
    double eps = has(3) ? args[3]->number : 1e-5;
    return GenValue::ofTensor(mlir::mdl::LayerNormOp::create(
        b, l, x.getType(), x, w, bias, b.getI64IntegerAttr(typeOf(w).getRank()),
        b.getF64FloatAttr(eps)));
  }
  if (name == "batch_norm") {
    mlir::Value mean = tensorArg(1), var = tensorArg(2), w = tensorArg(3), bias = tensorArg(4);
    if (!needX() || !mean || !var)
      return unsupported(call.range, "`batch_norm` on non-tensors");
    double eps = has(5) ? args[5]->number : 1e-5;
    return GenValue::ofTensor(mlir::mdl::BatchNormOp::create(b, l, x.getType(), x, mean, var, w,
                                                             bias, b.getF64FloatAttr(eps)));
  }
  if (name == "embedding") {
    mlir::Value indices = tensorArg(0), table = tensorArg(1);
    if (!indices || !table)
      return unsupported(call.range, "`embedding` on non-tensors");
    llvm::SmallVector<int64_t> shape(typeOf(indices).getShape());
    shape.push_back(typeOf(table).getDimSize(1));
    return GenValue::ofTensor(
        mlir::mdl::EmbeddingOp::create(b, l, withShape(table, shape), table, indices));
  }
  if (name == "gather" || name == "index_select") {
    mlir::Value index = tensorArg(2);
    if (!needX() || !index)
      return unsupported(call.range, "`" + name + "` on non-tensors");
    int64_t dim = normDim(intArg(1, 0), rank);
    if (name == "gather")
      return GenValue::ofTensor(mlir::mdl::GatherOp::create(
          b, l, withShape(x, typeOf(index).getShape()), x, index, b.getI64IntegerAttr(dim)));
    llvm::SmallVector<int64_t> shape(xt.getShape());
    shape[dim] = typeOf(index).getDimSize(0);
    return GenValue::ofTensor(mlir::mdl::IndexSelectOp::create(b, l, withShape(x, shape), x, index,
                                                               b.getI64IntegerAttr(dim)));
  }
  if (name == "where") {
    mlir::Value mask = tensorArg(0);
    if (!mask || !has(1) || !has(2))
      return unsupported(call.range, "`where` without a mask tensor");
    mlir::Value a = tensorArg(1), c = tensorArg(2);
    if (!a && !c)
      return unsupported(call.range, "`where` of two scalars");
    if (!a)
      a = broadcastScalar(*args[1], c, ranges[1]);
    if (!c)
      c = broadcastScalar(*args[2], a, ranges[2]);
    llvm::SmallVector<int64_t> shape = broadcastShape(
        broadcastShape(typeOf(mask).getShape(), typeOf(a).getShape()), typeOf(c).getShape());
    return GenValue::ofTensor(mlir::mdl::WhereOp::create(b, l, withShape(a, shape), mask, a, c));
  }
  if (name == "cross_entropy" || name == "nll_loss") {
    mlir::Value target = tensorArg(1), weight = tensorArg(2);
    if (!needX() || !target)
      return unsupported(call.range, "`" + name + "` on non-tensors");
    RankedTensorType rt = withShape(x, {});
    auto reduction = b.getStringAttr("mean");
    if (name == "cross_entropy")
      return GenValue::ofTensor(
          mlir::mdl::CrossEntropyOp::create(b, l, rt, x, target, weight, reduction));
    return GenValue::ofTensor(mlir::mdl::NllLossOp::create(b, l, rt, x, target, weight, reduction));
  }
  if (name == "cast") {
    if (!needX() || !has(1) || args[1]->kind != GenValue::Kind::DType)
      return unsupported(call.range, "`cast` without a dtype");
    RankedTensorType rt = tensorType(xt.getShape(), elementType(args[1]->dtype), xt.getEncoding());
    if (rt == xt)
      return *args[0];
    return GenValue::ofTensor(mlir::mdl::CastOp::create(b, l, rt, x));
  }
  if (name == "to") {
    if (!needX() || !has(1) || args[1]->kind != GenValue::Kind::Device)
      return unsupported(call.range, "`.to` without a device");
    RankedTensorType rt =
        tensorType(xt.getShape(), xt.getElementType(), deviceAttr(args[1]->device));
    if (rt == xt)
      return *args[0];
    return GenValue::ofTensor(mlir::mdl::TransferOp::create(b, l, rt, x));
  }

  // Creation ops: static shapes only (the cpu back end needs the sizes).
  if (name == "zeros" || name == "ones" || name == "full" || name == "randn" || name == "arange" ||
      name == "eye") {
    std::optional<std::pair<mlir::Type, mlir::Attribute>> et = callType();
    if (!et)
      return unsupported(call.range, "`" + name + "` whose device is unknown");
    // The checker's shape: sizes fixed by the instance are static, symbolic
    // ones (`zeros([B, n])`) come from the extents the inputs bound.
    auto checked = checkedShape(call, scope, l);
    if (!checked)
      return unsupported(call.range, "`" + name + "` with a size known only at run time");
    RankedTensorType rt = tensorType(checked->first, et->first, et->second);
    mlir::ValueRange sizes(checked->second);
    if (name == "zeros")
      return GenValue::ofTensor(mlir::mdl::ZerosOp::create(b, l, rt, sizes));
    if (name == "ones")
      return GenValue::ofTensor(mlir::mdl::OnesOp::create(b, l, rt, sizes));
    if (name == "full")
      return GenValue::ofTensor(mlir::mdl::FullOp::create(
          b, l, rt, sizes, b.getF64FloatAttr(has(1) ? args[1]->number : 0)));
    if (name == "randn")
      return GenValue::ofTensor(
          mlir::mdl::RandnOp::create(b, l, rt, sizes, b.getI64IntegerAttr(intArg(1, 0))));
    if (name == "arange") {
      // `arange(end)` or `arange(start, end, step)`; the checker sized it.
      auto number = [&](size_t i, double dflt) -> std::optional<double> {
        if (!has(i))
          return dflt;
        if (args[i]->kind != GenValue::Kind::Scalar)
          return std::nullopt;
        return args[i]->number;
      };
      std::optional<double> start = has(1) ? number(0, 0) : 0, step = number(2, 1);
      if (!start || !step)
        return unsupported(call.range, "`arange` from a bound known only at run time");
      return GenValue::ofTensor(mlir::mdl::ArangeOp::create(
          b, l, rt, sizes, b.getF64FloatAttr(*start), b.getF64FloatAttr(*step)));
    }
    return GenValue::ofTensor(mlir::mdl::EyeOp::create(b, l, rt, sizes));
  }
  return unsupported(call.range, "`" + name + "`");
}

//===----------------------------------------------------------------------===//
// PyTorch's signatures for ports: each composes existing mdl ops (slices,
// index_select with index vectors built from arange, where), so both back
// ends run it without an op of its own.
//===----------------------------------------------------------------------===//

bool Generator::isComposedBuiltin(llvm::StringRef name) {
  return llvm::is_contained({"split", "chunk", "masked_fill", "triu", "tril", "pad", "conv1d",
                             "conv_transpose2d", "group_norm", "interpolate"},
                            name);
}

mlir::Value Generator::indexVector(int64_t n, int64_t start, mlir::Attribute device,
                                   mlir::Location l) {
  return mlir::mdl::ArangeOp::create(b, l, tensorType({n}, elementType(ast::DType::I64), device),
                                     mlir::ValueRange{}, b.getF64FloatAttr(double(start)),
                                     b.getF64FloatAttr(1));
}

mlir::Value Generator::scalarLike(double value, mlir::Value like, mlir::Location l) {
  RankedTensorType t = typeOf(like);
  return mlir::mdl::FullOp::create(b, l, tensorType({}, t.getElementType(), t.getEncoding()),
                                   mlir::ValueRange{}, b.getF64FloatAttr(value));
}

template <typename Op>
mlir::Value Generator::elementwise(mlir::Value lhs, mlir::Value rhs, mlir::Location l) {
  return Op::create(b, l,
                    withShape(lhs, broadcastShape(typeOf(lhs).getShape(), typeOf(rhs).getShape())),
                    lhs, rhs);
}

mlir::Value Generator::compare(llvm::StringRef predicate, mlir::Value lhs, mlir::Value rhs,
                               mlir::Location l) {
  RankedTensorType t = tensorType(broadcastShape(typeOf(lhs).getShape(), typeOf(rhs).getShape()),
                                  elementType(ast::DType::Bool), typeOf(lhs).getEncoding());
  return mlir::mdl::CmpOp::create(b, l, t, b.getStringAttr(predicate), lhs, rhs);
}

mlir::Value Generator::sliceDim(mlir::Value x, int64_t dim, int64_t start, int64_t end,
                                mlir::Location l) {
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  constexpr int64_t kToEnd = std::numeric_limits<int64_t>::max();
  llvm::SmallVector<int64_t> starts(rank, 0), ends(rank, kToEnd), steps(rank, 1);
  starts[dim] = start;
  ends[dim] = end;
  llvm::SmallVector<int64_t> shape(xt.getShape());
  shape[dim] = end - start;
  return mlir::mdl::SliceOp::create(b, l, withShape(x, shape), x, b.getDenseI64ArrayAttr(starts),
                                    b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps),
                                    b.getDenseI64ArrayAttr({}));
}

mlir::Value Generator::selectAlong(mlir::Value x, int64_t dim, mlir::Value index,
                                   mlir::Location l) {
  llvm::SmallVector<int64_t> shape(typeOf(x).getShape());
  shape[dim] = typeOf(index).getDimSize(0);
  return mlir::mdl::IndexSelectOp::create(b, l, withShape(x, shape), x, index,
                                          b.getI64IntegerAttr(dim));
}

mlir::Value Generator::alongDim(mlir::Value vector, int64_t dim, int64_t rank, mlir::Location l) {
  llvm::SmallVector<int64_t> shape = {typeOf(vector).getDimSize(0)};
  shape.append(size_t(rank - 1 - dim), 1);
  return reshape(vector, shape, l);
}

mlir::Value Generator::padDim(mlir::Value x, int64_t dim, int64_t left, int64_t right,
                              llvm::StringRef mode, double value, mlir::Location l) {
  RankedTensorType xt = typeOf(x);
  int64_t size = xt.getDimSize(dim), rank = xt.getRank();
  mlir::Value t = indexVector(size + left + right, -left, xt.getEncoding(), l);
  auto constant = [&](int64_t v) { return scalarLike(double(v), t, l); };
  mlir::Value index;
  if (mode == "circular") {
    index = elementwise<mlir::mdl::RemOp>(t, constant(size), l);
  } else if (mode == "reflect") { // (n-1) - |(n-1) - |t||
    mlir::Value absT = mlir::mdl::AbsOp::create(b, l, t.getType(), t);
    mlir::Value inner = elementwise<mlir::mdl::SubOp>(constant(size - 1), absT, l);
    index = elementwise<mlir::mdl::SubOp>(
        constant(size - 1), mlir::mdl::AbsOp::create(b, l, inner.getType(), inner), l);
  } else { // constant and replicate read the nearest element
    index = elementwise<mlir::mdl::MinOp>(elementwise<mlir::mdl::MaxOp>(t, constant(0), l),
                                          constant(size - 1), l);
  }
  mlir::Value gathered = selectAlong(x, dim, index, l);
  if (mode != "constant" || (left <= 0 && right <= 0))
    return gathered;
  mlir::Value inside = elementwise<mlir::mdl::AndOp>(compare("ge", t, constant(0), l),
                                                     compare("lt", t, constant(size), l), l);
  mlir::Value mask = alongDim(inside, dim, rank, l);
  return mlir::mdl::WhereOp::create(b, l, gathered.getType(), mask, gathered,
                                    scalarLike(value, gathered, l));
}

GenValue Generator::genComposedBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                                       llvm::ArrayRef<std::optional<GenValue>> args,
                                       llvm::ArrayRef<Range> ranges,
                                       llvm::ArrayRef<llvm::StringRef> strings, Scope &scope) {
  mlir::Location l = loc(call.range);
  auto scalar = [&](size_t i, double dflt) -> std::optional<double> {
    if (i >= args.size() || !args[i])
      return dflt;
    if (args[i]->kind != GenValue::Kind::Scalar)
      return std::nullopt;
    return args[i]->number;
  };
  if (!args[0] || args[0]->kind != GenValue::Kind::Tensor)
    return unsupported(ranges[0], "`" + name + "` on a non-tensor value");
  if (llvm::is_contained({"conv1d", "conv_transpose2d", "group_norm", "interpolate"}, name))
    return genConvLike(name, call, args, strings, scope);
  mlir::Value x = args[0]->tensor;
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  auto dimArg = [&](size_t i) -> std::optional<int64_t> {
    std::optional<double> d = scalar(i, 0);
    if (!d)
      return std::nullopt;
    return *d < 0 ? int64_t(*d) + rank : int64_t(*d);
  };

  if (name == "split" || name == "chunk") {
    // The checker sized every piece; they are consecutive slices.
    const sema::ExprInfo *info = program.typeOf(&call);
    std::optional<int64_t> dim = dimArg(2);
    if (!info || info->type.kind() != sema::Type::Kind::List || !info->type.elements || !dim)
      return unsupported(call.range, "`" + name + "` here");
    GenValue list;
    list.kind = GenValue::Kind::List;
    int64_t offset = 0;
    for (const sema::Type &part : *info->type.elements) {
      int64_t len = extentOf(scopedDim(part.shape.dims[size_t(*dim)], scope), *scope.frame);
      if (len == kDyn)
        return unsupported(call.range,
                           "`" + name + "` of a dim whose size is known only at run time");
      list.elements.push_back(GenValue::ofTensor(sliceDim(x, *dim, offset, offset + len, l)));
      offset += len;
    }
    return list;
  }
  if (name == "masked_fill") {
    if (!args[1] || args[1]->kind != GenValue::Kind::Tensor || !args[2])
      return unsupported(call.range, "`masked_fill` without a mask tensor");
    mlir::Value fill = args[2]->kind == GenValue::Kind::Tensor
                           ? args[2]->tensor
                           : broadcastScalar(*args[2], x, ranges[2]);
    return GenValue::ofTensor(mlir::mdl::WhereOp::create(b, l, xt, args[1]->tensor, fill, x));
  }
  if (name == "triu" || name == "tril") {
    // Keep (row i, col j) where j - i >= diagonal (triu) or <= (tril).
    int64_t h = xt.getDimSize(rank - 2), w = xt.getDimSize(rank - 1);
    std::optional<double> diagonal = scalar(1, 0);
    if (h == kDyn || w == kDyn || !diagonal)
      return unsupported(call.range,
                         "`" + name + "` of a matrix whose size is known only at run time");
    mlir::Value rows = reshape(indexVector(h, 0, xt.getEncoding(), l), {h, 1}, l);
    mlir::Value cols = reshape(indexVector(w, -int64_t(*diagonal), xt.getEncoding(), l), {1, w}, l);
    mlir::Value keep = compare(name == "triu" ? "ge" : "le", cols, rows, l);
    return GenValue::ofTensor(mlir::mdl::WhereOp::create(b, l, xt, keep, x, scalarLike(0, x, l)));
  }
  if (name == "pad") {
    llvm::SmallVector<int64_t> sizes;
    if (!args[1] || args[1]->kind != GenValue::Kind::List)
      return unsupported(ranges[1], "`pad` with these sizes");
    for (const GenValue &e : args[1]->elements) {
      if (e.kind != GenValue::Kind::Scalar)
        return unsupported(ranges[1], "`pad` with these sizes");
      sizes.push_back(int64_t(e.number));
    }
    llvm::StringRef mode = strings[2].empty() ? "constant" : strings[2];
    std::optional<double> value = scalar(3, 0);
    if (!value)
      return unsupported(ranges[3], "`pad` with this value");
    for (size_t k = 0; k + 1 < sizes.size(); k += 2) {
      int64_t dim = rank - 1 - int64_t(k / 2);
      if (sizes[k] == 0 && sizes[k + 1] == 0)
        continue;
      int64_t size = typeOf(x).getDimSize(dim);
      if (size == kDyn)
        return unsupported(call.range, "`pad` of a dim whose size is known only at run time");
      if ((mode == "reflect" && (sizes[k] >= size || sizes[k + 1] >= size)) ||
          (mode == "circular" && (sizes[k] > size || sizes[k + 1] > size)))
        return unsupported(call.range, "`" + mode + "` padding wider than its dim (size " +
                                           std::to_string(size) + ")");
      x = padDim(x, dim, sizes[k], sizes[k + 1], mode, *value, l);
    }
    return GenValue::ofTensor(x);
  }
  return unsupported(call.range, "`" + name + "`");
}

mlir::Value Generator::convTransposeInput(mlir::Value x, int64_t dim, int64_t stride, int64_t lead,
                                          int64_t length, mlir::Location l) {
  // Position j of the result holds x[t / stride] when t = j - lead is a
  // non-negative multiple of the stride inside the input, else 0.
  RankedTensorType xt = typeOf(x);
  int64_t size = xt.getDimSize(dim);
  mlir::Value t = indexVector(length, -lead, xt.getEncoding(), l);
  auto constant = [&](int64_t v) { return scalarLike(double(v), t, l); };
  mlir::Value quotient = elementwise<mlir::mdl::DivOp>(t, constant(stride), l);
  mlir::Value valid = elementwise<mlir::mdl::AndOp>(compare("ge", t, constant(0), l),
                                                    compare("lt", quotient, constant(size), l), l);
  if (stride > 1)
    valid = elementwise<mlir::mdl::AndOp>(
        valid, compare("eq", elementwise<mlir::mdl::RemOp>(t, constant(stride), l), constant(0), l),
        l);
  mlir::Value index = elementwise<mlir::mdl::MinOp>(
      elementwise<mlir::mdl::MaxOp>(quotient, constant(0), l), constant(size - 1), l);
  mlir::Value gathered = selectAlong(x, dim, index, l);
  return mlir::mdl::WhereOp::create(b, l, gathered.getType(), alongDim(valid, dim, xt.getRank(), l),
                                    gathered, scalarLike(0, gathered, l));
}

mlir::Value Generator::resampleDim(mlir::Value x, int64_t dim, int64_t out, llvm::StringRef mode,
                                   bool alignCorners, std::optional<double> scaleFactor,
                                   mlir::Location l) {
  RankedTensorType xt = typeOf(x);
  int64_t in = xt.getDimSize(dim), rank = xt.getRank();
  // PyTorch's source coordinates, in float32 as its kernels compute them.
  float scale =
      scaleFactor && *scaleFactor > 0 ? float(1.0 / *scaleFactor) : float(in) / float(out);
  bool linear = mode != "nearest";
  if (linear && alignCorners)
    scale = out > 1 ? float(in - 1) / float(out - 1) : 0.0f;
  RankedTensorType f32 = tensorType({out}, elementType(ast::DType::F32), xt.getEncoding());
  double start = linear && !alignCorners ? 0.5 : 0.0; // (i + 0.5) * scale - 0.5
  mlir::Value position = mlir::mdl::ArangeOp::create(
      b, l, f32, mlir::ValueRange{}, b.getF64FloatAttr(start), b.getF64FloatAttr(1));
  mlir::Value source = elementwise<mlir::mdl::MulOp>(position, scalarLike(scale, position, l), l);
  if (linear && !alignCorners)
    source = elementwise<mlir::mdl::MaxOp>(
        elementwise<mlir::mdl::SubOp>(source, scalarLike(0.5, source, l), l),
        scalarLike(0, source, l), l);
  RankedTensorType i64 = tensorType({out}, elementType(ast::DType::I64), xt.getEncoding());
  mlir::Value low = mlir::mdl::CastOp::create(b, l, i64, source); // floor: source >= 0
  auto last = [&](mlir::Value v) {
    return elementwise<mlir::mdl::MinOp>(v, scalarLike(double(in - 1), v, l), l);
  };
  if (!linear)
    return selectAlong(x, dim, last(low), l);
  mlir::Value high = last(elementwise<mlir::mdl::AddOp>(low, scalarLike(1, low, l), l));
  mlir::Value highWeight =
      elementwise<mlir::mdl::SubOp>(source, mlir::mdl::CastOp::create(b, l, f32, last(low)), l);
  mlir::Value lowWeight =
      elementwise<mlir::mdl::SubOp>(scalarLike(1, highWeight, l), highWeight, l);
  auto weighted = [&](mlir::Value index, mlir::Value weight) {
    mlir::Value w = alongDim(weight, dim, rank, l);
    if (typeOf(w).getElementType() != xt.getElementType())
      w = mlir::mdl::CastOp::create(
          b, l, tensorType(typeOf(w).getShape(), xt.getElementType(), xt.getEncoding()), w);
    return elementwise<mlir::mdl::MulOp>(selectAlong(x, dim, index, l), w, l);
  };
  return elementwise<mlir::mdl::AddOp>(weighted(low, lowWeight), weighted(high, highWeight), l);
}

GenValue Generator::genConvLike(llvm::StringRef name, const ast::CallExpr &call,
                                llvm::ArrayRef<std::optional<GenValue>> args,
                                llvm::ArrayRef<llvm::StringRef> strings, Scope &scope) {
  mlir::Location l = loc(call.range);
  mlir::Value x = args[0]->tensor;
  auto tensorArg = [&](size_t i) -> mlir::Value {
    return i < args.size() && args[i] && args[i]->kind == GenValue::Kind::Tensor ? args[i]->tensor
                                                                                 : mlir::Value();
  };
  auto has = [&](size_t i) { return i < args.size() && args[i].has_value(); };
  auto ints = [&](size_t i, int64_t dflt, size_t n) {
    llvm::SmallVector<int64_t> out(n, dflt);
    if (!has(i))
      return out;
    const GenValue &v = *args[i];
    for (size_t k = 0; k < n; ++k)
      out[k] = int64_t(v.kind == GenValue::Kind::List ? v.elements[k].number : v.number);
    return out;
  };
  // The checker's result shape, with this instance's extents.
  llvm::SmallVector<int64_t> resultShape;
  if (const sema::ExprInfo *info = program.typeOf(&call); info && info->type.isTensor())
    for (sema::Dim d : info->type.shape.dims)
      resultShape.push_back(extentOf(scopedDim(d, scope), *scope.frame));

  // Unbatched input: a batch of one, dropped again at the end.
  int64_t spatial = name == "conv1d" ? 1 : int64_t(typeOf(x).getRank()) - 2;
  bool unbatched =
      (name == "conv1d" || name == "conv_transpose2d") && typeOf(x).getRank() == spatial + 1;
  if (unbatched) {
    llvm::SmallVector<int64_t> batched(typeOf(x).getShape());
    batched.insert(batched.begin(), 1);
    x = reshape(x, batched, l);
  }
  RankedTensorType xt = typeOf(x);
  int64_t rank = xt.getRank();
  mlir::Value out;
  if (name == "conv1d") {
    // [N, C, L] as [N, C, 1, L] through conv2d.
    mlir::Value w = tensorArg(1);
    RankedTensorType wt = typeOf(w);
    mlir::Value x4 = reshape(x, {xt.getDimSize(0), xt.getDimSize(1), 1, xt.getDimSize(2)}, l);
    mlir::Value w4 = reshape(w, {wt.getDimSize(0), wt.getDimSize(1), 1, wt.getDimSize(2)}, l);
    int64_t s = ints(3, 1, 1)[0], p = ints(4, 0, 1)[0], d = ints(5, 1, 1)[0];
    int64_t in = xt.getDimSize(2), k = wt.getDimSize(2);
    int64_t length = in == kDyn ? kDyn : (in + 2 * p - d * (k - 1) - 1) / s + 1;
    mlir::Value y = mlir::mdl::Conv2dOp::create(
        b, l, withShape(x, {xt.getDimSize(0), wt.getDimSize(0), 1, length}), x4, w4, tensorArg(2),
        b.getDenseI64ArrayAttr({1, s}), b.getDenseI64ArrayAttr({0, p}),
        b.getDenseI64ArrayAttr({1, d}), b.getI64IntegerAttr(int64_t(has(6) ? args[6]->number : 1)));
    out = reshape(y, {xt.getDimSize(0), wt.getDimSize(0), length}, l);
  } else if (name == "conv_transpose2d") {
    // Zero-insert and pad the input, then a stride-1 conv2d with the
    // weight's in/out swapped and its kernel flipped.
    mlir::Value w = tensorArg(1);
    RankedTensorType wt = typeOf(w);
    auto stride = ints(3, 1, 2), padding = ints(4, 0, 2), outPad = ints(5, 0, 2),
         dilation = ints(7, 1, 2);
    int64_t groups = int64_t(has(6) ? args[6]->number : 1);
    int64_t kh = wt.getDimSize(2), kw = wt.getDimSize(3);
    for (int i = 0; i < 2; ++i) {
      int64_t in = typeOf(x).getDimSize(2 + i), k = i == 0 ? kh : kw;
      if (in == kDyn || k == kDyn)
        return unsupported(call.range, "`conv_transpose2d` of an input whose size is known only "
                                       "at run time");
      int64_t lead = dilation[i] * (k - 1) - padding[i];
      int64_t length = (in - 1) * stride[i] + 1 + 2 * lead + outPad[i];
      x = convTransposeInput(x, 2 + i, stride[i], lead, length, l);
    }
    int64_t cin = wt.getDimSize(0), coutG = wt.getDimSize(1);
    for (int64_t d : {2, 3}) { // flip the kernel
      int64_t k = wt.getDimSize(d);
      mlir::Value reversed = mlir::mdl::ArangeOp::create(
          b, l, tensorType({k}, elementType(ast::DType::I64), wt.getEncoding()), mlir::ValueRange{},
          b.getF64FloatAttr(double(k - 1)), b.getF64FloatAttr(-1));
      w = selectAlong(w, d, reversed, l);
    }
    // [in, out/g, kh, kw] -> [g, in/g, out/g, kh, kw] -> [g, out/g, in/g, ...] -> [out, in/g, ...]
    w = reshape(w, {groups, cin / groups, coutG, kh, kw}, l);
    w = mlir::mdl::PermuteOp::create(b, l, withShape(w, {groups, coutG, cin / groups, kh, kw}), w,
                                     b.getDenseI64ArrayAttr({0, 2, 1, 3, 4}));
    w = reshape(w, {groups * coutG, cin / groups, kh, kw}, l);
    RankedTensorType pt = typeOf(x);
    llvm::SmallVector<int64_t> shape = {pt.getDimSize(0), groups * coutG,
                                        pt.getDimSize(2) - dilation[0] * (kh - 1),
                                        pt.getDimSize(3) - dilation[1] * (kw - 1)};
    out =
        mlir::mdl::Conv2dOp::create(b, l, withShape(x, shape), x, w, tensorArg(2),
                                    b.getDenseI64ArrayAttr({1, 1}), b.getDenseI64ArrayAttr({0, 0}),
                                    b.getDenseI64ArrayAttr(dilation), b.getI64IntegerAttr(groups));
  } else if (name == "group_norm") {
    // [N, C, ...] as [N, G, C/G * ...]: a layer norm over the last dim.
    int64_t groups = int64_t(args[1]->number), channels = xt.getDimSize(1);
    int64_t rest = 1;
    for (int64_t d = 1; d < rank; ++d)
      rest = rest == kDyn || xt.getDimSize(d) == kDyn ? kDyn : rest * xt.getDimSize(d);
    if (rest == kDyn || channels == kDyn)
      return unsupported(call.range,
                         "`group_norm` of channels or positions known only at run time");
    if (groups < 1 || channels % groups != 0)
      return unsupported(call.range, "`group_norm` with " + std::to_string(groups) + " groups of " +
                                         std::to_string(channels) + " channels");
    mlir::Value grouped = reshape(x, {xt.getDimSize(0), groups, rest / groups}, l);
    double eps = has(4) ? args[4]->number : 1e-5;
    mlir::Value normed = mlir::mdl::LayerNormOp::create(
        b, l, grouped.getType(), grouped, mlir::Value(), mlir::Value(), b.getI64IntegerAttr(1),
        b.getF64FloatAttr(eps));
    out = reshape(normed, xt.getShape(), l);
    for (size_t i : {2, 3}) {
      mlir::Value affine = tensorArg(i);
      if (!affine)
        continue;
      mlir::Value perChannel = alongDim(affine, 1, rank, l);
      out = i == 2 ? elementwise<mlir::mdl::MulOp>(out, perChannel, l)
                   : elementwise<mlir::mdl::AddOp>(out, perChannel, l);
    }
  } else { // interpolate
    llvm::StringRef mode = strings[3].empty() ? "nearest" : strings[3];
    bool alignCorners = has(4) && args[4]->number != 0;
    for (int64_t k = spatial - 1; k >= 0; --k) { // the last dim first, as PyTorch sums
      std::optional<double> factor;
      if (has(2)) {
        const GenValue &s = *args[2];
        factor = s.kind == GenValue::Kind::List ? s.elements[size_t(k)].number : s.number;
      }
      int64_t in = xt.getDimSize(2 + k),
              target = resultShape.size() == size_t(rank) ? resultShape[size_t(2 + k)] : kDyn;
      if (in == kDyn || target == kDyn)
        return unsupported(call.range, "`interpolate` of a size known only at run time");
      if (target == in && !factor)
        continue; // every mode reads position i at i
      x = resampleDim(x, 2 + k, target, mode, alignCorners, factor, l);
    }
    out = x;
  }
  if (unbatched)
    out = reshape(out, typeOf(out).getShape().drop_front(), l);
  return GenValue::ofTensor(out);
}

} // namespace

void mlirgen::loadMlirGenDialects(mlir::MLIRContext &context) {
  context.loadDialect<mlir::mdl::MdlDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      mlir::tensor::TensorDialect, mlir::scf::SCFDialect>();
}

mlir::OwningOpRef<mlir::ModuleOp>
mlirgen::buildModule(mlir::MLIRContext &context, const sema::CheckedProgram &program,
                     const llvm::SourceMgr &sourceMgr, const ConcreteModel &model,
                     llvm::StringRef fnName, DiagnosticEngine &diags, DimBindings bindings,
                     const EntryValues &entry) {
  loadMlirGenDialects(context);
  Generator generator(context, program, sourceMgr, diags, bindings, entry);
  return generator.run(model, fnName);
}
