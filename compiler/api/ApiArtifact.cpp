//===- ApiArtifact.cpp - Models loaded from prebuilt .mdlc artifacts ------===//
//
// Model::load maps and links an artifact with compiler/aot's loader: no
// front end, no MLIR. Its signature, parameter layout and code come from the
// artifact; input mismatches come back as the loader's E0602-E0606 (without
// a source file to point into, the notes quote the declared types).
//
//===----------------------------------------------------------------------===//

#include "api/ApiImpl.h"

#include "aot/ArtifactLoader.h"

#include "llvm/ADT/StringExtras.h"

namespace modelc::api {

namespace {

TensorType fromSpec(const aot::TensorSpec &spec) {
  TensorType type;
  type.dtype = fromRuntime(spec.dtype);
  type.device = fromRuntime(spec.device);
  type.text = spec.declared;
  for (const aot::SymbolicDim &d : spec.shape) {
    if (std::optional<int64_t> k = d.asConstant())
      type.shape.push_back({*k, ""});
    else
      type.shape.push_back({-1, d.str()});
  }
  return type;
}

EntryPoint fromEntryFn(const aot::EntryFn &fn) {
  EntryPoint entry;
  entry.name = fn.name;
  std::vector<std::string> params;
  for (const aot::TensorSpec &p : fn.params) {
    entry.params.push_back({p.name, fromSpec(p)});
    params.push_back(p.name + ": " + p.declared);
  }
  std::vector<std::string> declared;
  for (const aot::TensorSpec &r : fn.results) {
    entry.results.push_back(fromSpec(r));
    declared.push_back(r.declared);
  }
  std::string resultText =
      declared.size() == 1 ? declared.front() : "(" + llvm::join(declared, ", ") + ")";
  entry.result = entry.results.front();
  entry.result.text = resultText;
  entry.signature = "fn " + fn.name + "(" + llvm::join(params, ", ") + ") -> " + resultText;
  return entry;
}

/// The loader's errors as diagnostics: input mismatches keep their code.
Diagnostic artifactDiagnostic(llvm::Error error) {
  Diagnostic result;
  llvm::handleAllErrors(
      std::move(error),
      [&](const aot::InputMismatchError &mismatch) {
        result.code = mismatch.code;
        result.message = mismatch.message;
        for (const std::string &note : mismatch.notes)
          result.notes.push_back({note, {}});
        result.rendered = "error[" + mismatch.code + "]: " + mismatch.message + "\n";
        for (const std::string &note : mismatch.notes)
          result.rendered += "note: " + note + "\n";
      },
      [&](const llvm::ErrorInfoBase &other) { result = Diagnostic::error(other.message()); });
  return result;
}

} // namespace

Result<Model> Model::load(const std::string &path) {
  aot::LoadOptions options;
  options.cudaMode = apiCudaMode();
  llvm::Expected<std::unique_ptr<aot::LoadedArtifact>> loaded =
      aot::LoadedArtifact::load(path, options);
  if (!loaded)
    return Result<Model>::failure(artifactDiagnostic(loaded.takeError()));
  auto impl = std::make_shared<Model::Impl>();
  std::shared_ptr<const aot::LoadedArtifact> artifact = std::move(*loaded);
  llvm::Expected<runtime::Device> device = runtime::parseDevice(artifact->contents().modelDevice);
  impl->device = device ? fromRuntime(*device) : Device::cpu();
  llvm::consumeError(device.takeError());
  if (artifact->hasEmbeddedWeights()) {
    llvm::Expected<runtime::LoadedWeights> weights = artifact->embeddedWeights();
    if (!weights)
      return Result<Model>::failure(artifactDiagnostic(weights.takeError()));
    impl->weights = std::move(*weights);
  }
  impl->artifact = std::move(artifact);
  return Model(impl);
}

std::string artifactModelName(const Model::Impl &model) {
  return model.artifact->contents().modelName;
}

std::vector<EntryPoint> artifactEntryPoints(const Model::Impl &model) {
  std::vector<EntryPoint> result;
  for (const aot::EntryFn &fn : model.artifact->contents().fns)
    result.push_back(fromEntryFn(fn));
  return result;
}

std::vector<StateEntry> artifactState(const Model::Impl &model) {
  std::vector<StateEntry> result;
  for (const runtime::StateEntry &s : model.artifact->stateLayout()) {
    TensorType type;
    type.dtype = fromRuntime(s.dtype);
    type.device = fromRuntime(s.device);
    type.text = s.typeString();
    for (int64_t d : s.shape)
      type.shape.push_back({d, ""});
    result.push_back({s.name, s.kind == runtime::StateKind::Buffer, std::move(type)});
  }
  return result;
}

Status bindArtifactWeights(Model::Impl &model, const runtime::SafeTensorsFile &file) {
  llvm::Expected<runtime::LoadedWeights> weights = model.artifact->bindWeights(file);
  if (!weights) {
    // The same E0607 as for a compiled model, without a source location.
    Diagnostic d;
    d.code = "E0607";
    d.message = "the weights in `" + file.name().str() + "` do not fit model `" +
                model.artifact->contents().modelName + "`";
    llvm::handleAllErrors(weights.takeError(), [&](const llvm::ErrorInfoBase &problem) {
      d.notes.push_back({problem.message(), {}});
    });
    d.notes.push_back({"nothing was loaded", {}});
    d.rendered = "error[E0607]: " + d.message + "\n";
    for (const Note &n : d.notes)
      d.rendered += "note: " + n.message + "\n";
    return Status::failure(std::move(d));
  }
  model.weights = std::move(*weights);
  return Ok{};
}

Result<Function> compileArtifactFn(const Model::Impl &model, const std::string &fn) {
  const aot::EntryFn *entry = model.artifact->findFn(fn);
  if (!entry)
    return Result<Function>::failure(Diagnostic::error("artifact '" + model.artifact->name().str() +
                                                       "' has no fn named '" + fn + "'"));
  if (!model.weights && !model.artifact->stateLayout().empty())
    return Result<Function>::failure(Diagnostic::error(
        "model '" + model.artifact->contents().modelName +
        "' has parameters: load its weights before compiling (the artifact has none built in)"));
  auto function = std::make_shared<Function::Impl>();
  function->artifact = model.artifact;
  function->artifactWeights = model.weights ? *model.weights : runtime::LoadedWeights();
  function->signature = fromEntryFn(*entry);
  return Function(std::move(function));
}

Result<std::vector<Tensor>> callArtifactFn(const Function::Impl &function,
                                           const std::vector<Tensor> &inputs) {
  std::vector<runtime::Tensor> tensors;
  std::vector<std::string> labels;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].isNull())
      return Result<std::vector<Tensor>>::failure(
          Diagnostic::error("input " + std::to_string(i + 1) + " is a null tensor"));
    tensors.push_back(inputs[i].impl()->tensor);
    labels.push_back("input " + std::to_string(i + 1));
  }
  llvm::Expected<std::vector<runtime::Tensor>> outputs =
      function.artifact->callResults(function.signature.name, *function.artifactWeights, tensors,
                                     labels, cudaexec::Residency::OnDevice);
  if (!outputs)
    return Result<std::vector<Tensor>>::failure(artifactDiagnostic(outputs.takeError()));
  std::vector<Tensor> wrapped;
  for (runtime::Tensor &output : *outputs)
    wrapped.push_back(wrapTensor(std::move(output)));
  return wrapped;
}

std::string artifactRunReport(const Function::Impl &function) {
  std::optional<cudaexec::RunReport> report = function.artifact->lastPlanRun();
  return report ? cudaexec::formatRunReport(*report) : std::string();
}

} // namespace modelc::api
