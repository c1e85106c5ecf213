//===- gemm_bench.cpp - SGEMM peak, oneDNN, OpenBLAS, MLIR-generated matmul ==//
//
// Prints one table (docs/performance.md explains the choice it informs):
//
//   * the machine's f32 FMA peak on one core, measured with an AVX-512 FMA
//     loop with enough independent accumulators to cover the FMA latency;
//   * oneDNN's dnnl_sgemm at the shapes the benchmark models run (and a
//     large square one), through the same entry point compiled code calls
//     (modelc_sgemm), and OpenBLAS called directly as that entry point did
//     before (cblas_sgemm, cblas_sgemv for one row);
//   * MLIR-generated code for the same linalg.matmul: the cpu pipeline's
//     loops (`--no-blas`) and a tiled + vectorised schedule (transform
//     dialect: 4x32 register tiles, 16-deep k slices, vector.contract lowered
//     to broadcast + FMA outer products).
//
// With --floor-bytes N it instead measures the time to read N bytes (the
// weights of a model) from cache-warm and cache-cold memory and prints one
// JSON line.
//
//===----------------------------------------------------------------------===//

#include "jit/BlasRuntime.h"
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

#if MODELC_HAVE_CBLAS
#include <cblas.h>
#endif

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <immintrin.h>
#include <random>
#include <vector>

namespace cl = llvm::cl;
using Clock = std::chrono::steady_clock;

namespace {

cl::opt<uint64_t> floorBytesOpt("floor-bytes",
                                cl::desc("Only measure the time to read this many bytes"));
cl::opt<double> minSecondsOpt("seconds", cl::init(0.15),
                              cl::desc("Minimum timed work per measurement"));
cl::opt<bool> skipVectorOpt("skip-vectorized",
                            cl::desc("Leave out the transform-dialect schedule"));
cl::opt<bool> skipLoopsOpt("skip-loops", cl::desc("Leave out the scalar-loop lowering"));

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

/// 16 independent 16-wide FMA chains: enough to keep two FMA pipes of
/// latency 4 busy. Returns FLOPs done.
/// Sums the lanes (GCC 12's _mm512_reduce_add_ps warns inside its header).
__attribute__((target("avx512f"))) float sumLanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

__attribute__((target("avx512f"), noinline)) double fmaLoop(int64_t iterations, float *sink) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i)
    acc[i] = _mm512_set1_ps(float(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < 16; ++i)
    sum = _mm512_add_ps(sum, acc[i]);
  *sink = sumLanes(sum);
  return double(iterations) * 16 * 16 * 2;
}

double measurePeakGflops() {
  float sink = 0;
  fmaLoop(1 << 20, &sink);
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    auto start = Clock::now();
    double flops = fmaLoop(20'000'000, &sink);
    best = std::max(best, flops / secondsSince(start) / 1e9);
  }
  return best;
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
  using SetThreads = void (*)(int);
  for (const char *name : {"openblas_set_num_threads", "omp_set_num_threads"})
    if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, name)))
      set(threads);
}

#if MODELC_HAVE_CBLAS
/// C += A * B through OpenBLAS, as modelc_sgemm did before oneDNN: sgemv for
/// a single row, else sgemm.
void openBlasSgemm(Problem &p) {
  const Shape &s = p.shape;
  int m = int(s.m), n = int(s.n), k = int(s.k);
  if (m == 1)
    cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, p.b.data(), n, p.a.data(), 1, 1.0f,
                p.c.data(), 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, p.a.data(), k, p.b.data(),
                n, 1.0f, p.c.data(), n);
}
#endif

double maxAbsDiff(const std::vector<float> &x, const std::vector<float> &y) {
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(worst, double(std::abs(x[i] - y[i])));
  return worst;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "modelc-gemm-bench: SGEMM peak and choices\n");
  if (floorBytesOpt)
    return measureFloor(floorBytesOpt);
  setBlasThreads(1);

  double peak = measurePeakGflops();
  llvm::outs() << llvm::format("f32 FMA peak, 1 core (AVX-512 FMA loop): %.0f GFLOP/s\n\n", peak);

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
      {"square 1024", 1024, 1024, 1024},
  };

  mlir::DialectRegistry registry;
  modelc::jit::registerJitDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::vector<std::unique_ptr<mlir::ExecutionEngine>> engines;
  std::vector<std::unique_ptr<modelc::jit::JitModule>> loopModules;

  llvm::outs() << "1 thread; GFLOP/s and % of the FMA peak; median of repeated calls\n";
  llvm::outs()
      << "| shape | M x N x K | modelc_sgemm (oneDNN) | OpenBLAS | MLIR loops (--no-blas) | "
         "MLIR tiled+vectorised |\n"
         "|---|---|---|---|---|---|\n";
  for (const Shape &s : shapes) {
    Problem p(s);
    auto cell = [&](double seconds) {
      double gflops = p.flops() / seconds / 1e9;
      return llvm::formatv("{0:F1} ({1:F0}%)", gflops, 100 * gflops / peak).str();
    };
    std::string library =
        cell(timePerCall([&] { modelc_sgemm_ciface(&p.aRef, &p.bRef, &p.cRef); }));
    std::string openBlas = "-";
#if MODELC_HAVE_CBLAS
    openBlas = cell(timePerCall([&] { openBlasSgemm(p); }));
#endif
    // Reference result for the generated variants.
    std::fill(p.c.begin(), p.c.end(), 0.0f);
    modelc_sgemm_ciface(&p.aRef, &p.bRef, &p.cRef);
    std::vector<float> expected = p.c;

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
          loops = maxAbsDiff(out, expected) < 1e-3 * s.k ? cell(timePerCall([&] { (*fn)(packed); }))
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
                         ? cell(timePerCall([&] { (*fn)(packed); }))
                         : std::string("wrong result");
      }
    }
    llvm::outs() << llvm::formatv("| {0} | {1} x {2} x {3} | {4} | {5} | {6} | {7} |\n", s.what,
                                  s.m, s.n, s.k, library, openBlas, loops, vectorized);
    llvm::outs().flush();
  }
  return 0;
}
