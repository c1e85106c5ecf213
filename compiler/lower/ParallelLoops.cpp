//===- ParallelLoops.cpp - large loop nests on the OpenMP threads ---------===//
//
// The library calls (oneDNN, OpenBLAS, modelc's own tiles) run on all
// threads; the loops generated for everything else (layer norms, softmax,
// elementwise chains, head splits, pools) ran on the calling thread while
// the others spun in OpenMP's wait between two products: on 2 threads the
// transformer encoder layer spent a quarter of its second thread's time
// there.
//
// `mdl-parallel-loops` runs after convert-linalg-to-parallel-loops. For
// each outermost scf.parallel whose body does nothing but arithmetic and
// memory accesses of its own, it estimates the nest's work at run time
// (iterations times the operations of one iteration) and, from
// `min-work` on, runs it as an OpenMP worksharing loop over its outer
// dims (convert-scf-to-openmp, static schedule: each thread one contiguous
// block); the innermost dim stays a plain loop, so that it still
// vectorizes. Below `min-work`, and for every other scf.parallel, the nest
// becomes the scf.for loops convert-linalg-to-loops would have made.
// Every iteration computes what it computed serially: results do not
// depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace modelc::lower {
namespace {

constexpr llvm::StringLiteral kParallelMarker = "mdl.parallel";

/// Ops an iteration may run on the threads: arithmetic, math, loops and
/// memory accesses, no calls (a runtime function may keep state) and no
/// heap allocation.
bool runsOnThreads(Operation *op) {
  Dialect *dialect = op->getDialect();
  if (isa_and_nonnull<arith::ArithDialect, math::MathDialect, scf::SCFDialect,
                      affine::AffineDialect, vector::VectorDialect, ub::UBDialect>(dialect))
    return true;
  return isa<memref::LoadOp, memref::StoreOp, memref::DimOp, memref::SubViewOp, memref::CastOp,
             memref::ReinterpretCastOp, memref::ExpandShapeOp, memref::CollapseShapeOp,
             memref::AllocaOp, memref::AllocaScopeOp, memref::AllocaScopeReturnOp,
             memref::GetGlobalOp, memref::ExtractStridedMetadataOp,
             memref::ExtractAlignedPointerAsIndexOp>(op);
}

/// True when `value` is available before `nest` (defined outside it).
bool definedOutside(Value value, Operation *nest) {
  Operation *owner = value.getDefiningOp();
  if (!owner)
    owner = value.getParentBlock()->getParentOp();
  return !nest->isAncestor(owner);
}

/// Builds work estimates in front of a loop nest: index values, folded
/// where they are constant.
class WorkEstimate {
public:
  WorkEstimate(Operation *nest, OpBuilder &builder) : nest(nest), b(builder), loc(nest->getLoc()) {}

  /// Iterations of a loop dim; 1 (unknown) when a bound is computed inside
  /// the nest.
  OpFoldResult trips(Value lower, Value upper, Value step) {
    if (!definedOutside(lower, nest) || !definedOutside(upper, nest) || !definedOutside(step, nest))
      return b.getIndexAttr(1);
    std::optional<int64_t> lo = getConstantIntValue(lower), up = getConstantIntValue(upper),
                           st = getConstantIntValue(step);
    if (lo && up && st && *st > 0)
      return b.getIndexAttr(*up > *lo ? (*up - *lo + *st - 1) / *st : 0);
    Value span = b.createOrFold<arith::SubIOp>(loc, upper, lower);
    return b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
  }

  OpFoldResult multiply(OpFoldResult x, OpFoldResult y) {
    std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx * *cy);
    if (cx == 1 || cy == 0)
      return y;
    if (cy == 1 || cx == 0)
      return x;
    return b.createOrFold<arith::MulIOp>(loc, materialize(x), materialize(y));
  }

  OpFoldResult add(OpFoldResult x, OpFoldResult y) {
    std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return b.getIndexAttr(*cx + *cy);
    if (cx == 0)
      return y;
    if (cy == 0)
      return x;
    return b.createOrFold<arith::AddIOp>(loc, materialize(x), materialize(y));
  }

  Value materialize(OpFoldResult value) {
    if (auto v = dyn_cast<Value>(value))
      return v;
    return arith::ConstantIndexOp::create(b, loc, *getConstantIntValue(value));
  }

  /// Operations of one run of `block`: one per op, loops times their body.
  OpFoldResult ofBlock(Block &block) {
    OpFoldResult total = b.getIndexAttr(0);
    int64_t plain = 0;
    for (Operation &op : block.without_terminator()) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        total =
            add(total, multiply(trips(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()),
                                ofBlock(*loop.getBody())));
      } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        total = add(total, multiply(iterations(loop), ofBlock(*loop.getBody())));
      } else if (op.getNumRegions() > 0) {
        // scf.if, scopes: every region, as if all were taken.
        for (Region &region : op.getRegions())
          for (Block &inner : region)
            total = add(total, ofBlock(inner));
      } else {
        ++plain;
      }
    }
    return add(total, b.getIndexAttr(plain));
  }

  OpFoldResult iterations(scf::ParallelOp loop) {
    OpFoldResult product = b.getIndexAttr(1);
    for (auto [lower, upper, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      product = multiply(product, trips(lower, upper, step));
    return product;
  }

private:
  Operation *nest;
  OpBuilder &b;
  Location loc;
};

/// Nested scf.for over dims [first, end) of `loop`, built at `b`'s
/// insertion point, its ivs replacing the loop's; returns the innermost
/// body (`b` left at its start).
Block *nestedFors(OpBuilder &b, scf::ParallelOp loop, size_t first) {
  Block *innermost = b.getInsertionBlock();
  for (size_t d = first; d < loop.getNumLoops(); ++d) {
    auto forOp = scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound()[d],
                                    loop.getUpperBound()[d], loop.getStep()[d]);
    loop.getInductionVars()[d].replaceAllUsesWith(forOp.getInductionVar());
    innermost = forOp.getBody();
    b.setInsertionPointToStart(innermost);
  }
  return innermost;
}

/// Moves `loop`'s body (but its terminator) to the end of `to`, before
/// `to`'s terminator, and erases `loop`.
void moveBodyAndErase(scf::ParallelOp loop, Block *to) {
  Block *body = loop.getBody();
  to->getOperations().splice(to->getTerminator()->getIterator(), body->getOperations(),
                             body->begin(), body->getTerminator()->getIterator());
  loop.erase();
}

/// Replaces `loop` by nested scf.for over its dims, in order.
void toNestedFors(scf::ParallelOp loop) {
  OpBuilder b(loop);
  moveBodyAndErase(loop, nestedFors(b, loop, 0));
}

/// The work-sharing form of a nest: its outer dims parallel, its last dim
/// an scf.for inside (a loop of contiguous accesses the vectorizer widens).
void markParallel(scf::ParallelOp loop) {
  if (size_t dims = loop.getNumLoops(); dims > 1) {
    OpBuilder b(loop);
    auto outer =
        scf::ParallelOp::create(b, loop.getLoc(), loop.getLowerBound().drop_back(),
                                loop.getUpperBound().drop_back(), loop.getStep().drop_back());
    for (auto [from, to] :
         llvm::zip(ValueRange(loop.getInductionVars()).drop_back(), outer.getInductionVars()))
      from.replaceAllUsesWith(to);
    b.setInsertionPointToStart(outer.getBody());
    moveBodyAndErase(loop, nestedFors(b, loop, dims - 1));
    loop = outer;
  }
  loop->setAttr(kParallelMarker, UnitAttr::get(loop.getContext()));
}

struct ParallelLoopsPass : PassWrapper<ParallelLoopsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelLoopsPass)

  ParallelLoopsPass() = default;
  ParallelLoopsPass(const ParallelLoopsPass &other) : PassWrapper(other) {}
  explicit ParallelLoopsPass(int64_t minWorkValue) { minWork = minWorkValue; }

  StringRef getArgument() const final { return "mdl-parallel-loops"; }
  StringRef getDescription() const final {
    return "Run loop nests of at least min-work operations on the OpenMP threads (the rest as "
           "scf.for)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, scf::SCFDialect>();
  }

  Option<int64_t> minWork{*this, "min-work",
                          llvm::cl::desc("Operations (iterations x ops per iteration) from which "
                                         "a nest runs on the threads; 0 never"),
                          llvm::cl::init(kParallelLoopMinWork)};

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
      outermost.push_back(loop);
      return WalkResult::skip();
    });
    for (scf::ParallelOp loop : outermost) {
      if (minWork <= 0 || loop.getNumResults() != 0 || !loop.getInitVals().empty())
        continue;
      bool threadSafe = true;
      loop.getBody()->walk([&](Operation *op) {
        if (!runsOnThreads(op))
          threadSafe = false;
      });
      if (!threadSafe)
        continue;
      OpBuilder b(loop);
      WorkEstimate estimate(loop, b);
      OpFoldResult work =
          estimate.multiply(estimate.iterations(loop), estimate.ofBlock(*loop.getBody()));
      std::optional<int64_t> known = getConstantIntValue(work);
      if (known && *known < minWork)
        continue;
      if (known) {
        markParallel(loop);
        continue;
      }
      // Known at run time only: the nest twice, parallel from min-work on.
      Value large = arith::CmpIOp::create(
          b, loop.getLoc(), arith::CmpIPredicate::sge, estimate.materialize(work),
          arith::ConstantIndexOp::create(b, loop.getLoc(), minWork));
      auto branch = scf::IfOp::create(b, loop.getLoc(), large, /*withElseRegion=*/true);
      Operation *copy = loop->clone();
      branch.thenBlock()->getOperations().insert(branch.thenBlock()->begin(), copy);
      loop->moveBefore(branch.elseBlock()->getTerminator());
      markParallel(cast<scf::ParallelOp>(copy));
    }
    // Everything not marked: plain loops, inner nests first.
    SmallVector<scf::ParallelOp> serial;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->hasAttr(kParallelMarker))
        serial.push_back(loop);
    });
    for (scf::ParallelOp loop : serial)
      toNestedFors(loop);
  }
};

/// convert-scf-to-openmp wraps each iteration in a memref.alloca_scope,
/// which convert-scf-to-cf cannot leave with several blocks; the scopes
/// without allocas are inlined (their canonicalization).
struct InlineAllocaScopesPass : PassWrapper<InlineAllocaScopesPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(InlineAllocaScopesPass)

  StringRef getArgument() const final { return "mdl-inline-alloca-scopes"; }
  StringRef getDescription() const final {
    return "Inline memref.alloca_scope ops that allocate nothing";
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    memref::AllocaScopeOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::unique_ptr<Pass> createParallelLoopsPass(int64_t minWork) {
  return std::make_unique<ParallelLoopsPass>(minWork);
}

std::unique_ptr<Pass> createParallelLoopsPass() { return std::make_unique<ParallelLoopsPass>(); }

std::unique_ptr<Pass> createInlineAllocaScopesPass() {
  return std::make_unique<InlineAllocaScopesPass>();
}

} // namespace modelc::lower
