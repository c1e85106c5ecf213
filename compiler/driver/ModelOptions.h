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
/// a rank-0 array for a scalar parameter); an input is on the device it
/// names, else on `pinned[i]` (the device its parameter declares, "" for
/// none), else on `defaultDevice`. Reports the first unreadable
/// file or bad device and returns nullopt (exit code 2).
std::optional<std::vector<exec::EntryInput>>
readEntryInputs(llvm::ArrayRef<std::string> specs, llvm::StringRef defaultDevice, bool color,
                llvm::ArrayRef<std::string> pinned = {});

/// Checks that `modelc run` got no `--output` or one per result of `fnName`
/// (`resultCount` of them); otherwise reports it (exit code 2) and returns
/// false.
bool checkOutputCount(llvm::ArrayRef<std::string> paths, size_t resultCount, llvm::StringRef fnName,
                      bool color);

/// Writes each of `outputs` to the path of the same position as .npy or,
/// when `paths` is empty, prints each one's type (as a tensor on the device
/// of the same position) and first values. Returns the exit code.
int writeRunOutputs(llvm::ArrayRef<runtime::Tensor> outputs, llvm::ArrayRef<std::string> devices,
                    llvm::ArrayRef<std::string> paths, bool color);

} // namespace modelc::driver

#endif // MODELC_DRIVER_MODELOPTIONS_H
