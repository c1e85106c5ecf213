//===- gemm_bench.cpp - SGEMM peak, oneDNN, OpenBLAS, MLIR-generated matmul ==//
//
// Prints two tables (docs/performance.md explains the choice they inform):
//
//   * the machine's f32 FMA peak on one core: FMA loops (AVX-512 where the
//     CPU has it, and AVX2) with 8 to 30 independent accumulators, enough to
//     keep every FMA pipe busy through the FMA latency; the best of them. It
//     must be at least the best SGEMM measured below, else the probe is
//     wrong and the tool says so and exits with status 1;
//   * each GEMM kernel of the runtime (jit/GemmChoice.h: oneDNN's matmul
//     primitive, dnnl_sgemm, OpenBLAS -- whose core name is printed) forced
//     in turn, and the measured choice, at the shapes the benchmark models run
//     (and a large square one), through the entry point compiled code calls
//     (modelc_sgemm);
//   * MLIR-generated code for the same linalg.matmul: the cpu pipeline's
//     loops (`--no-blas`) and a tiled + vectorised schedule (transform
//     dialect: 4x32 register tiles, 16-deep k slices, vector.contract lowered
//     to broadcast + FMA outer products);
//   * then each kernel on the reading Linear layers give it: B = W.T of a
//     constant weight (kEpilogueConstantB), which oneDNN's matmul and the
//     tiles (jit/TileGemm.h) keep in their own layout after the first call.
//
// With --floor-bytes N it instead measures the time to read N bytes (the
// weights of a model) from cache-warm and cache-cold memory and prints one
// JSON line.
//
//===----------------------------------------------------------------------===//

#include "jit/BlasRuntime.h"
#include "jit/ConstantWeights.h"
#include "jit/GemmChoice.h"
#include "jit/GemmKernels.h"
#include "jit/Jit.h"

#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <dlfcn.h>
#include <immintrin.h>
#include <random>
#include <string>
#include <vector>

namespace cl = llvm::cl;
using Clock = std::chrono::steady_clock;

namespace {

cl::OptionCategory toolOptions("modelc-gemm-bench options");
cl::opt<uint64_t> floorBytesOpt(cl::cat(toolOptions), "floor-bytes",
                                cl::desc("Only measure the time to read this many bytes"));
cl::opt<double> minSecondsOpt(cl::cat(toolOptions), "seconds", cl::init(0.15),
                              cl::desc("Minimum timed work per measurement"));
cl::opt<bool> skipVectorOpt(cl::cat(toolOptions), "skip-vectorized",
                            cl::desc("Leave out the transform-dialect schedule"));
cl::opt<bool> skipLoopsOpt(cl::cat(toolOptions), "skip-loops",
                           cl::desc("Leave out the scalar-loop lowering"));

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Median seconds per call of `fn`, over repetitions filling minSecondsOpt.
template <typename Fn> double timePerCall(Fn &&fn) {
  fn();
  auto start = Clock::now();
  fn();
  double once = std::max(secondsSince(start), 1e-7);
  int inner = std::max(1, int(0.01 / once));
  std::vector<double> samples;
  auto total = Clock::now();
  while (samples.size() < 5 || secondsSince(total) < minSecondsOpt) {
    auto t = Clock::now();
    for (int i = 0; i < inner; ++i)
      fn();
    samples.push_back(secondsSince(t) / inner);
    if (samples.size() > 2000)
      break;
  }
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

//===----------------------------------------------------------------------===//
// Peak
//===----------------------------------------------------------------------===//

/// Sums the lanes (GCC 12's _mm512_reduce_add_ps warns inside its header).
__attribute__((target("avx512f"))) float sumLanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

/// `Chains` independent FMA chains of 16 (AVX-512) lanes: with two FMA
/// pipes of latency 4 at least 8 must be in flight; more hide the loop and
/// scheduling. Returns FLOPs done.
template <int Chains>
__attribute__((target("avx512f"), noinline)) double fmaLoop512(int64_t iterations, float *sink) {
  __m512 acc[Chains];
  for (int i = 0; i < Chains; ++i)
    acc[i] = _mm512_set1_ps(float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < Chains; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < Chains; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  *sink = sumLanes(sum);
  return double(iterations) * Chains * 16 * 2;
}

/// The same with 8-lane AVX2 FMAs (16 registers: at most 14 chains).
template <int Chains>
__attribute__((target("avx2,fma"), noinline)) double fmaLoop256(int64_t iterations, float *sink) {
  __m256 acc[Chains];
  for (int i = 0; i < Chains; ++i)
    acc[i] = _mm256_set1_ps(float(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < Chains; ++i)
      acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  alignas(32) float lanes[8];
  __m256 sum = acc[0];
  for (int i = 1; i < Chains; ++i)
    sum = _mm256_add_ps(sum, acc[i]);
  _mm256_store_ps(lanes, sum);
  *sink = lanes[0] + lanes[7];
  return double(iterations) * Chains * 8 * 2;
}

struct Peak {
  double gflops = 0;
  std::string how;
};

/// The best of the FMA loops this CPU runs.
Peak measurePeak() {
  using Loop = double (*)(int64_t, float *);
  std::vector<std::pair<std::string, Loop>> loops;
  if (__builtin_cpu_supports("avx512f"))
    loops.insert(loops.end(), {{"AVX-512, 8 chains", &fmaLoop512<8>},
                               {"AVX-512, 12 chains", &fmaLoop512<12>},
                               {"AVX-512, 16 chains", &fmaLoop512<16>},
                               {"AVX-512, 24 chains", &fmaLoop512<24>},
                               {"AVX-512, 30 chains", &fmaLoop512<30>}});
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    loops.insert(loops.end(),
                 {{"AVX2, 8 chains", &fmaLoop256<8>}, {"AVX2, 12 chains", &fmaLoop256<12>}});
  Peak peak;
  float sink = 0;
  for (auto &[how, loop] : loops) {
    loop(1 << 18, &sink);
    // Many short runs (about a millisecond each): the best one falls in a
    // time slice that no other process shares, also on a loaded machine.
    for (int rep = 0; rep < 60; ++rep) {
      auto start = Clock::now();
      double flops = loop(200'000, &sink);
      double gflops = flops / secondsSince(start) / 1e9;
      if (gflops > peak.gflops)
        peak = {gflops, how};
    }
  }
  return peak;
}

//===----------------------------------------------------------------------===//
// Read floor
//===----------------------------------------------------------------------===//

__attribute__((target("avx512f"), noinline)) float readAll(const float *data, size_t count) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  size_t i = 0;
  for (; i + 64 <= count; i += 64)
    for (int j = 0; j < 4; ++j)
      acc[j] = _mm512_add_ps(acc[j], _mm512_loadu_ps(data + i + 16 * j));
  float tail = 0;
  for (; i < count; ++i)
    tail += data[i];
  return sumLanes(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]))) +
         tail;
}

int measureFloor(uint64_t bytes) {
  size_t count = bytes / sizeof(float);
  std::vector<float> weights(count, 1.0f);
  std::vector<float> evict(size_t(96) << 20 >> 2, 2.0f); // 96 MiB > the 32 MiB L3
  volatile float sink = 0;
  std::vector<double> warm, cold;
  for (int rep = 0; rep < 2000; ++rep) {
    auto start = Clock::now();
    sink = sink + readAll(weights.data(), count);
    warm.push_back(secondsSince(start));
  }
  for (int rep = 0; rep < 30; ++rep) {
    for (size_t i = 0; i < evict.size(); i += 16)
      evict[i] += 1.0f;
    auto start = Clock::now();
    sink = sink + readAll(weights.data(), count);
    cold.push_back(secondsSince(start));
  }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  llvm::outs() << llvm::format("{\"bytes\": %llu, \"warm_us\": %.2f, \"cold_us\": %.2f, "
                               "\"warm_min_us\": %.2f}\n",
                               (unsigned long long)bytes, median(warm) * 1e6, median(cold) * 1e6,
                               *std::min_element(warm.begin(), warm.end()) * 1e6);
  return 0;
}

//===----------------------------------------------------------------------===//
// GEMM variants
//===----------------------------------------------------------------------===//

struct Shape {
  const char *what;
  int64_t m, n, k;
};

/// C[m,n] += A[m,k] * B[k,n], all row-major: the layout both MLIR variants
/// get (a compiler that owns the weights can pre-transpose them once).
struct Problem {
  Shape shape;
  std::vector<float> a, b, c;
  StridedMemRefType<float, 2> aRef, bRef, cRef;

  explicit Problem(Shape s)
      : shape(s), a(size_t(s.m * s.k)), b(size_t(s.k * s.n)), c(size_t(s.m * s.n)) {
    std::mt19937 gen(42);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float &v : a)
      v = dist(gen);
    for (float &v : b)
      v = dist(gen);
    aRef = view(a.data(), s.m, s.k);
    bRef = view(b.data(), s.k, s.n);
    cRef = view(c.data(), s.m, s.n);
  }
  static StridedMemRefType<float, 2> view(float *data, int64_t rows, int64_t cols) {
    StridedMemRefType<float, 2> r;
    r.basePtr = r.data = data;
    r.offset = 0;
    r.sizes[0] = rows;
    r.sizes[1] = cols;
    r.strides[0] = cols;
    r.strides[1] = 1;
    return r;
  }
  double flops() const { return 2.0 * double(shape.m) * double(shape.n) * double(shape.k); }
};

std::string matmulModule(const Shape &s, llvm::StringRef schedule) {
  std::string a = llvm::formatv("{0}x{1}xf32", s.m, s.k).str();
  std::string b = llvm::formatv("{0}x{1}xf32", s.k, s.n).str();
  std::string c = llvm::formatv("{0}x{1}xf32", s.m, s.n).str();
  return llvm::formatv(R"mlir(
func.func @mm(%a: memref<{0}>, %b: memref<{1}>, %c: memref<{2}>) attributes {{llvm.emit_c_interface} {{
  linalg.matmul ins(%a, %b : memref<{0}>, memref<{1}>) outs(%c : memref<{2}>)
  return
}
{3}
)mlir",
                       a, b, c, schedule)
      .str();
}

/// 4x32 register tiles over 16-deep k slices, vectorised with masks for
/// remainders; vector.contract becomes outer products (broadcast + FMA).
/// (Deeper schedules -- cache tiles, k step 1 with hoisted accumulators --
/// made mlir-opt 22 run for minutes and use >10 GB here: left out.)
std::string vectorSchedule(const Shape &s) {
  int64_t tm = std::min<int64_t>(s.m, 4), tn = std::min<int64_t>(s.n, 32),
          tk = std::min<int64_t>(s.k, 16);
  return llvm::formatv(R"mlir(
module attributes {{transform.with_named_sequence} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}) {{
    %mm = transform.structured.match ops{{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l0, %l1, %l2 = transform.structured.tile_using_for %mm tile_sizes [{0}, {1}, {2}] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.structured.vectorize %t vector_sizes [{0}, {1}, {2}] : !transform.any_op
    %f = transform.structured.match ops{{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.apply_patterns to %f {{
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_masks
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
}
)mlir",
                       tm, tn, tk)
      .str();
}

using MatmulFn = void (*)(void **);

/// Compiles `source` (memref matmul + optional transform schedule) for the
/// host at O3. Keeps the engine alive in `engines`.
llvm::Expected<MatmulFn>
compileVectorized(mlir::MLIRContext &ctx, const std::string &source,
                  std::vector<std::unique_ptr<mlir::ExecutionEngine>> &engines) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, mlir::ParserConfig(&ctx));
  if (!module)
    return llvm::createStringError("cannot parse the matmul module");
  mlir::PassManager interp(&ctx);
  if (failed(mlir::parsePassPipeline("transform-interpreter", interp)) ||
      failed(interp.run(*module)))
    return llvm::createStringError("the transform schedule failed");
  // The schedule has done its work; drop it before lowering.
  llvm::SmallVector<mlir::Operation *> schedules;
  for (mlir::Operation &op : module->getBody()->getOperations())
    if (isa<mlir::ModuleOp>(op))
      schedules.push_back(&op);
  for (mlir::Operation *op : schedules)
    op->erase();
  mlir::PassManager pm(&ctx);
  if (failed(mlir::parsePassPipeline(
          "func.func(convert-linalg-to-loops,convert-vector-to-scf),expand-strided-metadata,"
          "lower-affine,convert-scf-to-cf,convert-vector-to-llvm,finalize-memref-to-llvm,"
          "convert-to-llvm,reconcile-unrealized-casts",
          pm)) ||
      failed(pm.run(*module)))
    return llvm::createStringError("lowering the vectorised matmul failed");
  auto machineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder)
    return machineBuilder.takeError();
  machineBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto targetMachine = machineBuilder->createTargetMachine();
  if (!targetMachine)
    return targetMachine.takeError();
  mlir::ExecutionEngineOptions options;
  std::function<llvm::Error(llvm::Module *)> transformer =
      mlir::makeOptimizingTransformer(3, 0, targetMachine->get());
  options.transformer = transformer;
  auto engine = mlir::ExecutionEngine::create(*module, options, std::move(*targetMachine));
  if (!engine)
    return engine.takeError();
  auto fn = (*engine)->lookupPacked("_mlir_ciface_mm");
  if (!fn)
    return fn.takeError();
  engines.push_back(std::move(*engine));
  return *fn;
}

/// OpenBLAS's and OpenMP's (oneDNN's) thread counts, through their own APIs
/// when loaded.
void setBlasThreads(int threads) {
  // modelc loads OpenBLAS on first use (jit/OpenBlasLibrary.h), which then
  // reads its thread count from here; one loaded already takes the call below.
  setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  using SetThreads = void (*)(int);
  for (const char *name : {"openblas_set_num_threads", "omp_set_num_threads"})
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, name)))
      set(threads);
}

double maxAbsDiff(const std::vector<float> &x, const std::vector<float> &y) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, double(std::abs(x[i] - y[i])));
  return worst;
}

} // namespace

int main(int argc, char **argv) {
  // Only this tool's options in --help, not every LLVM option linked in.
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv, "modelc-gemm-bench: SGEMM peak and choices\n");
  if (floorBytesOpt)
    return measureFloor(floorBytesOpt);
  setBlasThreads(1);

  Peak measured = measurePeak();
  double peak = measured.gflops;
  llvm::outs() << llvm::format("f32 FMA peak, 1 core: %.0f GFLOP/s (%s)\n", peak,
                               measured.how.c_str());
  std::string core = modelc::jit::openBlasCoreName();
  llvm::outs() << "OpenBLAS core: " << (core.empty() ? "(not in this build)" : core)
               << "; GEMM choices kept in " << modelc::jit::gemmChoiceFile() << "\n\n";
  double bestSgemm = 0;
  std::string bestWhere;

  const Shape shapes[] = {
      {"mlp fc1, B=1", 1, 256, 784},
      {"mlp fc1, B=64", 64, 256, 784},
      {"mlp fc1, B=256", 256, 256, 784},
      {"lenet conv1 im2col, B=1", 784, 6, 25},
      {"lenet conv2 im2col, B=1", 100, 16, 150},
      {"lenet conv2 im2col, B=64", 6400, 16, 150},
      {"lenet fc1, B=64", 64, 120, 400},
      {"block fc1, B=1", 1, 4096, 1024},
      {"block fc1, B=64", 64, 4096, 1024},
      {"block fc2, B=256", 256, 1024, 4096},
      {"encoder q/k/v/out proj, B=64", 2048, 256, 256},
      {"encoder linear1, B=64", 2048, 1024, 256},
      {"encoder linear2, B=64", 2048, 256, 1024},
      {"encoder head scores", 32, 32, 64},
      {"square 1024", 1024, 1024, 1024},
  };

  mlir::DialectRegistry registry;
  modelc::jit::registerJitDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::vector<std::unique_ptr<mlir::ExecutionEngine>> engines;
  std::vector<std::unique_ptr<modelc::jit::JitModule>> loopModules;

  llvm::outs() << "1 thread; GFLOP/s and % of the FMA peak; median of repeated calls\n";
  using modelc::jit::GemmKernel;
  std::vector<GemmKernel> kernels;
  for (GemmKernel kernel : modelc::jit::availableGemmKernels())
    if (kernel != GemmKernel::Loops)
      kernels.push_back(kernel);
  llvm::outs() << "| shape | M x N x K |";
  for (GemmKernel kernel : kernels)
    llvm::outs() << " " << modelc::jit::gemmKernelName(kernel) << " |";
  llvm::outs() << " measured choice | MLIR loops (--no-blas) | MLIR tiled+vectorised |\n|---|---|";
  for (size_t i = 0; i < kernels.size() + 3; ++i)
    llvm::outs() << "---|";
  llvm::outs() << "\n";
  // One table cell: GFLOP/s and % of the peak; the best of every cell of
  // both tables is held against the peak probe.
  auto cellFor = [&](const Problem &p, double seconds, const llvm::Twine &what) {
    double gflops = p.flops() / seconds / 1e9;
    if (gflops > bestSgemm) {
      bestSgemm = gflops;
      bestWhere = (what + " at " + p.shape.what).str();
    }
    return llvm::formatv("{0:F1} ({1:F0}%)", gflops, 100 * gflops / peak).str();
  };
  // The reference result: the plain loop.
  auto loopsProduct = [](Problem &p) {
    std::fill(p.c.begin(), p.c.end(), 0.0f);
    modelc::jit::setGemmKernel(GemmKernel::Loops);
    modelc_sgemm_ciface(&p.aRef, &p.bRef, &p.cRef);
    return p.c;
  };
  for (const Shape &s : shapes) {
    Problem p(s);
    auto cell = [&](double seconds, llvm::StringRef what) { return cellFor(p, seconds, what); };
    std::vector<float> expected = loopsProduct(p);
    std::string library;
    for (GemmKernel kernel : kernels) {
      modelc::jit::setGemmKernel(kernel);
      std::fill(p.c.begin(), p.c.end(), 0.0f);
      modelc_sgemm_ciface(&p.aRef, &p.bRef, &p.cRef);
      library += " " +
                 (maxAbsDiff(p.c, expected) < 1e-4 * s.k
                      ? cell(timePerCall([&] { modelc_sgemm_ciface(&p.aRef, &p.bRef, &p.cRef); }),
                             modelc::jit::gemmKernelName(kernel))
                      : std::string("wrong result")) +
                 " |";
    }
    modelc::jit::setGemmKernel(GemmKernel::Auto);
    modelc_sgemm_ciface(&p.aRef, &p.bRef, &p.cRef); // measures this shape class
    library += " " +
               modelc::jit::gemmKernelName(modelc::jit::measuredGemmKernel(s.m, s.n, s.k)).str() +
               " |";

    std::string loops = "-";
    if (!skipLoopsOpt && p.flops() < 6e8) {
      modelc::jit::JitOptions options;
      options.useBlas = false;
      std::string source = llvm::formatv(R"mlir(
func.func @mm(%a: tensor<{0}x{2}xf32>, %b: tensor<{2}x{1}xf32>, %c: tensor<{0}x{1}xf32>) -> tensor<{0}x{1}xf32> {{
  %r = linalg.matmul ins(%a, %b : tensor<{0}x{2}xf32>, tensor<{2}x{1}xf32>) outs(%c : tensor<{0}x{1}xf32>) -> tensor<{0}x{1}xf32>
  return %r : tensor<{0}x{1}xf32>
}
)mlir",
                                         s.m, s.n, s.k)
                               .str();
      auto compiled = modelc::jit::JitModule::compileSource(source, options);
      if (!compiled) {
        loops = "fails: " + llvm::toString(compiled.takeError()).substr(0, 60);
      } else {
        auto fn = (*compiled)->lookupPacked("mm");
        if (fn) {
          std::vector<float> out(p.c.size());
          StridedMemRefType<float, 2> outRef = Problem::view(out.data(), s.m, s.n);
          void *args[] = {&p.aRef, &p.bRef, &p.cRef, &outRef};
          void *packed[] = {&args[0], &args[1], &args[2], &args[3]};
          std::fill(p.c.begin(), p.c.end(), 0.0f);
          (*fn)(packed);
          loops = maxAbsDiff(out, expected) < 1e-3 * s.k
                      ? cell(timePerCall([&] { (*fn)(packed); }), "MLIR loops")
                      : std::string("wrong result");
        } else {
          llvm::consumeError(fn.takeError());
        }
        loopModules.push_back(std::move(*compiled));
      }
    }

    std::string vectorized = "-";
    if (!skipVectorOpt) {
      auto fn = compileVectorized(ctx, matmulModule(s, vectorSchedule(s)), engines);
      if (!fn) {
        vectorized = "fails: " + llvm::toString(fn.takeError());
      } else {
        void *args[] = {&p.aRef, &p.bRef, &p.cRef};
        void *packed[] = {&args[0], &args[1], &args[2]};
        std::fill(p.c.begin(), p.c.end(), 0.0f);
        (*fn)(packed);
        vectorized = maxAbsDiff(p.c, expected) < 1e-3 * s.k
                         ? cell(timePerCall([&] { (*fn)(packed); }), "MLIR tiled")
                         : std::string("wrong result");
      }
    }
    llvm::outs() << llvm::formatv("| {0} | {1} x {2} x {3} |{4} {5} | {6} |\n", s.what, s.m, s.n,
                                  s.k, library, loops, vectorized);
    llvm::outs().flush();
  }
  // The reading models run: x @ W.T with W a constant [n, k] weight
  // (kEpilogueConstantB), which oneDNN's matmul and the tiles keep in their
  // own layout after the first call.
  llvm::outs()
      << "\nLinear-layer reading: B = W.T of a constant weight W [n, k]\n| shape | M x N x K |";
  for (GemmKernel kernel : kernels)
    llvm::outs() << " " << modelc::jit::gemmKernelName(kernel) << " |";
  llvm::outs() << "\n|---|---|";
  for (size_t i = 0; i < kernels.size(); ++i)
    llvm::outs() << "---|";
  llvm::outs() << "\n";
  for (const Shape &s : shapes) {
    Problem p(s);
    std::vector<float> weight(size_t(s.n * s.k));
    for (int64_t j = 0; j < s.n; ++j) // W[j, q] = B[q, j]: the same product
      for (int64_t q = 0; q < s.k; ++q)
        weight[size_t(j * s.k + q)] = p.b[size_t(q * s.n + j)];
    StridedMemRefType<float, 2> wT = Problem::view(weight.data(), s.k, s.n);
    wT.strides[0] = 1;
    wT.strides[1] = s.k;
    std::vector<float> expected = loopsProduct(p);
    std::string row;
    for (GemmKernel kernel : kernels) {
      modelc::jit::setGemmKernel(kernel);
      auto call = [&] {
        modelc_matmul_epilogue_ciface(&p.aRef, &wT, &p.cRef, &p.cRef, &p.cRef,
                                      modelc::jit::kEpilogueConstantB);
      };
      std::fill(p.c.begin(), p.c.end(), 0.0f);
      call();
      row += " " +
             (maxAbsDiff(p.c, expected) < 1e-4 * s.k
                  ? cellFor(p, timePerCall(call), modelc::jit::gemmKernelName(kernel) + " with W.T")
                  : std::string("wrong result")) +
             " |";
    }
    modelc::jit::setGemmKernel(GemmKernel::Auto);
    modelc::jit::forgetConstantWeights(weight.data(), weight.size() * sizeof(float));
    llvm::outs() << llvm::formatv("| {0} | {1} x {2} x {3} |{4}\n", s.what, s.m, s.n, s.k, row);
    llvm::outs().flush();
  }
  if (bestSgemm > peak) {
    llvm::errs() << llvm::format("error: the FMA peak probe (%.0f GFLOP/s) is below the best SGEMM "
                                 "measured (%.0f GFLOP/s, %s): the probe is wrong\n",
                                 peak, bestSgemm, bestWhere.c_str());
    return 1;
  }
  llvm::outs() << llvm::format("best SGEMM %.0f GFLOP/s (%s) = %.0f%% of the FMA peak\n", bestSgemm,
                               bestWhere.c_str(), 100 * bestSgemm / peak);
  return 0;
}
