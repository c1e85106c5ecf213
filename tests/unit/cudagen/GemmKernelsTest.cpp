//===- GemmKernelsTest.cpp - The GEMM kernels on awkward shapes -----------===//
//
// matmulKernels and conv2dKernels on shapes that are not multiples of any
// tile (M = 1, odd K, transposed operands, broadcast batches, groups,
// strides, padding), with epilogues, for every size class and the split-K
// path: one translation unit runs on the CPU emulator against float64
// references, compiles with NVRTC for sm_80 and sm_90 and passes ptxas.
//
//===----------------------------------------------------------------------===//

#include "cudagen/GemmKernels.h"
#include "cudagen/KernelSource.h"
#include "cudagen/Report.h"

#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/emulator/Emulator.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace modelc;
using namespace modelc::cudagen;
using runtime::DType;

namespace {

std::shared_ptr<Expr> node(Expr e) { return std::make_shared<Expr>(std::move(e)); }

ExprPtr accumulator() {
  Expr e;
  e.kind = Expr::Kind::Epilogue;
  return node(e);
}
ExprPtr load(const BufferRef &b, llvm::SmallVector<int, 4> dimMap) {
  Expr e;
  e.kind = Expr::Kind::Load;
  e.buffer = b;
  e.dimMap = std::move(dimMap);
  return node(e);
}
ExprPtr binary(llvm::StringRef op, ExprPtr a, ExprPtr b) {
  Expr e;
  e.kind = Expr::Kind::Binary;
  e.op = op.str();
  e.operands = {std::move(a), std::move(b)};
  return node(e);
}
ExprPtr relu(ExprPtr x) {
  Expr e;
  e.kind = Expr::Kind::Unary;
  e.op = "relu";
  e.operands = {std::move(x)};
  return node(e);
}

/// The kernels under test, their buffers and how to check them.
class GemmCases {
public:
  BufferRef buffer(llvm::SmallVector<SizeExpr, 4> shape) {
    BufferRef b{BufferId(shapes.size()), DType::F32, shape};
    shapes.push_back(std::move(shape));
    return b;
  }
  WorkspaceMaker workspace() {
    return [this](DType dtype, llvm::SmallVector<SizeExpr, 4> shape) {
      BufferRef b = buffer(std::move(shape));
      b.dtype = dtype;
      return b;
    };
  }

  struct Case {
    std::string name;
    std::vector<GeneratedKernel> kernels;
    std::vector<BufferRef> inputs;
    BufferRef out;
    /// Expected output from the inputs' values, for the bound symbols.
    std::function<std::vector<double>(const std::vector<std::vector<float>> &, int64_t)> reference;
    std::vector<int64_t> bindings; ///< values of `B` to run with
    std::vector<std::string> sizeClasses;
    /// On TF32 tensor cores: held to the TF32 bound instead of fp32's.
    bool tf32 = false;
  };
  std::vector<Case> cases;
  std::vector<llvm::SmallVector<SizeExpr, 4>> shapes;

  std::string source() const {
    std::string text = kernelPrelude();
    for (const Case &c : cases)
      for (const GeneratedKernel &k : c.kernels)
        text += "\n" + k.source;
    return text;
  }
};

/// Element (row, col) of a matmul operand with batch coordinates `batch`
/// (aligned right with the operand's batch dims).
double operandAt(const MatmulOperand &op, const std::vector<float> &values,
                 const SymbolValues &symbols, llvm::ArrayRef<int64_t> batch, int64_t row,
                 int64_t col) {
  unsigned rank = op.shape.size();
  auto coord = [&](int d) -> int64_t {
    if (d == int(rank) - 2)
      return row;
    if (d == int(rank) - 1)
      return col;
    return batch[batch.size() - (rank - 2) + d];
  };
  int64_t offset = 0, stride = 1;
  for (int j = int(op.buffer.shape.size()) - 1; j >= 0; --j) {
    if (op.dimMap[j] >= 0)
      offset += coord(op.dimMap[j]) * stride;
    stride *= *op.buffer.shape[j].evaluate(symbols);
  }
  return values[offset];
}

/// out[..., m, n] = sum_k A[..., m, k] B[..., k, n] in float64.
std::vector<double> referenceMatmul(const MatmulOperand &a, const MatmulOperand &b,
                                    const std::vector<float> &aValues,
                                    const std::vector<float> &bValues,
                                    llvm::ArrayRef<int64_t> outShape, const SymbolValues &symbols) {
  unsigned rank = outShape.size();
  int64_t m = outShape[rank - 2], n = outShape[rank - 1], k = *a.shape.back().evaluate(symbols);
  int64_t batches = 1;
  for (unsigned d = 0; d + 2 < rank; ++d)
    batches *= outShape[d];
  std::vector<double> out(batches * m * n);
  std::vector<int64_t> batch(rank - 2);
  for (int64_t z = 0; z < batches; ++z) {
    for (int64_t rest = z, d = int64_t(rank) - 3; d >= 0; --d) {
      batch[d] = rest % outShape[d];
      rest /= outShape[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          sum += operandAt(a, aValues, symbols, batch, i, kk) *
                 operandAt(b, bValues, symbols, batch, kk, j);
        out[(z * m + i) * n + j] = sum;
      }
  }
  return out;
}

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

SymbolValues bind(int64_t b) {
  SymbolValues s;
  s["B"] = b;
  return s;
}

int64_t elements(llvm::ArrayRef<SizeExpr> shape, const SymbolValues &symbols) {
  int64_t n = 1;
  for (const SizeExpr &d : shape)
    n *= *d.evaluate(symbols);
  return n;
}

std::vector<int64_t> evaluated(llvm::ArrayRef<SizeExpr> shape, const SymbolValues &symbols) {
  std::vector<int64_t> out;
  for (const SizeExpr &d : shape)
    out.push_back(*d.evaluate(symbols));
  return out;
}

std::vector<std::string> sizeClasses(llvm::ArrayRef<SizeExpr> out, const SizeExpr &k) {
  unsigned rank = out.size();
  std::vector<std::string> names;
  for (const GemmVariant &v :
       chooseGemmVariants(out[rank - 2], out[rank - 1], k, product(out.drop_back(2))))
    names.push_back(v.sizeClass);
  return names;
}

/// Every case: 2-D with a symbolic M in every size class, transposed
/// operands, broadcast batches, M = 1, conv2d with groups and split-K.
GemmCases makeCases() {
  GemmCases g;
  SizeExpr b = SizeExpr::symbol("B");
  int kernelCount = 0;
  auto origin = [&](llvm::StringRef what) {
    return KernelOrigin{"k" + std::to_string(kernelCount++) + "_" + what.str(), {"test.mdl:1"}};
  };
  auto plain = [](const BufferRef &buffer) {
    MatmulOperand op;
    op.buffer = buffer;
    op.shape = buffer.shape;
    for (unsigned d = 0; d < buffer.shape.size(); ++d)
      op.dimMap.push_back(int(d));
    return op;
  };
  // A 2-D buffer read transposed: logical [rows, cols] from [cols, rows].
  auto transposed = [](const BufferRef &buffer) {
    MatmulOperand op;
    op.buffer = buffer;
    op.shape = {buffer.shape[1], buffer.shape[0]};
    op.dimMap = {1, 0};
    return op;
  };

  // relu(x @ W.T + bias) + residual with M = B: the medium kernel with
  // split-K at B = 1 and 70, the 128x128 kernel at B = 8450 (134 tiles);
  // exact and on TF32 tensor cores.
  for (GemmPrecision precision : {GemmPrecision::Exact, GemmPrecision::TF32}) {
    bool tf32 = precision == GemmPrecision::TF32;
    BufferRef x = g.buffer({b, 100}), w = g.buffer({129, 100}), bias = g.buffer({129}),
              residual = g.buffer({b, 129}), out = g.buffer({b, 129});
    ExprPtr epilogue =
        binary("add", relu(binary("add", accumulator(), load(bias, {1}))), load(residual, {0, 1}));
    MatmulOperand lhs = plain(x), rhs = transposed(w);
    GemmCases::Case c{
        tf32 ? "linear_relu_residual_tf32" : "linear_relu_residual",
        matmulKernels(origin("linear"), 0, lhs, rhs, epilogue, out, g.workspace(), precision),
        {x, w, bias, residual},
        out,
        nullptr,
        tf32 ? std::vector<int64_t>{1, 8450} : std::vector<int64_t>{1, 70, 8450},
        sizeClasses(out.shape, 100),
        tf32};
    c.reference = [=](const std::vector<std::vector<float>> &in, int64_t batch) {
      SymbolValues s = bind(batch);
      std::vector<double> y = referenceMatmul(lhs, rhs, in[0], in[1], evaluated(out.shape, s), s);
      for (int64_t r = 0; r < batch; ++r)
        for (int64_t o = 0; o < 129; ++o) {
          double &v = y[r * 129 + o];
          v = std::max(v + in[2][o], 0.0) + in[3][r * 129 + o];
        }
      return y;
    };
    g.cases.push_back(c);
  }
  // Every transposition of a 37x70 @ 70x45 product (static: one medium
  // kernel, K split in two).
  for (int form = 0; form < 4; ++form) {
    bool aT = form & 1, bT = form & 2;
    BufferRef a = aT ? g.buffer({70, 37}) : g.buffer({37, 70});
    BufferRef bb = bT ? g.buffer({45, 70}) : g.buffer({70, 45});
    BufferRef out = g.buffer({37, 45});
    MatmulOperand lhs = aT ? transposed(a) : plain(a), rhs = bT ? transposed(bb) : plain(bb);
    GemmCases::Case c{std::string("matmul_") + (aT ? "t" : "n") + (bT ? "t" : "n"),
                      matmulKernels(origin("matmul"), 0, lhs, rhs, nullptr, out, g.workspace()),
                      {a, bb},
                      out,
                      nullptr,
                      {1},
                      sizeClasses(out.shape, 70)};
    c.reference = [=](const std::vector<std::vector<float>> &in, int64_t) {
      return referenceMatmul(lhs, rhs, in[0], in[1], {37, 45}, {});
    };
    g.cases.push_back(c);
  }
  // [B, 3, 40, 33] @ [3, 33, 9] (broadcast over B): narrow columns, batches
  // on blockIdx.z; with a scale epilogue.
  {
    BufferRef a = g.buffer({b, 3, 40, 33}), bb = g.buffer({3, 33, 9}),
              out = g.buffer({b, 3, 40, 9});
    Expr two;
    two.value = 2;
    ExprPtr epilogue = binary("mul", accumulator(), node(two));
    MatmulOperand lhs = plain(a), rhs = plain(bb);
    GemmCases::Case c{"batched_broadcast",
                      matmulKernels(origin("bmm"), 0, lhs, rhs, epilogue, out, g.workspace()),
                      {a, bb},
                      out,
                      nullptr,
                      {2},
                      sizeClasses(out.shape, 33)};
    c.reference = [=](const std::vector<std::vector<float>> &in, int64_t batch) {
      SymbolValues s = bind(batch);
      std::vector<double> y = referenceMatmul(lhs, rhs, in[0], in[1], evaluated(out.shape, s), s);
      for (double &v : y)
        v *= 2;
      return y;
    };
    g.cases.push_back(c);
  }
  // [1, 300] @ [300, 70]: narrow rows, K split in 9.
  {
    BufferRef a = g.buffer({1, 300}), bb = g.buffer({300, 70}), out = g.buffer({1, 70});
    MatmulOperand lhs = plain(a), rhs = plain(bb);
    GemmCases::Case c{"gemv",
                      matmulKernels(origin("gemv"), 0, lhs, rhs, nullptr, out, g.workspace()),
                      {a, bb},
                      out,
                      nullptr,
                      {1},
                      sizeClasses(out.shape, 300)};
    c.reference = [=](const std::vector<std::vector<float>> &in, int64_t) {
      return referenceMatmul(lhs, rhs, in[0], in[1], {1, 70}, {});
    };
    g.cases.push_back(c);
  }
  // conv2d: groups 2, stride 2, padding 1, dilation 2, bias, relu; and one
  // group of 40 output channels with K = 72 split in two, bias, no epilogue.
  struct ConvShape {
    int64_t n, c, h, o, k;
    Conv2dParams p;
    bool relu;
    bool tf32 = false;
  };
  for (const ConvShape &cs :
       {ConvShape{2, 4, 9, 6, 3, Conv2dParams{2, 2, 1, 1, 2, 2, 2}, true},
        ConvShape{1, 8, 7, 40, 3, Conv2dParams{1, 1, 1, 1, 1, 1, 1}, false},
        ConvShape{1, 8, 7, 40, 3, Conv2dParams{1, 1, 1, 1, 1, 1, 1}, false, true}}) {
    const Conv2dParams p = cs.p;
    int64_t oh = (cs.h + 2 * p.padH - p.dilationH * (cs.k - 1) - 1) / p.strideH + 1;
    BufferRef x = g.buffer({b, cs.c, cs.h, cs.h}),
              w = g.buffer({cs.o, cs.c / p.groups, cs.k, cs.k}), bias = g.buffer({cs.o}),
              out = g.buffer({b, cs.o, oh, oh});
    ExprPtr epilogue = cs.relu ? relu(accumulator()) : nullptr;
    SizeExpr reduction = (cs.c / p.groups) * cs.k * cs.k;
    std::vector<std::string> classes;
    for (const GemmVariant &v :
         chooseGemmVariants(cs.o / p.groups, b * oh * oh, reduction, p.groups))
      classes.push_back(v.sizeClass);
    GemmPrecision precision = cs.tf32 ? GemmPrecision::TF32 : GemmPrecision::Exact;
    GemmCases::Case c{
        cs.relu   ? "conv_groups_relu"
        : cs.tf32 ? "conv_split_tf32"
                  : "conv_split",
        conv2dKernels(origin("conv"), 0, x, w, bias, p, epilogue, out, g.workspace(), precision),
        {x, w, bias},
        out,
        nullptr,
        {cs.n},
        classes,
        cs.tf32};
    c.reference = [=](const std::vector<std::vector<float>> &in, int64_t n) {
      int64_t cg = cs.c / p.groups, og = cs.o / p.groups;
      std::vector<double> y(n * cs.o * oh * oh);
      for (int64_t bi = 0; bi < n; ++bi)
        for (int64_t oc = 0; oc < cs.o; ++oc)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < oh; ++j) {
              double acc = in[2][oc];
              int64_t group = oc / og;
              for (int64_t ic = 0; ic < cg; ++ic)
                for (int64_t r = 0; r < cs.k; ++r)
                  for (int64_t t = 0; t < cs.k; ++t) {
                    int64_t ih = i * p.strideH - p.padH + r * p.dilationH;
                    int64_t iw = j * p.strideW - p.padW + t * p.dilationW;
                    if (ih >= 0 && ih < cs.h && iw >= 0 && iw < cs.h)
                      acc +=
                          double(in[0][((bi * cs.c + group * cg + ic) * cs.h + ih) * cs.h + iw]) *
                          in[1][((oc * cg + ic) * cs.k + r) * cs.k + t];
                  }
              y[((bi * cs.o + oc) * oh + i) * oh + j] = cs.relu ? std::max(acc, 0.0) : acc;
            }
      return y;
    };
    g.cases.push_back(c);
  }
  return g;
}

TEST(GemmVariantsTest, SizeClasses) {
  SizeExpr b = SizeExpr::symbol("B");
  // A symbolic M with N >= 128: the 128x128 kernel where it fills the GPU,
  // the 64x64 kernel (with split-K) below; exactly one runs.
  std::vector<GemmVariant> v = chooseGemmVariants(b, 1024, 4096, 1);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].sizeClass, "large");
  EXPECT_EQ(v[1].sizeClass, "medium");
  auto at = [&](const SizeExpr &e, int64_t batch) { return *e.evaluate(bind(batch)); };
  for (int64_t batch : {1, 64, 512, 1055, 1056, 4096}) {
    EXPECT_EQ(at(v[0].active, batch) + at(v[1].active, batch), 1) << batch;
    // 1056 rows: 9 x 8 = 72 tiles of 128x128, less than 132.
    EXPECT_EQ(at(v[0].active, batch), batch >= 16 * 128 ? 1 : 0) << batch;
  }
  // Batch 1: 16 tiles of 64x64, K = 4096: 17 slices (two blocks per SM).
  EXPECT_EQ(at(v[1].splits, 1), 17);
  EXPECT_EQ(at(v[1].workspaceRows(), 1), 17);
  // A full wave of 64x64 tiles is not split; an inactive variant has no
  // workspace.
  EXPECT_EQ(at(v[1].splits, 4096), 1);
  EXPECT_EQ(at(v[1].workspaceRows(), 4096), 0);
  // Static shapes give one kernel; batched GEMMs are never split.
  EXPECT_EQ(chooseGemmVariants(64, 256, 784, 1).size(), 1u);
  EXPECT_EQ(chooseGemmVariants(64, 10, 784, 1)[0].sizeClass, "narrow columns");
  EXPECT_EQ(chooseGemmVariants(6, b * 784, 25, 1)[0].sizeClass, "narrow rows");
  EXPECT_FALSE(chooseGemmVariants(b, 64, 4096, 8)[0].mayTakeSplits());
}

TEST(GemmKernelsTest, RunOnTheEmulatorAgainstFloat64) {
  GemmCases g = makeCases();
  cuda::Emulator &emu = cuda::Emulator::global();
  auto module = emu.loadModule(g.source(), "gemm.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  std::set<std::string> classesRun;
  for (const GemmCases::Case &c : g.cases) {
    for (int64_t batch : c.bindings) {
      SymbolValues symbols = bind(batch);
      std::map<BufferId, void *> memory;
      std::vector<std::vector<float>> inputs;
      auto allocate = [&](BufferId id) {
        if (memory.count(id))
          return;
        int64_t n = elements(g.shapes[id], symbols);
        llvm::Expected<void *> m = emu.allocate(0, std::max<int64_t>(n, 1) * 4);
        ASSERT_TRUE(bool(m));
        memory[id] = *m;
      };
      for (const BufferRef &in : c.inputs) {
        allocate(in.id);
        inputs.push_back(randomValues(elements(in.shape, symbols), 100 + in.id));
        ASSERT_FALSE(bool(emu.copyHostToDevice(0, memory[in.id], inputs.back().data(),
                                               inputs.back().size() * 4)));
      }
      unsigned launched = 0;
      for (const GeneratedKernel &k : c.kernels) {
        const Launch &l = k.launch;
        auto dim = [&](const std::array<SizeExpr, 3> &d) {
          return cuda::Dim3{unsigned(*d[0].evaluate(symbols)), unsigned(*d[1].evaluate(symbols)),
                            unsigned(*d[2].evaluate(symbols))};
        };
        cuda::Dim3 grid = dim(l.grid);
        if (!grid.x || !grid.y || !grid.z)
          continue;
        ++launched;
        llvm::Expected<cuda::EmulatedKernel> kernel = (*module)->kernel(l.kernel);
        ASSERT_TRUE(bool(kernel)) << l.kernel;
        std::vector<void *> pointers(l.args.size());
        std::vector<int64_t> sizes(l.args.size());
        std::vector<void *> args(l.args.size());
        for (size_t i = 0; i < l.args.size(); ++i) {
          if (l.args[i].kind == KernelArg::Kind::Buffer) {
            allocate(l.args[i].buffer);
            pointers[i] = memory[l.args[i].buffer];
            args[i] = &pointers[i];
          } else {
            sizes[i] = *l.args[i].size.evaluate(symbols);
            args[i] = &sizes[i];
          }
        }
        llvm::Error err = emu.launch(0, *kernel, grid, dim(l.block), args.data());
        ASSERT_FALSE(bool(err)) << l.kernel << ": " << llvm::toString(std::move(err));
        if (k.info.category != "matmul" || l.kernel.find("_sum") == std::string::npos)
          for (const std::string &sizeClass : c.sizeClasses)
            if (k.source.find("; " + sizeClass + " (") != std::string::npos)
              classesRun.insert(sizeClass);
      }
      EXPECT_GE(launched, 1u) << c.name;
      std::vector<float> got(elements(c.out.shape, symbols));
      ASSERT_FALSE(bool(emu.copyDeviceToHost(0, got.data(), memory[c.out.id], got.size() * 4)));
      std::vector<double> want = c.reference(inputs, batch);
      ASSERT_EQ(got.size(), want.size());
      // TF32's bound: each input rounded to a 10-bit mantissa (relative
      // error <= 2^-11) makes each product off by <= 2^-10 of |a| |b|; the
      // reference on |inputs| bounds the sum of |a| |b| (plus the
      // epilogue's |terms|).
      std::vector<double> magnitude;
      if (c.tf32) {
        std::vector<std::vector<float>> absolute = inputs;
        for (std::vector<float> &values : absolute)
          for (float &v : values)
            v = std::fabs(v);
        magnitude = c.reference(absolute, batch);
      }
      double worstTf32Ratio = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        double bound =
            c.tf32 ? std::ldexp(magnitude[i], -10) + 1e-5 : 1e-4 + 1e-5 * std::fabs(want[i]);
        ASSERT_NEAR(got[i], want[i], bound) << c.name << " B=" << batch << " element " << i;
        if (c.tf32)
          worstTf32Ratio = std::max(worstTf32Ratio, std::fabs(got[i] - want[i]) / bound);
      }
      // TF32 really rounded: the error is not fp32's (1e-6 of the bound).
      if (c.tf32) {
        EXPECT_GT(worstTf32Ratio, 1e-2) << c.name << " B=" << batch;
      }
      for (auto &[id, pointer] : memory)
        EXPECT_FALSE(bool(emu.free(0, pointer)));
    }
  }
  // Every size class and the split-K sum ran somewhere.
  for (const char *sizeClass : {"large", "medium", "narrow rows", "narrow columns"})
    EXPECT_TRUE(classesRun.count(sizeClass)) << sizeClass;
}

TEST(GemmKernelsTest, CompileWithNvrtcAndPtxas) {
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
  GemmCases g = makeCases();
  std::string ptxas = findPtxas();
  std::string source = g.source();
  for (const char *arch : {"sm_80", "sm_90"}) {
    cuda::NvrtcRequest request;
    request.source = source;
    request.name = "gemm.cu";
    request.arch = arch;
    request.output = cuda::NvrtcOutput::PTX;
    llvm::Expected<std::string> ptx = nvrtc->compile(request);
    ASSERT_TRUE(bool(ptx)) << arch << ": " << (ptx ? "" : llvm::toString(ptx.takeError()));
    if (ptxas.empty())
      continue;
    llvm::Expected<std::string> log = runPtxas(ptxas, *ptx, arch);
    ASSERT_TRUE(bool(log)) << (log ? "" : llvm::toString(log.takeError()));
    llvm::StringMap<KernelResources> resources = parsePtxasVerbose(*log);
    for (const GemmCases::Case &c : g.cases)
      for (const GeneratedKernel &k : c.kernels) {
        auto it = resources.find(k.info.name);
        ASSERT_NE(it, resources.end()) << k.info.name << " missing from ptxas -v";
        // A register count within the 255 a thread may have.
        EXPECT_GT(it->second.registers, 0u) << k.info.name;
        EXPECT_LE(it->second.registers, 255u) << k.info.name;
      }
  }
  if (ptxas.empty())
    GTEST_SKIP() << "ptxas not found: NVRTC compiled every kernel, ptxas did not check them";
}

} // namespace
