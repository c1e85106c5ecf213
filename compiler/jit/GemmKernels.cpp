//===- GemmKernels.cpp - oneDNN matmul / dnnl_sgemm / OpenBLAS / loops ----===//

#include "jit/GemmKernels.h"

#include <algorithm>
#include <cmath>
#include <vector>

#if MODELC_HAVE_DNNL
#include "jit/DnnlSupport.h"
#include "jit/DnnlWeights.h"

#include <dnnl.h>
#include <map>
#include <memory>
#include <mutex>
#include <omp.h>
#include <unordered_map>
#endif
#include "jit/OpenBlasLibrary.h"
#include "jit/TileGemm.h"

namespace modelc::jit {

bool decodeEpilogue(int64_t code, const EpilogueOperand *operands, int available,
                    Epilogue &epilogue) {
  epilogue = Epilogue();
  epilogue.code = code;
  epilogue.constantB = (code & kEpilogueConstantB) != 0;
  for (uint64_t rest = uint64_t(code & ~kEpilogueConstantB); rest != 0; rest >>= 4) {
    auto step = EpilogueStep(rest & 0xf);
    if (step > EpilogueStep::Sigmoid || step == EpilogueStep::End ||
        epilogue.stepCount == kMaxEpilogueSteps)
      return false;
    if (step == EpilogueStep::Add) {
      if (epilogue.operandCount == std::min(available, kMaxEpilogueOperands))
        return false;
      epilogue.operands[size_t(epilogue.operandCount)] = operands[epilogue.operandCount];
      ++epilogue.operandCount;
    }
    epilogue.steps[size_t(epilogue.stepCount++)] = step;
  }
  return true;
}

float applyActivation(EpilogueStep step, float x) {
  switch (step) {
  case EpilogueStep::Relu:
    return std::max(x, 0.0f);
  case EpilogueStep::Gelu:
    return 0.5f * x * (1.0f + std::erf(x * float(M_SQRT1_2)));
  case EpilogueStep::Tanh:
    return std::tanh(x);
  case EpilogueStep::Silu:
    return x / (1.0f + std::exp(-x));
  case EpilogueStep::Sigmoid:
    return 1.0f / (1.0f + std::exp(-x));
  case EpilogueStep::Add:
  case EpilogueStep::End:
    break;
  }
  return x;
}

namespace {

template <typename Fn> void mapRow(float *row, int64_t n, Fn fn) {
  for (int64_t j = 0; j < n; ++j)
    row[j] = fn(row[j]);
}

/// applyActivation over a row, the step chosen once per row rather than per
/// element, so that ReLU's loop vectorises.
void applyActivationToRow(EpilogueStep step, float *row, int64_t n) {
  switch (step) {
  case EpilogueStep::Relu:
    return mapRow(row, n, [](float x) { return std::max(x, 0.0f); });
  case EpilogueStep::Gelu:
    return mapRow(row, n, [](float x) { return applyActivation(EpilogueStep::Gelu, x); });
  case EpilogueStep::Tanh:
    return mapRow(row, n, [](float x) { return applyActivation(EpilogueStep::Tanh, x); });
  case EpilogueStep::Silu:
    return mapRow(row, n, [](float x) { return applyActivation(EpilogueStep::Silu, x); });
  case EpilogueStep::Sigmoid:
    return mapRow(row, n, [](float x) { return applyActivation(EpilogueStep::Sigmoid, x); });
  case EpilogueStep::Add:
  case EpilogueStep::End:
    return;
  }
}

} // namespace

void applyEpilogue(const GemmProblem &p) { applyEpilogue(p, 0, p.m, 0, p.n); }

void applyEpilogue(const GemmProblem &p, int64_t rowBegin, int64_t rowEnd, int64_t colBegin,
                   int64_t colEnd) {
  const Epilogue &e = p.epilogue;
  int64_t width = colEnd - colBegin;
  for (int64_t i = rowBegin; i < rowEnd; ++i) {
    float *row = p.c + i * p.ldc + colBegin;
    int operand = 0;
    for (int s = 0; s < e.stepCount; ++s) {
      EpilogueStep step = e.steps[size_t(s)];
      if (step != EpilogueStep::Add) {
        applyActivationToRow(step, row, width);
        continue;
      }
      const EpilogueOperand &x = e.operands[size_t(operand++)];
      const float *from = x.data + i * x.rowStride + colBegin * x.colStride;
      if (x.colStride == 1) {
        for (int64_t j = 0; j < width; ++j)
          row[j] += from[j];
      } else {
        for (int64_t j = 0; j < width; ++j)
          row[j] += from[j * x.colStride];
      }
    }
  }
}

namespace {

float element(const float *data, bool transposed, int64_t ld, int64_t row, int64_t col) {
  return transposed ? data[col * ld + row] : data[row * ld + col];
}

void loopGemm(const GemmProblem &p) {
  std::vector<float> sums(size_t(p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    std::fill(sums.begin(), sums.end(), 0.0f);
    for (int64_t q = 0; q < p.k; ++q) {
      float aiq = element(p.a, p.transposeA, p.lda, i, q);
      for (int64_t j = 0; j < p.n; ++j)
        sums[size_t(j)] += aiq * element(p.b, p.transposeB, p.ldb, q, j);
    }
    float *row = p.c + i * p.ldc;
    for (int64_t j = 0; j < p.n; ++j)
      row[j] = p.accumulate ? row[j] + sums[size_t(j)] : sums[size_t(j)];
  }
  applyEpilogue(p);
}

bool fitsInt(int64_t value) { return value > 0 && value <= INT_MAX; }

bool openBlasGemm(const GemmProblem &p) {
  const OpenBlasLibrary *blas = openBlasLibrary();
  if (!blas || !fitsInt(p.m) || !fitsInt(p.n) || !fitsInt(p.k) || !fitsInt(p.lda) ||
      !fitsInt(p.ldb) || !fitsInt(p.ldc))
    return false;
  int m = int(p.m), n = int(p.n), k = int(p.k);
  float beta = p.accumulate ? 1.0f : 0.0f;
  using B = OpenBlasLibrary;
  // A single row (batch 1) is a matrix-vector product: sgemv skips sgemm's
  // packing and is 2-3x faster at these sizes. Only on one BLAS thread:
  // OpenBLAS splits sgemv over its threads from ~9k elements on, and that
  // sync costs more than the product here.
  if (m == 1 && blas->getNumThreads() == 1) {
    // c[0, :] = op(B)^T a[0, :] (+ c); B is stored [k, n] or, transposed, [n, k].
    bool stored = !p.transposeB;
    blas->sgemv(B::kRowMajor, stored ? B::kTrans : B::kNoTrans, stored ? k : n, stored ? n : k,
                1.0f, p.b, int(p.ldb), p.a, p.transposeA ? int(p.lda) : 1, beta, p.c, 1);
  } else {
    blas->sgemm(B::kRowMajor, p.transposeA ? B::kTrans : B::kNoTrans,
                p.transposeB ? B::kTrans : B::kNoTrans, m, n, k, 1.0f, p.a, int(p.lda), p.b,
                int(p.ldb), beta, p.c, int(p.ldc));
  }
  applyEpilogue(p);
  return true;
}

#if MODELC_HAVE_DNNL
bool dnnlSgemm(const GemmProblem &p) {
  if (dnnl_sgemm(p.transposeA ? 'T' : 'N', p.transposeB ? 'T' : 'N', p.m, p.n, p.k, 1.0f, p.a,
                 p.lda, p.b, p.ldb, p.accumulate ? 1.0f : 0.0f, p.c, p.ldc) != dnnl_success)
    return false;
  applyEpilogue(p);
  return true;
}

/// A matmul primitive for one shape, layout and epilogue; null when oneDNN
/// declined it.
struct CachedMatmul {
  std::unique_ptr<dnnl::matmul> primitive;
  dnnl::matmul::primitive_desc pd;
  /// Whether the first Add step is the primitive's bias argument.
  bool biasArgument = false;
  /// With a constant B (Epilogue::constantB): B as the caller holds it and
  /// the reorder into the primitive's layout; null when it reads B as is.
  dnnl::memory::desc userB;
  std::unique_ptr<dnnl::reorder> packB;
  size_t scratchpadBytes = 0;
};

dnnl::memory::desc matrixDesc(int64_t rows, int64_t cols, int64_t rowStride, int64_t colStride) {
  return dnnl::memory::desc({rows, cols}, dnnl::memory::data_type::f32, {rowStride, colStride});
}

/// A row broadcast over the rows with unit stride, as oneDNN's bias reads it.
bool isBiasRow(const EpilogueOperand &x) { return x.rowStride == 0 && x.colStride == 1; }

std::unique_ptr<CachedMatmul> createMatmul(const GemmProblem &p) {
  auto entry = std::make_unique<CachedMatmul>();
  const Epilogue &e = p.epilogue;
  try {
    dnnl::memory::desc a =
        p.transposeA ? matrixDesc(p.m, p.k, 1, p.lda) : matrixDesc(p.m, p.k, p.lda, 1);
    dnnl::memory::desc b =
        p.transposeB ? matrixDesc(p.k, p.n, 1, p.ldb) : matrixDesc(p.k, p.n, p.ldb, 1);
    dnnl::memory::desc c = matrixDesc(p.m, p.n, p.ldc, 1);
    dnnl::post_ops ops;
    if (p.accumulate)
      ops.append_sum(1.0f);
    entry->biasArgument = !p.accumulate && e.stepCount > 0 && e.steps[0] == EpilogueStep::Add &&
                          isBiasRow(e.operands[0]);
    int operand = 0;
    for (int s = 0; s < e.stepCount; ++s) {
      EpilogueStep step = e.steps[size_t(s)];
      if (step != EpilogueStep::Add) {
        ops.append_eltwise(1.0f, eltwiseAlgorithm(step), eltwiseAlpha(step), 0.0f);
        continue;
      }
      const EpilogueOperand &x = e.operands[size_t(operand++)];
      if (s == 0 && entry->biasArgument)
        continue;
      ops.append_binary(dnnl::algorithm::binary_add,
                        x.rowStride == 0 ? matrixDesc(1, p.n, p.n, x.colStride)
                                         : matrixDesc(p.m, p.n, x.rowStride, x.colStride));
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // A constant B in the layout the primitive picks, packed once.
    dnnl::memory::desc weights = e.constantB
                                     ? dnnl::memory::desc({p.k, p.n}, dnnl::memory::data_type::f32,
                                                          dnnl::memory::format_tag::any)
                                     : b;
    dnnl::matmul::desc desc = entry->biasArgument
                                  ? dnnl::matmul::desc(a, weights, matrixDesc(1, p.n, p.n, 1), c)
                                  : dnnl::matmul::desc(a, weights, c);
    dnnl::matmul::primitive_desc pd(desc, attr, cpuEngine());
    if (pd.weights_desc() != b) {
      entry->userB = b;
      entry->packB = std::make_unique<dnnl::reorder>(
          dnnl::reorder::primitive_desc(cpuEngine(), b, cpuEngine(), pd.weights_desc()));
    }
    entry->scratchpadBytes = pd.scratchpad_desc().get_size();
    entry->primitive = std::make_unique<dnnl::matmul>(pd);
    entry->pd = pd;
  } catch (const dnnl::error &) {
    entry->primitive.reset();
  }
  return entry;
}

const CachedMatmul &lookupMatmul(const GemmProblem &p) {
  std::vector<int64_t> key = {p.m,          p.n,   p.k,   p.transposeA, p.lda,
                              p.transposeB, p.ldb, p.ldc, p.accumulate, p.epilogue.code};
  // oneDNN splits the work for the thread count at creation and keeps that
  // split: a primitive made on one thread runs on one thread.
  key.push_back(omp_get_max_threads());
  for (int i = 0; i < p.epilogue.operandCount; ++i)
    key.insert(key.end(), {p.epilogue.operands[size_t(i)].rowStride,
                           p.epilogue.operands[size_t(i)].colStride});
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::unique_ptr<CachedMatmul>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = cache[key];
  if (!slot)
    slot = createMatmul(p);
  return *slot; // entries are never erased, so the reference stays valid
}

bool dnnlMatmul(const GemmProblem &p) {
  const CachedMatmul &matmul = lookupMatmul(p);
  if (!matmul.primitive)
    return false;
  using dnnl::memory;
  const Epilogue &e = p.epilogue;
  // This thread's memory objects for the entry, by role; post-op operands
  // from kPostOps on.
  enum Role { kA, kUserB, kB, kC, kBias, kScratchpad, kPostOps };
  BoundArgs &bound = threadBoundArgs(&matmul);
  const dnnl::matmul::primitive_desc &pd = matmul.pd;
  memory weights = matmul.packB ? constantWeightsCopy(p.b, pd.weights_desc(), *matmul.packB,
                                                      bound.memory(kUserB, matmul.userB, p.b))
                                : bound.memory(kB, pd.weights_desc(), p.b);
  std::unordered_map<int, memory> &args = bound.args(0);
  args[DNNL_ARG_SRC] = bound.memory(kA, pd.src_desc(), p.a);
  args[DNNL_ARG_WEIGHTS] = weights;
  args[DNNL_ARG_DST] = bound.memory(kC, pd.dst_desc(), p.c);
  int operand = 0, postOp = p.accumulate ? 1 : 0;
  for (int s = 0; s < e.stepCount; ++s, ++postOp) {
    if (e.steps[size_t(s)] != EpilogueStep::Add)
      continue;
    const EpilogueOperand &x = e.operands[size_t(operand++)];
    if (s == 0 && matmul.biasArgument) {
      args[DNNL_ARG_BIAS] = bound.memory(kBias, pd.bias_desc(), x.data);
      --postOp;
      continue;
    }
    memory::desc desc = x.rowStride == 0 ? matrixDesc(1, p.n, p.n, x.colStride)
                                         : matrixDesc(p.m, p.n, x.rowStride, x.colStride);
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(postOp) | DNNL_ARG_SRC_1] =
        bound.memory(kPostOps + postOp, desc, x.data);
  }
  if (matmul.scratchpadBytes > 0)
    args[DNNL_ARG_SCRATCHPAD] = bound.scratchpad(kScratchpad, matmul.scratchpadBytes);
  dnnl::stream &stream = threadStream();
  matmul.primitive->execute(stream, args);
  stream.wait();
  return true;
}
#endif

} // namespace

bool runGemmKernel(GemmKernel kernel, const GemmProblem &p) {
  switch (kernel) {
  case GemmKernel::OneDnnMatmul:
#if MODELC_HAVE_DNNL
    return dnnlMatmul(p);
#else
    return false;
#endif
  case GemmKernel::OneDnnSgemm:
#if MODELC_HAVE_DNNL
    return dnnlSgemm(p);
#else
    return false;
#endif
  case GemmKernel::OpenBlas:
    return openBlasGemm(p);
  case GemmKernel::Tiles:
    return tileGemm(p);
  case GemmKernel::Loops:
    loopGemm(p);
    return true;
  case GemmKernel::Auto:
    return false;
  }
  return false;
}

} // namespace modelc::jit
