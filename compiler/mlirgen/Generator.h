//===- Generator.h - What the files of the mdl generator share --*- C++ -*-===//
//
// The values generation works with (GenValue, the ModelFrame of a model
// instance, the Scope of an inlined fn) and the Generator, private to
// compiler/mlirgen. Its member functions live by kind of construct:
//   MlirGen.cpp              the module, entry fn arguments, types, devices
//   GenCalls.cpp             which callee a call reaches; inlined model fns
//   GenStatements.cpp        let, assignment, return, if, for
//   GenExpressions.cpp       names, members, operators, subscripts
//   GenBuiltins.cpp          one mdl op per built-in
//   GenComposedBuiltins.cpp  built-ins composed of other mdl ops
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_MLIRGEN_GENERATOR_H
#define MODELC_MLIRGEN_GENERATOR_H

#include "mlirgen/MlirGen.h"
#include "sema/BuiltinSlots.h"

#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::mlirgen::detail {

using mlir::RankedTensorType;
using mlir::ShapedType;
namespace slot = sema::slot;

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

/// A built-in call's arguments, generated, in the slots the checker bound
/// them to; read them by name (`args.tensor(slot::conv2d::weight)`, the
/// constants of sema/BuiltinSlots.h). An empty slot keeps its default.
struct BuiltinArgs {
  llvm::SmallVector<std::optional<GenValue>, 8> values;
  llvm::SmallVector<Range, 8> ranges;
  llvm::SmallVector<llvm::StringRef, 8> strings; // `mode: "reflect"`

  bool has(size_t slot) const { return slot < values.size() && values[slot].has_value(); }
  const GenValue &operator[](size_t slot) const { return *values[slot]; }
  Range range(size_t slot) const { return ranges[slot]; }
  /// The tensor given for `slot`, or null.
  mlir::Value tensor(size_t slot) const;
  /// A compile-time number; `dflt` for an empty slot, nullopt for a value
  /// that is not one.
  std::optional<double> number(size_t slot, double dflt) const;
  /// An int (or a bool as 0 or 1); `dflt` for an empty slot or another value.
  int64_t integer(size_t slot, int64_t dflt) const;
  /// `n` ints from one int (`stride: 2`) or a list or tuple (`stride: (2, 1)`).
  llvm::SmallVector<int64_t, 2> ints(size_t slot, int64_t dflt, size_t n) const;
  /// The ints of a list (or one int); nullopt for anything else.
  std::optional<llvm::SmallVector<int64_t>> intList(size_t slot) const;
  /// A string option (`mode: "reflect"`), or `dflt`.
  llvm::StringRef string(size_t slot, llvm::StringRef dflt) const {
    return slot < strings.size() && !strings[slot].empty() ? strings[slot] : dflt;
  }
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
  sema::StateAffixes names;           // its state's names: "fc1.weight", "weight_l2"
  llvm::StringMap<double> scalarArgs; // float/bool arguments
  llvm::StringMap<std::unique_ptr<ModelFrame>> children;

  const sema::ModelInfo &info() const { return *instance->model; }
  sema::Substitution subst() const { return sema::substitutionFor(*instance); }
  /// The weights-file name of this instance's state `name` (an entry fn
  /// argument of that name).
  std::string stateKey(llvm::StringRef name) const { return names.name(name); }
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
  /// The leading dims each `...` of the fn's signature stands for here (by
  /// the pack's identity), from the argument that bound it.
  llvm::DenseMap<uint32_t, llvm::SmallVector<int64_t, 4>> packExtents;
  /// The fn's own dtype parameters (`T` of `fn f<T: dtype>`), from the
  /// arguments' element types.
  llvm::DenseMap<sema::AtomId, ast::DType> dtypes;
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
  /// The dtype `e` (as the checker recorded it in `scope`'s fn) has there:
  /// the frame's dtype arguments and the fn's bound dtype parameters.
  std::optional<ast::DType> concreteDType(const sema::ElementType &e, Scope &scope);
  mlir::mdl::DeviceAttr deviceAttr(const sema::Device &device);
  std::optional<sema::Device> concreteDevice(const sema::Device &device, ModelFrame &frame);
  RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, mlir::Type element,
                              mlir::Attribute encoding) {
    return RankedTensorType::get(shape, element, encoding);
  }
  RankedTensorType typeOf(mlir::Value v) { return mlir::cast<RankedTensorType>(v.getType()); }
  RankedTensorType withShape(RankedTensorType t, llvm::ArrayRef<int64_t> shape) {
    return tensorType(shape, t.getElementType(), t.getEncoding());
  }
  RankedTensorType withShape(mlir::Value v, llvm::ArrayRef<int64_t> shape) {
    return withShape(typeOf(v), shape);
  }
  std::optional<RankedTensorType> loweredType(const sema::Type &type, ModelFrame &frame, Range at);
  GenValue unsupported(Range at, const llvm::Twine &what);
  /// E0413: the constant `index` leaves a dim of `extent` of this instance.
  GenValue indexOutOfRange(Range at, int64_t index, int64_t extent, Range base);
  /// `d` with the frame's arguments and the bound symbols substituted.
  sema::Dim concreteDim(sema::Dim d, ModelFrame &frame);
  /// The extent of `d` in `frame` (its arguments and the bound symbols), or `?`.
  int64_t extentOf(sema::Dim d, ModelFrame &frame) {
    std::optional<int64_t> k = concreteDim(d, frame).asConstant();
    return k && *k >= 0 ? *k : kDyn;
  }
  /// The int `d` (a dim the checker knows): a constant where this scope fixes
  /// it, else a Size, read from the inputs where a consumer needs it.
  GenValue intOfDim(sema::Dim d, Scope &scope) {
    int64_t extent = extentOf(scopedDim(d, scope), *scope.frame);
    if (extent != kDyn)
      return GenValue::ofScalar(double(extent), true);
    GenValue v;
    v.kind = GenValue::Kind::Size;
    return v;
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
  /// The type the checker gave `expr` (a built-in call, an operator, a
  /// subscript), as an mdl tensor type: its dims with this instance's and this
  /// scope's extents (`?` where neither fixes one, the dims its argument gave
  /// a `...`), its dtype and its device. nullopt when it is not a tensor.
  /// Every mdl op generated for a checked expression has this result type.
  std::optional<RankedTensorType> checkedType(const ast::Expr &expr, Scope &scope);
  /// A tensor type of the checker's (`expr`'s, or an element of a list it
  /// gave) in this scope, as checkedType.
  std::optional<RankedTensorType> scopedType(const sema::Type &type, Scope &scope);
  /// One index value per `?` dim of `type`, the checker's type of `expr`,
  /// computed from the scope's run-time extents; nullopt when one cannot be.
  std::optional<llvm::SmallVector<mlir::Value>>
  dynamicSizes(const ast::Expr &expr, RankedTensorType type, Scope &scope, mlir::Location l);
  /// Reports an internal error when the value generated for `expr` does not
  /// have the checker's type of it (a rule of mlirgen disagrees with the
  /// checker's); returns `v` otherwise.
  GenValue checkedResult(const ast::Expr &expr, GenValue v, Scope &scope);
  GenValue fail() {
    failed = true;
    return {};
  }

  // --- expressions ----------------------------------------------------------
  /// `expr`'s value, of the checker's type of it.
  GenValue gen(const ast::Expr &expr, Scope &scope);
  GenValue genExpr(const ast::Expr &expr, Scope &scope);
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
  /// The locals outside a loop that `body` re-binds (carried from one
  /// iteration to the next), sorted.
  llvm::SmallVector<std::string> carriedLocals(const std::vector<ast::StmtPtr> &body, Scope &scope);
  /// One unrolled iteration of `body` with `var` = `value`: afterwards only
  /// the carried locals keep what the body gave them.
  bool genIteration(const std::vector<ast::StmtPtr> &body, llvm::StringRef var,
                    const GenValue &value, llvm::ArrayRef<std::string> carried, Scope &scope);
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
  /// A rank-0 tensor of `like`'s dtype and device holding the run-time int
  /// `index`.
  mlir::Value runtimeScalar(mlir::Value index, mlir::Value like, Range at);
  /// `l op r` on ints of which one is known only at run time.
  GenValue indexArithmetic(const ast::BinaryExpr &binary, const GenValue &l, const GenValue &r,
                           Scope &scope);
  std::optional<GenValue> constantOf(const ast::Expr &expr, ModelFrame &frame);
  /// `l op r` for two compile-time scalars (Python's `%` and `//` for ints).
  std::optional<GenValue> foldScalars(ast::BinaryOp op, const GenValue &l, const GenValue &r);
  /// The frame of submodel `name` of `parent` (`layers.2`), whose state is
  /// named with `affixes` inside the parent's.
  ModelFrame *child(ModelFrame &parent, const std::string &name,
                    std::shared_ptr<const sema::ModelInstance> inst, const ast::Expr *init,
                    const sema::StateAffixes &affixes);

  mlir::Value broadcastScalar(const GenValue &scalar, mlir::Value like, Range at);
  /// `lhs op rhs` of type `result` (the checker's).
  mlir::Value binaryOp(ast::BinaryOp op, mlir::Value lhs, mlir::Value rhs, RankedTensorType result,
                       Range at);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape, mlir::Location l);
  mlir::Value reshape(mlir::Value x, RankedTensorType type, mlir::Location l) {
    return mlir::mdl::ReshapeOp::create(b, l, type, x);
  }
  /// `@` where an operand is a vector (rank 1), as torch.matmul does it.
  mlir::Value vectorMatmul(mlir::Value lhs, mlir::Value rhs, RankedTensorType result, Range at);
  /// adaptive_avg_pool2d of a static [N, C, H, W] to `result` when its
  /// [outH, outW] does not divide the input: one mean per (overlapping) window.
  mlir::Value adaptiveAvgPoolByWindows(mlir::Value x, RankedTensorType result, mlir::Location l);
  /// The spatial built-ins (conv2d, the pools) on [N, C, H, W] to `result`.
  GenValue genSpatial(llvm::StringRef name, const ast::CallExpr &call, const BuiltinArgs &args,
                      mlir::Value x, RankedTensorType result);

  // Built-ins composed of other mdl ops (PyTorch's signatures for ports).
  static bool isComposedBuiltin(llvm::StringRef name);
  GenValue genComposedBuiltin(llvm::StringRef name, const ast::CallExpr &call,
                              const BuiltinArgs &args, RankedTensorType result, Scope &scope);
  /// argmax / argmin of `x` to `result` (the first position of the extreme).
  GenValue genArgReduce(bool smallest, const BuiltinArgs &args, mlir::Value x,
                        RankedTensorType result, mlir::Location l);
  /// i64 [n]: start, start + 1, ... on `device`.
  mlir::Value indexVector(int64_t n, int64_t start, mlir::Attribute device, mlir::Location l);
  /// A 0-dim tensor of `value` with the dtype and device of `like`.
  mlir::Value scalarLike(double value, mlir::Value like, mlir::Location l);
  template <typename Op>
  mlir::Value elementwise(mlir::Value lhs, mlir::Value rhs, mlir::Location l);
  mlir::Value compare(llvm::StringRef predicate, mlir::Value lhs, mlir::Value rhs,
                      mlir::Location l);
  /// x[..., start:end, ...] along `dim` (static bounds), of type `result`.
  mlir::Value sliceDim(mlir::Value x, int64_t dim, int64_t start, int64_t end,
                       RankedTensorType result, mlir::Location l);
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
  GenValue genConvLike(llvm::StringRef name, const ast::CallExpr &call, const BuiltinArgs &args,
                       RankedTensorType result);
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
  int64_t nextDefaultSeed = 0; // of the next randn without `seed:`
};

} // namespace modelc::mlirgen::detail

#endif // MODELC_MLIRGEN_GENERATOR_H
