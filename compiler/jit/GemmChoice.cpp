//===- GemmChoice.cpp - the fastest GEMM kernel per shape class, measured -===//

#include "jit/GemmChoice.h"
#include "jit/GemmKernels.h"
#include "jit/OpenBlasLibrary.h"
#include "jit/Timing.h"
#include "runtime/MachineLoad.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#if MODELC_HAVE_DNNL
#include "jit/RuntimeThreads.h"

#include <dnnl.h>
#include <omp.h>
#endif

namespace modelc::jit {

llvm::StringRef gemmKernelName(GemmKernel kernel) {
  switch (kernel) {
  case GemmKernel::Auto:
    return "auto";
  case GemmKernel::OneDnnMatmul:
    return "onednn-matmul";
  case GemmKernel::OneDnnSgemm:
    return "onednn-sgemm";
  case GemmKernel::OpenBlas:
    return "openblas";
  case GemmKernel::Tiles:
    return "tiles";
  case GemmKernel::Loops:
    return "loops";
  }
  return "auto";
}

std::optional<GemmKernel> parseGemmKernel(llvm::StringRef name) {
  for (GemmKernel kernel : {GemmKernel::Auto, GemmKernel::OneDnnMatmul, GemmKernel::OneDnnSgemm,
                            GemmKernel::OpenBlas, GemmKernel::Tiles, GemmKernel::Loops})
    if (name == gemmKernelName(kernel))
      return kernel;
  return std::nullopt;
}

#if MODELC_HAVE_DNNL
constexpr bool kHaveDnnl = true;
#else
constexpr bool kHaveDnnl = false;
#endif

bool gemmKernelAvailable(GemmKernel kernel) {
  switch (kernel) {
  case GemmKernel::OneDnnMatmul:
  case GemmKernel::OneDnnSgemm:
    return kHaveDnnl;
  case GemmKernel::OpenBlas:
    return openBlasLibrary() != nullptr;
  case GemmKernel::Auto:
  case GemmKernel::Tiles:
  case GemmKernel::Loops:
    return true;
  }
  return false;
}

std::vector<GemmKernel> availableGemmKernels() {
  std::vector<GemmKernel> kernels;
  for (GemmKernel kernel : {GemmKernel::OneDnnMatmul, GemmKernel::OneDnnSgemm, GemmKernel::OpenBlas,
                            GemmKernel::Tiles, GemmKernel::Loops})
    if (gemmKernelAvailable(kernel))
      kernels.push_back(kernel);
  return kernels;
}

std::string openBlasCoreName() {
  if (const OpenBlasLibrary *blas = openBlasLibrary())
    if (const char *name = blas->getCoreName())
      return name;
  return {};
}

std::string cpuKernelLibraries() {
  std::string text;
#if MODELC_HAVE_DNNL
  const dnnl_version_t *version = dnnl_version();
  text += "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
          std::to_string(version->patch);
#else
  text += "no oneDNN";
#endif
  const OpenBlasLibrary *blas = openBlasLibrary();
  if (!blas)
    return text + "; no OpenBLAS";
  // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY ...".
  llvm::SmallVector<llvm::StringRef> words;
  llvm::StringRef(blas->getConfig()).split(words, ' ', -1, false);
  std::string name = words.size() >= 2 ? (words[0] + " " + words[1]).str() : "OpenBLAS";
  return text + "; " + name + " with its " + openBlasCoreName() + " kernels (" + blas->coreOrigin +
         ")";
}

namespace {

GemmKernel kernelFromEnvironment() {
  std::optional<std::string> value = llvm::sys::Process::GetEnv("MODELC_GEMM");
  if (!value || value->empty())
    return GemmKernel::Auto;
  std::optional<GemmKernel> kernel = parseGemmKernel(*value);
  if (!kernel) {
    llvm::errs() << "modelc: warning: MODELC_GEMM=" << *value
                 << " is not one of auto, onednn-matmul, onednn-sgemm, openblas, tiles, loops; "
                    "measuring instead\n";
    return GemmKernel::Auto;
  }
  return *kernel;
}

std::atomic<GemmKernel> &setting() {
  static std::atomic<GemmKernel> kernel{kernelFromEnvironment()};
  return kernel;
}

int threadCount() {
#if MODELC_HAVE_DNNL
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// ceil(log2(size)): products in one class differ by less than 2x per dim.
int sizeClass(int64_t size) {
  int bits = 0;
  while ((int64_t(1) << bits) < size && bits < 62)
    ++bits;
  return bits;
}

using ClassKey = std::tuple<int, int, int, bool, bool, int, int64_t>;

ClassKey classOf(const GemmProblem &p) {
  return {sizeClass(p.m), sizeClass(p.n), sizeClass(p.k), p.transposeA,
          p.transposeB,   threadCount(),  p.epilogue.code};
}

/// What identifies this machine and these libraries: a measured choice is
/// only valid for the same CPU model and library builds.
std::string machineIdentity() {
  // v2: choices measured on a busy machine are no longer saved; v3: the
  // tiles kernel is a candidate; v4: small products are timed warm
  // (Trial::timeOnce).
  std::string id = "modelc-gemm-choice v4\n";
  id += llvm::sys::getHostCPUName().str() + "\n";
  if (auto cpuinfo = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo")) {
    llvm::SmallVector<llvm::StringRef> lines;
    (*cpuinfo)->getBuffer().split(lines, '\n');
    for (llvm::StringRef line : lines)
      if (line.starts_with("model name") || line.starts_with("flags")) {
        id += line.str() + "\n";
        if (line.starts_with("flags"))
          break; // the first processor is enough
      }
  }
  id += "openblas " + openBlasCoreName() + "\n";
#if MODELC_HAVE_DNNL
  const dnnl_version_t *version = dnnl_version();
  id += "onednn " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
        std::to_string(version->patch) + " " + version->hash + "\n";
#endif
  return id;
}

std::optional<std::string> cacheDirectory() {
  if (std::optional<std::string> configured = llvm::sys::Process::GetEnv("MODELC_CACHE_DIR"))
    return configured->empty() ? std::nullopt : configured;
  llvm::SmallString<256> path;
  if (!llvm::sys::path::cache_directory(path))
    return std::nullopt;
  llvm::sys::path::append(path, "modelc");
  return std::string(path);
}

/// Measured choices: loaded from the file on first use, saved after each
/// new measurement. One mutex also serialises measurements, so two threads
/// do not time kernels against each other.
struct ChoiceTable {
  std::mutex mutex;
  bool loaded = false;
  std::string file;
  std::map<ClassKey, GemmKernel> choices;
  /// Measured while the machine was busy: used by this process, not saved.
  std::set<ClassKey> provisional;

  void loadLocked() {
    if (loaded)
      return;
    loaded = true;
    file = gemmChoiceFile();
    if (file.empty())
      return;
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
    if (!buffer)
      return;
    llvm::SmallVector<llvm::StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (llvm::StringRef line : lines) {
      llvm::SmallVector<llvm::StringRef> words;
      line.split(words, ' ', -1, false);
      int64_t v[7];
      std::optional<GemmKernel> kernel;
      if (words.size() != 8 || !(kernel = parseGemmKernel(words[7])) ||
          !gemmKernelAvailable(*kernel) || *kernel == GemmKernel::Auto)
        continue;
      bool ok = true;
      for (int i = 0; i < 7; ++i)
        ok = ok && !words[size_t(i)].getAsInteger(10, v[i]);
      if (ok)
        choices[ClassKey{int(v[0]), int(v[1]), int(v[2]), v[3] != 0, v[4] != 0, int(v[5]), v[6]}] =
            *kernel;
    }
  }

  /// Writes every choice (a temporary file renamed over the old one, so a
  /// reader never sees half a file).
  void saveLocked() {
    if (file.empty())
      return;
    llvm::sys::fs::create_directories(llvm::sys::path::parent_path(file));
    std::string temp = file + ".tmp" + std::to_string(llvm::sys::Process::getProcessId());
    {
      std::error_code error;
      llvm::raw_fd_ostream out(temp, error);
      if (error)
        return;
      out << "# m n k (log2, rounded up) transA transB threads epilogue kernel\n";
      for (auto &[key, kernel] : choices) {
        if (provisional.count(key))
          continue;
        auto [m, n, k, ta, tb, threads, code] = key;
        out << m << ' ' << n << ' ' << k << ' ' << int(ta) << ' ' << int(tb) << ' ' << threads
            << ' ' << code << ' ' << gemmKernelName(kernel) << "\n";
      }
    }
    if (llvm::sys::fs::rename(temp, file))
      llvm::sys::fs::remove(temp);
  }
};

ChoiceTable &table() {
  static ChoiceTable instance;
  return instance;
}

/// Products faster than this are timed right after an untimed run of the
/// same kernel (Trial::timeOnce).
constexpr double kRewarmUnderSeconds = 1e-3;

/// One kernel's timed runs of a problem into a scratch copy of c.
struct Trial {
  GemmKernel kernel = GemmKernel::Loops;
  GemmProblem problem;
  std::vector<float> scratch;
  int reps = 0;
  double fastest = INFINITY;
  /// Whether each timed run follows an untimed one (small products).
  bool rewarm = false;

  /// Two untimed runs (the first creates primitives and packs, the second
  /// wakes the OpenMP team) and `reps` for ~5 ms of timed ones, at least
  /// five; false when the kernel declines the operands.
  bool prepare(GemmKernel chosen, const GemmProblem &original) {
    kernel = chosen;
    scratch.resize(size_t(original.m * original.n));
    problem = original;
    problem.c = scratch.data();
    problem.ldc = original.n;
    for (int64_t i = 0; i < original.m; ++i)
      std::copy_n(original.c + i * original.ldc, original.n, scratch.data() + i * original.n);
    if (!runGemmKernel(kernel, problem))
      return false;
    double warm = secondsOf([&] { runGemmKernel(kernel, problem); });
    reps = int(std::clamp(0.005 / std::max(warm, 1e-7), 5.0, 50.0));
    rewarm = warm < kRewarmUnderSeconds;
    return true;
  }
  /// One timed run. A small product is timed as a model runs it, its
  /// operands in cache from its own previous call: the other kernels' turns
  /// in between (oneDNN's reordered copy of B among them) would have
  /// evicted them, and a kernel that prefetches well from L3 would win
  /// what at run time is a race from L2 (an 803 KB weight at batch 1).
  void timeOnce() {
    if (rewarm)
      runGemmKernel(kernel, problem);
    fastest = std::min(fastest, secondsOf([&] { runGemmKernel(kernel, problem); }));
  }
};

/// Times each library kernel on the call's operands (Trial); the fastest
/// by minimum time wins: about 5 ms per kernel for small products, a few
/// calls for large ones. The kernels take turns, one timed run each per
/// round, so that a slow spell of the machine falls on all of them rather
/// than on one kernel's whole turn.
GemmKernel measure(const GemmProblem &problem) {
  std::vector<Trial> trials;
  for (GemmKernel kernel : availableGemmKernels()) {
    if (kernel == GemmKernel::Loops)
      continue;
    // Each trial's problem points into its own scratch buffer, which a
    // move of the vector keeps.
    if (!trials.emplace_back().prepare(kernel, problem))
      trials.pop_back();
  }
  int rounds = 0;
  for (const Trial &t : trials)
    rounds = std::max(rounds, t.reps);
  for (int round = 0; round < rounds; ++round)
    for (Trial &t : trials)
      if (round < t.reps)
        t.timeOnce();
  GemmKernel best = GemmKernel::Loops;
  double bestTime = INFINITY;
  for (const Trial &t : trials)
    if (t.fastest < bestTime) {
      bestTime = t.fastest;
      best = t.kernel;
    }
  return best;
}

GemmKernel chooseKernel(const GemmProblem &problem) {
  GemmKernel forced = gemmKernelSetting();
  if (forced != GemmKernel::Auto)
    return forced;
  ChoiceTable &choices = table();
  std::lock_guard<std::mutex> lock(choices.mutex);
  choices.loadLocked();
  ClassKey key = classOf(problem);
  auto found = choices.choices.find(key);
  if (found != choices.choices.end())
    return found->second;
  GemmKernel best = measure(problem);
  choices.choices[key] = best;
  if (machineBusyForMeasuring())
    choices.provisional.insert(key);
  else
    choices.saveLocked();
  return best;
}

#if MODELC_HAVE_DNNL

/// Whether `problem` runs on the calling thread (RuntimeThreads.h). Small
/// products do, large ones do not; in between (1M-16M multiply-adds) it is
/// measured per shape class and process (first call and again later,
/// ThreadDecision), each way with the kernel
/// chosen for it: a second core pays there on a quiet machine (MLP batch
/// 64 on 2 threads), while on a loaded one a descheduled OpenMP worker can
/// cost more than it saves. Parallel must win by 10% to be kept.
/// `measure` false: never time, the threshold decides what is not known.
bool runsSerially(const GemmProblem &problem, bool measure) {
  double macs = problem.macs();
  if (omp_get_max_threads() <= 1 || macs >= kParallelMinMacs)
    return false;
  if (macs < kMeasuredThreadsMinMacs &&
      double(problem.k) * double(problem.n) * sizeof(float) < kMeasuredThreadsMinBBytes)
    return true;
  static std::mutex mutex;
  static std::map<ClassKey, ThreadDecision> decisions;
  std::lock_guard<std::mutex> lock(mutex);
  ClassKey key = classOf(problem);
  if (!measure || !problem.c) {
    auto found = decisions.find(key);
    return found == decisions.end() || found->second.serial;
  }
  ThreadDecision &decision = decisions[key];
  if (!decision.measureNow())
    return decision.serial;
  // Both ways take turns, one timed run each per round (as the kernels do
  // in `measure`): measured one after the other, a transient on the other
  // core (a process starting beside this one) fell on the parallel runs
  // only, and the MLP at batch 64 kept one thread (243 µs against 135).
  Trial parallel, serial;
  parallel.prepare(chooseKernel(problem), problem);
  {
    SerialScope one(true);
    serial.prepare(chooseKernel(problem), problem);
  }
  for (int round = 0; round < std::max(parallel.reps, serial.reps); ++round) {
    if (round < parallel.reps)
      parallel.timeOnce();
    if (round < serial.reps) {
      SerialScope one(true);
      serial.timeOnce();
    }
  }
  decision.serial = !(parallel.fastest < 0.9 * serial.fastest);
  return decision.serial;
}

#endif

} // namespace

GemmKernel gemmKernelSetting() {
  GemmKernel kernel = setting().load();
  if (gemmKernelAvailable(kernel))
    return kernel;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    llvm::errs() << "modelc: warning: the GEMM kernel '" << gemmKernelName(kernel)
                 << "' is not in this build; measuring instead\n";
  });
  return GemmKernel::Auto;
}

void setGemmKernel(GemmKernel kernel) { setting().store(kernel); }

std::string gemmChoiceFile() {
  std::optional<std::string> dir = cacheDirectory();
  if (!dir)
    return {};
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(machineIdentity()));
  llvm::SmallString<256> path(*dir);
  llvm::sys::path::append(path, "gemm-" + llvm::toHex(llvm::ArrayRef(digest).take_front(8), true) +
                                    ".txt");
  return std::string(path);
}

bool machineBusyForMeasuring() { return runtime::machineBusyForMeasuring(); }

void assumeLoadAverage(std::optional<double> load) { runtime::assumeLoadAverage(load); }

void clearGemmChoices() {
  ChoiceTable &choices = table();
  std::lock_guard<std::mutex> lock(choices.mutex);
  choices.choices.clear();
  choices.provisional.clear();
  choices.loaded = false;
}

GemmKernel measuredGemmKernel(int64_t m, int64_t n, int64_t k) {
  GemmProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
#if MODELC_HAVE_DNNL
  SerialScope serial(runsSerially(problem, /*measure=*/false)); // as runGemm decided
#endif
  ChoiceTable &choices = table();
  std::lock_guard<std::mutex> lock(choices.mutex);
  choices.loadLocked();
  auto found = choices.choices.find(classOf(problem));
  return found == choices.choices.end() ? GemmKernel::Auto : found->second;
}

void runGemm(const GemmProblem &problem) {
#if MODELC_HAVE_DNNL
  // Decided before the choice, whose shape class includes the thread count.
  SerialScope serial(runsSerially(problem, /*measure=*/true));
#endif
  GemmKernel chosen = chooseKernel(problem);
  if (runGemmKernel(chosen, problem))
    return;
  // The chosen library declined these operands: the next one that takes them.
  for (GemmKernel kernel : availableGemmKernels())
    if (kernel != chosen && runGemmKernel(kernel, problem))
      return;
}

} // namespace modelc::jit
