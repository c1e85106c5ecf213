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

/// The model of `file` (a module of `program`) that `modelc build FILE` and
/// `modelc run FILE` use when no `--model` is given: the one model of the
/// file that has fn `fnName` and whose value arguments are all given in
/// `args` or defaulted; among several, the one no other model of the file
/// uses as a submodel. Otherwise an error that lists the file's models with
/// their parameters.
llvm::Expected<std::string> chooseModel(const sema::CheckedProgram &program,
                                        const ast::Module &file, llvm::StringRef args,
                                        llvm::StringRef fnName);

/// `Conv<D: device>(in: int, stride: int = 1)`, as the model's header reads.
std::string modelSignature(const ast::ModelDecl &model);

} // namespace modelc::mlirgen

#endif // MODELC_MLIRGEN_MODELARGS_H
