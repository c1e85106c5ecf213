//===- ImportTorchCommand.cpp - `modelc import-torch model.py:Net` --------===//
//
// Imports a torch.nn.Module into .mdl: runs the Python importer shipped with
// modelc (importers/torch, installed to share/modelc/importers/torch) with
// /usr/bin/python3 or $MODELC_PYTHON, writes the .mdl it produces (and the
// weights), then checks the import for a device and reports each diagnostic
// at the Python line it came from, with the fix in PyTorch terms. The
// importer's own failures (no torch, a file that does not load, a trace
// that fails, an op with no .mdl equivalent) come back as E07xx diagnostics
// pointing into the Python source; a Python traceback is never the only
// output.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DriverOutput.h"
#include "TorchSourceMap.h"

#include "diagnostics/TextRenderer.h"
#include "sema/Compilation.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand importTorchCommand("import-torch",
                                  "Import a torch.nn.Module (FILE.py:Class) into .mdl and check "
                                  "it for PyTorch's device bugs");

namespace {

cl::opt<std::string> sourceOpt(cl::Positional, cl::Required, cl::desc("FILE.py:Class"),
                               cl::sub(importTorchCommand), cl::cat(driverCategory()));
cl::opt<std::string> outputOpt("o", cl::value_desc("FILE.mdl"),
                               cl::desc("Write the .mdl here (default: standard output)"),
                               cl::sub(importTorchCommand), cl::cat(driverCategory()));
cl::opt<std::string> argsOpt("args", cl::value_desc("NAME=VALUE,..."),
                             cl::desc("Keyword arguments of the class's constructor (Python "
                                      "literals), e.g. hidden=256,bias=False"),
                             cl::sub(importTorchCommand), cl::cat(driverCategory()));
cl::list<std::string> inputOpts("input", cl::value_desc("TYPE"),
                                cl::desc("The type of one forward input, in order, e.g. "
                                         "'f32[B, 3, 32, 32]' (a name is a symbolic dim; "
                                         "'B=4' sets the size traced with)"),
                                cl::sub(importTorchCommand), cl::cat(driverCategory()));
cl::opt<std::string> weightsOpt("weights", cl::value_desc("FILE.safetensors"),
                                cl::desc("Write the module's state_dict here, for `modelc run`"),
                                cl::sub(importTorchCommand), cl::cat(driverCategory()));
cl::opt<std::string> checkOpt("check", cl::value_desc("DEVICE"),
                              cl::desc("Check the import with the model on DEVICE: cuda:N "
                                       "(default cuda:0), cpu, D (every device), or none"),
                              cl::init("cuda:0"), cl::sub(importTorchCommand),
                              cl::cat(driverCategory()));
cl::opt<std::string> stdlibOpt("stdlib", cl::value_desc("DIR"),
                               cl::desc("Where `import std.*` is found"),
                               cl::sub(importTorchCommand), cl::cat(driverCategory()));
cl::opt<ColorChoice>
    colorOpt("color", cl::desc("When to colour diagnostics"),
             cl::values(clEnumValN(ColorChoice::Auto, "auto", "when stderr is a terminal"),
                        clEnumValN(ColorChoice::Always, "always", "always"),
                        clEnumValN(ColorChoice::Never, "never", "never")),
             cl::init(ColorChoice::Auto), cl::sub(importTorchCommand), cl::cat(driverCategory()));

/// The folder holding import_torch.py: $MODELC_TORCH_IMPORT, else the
/// installed copy next to this executable, else the source tree's.
std::string importerDir() {
  if (std::optional<std::string> fromEnv = llvm::sys::Process::GetEnv("MODELC_TORCH_IMPORT"))
    return *fromEnv;
  static int addressInThisBinary;
  std::string executable = llvm::sys::fs::getMainExecutable(nullptr, &addressInThisBinary);
  if (!executable.empty()) {
    llvm::SmallString<256> installed(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(executable)));
    llvm::sys::path::append(installed, "share", "modelc", "importers", "torch");
    if (llvm::sys::fs::exists(installed + "/import_torch.py"))
      return installed.str().str();
  }
  return MODELC_TORCH_IMPORT_DIR;
}

/// Where the importer finds its generated builtin_names.py when it is not
/// beside import_torch.py (an installed copy has it there): this build's.
constexpr llvm::StringLiteral generatedTablesDir = MODELC_TORCH_IMPORT_TABLES_DIR;

std::string pythonPath() {
  if (std::optional<std::string> fromEnv = llvm::sys::Process::GetEnv("MODELC_PYTHON"))
    if (!fromEnv->empty())
      return *fromEnv;
  return "/usr/bin/python3";
}

/// A temporary file removed when this goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  explicit TempFile(llvm::StringRef suffix) {
    if (llvm::sys::fs::createTemporaryFile("modelc-import", suffix, path))
      path.clear();
  }
  ~TempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

bool isValidCheckDevice(llvm::StringRef device) {
  if (device == "cpu" || device == "D" || device == "none")
    return true;
  unsigned index;
  return device.consume_front("cuda:") && !device.getAsInteger(10, index);
}

/// Runs the importer; returns its JSON result, or reports why there is none.
/// `stdlibDir` holds the std.nn the import is written against: the importer
/// maps a torch.nn layer and its options only to what that std.nn declares.
std::optional<llvm::json::Object> runImporter(llvm::StringRef file, llvm::StringRef className,
                                              llvm::StringRef stdlibDir, bool color) {
  std::string python = pythonPath();
  std::string script = importerDir() + "/import_torch.py";
  TempFile result(".json"), log(".log");
  if (result.path.empty() || log.path.empty()) {
    reportDriverError("cannot create a temporary file for the importer", color);
    return std::nullopt;
  }
  std::vector<std::string> args = {python,          script,         file.str(),
                                   className.str(), "--result",     result.path.str().str(),
                                   "--stdlib",      stdlibDir.str()};
  if (!argsOpt.empty())
    args.insert(args.end(), {"--args", argsOpt});
  for (const std::string &input : inputOpts)
    args.insert(args.end(), {"--input", input});
  if (!weightsOpt.empty())
    args.insert(args.end(), {"--weights", weightsOpt});
  if (checkOpt != "none")
    args.insert(args.end(), {"--check", checkOpt});
  if (llvm::sys::fs::exists(generatedTablesDir + "/builtin_names.py"))
    args.insert(args.end(), {"--generated", generatedTablesDir.str()});
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), log.path.str(),
                                                log.path.str()};
  std::string errorMessage;
  int status =
      llvm::sys::ExecuteAndWait(python, argRefs, std::nullopt, redirects, 0, 0, &errorMessage);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> json =
      llvm::MemoryBuffer::getFile(result.path);
  if (status == 0 && json && !(*json)->getBuffer().empty()) {
    llvm::Expected<llvm::json::Value> parsed = llvm::json::parse((*json)->getBuffer());
    if (parsed && parsed->getAsObject())
      return std::move(*parsed->getAsObject());
    if (!parsed)
      llvm::consumeError(parsed.takeError());
  }
  // No result: Python is missing, or the importer itself broke.
  std::string output;
  if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> logText =
          llvm::MemoryBuffer::getFile(log.path))
    output = (*logText)->getBuffer().trim().str();
  if (status < 0 || !llvm::sys::fs::can_execute(python))
    return llvm::json::Object{
        {"status", "error"},
        {"code", "E0700"},
        {"message",
         "cannot run Python `" + python + "`" + (errorMessage.empty() ? "" : ": " + errorMessage)},
        {"help", "install python3 and python3-torch (Debian), or point $MODELC_PYTHON at a "
                 "Python that has torch"}};
  reportDriverError("the PyTorch importer (" + script + ") failed with exit status " +
                        std::to_string(status) + (output.empty() ? "" : ":\n" + output),
                    color);
  return std::nullopt;
}

} // namespace

int runImportTorch() {
  bool color = shouldColorStderr(colorOpt);
  llvm::StringRef spec = sourceOpt;
  size_t colon = spec.rfind(':');
  if (colon == llvm::StringRef::npos || colon + 1 == spec.size() || colon == 0) {
    reportDriverError("expected FILE.py:Class, found '" + spec + "'", color);
    return ExitUsageOrIO;
  }
  llvm::StringRef file = spec.take_front(colon), className = spec.drop_front(colon + 1);
  if (!isValidCheckDevice(checkOpt)) {
    reportDriverError("--check takes cuda:N, cpu, D or none, found '" + checkOpt + "'", color);
    return ExitUsageOrIO;
  }
  if (!llvm::sys::fs::exists(file)) {
    reportDriverError("cannot read '" + file + "': No such file or directory", color);
    return ExitUsageOrIO;
  }

  CompileOptions options;
  options.disableFree = true;
  options.stdlibDir = stdlibDirFor(stdlibOpt);
  Compilation compilation(options);
  std::optional<llvm::json::Object> result =
      runImporter(file, className, compilation.stdlibDirectory(), color);
  if (!result)
    return ExitUsageOrIO;

  TorchSourceMap sourceMap(compilation.sourceMgr());

  if (result->getString("status") != "ok") {
    Diagnostic diag = sourceMap.importerError(*result);
    renderText(diag, compilation.sourceMgr(), llvm::errs(), TextRenderOptions{color});
    renderSummary(1, 0, llvm::errs(), color);
    return ExitErrorsFound;
  }

  std::string mdl = result->getString("mdl").value_or("").str();
  std::string outName = outputOpt.empty() ? (className + ".mdl").str() : outputOpt.getValue();
  if (outputOpt.empty()) {
    llvm::outs() << mdl;
  } else {
    std::error_code error;
    llvm::raw_fd_ostream out(outputOpt, error, llvm::sys::fs::OF_Text);
    if (error) {
      reportDriverError("cannot write '" + outputOpt + "': " + error.message(), color);
      return ExitUsageOrIO;
    }
    out << mdl;
  }
  if (checkOpt == "none")
    return ExitClean;

  std::string checked = result->getString("checked").value_or(mdl).str();
  unsigned mainBuffer = compilation.addBuffer(outName, checked);
  compilation.check();
  sourceMap.load(*result, mainBuffer, checkOpt);

  DiagnosticEngine &engine = compilation.diagnostics();
  engine.sortByLocation();
  TextRenderOptions renderOptions;
  renderOptions.color = color;
  for (const Diagnostic &diag : engine.diagnostics())
    renderText(sourceMap.toPython(diag), compilation.sourceMgr(), llvm::errs(), renderOptions);
  renderSummary(engine.errorCount(), engine.warningCount(), llvm::errs(), color);
  return engine.errorCount() ? ExitErrorsFound : ExitClean;
}

} // namespace modelc::driver
