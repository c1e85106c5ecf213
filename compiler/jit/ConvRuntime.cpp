//===- ConvRuntime.cpp - output += conv2d(input, weight) through oneDNN ---===//

#include "jit/ConvRuntime.h"
#include "jit/GemmKernels.h"
#include "jit/RowConv.h"
#include "jit/TileGemm.h"
#include "jit/Timing.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#if MODELC_HAVE_DNNL
#include "jit/DnnlSupport.h"
#include "jit/DnnlWeights.h"
#include "jit/RuntimeThreads.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#endif

using namespace modelc::jit;

namespace {

/// lastCreatedConvKernel()'s answer on this thread.
std::string &lastCreated() {
  thread_local std::string kernel;
  return kernel;
}

/// One operand seen as rank 5 (N/G, G/O, C, H, W for the input; G, O, C, KH,
/// KW for the weight; N, G, O, OH, OW for the output): an ungrouped rank-4
/// operand gets a unit group dim.
struct View5 {
  float *data;
  std::array<int64_t, 5> sizes, strides;
};

View5 asRank5(const UnrankedMemRefType<float> &memref, int groupDim) {
  auto *words = static_cast<int64_t *>(memref.descriptor);
  int64_t rank = memref.rank;
  auto *base = reinterpret_cast<float *>(words[1]);
  const int64_t *sizes = words + 3, *strides = words + 3 + rank;
  View5 view{base + words[2], {}, {}};
  for (int64_t d = 0, from = 0; d < 5; ++d) {
    if (rank == 4 && d == groupDim) {
      view.sizes[d] = 1;
      view.strides[d] = 0;
      continue;
    }
    view.sizes[d] = sizes[from];
    view.strides[d] = strides[from];
    ++from;
  }
  return view;
}

struct ConvParams {
  int64_t stride[2], pad[2], dilation[2];
  /// output += conv (else output = conv).
  bool accumulate = true;
  /// Added per output channel before the activations; null for none.
  const float *bias = nullptr;
  /// Activations after the sum, as jit/GemmKernels.h encodes them.
  int64_t activations = 0;
  /// The input / output buffer holds nChw16c (kConvSrcBlocked16 /
  /// kConvDstBlocked16); its view still gives the NCHW dims.
  bool srcBlocked = false, dstBlocked = false;
  /// The weights are the same on every call (kConvConstantWeights).
  bool constantWeights = false;
};

/// The offset of element (n, c, y, x) of an [N, C, H, W] tensor (the view's
/// dims) in nChw16c storage.
int64_t blockedOffset(const View5 &view, int64_t n, int64_t c, int64_t y, int64_t x) {
  int64_t channels = view.sizes[1] * view.sizes[2], height = view.sizes[3], width = view.sizes[4];
  return ((n * (channels / 16) + c / 16) * height * width + y * width + x) * 16 + c % 16;
}

/// Between nChw16c storage (`blocked.data`) and an NCHW view of any strides
/// (`plain`, one group), for the loops that run when oneDNN does not.
void convertBlocked(const View5 &blocked, const View5 &plain, bool toPlain) {
  for (int64_t n = 0; n < plain.sizes[0]; ++n)
    for (int64_t c = 0; c < plain.sizes[2]; ++c)
      for (int64_t y = 0; y < plain.sizes[3]; ++y)
        for (int64_t x = 0; x < plain.sizes[4]; ++x) {
          float &p = plain.data[n * plain.strides[0] + c * plain.strides[2] + y * plain.strides[3] +
                                x * plain.strides[4]];
          float &b = blocked.data[blockedOffset(blocked, n, c, y, x)];
          if (toPlain)
            p = b;
          else
            b = p;
        }
}

/// Bias and activations over the output after a conv that did neither.
void applyEpilogue(const View5 &out, const ConvParams &p) {
  if (!p.bias && p.activations == 0)
    return;
  modelc::jit::Epilogue activations;
  modelc::jit::decodeEpilogue(p.activations, nullptr, 0, activations);
  for (int64_t n = 0; n < out.sizes[0]; ++n)
    for (int64_t g = 0; g < out.sizes[1]; ++g)
      for (int64_t o = 0; o < out.sizes[2]; ++o)
        for (int64_t y = 0; y < out.sizes[3]; ++y)
          for (int64_t x = 0; x < out.sizes[4]; ++x) {
            float &v = out.data[n * out.strides[0] + g * out.strides[1] + o * out.strides[2] +
                                y * out.strides[3] + x * out.strides[4]];
            if (p.bias)
              v += p.bias[g * out.sizes[2] + o];
            for (int s = 0; s < activations.stepCount; ++s)
              v = modelc::jit::applyActivation(activations.steps[size_t(s)], v);
          }
}

/// The plain definition, for operands oneDNN cannot take (or no oneDNN).
void convLoop(const View5 &in, const View5 &w, const View5 &out, const ConvParams &p) {
  int64_t batch = in.sizes[0], groups = in.sizes[1], channels = in.sizes[2], height = in.sizes[3],
          width = in.sizes[4], outPerGroup = w.sizes[1], kh = w.sizes[3], kw = w.sizes[4],
          oh = out.sizes[3], ow = out.sizes[4];
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t o = 0; o < outPerGroup; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            float sum = 0;
            for (int64_t c = 0; c < channels; ++c)
              for (int64_t i = 0; i < kh; ++i) {
                int64_t iy = y * p.stride[0] - p.pad[0] + i * p.dilation[0];
                if (iy < 0 || iy >= height)
                  continue;
                for (int64_t j = 0; j < kw; ++j) {
                  int64_t ix = x * p.stride[1] - p.pad[1] + j * p.dilation[1];
                  if (ix < 0 || ix >= width)
                    continue;
                  sum += in.data[n * in.strides[0] + g * in.strides[1] + c * in.strides[2] +
                                 iy * in.strides[3] + ix * in.strides[4]] *
                         w.data[g * w.strides[0] + o * w.strides[1] + c * w.strides[2] +
                                i * w.strides[3] + j * w.strides[4]];
                }
              }
            float &dst = out.data[n * out.strides[0] + g * out.strides[1] + o * out.strides[2] +
                                  y * out.strides[3] + x * out.strides[4]];
            dst = p.accumulate ? dst + sum : sum;
          }
  applyEpilogue(out, p);
}

/// A max pooling over the conv's output, unpadded (kernel 0: none).
struct PoolParams {
  int64_t kernel[2] = {0, 0}, stride[2] = {0, 0};

  bool active() const { return kernel[0] > 0; }
};

/// out = max over each window of `in`; NaN propagates as arith.maximumf
/// does in the loops the pool would otherwise be.
void maxPoolLoop(const View5 &in, const View5 &out, const PoolParams &pool) {
  for (int64_t n = 0; n < out.sizes[0]; ++n)
    for (int64_t g = 0; g < out.sizes[1]; ++g)
      for (int64_t c = 0; c < out.sizes[2]; ++c)
        for (int64_t y = 0; y < out.sizes[3]; ++y)
          for (int64_t x = 0; x < out.sizes[4]; ++x) {
            float best = -std::numeric_limits<float>::infinity();
            for (int64_t i = 0; i < pool.kernel[0]; ++i)
              for (int64_t j = 0; j < pool.kernel[1]; ++j) {
                float v = in.data[n * in.strides[0] + g * in.strides[1] + c * in.strides[2] +
                                  (y * pool.stride[0] + i) * in.strides[3] +
                                  (x * pool.stride[1] + j) * in.strides[4]];
                if (v > best || std::isnan(v))
                  best = v;
                if (std::isnan(best))
                  break;
              }
            out.data[n * out.strides[0] + g * out.strides[1] + c * out.strides[2] +
                     y * out.strides[3] + x * out.strides[4]] = best;
          }
}

/// A contiguous view of `sizes` over `data`.
View5 contiguous(float *data, const std::array<int64_t, 5> &sizes) {
  View5 view{data, sizes, {}};
  int64_t stride = 1;
  for (int d = 4; d >= 0; --d) {
    view.strides[size_t(d)] = stride;
    stride *= sizes[size_t(d)];
  }
  return view;
}

/// The call as RowConv.h's problem (`pooled` read when `pool` is active).
RowConvProblem rowProblem(const View5 &in, const View5 &w, const View5 &out, const ConvParams &p,
                          const PoolParams &pool, const View5 &pooled) {
  // Drops the unit group dim (rowConvApplies takes one group only).
  auto operand = [](const View5 &view, int dropped) {
    ConvOperand operand;
    operand.data = view.data;
    for (int d = 0, to = 0; d < 5; ++d) {
      if (d == dropped)
        continue;
      operand.sizes[to] = view.sizes[size_t(d)];
      operand.strides[to++] = view.strides[size_t(d)];
    }
    return operand;
  };
  RowConvProblem problem;
  problem.input = operand(in, 1);
  problem.weight = operand(w, 0);
  problem.output = operand(out, 1);
  for (int d = 0; d < 2; ++d) {
    problem.stride[d] = p.stride[d];
    problem.pad[d] = p.pad[d];
    problem.dilation[d] = p.dilation[d];
    problem.poolKernel[d] = pool.kernel[d];
    problem.poolStride[d] = pool.stride[d];
  }
  problem.accumulate = p.accumulate;
  problem.bias = p.bias;
  modelc::jit::decodeEpilogue(p.activations, nullptr, 0, problem.activations);
  if (pool.active())
    problem.pooled = operand(pooled, 1);
  return problem;
}

/// Whether the call can run on RowConv.h's kernel: one group, NCHW (not
/// blocked) operands, and what rowConvApplies asks.
bool rowsApply(const View5 &in, const View5 &w, const View5 &out, const ConvParams &p,
               const PoolParams &pool, const View5 &pooled) {
  return in.sizes[1] == 1 && w.sizes[0] == 1 && !p.srcBlocked && !p.dstBlocked &&
         rowConvApplies(rowProblem(in, w, out, p, pool, pooled));
}

#if MODELC_HAVE_DNNL

/// One operand as the caller holds it (`user`) and as the primitive reads
/// it (`inner`); when they differ a reorder converts, into a per-thread
/// buffer.
struct Operand {
  dnnl::memory::desc user, inner;
  std::unique_ptr<dnnl::reorder> toInner, toUser;

  bool reordered() const { return user != inner; }
};

/// A convolution primitive for one shape, set of strides and parameters,
/// and the max pooling that may follow it; null when oneDNN declined either
/// (the loops run instead).
struct CachedConv {
  std::unique_ptr<dnnl::convolution_forward> primitive;
  Operand src, weights, dst;
  /// With a pooling: the conv's output stays in oneDNN's layout (`dst.inner`,
  /// a per-thread buffer) and only the pooled result, a quarter of it for
  /// 2x2, is reordered to the caller's layout.
  std::unique_ptr<dnnl::pooling_forward> pool;
  Operand pooled;
  size_t scratchpadBytes = 0;
  /// RowConv.h's kernel runs the call instead (chooseRows).
  bool rows = false;
};

/// The group and channel dims merged (oneDNN's NCHW has one channel dim);
/// false when their strides do not allow it.
bool mergeChannels(const View5 &view, dnnl::memory::dims &sizes, dnnl::memory::dims &strides) {
  if (view.sizes[1] != 1 && view.strides[1] != view.sizes[2] * view.strides[2])
    return false;
  sizes = {view.sizes[0], view.sizes[1] * view.sizes[2], view.sizes[3], view.sizes[4]};
  strides = {view.strides[0], view.strides[2], view.strides[3], view.strides[4]};
  return true;
}

/// Reorders between the caller's layout and the primitive's, if they differ.
void prepareOperand(Operand &operand, const dnnl::memory::desc &inner, bool copyBack) {
  operand.inner = inner;
  if (!operand.reordered())
    return;
  dnnl::engine &engine = cpuEngine();
  operand.toInner = std::make_unique<dnnl::reorder>(
      dnnl::reorder::primitive_desc(engine, operand.user, engine, inner));
  if (copyBack)
    operand.toUser = std::make_unique<dnnl::reorder>(
        dnnl::reorder::primitive_desc(engine, inner, engine, operand.user));
}

/// The conv kernels the runtime chooses between, by the names
/// MODELC_CONV_LAYOUT takes: oneDNN's pick, its direct kernels on the
/// channel-blocked layouts, and Winograd (3x3, stride 1: fewer
/// multiplications; its rounding measured at 1-3e-6 of the output's scale),
/// and modelc's own kernel vectorised on rows (RowConv.h).
constexpr const char *kConvChoices[] = {"onednn", "nChw16c", "nChw8c", "winograd", "rows"};
constexpr int kRowsChoice = 4;

/// MODELC_CONV_LAYOUT: 0 unset or `auto`, else 1 + its index in
/// kConvChoices (read per call: it is part of the primitive cache's key).
int forcedConvLayout() {
  const char *forced = std::getenv("MODELC_CONV_LAYOUT");
  if (!forced)
    return 0;
  for (size_t i = 0; i < std::size(kConvChoices); ++i)
    if (std::strcmp(forced, kConvChoices[i]) == 0)
      return int(i) + 1;
  return 0;
}

/// One way to run a conv: a name of kConvChoices and its primitive.
struct ConvCandidate {
  int choice;
  dnnl::convolution_forward::primitive_desc pd;
};

/// Which of `candidates` runs: the one MODELC_CONV_LAYOUT names (for tests
/// and benchmarks; the first when that one does not run here), else the
/// fastest here, each timed on scratch operands (a conv's time does not
/// depend on its values), best of its runs after the first. The candidates
/// take turns, one run each per round, so that a slow spell of the machine
/// (a neighbour, a frequency change) falls on all of them rather than on
/// one candidate's whole turn: Winograd's kernels for ResNet's 8x8 conv are
/// 52-86 µs apart, and one after the other the choice between them changed
/// from process to process. Once per shape and process.
size_t fastestConv(const std::vector<ConvCandidate> &candidates) {
  if (int forced = forcedConvLayout(); forced > 0) {
    for (size_t i = 0; i < candidates.size(); ++i)
      if (candidates[i].choice == forced - 1)
        return i;
    return 0;
  }
  if (candidates.size() == 1)
    return 0;
  using dnnl::memory;
  dnnl::engine &engine = cpuEngine();
  dnnl::stream &stream = threadStream();
  struct Timed {
    dnnl::convolution_forward conv;
    std::unordered_map<int, memory> args;
    double best = std::numeric_limits<double>::infinity();
    bool contender = true;
  };
  // One zeroed buffer per argument, as large as any candidate's layout of
  // it, that every candidate reads and writes in turn: a copy per candidate
  // would hold the activations up to seven times at once.
  auto descOf = [](const dnnl::convolution_forward::primitive_desc &pd, int arg) {
    switch (arg) {
    case DNNL_ARG_SRC:
      return pd.src_desc();
    case DNNL_ARG_WEIGHTS:
      return pd.weights_desc();
    case DNNL_ARG_DST:
      return pd.dst_desc();
    case DNNL_ARG_BIAS:
      return pd.bias_desc();
    default:
      return pd.scratchpad_desc();
    }
  };
  const int kArgs[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS,
                       DNNL_ARG_SCRATCHPAD};
  std::unordered_map<int, std::vector<char>> shared;
  for (int arg : kArgs) {
    size_t bytes = 0;
    for (const ConvCandidate &candidate : candidates)
      bytes = std::max(bytes, descOf(candidate.pd, arg).get_size());
    if (bytes > 0)
      shared[arg].assign(bytes + 64, 0); // + 64: oneDNN aligns what it is given
  }
  std::vector<Timed> timed(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const dnnl::convolution_forward::primitive_desc &pd = candidates[i].pd;
    Timed &t = timed[i];
    for (int arg : kArgs) {
      memory::desc desc = descOf(pd, arg);
      if (desc.get_size() == 0)
        continue;
      void *data = shared[arg].data();
      size_t space = shared[arg].size();
      t.args.emplace(arg, memory(desc, engine, std::align(64, desc.get_size(), data, space)));
    }
    t.conv = dnnl::convolution_forward(pd);
  }
  // At least four rounds, and for small convs (batch 1: 50-100 µs, where
  // one descheduling decides a best of three) up to ~2 ms per contender.
  double spent = 0, fastest = std::numeric_limits<double>::infinity();
  for (int round = 0; round < 4 || (round < 40 && spent < 2e-3); ++round) {
    int contenders = 0;
    double roundSeconds = 0;
    for (Timed &t : timed) {
      if (!t.contender)
        continue;
      double seconds = secondsOf([&] {
        t.conv.execute(stream, t.args);
        stream.wait();
      });
      roundSeconds += seconds;
      ++contenders;
      if (round > 0) // the first run warms up
        t.best = std::min(t.best, seconds);
    }
    spent += roundSeconds / std::max(1, contenders);
    if (round > 0) {
      for (const Timed &t : timed)
        fastest = std::min(fastest, t.best);
      for (Timed &t : timed) // not a contender: spend no more time on it
        t.contender = t.contender && t.best <= 4 * fastest;
    }
  }
  size_t best = 0;
  for (size_t i = 1; i < timed.size(); ++i)
    if (timed[i].best < timed[best].best)
      best = i;
  return best;
}

/// `out` is the conv's output; with a pooling it only gives its dims and
/// `pooled` is the caller's buffer.
std::unique_ptr<CachedConv> createConv(const View5 &in, const View5 &w, const View5 &out,
                                       const ConvParams &p, const PoolParams &pool,
                                       const View5 &pooled) {
  using dnnl::memory;
  auto entry = std::make_unique<CachedConv>();
  memory::dims srcSizes, srcStrides, dstSizes, dstStrides, pooledSizes, pooledStrides;
  if (!mergeChannels(in, srcSizes, srcStrides) || !mergeChannels(out, dstSizes, dstStrides) ||
      (pool.active() && !mergeChannels(pooled, pooledSizes, pooledStrides)))
    return entry;
  bool grouped = in.sizes[1] != 1;
  memory::dims wSizes(w.sizes.begin(), w.sizes.end()), wStrides(w.strides.begin(), w.strides.end());
  if (!grouped) {
    wSizes.erase(wSizes.begin());
    wStrides.erase(wStrides.begin());
  }
  // oneDNN counts dilation from 0 (1 = one gap).
  memory::dims strides = {p.stride[0], p.stride[1]}, pads = {p.pad[0], p.pad[1]},
               dilations = {p.dilation[0] - 1, p.dilation[1] - 1};
  try {
    memory::desc srcBlocked16(srcSizes, memory::data_type::f32, memory::format_tag::nChw16c),
        dstBlocked16(dstSizes, memory::data_type::f32, memory::format_tag::nChw16c);
    entry->src.user =
        p.srcBlocked ? srcBlocked16 : memory::desc(srcSizes, memory::data_type::f32, srcStrides);
    entry->weights.user = memory::desc(wSizes, memory::data_type::f32, wStrides);
    entry->dst.user =
        p.dstBlocked ? dstBlocked16 : memory::desc(dstSizes, memory::data_type::f32, dstStrides);
    // Layouts (measured, docs/performance.md): oneDNN's own blocked layouts
    // plus reorders on every call beat the plain ones 2-4x (LeNet's conv2).
    // With fewer than four input channels per group (LeNet's conv1) a
    // blocked input would be mostly channel padding, so the input is read
    // in place; the weights and output still take oneDNN's layout (the
    // plain output left it a gemm-based kernel, 7x slower at batch 64).
    bool blockedInput = in.sizes[2] >= 4;
    auto any = [](const memory::desc &plain) {
      return memory::desc(plain.dims(), memory::data_type::f32, memory::format_tag::any);
    };
    memory::desc weights = any(entry->weights.user);
    // The activations' layouts to try: oneDNN's pick, and its channel-blocked
    // layouts, which oneDNN 2.6 does not pick for f32 on AVX-512 although
    // its direct kernel on them beat the pick (brgconv, channels last) 1.3-1.8x
    // on ResNet's 3x3 convs here; the fastest runs (fastestConv).
    struct Layout {
      int choice;
      dnnl::algorithm algorithm;
      memory::desc src, dst;
    };
    std::vector<Layout> layouts = {{0, dnnl::algorithm::convolution_direct,
                                    blockedInput ? any(entry->src.user) : entry->src.user,
                                    any(entry->dst.user)}};
    if (blockedInput && !grouped) {
      for (auto [choice, tag] :
           {std::pair{1, memory::format_tag::nChw16c}, std::pair{2, memory::format_tag::nChw8c}})
        layouts.push_back({choice, dnnl::algorithm::convolution_direct,
                           memory::desc(srcSizes, memory::data_type::f32, tag),
                           memory::desc(dstSizes, memory::data_type::f32, tag)});
      // oneDNN declines what Winograd does not cover (not 3x3, strides,
      // dilation, its ISA): then it is no candidate.
      layouts.push_back(
          {3, dnnl::algorithm::convolution_winograd, any(entry->src.user), any(entry->dst.user)});
    }
    // As the lowering asks: accumulate into the output (sum post-op) or
    // overwrite it, the bias as the primitive's bias, then activations as
    // eltwise post-ops while each block is in cache.
    dnnl::post_ops ops;
    if (p.accumulate)
      ops.append_sum(1.0f);
    modelc::jit::Epilogue activations;
    modelc::jit::decodeEpilogue(p.activations, nullptr, 0, activations);
    for (int s = 0; s < activations.stepCount; ++s)
      ops.append_eltwise(1.0f, eltwiseAlgorithm(activations.steps[size_t(s)]),
                         eltwiseAlpha(activations.steps[size_t(s)]), 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    // Each call brings its own scratchpad: concurrent calls share nothing.
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    std::vector<ConvCandidate> candidates;
    for (const Layout &layout : layouts) {
      dnnl::convolution_forward::desc desc =
          p.bias ? dnnl::convolution_forward::desc(
                       dnnl::prop_kind::forward_inference, layout.algorithm, layout.src, weights,
                       memory::desc({dstSizes[1]}, memory::data_type::f32, {1}), layout.dst,
                       strides, dilations, pads, pads)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                   layout.algorithm, layout.src, weights,
                                                   layout.dst, strides, dilations, pads, pads);
      try {
        dnnl::convolution_forward::primitive_desc candidate(desc, attr, cpuEngine());
        // Winograd has several kernels (F(2,3), two F(4,3)) and oneDNN's
        // first is not the fastest: ResNet's 128->128 8x8 conv at batch 1
        // ran 80.5, 65.4 and 51.7 µs on the Zen 4 VM. Each is a candidate.
        int kernels = 0;
        do {
          // oneDNN's reference kernel is 1000x slower than its pick: only a
          // last resort (the first layout), never a candidate of its own.
          if (candidates.empty() || std::strncmp(candidate.impl_info_str(), "ref", 3) != 0)
            candidates.push_back({layout.choice, candidate});
        } while (layout.algorithm == dnnl::algorithm::convolution_winograd && ++kernels < 4 &&
                 candidate.next_impl());
      } catch (const dnnl::error &) {
        // This machine has no kernel for that layout: not a candidate.
      }
    }
    if (candidates.empty())
      return entry;
    // A blocked operand chained to another conv costs no reorder in
    // nChw16c, which fastestConv (the conv alone) does not see: prefer the
    // candidates that take it so.
    if (p.srcBlocked || p.dstBlocked) {
      std::vector<ConvCandidate> chained;
      for (const ConvCandidate &candidate : candidates)
        if ((!p.srcBlocked || candidate.pd.src_desc() == srcBlocked16) &&
            (!p.dstBlocked || candidate.pd.dst_desc() == dstBlocked16))
          chained.push_back(candidate);
      if (!chained.empty())
        candidates = std::move(chained);
    }
    const dnnl::convolution_forward::primitive_desc &pd = candidates[fastestConv(candidates)].pd;
    lastCreated() = pd.impl_info_str();
    prepareOperand(entry->src, pd.src_desc(), false);
    prepareOperand(entry->weights, pd.weights_desc(), false);
    entry->scratchpadBytes = pd.scratchpad_desc().get_size();
    if (pool.active()) {
      // The conv's output never leaves oneDNN's layout.
      entry->dst.user = entry->dst.inner = pd.dst_desc();
      entry->pooled.user = memory::desc(pooledSizes, memory::data_type::f32, pooledStrides);
      dnnl::pooling_forward::desc poolDesc(
          dnnl::prop_kind::forward_inference, dnnl::algorithm::pooling_max, pd.dst_desc(),
          any(entry->pooled.user), {pool.stride[0], pool.stride[1]},
          {pool.kernel[0], pool.kernel[1]}, {0, 0}, {0, 0});
      dnnl::primitive_attr poolAttr;
      poolAttr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::pooling_forward::primitive_desc poolPd(poolDesc, poolAttr, cpuEngine());
      prepareOperand(entry->pooled, poolPd.dst_desc(), true);
      entry->scratchpadBytes =
          std::max(entry->scratchpadBytes, poolPd.scratchpad_desc().get_size());
      entry->pool = std::make_unique<dnnl::pooling_forward>(poolPd);
    } else {
      prepareOperand(entry->dst, pd.dst_desc(), true);
    }
    entry->primitive = std::make_unique<dnnl::convolution_forward>(pd);
  } catch (const dnnl::error &) {
    entry->primitive.reset();
  }
  return entry;
}

/// Shapes, strides and parameters of one call: the primitive cache's key.
std::vector<int64_t> cacheKey(const View5 &in, const View5 &w, const View5 &out,
                              const ConvParams &p, const PoolParams &pool, const View5 &pooled) {
  std::vector<int64_t> key;
  for (const View5 *view : {&in, &w, &out, &pooled}) {
    key.insert(key.end(), view->sizes.begin(), view->sizes.end());
    key.insert(key.end(), view->strides.begin(), view->strides.end());
  }
  key.insert(key.end(),
             {p.stride[0], p.stride[1], p.pad[0], p.pad[1], p.dilation[0], p.dilation[1],
              p.accumulate, p.bias != nullptr, p.activations, p.srcBlocked, p.dstBlocked,
              pool.kernel[0], pool.kernel[1], pool.stride[0], pool.stride[1], forcedConvLayout(),
              // oneDNN keeps the work split of the thread count at creation.
              omp_get_max_threads()});
  return key;
}

/// The conv (and the pooling, when `pool` is active: then `out` only gives
/// the conv output's dims and `pooled` is written) on `conv`'s primitives.
void runPrimitives(const CachedConv &conv, const View5 &in, const View5 &w, const View5 &out,
                   const ConvParams &p, const PoolParams &pool, const View5 &pooled) {
  thread_local ThreadBuffer srcBuffer, weightsBuffer, dstBuffer, pooledBuffer;
  dnnl::stream &stream = threadStream();
  using dnnl::memory;
  // This thread's memory objects for the entry, by role: an operand's user
  // layout at an even role, its primitive layout at the odd one after it.
  enum Role { kSrc = 0, kWeights = 2, kDst = 4, kPooled = 6, kBias = 8, kScratchpad = 9 };
  BoundArgs &bound = threadBoundArgs(&conv);
  // The caller's buffer, or its copy in the primitive's layout.
  auto operand = [&](const Operand &o, int role, float *data, ThreadBuffer &buffer) {
    memory &user = bound.memory(role, o.user, data);
    if (!o.reordered())
      return std::pair<memory, memory>{user, user};
    return std::pair<memory, memory>{
        user, bound.memory(role + 1, o.inner, buffer.get(o.inner.get_size()))};
  };
  auto [srcUser, src] = operand(conv.src, kSrc, in.data, srcBuffer);
  auto [weightsUser, weights] = operand(conv.weights, kWeights, w.data, weightsBuffer);
  auto [dstUser, dst] =
      pool.active()
          ? operand(conv.dst, kDst, static_cast<float *>(dstBuffer.get(conv.dst.inner.get_size())),
                    dstBuffer)
          : operand(conv.dst, kDst, out.data, dstBuffer);
  if (conv.src.toInner)
    conv.src.toInner->execute(stream, srcUser, src);
  if (conv.weights.toInner && p.constantWeights)
    weights = constantWeightsCopy(w.data, conv.weights.inner, *conv.weights.toInner, weightsUser);
  else if (conv.weights.toInner)
    conv.weights.toInner->execute(stream, weightsUser, weights);
  if (conv.dst.toInner && p.accumulate)
    conv.dst.toInner->execute(stream, dstUser, dst);
  std::unordered_map<int, memory> &args = bound.args(0);
  args[DNNL_ARG_SRC] = src;
  args[DNNL_ARG_WEIGHTS] = weights;
  args[DNNL_ARG_DST] = dst;
  if (p.bias)
    args[DNNL_ARG_BIAS] = bound.memory(
        kBias, memory::desc({out.sizes[1] * out.sizes[2]}, memory::data_type::f32, {1}), p.bias);
  if (conv.scratchpadBytes > 0)
    args[DNNL_ARG_SCRATCHPAD] = bound.scratchpad(kScratchpad, conv.scratchpadBytes);
  conv.primitive->execute(stream, args);
  if (conv.dst.toUser)
    conv.dst.toUser->execute(stream, dst, dstUser);
  if (conv.pool) {
    auto [pooledUser, pooledInner] = operand(conv.pooled, kPooled, pooled.data, pooledBuffer);
    std::unordered_map<int, memory> &poolArgs = bound.args(1);
    poolArgs[DNNL_ARG_SRC] = dst;
    poolArgs[DNNL_ARG_DST] = pooledInner;
    if (conv.scratchpadBytes > 0)
      poolArgs[DNNL_ARG_SCRATCHPAD] = args[DNNL_ARG_SCRATCHPAD];
    conv.pool->execute(stream, poolArgs);
    if (conv.pooled.toUser)
      conv.pooled.toUser->execute(stream, pooledInner, pooledUser);
  }
  stream.wait();
}

/// A view of `view`'s sizes and strides over a zeroed buffer of `storage`.
View5 scratchLike(const View5 &view, std::vector<float> &storage) {
  int64_t span = 1;
  for (int d = 0; d < 5; ++d)
    span += (view.sizes[size_t(d)] - 1) * view.strides[size_t(d)];
  storage.assign(size_t(span), 0.0f);
  View5 scratch = view;
  scratch.data = storage.data();
  return scratch;
}

/// Whether RowConv.h's kernel runs the call instead of `entry`'s
/// primitives: where it applies and MODELC_CONV_LAYOUT names it or oneDNN
/// declined, or, where channels are few (fewer than 16 in, or outputs not a
/// multiple of 16: oneDNN's blocks are then partly padding), it is faster
/// than the whole primitive path (reorders and pooling included), each
/// timed on scratch outputs as fastestConv times.
bool chooseRows(const CachedConv &entry, const View5 &in, const View5 &w, const View5 &out,
                const ConvParams &p, const PoolParams &pool, const View5 &pooled) {
  if (!rowsApply(in, w, out, p, pool, pooled))
    return false;
  int forced = forcedConvLayout();
  if (forced == kRowsChoice + 1 || !entry.primitive)
    return true;
  if (forced > 0 || (in.sizes[2] >= 16 && w.sizes[1] % 16 == 0))
    return false;
  std::vector<float> outStorage, pooledStorage;
  View5 scratchOut = pool.active() ? out : scratchLike(out, outStorage);
  View5 scratchPooled = pool.active() ? scratchLike(pooled, pooledStorage) : pooled;
  RowConvProblem problem = rowProblem(in, w, scratchOut, p, pool, scratchPooled);
  // Interleaved, best of the runs after the first, ~2 ms of each side.
  double rows = std::numeric_limits<double>::infinity(), primitives = rows, spent = 0;
  for (int run = 0; run < 4 || (run < 40 && spent < 4e-3); ++run) {
    double rowsRun = secondsOf([&] { rowConv(problem); });
    double primitivesRun =
        secondsOf([&] { runPrimitives(entry, in, w, scratchOut, p, pool, scratchPooled); });
    spent += rowsRun + primitivesRun;
    if (run > 0) {
      rows = std::min(rows, rowsRun);
      primitives = std::min(primitives, primitivesRun);
    }
  }
  return rows < primitives;
}

const CachedConv &lookupConv(const View5 &in, const View5 &w, const View5 &out, const ConvParams &p,
                             const PoolParams &pool, const View5 &pooled) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, std::unique_ptr<CachedConv>> cache;
  std::vector<int64_t> key = cacheKey(in, w, out, p, pool, pooled);
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = cache[key];
  if (!slot) {
    slot = createConv(in, w, out, p, pool, pooled);
    slot->rows = chooseRows(*slot, in, w, out, p, pool, pooled);
    if (slot->rows)
      lastCreated() = tileKernelsUseAvx512() ? "rows:avx512" : "rows:portable";
  }
  return *slot; // entries are never erased, so the reference stays valid
}

/// The conv (and the pooling, when `pool` is active: then `out` only gives
/// the conv output's dims and `pooled` is written); false when oneDNN
/// declined and RowConv.h's kernel does not apply.
bool executeConv(const View5 &in, const View5 &w, const View5 &out, const ConvParams &p,
                 const PoolParams &pool, const View5 &pooled) {
  const CachedConv &conv = lookupConv(in, w, out, p, pool, pooled);
  if (conv.rows) {
    rowConv(rowProblem(in, w, out, p, pool, pooled));
    return true;
  }
  if (!conv.primitive)
    return false;
  runPrimitives(conv, in, w, out, p, pool, pooled);
  return true;
}

/// Whether a conv runs on the calling thread. Small convs do and large
/// ones do not (RuntimeThreads.h); in between (1M-16M multiply-adds, more
/// than one thread) it is measured per shape and process (first call and
/// again later, ThreadDecision) on the call's own operands, serial against parallel (taking
/// turns, best of three warm runs each), parallel kept when 10% faster, as products do
/// (GemmChoice.cpp). A conv that
/// accumulates into its output is not run twice: the threshold decides.
bool convRunsSerially(double macs, const View5 &in, const View5 &w, const View5 &out,
                      const ConvParams &p, const PoolParams &pool, const View5 &pooled) {
  if (omp_get_max_threads() <= 1 || macs >= kParallelMinMacs)
    return false;
  if (macs < 1024.0 * 1024 || p.accumulate)
    return true;
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, ThreadDecision> decisions;
  std::lock_guard<std::mutex> lock(mutex);
  ThreadDecision &decision = decisions[cacheKey(in, w, out, p, pool, pooled)];
  if (!decision.measureNow())
    return decision.serial;
  // Both ways take turns, a run each per round, so that a transient falls
  // on both; the first two rounds create the primitives and wake the
  // threads.
  double fastest[2] = {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity()};
  for (int round = 0; round < 5; ++round)
    for (bool serial : {true, false}) {
      SerialScope scope(serial);
      bool ran = true;
      double seconds = secondsOf([&] { ran = executeConv(in, w, out, p, pool, pooled); });
      if (!ran)
        return true;
      if (round >= 2)
        fastest[serial] = std::min(fastest[serial], seconds);
    }
  decision.serial = !(fastest[false] < 0.9 * fastest[true]);
  return decision.serial;
}

bool runConv(const View5 &in, const View5 &w, const View5 &out, const ConvParams &p,
             const PoolParams &pool = {}, const View5 &pooled = {}) {
  double macs = 1;
  for (int64_t size : out.sizes)
    macs *= double(size);
  for (int d = 2; d < 5; ++d)
    macs *= double(w.sizes[d]);
  // The same thread count when the primitive is created (oneDNN sizes its
  // work split then; the cache key has it) and run.
  SerialScope serial(convRunsSerially(macs, in, w, out, p, pool, pooled));
  return executeConv(in, w, out, p, pool, pooled);
}

#endif

} // namespace

namespace {

/// `outView`, when given, replaces `output` (a buffer of this file's).
void conv2d(UnrankedMemRefType<float> *input, UnrankedMemRefType<float> *weight,
            UnrankedMemRefType<float> *output, const ConvParams &params,
            const View5 *outView = nullptr) {
  View5 in = asRank5(*input, 1), w = asRank5(*weight, 0),
        out = outView ? *outView : asRank5(*output, 1);
  for (int64_t size : out.sizes)
    if (size == 0)
      return;
#if MODELC_HAVE_DNNL
  if (in.sizes[2] != 0 && runConv(in, w, out, params))
    return;
#else
  if (rowsApply(in, w, out, params, {}, {}))
    return rowConv(rowProblem(in, w, out, params, {}, {}));
#endif
  // The loops read and write NCHW: blocked operands go through copies.
  auto plainCopy = [](const View5 &blocked, std::vector<float> &storage) {
    storage.resize(size_t(blocked.sizes[0] * blocked.sizes[1] * blocked.sizes[2] *
                          blocked.sizes[3] * blocked.sizes[4]));
    return contiguous(storage.data(), blocked.sizes);
  };
  std::vector<float> plainIn, plainOut;
  if (params.srcBlocked) {
    View5 plain = plainCopy(in, plainIn);
    convertBlocked(in, plain, true);
    in = plain;
  }
  View5 blockedOut = out;
  if (params.dstBlocked) {
    out = plainCopy(blockedOut, plainOut);
    if (params.accumulate)
      convertBlocked(blockedOut, out, true);
  }
  convLoop(in, w, out, params);
  if (params.dstBlocked)
    convertBlocked(blockedOut, out, false);
}

} // namespace

namespace {

/// output = maxpool(act(conv2d(input, weight) + bias)): the conv's output
/// exists only inside this call.
void conv2dPool(UnrankedMemRefType<float> *input, UnrankedMemRefType<float> *weight,
                UnrankedMemRefType<float> *output, const ConvParams &params,
                const PoolParams &pool) {
  View5 in = asRank5(*input, 1), w = asRank5(*weight, 0), pooled = asRank5(*output, 1);
  auto extent = [&](int d, int64_t size, int64_t kernel) {
    return (size + 2 * params.pad[d] - params.dilation[d] * (kernel - 1) - 1) / params.stride[d] +
           1;
  };
  View5 out =
      contiguous(nullptr, {in.sizes[0], in.sizes[1], w.sizes[1], extent(0, in.sizes[3], w.sizes[3]),
                           extent(1, in.sizes[4], w.sizes[4])});
  for (int64_t size : pooled.sizes)
    if (size == 0)
      return;
#if MODELC_HAVE_DNNL
  if (in.sizes[2] != 0 && runConv(in, w, out, params, pool, pooled))
    return;
#else
  if (rowsApply(in, w, out, params, pool, pooled))
    return rowConv(rowProblem(in, w, out, params, pool, pooled));
#endif
  std::vector<float> convOut(size_t(out.sizes[0] * out.strides[0]));
  out.data = convOut.data();
  conv2d(input, weight, nullptr, params, &out);
  maxPoolLoop(out, pooled, pool);
}

} // namespace

extern "C" void modelc_conv2d_ciface(UnrankedMemRefType<float> *input,
                                     UnrankedMemRefType<float> *weight,
                                     UnrankedMemRefType<float> *output, int64_t strideH,
                                     int64_t strideW, int64_t padH, int64_t padW, int64_t dilationH,
                                     int64_t dilationW) {
  conv2d(input, weight, output,
         ConvParams{{strideH, strideW}, {padH, padW}, {dilationH, dilationW}});
}

namespace {

/// The parameters modelc_conv2d_epilogue and modelc_conv2d_pool share.
ConvParams epilogueParams(UnrankedMemRefType<float> *bias, int64_t strideH, int64_t strideW,
                          int64_t padH, int64_t padW, int64_t dilationH, int64_t dilationW,
                          int64_t flags, int64_t activations) {
  ConvParams params{{strideH, strideW}, {padH, padW}, {dilationH, dilationW}};
  params.accumulate = flags & kConvAccumulate;
  if (flags & kConvBias) {
    // A contiguous rank-1 buffer of the output channels (the lowering
    // passes the bias tensor itself).
    auto *words = static_cast<int64_t *>(bias->descriptor);
    params.bias = reinterpret_cast<const float *>(words[1]) + words[2];
  }
  params.activations = activations;
  params.srcBlocked = flags & kConvSrcBlocked16;
  params.dstBlocked = flags & kConvDstBlocked16;
  params.constantWeights = flags & kConvConstantWeights;
  return params;
}

} // namespace

extern "C" void modelc_conv2d_epilogue_ciface(UnrankedMemRefType<float> *input,
                                              UnrankedMemRefType<float> *weight,
                                              UnrankedMemRefType<float> *output,
                                              UnrankedMemRefType<float> *bias, int64_t strideH,
                                              int64_t strideW, int64_t padH, int64_t padW,
                                              int64_t dilationH, int64_t dilationW, int64_t flags,
                                              int64_t activations) {
  conv2d(
      input, weight, output,
      epilogueParams(bias, strideH, strideW, padH, padW, dilationH, dilationW, flags, activations));
}

extern "C" void modelc_to_blocked16_ciface(UnrankedMemRefType<float> *input,
                                           UnrankedMemRefType<float> *output) {
  View5 in = asRank5(*input, 1), out = asRank5(*output, 1);
#if MODELC_HAVE_DNNL
  using dnnl::memory;
  memory::dims sizes, strides;
  if (mergeChannels(in, sizes, strides)) {
    static std::mutex mutex;
    static std::map<std::vector<int64_t>, std::unique_ptr<dnnl::reorder>> cache;
    std::vector<int64_t> key(sizes.begin(), sizes.end());
    key.insert(key.end(), strides.begin(), strides.end());
    memory::desc plain(sizes, memory::data_type::f32, strides),
        blocked(sizes, memory::data_type::f32, memory::format_tag::nChw16c);
    dnnl::reorder *reorder = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto &slot = cache[key];
      if (!slot)
        slot = std::make_unique<dnnl::reorder>(
            dnnl::reorder::primitive_desc(cpuEngine(), plain, cpuEngine(), blocked));
      reorder = slot.get();
    }
    dnnl::stream &stream = threadStream();
    memory from(plain, cpuEngine(), in.data), to(blocked, cpuEngine(), out.data);
    reorder->execute(stream, from, to);
    stream.wait();
    return;
  }
#endif
  convertBlocked(out, in, false);
}

extern "C" void
modelc_conv2d_pool_ciface(UnrankedMemRefType<float> *input, UnrankedMemRefType<float> *weight,
                          UnrankedMemRefType<float> *output, UnrankedMemRefType<float> *bias,
                          int64_t strideH, int64_t strideW, int64_t padH, int64_t padW,
                          int64_t dilationH, int64_t dilationW, int64_t flags, int64_t activations,
                          int64_t poolKernelH, int64_t poolKernelW, int64_t poolStrideH,
                          int64_t poolStrideW) {
  // The pooled call always overwrites (the lowering folds no accumulation).
  ConvParams params = epilogueParams(bias, strideH, strideW, padH, padW, dilationH, dilationW,
                                     flags & ~kConvAccumulate, activations);
  PoolParams pool;
  pool.kernel[0] = poolKernelH;
  pool.kernel[1] = poolKernelW;
  pool.stride[0] = poolStrideH;
  pool.stride[1] = poolStrideW;
  conv2dPool(input, weight, output, params, pool);
}

std::string modelc::jit::lastCreatedConvKernel() { return lastCreated(); }
