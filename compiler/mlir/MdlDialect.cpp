//===- MdlDialect.cpp - mdl dialect registration and #mdl.device ----------===//

#include "mlir/MdlDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::mdl;

#include "mlir/MdlDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "mlir/MdlAttrs.cpp.inc"

void MdlDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "mlir/MdlAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "mlir/MdlOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// #mdl.device<cpu> / #mdl.device<cuda:N>
//===----------------------------------------------------------------------===//

Attribute DeviceAttr::parse(AsmParser &parser, Type) {
  std::string kind;
  int64_t index = 0;
  if (parser.parseLess() || parser.parseKeywordOrString(&kind))
    return {};
  if (succeeded(parser.parseOptionalColon()) && parser.parseInteger(index))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(parser.getNameLoc()); }, parser.getContext(),
                    kind, index);
}

void DeviceAttr::print(AsmPrinter &printer) const { printer << "<" << str() << ">"; }

std::string DeviceAttr::str() const {
  if (isCpu())
    return "cpu";
  return (getKind() + ":" + llvm::Twine(getIndex())).str();
}

LogicalResult DeviceAttr::verify(function_ref<InFlightDiagnostic()> emitError, StringRef kind,
                                 int64_t index) {
  if (kind != "cpu" && kind != "cuda")
    return emitError() << "unknown device kind '" << kind << "' (expected cpu or cuda)";
  if (index < 0)
    return emitError() << "device index must be non-negative, got " << index;
  if (kind == "cpu" && index != 0)
    return emitError() << "the cpu device has no index other than 0";
  return success();
}

DeviceAttr mlir::mdl::getDevice(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_or_null<DeviceAttr>(tensor.getEncoding());
}

static std::string describeDevice(Type type) {
  if (DeviceAttr device = getDevice(type))
    return device.str();
  return "no device";
}

LogicalResult mlir::mdl::verifySameDevice(Operation *op) {
  std::optional<std::pair<Type, std::string>> first;
  auto check = [&](Type type, const std::string &what) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    if (tensor.getEncoding() && !isa<DeviceAttr>(tensor.getEncoding()))
      return op->emitOpError() << what << " has encoding " << tensor.getEncoding()
                               << ", expected a #mdl.device";
    if (!first) {
      first = {type, what};
      return success();
    }
    if (getDevice(first->first) != getDevice(type))
      return op->emitOpError() << "mixes devices: " << what << " is on " << describeDevice(type)
                               << " but " << first->second << " is on "
                               << describeDevice(first->first)
                               << "; only mdl.transfer moves a tensor between devices";
    return success();
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand #" + std::to_string(i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result #" + std::to_string(i))))
      return failure();
  return success();
}

std::optional<SmallVector<ReassociationIndices>> mlir::mdl::pureReshapeGroups(RankedTensorType from,
                                                                              RankedTensorType to) {
  if (from.getRank() == to.getRank())
    return std::nullopt;
  bool expanding = to.getRank() > from.getRank();
  RankedTensorType wide = expanding ? to : from, narrow = expanding ? from : to;
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(narrow, wide);
  if (!groups || groups->size() != static_cast<size_t>(narrow.getRank()))
    return std::nullopt;
  for (auto [narrowDim, group] : llvm::enumerate(*groups)) {
    int64_t dynamic = llvm::count_if(group, [&](int64_t d) { return wide.isDynamicDim(d); });
    // A dynamic narrow dim must come from exactly one dynamic wide dim (the
    // rest are static), and a static one from static dims only.
    if (dynamic > 1 || (dynamic == 1) != narrow.isDynamicDim(narrowDim))
      return std::nullopt;
  }
  return groups;
}

std::optional<SmallVector<ReassociationIndices>>
mlir::mdl::explicitReshapeGroups(RankedTensorType from, RankedTensorType to,
                                 ArrayRef<int64_t> groups) {
  if (from.getRank() == to.getRank())
    return std::nullopt;
  bool expanding = to.getRank() > from.getRank();
  RankedTensorType wide = expanding ? to : from, narrow = expanding ? from : to;
  if (int64_t(groups.size()) != narrow.getRank())
    return std::nullopt;
  SmallVector<ReassociationIndices> result;
  int64_t next = 0;
  for (auto [narrowDim, size] : llvm::enumerate(groups)) {
    if (size < 1 || next + size > wide.getRank())
      return std::nullopt;
    ReassociationIndices group;
    int64_t dynamic = 0, product = 1;
    for (int64_t d = next; d < next + size; ++d) {
      group.push_back(d);
      if (wide.isDynamicDim(d))
        ++dynamic;
      else
        product *= wide.getDimSize(d);
    }
    next += size;
    bool narrowDynamic = narrow.isDynamicDim(narrowDim);
    if ((dynamic > 0) != narrowDynamic || (expanding && dynamic > 1) ||
        (!narrowDynamic && product != narrow.getDimSize(narrowDim)))
      return std::nullopt;
    result.push_back(std::move(group));
  }
  if (next != wide.getRank())
    return std::nullopt;
  return result;
}

int64_t mlir::mdl::slicedExtent(int64_t start, int64_t end, int64_t step, int64_t size) {
  auto bound = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
  int64_t first = bound(start), last = bound(end);
  return last <= first || step < 1 ? 0 : (last - first + step - 1) / step;
}
