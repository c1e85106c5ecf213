//===- ApiModel.cpp - Program, Model and Function over the compiler -------===//

#include "api/ApiImpl.h"

#include "modelc/modelc.h"

#include "sema/CheckedProgram.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"

#include <dlfcn.h>

namespace modelc::api {

namespace {

template <typename T> Result<T> fail(const std::string &message) {
  return Result<T>::failure(Diagnostic::error(message));
}

api::Dim fromInternal(sema::Dim d) {
  if (std::optional<int64_t> k = d.asConstant())
    return {*k, ""};
  return {-1, d.str()};
}

TensorType fromInternal(const sema::Type &type) {
  TensorType result;
  result.text = type.str();
  result.isTensor = type.isTensor();
  if (!result.isTensor)
    return result;
  result.dtype = fromRuntime(*runtime::dtypeFromName(ast::dtypeName(type.dtype.instantiated())));
  for (sema::Dim d : type.shape.dims)
    result.shape.push_back(fromInternal(d));
  result.device =
      type.dev.kind == sema::Device::Kind::Cuda ? Device::cuda(int(type.dev.index)) : Device::cpu();
  return result;
}

EntryPoint fromInternal(const sema::FnInfo &fn) {
  EntryPoint entry;
  entry.name = fn.name;
  std::vector<std::string> params;
  for (const sema::FnParamInfo &p : fn.params) {
    entry.params.push_back({p.name, fromInternal(p.type)});
    params.push_back(p.name + ": " + p.type.str());
  }
  if (fn.result.kind() == sema::Type::Kind::Tuple) {
    for (const sema::Type &element : *fn.result.elements)
      entry.results.push_back(fromInternal(element));
    entry.result = entry.results.front();
    entry.result.text = fn.result.str();
  } else {
    entry.result = fromInternal(fn.result);
    if (fn.result.kind() != sema::Type::Kind::Void)
      entry.results.push_back(entry.result);
  }
  entry.signature = "fn " + fn.name + "(" + llvm::join(params, ", ") + ")";
  if (fn.result.kind() != sema::Type::Kind::Void)
    entry.signature += " -> " + fn.result.str();
  return entry;
}

/// Gives `function` its signature and the names its calls' messages use
/// for each input.
void setSignature(Function::Impl &function, EntryPoint signature) {
  function.inputSources.clear();
  for (const Parameter &param : signature.params)
    function.inputSources.push_back("the tensor given for `" + param.name + "`");
  function.signature = std::move(signature);
}

/// `in=784,eps=1e-05,affine=true`, as instantiateModel takes them.
Result<std::string> argsText(const ModelArgs &args) {
  std::vector<std::string> parts;
  for (const auto &[name, value] : args) {
    if (name.empty() || name.find_first_of(",= \t") != std::string::npos)
      return fail<std::string>("invalid model argument name '" + name + "'");
    std::string text;
    switch (value.kind()) {
    case ArgValue::Kind::Int:
      text = std::to_string(value.intValue());
      break;
    case ArgValue::Kind::Float: {
      char buffer[32];
      snprintf(buffer, sizeof buffer, "%.17g", value.floatValue());
      text = buffer;
      break;
    }
    case ArgValue::Kind::Bool:
      text = value.boolValue() ? "true" : "false";
      break;
    case ArgValue::Kind::Ints:
      for (int64_t v : value.intsValue())
        text += (text.empty() ? "(" : ",") + std::to_string(v);
      text += text.empty() ? "()" : ")";
      break;
    case ArgValue::Kind::String:
      if (value.stringValue().empty() ||
          value.stringValue().find_first_of(",=") != std::string::npos)
        return fail<std::string>("invalid option '" + value.stringValue() +
                                 "' for model argument '" + name + "'");
      text = value.stringValue();
      break;
    case ArgValue::Kind::DType:
      text = dtypeName(value.dtypeValue());
      break;
    }
    parts.push_back(name + "=" + text);
  }
  return llvm::join(parts, ",");
}

Result<Program> checkProgram(std::unique_ptr<modelc::Compilation> compilation,
                             std::optional<unsigned> mainBuffer, const CompileOptions &options) {
  auto impl = std::make_shared<Program::Impl>();
  impl->compilation = std::move(compilation);
  impl->tf32 = options.tf32;
  bool clean = mainBuffer && impl->compilation->check();
  std::vector<Diagnostic> diagnostics = takeDiagnostics(impl->compilation->diagnostics(), *impl);
  if (!clean)
    return Result<Program>::failure(std::move(diagnostics));
  return Result<Program>(Program(impl), std::move(diagnostics));
}

modelc::CompileOptions internalOptions(const api::CompileOptions &options) {
  modelc::CompileOptions result;
  result.importPaths = options.importPaths;
  result.stdlibDir = options.stdlibDir;
  if (result.stdlibDir.empty() && !llvm::sys::Process::GetEnv("MODELC_STDLIB"))
    result.stdlibDir = installedStdlibDir();
  return result;
}

} // namespace

const char *version() { return MODELC_VERSION; }

std::string installedStdlibDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&installedStdlibDir), &info) || !info.dli_fname)
    return "";
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(info.dli_fname));
  llvm::sys::path::append(dir, "..", "share", "modelc", "stdlib");
  if (!llvm::sys::fs::is_directory(dir))
    return "";
  llvm::sys::path::remove_dots(dir, /*remove_dot_dot=*/true);
  return std::string(dir);
}

std::string defaultStdlibDir() {
  return modelc::Compilation(internalOptions({})).stdlibDirectory();
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

Program::Program(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<Program> Program::compileFile(const std::string &path, const CompileOptions &options) {
  auto compilation = std::make_unique<modelc::Compilation>(internalOptions(options));
  std::optional<unsigned> main = compilation->addFile(path);
  return checkProgram(std::move(compilation), main, options);
}

Result<Program> Program::compileString(std::string_view source, std::string_view name,
                                       const CompileOptions &options) {
  auto compilation = std::make_unique<modelc::Compilation>(internalOptions(options));
  unsigned main = compilation->addBuffer(llvm::StringRef(name), llvm::StringRef(source));
  return checkProgram(std::move(compilation), main, options);
}

std::vector<ModelInfo> Program::models() const {
  std::vector<ModelInfo> result;
  const ast::Module *main = impl_->compilation->mainModule();
  for (const std::unique_ptr<sema::ModelInfo> &m : impl_->compilation->program()->models) {
    if (m->module != main || !m->decl)
      continue;
    ModelInfo info;
    info.name = m->name;
    info.doc = m->decl->doc;
    for (const ast::DeviceParam &d : m->decl->deviceParams)
      info.deviceParams.push_back(d.name.name);
    for (const ast::ValueParam &v : m->decl->valueParams) {
      std::string text = v.name.name + ": " + ast::valueParamTypeText(v);
      if (v.defaultValue)
        text += " = " + v.defaultValue->range.text().str();
      info.valueParams.push_back(std::move(text));
    }
    result.push_back(std::move(info));
  }
  return result;
}

Result<Model> Program::instantiate(const std::string &name, Device device,
                                   const ModelArgs &args) const {
  if (!device.isCPU() && !sema::Device::isValidCudaIndex(device.index))
    return fail<Model>("invalid device " + device.str() + ": cuda indices go from 0 to " +
                       std::to_string(sema::Device::kMaxCudaIndex));
  Result<std::string> text = argsText(args);
  if (!text)
    return Result<Model>::failure(text.diagnostics());
  sema::Device semaDevice =
      device.isCPU() ? sema::Device::cpu() : sema::Device::cuda(int64_t(device.index));
  llvm::Expected<mlirgen::ConcreteModel> model =
      mlirgen::instantiateModel(*impl_->compilation->program(), name, *text, semaDevice);
  if (!model)
    return Result<Model>::failure(errorDiagnostic(model.takeError()));
  auto impl = std::make_shared<Model::Impl>();
  impl->program = impl_;
  impl->model = std::move(*model);
  impl->device = device;
  return Model(impl);
}

//===----------------------------------------------------------------------===//
// Model
//===----------------------------------------------------------------------===//

Model::Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::string Model::name() const {
#if MODELC_HAVE_AOT
  if (impl_->artifact)
    return artifactModelName(*impl_);
#endif
  return impl_->model.model().name;
}

Device Model::device() const { return impl_->device; }

std::vector<EntryPoint> Model::entryPoints() const {
#if MODELC_HAVE_AOT
  if (impl_->artifact)
    return artifactEntryPoints(*impl_);
#endif
  std::vector<EntryPoint> result;
  for (const sema::FnInfo &fn : impl_->model.concrete.fns)
    result.push_back(fromInternal(fn));
  return result;
}

std::vector<StateEntry> Model::state() const {
#if MODELC_HAVE_AOT
  if (impl_->artifact)
    return artifactState(*impl_);
#endif
  std::vector<StateEntry> result;
  for (const sema::InstantiatedState &s : impl_->model.concrete.state)
    result.push_back({s.name, s.isBuffer, fromInternal(s.type)});
  return result;
}

bool Model::hasWeights() const { return impl_->weights.has_value(); }

namespace {

Status bindFile(Model::Impl &model, llvm::Expected<runtime::SafeTensorsFile> file) {
  if (!file)
    return Status::failure(errorDiagnostic(file.takeError()));
#if MODELC_HAVE_AOT
  if (model.artifact)
    return bindArtifactWeights(model, *file);
#endif
  modelc::Compilation &compilation = *model.program->compilation;
  DiagnosticEngine diags(compilation.sourceMgr());
  std::optional<runtime::LoadedWeights> weights = exec::bindModelWeights(model.model, *file, diags);
  if (!weights)
    return Status::failure(takeDiagnostics(diags, *model.program));
  model.weights = std::move(*weights);
  return Ok{};
}

} // namespace

Status Model::loadWeights(const std::string &path) {
  return bindFile(*impl_, runtime::SafeTensorsFile::open(path));
}

Status Model::loadWeightsFromMemory(const void *data, size_t size, std::string_view name) {
  if (!data && size)
    return Status::failure(Diagnostic::error("loadWeightsFromMemory: no data"));
  std::unique_ptr<llvm::MemoryBuffer> buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(static_cast<const char *>(data), size), llvm::StringRef(name));
  return bindFile(*impl_, runtime::SafeTensorsFile::fromBuffer(std::move(buffer)));
}

namespace {

/// A model placed on GPUs: its device plan compiled for every batch size
/// (kernels loaded, cpu regions JIT-compiled) and its weights copied to
/// their devices once.
Result<Function> compileOnCuda(const Model::Impl &model, const sema::FnInfo &fn,
                               const runtime::LoadedWeights &weights, DiagnosticEngine &diags) {
  Program::Impl &program = *model.program;
  exec::CudaModelOptions options;
  options.fnName = fn.name;
  options.cudaMode = apiCudaMode();
  options.tf32 = program.tf32;
  llvm::Expected<std::unique_ptr<exec::CudaModel>> compiled =
      exec::CudaModel::create(*program.compilation->program(), program.compilation->sourceMgr(),
                              model.model, weights, options, diags);
  if (!compiled)
    return Result<Function>::failure(errorDiagnostic(compiled.takeError()));
  if (!*compiled)
    return Result<Function>::failure(takeDiagnostics(diags, program));
  auto function = std::make_shared<Function::Impl>();
  function->program = model.program;
  function->cuda = std::move(*compiled);
  setSignature(*function, fromInternal(fn));
  return Function(std::move(function));
}

} // namespace

Result<Function> Model::compile(const std::string &fn) const {
#if MODELC_HAVE_AOT
  if (impl_->artifact)
    return compileArtifactFn(*impl_, fn);
#endif
  const sema::FnInfo *info = impl_->model.findFn(fn);
  if (!info) {
    std::vector<std::string> names;
    for (const sema::FnInfo &f : impl_->model.concrete.fns)
      names.push_back(f.name);
    return fail<Function>("model '" + name() + "' has no fn named '" + fn +
                          "' (fns: " + llvm::join(names, ", ") + ")");
  }
  runtime::LoadedWeights weights;
  if (impl_->weights)
    weights = *impl_->weights;
  else if (!impl_->model.concrete.state.empty())
    return fail<Function>("model '" + name() + "' has " +
                          std::to_string(impl_->model.concrete.state.size()) +
                          " param(s) and buffer(s): load its weights before compiling");

  Program::Impl &program = *impl_->program;
  DiagnosticEngine diags(program.compilation->sourceMgr());
  if (exec::placedOnCuda(impl_->model, fn))
    return compileOnCuda(*impl_, *info, weights, diags);
  exec::CompileModelOptions options;
  options.fnName = fn;
  llvm::Expected<std::unique_ptr<exec::CompiledModel>> compiled =
      exec::CompiledModel::create(*program.compilation->program(), program.compilation->sourceMgr(),
                                  impl_->model, std::move(weights), options, diags);
  if (!compiled)
    return Result<Function>::failure(errorDiagnostic(compiled.takeError()));
  if (!*compiled)
    return Result<Function>::failure(takeDiagnostics(diags, program));
  auto function = std::make_shared<Function::Impl>();
  function->program = impl_->program;
  function->compiled = std::move(*compiled);
  setSignature(*function, fromInternal(*info));
  return Function(std::move(function));
}

//===----------------------------------------------------------------------===//
// Function
//===----------------------------------------------------------------------===//

Function::Function(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

const EntryPoint &Function::signature() const { return impl_->signature; }

Result<Tensor> Function::call(const std::vector<Tensor> &inputs) const {
  if (impl_->signature.results.size() > 1)
    return fail<Tensor>("`" + impl_->signature.name + "` returns " +
                        std::to_string(impl_->signature.results.size()) +
                        " results; take them all with callResults()");
  Result<std::vector<Tensor>> outputs = callResults(inputs);
  if (!outputs)
    return Result<Tensor>::failure(outputs.diagnostics());
  return std::move(outputs->front());
}

Result<std::vector<Tensor>> Function::callResults(const std::vector<Tensor> &inputs) const {
#if MODELC_HAVE_AOT
  if (impl_->artifact)
    return callArtifactFn(*impl_, inputs);
#endif
  llvm::SmallVector<exec::EntryInput, 4> entryInputs;
  const std::vector<std::string> &sources = impl_->inputSources;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].isNull()) {
      const std::vector<Parameter> &params = impl_->signature.params;
      std::string label = i < params.size() ? "`" + params[i].name + "`" : "an extra input";
      return fail<std::vector<Tensor>>("input " + std::to_string(i + 1) + " of `" +
                                       impl_->signature.name + "` (" + label +
                                       ") is a null tensor");
    }
    const runtime::Tensor &t = inputs[i].impl()->tensor;
    entryInputs.push_back(
        {t, t.device(), i < sources.size() ? sources[i] : "the tensor given for an extra input"});
  }
  Program::Impl &program = *impl_->program;
  DiagnosticEngine diags(program.compilation->sourceMgr());
  // Cuda tensors hold device memory: the plan uses them in place and leaves
  // a result on a GPU there.
  llvm::Expected<std::optional<exec::Results>> outputs =
      impl_->cuda ? impl_->cuda->callResults(entryInputs, diags, cudaexec::Residency::OnDevice)
                  : impl_->compiled->callResults(entryInputs, diags);
  if (!outputs)
    return Result<std::vector<Tensor>>::failure(errorDiagnostic(outputs.takeError()));
  if (!*outputs)
    return Result<std::vector<Tensor>>::failure(takeDiagnostics(diags, program));
  std::vector<Tensor> wrapped;
  for (runtime::Tensor &output : **outputs)
    wrapped.push_back(wrapTensor(std::move(output)));
  return wrapped;
}

std::string Function::runReport() const {
#if MODELC_HAVE_AOT
  if (impl_->artifact)
    return artifactRunReport(*impl_);
#endif
  return impl_->cuda ? cudaexec::formatRunReport(impl_->cuda->executor().lastRunReport())
                     : std::string();
}

#if !MODELC_HAVE_AOT
Result<Model> Model::load(const std::string &path) {
  return fail<Model>("cannot load '" + path +
                     "': this build of libmodelc has no .mdlc artifact loader "
                     "(compiler/aot was not part of it)");
}
#endif

} // namespace modelc::api
