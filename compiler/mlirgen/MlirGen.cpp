//===- MlirGen.cpp - Checked .mdl models to the mdl dialect ---------------===//
//
// Walks the AST of the entry fn with the checker's results at hand. Values
// are tensors (mlir::Value), compile-time scalars (model arguments, literals,
// sizes), devices, dtypes, submodels and lists. Calls into submodels are
// inlined: each submodel instance is a ModelFrame with its concrete devices
// and arguments and its state_dict prefix, so `weight` inside `fc1` is the
// function argument of `fc1.weight`. Every op generated for a checked
// expression has the checker's type of it (checkedType: the instance's and
// the scope's extents substituted, `?` where a dim is known only at run
// time); mlirgen chooses ops and attributes, never a result shape, and gen()
// checks that each value it makes has its expression's type.
//
// This file: the module, the entry fn's arguments, types and devices; the
// other constructs have a file each (listed in Generator.h).
//
//===----------------------------------------------------------------------===//

#include "mlirgen/Generator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace modelc;
using namespace modelc::mlirgen;
using llvm::dyn_cast;

namespace modelc::mlirgen::detail {

mlir::Location Generator::loc(Range range) {
  if (!range.isValid())
    return b.getUnknownLoc();
  unsigned buffer = sourceMgr.FindBufferContainingLoc(range.begin);
  if (!buffer)
    return b.getUnknownLoc();
  auto [line, col] = sourceMgr.getLineAndColumn(range.begin, buffer);
  llvm::StringRef file = sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier();
  return mlir::FileLineColLoc::get(&ctx, file, line, col);
}

mlir::Type Generator::elementType(ast::DType dtype) {
  switch (dtype) {
  case ast::DType::F16:
    return b.getF16Type();
  case ast::DType::BF16:
    return b.getBF16Type();
  case ast::DType::F32:
    return b.getF32Type();
  case ast::DType::F64:
    return b.getF64Type();
  case ast::DType::I32:
    return b.getI32Type();
  case ast::DType::I64:
    return b.getI64Type();
  case ast::DType::Bool:
    return b.getI1Type();
  }
  return b.getF32Type();
}

std::optional<ast::DType> Generator::concreteDType(const sema::ElementType &e, Scope &scope) {
  sema::ElementType d = scope.frame->subst().apply(e);
  if (std::optional<ast::DType> k = d.concrete())
    return k;
  auto it = scope.dtypes.find(*d.param());
  if (it == scope.dtypes.end())
    return std::nullopt;
  return it->second;
}

mlir::mdl::DeviceAttr Generator::deviceAttr(const sema::Device &device) {
  if (device.kind == sema::Device::Kind::Cuda)
    return mlir::mdl::DeviceAttr::get(&ctx, "cuda", device.index);
  return mlir::mdl::DeviceAttr::get(&ctx, "cpu", 0);
}

std::optional<sema::Device> Generator::concreteDevice(const sema::Device &device,
                                                      ModelFrame &frame) {
  sema::Device d = frame.subst().apply(device);
  if (d.isConcrete())
    return d;
  // An unresolved device (a creation op the checker left generic): the
  // model's home device.
  if (!frame.instance->devices.empty())
    return frame.instance->devices.front();
  return std::nullopt;
}

std::optional<RankedTensorType> Generator::loweredType(const sema::Type &type, ModelFrame &frame,
                                                       Range at) {
  if (!type.isTensor())
    return std::nullopt;
  llvm::SmallVector<int64_t, 4> shape;
  if (type.shape.hasPack()) {
    // The entry's pack: the leading dims the call's inputs have.
    if (!entry.pack) {
      unsupported(at, "a `...` dimension pack in an entry fn's signature without the inputs' "
                      "ranks (`modelc run` binds it from its inputs)");
      return std::nullopt;
    }
    shape.append(entry.pack->begin(), entry.pack->end());
  }
  for (sema::Dim d : type.shape.dims)
    shape.push_back(extentOf(d, frame));
  std::optional<sema::Device> dev = concreteDevice(type.dev, frame);
  std::optional<ast::DType> dtype = frame.subst().apply(type.dtype).concrete();
  if (!dev || !dtype)
    return std::nullopt;
  return tensorType(shape, elementType(*dtype), deviceAttr(*dev));
}

sema::Dim Generator::concreteDim(sema::Dim d, ModelFrame &frame) {
  return frame.subst().apply(d).substitute([&](sema::AtomId atom) -> std::optional<sema::Dim> {
    for (const auto &[bound, value] : bindings)
      if (bound == atom)
        return sema::Dim::constant(value);
    return std::nullopt;
  });
}

mlir::Value Generator::sizeValue(sema::Dim d, Scope &scope, mlir::Location l) {
  auto constant = [&](int64_t v) -> mlir::Value {
    return mlir::arith::ConstantIndexOp::create(b, l, v);
  };
  sema::Dim concrete = concreteDim(d, *scope.frame);
  if (std::optional<int64_t> k = concrete.asConstant())
    return *k >= 0 ? constant(*k) : mlir::Value();
  mlir::Value total;
  for (const sema::Term &term : concrete.terms()) {
    mlir::Value product = constant(term.coeff);
    for (sema::AtomId atom : term.atoms) {
      mlir::Value &extent = scope.dimValues[atom];
      if (!extent) {
        auto source = scope.dimSources.find(atom);
        if (source == scope.dimSources.end())
          return {};
        extent = mlir::tensor::DimOp::create(b, l, source->second.first, source->second.second);
      }
      product = mlir::arith::MulIOp::create(b, l, product, extent);
    }
    total = total ? mlir::Value(mlir::arith::AddIOp::create(b, l, total, product)) : product;
  }
  return total ? total : constant(0);
}

std::optional<RankedTensorType> Generator::scopedType(const sema::Type &type, Scope &scope) {
  if (!type.isTensor())
    return std::nullopt;
  llvm::SmallVector<int64_t> shape;
  if (type.shape.hasPack()) {
    auto pack = scope.packExtents.find(type.shape.pack);
    if (pack == scope.packExtents.end())
      return std::nullopt;
    shape.append(pack->second.begin(), pack->second.end());
  }
  for (sema::Dim d : type.shape.dims)
    shape.push_back(extentOf(scopedDim(d, scope), *scope.frame));
  std::optional<sema::Device> dev = concreteDevice(type.dev, *scope.frame);
  std::optional<ast::DType> dtype = concreteDType(type.dtype, scope);
  if (!dev || !dtype)
    return std::nullopt;
  return tensorType(shape, elementType(*dtype), deviceAttr(*dev));
}

std::optional<RankedTensorType> Generator::checkedType(const ast::Expr &expr, Scope &scope) {
  const sema::ExprInfo *info = program.typeOf(&expr);
  return info ? scopedType(info->type, scope) : std::nullopt;
}

std::optional<llvm::SmallVector<mlir::Value>> Generator::dynamicSizes(const ast::Expr &expr,
                                                                      RankedTensorType type,
                                                                      Scope &scope,
                                                                      mlir::Location l) {
  const sema::ExprInfo *info = program.typeOf(&expr);
  if (!info || !info->type.isTensor() || info->type.shape.hasPack())
    return std::nullopt;
  llvm::SmallVector<mlir::Value> sizes;
  for (auto [dim, extent] : llvm::zip_equal(info->type.shape.dims, type.getShape())) {
    if (extent != kDyn)
      continue;
    mlir::Value v = sizeValue(scopedDim(dim, scope), scope, l);
    if (!v)
      return std::nullopt;
    sizes.push_back(v);
  }
  return sizes;
}

GenValue Generator::checkedResult(const ast::Expr &expr, GenValue v, Scope &scope) {
  if (v.kind != GenValue::Kind::Tensor)
    return v;
  std::optional<RankedTensorType> want = checkedType(expr, scope);
  if (!want || *want == typeOf(v.tensor))
    return v;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "an expression whose generated type " << typeOf(v.tensor) << " is not its checked type "
     << *want << " (a compiler bug)";
  return unsupported(expr.range, text);
}

GenValue Generator::indexOutOfRange(Range at, int64_t index, int64_t extent, Range base) {
  if (!failed)
    diags.report(DiagId::IndexOutOfRange, at, std::to_string(index), extent)
        .primary("valid indices are " + std::to_string(-extent) + " to " +
                 std::to_string(extent - 1) + " for this instance")
        .label(base, "indexed here");
  return fail();
}

GenValue Generator::unsupported(Range at, const llvm::Twine &what) {
  if (!failed)
    diags.report(DiagId::UnsupportedOnCpu, at, what.str())
        .primary("the checker accepts this, but modelc cannot compile it for execution yet");
  return fail();
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp> Generator::run(const ConcreteModel &model,
                                                 llvm::StringRef fnName) {
  const sema::ModelInfo &info = model.model();
  const sema::FnInfo *fn = model.findFn(fnName);
  const sema::FnInfo *generic = info.findFn(fnName);
  Range modelRange = info.decl ? info.decl->name.range : Range{};
  if (!fn || !generic || !generic->decl) {
    diags.report(DiagId::NoEntryFunction, modelRange, info.name, fnName);
    return nullptr;
  }

  ModelFrame root;
  root.instance = model.instance;
  for (const auto &entry : model.scalarArgs)
    root.scalarArgs[entry.getKey()] = entry.getValue();

  // Scalar parameters are constants of this compilation; an `int` one also
  // fixes the dims that name it (`zeros([B, k])`), so it is bound first.
  llvm::SmallVector<std::optional<GenValue>> scalarInputs(fn->params.size());
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const sema::FnParamInfo &p = fn->params[i];
    if (p.type.isTensor())
      continue;
    Range at = i < generic->decl->params.size() ? generic->decl->params[i].range
                                                : generic->decl->name.range;
    auto given = llvm::find_if(entry.scalars, [&](const auto &s) { return s.first == p.name; });
    if (given == entry.scalars.end()) {
      unsupported(at, "a scalar parameter of an entry fn without a value (`modelc run` takes it "
                      "as `--input VALUE`)");
      return nullptr;
    }
    bool isInt = p.type.kind() == sema::Type::Kind::Int;
    if (isInt)
      bindings.push_back({sema::internSymbol(p.name), int64_t(given->second)});
    scalarInputs[i] = GenValue::ofScalar(given->second, isInt);
  }

  llvm::SmallVector<mlir::Type> argTypes;
  for (const sema::InstantiatedState &s : model.concrete.state) {
    std::optional<RankedTensorType> t = loweredType(s.type, root, modelRange);
    if (!t)
      return nullptr;
    argTypes.push_back(*t);
  }
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const sema::FnParamInfo &p = fn->params[i];
    if (scalarInputs[i])
      continue;
    Range at = i < generic->decl->params.size() ? generic->decl->params[i].range
                                                : generic->decl->name.range;
    std::optional<RankedTensorType> t = loweredType(p.type, root, at);
    if (!t)
      return nullptr;
    argTypes.push_back(*t);
  }
  // The results: one tensor, or a tuple of tensors (one function result each).
  std::vector<sema::Type> resultTypes = fn->result.kind() == sema::Type::Kind::Tuple
                                            ? *fn->result.elements
                                            : std::vector<sema::Type>{fn->result};
  if (!llvm::all_of(resultTypes, [](const sema::Type &t) { return t.isTensor(); })) {
    unsupported(generic->decl->name.range, "an entry fn whose results are not all tensors");
    return nullptr;
  }

  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc(modelRange));
  b.setInsertionPointToEnd(module->getBody());
  auto func = mlir::func::FuncOp::create(b, loc(generic->decl->name.range), fnName,
                                         b.getFunctionType(argTypes, {}));
  mlir::Block *entry = func.addEntryBlock();
  // Weights are memory-mapped read-only and inputs belong to the caller:
  // bufferization must never write into an argument.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.setArgAttr(i, "bufferization.writable", b.getBoolAttr(false));
  b.setInsertionPointToStart(entry);

  for (size_t i = 0; i < model.concrete.state.size(); ++i)
    stateArgs[model.concrete.state[i].name] = entry->getArgument(i);
  llvm::SmallVector<GenValue> inputs;
  unsigned nextArg = unsigned(model.concrete.state.size());
  for (const std::optional<GenValue> &scalar : scalarInputs)
    inputs.push_back(scalar ? *scalar : GenValue::ofTensor(entry->getArgument(nextArg++)));

  GenValue returned = inlineFn(root, *generic->decl, inputs);
  if (failed || !returned.ok())
    return nullptr;
  llvm::SmallVector<GenValue> results;
  if (returned.kind == GenValue::Kind::Tuple)
    results.append(returned.elements.begin(), returned.elements.end());
  else
    results.push_back(returned);
  if (results.size() != resultTypes.size() ||
      llvm::any_of(results, [](const GenValue &r) { return r.kind != GenValue::Kind::Tensor; })) {
    unsupported(generic->decl->name.range, "an entry fn that does not return its tensors");
    return nullptr;
  }
  llvm::SmallVector<mlir::Value> resultValues;
  for (const auto &[result, type] : llvm::zip_equal(results, resultTypes)) {
    // The caller sizes each output from the signature: a result of another
    // static shape would be written out of bounds.
    if (std::optional<RankedTensorType> promised = loweredType(type, root, modelRange)) {
      RankedTensorType actual = typeOf(result.tensor);
      bool fits = actual.getRank() == promised->getRank() &&
                  actual.getElementType() == promised->getElementType();
      for (int64_t d = 0; fits && d < actual.getRank(); ++d)
        fits = actual.isDynamicDim(d) || promised->isDynamicDim(d) ||
               actual.getDimSize(d) == promised->getDimSize(d);
      if (!fits) {
        std::string text;
        llvm::raw_string_ostream os(text);
        os << "a result of type " << actual << " where the signature promises " << *promised;
        unsupported(generic->decl->name.range, text);
        return nullptr;
      }
    }
    resultValues.push_back(result.tensor);
  }
  mlir::func::ReturnOp::create(b, loc(generic->decl->bodyRange), resultValues);
  func.setType(b.getFunctionType(argTypes, mlir::ValueRange(resultValues).getTypes()));
  if (mlir::failed(mlir::verify(*module))) {
    unsupported(generic->decl->name.range, "this model (the generated mdl IR does not verify)");
    return nullptr;
  }
  return module;
}

} // namespace modelc::mlirgen::detail

void mlirgen::loadMlirGenDialects(mlir::MLIRContext &context) {
  context.loadDialect<mlir::mdl::MdlDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      mlir::tensor::TensorDialect, mlir::scf::SCFDialect>();
}

mlir::OwningOpRef<mlir::ModuleOp>
mlirgen::buildModule(mlir::MLIRContext &context, const sema::CheckedProgram &program,
                     const llvm::SourceMgr &sourceMgr, const ConcreteModel &model,
                     llvm::StringRef fnName, DiagnosticEngine &diags, DimBindings bindings,
                     const EntryValues &entry) {
  loadMlirGenDialects(context);
  detail::Generator generator(context, program, sourceMgr, diags, bindings, entry);
  return generator.run(model, fnName);
}
