//===- Executor.cpp - Run an entry fn of an instantiated model ------------===//

#include "exec/Executor.h"

#include "exec/CompiledModel.h"
#include "exec/CudaModel.h"

#include "jit/Jit.h"
#include "lower/Passes.h"
#include "mlirgen/MlirGen.h"

#include "runtime/InputCheck.h"

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
    diags
        .report(DiagId::InputShapeMismatch, at, index, fnName, runtime::shapeString(have.shape()),
                "[]")
        .primary(declared)
        .help("a scalar parameter takes a single value: `--input 0.5`, or a rank-0 .npy");
    return std::nullopt;
  }
  return have.getAsDouble({});
}

/// The symbols `dim` is written over (inside quotients too), each once,
/// noting the atom of each name in `atoms`.
void collectSymbols(sema::Dim dim, llvm::StringMap<sema::AtomId> &atoms,
                    std::vector<std::string> &symbols) {
  for (const sema::Term &term : dim.terms())
    for (sema::AtomId a : term.atoms) {
      std::optional<std::pair<sema::Dim, sema::Dim>> parts = sema::exactQuotientParts(a);
      if (!parts)
        parts = sema::floorQuotientParts(a);
      if (parts) {
        collectSymbols(parts->first, atoms, symbols);
        collectSymbols(parts->second, atoms, symbols);
        continue;
      }
      std::string name = sema::atomName(a).str();
      atoms.try_emplace(name, a);
      if (llvm::find(symbols, name) == symbols.end())
        symbols.push_back(name);
    }
}

/// `d` with the symbols of `bound` replaced by their extents.
sema::Dim substituteBound(sema::Dim d, const llvm::StringMap<int64_t> &bound) {
  return d.substitute([&](sema::AtomId a) -> std::optional<sema::Dim> {
    auto it = bound.find(sema::atomName(a));
    if (it == bound.end())
      return std::nullopt;
    return sema::Dim::constant(it->second);
  });
}

/// How runtime/InputCheck.h sees a parameter of type `want`, noting the atom
/// of each symbol it names in `atoms`. A scalar parameter is skipped there.
runtime::DeclaredInput declaredInput(const sema::Type &want, llvm::StringMap<sema::AtomId> &atoms) {
  runtime::DeclaredInput declared;
  if (!want.isTensor()) {
    declared.skip = true;
    return declared;
  }
  declared.dtype = runtimeDType(want.dtype.instantiated());
  declared.device = runtimeDevice(want.dev);
  declared.leadingPack = want.shape.hasPack();
  for (size_t d = 0; d < want.rank(); ++d) {
    sema::Dim dim = want.shape.dims[d];
    if (std::optional<int64_t> k = dim.asConstant()) {
      declared.shape.push_back(runtime::DeclaredDim::ofConstant(*k));
    } else if (std::optional<sema::AtomId> atom = dim.asAtom()) {
      atoms[sema::atomName(*atom)] = *atom;
      declared.shape.push_back(runtime::DeclaredDim::ofSymbol(sema::atomName(*atom)));
    } else {
      // Its symbols, so one that no input gives alone (`4 * H`) is solved.
      std::vector<std::string> symbols;
      collectSymbols(dim, atoms, symbols);
      declared.shape.push_back(runtime::DeclaredDim::ofExpression(
          [dim](const llvm::StringMap<int64_t> &bound) {
            return substituteBound(dim, bound).asConstant();
          },
          std::move(symbols)));
    }
  }
  return declared;
}

/// The entry fn's results: one type, or each element of a tuple.
std::vector<sema::Type> resultTypesOf(const sema::FnInfo &fn) {
  return fn.result.kind() == sema::Type::Kind::Tuple ? *fn.result.elements
                                                     : std::vector<sema::Type>{fn.result};
}

} // namespace

std::optional<std::vector<runtime::StateEntry>>
exec::declaredState(const mlirgen::ConcreteModel &model) {
  std::vector<runtime::StateEntry> entries;
  for (const sema::InstantiatedState &s : model.concrete.state) {
    runtime::StateEntry e;
    e.name = s.name;
    e.dtype = runtimeDType(s.type.dtype.instantiated());
    e.kind = s.isBuffer ? runtime::StateKind::Buffer : runtime::StateKind::Param;
    e.device = runtimeDevice(s.type.dev);
    e.fillWhenMissing = s.fillValue;
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

  auto paramRange = [&](size_t i) {
    return i < decl.params.size() && decl.params[i].type ? decl.params[i].type->range
                                                         : decl.name.range;
  };
  // A parameter declared on a device (`@ cpu`) stays there whatever device
  // the model is instantiated on.
  auto pinnedParam = [&](size_t i) {
    return i < decl.params.size() && decl.params[i].type && decl.params[i].type->device &&
           decl.params[i].type->device->kind != ast::DeviceExpr::Kind::Var;
  };
  auto declaredAs = [&](size_t i) {
    return "`" + fn->params[i].name + "` is declared " + fn->params[i].type.str();
  };

  // Tensors go through runtime/InputCheck.h; scalar parameters are checked
  // here, in input order with the tensors' problems.
  std::vector<runtime::DeclaredInput> wants;
  std::vector<runtime::GivenInput> haves;
  llvm::StringMap<sema::AtomId> atoms; // symbol name -> the atom it names
  for (size_t i = 0; i < inputs.size(); ++i) {
    const runtime::Tensor &have = inputs[i].tensor;
    haves.push_back({have.dtype(), inputs[i].device, have.shape()});
    wants.push_back(declaredInput(fn->params[i].type, atoms));
  }

  std::vector<std::pair<std::string, double>> scalars;
  bool ok = true;
  size_t scalarsChecked = 0;
  // Checks the non-tensor parameters before input `end`.
  auto checkScalarsBefore = [&](size_t end) {
    for (; scalarsChecked < end; ++scalarsChecked) {
      size_t i = scalarsChecked;
      const sema::Type &want = fn->params[i].type;
      if (want.isScalar()) {
        if (std::optional<double> value =
                scalarInput(want, inputs[i], paramRange(i), std::to_string(i + 1), fnName,
                            declaredAs(i), diags))
          scalars.push_back({fn->params[i].name, *value});
        else
          ok = false;
      } else if (!want.isTensor()) {
        diags.report(DiagId::UnsupportedOnCpu, paramRange(i), "an entry parameter of this type");
        ok = false;
      }
    }
  };
  bool compoundPhase = false;
  auto report = [&](const runtime::InputMismatch &m) {
    using Kind = runtime::InputMismatch::Kind;
    checkScalarsBefore(m.input);
    size_t i = m.input;
    const sema::Type &want = fn->params[i].type;
    const runtime::Tensor &have = inputs[i].tensor;
    std::string index = std::to_string(i + 1);
    auto shapeMismatch = [&](const std::string &note) {
      diags
          .report(DiagId::InputShapeMismatch, paramRange(i), index, fnName,
                  runtime::shapeString(have.shape()), want.shape.str())
          .primary(declaredAs(i))
          .note(note);
    };
    switch (m.kind) {
    case Kind::Count:
      break;
    case Kind::DType:
      diags
          .report(DiagId::InputDTypeMismatch, paramRange(i), index, fnName,
                  runtime::dtypeName(have.dtype()), want.dtype.str())
          .primary(declaredAs(i))
          .note(inputs[i].source + " holds " + have.str());
      break;
    case Kind::Device:
      diags
          .report(DiagId::InputDeviceMismatch, paramRange(i), index, fnName, inputs[i].device.str(),
                  want.dev.str())
          .primary(declaredAs(i))
          .help(
              "place the input with `--input " + inputs[i].source + "@" + want.dev.str() +
              (pinnedParam(i) ? "`" : "`, or instantiate the model on " + inputs[i].device.str()));
      break;
    case Kind::Rank:
      shapeMismatch("the input has rank " + std::to_string(have.rank()) + ", the parameter rank " +
                    (want.shape.hasPack() ? "at least " : "") + std::to_string(want.rank()));
      break;
    case Kind::PackConflict:
      diags
          .report(DiagId::InputShapeMismatch, paramRange(i), index, fnName,
                  runtime::shapeString(have.shape()), want.shape.str())
          .primary(declaredAs(i))
          .note("its `...` dims are " + runtime::shapeString(m.pack) + ", but input " +
                    std::to_string(m.firstInput + 1) + " (" + inputs[m.firstInput].source +
                    ") gave " + runtime::shapeString(m.firstPack),
                paramRange(m.firstInput), "`...` first bound here");
      break;
    case Kind::Dim: {
      // Number dims are counted in the declared shape, expressions in the input's.
      size_t dim = compoundPhase ? m.dim : m.dim - (have.rank() - want.rank());
      shapeMismatch("dim " + std::to_string(dim) + " is " + std::to_string(m.actual) +
                    ", expected " + std::to_string(m.expected));
      break;
    }
    case Kind::SymbolConflict:
      diags
          .report(DiagId::InputDimConflict, paramRange(i), index, fnName, m.symbol, m.actual,
                  m.expected)
          .primary(declaredAs(i))
          .note("input " + std::to_string(m.firstInput + 1) + " (" + inputs[m.firstInput].source +
                    ") has `" + m.symbol + "` = " + std::to_string(m.expected),
                paramRange(m.firstInput), "`" + m.symbol + "` first bound here");
      break;
    }
    ok = false;
    return true;
  };
  runtime::InputBindings bindings;
  runtime::bindInputs(wants, haves, bindings, report);
  checkScalarsBefore(inputs.size());
  if (!ok)
    return std::nullopt;

  // An `int` parameter is a size too (`f32[B, k]`).
  for (size_t i = 0; i < inputs.size(); ++i)
    if (fn->params[i].type.kind() == sema::Type::Kind::Int)
      for (const auto &[name, value] : scalars)
        if (name == fn->params[i].name && bindings.symbols.try_emplace(name, int64_t(value)).second)
          atoms[name] = sema::internSymbol(name);
  // Compound dims (`2 * B`) now that every symbol has a value.
  compoundPhase = true;
  if (!runtime::checkCompoundDims(wants, haves, bindings, report))
    return std::nullopt;
  std::optional<std::pair<runtime::Shape, size_t>> pack;
  if (bindings.pack)
    pack = {*bindings.pack, bindings.packInput};

  BoundSignature sig;
  // One result, or a tuple of them: each sized from the bound dims.
  std::vector<sema::Type> resultTypes = resultTypesOf(*fn);
  for (size_t r = 0; r < resultTypes.size(); ++r) {
    const sema::Type &result = resultTypes[r];
    Range at = !decl.result                                      ? decl.name.range
               : decl.result->kind == ast::TypeExpr::Kind::Tuple ? decl.result->elements[r]->range
                                                                 : decl.result->range;
    if (!result.isTensor()) {
      diags.report(DiagId::UnsupportedOnCpu, decl.name.range,
                   "an entry fn whose results are not all tensors");
      return std::nullopt;
    }
    ResultSpec spec;
    if (result.shape.hasPack()) {
      if (!pack) {
        diags.report(DiagId::UnsupportedOnCpu, at, "a result `...` that no input binds");
        return std::nullopt;
      }
      spec.shape = pack->first;
    }
    spec.dtype = runtimeDType(result.dtype.instantiated());
    for (sema::Dim d : result.shape.dims) {
      std::optional<int64_t> k = substituteBound(d, bindings.symbols).asConstant();
      if (!k || *k < 0) {
        diags.report(DiagId::UnsupportedOnCpu, at,
                     "a result dim the inputs do not determine (`" + d.str() + "`)");
        return std::nullopt;
      }
      spec.shape.push_back(*k);
    }
    sig.results.push_back(std::move(spec));
  }
  if (pack)
    sig.pack = pack->first;
  for (const auto &symbol : bindings.symbols)
    sig.dims.push_back({atoms.lookup(symbol.getKey()), symbol.getValue()});
  sig.scalars = std::move(scalars);
  for (const sema::FnParamInfo &p : fn->params)
    sig.isScalar.push_back(p.type.isScalar());
  return sig;
}

std::optional<PreparedSignature> PreparedSignature::prepare(const mlirgen::ConcreteModel &model,
                                                            llvm::StringRef fnName) {
  const sema::FnInfo *fn = model.findFn(fnName);
  if (!fn)
    return std::nullopt;
  PreparedSignature prepared;
  for (const sema::FnParamInfo &param : fn->params) {
    if (!param.type.isTensor())
      return std::nullopt;
    prepared.wants_.push_back(declaredInput(param.type, prepared.atoms_));
  }
  for (const sema::Type &result : resultTypesOf(*fn)) {
    if (!result.isTensor())
      return std::nullopt;
    ResultDims dims;
    dims.dtype = runtimeDType(result.dtype.instantiated());
    dims.pack = result.shape.hasPack();
    for (sema::Dim d : result.shape.dims) {
      ResultDim dim;
      if (std::optional<int64_t> k = d.asConstant())
        dim.constant = *k;
      else if (std::optional<sema::AtomId> atom = d.asAtom())
        dim.symbol = sema::atomName(*atom).str();
      else
        dim.expression = d;
      dims.dims.push_back(std::move(dim));
    }
    prepared.results_.push_back(std::move(dims));
  }
  return prepared;
}

std::optional<BoundSignature> PreparedSignature::bind(llvm::ArrayRef<EntryInput> inputs) const {
  if (inputs.size() != wants_.size())
    return std::nullopt;
  llvm::SmallVector<runtime::GivenInput, 4> haves;
  for (const EntryInput &in : inputs)
    haves.push_back({in.tensor.dtype(), in.device, in.tensor.shape()});
  bool fits = true;
  auto mismatch = [&](const runtime::InputMismatch &) {
    fits = false;
    return false;
  };
  runtime::InputBindings bindings;
  if (!runtime::bindInputs(wants_, haves, bindings, mismatch) || !fits ||
      !runtime::checkCompoundDims(wants_, haves, bindings, mismatch) || !fits)
    return std::nullopt;

  BoundSignature sig;
  for (const ResultDims &result : results_) {
    ResultSpec spec;
    spec.dtype = result.dtype;
    if (result.pack) {
      if (!bindings.pack)
        return std::nullopt;
      spec.shape = *bindings.pack;
    }
    for (const ResultDim &dim : result.dims) {
      std::optional<int64_t> extent = dim.constant;
      if (!dim.symbol.empty()) {
        auto it = bindings.symbols.find(dim.symbol);
        if (it != bindings.symbols.end())
          extent = it->second;
      } else if (!extent) {
        extent = substituteBound(dim.expression, bindings.symbols).asConstant();
      }
      if (!extent || *extent < 0)
        return std::nullopt;
      spec.shape.push_back(*extent);
    }
    sig.results.push_back(std::move(spec));
  }
  sig.pack = bindings.pack;
  for (const auto &symbol : bindings.symbols)
    sig.dims.push_back({atoms_.lookup(symbol.getKey()), symbol.getValue()});
  sig.isScalar.assign(inputs.size(), false);
  return sig;
}

std::optional<BoundSignature>
PreparedSignature::bindOrCheck(const std::optional<PreparedSignature> &prepared,
                               const mlirgen::ConcreteModel &model, llvm::StringRef fnName,
                               llvm::ArrayRef<EntryInput> inputs, DiagnosticEngine &diags) {
  if (prepared)
    if (std::optional<BoundSignature> sig = prepared->bind(inputs))
      return sig;
  return checkInputs(model, fnName, inputs, diags);
}

llvm::Expected<std::optional<runtime::Tensor>>
exec::onlyResult(llvm::Expected<std::optional<Results>> results, llvm::StringRef fnName) {
  if (!results)
    return results.takeError();
  if (!*results)
    return std::nullopt;
  if ((*results)->size() != 1)
    return execError("'" + fnName + "' returns " + llvm::Twine((*results)->size()) +
                     " results; take them all (runModelResults, callResults)");
  return std::optional<runtime::Tensor>(std::move((*results)->front()));
}

llvm::Expected<std::optional<runtime::Tensor>>
exec::runModel(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
               const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
               llvm::ArrayRef<EntryInput> inputs, const RunOptions &options,
               DiagnosticEngine &diags) {
  return onlyResult(runModelResults(program, sourceMgr, model, weights, inputs, options, diags),
                    options.fnName);
}

llvm::Expected<std::optional<Results>>
exec::runModelResults(const sema::CheckedProgram &program, const llvm::SourceMgr &sourceMgr,
                      const mlirgen::ConcreteModel &model, const runtime::LoadedWeights &weights,
                      llvm::ArrayRef<EntryInput> inputs, const RunOptions &options,
                      DiagnosticEngine &diags) {
  std::optional<BoundSignature> sig = checkInputs(model, options.fnName, inputs, diags);
  if (!sig)
    return std::nullopt;
  if (placedOnCuda(model, options.fnName))
    return runModelOnCudaResults(program, sourceMgr, model, weights, inputs, options, diags);
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
  return (*compiled)->callResults(inputs, diags);
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
