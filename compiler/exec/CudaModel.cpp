//===- CudaModel.cpp - An entry fn with work on cuda:N, compiled once -----===//

#include "exec/CudaModel.h"

#include "cudaexec/JitCpuRegions.h"
#include "cudagen/Partition.h"
#include "jit/Jit.h"
#include "mlirgen/MlirGen.h"

using namespace modelc;
using namespace modelc::exec;

bool exec::placedOnCuda(const mlirgen::ConcreteModel &model, llvm::StringRef fnName) {
  auto isCuda = [](const sema::Device &device) { return device.kind == sema::Device::Kind::Cuda; };
  if (llvm::any_of(model.instance->devices, isCuda))
    return true;
  if (llvm::any_of(model.concrete.state,
                   [&](const sema::InstantiatedState &s) { return isCuda(s.type.dev); }))
    return true;
  const sema::FnInfo *fn = model.findFn(fnName);
  if (!fn)
    return false;
  if (fn->result.isTensor() && isCuda(fn->result.dev))
    return true;
  if (fn->result.kind() == sema::Type::Kind::Tuple &&
      llvm::any_of(*fn->result.elements,
                   [&](const sema::Type &t) { return t.isTensor() && isCuda(t.dev); }))
    return true;
  return llvm::any_of(fn->params, [&](const sema::FnParamInfo &p) {
    return p.type.isTensor() && isCuda(p.type.dev);
  });
}

llvm::Expected<std::optional<cudagen::DevicePlan>>
exec::planModel(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
                const mlirgen::ConcreteModel &model, llvm::StringRef fnName,
                DiagnosticEngine &diags, mlirgen::DimBindings staticDims, bool tf32) {
  const sema::FnInfo *fn = model.findFn(fnName);
  if (!fn)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "model '" + model.model().name + "' has no fn '" + fnName + "'");
  mlir::DialectRegistry registry;
  jit::registerJitDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlirgen::buildModule(context, program, sourceMgr, model, fnName, diags, staticDims);
  if (!module)
    return std::nullopt;

  cudagen::PlanOptions options;
  options.entry = fnName.str();
  options.tf32 = tf32;
  for (const sema::InstantiatedState &s : model.concrete.state)
    options.stateNames.push_back(s.name);
  for (const sema::FnParamInfo &param : fn->params) {
    std::vector<std::string> names;
    for (sema::Dim dim : param.type.shape.dims) {
      std::optional<sema::AtomId> atom = dim.asAtom();
      names.push_back(atom ? sema::atomName(*atom).str() : std::string());
    }
    options.inputDimNames.push_back(std::move(names));
  }
  llvm::Expected<cudagen::DevicePlan> plan = cudagen::buildDevicePlan(*module, options);
  if (!plan)
    return plan.takeError();
  return std::optional<cudagen::DevicePlan>(std::move(*plan));
}

llvm::Expected<std::vector<runtime::Tensor>>
exec::stateInOrder(const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights) {
  std::vector<runtime::Tensor> state;
  for (const sema::InstantiatedState &s : model.concrete.state) {
    const runtime::BoundState *bound = weights.find(s.name);
    if (!bound)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "internal error: state '" + s.name + "' was not bound");
    state.push_back(bound->tensor);
  }
  return state;
}

llvm::Expected<std::unique_ptr<CudaModel>>
CudaModel::create(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
                  const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
                  const CudaModelOptions &options, DiagnosticEngine &diags) {
  llvm::Expected<std::optional<cudagen::DevicePlan>> plan =
      planModel(program, sourceMgr, model, options.fnName, diags, options.staticDims, options.tf32);
  if (!plan)
    return plan.takeError();
  if (!*plan)
    return nullptr;
  llvm::Expected<std::vector<runtime::Tensor>> state = stateInOrder(model, weights);
  if (!state)
    return state.takeError();

  cudaexec::PlanOptions executorOptions;
  executorOptions.cpuRegions = cudaexec::jitCpuRegions(options.optLevel, options.useBlas);
  executorOptions.backends =
      cudaexec::backendProvider(options.cudaMode.value_or(cudaexec::cudaModeFromEnvironment()));
  llvm::Expected<std::unique_ptr<cudaexec::PlanExecutor>> executor =
      cudaexec::PlanExecutor::compile(std::move(**plan), std::move(executorOptions));
  if (!executor)
    return executor.takeError();
  if (llvm::Error error = (*executor)->bindState(*state))
    return error;
  std::unique_ptr<CudaModel> compiled(new CudaModel(model, options.fnName));
  compiled->plan = std::move(*executor);
  return compiled;
}

llvm::Expected<std::optional<Results>> CudaModel::callResults(llvm::ArrayRef<EntryInput> inputs,
                                                              DiagnosticEngine &diags,
                                                              cudaexec::Residency residency) const {
  std::optional<BoundSignature> sig =
      PreparedSignature::bindOrCheck(signature, model, fnName, inputs, diags);
  if (!sig)
    return std::nullopt;
  std::vector<runtime::Tensor> tensors;
  for (const EntryInput &input : inputs)
    tensors.push_back(input.tensor);
  llvm::Expected<std::vector<runtime::Tensor>> outputs = plan->run(tensors, residency);
  if (!outputs)
    return outputs.takeError();
  if (outputs->size() != sig->results.size())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: the plan returned " +
                                       std::to_string(outputs->size()) + " results, not " +
                                       std::to_string(sig->results.size()));
  return std::optional<Results>(std::move(*outputs));
}

llvm::Expected<std::optional<runtime::Tensor>>
CudaModel::call(llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags,
                cudaexec::Residency residency) const {
  return onlyResult(callResults(inputs, diags, residency), fnName);
}

llvm::Expected<std::optional<Results>> exec::runModelOnCudaResults(
    const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
    const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
    llvm::ArrayRef<EntryInput> inputs, const RunOptions &options, DiagnosticEngine &diags) {
  CudaModelOptions cudaOptions;
  cudaOptions.fnName = options.fnName;
  cudaOptions.optLevel = options.optLevel;
  cudaOptions.useBlas = options.useBlas;
  cudaOptions.cudaMode = options.cudaMode;
  cudaOptions.tf32 = options.tf32;
  std::optional<BoundSignature> sig = checkInputs(model, options.fnName, inputs, diags);
  if (!sig)
    return std::nullopt;
  cudaOptions.staticDims = sig->dims;
  llvm::Expected<std::unique_ptr<CudaModel>> compiled =
      CudaModel::create(program, sourceMgr, model, weights, cudaOptions, diags);
  if (!compiled)
    return compiled.takeError();
  if (!*compiled)
    return std::nullopt;
  llvm::Expected<std::optional<Results>> results = (*compiled)->callResults(inputs, diags);
  if (options.gpuReport)
    *options.gpuReport = cudaexec::formatRunReport((*compiled)->executor().lastRunReport());
  return results;
}
