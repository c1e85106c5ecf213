//===- Jit.cpp - cpu pipeline + mlir::ExecutionEngine ---------------------===//

#include "jit/Jit.h"

#include "jit/BlasRuntime.h"
#include "jit/ConvRuntime.h"
#include "jit/ParallelRuntime.h"
#include "lower/Passes.h"
#include "mlir/MdlDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/TargetSelect.h"

#include <mutex>

using namespace mlir;

namespace modelc::jit {
namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Collects diagnostics emitted while `body` runs into one message.
template <typename Fn> std::string captureDiagnostics(MLIRContext &ctx, Fn &&body) {
  std::string messages;
  llvm::raw_string_ostream os(messages);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    os << diag.getLocation() << ": " << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      os << "  note: " << note << "\n";
    return success();
  });
  body();
  return messages;
}

void initializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace

void registerJitDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mdl::MdlDialect>();
}

llvm::Expected<std::unique_ptr<JitModule>> JitModule::compileSource(llvm::StringRef source,
                                                                    const JitOptions &options) {
  DialectRegistry registry;
  registerJitDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module;
  std::string errors = captureDiagnostics(
      *context, [&] { module = parseSourceString<ModuleOp>(source, ParserConfig(context.get())); });
  if (!module)
    return makeError("modelc jit: cannot parse the module:\n" + errors);
  auto compiled = compile(*module, options);
  if (compiled)
    (*compiled)->ownedContext = std::move(context);
  return compiled;
}

llvm::Expected<std::unique_ptr<JitModule>> JitModule::compile(ModuleOp module,
                                                              const JitOptions &options) {
  MLIRContext &ctx = *module.getContext();
  // Public functions get C entry points taking memref descriptors.
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isDeclaration())
      func->setAttr("llvm.emit_c_interface", UnitAttr::get(&ctx));

  PassManager pm(&ctx);
  lower::CpuPipelineOptions pipelineOptions;
  pipelineOptions.useBlas = options.useBlas;
  pipelineOptions.parallelLoopMinWork = options.parallelLoopMinWork;
  lower::buildCpuPipeline(pm, pipelineOptions);
  LogicalResult lowered = failure();
  std::string errors = captureDiagnostics(ctx, [&] { lowered = pm.run(module); });
  if (failed(lowered))
    return makeError("modelc jit: lowering failed:\n" + errors);

  initializeNativeTargetOnce();
  auto machineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder)
    return machineBuilder.takeError();
  machineBuilder->setCodeGenOptLevel(options.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                                                           : llvm::CodeGenOptLevel::Default);
  auto targetMachine = machineBuilder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();

  ExecutionEngineOptions engineOptions;
  // ExecutionEngineOptions holds a function_ref: the transformer must outlive create().
  std::function<llvm::Error(llvm::Module *)> transformer =
      makeOptimizingTransformer(options.optLevel, 0, targetMachine->get());
  engineOptions.transformer = transformer;
  engineOptions.enableObjectDump = options.keepObjectCode;
  std::unique_ptr<ExecutionEngine> engine;
  std::string createError;
  errors = captureDiagnostics(ctx, [&] {
    auto created = ExecutionEngine::create(module, engineOptions, std::move(*targetMachine));
    if (!created) {
      createError = llvm::toString(created.takeError());
      return;
    }
    engine = std::move(*created);
  });
  if (!engine)
    return makeError("modelc jit: code generation failed:\n" + errors + createError);
  engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner(std::string("_mlir_ciface_") + lower::kSgemmFunction)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_sgemm_ciface), llvm::JITSymbolFlags::Exported};
    symbols[interner(std::string("_mlir_ciface_") + lower::kBatchSgemmFunction)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_batch_sgemm_ciface),
        llvm::JITSymbolFlags::Exported};
    symbols[interner(std::string("_mlir_ciface_") + lower::kMatmulEpilogueFunction)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_matmul_epilogue_ciface),
        llvm::JITSymbolFlags::Exported};
    symbols[interner(std::string("_mlir_ciface_") + lower::kConv2dFunction)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_conv2d_ciface), llvm::JITSymbolFlags::Exported};
    symbols[interner(std::string("_mlir_ciface_") + lower::kConv2dEpilogueFunction)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_conv2d_epilogue_ciface),
        llvm::JITSymbolFlags::Exported};
    symbols[interner(std::string("_mlir_ciface_") + lower::kConv2dPoolFunction)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_conv2d_pool_ciface),
        llvm::JITSymbolFlags::Exported};
    symbols[interner(std::string("_mlir_ciface_") + lower::kToBlocked16Function)] = {
        llvm::orc::ExecutorAddr::fromPtr(&modelc_to_blocked16_ciface),
        llvm::JITSymbolFlags::Exported};
    // Bufferization copies between differently laid out buffers with it.
    // Intermediates: reuse large blocks across calls (see BlasRuntime.h).
    symbols[interner("malloc")] = {llvm::orc::ExecutorAddr::fromPtr(&modelc_jit_malloc),
                                   llvm::JITSymbolFlags::Exported};
    symbols[interner("free")] = {llvm::orc::ExecutorAddr::fromPtr(&modelc_jit_free),
                                 llvm::JITSymbolFlags::Exported};
    symbols[interner("memrefCopy")] = {llvm::orc::ExecutorAddr::fromPtr(&memrefCopy),
                                       llvm::JITSymbolFlags::Exported};
    // Parallel loops: LLVM's OpenMP ABI on the process's OpenMP.
    for (const OpenMpSymbol &symbol : openMpRuntimeSymbols())
      symbols[interner(symbol.name)] = {llvm::orc::ExecutorAddr::fromPtr(symbol.address),
                                        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  engine->initialize();
  auto compiled = std::unique_ptr<JitModule>(new JitModule());
  compiled->engine = std::move(engine);
  return compiled;
}

llvm::Error JitModule::call(llvm::StringRef name, llvm::ArrayRef<void *> memrefs) {
  // The packed wrapper of `_mlir_ciface_NAME` takes a pointer to each argument.
  llvm::SmallVector<void *> descriptors(memrefs.begin(), memrefs.end());
  llvm::SmallVector<void *> packed;
  for (void *&descriptor : descriptors)
    packed.push_back(&descriptor);
  return engine->invokePacked((llvm::Twine("_mlir_ciface_") + name).str(), packed);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
JitModule::objectCode(llvm::StringRef name) const {
  // Compilation is lazy: looking the entry point up compiles the module.
  if (llvm::Expected<void *> entry = lookup(name); !entry)
    return entry.takeError();
  // The engine hands its object cache out only as a file.
  llvm::SmallString<128> path;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("modelc-jit", "o", path))
    return makeError("modelc jit: cannot create a temporary file: " + ec.message());
  llvm::FileRemover remover(path);
  engine->dumpToObjectFile(path);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> object =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!object || (*object)->getBufferSize() == 0)
    return makeError("modelc jit: no object code was kept (JitOptions::keepObjectCode)");
  return std::move(*object);
}

llvm::Expected<void *> JitModule::lookup(llvm::StringRef name) const {
  auto address = engine->lookup((llvm::Twine("_mlir_ciface_") + name).str());
  if (!address)
    return address.takeError();
  return reinterpret_cast<void *>(*address);
}

llvm::Expected<JitModule::PackedFunction> JitModule::lookupPacked(llvm::StringRef name) const {
  return engine->lookupPacked((llvm::Twine("_mlir_ciface_") + name).str());
}

} // namespace modelc::jit
