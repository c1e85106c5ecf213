//===- HoistStatePrep.cpp - Weight-only work once per bound weights -------===//
//
// An entry fn takes the model's state (its params and buffers) as arguments,
// so whatever it computes from the state alone is computed again on every
// call: a batch norm folded into a conv scales the conv's weights
// (mdl-fold-batch-norm), attention gathers the query/key/value rows of
// in_proj_weight, an LSTM adds its two biases. TorchScript's freeze computes
// such values once. This pass does the same for a compiled model:
//
//   func @forward(state..., inputs...)
//
// becomes
//
//   func @forward_prepare(state...) -> (prepared...)   // once per weights
//   func @forward(state..., prepared..., inputs...)     // per call
//
// The state and prepared arguments are marked `mdl.state` (kStateArgAttr):
// the caller passes the same values on every call.
//
// A value is prepared when it is computed (not a constant, not a view) from
// state and constants only and something that also reads the inputs uses it.
// Views of a prepared value or of the state (a reshape, the transpose a
// matmul reads through) stay in the fn: they cost nothing there, and a
// matmul library call reads a transposed operand as it is.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace modelc::lower {
namespace {

/// Ops that only view their first operand's elements: preparing their result
/// would copy what the fn reads for free.
bool isView(Operation *op) {
  return isa<mdl::ReshapeOp, mdl::TransposeOp, mdl::PermuteOp, mdl::SliceOp, mdl::SelectOp>(op);
}

bool hasStaticShape(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  return shaped && shaped.hasStaticShape();
}

/// The ops of `body` (top level) whose results depend on the first
/// `numState` arguments and constants only.
llvm::SetVector<Operation *> stateOnlyOps(Block &body, unsigned numState) {
  llvm::DenseSet<Value> stateOnly;
  for (unsigned i = 0; i < numState && i < body.getNumArguments(); ++i)
    stateOnly.insert(body.getArgument(i));
  llvm::SetVector<Operation *> ops;
  for (Operation &op : body) {
    if (op.getNumRegions() != 0 || op.hasTrait<OpTrait::IsTerminator>() || !isPure(&op) ||
        op.getNumResults() == 0)
      continue;
    if (!llvm::all_of(op.getOperands(), [&](Value v) { return stateOnly.contains(v); }) ||
        !llvm::all_of(op.getResultTypes(), hasStaticShape))
      continue;
    ops.insert(&op);
    stateOnly.insert(op.getResults().begin(), op.getResults().end());
  }
  return ops;
}

/// The value to prepare for `value`, a state-only value that the per-call
/// code reads: the computed value under its views; null for a view of the
/// state itself or a constant.
Value preparedRoot(Value value, const llvm::SetVector<Operation *> &stateOnly) {
  while (Operation *def = value.getDefiningOp()) {
    if (!stateOnly.contains(def) || def->getNumOperands() == 0)
      return {};
    if (!isView(def))
      return value;
    value = def->getOperand(0);
  }
  return {}; // a state argument
}

struct HoistStatePrepPass : PassWrapper<HoistStatePrepPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(HoistStatePrepPass)

  HoistStatePrepPass() = default;
  HoistStatePrepPass(const HoistStatePrepPass &other) : PassWrapper(other) {}
  HoistStatePrepPass(llvm::StringRef fn, unsigned numState) {
    fnName = fn.str();
    stateArgs = numState;
  }

  StringRef getArgument() const final { return "mdl-hoist-state-prep"; }
  StringRef getDescription() const final {
    return "Move what an entry fn computes from its state arguments alone into "
           "<fn>_prepare, run once per bound weights; the fn takes the results as arguments "
           "after the state";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<mdl::MdlDialect, func::FuncDialect>();
  }

  Option<std::string> fnName{*this, "fn", llvm::cl::desc("The entry fn"),
                             llvm::cl::init("forward")};
  Option<unsigned> stateArgs{*this, "state-args",
                             llvm::cl::desc("How many leading arguments are the model's state"),
                             llvm::cl::init(0)};

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>(fnName);
    if (!fn || fn.isExternal() || !fn.getBody().hasOneBlock())
      return;
    std::string prepareName = preparedStateFunction(fnName);
    if (module.lookupSymbol(prepareName)) {
      fn.emitError("a function named '") << prepareName << "' already exists";
      return signalPassFailure();
    }
    Block &body = fn.getBody().front();
    unsigned numState = std::min<unsigned>(stateArgs, body.getNumArguments());
    OpBuilder b(module.getContext());
    for (unsigned i = 0; i < numState; ++i)
      fn.setArgAttr(i, kStateArgAttr, b.getUnitAttr());
    llvm::SetVector<Operation *> stateOnly = stateOnlyOps(body, numState);

    // The roots: state-only values read by per-call code, under their views.
    llvm::SetVector<Value> roots;
    for (Operation *op : stateOnly)
      for (Value result : op->getResults())
        for (OpOperand &use : result.getUses()) {
          Operation *user = body.findAncestorOpInBlock(*use.getOwner());
          if (user && !stateOnly.contains(user))
            if (Value root = preparedRoot(result, stateOnly))
              roots.insert(root);
        }
    if (roots.empty())
      return;

    // @<fn>_prepare(state...) -> (roots...): the ops the roots need, in order.
    llvm::SetVector<Operation *> needed;
    llvm::SmallVector<Value> worklist(roots.begin(), roots.end());
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val().getDefiningOp();
      if (def && needed.insert(def))
        worklist.append(def->operand_begin(), def->operand_end());
    }
    b.setInsertionPointAfter(fn);
    llvm::SmallVector<Type> stateTypes;
    for (unsigned i = 0; i < numState; ++i)
      stateTypes.push_back(body.getArgument(i).getType());
    llvm::SmallVector<Type> rootTypes;
    for (Value root : roots)
      rootTypes.push_back(root.getType());
    auto prepare =
        func::FuncOp::create(b, fn.getLoc(), prepareName, b.getFunctionType(stateTypes, rootTypes));
    Block *prepareBody = prepare.addEntryBlock();
    for (unsigned i = 0; i < numState; ++i)
      if (DictionaryAttr attrs = fn.getArgAttrDict(i))
        prepare.setArgAttrs(i, attrs);
    IRMapping mapping;
    for (unsigned i = 0; i < numState; ++i)
      mapping.map(body.getArgument(i), prepareBody->getArgument(i));
    b.setInsertionPointToStart(prepareBody);
    for (Operation &op : body)
      if (needed.contains(&op))
        b.clone(op, mapping);
    llvm::SmallVector<Value> prepared;
    for (Value root : roots)
      prepared.push_back(mapping.lookup(root));
    func::ReturnOp::create(b, fn.getLoc(), prepared);

    // The fn reads the prepared values as arguments after the state.
    for (auto [i, root] : llvm::enumerate(roots.takeVector())) {
      unsigned index = numState + unsigned(i);
      if (failed(fn.insertArgument(index, root.getType(), nullptr, root.getLoc())))
        return signalPassFailure();
      fn.setArgAttr(index, "bufferization.writable", b.getBoolAttr(false));
      fn.setArgAttr(index, kStateArgAttr, b.getUnitAttr());
      root.replaceAllUsesWith(body.getArgument(index));
    }
    for (Operation *op : llvm::reverse(stateOnly))
      if (op->use_empty())
        op->erase();
  }
};

} // namespace

std::string preparedStateFunction(llvm::StringRef fnName) { return (fnName + "_prepare").str(); }

std::unique_ptr<Pass> createHoistStatePrepPass(llvm::StringRef fnName, unsigned numState) {
  return std::make_unique<HoistStatePrepPass>(fnName, numState);
}

std::unique_ptr<Pass> createHoistStatePrepPass() { return std::make_unique<HoistStatePrepPass>(); }

} // namespace modelc::lower
