//===- BuildCommand.cpp - `modelc build FILE [--model M] [-o OUT]` --------===//
//
// `modelc build net.mdl` compiles the file's model into net.mdlc beside it
// (docs/artifacts.md). With --emit=cuda|ptx|cubin it instead writes, for
// inspection, a model's device code: splits the entry fn by
// device (compiler/cudagen), writes the plan as JSON and each GPU's kernels
// as CUDA C++ (`--emit=cuda`), PTX or CUBIN (through NVRTC), and with
// `--report` prints each kernel's costs and a roofline estimate.
//
// Each `--emit` kind is one row of `emitters` below: a new output format is
// a new enum value and a function writing files from a BuildOutput.
//
//===----------------------------------------------------------------------===//

#include "BuildArtifact.h"
#include "Commands.h"
#include "ModelOptions.h"

#include "cudagen/Partition.h"
#include "cudagen/Report.h"
#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"
#include "runtime/cuda/CublasLt.h"
#include "runtime/cuda/CudaDriver.h"
#include "runtime/cuda/CudaError.h"
#include "runtime/cuda/Nvrtc.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace modelc::driver {

cl::SubCommand buildCommand("build",
                            "Compile a model ahead of time into a .mdlc artifact (or its device "
                            "plan and CUDA C++/PTX/CUBIN kernels)");

namespace {

enum class EmitKind { Cuda, Ptx, Cubin, Mdlc };

cl::opt<std::string> fileOpt(cl::Positional, cl::desc("FILE"), cl::sub(buildCommand),
                             cl::cat(driverCategory()));
cl::opt<std::string> modelOpt("model", cl::value_desc("NAME"),
                              cl::desc("The model to build (default: the file's one model whose "
                                       "arguments are all given or defaulted)"),
                              cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<std::string> argsOpt("args", cl::value_desc("NAME=VALUE,..."),
                             cl::desc("The model's value arguments, e.g. in=784,hidden=256"),
                             cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<std::string> deviceOpt("device", cl::value_desc("DEVICE"),
                               cl::desc("Device for every device parameter: cpu or cuda:N "
                                        "(default cuda:0)"),
                               cl::init("cuda:0"), cl::sub(buildCommand),
                               cl::cat(driverCategory()));
cl::opt<std::string> fnOpt("fn", cl::value_desc("NAME"), cl::desc("Entry fn (default forward)"),
                           cl::init("forward"), cl::sub(buildCommand), cl::cat(driverCategory()));
cl::list<std::string> importDirs("I", cl::Prefix, cl::value_desc("DIR"),
                                 cl::desc("Search DIR for imported modules"), cl::sub(buildCommand),
                                 cl::cat(driverCategory()));
cl::opt<std::string> stdlibOpt("stdlib", cl::value_desc("DIR"),
                               cl::desc("Where `import std.*` is found"), cl::sub(buildCommand),
                               cl::cat(driverCategory()));
cl::opt<ColorChoice>
    colorOpt("color", cl::desc("When to colour diagnostics"),
             cl::values(clEnumValN(ColorChoice::Auto, "auto", "when stderr is a terminal"),
                        clEnumValN(ColorChoice::Always, "always", "always"),
                        clEnumValN(ColorChoice::Never, "never", "never")),
             cl::init(ColorChoice::Auto), cl::sub(buildCommand), cl::cat(driverCategory()));

cl::opt<EmitKind> emitOpt(
    "emit", cl::desc("What to write for each GPU"),
    cl::values(clEnumValN(EmitKind::Cuda, "cuda", "CUDA C++ source (default)"),
               clEnumValN(EmitKind::Ptx, "ptx", "PTX through NVRTC"),
               clEnumValN(EmitKind::Cubin, "cubin", "CUBIN through NVRTC"),
               clEnumValN(EmitKind::Mdlc, "mdlc",
                          "One .mdlc artifact for this cpu and the GPUs (default when -o ends in "
                          ".mdlc; docs/artifacts.md)")),
    cl::init(EmitKind::Cuda), cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<std::string> outputOpt("o", cl::value_desc("FILE.mdlc | DIR"),
                               cl::desc("The artifact (default: FILE with the extension .mdlc, "
                                        "beside it), or for --emit=cuda|ptx|cubin the output "
                                        "directory (created if missing)"),
                               cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<std::string> weightsOpt("weights", cl::value_desc("FILE.safetensors"),
                                cl::desc("--emit=mdlc: build these weights into the artifact"),
                                cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<std::string> gpuArchOpt("gpu-arch", cl::value_desc("sm_XY"),
                                cl::desc("GPU architecture for ptx/cubin and the report (default: "
                                         "the GPU found, else sm_90)"),
                                cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<bool> tf32Opt("tf32",
                      cl::desc("f32 matmuls and convolutions on cuda:N use TF32 tensor cores "
                               "(inputs rounded to a 10-bit mantissa; default: exact f32)"),
                      cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<bool> reportOpt("report",
                        cl::desc("Print each kernel's FLOPs, bytes, registers and a roofline "
                                 "time estimate"),
                        cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<unsigned> reportBatchOpt("report-batch", cl::value_desc("N"),
                                 cl::desc("Value of every symbolic dim in the report (default 1)"),
                                 cl::init(1), cl::sub(buildCommand), cl::cat(driverCategory()));
cl::opt<std::string> gpuPeaksOpt("gpu-peaks", cl::value_desc("FILE"),
                                 cl::desc("Reference GPU peaks for the report (JSON; default "
                                          "H100 SXM)"),
                                 cl::sub(buildCommand), cl::cat(driverCategory()));

/// Everything an emitter may write from.
struct BuildOutput {
  const cudagen::DevicePlan &plan;
  llvm::StringRef directory;
  std::string arch;
};

llvm::Error writeFile(llvm::StringRef directory, llvm::StringRef name, llvm::StringRef bytes) {
  llvm::SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot write %s: %s", path.c_str(), ec.message().c_str());
  os << bytes;
  return llvm::Error::success();
}

/// `cuda0.cu`, `cuda0.ptx`...
std::string deviceFileName(int device, llvm::StringRef extension) {
  return llvm::formatv("cuda{0}.{1}", device, extension).str();
}

llvm::Error emitCuda(const BuildOutput &out) {
  for (const cudagen::DeviceCode &code : out.plan.devices)
    if (llvm::Error err = writeFile(out.directory, deviceFileName(code.device, "cu"), code.source))
      return err;
  return llvm::Error::success();
}

llvm::Error emitThroughNvrtc(const BuildOutput &out, cuda::NvrtcOutput kind) {
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    return nvrtc.takeError();
  for (const cudagen::DeviceCode &code : out.plan.devices) {
    std::string name = deviceFileName(code.device, "cu");
    cuda::NvrtcRequest request;
    request.source = code.source;
    request.name = name;
    request.arch = out.arch;
    request.output = kind;
    llvm::Expected<std::string> binary = nvrtc->compile(request);
    if (!binary)
      return binary.takeError();
    llvm::StringRef extension = kind == cuda::NvrtcOutput::PTX ? "ptx" : "cubin";
    if (llvm::Error err = writeFile(out.directory, deviceFileName(code.device, extension), *binary))
      return err;
  }
  return llvm::Error::success();
}

llvm::Error emitPtx(const BuildOutput &out) {
  return emitThroughNvrtc(out, cuda::NvrtcOutput::PTX);
}
llvm::Error emitCubin(const BuildOutput &out) {
  return emitThroughNvrtc(out, cuda::NvrtcOutput::CUBIN);
}

struct Emitter {
  EmitKind kind;
  llvm::Error (*write)(const BuildOutput &);
};
const Emitter emitters[] = {
    {EmitKind::Cuda, emitCuda},
    {EmitKind::Ptx, emitPtx},
    {EmitKind::Cubin, emitCubin},
};

/// The GPU this machine has, else sm_90.
std::string defaultArch(int device) {
  llvm::Expected<cuda::CudaDriver &> driver = cuda::CudaDriver::forDevice(device);
  if (!driver) {
    llvm::consumeError(driver.takeError());
    return "sm_90";
  }
  llvm::Expected<cuda::CudaDeviceInfo> info = driver->deviceInfo(device);
  if (!info) {
    llvm::consumeError(info.takeError());
    return "sm_90";
  }
  return info->arch();
}

/// Registers and shared memory per kernel from NVRTC's PTX and `ptxas -v`;
/// sets `missing` to why they are absent.
std::map<int, llvm::StringMap<cudagen::KernelResources>>
kernelResources(const cudagen::DevicePlan &plan, llvm::StringRef arch, std::string &missing) {
  std::map<int, llvm::StringMap<cudagen::KernelResources>> result;
  std::string ptxas = cudagen::findPtxas();
  if (ptxas.empty()) {
    missing = "n/a (no ptxas)";
    return result;
  }
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc) {
    llvm::consumeError(nvrtc.takeError());
    missing = "n/a (no NVRTC)";
    return result;
  }
  for (const cudagen::DeviceCode &code : plan.devices) {
    cuda::NvrtcRequest request;
    request.source = code.source;
    request.name = "report.cu";
    request.arch = arch;
    llvm::Expected<std::string> ptx = nvrtc->compile(request);
    if (!ptx) {
      missing = "n/a (" + llvm::toString(ptx.takeError()) + ")";
      continue;
    }
    llvm::Expected<std::string> log = cudagen::runPtxas(ptxas, *ptx, arch);
    if (!log) {
      missing = "n/a (ptxas failed: " + llvm::toString(log.takeError()) + ")";
      continue;
    }
    result[code.device] = cudagen::parsePtxasVerbose(*log);
  }
  return result;
}

int fail(llvm::Error err, int code) {
  reportDriverError(llvm::toString(std::move(err)), shouldColorStderr(colorOpt));
  return code;
}

} // namespace

int runBuild() {
  if (fileOpt.empty())
    return reportMissingFile("build", "FILE.mdl [--model NAME] [-o NET.mdlc]",
                             shouldColorStderr(colorOpt));
  // `modelc build net.mdl` writes net.mdlc beside it.
  bool emitGiven = emitOpt.getNumOccurrences();
  if (outputOpt.empty() && !reportOpt && (!emitGiven || emitOpt == EmitKind::Mdlc)) {
    llvm::SmallString<256> beside(fileOpt.getValue());
    llvm::sys::path::replace_extension(beside, "mdlc");
    outputOpt = beside.str().str();
  }
  if (outputOpt.empty() && !reportOpt) {
    reportDriverError("`modelc build --emit=cuda|ptx|cubin` needs an output directory (-o DIR) "
                      "or --report",
                      shouldColorStderr(colorOpt));
    return ExitUsageOrIO;
  }
  bool artifact =
      emitGiven ? emitOpt == EmitKind::Mdlc : llvm::StringRef(outputOpt).ends_with(".mdlc");
  // An artifact is compiled for this machine's cpu unless --device says otherwise.
  if (artifact && !deviceOpt.getNumOccurrences())
    deviceOpt = "cpu";
  ModelOptions options{fileOpt, modelOpt,   argsOpt,   deviceOpt,
                       fnOpt,   importDirs, stdlibOpt, colorOpt};
  int exitCode = ExitClean;
  std::optional<LoadedModel> loaded = loadModel(options, /*needModel=*/true, exitCode);
  if (!loaded)
    return exitCode;
  if (artifact) {
    runtime::Device device = llvm::cantFail(runtime::parseDevice("cpu"));
    if (llvm::Expected<runtime::Device> given = runtime::parseDevice(deviceOpt))
      device = *given;
    else
      llvm::consumeError(given.takeError());
    return writeArtifact(
        *loaded, {fnOpt, argsOpt, deviceOpt, weightsOpt, outputOpt, shouldColorStderr(colorOpt),
                  gpuArchOpt.empty() ? defaultArch(device.isCPU() ? 0 : device.index)
                                     : gpuArchOpt.getValue(),
                  tf32Opt});
  }
  Compilation &compilation = *loaded->compilation;
  const mlirgen::ConcreteModel &model = *loaded->model;

  mlir::DialectRegistry registry;
  jit::registerJitDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlirgen::buildModule(context, *compilation.program(), compilation.sourceMgr(), model, fnOpt,
                           compilation.diagnostics());
  if (!module) {
    printDiagnostics(compilation.diagnostics(), compilation.sourceMgr(),
                     shouldColorStderr(colorOpt));
    return ExitErrorsFound;
  }

  cudagen::PlanOptions planOptions;
  planOptions.entry = fnOpt;
  planOptions.tf32 = tf32Opt;
  for (const sema::InstantiatedState &s : model.concrete.state)
    planOptions.stateNames.push_back(s.name);
  if (const sema::FnInfo *fn = model.findFn(fnOpt))
    for (const sema::FnParamInfo &p : fn->params) {
      std::vector<std::string> names;
      for (sema::Dim d : p.type.shape.dims) {
        std::optional<sema::AtomId> atom = d.asAtom();
        names.push_back(atom ? sema::atomName(*atom).str() : "");
      }
      planOptions.inputDimNames.push_back(std::move(names));
    }
  llvm::Expected<cudagen::DevicePlan> plan = cudagen::buildDevicePlan(*module, planOptions);
  if (!plan)
    return fail(plan.takeError(), ExitErrorsFound);

  int firstGpu = plan->devices.empty() ? 0 : plan->devices.front().device;
  std::string arch = gpuArchOpt.empty() ? defaultArch(firstGpu) : gpuArchOpt.getValue();

  if (!outputOpt.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputOpt))
      return fail(llvm::createStringError(ec, "cannot create %s: %s", outputOpt.c_str(),
                                          ec.message().c_str()),
                  ExitUsageOrIO);
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::formatv("{0:2}", cudagen::toJSON(*plan)) << "\n";
    if (llvm::Error err = writeFile(outputOpt, "plan.json", json))
      return fail(std::move(err), ExitUsageOrIO);
    if (!plan->cpuModule.empty())
      if (llvm::Error err = writeFile(outputOpt, "cpu.mlir", plan->cpuModule))
        return fail(std::move(err), ExitUsageOrIO);
    BuildOutput out{*plan, outputOpt, arch};
    for (const Emitter &e : emitters)
      if (e.kind == emitOpt)
        if (llvm::Error err = e.write(out))
          return fail(std::move(err), ExitUsageOrIO);
  }

  if (reportOpt) {
    cudagen::ReportOptions report;
    if (!gpuPeaksOpt.empty()) {
      llvm::Expected<cudagen::GpuPeaks> peaks = cudagen::loadGpuPeaks(gpuPeaksOpt);
      if (!peaks)
        return fail(peaks.takeError(), ExitUsageOrIO);
      report.peaks = *peaks;
    } else {
      report.peaks = cudagen::defaultGpuPeaks();
    }
    for (const cudagen::Symbol &s : plan->symbols)
      report.symbols[s.name] = int64_t(reportBatchOpt);
    report.resources = kernelResources(*plan, arch, report.resourcesMissing);
    if (!report.resources.empty())
      report.resourcesArch = arch;
    if (!plan->gemms.empty()) {
      llvm::Expected<cuda::CublasLt &> lt = cuda::CublasLt::get();
      if (lt) {
        report.gemmLibrary = "cuBLASLt " + lt->versionString() + " (" + lt->path() + ")";
      } else {
        cuda::consumeCudaErrorKind(lt.takeError(), &report.gemmLibrary);
        report.gemmLibrary += "; the own kernels run";
      }
    }
    llvm::Expected<std::string> text = cudagen::formatReport(*plan, report);
    if (!text)
      return fail(text.takeError(), ExitErrorsFound);
    llvm::outs() << *text;
  }
  return ExitClean;
}

} // namespace modelc::driver
