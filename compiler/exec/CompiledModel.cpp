//===- CompiledModel.cpp - One entry fn compiled once, called many times --===//

#include "exec/CompiledModel.h"

#include "cudagen/Partition.h"
#include "jit/ConstantWeights.h"
#include "jit/Jit.h"
#include "lower/Passes.h"
#include "mlirgen/MlirGen.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace modelc;
using namespace modelc::exec;

namespace {

llvm::Error compiledModelError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The words of a StridedMemRefType<T, N> descriptor for any rank: base and
/// aligned pointers, offset, sizes, strides (all 64-bit).
template <typename Words>
void appendDescriptor(Words &words, const void *data, llvm::ArrayRef<int64_t> shape) {
  words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
  words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
  words.push_back(0);
  words.insert(words.end(), shape.begin(), shape.end());
  runtime::Shape strides = runtime::rowMajorStrides(shape);
  words.insert(words.end(), strides.begin(), strides.end());
}

/// Calls a packed entry point with the descriptors `readOnly` (the state,
/// which the compiled code only reads) then `perCall`: the packed wrapper
/// takes a pointer to each descriptor pointer.
template <typename PerCall>
void callPacked(void (*fn)(void **), llvm::ArrayRef<std::vector<int64_t>> readOnly,
                PerCall &perCall) {
  llvm::SmallVector<void *, 16> descriptorPointers;
  for (const std::vector<int64_t> &words : readOnly)
    descriptorPointers.push_back(const_cast<int64_t *>(words.data()));
  for (auto &words : perCall)
    descriptorPointers.push_back(words.data());
  llvm::SmallVector<void *, 16> packed;
  for (void *&pointer : descriptorPointers)
    packed.push_back(&pointer);
  fn(packed.data());
}

} // namespace

llvm::Expected<std::vector<ResultSpec>>
exec::hoistStatePreparation(mlir::ModuleOp module, llvm::StringRef fnName, unsigned numState) {
  mlir::PassManager pm(module.getContext());
  pm.addNestedPass<mlir::func::FuncOp>(lower::createFoldBatchNormPass());
  pm.addPass(lower::createHoistStatePrepPass(fnName, numState));
  if (mlir::failed(pm.run(module)))
    return compiledModelError("internal error: preparing the state of '" + fnName + "' failed");
  std::vector<ResultSpec> prepared;
  auto prepare = module.lookupSymbol<mlir::func::FuncOp>(lower::preparedStateFunction(fnName));
  if (!prepare)
    return prepared;
  for (mlir::Type type : prepare.getResultTypes()) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(type);
    std::optional<runtime::DType> dtype = cudagen::dtypeOf(tensor);
    if (!dtype || !tensor.hasStaticShape())
      return compiledModelError("internal error: a prepared state value of type that the "
                                "runtime cannot hold");
    prepared.push_back({*dtype, runtime::Shape(tensor.getShape())});
  }
  return prepared;
}

llvm::Expected<std::vector<runtime::Tensor>>
exec::runStatePreparation(const jit::JitModule &jit, llvm::StringRef fnName,
                          llvm::ArrayRef<ResultSpec> prepared,
                          llvm::ArrayRef<std::vector<int64_t>> stateDescriptors) {
  std::vector<runtime::Tensor> values;
  if (prepared.empty())
    return values;
  llvm::Expected<jit::JitModule::PackedFunction> prepare =
      jit.lookupPacked(lower::preparedStateFunction(fnName));
  if (!prepare)
    return prepare.takeError();
  std::vector<std::vector<int64_t>> outputWords;
  for (const ResultSpec &spec : prepared) {
    values.push_back(runtime::Tensor::uninitialized(spec.dtype, spec.shape));
    appendDescriptor(outputWords.emplace_back(), values.back().mutableData(),
                     values.back().shape());
  }
  callPacked(*prepare, stateDescriptors, outputWords);
  return values;
}

CompiledModel::~CompiledModel() {
  // The conv and matmul entries keep copies of constant weights by address
  // (jit/ConstantWeights.h): drop them before the memory can hold other
  // values.
  for (const runtime::BoundState &state : weights_.bindings())
    jit::forgetConstantWeights(state.tensor.data(), state.tensor.nbytes());
  for (const runtime::Tensor &value : preparedState_)
    jit::forgetConstantWeights(value.data(), value.nbytes());
}

llvm::Expected<std::unique_ptr<CompiledModel>>
CompiledModel::create(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
                      mlirgen::ConcreteModel model, runtime::LoadedWeights weights,
                      const CompileModelOptions &options, DiagnosticEngine &diags) {
  if (!checkCpuPlacement(model, diags))
    return nullptr;

  std::unique_ptr<CompiledModel> compiled(new CompiledModel());
  mlir::DialectRegistry registry;
  jit::registerJitDialects(registry);
  compiled->context_ = std::make_unique<mlir::MLIRContext>(registry);
  mlirgen::EntryValues given;
  given.scalars = options.scalarArgs;
  if (options.pack) {
    given.pack.emplace();
    for (int64_t extent : *options.pack)
      given.pack->push_back(extent < 0 ? mlir::ShapedType::kDynamic : extent);
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlirgen::buildModule(*compiled->context_, program, sourceMgr, model, options.fnName, diags,
                           options.staticDims, given);
  if (!module)
    return nullptr;

  unsigned numState = unsigned(model.concrete.state.size());
  llvm::Expected<std::vector<ResultSpec>> preparedSpecs =
      hoistStatePreparation(*module, options.fnName, numState);
  if (!preparedSpecs)
    return preparedSpecs.takeError();

  jit::JitOptions jitOptions;
  jitOptions.optLevel = options.optLevel;
  jitOptions.useBlas = options.useBlas;
  llvm::Expected<std::unique_ptr<jit::JitModule>> jit =
      jit::JitModule::compile(*module, jitOptions);
  if (!jit)
    return jit.takeError();
  llvm::Expected<jit::JitModule::PackedFunction> entry = (*jit)->lookupPacked(options.fnName);
  if (!entry)
    return entry.takeError();

  // The state, in state_dict order: contiguous (safetensors tensors already
  // are) and described once.
  for (const sema::InstantiatedState &s : model.concrete.state) {
    const runtime::BoundState *w = weights.find(s.name);
    if (!w)
      return compiledModelError("internal error: state '" + s.name + "' was not bound");
    if (!w->tensor.isContiguous())
      return compiledModelError("internal error: state '" + s.name + "' is not contiguous");
    std::vector<int64_t> words;
    appendDescriptor(words, w->tensor.data(), w->tensor.shape());
    compiled->stateDescriptors_.push_back(std::move(words));
  }
  // The weight-only work, once: its results are passed after the state.
  llvm::Expected<std::vector<runtime::Tensor>> prepared =
      runStatePreparation(**jit, options.fnName, *preparedSpecs, compiled->stateDescriptors_);
  if (!prepared)
    return prepared.takeError();
  for (runtime::Tensor &value : *prepared) {
    appendDescriptor(compiled->stateDescriptors_.emplace_back(), value.data(), value.shape());
    compiled->preparedState_.push_back(std::move(value));
  }
  compiled->model_ = std::move(model);
  compiled->signature_ = PreparedSignature::prepare(compiled->model_, options.fnName);
  compiled->weights_ = std::move(weights);
  compiled->options_ = options;
  compiled->jit_ = std::move(*jit);
  compiled->entry_ = *entry;
  return compiled;
}

llvm::Expected<std::optional<runtime::Tensor>>
CompiledModel::call(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags) const {
  return onlyResult(callResults(inputs, diags), options_.fnName);
}

bool CompiledModel::BoundCall::matches(llvm::ArrayRef<EntryInput> inputs) const {
  if (!sig || inputs.size() != key.size())
    return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const runtime::Tensor &t = inputs[i].tensor;
    if (t.dtype() != key[i].dtype || !(inputs[i].device == key[i].device) ||
        t.shape() != llvm::ArrayRef<int64_t>(key[i].shape))
      return false;
  }
  return true;
}

std::shared_ptr<const BoundSignature>
CompiledModel::lastBound(llvm::ArrayRef<EntryInput> inputs) const {
  std::lock_guard<std::mutex> lock(lastBoundMutex_);
  return lastBound_.matches(inputs) ? lastBound_.sig : nullptr;
}

void CompiledModel::rememberBound(llvm::ArrayRef<EntryInput> inputs,
                                  std::shared_ptr<const BoundSignature> sig) const {
  BoundCall bound;
  for (const EntryInput &in : inputs)
    bound.key.push_back({in.tensor.dtype(), in.device, runtime::Shape(in.tensor.shape())});
  bound.sig = std::move(sig);
  std::lock_guard<std::mutex> lock(lastBoundMutex_);
  lastBound_ = std::move(bound);
}

llvm::Expected<std::shared_ptr<const BoundSignature>>
CompiledModel::bindAndCheck(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags) const {
  std::optional<BoundSignature> sig =
      PreparedSignature::bindOrCheck(signature_, model_, options_.fnName, inputs, diags);
  if (!sig)
    return nullptr;
  for (const auto &[atom, extent] : options_.staticDims)
    for (const auto &[boundAtom, boundExtent] : sig->dims)
      if (atom == boundAtom && extent != boundExtent)
        return compiledModelError("'" + options_.fnName + "' was compiled for `" +
                                  sema::atomName(atom) + "` = " + llvm::Twine(extent) +
                                  ", the inputs bind it to " + llvm::Twine(boundExtent));
  if (options_.pack) {
    bool fits = sig->pack && sig->pack->size() == options_.pack->size();
    for (size_t d = 0; fits && d < sig->pack->size(); ++d)
      fits = (*options_.pack)[d] < 0 || (*options_.pack)[d] == (*sig->pack)[d];
    if (!fits)
      return compiledModelError("'" + options_.fnName + "' was compiled for a `...` of rank " +
                                llvm::Twine(options_.pack->size()) +
                                " (-1: any extent), the inputs give it another rank or extent");
  }
  for (const auto &[name, value] : sig->scalars)
    for (const auto &[compiledName, compiledValue] : options_.scalarArgs)
      if (name == compiledName && value != compiledValue)
        return compiledModelError("'" + options_.fnName + "' was compiled for `" + name +
                                  "` = " + std::to_string(compiledValue) + ", the call gives " +
                                  std::to_string(value));
  auto bound = std::make_shared<const BoundSignature>(std::move(*sig));
  // Scalar parameters bind by value, not by shape: such calls bind each time.
  if (bound->scalars.empty())
    rememberBound(inputs, bound);
  return bound;
}

llvm::Expected<std::optional<Results>> CompiledModel::callResults(llvm::ArrayRef<EntryInput> inputs,
                                                                  DiagnosticEngine &diags) const {
  std::shared_ptr<const BoundSignature> sig = lastBound(inputs);
  if (!sig) {
    llvm::Expected<std::shared_ptr<const BoundSignature>> bound = bindAndCheck(inputs, diags);
    if (!bound)
      return bound.takeError();
    if (!*bound)
      return std::nullopt;
    sig = std::move(*bound);
  }

  // Per call: the inputs' and the outputs' descriptors, and the outputs.
  llvm::SmallVector<runtime::Tensor, 4> contiguousInputs;
  llvm::SmallVector<Descriptor, 4> callDescriptors;
  for (const auto &[i, in] : llvm::enumerate(inputs)) {
    if (sig->isScalar[i])
      continue; // compiled in
    runtime::Tensor t = in.tensor.isContiguous() ? in.tensor : in.tensor.contiguous();
    appendDescriptor(callDescriptors.emplace_back(), t.data(), t.shape());
    contiguousInputs.push_back(std::move(t));
  }
  // One out-parameter per result, in order (buffer-results-to-out-params).
  Results outputs;
  outputs.reserve(sig->results.size());
  for (const ResultSpec &result : sig->results) {
    runtime::Tensor output = runtime::Tensor::uninitialized(result.dtype, result.shape);
    appendDescriptor(callDescriptors.emplace_back(), output.mutableData(), output.shape());
    outputs.push_back(std::move(output));
  }

  callPacked(entry_, stateDescriptors_, callDescriptors);
  return std::optional<Results>(std::move(outputs));
}
