//===- ArtifactWriter.cpp - Compile a model instance into a .mdlc ---------===//

#include "aot/ArtifactWriter.h"

#include "aot/ArtifactFormat.h"
#include "exec/CudaModel.h"
#include "exec/Executor.h"
#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"
#include "runtime/cuda/Nvrtc.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace modelc;
using namespace modelc::aot;

namespace {

llvm::Error buildError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<SymbolicDim> symbolicDim(sema::Dim dim) {
  SymbolicDim out;
  for (const sema::Term &term : dim.terms()) {
    DimTerm t{term.coeff, {}};
    for (sema::AtomId atom : term.atoms) {
      llvm::StringRef name = sema::atomName(atom);
      // Opaque quotients (`(H - 1)/2`) have no value the loader can compute.
      if (name.empty() || !llvm::all_of(name, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
        return buildError("dim `" + dim.str() +
                          "` of an entry signature cannot be stored in an "
                          "artifact yet");
      t.symbols.push_back(name.str());
    }
    out.terms.push_back(std::move(t));
  }
  return out;
}

llvm::Expected<TensorSpec> tensorSpec(const sema::Type &type, llvm::StringRef name) {
  if (!type.isTensor() || type.shape.hasPack())
    return buildError("`" + name + "` (" + type.str() +
                      ") is not a tensor an artifact's signature can hold");
  TensorSpec spec;
  spec.name = name.str();
  spec.dtype = *runtime::dtypeFromName(ast::dtypeName(type.dtype.instantiated()));
  llvm::Expected<runtime::Device> device = runtime::parseDevice(type.dev.str());
  if (!device)
    return device.takeError();
  spec.device = *device;
  spec.declared = type.str();
  for (sema::Dim d : type.shape.dims) {
    llvm::Expected<SymbolicDim> dim = symbolicDim(d);
    if (!dim)
      return dim.takeError();
    spec.shape.push_back(std::move(*dim));
  }
  return spec;
}

/// The entry fn's signature; its packed C entry point is what
/// mlir::ExecutionEngine generates for `_mlir_ciface_<fn>`.
llvm::Expected<EntryFn> entrySignature(const sema::FnInfo &fn) {
  EntryFn entry;
  entry.name = fn.name;
  entry.symbol = "_mlir__mlir_ciface_" + fn.name;
  llvm::StringSet<> symbols;
  for (const sema::FnParamInfo &p : fn.params) {
    llvm::Expected<TensorSpec> spec = tensorSpec(p.type, p.name);
    if (!spec)
      return spec.takeError();
    // A symbol an input dim gives, alone or in a term of its own (`4 * H`,
    // solved from the extent when the artifact runs).
    for (const SymbolicDim &d : spec->shape)
      for (const DimTerm &t : d.terms)
        if (t.symbols.size() == 1)
          symbols.insert(t.symbols.front());
    entry.params.push_back(std::move(*spec));
  }
  std::vector<sema::Type> results = fn.result.kind() == sema::Type::Kind::Tuple
                                        ? *fn.result.elements
                                        : std::vector<sema::Type>{fn.result};
  for (const sema::Type &type : results) {
    llvm::Expected<TensorSpec> result = tensorSpec(type, "");
    if (!result)
      return result.takeError();
    // The loader sizes each result from the inputs: each symbol must be bound.
    for (const SymbolicDim &d : result->shape)
      for (const DimTerm &t : d.terms)
        for (const std::string &s : t.symbols)
          if (!symbols.contains(s))
            return buildError("the result dim `" + d.str() + "` of `" + fn.name +
                              "` is not determined by its inputs");
    entry.results.push_back(std::move(*result));
  }
  return entry;
}

/// The symbols `object` leaves undefined; refuses code that needs
/// initialisers run (the loader only links).
llvm::Expected<std::vector<std::string>> undefinedSymbols(const llvm::MemoryBuffer &object) {
  auto file = llvm::object::ObjectFile::createObjectFile(object.getMemBufferRef());
  if (!file)
    return file.takeError();
  for (const llvm::object::SectionRef &section : (*file)->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (name && (name->starts_with(".init_array") || name->starts_with(".ctors") ||
                 name->starts_with(".preinit_array")))
      return buildError("the compiled code has static initialisers (" + *name +
                        "), which artifacts cannot hold");
    if (!name)
      llvm::consumeError(name.takeError());
  }
  std::vector<std::string> symbols;
  for (const llvm::object::SymbolRef &symbol : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!flags || !name)
      return llvm::joinErrors(flags.takeError(), name.takeError());
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty())
      symbols.push_back(name->str());
  }
  llvm::sort(symbols);
  return symbols;
}

/// The object code of `module` compiled by the JIT, with the symbols it
/// leaves undefined; `entry` is one of its entry fns (looking it up compiles).
struct CompiledObject {
  std::unique_ptr<llvm::MemoryBuffer> object;
  std::vector<std::string> undefined;
};

llvm::Expected<CompiledObject> objectCodeOf(std::unique_ptr<jit::JitModule> compiled,
                                            llvm::StringRef entry) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = compiled->objectCode(entry);
  if (!object)
    return object.takeError();
  llvm::Expected<std::vector<std::string>> undefined = undefinedSymbols(**object);
  if (!undefined)
    return undefined.takeError();
  return CompiledObject{std::move(*object), std::move(*undefined)};
}

/// What a cuda artifact holds besides the common sections; owns the bytes
/// the Artifact's views point into.
struct CudaParts {
  std::string planJson;
  std::vector<std::string> ptx, cubin, source;
  std::optional<CompiledObject> cpu;
};

/// Plans fn `fnName` for its devices and compiles every part of the plan:
/// the kernels through NVRTC, the cpu regions through the JIT.
llvm::Expected<std::optional<CudaParts>>
buildCudaParts(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
               const mlirgen::ConcreteModel &model, const ArtifactBuildOptions &options,
               Artifact &artifact, DiagnosticEngine &diags) {
  llvm::Expected<std::optional<cudagen::DevicePlan>> planned =
      exec::planModel(program, sourceMgr, model, options.fnName, diags, {}, options.tf32);
  if (!planned)
    return planned.takeError();
  if (!*planned)
    return std::nullopt;
  cudagen::DevicePlan plan = std::move(**planned);
  if (!llvm::StringRef(options.gpuArch).starts_with("sm_"))
    return buildError("--gpu-arch must name a real architecture (sm_80, sm_90...), not '" +
                      options.gpuArch + "'");
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    return buildError("an artifact for a GPU holds PTX and CUBIN, which need NVRTC: " +
                      llvm::toString(nvrtc.takeError()));

  CudaParts parts;
  std::string ptxArch = "compute_" + options.gpuArch.substr(3);
  for (cudagen::DeviceCode &code : plan.devices) {
    std::string name = "cuda" + std::to_string(code.device) + ".cu";
    cuda::NvrtcRequest request;
    request.source = code.source;
    request.name = name;
    request.arch = options.gpuArch;
    request.output = cuda::NvrtcOutput::PTX;
    llvm::Expected<cuda::KernelCache::Payload> ptx =
        nvrtc->compileCached(request, cuda::KernelCache::global());
    if (!ptx)
      return ptx.takeError();
    request.output = cuda::NvrtcOutput::CUBIN;
    llvm::Expected<cuda::KernelCache::Payload> cubin =
        nvrtc->compileCached(request, cuda::KernelCache::global());
    if (!cubin)
      return cubin.takeError();
    parts.ptx.push_back(**ptx);
    parts.cubin.push_back(**cubin);
    // The source is its own section; the plan's JSON keeps the rest.
    parts.source.push_back(std::move(code.source));
    code.source.clear();
  }
  for (size_t i = 0; i < plan.devices.size(); ++i)
    artifact.gpus.push_back({plan.devices[i].device, options.gpuArch, parts.cubin[i], ptxArch,
                             parts.ptx[i], parts.source[i]});

  if (!plan.cpuModule.empty()) {
    std::string firstRegion;
    for (const cudagen::Step &step : plan.steps)
      if (const auto *call = std::get_if<cudagen::CpuCall>(&step); call && firstRegion.empty())
        firstRegion = call->function;
    jit::JitOptions jitOptions;
    jitOptions.useBlas = options.useBlas;
    jitOptions.keepObjectCode = true;
    llvm::Expected<std::unique_ptr<jit::JitModule>> compiled =
        jit::JitModule::compileSource(plan.cpuModule, jitOptions);
    if (!compiled)
      return compiled.takeError();
    llvm::Expected<CompiledObject> object = objectCodeOf(std::move(*compiled), firstRegion);
    if (!object)
      return object.takeError();
    parts.cpu = std::move(*object);
    artifact.object = parts.cpu->object->getBuffer();
    artifact.runtimeSymbols = parts.cpu->undefined;
  }
  llvm::raw_string_ostream os(parts.planJson);
  os << cudagen::toJSON(plan);
  return std::optional<CudaParts>(std::move(parts));
}

} // namespace

llvm::Expected<std::optional<std::string>> aot::buildArtifact(const sema::CheckedProgram &program,
                                                              const llvm::SourceMgr &sourceMgr,
                                                              const mlirgen::ConcreteModel &model,
                                                              const ArtifactBuildOptions &options,
                                                              DiagnosticEngine &diags) {
  Artifact artifact;
  artifact.writerVersion = modelcVersion().str();
  artifact.target = TargetInfo::host();
  artifact.modelName = model.model().name;
  artifact.modelArgs = options.modelArgs;
  artifact.modelDevice = options.modelDevice;

  std::optional<std::vector<runtime::StateEntry>> state = exec::declaredState(model);
  std::optional<runtime::LoadedWeights> weights;
  if (options.weights) {
    // Reports E0607, or E0601 for state whose shape is not concrete.
    weights = exec::bindModelWeights(model, *options.weights, diags);
    if (!weights)
      return std::nullopt;
  }
  if (!state) {
    diags.report(DiagId::UnsupportedOnCpu,
                 model.model().decl ? model.model().decl->name.range : Range{},
                 "state whose shape is not concrete");
    return std::nullopt;
  }
  artifact.state = std::move(*state);

  const sema::FnInfo *fn = model.findFn(options.fnName);
  if (!fn) {
    diags.report(DiagId::NoEntryFunction,
                 model.model().decl ? model.model().decl->name.range : Range{}, model.model().name,
                 options.fnName);
    return std::nullopt;
  }

  llvm::Expected<EntryFn> entry = entrySignature(*fn);
  if (!entry)
    return entry.takeError();
  artifact.fns.push_back(std::move(*entry));

  // A model placed on GPUs: the device plan and its compiled parts.
  std::optional<CudaParts> cudaParts;
  std::optional<CompiledObject> cpuObject;
  if (exec::placedOnCuda(model, options.fnName)) {
    artifact.fns.back().symbol.clear(); // the plan is the entry point
    llvm::Expected<std::optional<CudaParts>> parts =
        buildCudaParts(program, sourceMgr, model, options, artifact, diags);
    if (!parts)
      return parts.takeError();
    if (!*parts)
      return std::nullopt;
    cudaParts = std::move(**parts);
    artifact.devicePlan = cudaParts->planJson;
  } else {
    mlir::DialectRegistry registry;
    jit::registerJitDialects(registry);
    mlir::MLIRContext context(registry);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlirgen::buildModule(context, program, sourceMgr, model, options.fnName, diags);
    if (!module)
      return std::nullopt;
    jit::JitOptions jitOptions;
    jitOptions.useBlas = options.useBlas;
    jitOptions.keepObjectCode = true;
    llvm::Expected<std::unique_ptr<jit::JitModule>> compiled =
        jit::JitModule::compile(*module, jitOptions);
    if (!compiled)
      return compiled.takeError();
    llvm::Expected<CompiledObject> object = objectCodeOf(std::move(*compiled), options.fnName);
    if (!object)
      return object.takeError();
    cpuObject = std::move(*object);
    artifact.runtimeSymbols = cpuObject->undefined;
    artifact.object = cpuObject->object->getBuffer();
  }

  std::string weightBytes;
  if (weights) {
    std::vector<runtime::NamedTensor> tensors;
    for (const runtime::BoundState &b : weights->bindings())
      tensors.push_back({b.declared.name, b.tensor});
    llvm::Expected<std::string> bytes = runtime::serializeSafeTensors(tensors);
    if (!bytes)
      return bytes.takeError();
    weightBytes = std::move(*bytes);
    artifact.weights = weightBytes;
  }
  return std::optional<std::string>(serializeArtifact(artifact));
}
