//===- JitCpuRegions.cpp - A plan's cpu module compiled by the JIT --------===//

#include "cudaexec/JitCpuRegions.h"

#include "jit/Jit.h"

namespace modelc::cudaexec {

namespace {

class JitRegions final : public CpuRegions {
public:
  explicit JitRegions(std::unique_ptr<jit::JitModule> module) : module(std::move(module)) {}
  llvm::Error call(llvm::StringRef function, llvm::ArrayRef<void *> memrefs) override {
    return module->call(function, memrefs);
  }

private:
  std::unique_ptr<jit::JitModule> module;
};

} // namespace

CpuRegionsProvider jitCpuRegions(unsigned optLevel, bool useBlas) {
  return [optLevel,
          useBlas](const cudagen::DevicePlan &plan) -> llvm::Expected<std::unique_ptr<CpuRegions>> {
    jit::JitOptions options;
    options.optLevel = optLevel;
    options.useBlas = useBlas;
    llvm::Expected<std::unique_ptr<jit::JitModule>> module =
        jit::JitModule::compileSource(plan.cpuModule, options);
    if (!module)
      return module.takeError();
    return std::make_unique<JitRegions>(std::move(*module));
  };
}

} // namespace modelc::cudaexec
