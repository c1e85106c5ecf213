//===- OpenBlasLibrary.cpp - OpenBLAS through dlopen, kernels set by cpuid -===//

#include "jit/OpenBlasLibrary.h"

#include <cstdlib>
#include <dlfcn.h>

#if MODELC_HAVE_DNNL
#include <omp.h>
#endif

namespace modelc::jit {

CpuFeatures CpuFeatures::ofThisCpu() {
  CpuFeatures cpu;
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports also checks that the OS saves the AVX-512 state.
  __builtin_cpu_init();
  cpu.avx512f = __builtin_cpu_supports("avx512f");
  cpu.avx512cd = __builtin_cpu_supports("avx512cd");
  cpu.avx512bw = __builtin_cpu_supports("avx512bw");
  cpu.avx512dq = __builtin_cpu_supports("avx512dq");
  cpu.avx512vl = __builtin_cpu_supports("avx512vl");
  cpu.avx512bf16 = __builtin_cpu_supports("avx512bf16");
  cpu.avx2 = __builtin_cpu_supports("avx2");
  cpu.fma = __builtin_cpu_supports("fma");
#endif
  return cpu;
}

std::string openBlasCoreTypeFor(const CpuFeatures &cpu) {
  // OpenBLAS 0.3.21's dynamic cores, newest first; each needs what its
  // kernels use (kernel/x86_64/KERNEL.<CORE>). Zen and later AMD cores get
  // the same kernels under these names.
  if (cpu.avx512f && cpu.avx512cd && cpu.avx512bw && cpu.avx512dq && cpu.avx512vl)
    return cpu.avx512bf16 ? "Cooperlake" : "SkylakeX";
  if (cpu.avx2 && cpu.fma)
    return "Haswell";
  return {};
}

namespace {

/// The shared object names to try: Debian's alternative first.
constexpr const char *kLibraryNames[] = {"libopenblas.so.0", "libopenblas.so"};

template <typename F> bool bind(void *handle, const char *name, F &slot) {
  slot = reinterpret_cast<F>(dlsym(handle, name));
  return slot != nullptr;
}

OpenBlasLibrary *load() {
#if MODELC_HAVE_CBLAS
  // A host process may have loaded it already, with the kernels it got.
  bool loadedBefore = false;
  for (const char *name : kLibraryNames)
    if (void *loaded = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      loadedBefore = true;
      dlclose(loaded);
    }
  const char *userCore = std::getenv("OPENBLAS_CORETYPE");
  std::string core = openBlasCoreTypeFor(CpuFeatures::ofThisCpu());
  bool setCore = !loadedBefore && (!userCore || !*userCore) && !core.empty();
  if (setCore)
    setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  void *handle = nullptr;
  for (const char *name : kLibraryNames)
    if ((handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL)))
      break;
  // Leave the environment as the process had it (child processes, hosts).
  if (setCore)
    unsetenv("OPENBLAS_CORETYPE");
  if (!handle)
    return nullptr;
  auto *library = new OpenBlasLibrary;
  bool complete = bind(handle, "cblas_sgemm", library->sgemm) &&
                  bind(handle, "cblas_sgemv", library->sgemv) &&
                  bind(handle, "openblas_get_num_threads", library->getNumThreads) &&
                  bind(handle, "openblas_set_num_threads", library->setNumThreads) &&
                  bind(handle, "openblas_get_corename", library->getCoreName) &&
                  bind(handle, "openblas_get_config", library->getConfig);
  if (!complete) {
    delete library;
    return nullptr;
  }
  if (loadedBefore)
    library->coreOrigin = "as loaded before modelc";
  else if (setCore)
    library->coreOrigin = "set from the CPU's features";
  else if (userCore && *userCore)
    library->coreOrigin = std::string("OPENBLAS_CORETYPE=") + userCore + " (the environment's)";
  else
    library->coreOrigin = "as OpenBLAS detected them";
  return library;
#else
  return nullptr;
#endif
}

} // namespace

const OpenBlasLibrary *openBlasLibrary() {
  // Kept for the process's lifetime, as the library stays loaded.
  static OpenBlasLibrary *library = load();
  return library;
}

void setLibraryThreads(int threads) {
  if (const OpenBlasLibrary *openBlas = openBlasLibrary())
    openBlas->setNumThreads(threads);
#if MODELC_HAVE_DNNL
  omp_set_num_threads(threads);
#endif
}

} // namespace modelc::jit
