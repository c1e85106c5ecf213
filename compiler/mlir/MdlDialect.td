//===- MdlDialect.td - the mdl dialect and its device attribute -*- tablegen -*-===//
//
// Tensors are builtin ranked tensors whose encoding is the device they live
// on: tensor<?x784xf32, #mdl.device<cuda:0>>. See docs/design/mdl-dialect.md.
//
//===----------------------------------------------------------------------===//

#ifndef MDL_DIALECT_TD
#define MDL_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Mdl_Dialect : Dialect {
  let name = "mdl";
  let cppNamespace = "::mlir::mdl";
  let summary = "Device-checked neural-network operations";
  let description = [{
    The mdl dialect mirrors the primitives of the model-description language.
    Every tensor carries its device as the encoding of a builtin ranked tensor
    type; only `mdl.transfer` changes it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect"
  ];
}

def Mdl_DeviceAttr : AttrDef<Mdl_Dialect, "Device"> {
  let mnemonic = "device";
  let summary = "The device a tensor lives on: cpu or cuda:N";
  let parameters = (ins StringRefParameter<"device kind">:$kind,
                        "int64_t":$index);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isCpu() const { return getKind() == "cpu"; }
    /// Renders the device as the language spells it: `cpu`, `cuda:0`.
    std::string str() const;
  }];
}

// Every tensor operand and result shares one device (the checker's invariant).
def Mdl_SameDevice : NativeOpTrait<"SameDevice"> {
  let cppNamespace = "::mlir::mdl";
}

class Mdl_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mdl_Dialect, mnemonic, traits>;

#endif // MDL_DIALECT_TD
