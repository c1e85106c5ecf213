//===- ModelOptions.h - Options and loading shared by emit and run -*- C++ -*-===//
//
// `modelc emit` and `modelc run` both name a .mdl file, a model in it, its
// arguments and device (`--model Mlp --args in=784,hidden=256,out=10
// --device cpu`) and an entry fn. loadModel checks the file and instantiates
// the model, printing diagnostics or a driver error when that fails.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_MODELOPTIONS_H
#define MODELC_DRIVER_MODELOPTIONS_H

#include "DriverOutput.h"

#include "exec/Executor.h"
#include "mlirgen/ModelArgs.h"
#include "sema/Compilation.h"

#include "llvm/Support/CommandLine.h"

#include <memory>
#include <optional>

namespace modelc::driver {

/// The options common to the commands that instantiate a model.
struct ModelOptions {
  llvm::cl::opt<std::string> &file;
  llvm::cl::opt<std::string> &model;
  llvm::cl::opt<std::string> &args;
  llvm::cl::opt<std::string> &device;
  llvm::cl::opt<std::string> &fn;
  llvm::cl::list<std::string> &importDirs;
  llvm::cl::opt<std::string> &stdlib;
  llvm::cl::opt<ColorChoice> &color;
};

/// A checked file and, when a model was asked for, its instance.
struct LoadedModel {
  std::unique_ptr<Compilation> compilation;
  std::optional<mlirgen::ConcreteModel> model;
};

/// Checks `options.file` (printing its diagnostics) and, when `needModel`,
/// instantiates `--model`, or without it the file's one model that
/// `mlirgen::chooseModel` finds. Returns nullopt with `exitCode` set on
/// failure.
std::optional<LoadedModel> loadModel(const ModelOptions &options, bool needModel, int &exitCode);

/// Prints the diagnostics of `engine` (text, on stderr) and the summary line.
void printDiagnostics(DiagnosticEngine &engine, const llvm::SourceMgr &sourceMgr, bool color);

/// Reads each `--input FILE.npy[@DEVICE]` of `modelc run` (or `--input VALUE`,
/// a rank-0 array for a scalar parameter); an input is on
/// `defaultDevice` unless it names another. Reports the first unreadable
/// file or bad device and returns nullopt (exit code 2).
std::optional<std::vector<exec::EntryInput>>
readEntryInputs(llvm::ArrayRef<std::string> specs, llvm::StringRef defaultDevice, bool color);

/// Writes `output` to `path` as .npy or, when `path` is empty, prints its
/// type (as a tensor on `device`) and first values. Returns the exit code.
int writeRunOutput(const runtime::Tensor &output, llvm::StringRef device, llvm::StringRef path,
                   bool color);

} // namespace modelc::driver

#endif // MODELC_DRIVER_MODELOPTIONS_H
