//===- MdlDialect.h - the mdl dialect: device attribute, trait, ops -------===//
//
// Include this header to use the mdl dialect. Tensors are builtin ranked
// tensor types whose encoding is a #mdl.device attribute.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_MLIR_MDLDIALECT_H
#define MODELC_MLIR_MDLDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mlir/MdlDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "mlir/MdlAttrs.h.inc"

namespace mlir::mdl {

/// Returns the device of a tensor type (its #mdl.device encoding), or null
/// when the type is not a ranked tensor or has no device.
DeviceAttr getDevice(Type type);

/// Checks that every ranked-tensor operand and result of `op` lives on one
/// device, and that every tensor encoding present is a #mdl.device.
LogicalResult verifySameDevice(Operation *op);

/// The reassociation of a reshape that only inserts or merges dims (every
/// group holds at most one dynamic dim of the higher-rank side), so it is a
/// tensor.expand_shape or collapse_shape; nullopt for any other reshape.
std::optional<SmallVector<ReassociationIndices>> pureReshapeGroups(RankedTensorType from,
                                                                   RankedTensorType to);
inline bool isPureExpandOrCollapse(RankedTensorType from, RankedTensorType to) {
  return pureReshapeGroups(from, to).has_value();
}
/// The reassociation of `groups` (sizes of consecutive groups of the
/// higher-rank side's dims) between `from` and `to`, checked: one group per
/// lower-rank dim, covering every higher-rank dim, a static lower-rank dim
/// the product of static dims, a dynamic one holding a dynamic dim (at most
/// one when expanding). nullopt when they do not describe such a reshape.
std::optional<SmallVector<ReassociationIndices>>
explicitReshapeGroups(RankedTensorType from, RankedTensorType to, ArrayRef<int64_t> groups);

/// The extent of a Python slice `start:end:step` (negative bounds count from
/// the end; both clamp into [0, size]) of a dim of `size`.
int64_t slicedExtent(int64_t start, int64_t end, int64_t step, int64_t size);

/// Op trait: all tensor operands and results share one device.
template <typename ConcreteType>
class SameDevice : public OpTrait::TraitBase<ConcreteType, SameDevice> {
public:
  static LogicalResult verifyTrait(Operation *op) { return verifySameDevice(op); }
};

} // namespace mlir::mdl

#define GET_OP_CLASSES
#include "mlir/MdlOps.h.inc"

#endif // MODELC_MLIR_MDLDIALECT_H
