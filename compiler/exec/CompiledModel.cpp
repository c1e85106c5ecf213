//===- CompiledModel.cpp - One entry fn compiled once, called many times --===//

#include "exec/CompiledModel.h"

#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"

#include "llvm/ADT/SmallVector.h"

using namespace modelc;
using namespace modelc::exec;

namespace {

llvm::Error compiledModelError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The words of a StridedMemRefType<T, N> descriptor for any rank: base and
/// aligned pointers, offset, sizes, strides (all 64-bit).
void appendDescriptor(std::vector<int64_t> &words, const void *data,
                      llvm::ArrayRef<int64_t> shape) {
  words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
  words.push_back(int64_t(reinterpret_cast<intptr_t>(data)));
  words.push_back(0);
  words.insert(words.end(), shape.begin(), shape.end());
  runtime::Shape strides = runtime::rowMajorStrides(shape);
  words.insert(words.end(), strides.begin(), strides.end());
}

} // namespace

CompiledModel::~CompiledModel() = default;

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
  mlir::OwningOpRef<mlir::ModuleOp> module = mlirgen::buildModule(
      *compiled->context_, program, sourceMgr, model, options.fnName, diags, options.staticDims);
  if (!module)
    return nullptr;

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
  compiled->model_ = std::move(model);
  compiled->weights_ = std::move(weights);
  compiled->options_ = options;
  compiled->jit_ = std::move(*jit);
  compiled->entry_ = *entry;
  return compiled;
}

llvm::Expected<std::optional<runtime::Tensor>>
CompiledModel::call(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags) const {
  std::optional<BoundSignature> sig = checkInputs(model_, options_.fnName, inputs, diags);
  if (!sig)
    return std::nullopt;
  for (const auto &[atom, extent] : options_.staticDims)
    for (const auto &[boundAtom, boundExtent] : sig->dims)
      if (atom == boundAtom && extent != boundExtent)
        return compiledModelError("'" + options_.fnName + "' was compiled for `" +
                                  sema::atomName(atom) + "` = " + llvm::Twine(extent) +
                                  ", the inputs bind it to " + llvm::Twine(boundExtent));

  // Per call: the inputs' and the output's descriptors, and the output.
  llvm::SmallVector<runtime::Tensor, 4> contiguousInputs;
  std::vector<std::vector<int64_t>> callDescriptors;
  for (const EntryInput &in : inputs) {
    runtime::Tensor t = in.tensor.isContiguous() ? in.tensor : in.tensor.contiguous();
    std::vector<int64_t> words;
    appendDescriptor(words, t.data(), t.shape());
    callDescriptors.push_back(std::move(words));
    contiguousInputs.push_back(std::move(t));
  }
  runtime::Tensor output = runtime::Tensor::zeros(sig->resultDType, sig->resultShape);
  std::vector<int64_t> outputWords;
  appendDescriptor(outputWords, output.mutableData(), output.shape());
  callDescriptors.push_back(std::move(outputWords));

  // The packed wrapper takes a pointer to each descriptor pointer. The
  // compiled code only reads the state descriptors.
  llvm::SmallVector<void *, 16> descriptorPointers;
  for (const std::vector<int64_t> &words : stateDescriptors_)
    descriptorPointers.push_back(const_cast<int64_t *>(words.data()));
  for (std::vector<int64_t> &words : callDescriptors)
    descriptorPointers.push_back(words.data());
  llvm::SmallVector<void *, 16> packed;
  for (void *&pointer : descriptorPointers)
    packed.push_back(&pointer);
  entry_(packed.data());
  return std::optional<runtime::Tensor>(std::move(output));
}
