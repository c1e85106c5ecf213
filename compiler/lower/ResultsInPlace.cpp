//===- ResultsInPlace.cpp - Compute results in the caller's buffers -------===//
//
// buffer-results-to-out-params turns each result into a caller-provided
// out-parameter, but a result whose shape is dynamic (a batch dim) is still
// computed into a buffer of its own and then copied:
//
//   %r = memref.alloc(%b) : memref<?x128x8x8xf32>
//   ... writes %r ...
//   memref.copy %r, %out
//
// That copy is a full pass over the output (2 MB for a ResNet block's batch
// of 64). When the buffer is allocated in the fn's body, the copy is its last
// use and the only use of the out-parameter, the result is computed in the
// out-parameter instead: the caller sizes it as the signature says, which is
// the size the fn allocates, and it aliases nothing the fn reads.
//
//===----------------------------------------------------------------------===//

#include "lower/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace modelc::lower {
namespace {

/// Whether `alloc`'s buffer can be replaced by `out` for the copy `copy`,
/// which reads it directly or through `cast`.
bool canWriteInPlace(memref::AllocOp alloc, memref::CastOp cast, BlockArgument out,
                     memref::CopyOp copy) {
  Block *body = copy->getBlock();
  if (alloc->getBlock() != body || !out.hasOneUse())
    return false;
  auto allocType = alloc.getType(), outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || !outType.getLayout().isIdentity() || !allocType.getLayout().isIdentity() ||
      allocType.getElementType() != outType.getElementType() ||
      allocType.getRank() != outType.getRank() ||
      allocType.getMemorySpace() != outType.getMemorySpace())
    return false;
  for (int64_t d = 0; d < allocType.getRank(); ++d)
    if (!allocType.isDynamicDim(d) && !outType.isDynamicDim(d) &&
        allocType.getDimSize(d) != outType.getDimSize(d))
      return false;
  // The copy is the buffer's last use (a use inside a loop counts where the
  // loop is), and nothing else (a dealloc, a return) lets it escape.
  if (cast && !cast->hasOneUse())
    return false;
  for (Operation *user : alloc->getUsers()) {
    if (user == copy || user == cast)
      continue;
    Operation *at = body->findAncestorOpInBlock(*user);
    if (!at || !at->isBeforeInBlock(copy) || isa<memref::DeallocOp, func::ReturnOp>(user))
      return false;
  }
  return true;
}

struct ResultsInPlacePass : PassWrapper<ResultsInPlacePass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ResultsInPlacePass)

  StringRef getArgument() const final { return "mdl-results-in-place"; }
  StringRef getDescription() const final {
    return "Compute a result that is allocated in the fn and copied into its out-parameter "
           "in the out-parameter itself";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect>();
  }

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &body = fn.getBody().front();
    SmallVector<memref::CopyOp> copies;
    for (auto copy : body.getOps<memref::CopyOp>())
      copies.push_back(copy);
    for (memref::CopyOp copy : copies) {
      auto out = dyn_cast<BlockArgument>(copy.getTarget());
      Value source = copy.getSource();
      auto cast = source.getDefiningOp<memref::CastOp>();
      auto alloc = (cast ? cast.getSource() : source).getDefiningOp<memref::AllocOp>();
      if (!out || out.getOwner() != &body || !alloc || !canWriteInPlace(alloc, cast, out, copy))
        continue;
      OpBuilder b(alloc);
      Value replacement = out;
      if (out.getType() != alloc.getType())
        replacement = memref::CastOp::create(b, alloc.getLoc(), alloc.getType(), out);
      copy.erase();
      if (cast)
        cast.erase();
      alloc.getResult().replaceAllUsesWith(replacement);
      alloc.erase();
    }
  }
};

} // namespace

std::unique_ptr<Pass> createResultsInPlacePass() { return std::make_unique<ResultsInPlacePass>(); }

} // namespace modelc::lower
