//===- EmitCommand.cpp - `modelc emit --stage=... FILE` -------------------===//
//
// Prints a model at one stage of compilation: the syntax tree (`ast`), the
// mdl dialect as built from the checked program (`mdl`), after mdl-to-linalg
// (`linalg`), or after the whole cpu pipeline, in the LLVM dialect (`llvm`).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ModelOptions.h"

#include "exec/Executor.h"
#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"

#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand emitCommand("emit", "Print a model's syntax tree or IR at one compilation stage");

namespace {

enum class Stage { Ast, Mdl, Linalg, Llvm };

cl::opt<std::string> fileOpt(cl::Positional, cl::desc("FILE"), cl::sub(emitCommand),
                             cl::cat(driverCategory()));
cl::opt<Stage>
    stageOpt("stage", cl::desc("What to print"),
             cl::values(clEnumValN(Stage::Ast, "ast", "the syntax tree"),
                        clEnumValN(Stage::Mdl, "mdl", "the mdl dialect (default)"),
                        clEnumValN(Stage::Linalg, "linalg", "after mdl-to-linalg"),
                        clEnumValN(Stage::Llvm, "llvm", "after the cpu pipeline (LLVM dialect)")),
             cl::init(Stage::Mdl), cl::sub(emitCommand), cl::cat(driverCategory()));
cl::opt<std::string> modelOpt("model", cl::value_desc("NAME"),
                              cl::desc("The model to emit (default: the file's one model whose "
                                       "arguments are all given or defaulted)"),
                              cl::sub(emitCommand), cl::cat(driverCategory()));
cl::opt<std::string> argsOpt(
    "args", cl::value_desc("NAME=VALUE,..."),
    cl::desc("The model's value arguments, e.g. in=784,hidden=256,bias=false,activation=gelu"),
    cl::sub(emitCommand), cl::cat(driverCategory()));
cl::opt<std::string> deviceOpt("device", cl::value_desc("DEVICE"),
                               cl::desc("Device for every device parameter: cpu or cuda:N "
                                        "(default cpu)"),
                               cl::init("cpu"), cl::sub(emitCommand), cl::cat(driverCategory()));
cl::opt<std::string> fnOpt("fn", cl::value_desc("NAME"), cl::desc("Entry fn (default forward)"),
                           cl::init("forward"), cl::sub(emitCommand), cl::cat(driverCategory()));
cl::opt<bool> locationsOpt("locations", cl::desc("Print each op's location in the .mdl source"),
                           cl::sub(emitCommand), cl::cat(driverCategory()));
cl::opt<bool> noBlasOpt("no-blas", cl::desc("Lower f32 matmul to loops instead of OpenBLAS"),
                        cl::sub(emitCommand), cl::cat(driverCategory()));
cl::list<std::string> importDirs("I", cl::Prefix, cl::value_desc("DIR"),
                                 cl::desc("Search DIR for imported modules"), cl::sub(emitCommand),
                                 cl::cat(driverCategory()));
cl::opt<std::string> stdlibOpt("stdlib", cl::value_desc("DIR"),
                               cl::desc("Where `import std.*` is found"), cl::sub(emitCommand),
                               cl::cat(driverCategory()));
cl::opt<ColorChoice>
    colorOpt("color", cl::desc("When to colour diagnostics"),
             cl::values(clEnumValN(ColorChoice::Auto, "auto", "when stderr is a terminal"),
                        clEnumValN(ColorChoice::Always, "always", "always"),
                        clEnumValN(ColorChoice::Never, "never", "never")),
             cl::init(ColorChoice::Auto), cl::sub(emitCommand), cl::cat(driverCategory()));

} // namespace

int runEmit() {
  if (fileOpt.empty())
    return reportMissingFile("emit", "FILE.mdl [--stage=ast|mdl|linalg|llvm] [--model NAME]",
                             shouldColorStderr(colorOpt));
  ModelOptions options{fileOpt, modelOpt,   argsOpt,   deviceOpt,
                       fnOpt,   importDirs, stdlibOpt, colorOpt};
  int exitCode = ExitClean;
  std::optional<LoadedModel> loaded = loadModel(options, stageOpt != Stage::Ast, exitCode);
  if (!loaded)
    return exitCode;
  Compilation &compilation = *loaded->compilation;
  if (stageOpt == Stage::Ast) {
    ast::dump(*compilation.mainModule(), llvm::outs());
    return ExitClean;
  }

  mlir::DialectRegistry registry;
  jit::registerJitDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlirgen::buildModule(context, *compilation.program(), compilation.sourceMgr(), *loaded->model,
                           fnOpt, compilation.diagnostics());
  if (!module) {
    printDiagnostics(compilation.diagnostics(), compilation.sourceMgr(),
                     shouldColorStderr(colorOpt));
    return ExitErrorsFound;
  }
  if (stageOpt != Stage::Mdl) {
    exec::LoweringStage stage =
        stageOpt == Stage::Linalg ? exec::LoweringStage::Linalg : exec::LoweringStage::Llvm;
    if (llvm::Error err = exec::lowerModule(*module, stage, !noBlasOpt)) {
      reportDriverError(llvm::toString(std::move(err)), shouldColorStderr(colorOpt));
      return ExitErrorsFound;
    }
  }
  mlir::OpPrintingFlags flags;
  if (locationsOpt)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(llvm::outs(), flags);
  llvm::outs() << "\n";
  return ExitClean;
}

} // namespace modelc::driver
