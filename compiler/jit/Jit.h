//===- Jit.h - lower mdl modules for the cpu and run them natively --------===//
//
// Independent of the front end: takes an MLIR module (mdl ops on tensors),
// runs the cpu pipeline, and JIT-compiles it with the host's CPU features.
// Compiled functions take their inputs and then one caller-allocated output
// buffer per result, each as a StridedMemRefType descriptor (see MemRef.h).
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_JIT_JIT_H
#define MODELC_JIT_JIT_H

#include "lower/Passes.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace modelc::jit {

struct JitOptions {
  /// LLVM optimisation level for the generated code (0-3).
  unsigned optLevel = 3;
  /// Call OpenBLAS for f32 matmul (otherwise plain loops).
  bool useBlas = true;
  /// Keep the object code the JIT links, for objectCode().
  bool keepObjectCode = false;
  /// Work from which a loop nest runs on the OpenMP threads (0: never;
  /// MODELC_PARALLEL_MIN_WORK overrides it, see docs/running.md).
  int64_t parallelLoopMinWork = lower::kParallelLoopMinWork;
};

/// Registers every dialect, extension and LLVM translation the cpu pipeline
/// and the JIT need, the mdl dialect included.
void registerJitDialects(mlir::DialectRegistry &registry);

/// A module lowered to native code. Keeps its MLIR context alive.
class JitModule {
public:
  /// Parses MLIR text (mdl on tensors), lowers and compiles it. Errors carry
  /// the parser's, verifier's or pipeline's diagnostics.
  static llvm::Expected<std::unique_ptr<JitModule>> compileSource(llvm::StringRef source,
                                                                  const JitOptions &options = {});

  /// Lowers `module` in place (it must live in a context whose registry was
  /// filled by registerJitDialects) and compiles it.
  static llvm::Expected<std::unique_ptr<JitModule>> compile(mlir::ModuleOp module,
                                                            const JitOptions &options = {});

  /// Calls the public function `name`. `memrefs` are pointers to
  /// StridedMemRefType descriptors: the inputs, then one output per result.
  llvm::Error call(llvm::StringRef name, llvm::ArrayRef<void *> memrefs);

  /// The address of the C entry point `_mlir_ciface_<name>`.
  llvm::Expected<void *> lookup(llvm::StringRef name) const;

  /// The relocatable object (ELF on Linux) the JIT compiled and linked, with
  /// the packed wrapper `_mlir__mlir_ciface_<name>` of every entry point;
  /// `modelc build` stores it in artifacts. Needs JitOptions::keepObjectCode.
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> objectCode(llvm::StringRef name) const;

  /// The packed wrapper of `_mlir_ciface_<name>`: it takes one pointer per
  /// argument, each pointing at a descriptor pointer (see call()). Looking it
  /// up once lets callers invoke it from many threads without the JIT's lock.
  using PackedFunction = void (*)(void **);
  llvm::Expected<PackedFunction> lookupPacked(llvm::StringRef name) const;

private:
  std::unique_ptr<mlir::MLIRContext> ownedContext;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

} // namespace modelc::jit

#endif // MODELC_JIT_JIT_H
