//===- Executor.cpp - Run an entry fn of an instantiated model ------------===//

#include "exec/Executor.h"

#include "exec/CompiledModel.h"
#include "exec/CudaModel.h"

#include "jit/Jit.h"
#include "lower/Passes.h"
#include "mlirgen/MlirGen.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"

using namespace modelc;
using namespace modelc::exec;

namespace {

llvm::Error execError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

runtime::DType runtimeDType(ast::DType dtype) {
  switch (dtype) {
  case ast::DType::F16:
    return runtime::DType::F16;
  case ast::DType::BF16:
    return runtime::DType::BF16;
  case ast::DType::F32:
    return runtime::DType::F32;
  case ast::DType::F64:
    return runtime::DType::F64;
  case ast::DType::I32:
    return runtime::DType::I32;
  case ast::DType::I64:
    return runtime::DType::I64;
  case ast::DType::Bool:
    return runtime::DType::Bool;
  }
  return runtime::DType::F32;
}

runtime::Device runtimeDevice(const sema::Device &device) {
  if (device.kind == sema::Device::Kind::Cuda)
    return runtime::Device::cuda(int(device.index));
  return runtime::Device::cpu();
}

Range modelRange(const mlirgen::ConcreteModel &model) {
  return model.model().decl ? model.model().decl->name.range : Range{};
}

/// `[4, 784]`.
std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), ", ") +
         "]";
}

/// The value of input `index` for the scalar parameter declared `want`:
/// a rank-0 array of a dtype that holds it (an `int` takes an integer array,
/// a `float` any numeric one, a `bool` a bool one); nullopt after reporting.
std::optional<double> scalarInput(const sema::Type &want, const EntryInput &input, Range at,
                                  const std::string &index, llvm::StringRef fnName,
                                  const std::string &declared, DiagnosticEngine &diags) {
  const runtime::Tensor &have = input.tensor;
  runtime::DType dtype = have.dtype();
  bool isInt = dtype == runtime::DType::I32 || dtype == runtime::DType::I64;
  bool fits = want.kind() == sema::Type::Kind::Int     ? isInt
              : want.kind() == sema::Type::Kind::Float ? dtype != runtime::DType::Bool
                                                       : dtype == runtime::DType::Bool;
  if (!fits) {
    diags
        .report(DiagId::InputDTypeMismatch, at, index, fnName, runtime::dtypeName(dtype),
                want.str())
        .primary(declared)
        .note(input.source + " holds " + have.str());
    return std::nullopt;
  }
  if (have.rank() != 0) {
    diags.report(DiagId::InputShapeMismatch, at, index, fnName, shapeString(have.shape()), "[]")
        .primary(declared)
        .help("a scalar parameter takes a single value: `--input 0.5`, or a rank-0 .npy");
    return std::nullopt;
  }
  return have.getAsDouble({});
}

} // namespace

std::optional<std::vector<runtime::StateEntry>>
exec::declaredState(const mlirgen::ConcreteModel &model) {
  std::vector<runtime::StateEntry> entries;
  for (const sema::InstantiatedState &s : model.concrete.state) {
    runtime::StateEntry e;
    e.name = s.name;
    e.dtype = runtimeDType(s.type.dtype);
    e.kind = s.isBuffer ? runtime::StateKind::Buffer : runtime::StateKind::Param;
    e.device = runtimeDevice(s.type.dev);
    for (sema::Dim d : s.type.shape.dims) {
      std::optional<int64_t> k = d.asConstant();
      if (!k || s.type.shape.hasPack())
        return std::nullopt;
      e.shape.push_back(*k);
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

std::optional<runtime::LoadedWeights> exec::bindModelWeights(const mlirgen::ConcreteModel &model,
                                                             const runtime::SafeTensorsFile &file,
                                                             DiagnosticEngine &diags) {
  std::optional<std::vector<runtime::StateEntry>> declared = declaredState(model);
  if (!declared) {
    diags.report(DiagId::UnsupportedOnCpu, modelRange(model), "state whose shape is not concrete")
        .primary("declared in this model");
    return std::nullopt;
  }
  llvm::Expected<runtime::LoadedWeights> bound = runtime::bindWeights(*declared, file);
  if (bound)
    return std::move(*bound);
  DiagnosticBuilder report =
      diags.report(DiagId::WeightsMismatch, modelRange(model), file.name(), model.model().name);
  report.primary(std::to_string(declared->size()) + " param(s) and buffer(s) declared here");
  llvm::handleAllErrors(bound.takeError(), [&](const llvm::ErrorInfoBase &problem) {
    report.note(problem.message());
  });
  report.note("nothing was loaded");
  return std::nullopt;
}

std::optional<BoundSignature> exec::checkInputs(const mlirgen::ConcreteModel &model,
                                                llvm::StringRef fnName,
                                                llvm::ArrayRef<EntryInput> inputs,
                                                DiagnosticEngine &diags) {
  const sema::FnInfo *fn = model.findFn(fnName);
  const sema::FnInfo *generic = model.model().findFn(fnName);
  if (!fn || !generic || !generic->decl) {
    diags.report(DiagId::NoEntryFunction, modelRange(model), model.model().name, fnName);
    return std::nullopt;
  }
  const ast::FnDecl &decl = *generic->decl;
  if (inputs.size() != fn->params.size()) {
    DiagnosticBuilder report = diags.report(DiagId::InputCountMismatch, decl.name.range, fnName,
                                            fn->params.size(), inputs.size());
    report.primary("declared with " + std::to_string(fn->params.size()) + " parameter(s)");
    for (const EntryInput &in : inputs)
      report.note("given: " + in.source + " (" + in.tensor.str() + ")");
    return std::nullopt;
  }

  // Symbolic dims (`B`) take the extent of the first input that has them.
  struct Binding {
    int64_t value;
    size_t input;
  };
  llvm::DenseMap<sema::AtomId, Binding> bound;
  std::vector<std::pair<std::string, double>> scalars;
  std::optional<std::pair<runtime::Shape, size_t>> pack; // extents, input
  auto paramRange = [&](size_t i) {
    return i < decl.params.size() && decl.params[i].type ? decl.params[i].type->range
                                                         : decl.name.range;
  };
  bool ok = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const sema::Type &want = fn->params[i].type;
    const runtime::Tensor &have = inputs[i].tensor;
    std::string index = std::to_string(i + 1);
    std::string declared = "`" + fn->params[i].name + "` is declared " + want.str();
    if (want.isScalar()) {
      if (std::optional<double> value =
              scalarInput(want, inputs[i], paramRange(i), index, fnName, declared, diags))
        scalars.push_back({fn->params[i].name, *value});
      else
        ok = false;
      continue;
    }
    if (!want.isTensor()) {
      diags.report(DiagId::UnsupportedOnCpu, paramRange(i), "an entry parameter of this type");
      ok = false;
      continue;
    }
    if (runtimeDType(want.dtype) != have.dtype()) {
      diags
          .report(DiagId::InputDTypeMismatch, paramRange(i), index, fnName,
                  runtime::dtypeName(have.dtype()), ast::dtypeName(want.dtype))
          .primary(declared)
          .note(inputs[i].source + " holds " + have.str());
      ok = false;
      continue;
    }
    if (runtimeDevice(want.dev) != inputs[i].device) {
      diags
          .report(DiagId::InputDeviceMismatch, paramRange(i), index, fnName, inputs[i].device.str(),
                  want.dev.str())
          .primary(declared)
          .help("place the input with `--input " + inputs[i].source + "@" + want.dev.str() +
                "`, or instantiate the model on " + inputs[i].device.str());
      ok = false;
      continue;
    }
    bool packed = want.shape.hasPack();
    if (packed ? have.rank() < want.rank() : have.rank() != want.rank()) {
      diags
          .report(DiagId::InputShapeMismatch, paramRange(i), index, fnName,
                  shapeString(have.shape()), want.shape.str())
          .primary(declared)
          .note("the input has rank " + std::to_string(have.rank()) + ", the parameter rank " +
                (packed ? "at least " : "") + std::to_string(want.rank()));
      ok = false;
      continue;
    }
    // `...` takes the leading dims; every input with it must give the same.
    size_t lead = have.rank() - want.rank();
    if (packed) {
      runtime::Shape extents(have.shape().begin(), have.shape().begin() + lead);
      if (!pack) {
        pack = {extents, i};
      } else if (pack->first != extents) {
        diags
            .report(DiagId::InputShapeMismatch, paramRange(i), index, fnName,
                    shapeString(have.shape()), want.shape.str())
            .primary(declared)
            .note("its `...` dims are " + shapeString(extents) + ", but input " +
                      std::to_string(pack->second + 1) + " (" + inputs[pack->second].source +
                      ") gave " + shapeString(pack->first),
                  paramRange(pack->second), "`...` first bound here");
        ok = false;
        continue;
      }
    }
    for (size_t d = 0; d < want.rank(); ++d) {
      sema::Dim dim = want.shape.dims[d];
      int64_t extent = have.shape()[lead + d];
      if (std::optional<int64_t> k = dim.asConstant()) {
        if (*k != extent) {
          diags
              .report(DiagId::InputShapeMismatch, paramRange(i), index, fnName,
                      shapeString(have.shape()), want.shape.str())
              .primary(declared)
              .note("dim " + std::to_string(d) + " is " + std::to_string(extent) + ", expected " +
                    std::to_string(*k));
          ok = false;
          break;
        }
        continue;
      }
      std::optional<sema::AtomId> atom = dim.asAtom();
      if (!atom)
        continue; // a compound dim: checked once every symbol is bound
      auto [it, inserted] = bound.try_emplace(*atom, Binding{extent, i});
      if (!inserted && it->second.value != extent) {
        std::string name = sema::atomName(*atom).str();
        diags
            .report(DiagId::InputDimConflict, paramRange(i), index, fnName, name, extent,
                    it->second.value)
            .primary(declared)
            .note("input " + std::to_string(it->second.input + 1) + " (" +
                      inputs[it->second.input].source + ") has `" + name +
                      "` = " + std::to_string(it->second.value),
                  paramRange(it->second.input), "`" + name + "` first bound here");
        ok = false;
        break;
      }
    }
  }
  if (!ok)
    return std::nullopt;

  // An `int` parameter is a size too (`f32[B, k]`).
  for (size_t i = 0; i < inputs.size(); ++i)
    if (fn->params[i].type.kind() == sema::Type::Kind::Int)
      for (const auto &[name, value] : scalars)
        if (name == fn->params[i].name)
          bound.try_emplace(sema::internSymbol(name), Binding{int64_t(value), i});
  auto substitute = [&](sema::Dim d) {
    return d.substitute([&](sema::AtomId a) -> std::optional<sema::Dim> {
      auto it = bound.find(a);
      if (it == bound.end())
        return std::nullopt;
      return sema::Dim::constant(it->second.value);
    });
  };
  // Compound dims (`2 * B`) now that every symbol has a value.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const sema::Type &want = fn->params[i].type;
    if (!want.isTensor())
      continue;
    size_t lead = inputs[i].tensor.rank() - want.rank();
    for (size_t d = 0; d < want.rank(); ++d) {
      std::optional<int64_t> k = substitute(want.shape.dims[d]).asConstant();
      int64_t extent = inputs[i].tensor.shape()[lead + d];
      if (k && *k != extent) {
        diags
            .report(DiagId::InputShapeMismatch, paramRange(i), std::to_string(i + 1), fnName,
                    shapeString(inputs[i].tensor.shape()), want.shape.str())
            .primary("`" + fn->params[i].name + "` is declared " + want.str())
            .note("dim " + std::to_string(lead + d) + " is " + std::to_string(extent) +
                  ", expected " + std::to_string(*k));
        return std::nullopt;
      }
    }
  }

  BoundSignature sig;
  if (!fn->result.isTensor()) {
    diags.report(DiagId::UnsupportedOnCpu, decl.name.range,
                 "an entry fn that does not return one tensor");
    return std::nullopt;
  }
  if (fn->result.shape.hasPack()) {
    if (!pack) {
      diags.report(DiagId::UnsupportedOnCpu, decl.result ? decl.result->range : decl.name.range,
                   "a result `...` that no input binds");
      return std::nullopt;
    }
    sig.resultShape = pack->first;
  }
  if (pack)
    sig.pack = pack->first;
  sig.resultDType = runtimeDType(fn->result.dtype);
  for (sema::Dim d : fn->result.shape.dims) {
    std::optional<int64_t> k = substitute(d).asConstant();
    if (!k || *k < 0) {
      diags.report(DiagId::UnsupportedOnCpu, decl.result ? decl.result->range : decl.name.range,
                   "a result dim the inputs do not determine (`" + d.str() + "`)");
      return std::nullopt;
    }
    sig.resultShape.push_back(*k);
  }
  for (const auto &[atom, binding] : bound)
    sig.dims.push_back({atom, binding.value});
  sig.scalars = std::move(scalars);
  for (const sema::FnParamInfo &p : fn->params)
    sig.isScalar.push_back(p.type.isScalar());
  return sig;
}

llvm::Expected<std::optional<runtime::Tensor>>
exec::runModel(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
               const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
               llvm::ArrayRef<EntryInput> inputs, const RunOptions &options,
               DiagnosticEngine &diags) {
  std::optional<BoundSignature> sig = checkInputs(model, options.fnName, inputs, diags);
  if (!sig)
    return std::nullopt;
  if (placedOnCuda(model, options.fnName))
    return runModelOnCuda(program, sourceMgr, model, weights, inputs, options, diags);
  if (!checkCpuPlacement(model, diags))
    return std::nullopt;
  for (const EntryInput &in : inputs)
    if (!in.device.isCPU()) {
      diags.report(DiagId::UnsupportedOnCpu, modelRange(model), "an input on " + in.device.str());
      return std::nullopt;
    }

  CompileModelOptions compileOptions;
  compileOptions.fnName = options.fnName;
  compileOptions.optLevel = options.optLevel;
  compileOptions.useBlas = options.useBlas;
  compileOptions.staticDims = sig->dims;
  compileOptions.scalarArgs = sig->scalars;
  if (sig->pack)
    compileOptions.pack.emplace(sig->pack->begin(), sig->pack->end());
  llvm::Expected<std::unique_ptr<CompiledModel>> compiled =
      CompiledModel::create(program, sourceMgr, model, weights, compileOptions, diags);
  if (!compiled)
    return compiled.takeError();
  if (!*compiled)
    return std::nullopt;
  return (*compiled)->call(inputs, diags);
}

bool exec::checkCpuPlacement(const mlirgen::ConcreteModel &model, DiagnosticEngine &diags) {
  for (const sema::Device &d : model.instance->devices)
    if (d.kind != sema::Device::Kind::Cpu) {
      diags.report(DiagId::UnsupportedOnCpu, modelRange(model), "a model placed on " + d.str())
          .primary("instantiated on " + d.str())
          .help("instantiate the model with `--device cpu`");
      return false;
    }
  for (const sema::InstantiatedState &s : model.concrete.state)
    if (s.type.dev.kind != sema::Device::Kind::Cpu) {
      diags
          .report(DiagId::UnsupportedOnCpu, modelRange(model),
                  "a model placed on " + s.type.dev.str())
          .primary("`" + s.name + "` lives on " + s.type.dev.str())
          .help("instantiate the model with `--device cpu`");
      return false;
    }
  return true;
}

llvm::Error exec::lowerModule(mlir::ModuleOp module, LoweringStage stage, bool useBlas) {
  mlir::MLIRContext &ctx = *module.getContext();
  mlir::PassManager pm(&ctx);
  if (stage == LoweringStage::Linalg) {
    pm.addPass(lower::createLowerMdlToLinalgPass());
  } else {
    lower::CpuPipelineOptions pipeline;
    pipeline.useBlas = useBlas;
    lower::buildCpuPipeline(pm, pipeline);
  }
  std::string messages;
  llvm::raw_string_ostream os(messages);
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    return mlir::success();
  });
  if (mlir::failed(pm.run(module)))
    return execError("lowering failed:\n" + messages);
  return llvm::Error::success();
}
