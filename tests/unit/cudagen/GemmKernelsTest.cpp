//===- GemmKernelsTest.cpp - The GEMM kernels on awkward shapes -----------===//
//
// matmulKernels and conv2dKernels on shapes that are not multiples of any
// tile (M = 1, odd K, transposed operands, broadcast batches, groups,
// strides, padding), with epilogues, for every size class and the split-K
// path, in f32 (exact, and on TF32 tensor cores) and in f16 and bf16 (on
// f16/bf16 tensor cores): one translation unit runs on the CPU emulator
// against float64 references, compiles with NVRTC for sm_80 and sm_90 and
// passes ptxas; the half tiles also build for sm_75, where they fall back
// to SIMT FMAs, and that fallback runs on the emulator.
//
//===----------------------------------------------------------------------===//

#include "cudagen/GemmKernels.h"
#include "cudagen/KernelSource.h"
#include "cudagen/Report.h"

#include "runtime/HalfConversions.h"
#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/emulator/Emulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

using namespace modelc;
using namespace modelc::cudagen;
using runtime::DType;

namespace {

bool isHalfType(DType t) { return t == DType::F16 || t == DType::BF16; }

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
  BufferRef buffer(llvm::SmallVector<SizeExpr, 4> shape, DType dtype = DType::F32) {
    BufferRef b{BufferId(shapes.size()), dtype, shape};
    shapes.push_back(std::move(shape));
    dtypes.push_back(dtype);
    return b;
  }
  WorkspaceMaker workspace() {
    return [this](DType dtype, llvm::SmallVector<SizeExpr, 4> shape) {
      return buffer(std::move(shape), dtype);
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
    /// The inner product of its GEMM kernels: decides the error bound.
    GemmMath math = GemmMath::SimtFma;
    int64_t depth = 0; ///< K, for the half bound
  };
  std::vector<Case> cases;
  std::vector<llvm::SmallVector<SizeExpr, 4>> shapes;
  std::vector<DType> dtypes;

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

/// `x` as the nearest `dtype` value (round to nearest even), widened.
float roundTo(DType dtype, float x) {
  if (dtype == DType::F16)
    return mdl_f16_bits_to_float(mdl_float_to_f16_bits(x));
  if (dtype == DType::BF16)
    return mdl_bf16_bits_to_float(mdl_float_to_bf16_bits(x));
  return x;
}

/// Values in [-1, 1), each a `dtype` value.
std::vector<float> randomValues(size_t n, unsigned seed, DType dtype = DType::F32) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = roundTo(dtype, dist(gen));
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

std::vector<std::string> sizeClasses(llvm::ArrayRef<SizeExpr> out, const SizeExpr &k,
                                     GemmMath math) {
  unsigned rank = out.size();
  std::vector<std::string> names;
  for (const GemmVariant &v :
       chooseGemmVariants(out[rank - 2], out[rank - 1], k, product(out.drop_back(2)), math))
    names.push_back(v.sizeClass);
  return names;
}

/// How one family of cases multiplies: the element type of every buffer
/// (outputs included) and, for f32, whether TF32 was asked for.
struct Flavour {
  DType dtype = DType::F32;
  GemmPrecision precision = GemmPrecision::Exact;

  GemmMath math() const { return chooseGemmMath(dtype, dtype, dtype, precision); }
  std::string suffix() const {
    if (dtype == DType::F16)
      return "_f16";
    if (dtype == DType::BF16)
      return "_bf16";
    return precision == GemmPrecision::TF32 ? "_tf32" : "";
  }
};

const Flavour Exact{}, Tf32{DType::F32, GemmPrecision::TF32}, F16{DType::F16}, Bf16{DType::BF16};

/// The cases of `flavours`: 2-D with a symbolic M in every size class,
/// transposed operands (aligned for 16-byte copies and not), broadcast
/// batches, M = 1, both dims small, conv2d with groups and split-K. TF32
/// takes the linear layer and the split conv (its narrow classes are exact
/// f32).
GemmCases makeCases(std::vector<Flavour> flavours = {Exact, Tf32, F16, Bf16}) {
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
  auto add = [&](const Flavour &f, std::string name, std::vector<GeneratedKernel> kernels,
                 std::vector<BufferRef> inputs, BufferRef out, std::vector<int64_t> bindings,
                 std::vector<std::string> classes, int64_t depth, auto reference) {
    GemmCases::Case c;
    c.name = name + f.suffix();
    c.kernels = std::move(kernels);
    c.inputs = std::move(inputs);
    c.out = out;
    c.reference = reference;
    c.bindings = std::move(bindings);
    c.sizeClasses = std::move(classes);
    c.math = f.math();
    c.depth = depth;
    g.cases.push_back(std::move(c));
  };

  for (const Flavour &f : flavours) {
    const DType t = f.dtype;
    const bool tf32 = f.precision == GemmPrecision::TF32;
    // relu(x @ W.T + bias) + residual with M = B: the medium kernel with
    // split-K at B = 1 and 70, the 128x128 kernel at B = 8450 (134 tiles).
    // Half: K = 136, rows 16-byte aligned (cp.async), a last slice of 8.
    {
      const int64_t depth = isHalfType(t) ? 136 : 100;
      BufferRef x = g.buffer({b, depth}, t), w = g.buffer({129, depth}, t),
                bias = g.buffer({129}, t), residual = g.buffer({b, 129}, t),
                out = g.buffer({b, 129}, t);
      ExprPtr epilogue = binary("add", relu(binary("add", accumulator(), load(bias, {1}))),
                                load(residual, {0, 1}));
      MatmulOperand lhs = plain(x), rhs = transposed(w);
      add(f, "linear_relu_residual",
          matmulKernels(origin("linear"), 0, lhs, rhs, epilogue, out, g.workspace(), f.precision),
          {x, w, bias, residual}, out,
          tf32 ? std::vector<int64_t>{1, 8450} : std::vector<int64_t>{1, 70, 8450},
          sizeClasses(out.shape, depth, f.math()), depth,
          [=](const std::vector<std::vector<float>> &in, int64_t batch) {
            SymbolValues s = bind(batch);
            std::vector<double> y =
                referenceMatmul(lhs, rhs, in[0], in[1], evaluated(out.shape, s), s);
            for (int64_t r = 0; r < batch; ++r)
              for (int64_t o = 0; o < 129; ++o) {
                double &v = y[r * 129 + o];
                v = std::max(v + in[2][o], 0.0) + in[3][r * 129 + o];
              }
            return y;
          });
    }
    // The same layer over a sequence, [B, 5, K] @ W.T + bias + residual +
    // a term per position [5, N] + a term per batch element [B, N]: one
    // GEMM of 5 * B rows (split-K at B = 1 and 40), the epilogue's
    // coordinates taken back from the folded row.
    {
      const int64_t depth = isHalfType(t) ? 136 : 100;
      BufferRef x = g.buffer({b, 5, depth}, t), w = g.buffer({129, depth}, t),
                bias = g.buffer({129}, t), residual = g.buffer({b, 5, 129}, t),
                position = g.buffer({5, 129}, t), perBatch = g.buffer({b, 129}, t),
                out = g.buffer({b, 5, 129}, t);
      ExprPtr epilogue = binary("add",
                                binary("add",
                                       binary("add", binary("add", accumulator(), load(bias, {2})),
                                              load(residual, {0, 1, 2})),
                                       load(position, {1, 2})),
                                load(perBatch, {0, 2}));
      MatmulOperand lhs = plain(x), rhs = transposed(w);
      std::vector<GeneratedKernel> kernels =
          matmulKernels(origin("sequence"), 0, lhs, rhs, epilogue, out, g.workspace(), f.precision);
      for (const char *line : {"const int64_t M = 5 * B, N = 129, K = ",
                               "const int64_t folded_batch = row / 5;", "c1 = row % 5;"})
        EXPECT_NE(kernels[0].source.find(line), std::string::npos) << line << kernels[0].source;
      add(f, "sequence_projection_residual", std::move(kernels),
          {x, w, bias, residual, position, perBatch}, out, {1, 40},
          sizeClasses({b * 5, 129}, depth, f.math()), depth,
          [=](const std::vector<std::vector<float>> &in, int64_t batch) {
            SymbolValues s = bind(batch);
            std::vector<double> y =
                referenceMatmul(lhs, rhs, in[0], in[1], evaluated(out.shape, s), s);
            for (int64_t r = 0; r < batch * 5; ++r)
              for (int64_t o = 0; o < 129; ++o)
                y[r * 129 + o] += in[2][o] + in[3][r * 129 + o] + in[4][(r % 5) * 129 + o] +
                                  in[5][(r / 5) * 129 + o];
            return y;
          });
    }
    // Every transposition of M x K @ K x N (static: one medium kernel, K
    // split in two): 37x70x45 has odd strides (element loads); f16 takes
    // 40x64x48 instead, every row 16-byte aligned (cp.async). Either way
    // the half tiles read [k][mn] tiles with ldmatrix .trans.
    std::array<int64_t, 3> shape =
        t == DType::F16 ? std::array<int64_t, 3>{40, 64, 48} : std::array<int64_t, 3>{37, 70, 45};
    for (auto [m, k, n] :
         tf32 ? std::vector<std::array<int64_t, 3>>{} : std::vector<std::array<int64_t, 3>>{shape})
      for (int form = 0; form < 4; ++form) {
        bool aT = form & 1, bT = form & 2;
        BufferRef a = aT ? g.buffer({k, m}, t) : g.buffer({m, k}, t);
        BufferRef bb = bT ? g.buffer({n, k}, t) : g.buffer({k, n}, t);
        BufferRef out = g.buffer({m, n}, t);
        MatmulOperand lhs = aT ? transposed(a) : plain(a), rhs = bT ? transposed(bb) : plain(bb);
        add(f,
            llvm::formatv("matmul_{0}{1}_{2}x{3}x{4}", aT ? "t" : "n", bT ? "t" : "n", m, k, n)
                .str(),
            matmulKernels(origin("matmul"), 0, lhs, rhs, nullptr, out, g.workspace(), f.precision),
            {a, bb}, out, {1}, sizeClasses(out.shape, k, f.math()), k,
            [=](const std::vector<std::vector<float>> &in, int64_t) {
              return referenceMatmul(lhs, rhs, in[0], in[1], {m, n}, {});
            });
      }
    if (tf32) {
      // TF32's conv below; its narrow classes are exact f32.
    } else {
      // [B, 3, 40, 33] @ [3, 33, 9] (broadcast over B): narrow columns,
      // batches on blockIdx.z; with a scale epilogue.
      {
        BufferRef a = g.buffer({b, 3, 40, 33}, t), bb = g.buffer({3, 33, 9}, t),
                  out = g.buffer({b, 3, 40, 9}, t);
        Expr two;
        two.value = 2;
        ExprPtr epilogue = binary("mul", accumulator(), node(two));
        MatmulOperand lhs = plain(a), rhs = plain(bb);
        add(f, "batched_broadcast",
            matmulKernels(origin("bmm"), 0, lhs, rhs, epilogue, out, g.workspace(), f.precision),
            {a, bb}, out, {2}, sizeClasses(out.shape, 33, f.math()), 33,
            [=](const std::vector<std::vector<float>> &in, int64_t batch) {
              SymbolValues s = bind(batch);
              std::vector<double> y =
                  referenceMatmul(lhs, rhs, in[0], in[1], evaluated(out.shape, s), s);
              for (double &v : y)
                v *= 2;
              return y;
            });
      }
      // [1, 300] @ [300, 70]: narrow rows, K split in 9; [20, 50] @ [50,
      // 24]: both dims small.
      for (auto [m, k, n, name] :
           {std::tuple<int64_t, int64_t, int64_t, const char *>{1, 300, 70, "gemv"},
            {20, 50, 24, "small"}}) {
        BufferRef a = g.buffer({m, k}, t), bb = g.buffer({k, n}, t), out = g.buffer({m, n}, t);
        MatmulOperand lhs = plain(a), rhs = plain(bb);
        add(f, name,
            matmulKernels(origin(name), 0, lhs, rhs, nullptr, out, g.workspace(), f.precision),
            {a, bb}, out, {1}, sizeClasses(out.shape, k, f.math()), k,
            [=](const std::vector<std::vector<float>> &in, int64_t) {
              return referenceMatmul(lhs, rhs, in[0], in[1], {m, n}, {});
            });
      }
    }
    // conv2d: groups 2, stride 2, padding 1, dilation 2, bias, relu; and
    // one group of 40 output channels with K = 72 split in two, bias, no
    // epilogue (the one TF32 takes).
    struct ConvShape {
      int64_t n, c, h, o, k;
      Conv2dParams p;
      bool relu;
    };
    std::vector<ConvShape> convs = {
        ConvShape{1, 8, 7, 40, 3, Conv2dParams{1, 1, 1, 1, 1, 1, 1}, false}};
    if (!tf32)
      convs.insert(convs.begin(),
                   ConvShape{2, 4, 9, 6, 3, Conv2dParams{2, 2, 1, 1, 2, 2, 2}, true});
    for (const ConvShape &cs : convs) {
      const Conv2dParams p = cs.p;
      int64_t oh = (cs.h + 2 * p.padH - p.dilationH * (cs.k - 1) - 1) / p.strideH + 1;
      BufferRef x = g.buffer({b, cs.c, cs.h, cs.h}, t),
                w = g.buffer({cs.o, cs.c / p.groups, cs.k, cs.k}, t), bias = g.buffer({cs.o}, t),
                out = g.buffer({b, cs.o, oh, oh}, t);
      ExprPtr epilogue = cs.relu ? relu(accumulator()) : nullptr;
      int64_t reduction = (cs.c / p.groups) * cs.k * cs.k;
      std::vector<std::string> classes;
      for (const GemmVariant &v :
           chooseGemmVariants(cs.o / p.groups, b * oh * oh, reduction, p.groups, f.math()))
        classes.push_back(v.sizeClass);
      add(f, cs.relu ? "conv_groups_relu" : "conv_split",
          conv2dKernels(origin("conv"), 0, x, w, bias, p, epilogue, out, g.workspace(),
                        f.precision),
          {x, w, bias}, out, {cs.n}, classes, reduction,
          [=](const std::vector<std::vector<float>> &in, int64_t n) {
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
                        for (int64_t s = 0; s < cs.k; ++s) {
                          int64_t ih = i * p.strideH - p.padH + r * p.dilationH;
                          int64_t iw = j * p.strideW - p.padW + s * p.dilationW;
                          if (ih >= 0 && ih < cs.h && iw >= 0 && iw < cs.h)
                            acc += double(in[0][((bi * cs.c + group * cg + ic) * cs.h + ih) * cs.h +
                                                iw]) *
                                   in[1][((oc * cg + ic) * cs.k + r) * cs.k + s];
                        }
                    y[((bi * cs.o + oc) * oh + i) * oh + j] = cs.relu ? std::max(acc, 0.0) : acc;
                  }
            return y;
          });
    }
  }
  return g;
}

size_t elementBytes(DType dtype) { return runtime::dtypeSize(dtype); }

/// Runs every case of `g` (compiled from `source`) on the emulator and holds
/// each result to its bound against float64:
/// - exact f32: 1e-4 + 1e-5 relative;
/// - TF32: each input rounded to a 10-bit mantissa (relative error <=
///   2^-11) makes each product off by <= 2^-10 of |a| |b|: 2^-10 * sum
///   |a||b| (the reference on |inputs|, epilogue terms included) + 1e-5;
/// - f16/bf16 tensor cores: exact products, f32 accumulation of K terms and
///   the epilogue's few f32 operations, then one rounding to the half type
///   (unit roundoff u = 2^-11, bf16 2^-8): u |want| + (K + 8) 2^-24 sum
///   |a||b| + 2^-24. A half accumulator (error ~ K u sum |a||b|) or a
///   rounding before the epilogue breaks it.
/// Adds the size classes that ran to `classesRun`, for "f32", "_f16" and
/// "_bf16" outputs.
void runCases(const GemmCases &g, const std::string &source,
              std::map<std::string, std::set<std::string>> &classesRun) {
  cuda::Emulator &emu = cuda::Emulator::global();
  auto module = emu.loadModule(source, "gemm.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  for (const GemmCases::Case &c : g.cases) {
    for (int64_t batch : c.bindings) {
      SCOPED_TRACE(c.name + " B=" + std::to_string(batch));
      SymbolValues symbols = bind(batch);
      std::map<BufferId, void *> memory;
      std::vector<std::vector<float>> inputs;
      auto allocate = [&](BufferId id) {
        if (memory.count(id))
          return;
        int64_t n = elements(g.shapes[id], symbols);
        llvm::Expected<void *> m =
            emu.allocate(0, std::max<int64_t>(n, 1) * elementBytes(g.dtypes[id]));
        ASSERT_TRUE(bool(m));
        memory[id] = *m;
      };
      for (const BufferRef &in : c.inputs) {
        allocate(in.id);
        inputs.push_back(randomValues(elements(in.shape, symbols), 100 + in.id, in.dtype));
        const std::vector<float> &values = inputs.back();
        if (isHalfType(in.dtype)) {
          std::vector<uint16_t> bits;
          for (float v : values)
            bits.push_back(in.dtype == DType::F16 ? mdl_float_to_f16_bits(v)
                                                  : mdl_float_to_bf16_bits(v));
          ASSERT_FALSE(bool(emu.copyHostToDevice(0, memory[in.id], bits.data(), bits.size() * 2)));
        } else {
          ASSERT_FALSE(
              bool(emu.copyHostToDevice(0, memory[in.id], values.data(), values.size() * 4)));
        }
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
        if (l.kernel.find("_sum") == std::string::npos)
          for (const std::string &sizeClass : c.sizeClasses)
            if (k.source.find("; " + sizeClass + " (") != std::string::npos)
              classesRun[!isHalfType(c.out.dtype)    ? "f32"
                         : c.out.dtype == DType::F16 ? "_f16"
                                                     : "_bf16"]
                  .insert(sizeClass);
      }
      EXPECT_GE(launched, 1u);
      int64_t count = elements(c.out.shape, symbols);
      std::vector<float> got(count);
      if (isHalfType(c.out.dtype)) {
        std::vector<uint16_t> bits(count);
        ASSERT_FALSE(bool(emu.copyDeviceToHost(0, bits.data(), memory[c.out.id], count * 2)));
        for (int64_t i = 0; i < count; ++i)
          got[i] = c.out.dtype == DType::F16 ? mdl_f16_bits_to_float(bits[i])
                                             : mdl_bf16_bits_to_float(bits[i]);
      } else {
        ASSERT_FALSE(bool(emu.copyDeviceToHost(0, got.data(), memory[c.out.id], count * 4)));
      }
      std::vector<double> want = c.reference(inputs, batch);
      ASSERT_EQ(got.size(), want.size());
      std::vector<double> magnitude;
      if (c.math != GemmMath::SimtFma) {
        std::vector<std::vector<float>> absolute = inputs;
        for (std::vector<float> &values : absolute)
          for (float &v : values)
            v = std::fabs(v);
        magnitude = c.reference(absolute, batch);
      }
      const double unit = c.out.dtype == DType::F16 ? 0x1.0p-11 : 0x1.0p-8;
      double worstRatio = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        double bound = 0;
        switch (c.math) {
        case GemmMath::SimtFma:
          bound = 1e-4 + 1e-5 * std::fabs(want[i]);
          break;
        case GemmMath::Tf32Mma:
          bound = std::ldexp(magnitude[i], -10) + 1e-5;
          break;
        case GemmMath::HalfMma:
          bound = unit * std::fabs(want[i]) + (c.depth + 8) * 0x1.0p-24 * magnitude[i] + 0x1.0p-24;
          break;
        }
        ASSERT_NEAR(got[i], want[i], bound) << "element " << i;
        worstRatio = std::max(worstRatio, std::fabs(got[i] - want[i]) / bound);
      }
      // TF32 really rounded: the error is not fp32's (1e-6 of the bound);
      // half results are rounded to the half type (about half the bound).
      if (c.math != GemmMath::SimtFma) {
        EXPECT_GT(worstRatio, 1e-2);
      }
      for (auto &[id, pointer] : memory)
        EXPECT_FALSE(bool(emu.free(0, pointer)));
    }
  }
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

TEST(GemmVariantsTest, HalfTilesOnTensorCores) {
  SizeExpr b = SizeExpr::symbol("B");
  // Every class of an f16/bf16 GEMM runs mma.sync tiles of 32-deep slices
  // within 48 KiB of static shared memory.
  std::vector<GemmVariant> v = chooseGemmVariants(b, 1024, 4096, 1, GemmMath::HalfMma);
  ASSERT_EQ(v.size(), 2u);
  for (const std::vector<GemmVariant> &variants :
       {v, chooseGemmVariants(64, 10, 784, 1, GemmMath::HalfMma),
        chooseGemmVariants(6, b * 784, 25, 1, GemmMath::HalfMma),
        chooseGemmVariants(6, 10, 25, 1, GemmMath::HalfMma)})
    for (const GemmVariant &variant : variants) {
      EXPECT_EQ(variant.tile.math, GemmMath::HalfMma) << variant.sizeClass;
      EXPECT_EQ(variant.tile.blockK, 32) << variant.sizeClass;
      EXPECT_LE(variant.tile.sharedBytes(), 48 * 1024) << variant.sizeClass;
    }
  EXPECT_EQ(v[0].tile.str(), "128x128x32 tile, f16/bf16 mma.sync m16n8k16, 64x32 per warp, 2 "
                             "stages");
  EXPECT_EQ(v[0].tile.threads(), 256);
  EXPECT_EQ(v[1].tile.threads(), 128);
  // Split-K as for f32: 16 tiles of 64x64 at batch 1, 17 slices.
  EXPECT_EQ(*v[1].splits.evaluate(bind(1)), 17);
  // The operands' dtypes pick the inner product; TF32 only where asked,
  // for f32.
  EXPECT_EQ(chooseGemmMath(DType::F16, DType::F16, DType::F32, GemmPrecision::Exact),
            GemmMath::HalfMma);
  EXPECT_EQ(chooseGemmMath(DType::BF16, DType::BF16, DType::BF16, GemmPrecision::TF32),
            GemmMath::HalfMma);
  EXPECT_EQ(chooseGemmMath(DType::F16, DType::BF16, DType::F16, GemmPrecision::Exact),
            GemmMath::SimtFma);
  EXPECT_EQ(chooseGemmMath(DType::F32, DType::F32, DType::F32, GemmPrecision::TF32),
            GemmMath::Tf32Mma);
  EXPECT_EQ(chooseGemmMath(DType::F64, DType::F64, DType::F64, GemmPrecision::TF32),
            GemmMath::SimtFma);
}

TEST(GemmKernelsTest, RunOnTheEmulatorAgainstFloat64) {
  GemmCases g = makeCases();
  for (const GemmCases::Case &c : g.cases)
    for (const GeneratedKernel &k : c.kernels) {
      if (c.math == GemmMath::HalfMma && k.launch.kernel.find("_sum") == std::string::npos) {
        EXPECT_NE(k.source.find("mdl_gemm_tile_half<"), std::string::npos) << k.launch.kernel;
      }
    }
  std::map<std::string, std::set<std::string>> classesRun;
  runCases(g, g.source(), classesRun);
  // Every size class ran somewhere, in f32 and in each half type.
  for (const char *flavour : {"_f16", "_bf16"})
    for (const char *sizeClass : {"large", "medium", "narrow rows", "narrow columns", "small"})
      EXPECT_TRUE(classesRun[flavour].count(sizeClass)) << flavour << " " << sizeClass;
  for (const char *sizeClass : {"large", "medium", "narrow rows", "narrow columns", "small"})
    EXPECT_TRUE(classesRun["f32"].count(sizeClass)) << sizeClass;
}

/// The half linear layers (large, medium, split-K) and grouped convs: what
/// the SIMT fallback of the half tiles is checked on.
GemmCases fallbackCases() {
  GemmCases g = makeCases({F16, Bf16});
  llvm::erase_if(g.cases, [](const GemmCases::Case &c) {
    return c.name.find("linear") == std::string::npos &&
           c.name.find("conv_groups") == std::string::npos;
  });
  return g;
}

/// The half tiles with the tensor cores switched off (MDL_NO_TENSOR_CORES,
/// what a GPU before sm_80 compiles): the SIMT fallback accumulates in f32
/// too and meets the same bound.
TEST(GemmKernelsTest, HalfFallbackOnTheEmulatorAgainstFloat64) {
  GemmCases g = fallbackCases();
  ASSERT_EQ(g.cases.size(), 4u);
  std::map<std::string, std::set<std::string>> classesRun;
  runCases(g, "#define MDL_NO_TENSOR_CORES 1\n" + g.source(), classesRun);
  EXPECT_TRUE(classesRun["_f16"].count("large"));
  EXPECT_TRUE(classesRun["_bf16"].count("medium"));
}

/// Resources of every kernel of `source` from ptxas -v for `arch`; fails
/// the test where NVRTC or ptxas reject it.
llvm::StringMap<KernelResources> compileForArch(cuda::Nvrtc &nvrtc, const std::string &ptxas,
                                                const std::string &source, const char *arch,
                                                std::string *ptxText = nullptr) {
  cuda::NvrtcRequest request;
  request.source = source;
  request.name = "gemm.cu";
  request.arch = arch;
  request.output = cuda::NvrtcOutput::PTX;
  llvm::Expected<std::string> ptx = nvrtc.compile(request);
  EXPECT_TRUE(bool(ptx)) << arch << ": " << (ptx ? "" : llvm::toString(ptx.takeError()));
  if (!ptx)
    return {};
  if (ptxText)
    *ptxText = *ptx;
  if (ptxas.empty())
    return {};
  llvm::Expected<std::string> log = runPtxas(ptxas, *ptx, arch);
  EXPECT_TRUE(bool(log)) << arch << ": " << (log ? "" : llvm::toString(log.takeError()));
  if (!log)
    return {};
  return parsePtxasVerbose(*log);
}

TEST(GemmKernelsTest, CompileWithNvrtcAndPtxas) {
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
  GemmCases g = makeCases();
  std::string ptxas = findPtxas();
  std::string source = g.source();
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string ptx;
    llvm::StringMap<KernelResources> resources = compileForArch(*nvrtc, ptxas, source, arch, &ptx);
    for (const char *instruction :
         {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
          "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
          "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "cp.async.cg.shared.global",
          "cp.async.wait_group", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"})
      EXPECT_NE(ptx.find(instruction), std::string::npos) << arch << ": " << instruction;
    if (ptxas.empty())
      continue;
    for (const GemmCases::Case &c : g.cases)
      for (const GeneratedKernel &k : c.kernels) {
        auto it = resources.find(k.info.name);
        ASSERT_NE(it, resources.end()) << k.info.name << " missing from ptxas -v";
        // A register count within the 255 a thread may have, static shared
        // memory within the 48 KiB a kernel may declare.
        EXPECT_GT(it->second.registers, 0u) << k.info.name;
        EXPECT_LE(it->second.registers, 255u) << k.info.name;
        EXPECT_LE(it->second.sharedBytes, 48u * 1024) << k.info.name;
      }
  }
  if (ptxas.empty())
    GTEST_SKIP() << "ptxas not found: NVRTC compiled every kernel, ptxas did not check them";
}

/// Before sm_80 the half tiles compile to SIMT FMAs: no cp.async, ldmatrix
/// or m16n8k16 in the PTX, and ptxas accepts it for sm_75.
TEST(GemmKernelsTest, HalfTilesCompileForSm75WithoutTensorCores) {
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
  GemmCases g = fallbackCases();
  std::string ptx;
  llvm::StringMap<KernelResources> resources =
      compileForArch(*nvrtc, findPtxas(), g.source(), "sm_75", &ptx);
  ASSERT_FALSE(ptx.empty());
  for (const char *instruction : {"mma.sync", "ldmatrix", "cp.async"})
    EXPECT_EQ(ptx.find(instruction), std::string::npos) << instruction;
  EXPECT_NE(ptx.find("fma.rn.f32"), std::string::npos);
}

} // namespace
