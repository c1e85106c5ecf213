//===- ModelArgs.h - A model instantiated from command-line arguments -*- C++ -*-===//
//
// `--model Mlp --args in=784,hidden=256,out=10 --device cpu` names one model
// of a checked program and its concrete arguments. ConcreteModel keeps what
// the MLIR builder and the executor both need: the sema instance (devices and
// int arguments), float/bool arguments by name, and the instantiated state
// (PyTorch state_dict names) and fn signatures. Front-end only: no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_MLIRGEN_MODELARGS_H
#define MODELC_MLIRGEN_MODELARGS_H

#include "sema/CheckedProgram.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace modelc::mlirgen {

struct ConcreteModel {
  /// Devices and int arguments; `sema::substitutionFor(*instance)` makes the
  /// model's generic types concrete.
  std::shared_ptr<sema::ModelInstance> instance;
  /// Every float and bool value argument (given or defaulted), by name.
  llvm::StringMap<double> scalarArgs;
  sema::InstantiatedModel concrete;

  const sema::ModelInfo &model() const { return *instance->model; }
  /// The concrete signature of fn `name`, or null.
  const sema::FnInfo *findFn(llvm::StringRef name) const;
};

/// Parses a device as the language spells it: `cpu`, `cuda:N`.
llvm::Expected<sema::Device> parseDevice(llvm::StringRef text);

/// Instantiates model `modelName` of `program` on `device` (for every device
/// parameter) with `args`, a comma-separated list of `name=value`
/// (`in=784,hidden=256`). Parameters left out take their defaults.
llvm::Expected<ConcreteModel> instantiateModel(const sema::CheckedProgram &program,
                                               llvm::StringRef modelName, llvm::StringRef args,
                                               sema::Device device);

} // namespace modelc::mlirgen

#endif // MODELC_MLIRGEN_MODELARGS_H
