//===- ArtifactLoader.cpp - Load a .mdlc artifact and call it -------------===//

#include "aot/ArtifactLoader.h"

#include "aot/RuntimeSymbols.h"

#include "cudaexec/PlanExecutor.h"
#include "jit/ParallelRuntime.h"

#include "runtime/InputCheck.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/SelfExecutorProcessControl.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

using namespace modelc;
using namespace modelc::aot;
namespace orc = llvm::orc;

char InputMismatchError::ID = 0;

void InputMismatchError::log(llvm::raw_ostream &os) const {
  os << "error[" << code << "]: " << message;
  for (const std::string &note : notes)
    os << "\n  note: " << note;
}

std::error_code InputMismatchError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

/// The linked code: an ExecutionSession of its own, so artifacts never see
/// each other's symbols, and the packed entry points by name (the entry fns
/// of a cpu artifact, the cpu regions of a cuda artifact's plan).
struct LoadedArtifact::Linked {
  std::unique_ptr<orc::ExecutionSession> session;
  std::unique_ptr<orc::ObjectLinkingLayer> linker;
  llvm::StringMap<void (*)(void **)> entries;

  /// Calls entry `name` with one pointer per argument descriptor.
  void call(llvm::StringRef name, llvm::ArrayRef<void *> descriptors) const {
    llvm::SmallVector<void *> arguments(descriptors.begin(), descriptors.end());
    llvm::SmallVector<void *> packed;
    for (void *&argument : arguments)
      packed.push_back(&argument);
    entries.lookup(name)(packed.data());
  }

  ~Linked() {
    // Frees the linked memory; the layer and session can then go.
    if (session)
      llvm::consumeError(session->endSession());
  }
};

namespace {

llvm::Error loadError(ArtifactErrorKind kind, llvm::StringRef name, const llvm::Twine &what) {
  return llvm::make_error<ArtifactError>(kind, (name + ": " + what).str());
}

/// Refuses code built for another architecture, OS or object format, or
/// using CPU features this machine lacks.
llvm::Error checkHost(const Artifact &artifact, llvm::StringRef name) {
  TargetInfo host = TargetInfo::host();
  llvm::Triple built(artifact.target.triple), here(host.triple);
  if (built.getArch() != here.getArch() || built.getOS() != here.getOS() ||
      built.getObjectFormat() != here.getObjectFormat())
    return loadError(ArtifactErrorKind::WrongHost, name,
                     "compiled for " + artifact.target.triple + " (cpu " + artifact.target.cpu +
                         "), but this machine is " + host.triple + " (cpu " + host.cpu +
                         "); rebuild it here with `modelc build`");
  llvm::DenseSet<llvm::StringRef> available(host.features.begin(), host.features.end());
  std::vector<std::string> missing;
  for (const std::string &feature : artifact.target.features)
    if (!available.contains(feature))
      missing.push_back(feature);
  if (!missing.empty())
    return loadError(ArtifactErrorKind::WrongHost, name,
                     "compiled for cpu " + artifact.target.cpu +
                         " with CPU features this machine (cpu " + host.cpu + ") lacks: " +
                         llvm::join(missing, ", ") + "; rebuild it here with `modelc build`");
  return llvm::Error::success();
}

/// A StridedMemRefType<T, N> descriptor for any rank: base and aligned
/// pointers, offset, sizes, strides (all 64-bit).
struct Descriptor {
  llvm::SmallVector<int64_t, 11> words;
  Descriptor(const void *data, llvm::ArrayRef<int64_t> shape) {
    words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
    words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
    words.push_back(0);
    words.append(shape.begin(), shape.end());
    runtime::Shape strides = runtime::rowMajorStrides(shape);
    words.append(strides.begin(), strides.end());
  }
};

llvm::Error mismatch(llvm::StringRef code, const llvm::Twine &message,
                     std::vector<std::string> notes) {
  return llvm::make_error<InputMismatchError>(code.str(), message.str(), std::move(notes));
}

} // namespace

LoadedArtifact::LoadedArtifact() = default;
LoadedArtifact::~LoadedArtifact() = default;

/// Links `artifact`'s object in a session of its own and looks up each of
/// `entries` (name -> symbol).
llvm::Expected<std::unique_ptr<LoadedArtifact::Linked>>
LoadedArtifact::linkObject(const Artifact &artifact, llvm::StringRef name,
                           const llvm::StringMap<std::string> &entries) {
  auto control = orc::SelfExecutorProcessControl::Create();
  if (!control)
    return control.takeError();
  auto linked = std::make_unique<Linked>();
  linked->session = std::make_unique<orc::ExecutionSession>(std::move(*control));
  orc::ExecutionSession &session = *linked->session;
  // Failures surface through lookup() below; don't print them as well.
  session.setErrorReporter([](llvm::Error err) { llvm::consumeError(std::move(err)); });
  linked->linker = std::make_unique<orc::ObjectLinkingLayer>(session);
  orc::JITDylib &library = session.createBareJITDylib("artifact");

  char globalPrefix = llvm::Triple(artifact.target.triple).isOSBinFormatMachO() ? '_' : '\0';
  auto prefixed = [&](llvm::StringRef symbol) {
    return globalPrefix ? session.intern((llvm::Twine(globalPrefix) + symbol).str())
                        : session.intern(symbol);
  };
  orc::SymbolMap runtimeSymbols;
  for (const RuntimeSymbol &symbol : aotRuntimeSymbols())
    runtimeSymbols[prefixed(symbol.name)] = {orc::ExecutorAddr::fromPtr(symbol.address),
                                             llvm::JITSymbolFlags::Exported};
  // Parallel loops: LLVM's OpenMP ABI on the process's OpenMP (jit/ParallelRuntime.h).
  for (const jit::OpenMpSymbol &symbol : jit::openMpRuntimeSymbols())
    runtimeSymbols[prefixed(symbol.name)] = {orc::ExecutorAddr::fromPtr(symbol.address),
                                             llvm::JITSymbolFlags::Exported};
  if (llvm::Error err = library.define(orc::absoluteSymbols(std::move(runtimeSymbols))))
    return err;
  // libc and libm (malloc, free, expf, ...) come from the process.
  auto process = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(globalPrefix);
  if (!process)
    return process.takeError();
  library.addGenerator(std::move(*process));

  if (llvm::Error err = linked->linker->add(
          library, llvm::MemoryBuffer::getMemBuffer(artifact.object, name, false)))
    return loadError(ArtifactErrorKind::Link, name,
                     "cannot link the object code: " + llvm::toString(std::move(err)));
  for (const auto &entry : entries) {
    llvm::Expected<orc::ExecutorSymbolDef> address =
        session.lookup({&library}, prefixed(entry.getValue()));
    if (!address)
      return loadError(ArtifactErrorKind::Link, name,
                       "cannot link the object code: " + llvm::toString(address.takeError()));
    linked->entries[entry.getKey()] = address->getAddress().toPtr<void (*)(void **)>();
  }
  return linked;
}

llvm::StringRef LoadedArtifact::name() const { return file_->getBufferIdentifier(); }

llvm::Expected<std::unique_ptr<LoadedArtifact>> LoadedArtifact::load(llvm::StringRef path,
                                                                     const LoadOptions &options) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return llvm::createStringError(file.getError(),
                                   "cannot read '" + path + "': " + file.getError().message());
  return load(std::move(*file), options);
}

llvm::Expected<std::unique_ptr<LoadedArtifact>>
LoadedArtifact::load(std::unique_ptr<llvm::MemoryBuffer> buffer, const LoadOptions &options) {
  std::unique_ptr<LoadedArtifact> loaded(new LoadedArtifact());
  loaded->file_ = std::move(buffer);
  llvm::StringRef name = loaded->name();
  llvm::Expected<Artifact> contents = parseArtifact(loaded->file_->getBuffer(), name);
  if (!contents)
    return contents.takeError();
  loaded->contents_ = std::move(*contents);
  const Artifact &artifact = loaded->contents_;
  if (artifact.isCuda()) {
    if (llvm::Error err = loaded->loadPlan(options))
      return err;
    return loaded;
  }
  if (llvm::Error err = checkHost(artifact, name))
    return err;
  llvm::StringMap<std::string> entries;
  for (const EntryFn &fn : artifact.fns)
    entries[fn.name] = fn.symbol;
  llvm::Expected<std::unique_ptr<Linked>> linked = linkObject(artifact, name, entries);
  if (!linked)
    return linked.takeError();
  loaded->linked_ = std::move(*linked);
  return loaded;
}

llvm::Expected<runtime::LoadedWeights>
LoadedArtifact::bindWeights(const runtime::SafeTensorsFile &file) const {
  return runtime::bindWeights(contents_.state, file);
}

namespace {

/// A view of part of the artifact that keeps the whole mapping alive, so
/// tensors over embedded weights may outlive the LoadedArtifact.
class SharedSlice : public llvm::MemoryBuffer {
public:
  SharedSlice(std::shared_ptr<llvm::MemoryBuffer> owner, llvm::StringRef bytes, std::string name)
      : owner(std::move(owner)), identifier(std::move(name)) {
    init(bytes.begin(), bytes.end(), /*RequiresNullTerminator=*/false);
  }
  llvm::StringRef getBufferIdentifier() const override { return identifier; }
  BufferKind getBufferKind() const override { return owner->getBufferKind(); }

private:
  std::shared_ptr<llvm::MemoryBuffer> owner;
  std::string identifier;
};

/// The symbols `dim` is written over, each once.
std::vector<std::string> symbolsOf(const SymbolicDim &dim) {
  std::vector<std::string> symbols;
  for (const DimTerm &term : dim.terms)
    for (const std::string &symbol : term.symbols)
      if (llvm::find(symbols, symbol) == symbols.end())
        symbols.push_back(symbol);
  return symbols;
}

} // namespace

llvm::Expected<runtime::LoadedWeights> LoadedArtifact::embeddedWeights() const {
  if (!contents_.weights)
    return loadError(ArtifactErrorKind::Unsupported, name(),
                     "holds no weights (build it with `modelc build --weights FILE`)");
  llvm::Expected<runtime::SafeTensorsFile> file = runtime::SafeTensorsFile::fromBuffer(
      std::make_unique<SharedSlice>(file_, *contents_.weights, name().str() + "(weights)"));
  if (!file)
    return file.takeError();
  return bindWeights(*file);
}

llvm::Expected<std::vector<runtime::Shape>>
LoadedArtifact::checkInputs(llvm::StringRef fnName, llvm::ArrayRef<runtime::Tensor> inputs,
                            llvm::ArrayRef<std::string> labels) const {
  const EntryFn *fn = findFn(fnName);
  if (!fn) {
    std::vector<std::string> names;
    for (const EntryFn &f : contents_.fns)
      names.push_back("`" + f.name + "`");
    return loadError(ArtifactErrorKind::Unsupported, name(),
                     "has no entry fn `" + fnName + "` (it has " + llvm::join(names, ", ") + ")");
  }
  auto label = [&](size_t i) {
    return i < labels.size() ? labels[i] : "input " + std::to_string(i + 1);
  };
  auto declared = [&](size_t i) {
    return "`" + fn->params[i].name + "` is declared " + fn->params[i].declared + " (in " +
           name().str() + ")";
  };
  std::vector<runtime::DeclaredInput> wants;
  for (const TensorSpec &param : fn->params) {
    runtime::DeclaredInput want;
    want.dtype = param.dtype;
    want.device = param.device;
    for (const SymbolicDim &dim : param.shape) {
      if (std::optional<int64_t> k = dim.asConstant())
        want.shape.push_back(runtime::DeclaredDim::ofConstant(*k));
      else if (std::optional<llvm::StringRef> symbol = dim.asSymbol())
        want.shape.push_back(runtime::DeclaredDim::ofSymbol(*symbol));
      else
        want.shape.push_back(runtime::DeclaredDim::ofExpression(
            [&dim](const llvm::StringMap<int64_t> &bound) { return dim.evaluate(bound); },
            symbolsOf(dim)));
    }
    wants.push_back(std::move(want));
  }
  std::vector<runtime::GivenInput> haves;
  for (const runtime::Tensor &input : inputs)
    haves.push_back({input.dtype(), input.device(), input.shape()});

  std::optional<llvm::Error> problem;
  auto report = [&](const runtime::InputMismatch &m) {
    using Kind = runtime::InputMismatch::Kind;
    if (m.kind == Kind::Count) {
      std::vector<std::string> notes{"`" + fn->name + "` is declared with " +
                                     std::to_string(fn->params.size()) + " parameter(s) (in " +
                                     name().str() + ")"};
      for (size_t i = 0; i < inputs.size(); ++i)
        notes.push_back("given: " + label(i) + " (" + inputs[i].str() + ")");
      problem = mismatch("E0602",
                         "`" + fn->name + "` takes " + llvm::Twine(fn->params.size()) +
                             " input(s), but " + llvm::Twine(inputs.size()) + " were given",
                         std::move(notes));
      return false;
    }
    size_t i = m.input;
    const TensorSpec &want = fn->params[i];
    const runtime::Tensor &have = inputs[i];
    std::string prefix = "input " + std::to_string(i + 1) + " of `" + fn->name + "` ";
    std::string shapeHeadline = prefix + "has shape " + runtime::shapeString(have.shape()) +
                                ", expected " + want.shapeString();
    switch (m.kind) {
    case Kind::DType:
      problem = mismatch("E0603",
                         prefix + "has dtype " + runtime::dtypeName(have.dtype()) + ", expected " +
                             runtime::dtypeName(want.dtype),
                         {declared(i), label(i) + " holds " + have.str()});
      break;
    case Kind::Device:
      problem = mismatch(
          "E0606", prefix + "is on " + have.device().str() + ", expected " + want.device.str(),
          {declared(i)});
      break;
    case Kind::Rank:
      problem =
          mismatch("E0604", shapeHeadline,
                   {declared(i), "the input has rank " + std::to_string(have.rank()) +
                                     ", the parameter rank " + std::to_string(want.shape.size())});
      break;
    case Kind::Dim:
      problem = mismatch("E0604", shapeHeadline,
                         {declared(i), "dim " + std::to_string(m.dim) + " is " +
                                           std::to_string(m.actual) + ", expected " +
                                           std::to_string(m.expected)});
      break;
    case Kind::PackConflict: // artifacts declare no `...`
      problem = mismatch("E0604", shapeHeadline, {declared(i)});
      break;
    case Kind::SymbolConflict:
      problem = mismatch("E0605",
                         prefix + "gives `" + m.symbol + "` = " + llvm::Twine(m.actual) +
                             ", but an earlier input gave " + llvm::Twine(m.expected),
                         {declared(i), "input " + std::to_string(m.firstInput + 1) + " (" +
                                           label(m.firstInput) + ") has `" + m.symbol +
                                           "` = " + std::to_string(m.expected)});
      break;
    case Kind::Count:
      break;
    }
    return false;
  };
  runtime::InputBindings bindings;
  if (!runtime::bindInputs(wants, haves, bindings, report) ||
      !runtime::checkCompoundDims(wants, haves, bindings, report))
    return std::move(*problem);
  const llvm::StringMap<int64_t> &bound = bindings.symbols;
  std::vector<runtime::Shape> results;
  for (const TensorSpec &spec : fn->results) {
    runtime::Shape result;
    for (const SymbolicDim &d : spec.shape) {
      std::optional<int64_t> k = d.evaluate(bound);
      if (!k || *k < 0)
        return loadError(ArtifactErrorKind::Malformed, name(),
                         "the inputs do not determine dim `" + d.str() + "` of a result of `" +
                             fn->name + "`");
      result.push_back(*k);
    }
    results.push_back(std::move(result));
  }
  return results;
}

llvm::Expected<runtime::Tensor> LoadedArtifact::call(llvm::StringRef fnName,
                                                     const runtime::LoadedWeights &weights,
                                                     llvm::ArrayRef<runtime::Tensor> inputs,
                                                     llvm::ArrayRef<std::string> labels,
                                                     cudaexec::Residency residency) const {
  if (const EntryFn *fn = findFn(fnName); fn && fn->results.size() != 1)
    return loadError(ArtifactErrorKind::Unsupported, name(),
                     "`" + fnName + "` returns " + llvm::Twine(fn->results.size()) +
                         " results; take them all (callResults)");
  llvm::Expected<std::vector<runtime::Tensor>> results =
      callResults(fnName, weights, inputs, labels, residency);
  if (!results)
    return results.takeError();
  return std::move(results->front());
}

llvm::Expected<std::vector<runtime::Tensor>>
LoadedArtifact::callResults(llvm::StringRef fnName, const runtime::LoadedWeights &weights,
                            llvm::ArrayRef<runtime::Tensor> inputs,
                            llvm::ArrayRef<std::string> labels,
                            cudaexec::Residency residency) const {
  llvm::Expected<std::vector<runtime::Shape>> resultShapes = checkInputs(fnName, inputs, labels);
  if (!resultShapes)
    return resultShapes.takeError();
  const EntryFn &fn = *findFn(fnName);
  if (plan_) {
    llvm::Expected<std::vector<runtime::Tensor>> outputs = callPlan(weights, inputs, residency);
    if (outputs && outputs->size() != fn.results.size())
      return loadError(ArtifactErrorKind::Malformed, name(),
                       "malformed: the plan returns " + llvm::Twine(outputs->size()) +
                           " results, the signature " + llvm::Twine(fn.results.size()));
    return outputs;
  }

  // Arguments: state in layout order, inputs, then one output buffer per
  // result.
  std::vector<Descriptor> descriptors;
  std::vector<runtime::Tensor> keepAlive;
  auto pass = [&](const runtime::Tensor &t) {
    runtime::Tensor dense = t.isContiguous() ? t : t.contiguous();
    descriptors.emplace_back(dense.data(), dense.shape());
    keepAlive.push_back(std::move(dense));
  };
  for (const runtime::StateEntry &s : contents_.state) {
    const runtime::BoundState *w = weights.find(s.name);
    if (!w || w->tensor.dtype() != s.dtype || w->tensor.shape() != llvm::ArrayRef(s.shape))
      return loadError(ArtifactErrorKind::Unsupported, name(),
                       "the weights were not bound to this artifact (`" + s.name +
                           "` is missing or has another type)");
    pass(w->tensor);
  }
  for (const runtime::Tensor &in : inputs)
    pass(in);
  std::vector<runtime::Tensor> outputs;
  for (const auto &[spec, shape] : llvm::zip_equal(fn.results, *resultShapes)) {
    outputs.push_back(runtime::Tensor::uninitialized(spec.dtype, shape));
    descriptors.emplace_back(outputs.back().mutableData(), outputs.back().shape());
  }

  llvm::SmallVector<void *> arguments;
  for (Descriptor &d : descriptors)
    arguments.push_back(d.words.data());
  linked_->call(fn.name, arguments);
  return outputs;
}

//===----------------------------------------------------------------------===//
// Cuda artifacts: a device plan
//===----------------------------------------------------------------------===//

namespace {

/// The plan's cpu regions, called through the linked object code.
class LinkedCpuRegions final : public cudaexec::CpuRegions {
public:
  explicit LinkedCpuRegions(const LoadedArtifact::Linked &linked) : linked(linked) {}
  llvm::Error call(llvm::StringRef function, llvm::ArrayRef<void *> memrefs) override {
    linked.call(function, memrefs);
    return llvm::Error::success();
  }

private:
  const LoadedArtifact::Linked &linked;
};

} // namespace

/// The executor of a cuda artifact and the weights it has on its devices.
struct LoadedArtifact::Plan {
  std::unique_ptr<cudaexec::PlanExecutor> executor;
  /// Bind and run under one lock, so a call never runs with weights another
  /// thread is replacing.
  std::mutex mutex;
  /// The bytes of the state tensors last copied to the devices.
  std::vector<const void *> boundState;
};

llvm::Error LoadedArtifact::loadPlan(const LoadOptions &options) {
  llvm::StringRef name = this->name();
  llvm::Expected<cudagen::DevicePlan> plan = cudagen::parsePlan(*contents_.devicePlan);
  if (!plan)
    return loadError(ArtifactErrorKind::Malformed, name,
                     "malformed: the device plan: " + llvm::toString(plan.takeError()));
  cudaexec::PlanOptions executorOptions;
  // Kernels come from the artifact's images, indexed by device.
  for (const GpuCode &gpu : contents_.gpus) {
    if (size_t(gpu.device) >= executorOptions.prebuilt.size())
      executorOptions.prebuilt.resize(gpu.device + 1);
    cuda::PrebuiltModule &module = executorOptions.prebuilt[gpu.device];
    module.name = (name + "(cuda" + llvm::Twine(gpu.device) + ")").str();
    module.cubinArch = gpu.cubinArch;
    module.cubin = gpu.cubin;
    module.ptxArch = gpu.ptxArch;
    module.ptx = gpu.ptx;
    module.source = gpu.source;
  }
  for (cudagen::DeviceCode &code : plan->devices)
    if (!llvm::any_of(contents_.gpus,
                      [&](const GpuCode &gpu) { return gpu.device == code.device; }))
      return loadError(ArtifactErrorKind::Malformed, name,
                       "malformed: the plan runs code on cuda:" + llvm::Twine(code.device) +
                           " but the artifact has none for it");

  // The cpu regions: linked from the object, never compiled.
  llvm::StringMap<std::string> regions;
  for (const cudagen::Step &step : plan->steps)
    if (const auto *call = std::get_if<cudagen::CpuCall>(&step))
      regions[call->function] = "_mlir__mlir_ciface_" + call->function;
  if (!regions.empty()) {
    if (contents_.object.empty())
      return loadError(ArtifactErrorKind::Malformed, name,
                       "malformed: the plan calls cpu code but there is no 'cpu.object'");
    if (llvm::Error err = checkHost(contents_, name))
      return err;
    llvm::Expected<std::unique_ptr<Linked>> linked = linkObject(contents_, name, regions);
    if (!linked)
      return linked.takeError();
    linked_ = std::move(*linked);
    const Linked &code = *linked_;
    executorOptions.cpuRegions =
        [&code](
            const cudagen::DevicePlan &) -> llvm::Expected<std::unique_ptr<cudaexec::CpuRegions>> {
      return std::make_unique<LinkedCpuRegions>(code);
    };
  }
  executorOptions.backends =
      options.backends ? options.backends
                       : cudaexec::backendProvider(
                             options.cudaMode.value_or(cudaexec::cudaModeFromEnvironment()),
                             /*compilesKernels=*/false);
  llvm::Expected<std::unique_ptr<cudaexec::PlanExecutor>> executor =
      cudaexec::PlanExecutor::compile(std::move(*plan), std::move(executorOptions));
  if (!executor)
    return executor.takeError();
  plan_ = std::make_unique<Plan>();
  plan_->executor = std::move(*executor);
  return llvm::Error::success();
}

std::optional<cuda::PrebuiltImage> LoadedArtifact::kernelImage(int device) const {
  return plan_ ? plan_->executor->prebuiltImage(device) : std::nullopt;
}

std::optional<cudaexec::RunReport> LoadedArtifact::lastPlanRun() const {
  if (!plan_)
    return std::nullopt;
  return plan_->executor->lastRunReport();
}

llvm::Expected<std::vector<runtime::Tensor>>
LoadedArtifact::callPlan(const runtime::LoadedWeights &weights,
                         llvm::ArrayRef<runtime::Tensor> inputs,
                         cudaexec::Residency residency) const {
  cudaexec::PlanExecutor &executor = *plan_->executor;
  const cudagen::DevicePlan &plan = executor.plan();
  std::vector<runtime::Tensor> state;
  std::vector<const void *> bytes;
  for (cudagen::BufferId id : plan.buffersOfKind(cudagen::BufferKind::State)) {
    const runtime::BoundState *w = weights.find(plan.buffers[id].name);
    if (!w)
      return loadError(ArtifactErrorKind::Unsupported, name(),
                       "the weights were not bound to this artifact (`" + plan.buffers[id].name +
                           "` is missing)");
    state.push_back(w->tensor);
    bytes.push_back(w->tensor.data());
  }
  std::lock_guard<std::mutex> lock(plan_->mutex);
  if (bytes != plan_->boundState || plan_->boundState.empty()) {
    plan_->boundState.clear();
    if (llvm::Error err = executor.bindState(state))
      return err;
    plan_->boundState = std::move(bytes);
  }
  llvm::Expected<std::vector<runtime::Tensor>> outputs = executor.run(inputs, residency);
  if (!outputs)
    return outputs.takeError();
  return std::move(*outputs);
}
