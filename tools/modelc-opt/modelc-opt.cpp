//===- modelc-opt.cpp - mlir-opt with the mdl dialect and passes ----------===//

#include "lower/Passes.h"
#include "mlir/MdlDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::mdl::MdlDialect>();
  modelc::lower::registerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "modelc optimizer driver (mdl dialect)\n", registry));
}
