//===- WarpMatrixTest.cpp - The emulated warp-level matrix instructions ---===//
//
// The inline-PTX functions of the GEMM prelude (mma.sync m16n8k8 TF32 and
// m16n8k16 f16/bf16, ldmatrix x4 and .trans, cp.async with commit and wait
// groups) as runtime/cuda/emulator/warp_matrix_emulation.h computes them,
// one warp at a time, against the PTX ISA's fragment layouts (restated here,
// independently of the emulator's index arithmetic) and float64; and the
// same kernels through NVRTC for sm_80 and sm_90 and ptxas.
//
//===----------------------------------------------------------------------===//

#include "cudagen/KernelSource.h"
#include "cudagen/Report.h"

#include "runtime/HalfConversions.h"
#include "runtime/cuda/Nvrtc.h"
#include "runtime/cuda/emulator/Emulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <random>

using namespace modelc;
using namespace modelc::cudagen;

namespace {

/// One warp's kernels. The mma kernels load each lane's fragments straight
/// from global memory as the PTX ISA's tables place them (lane = 4 * g + t):
/// m16n8k8 .tf32: A rows g, g + 8 x columns t, t + 4; B rows t, t + 4 x
/// column g. m16n8k16 .f16/.bf16 (two elements per register, the lower
/// column or row in the low half): A a0..a3 = (g, 2t), (g + 8, 2t), (g, 2t
/// + 8), (g + 8, 2t + 8), each with its right neighbour; B b0, b1 = rows 2t
/// and 2t + 1, rows 2t + 8 and 2t + 9, of column g. C and D: rows g, g + 8 x
/// columns 2t, 2t + 1.
const char *warpKernels = R"(
extern "C" __global__ void mma_tf32_m16n8k8(const float *a, const float *b, const float *c,
                                            float *d) {
  const int lane = threadIdx.x, group = lane / 4, t = lane % 4;
  const uint32_t fa[4] = {mdl_to_tf32(a[group * 8 + t]), mdl_to_tf32(a[(group + 8) * 8 + t]),
                          mdl_to_tf32(a[group * 8 + t + 4]),
                          mdl_to_tf32(a[(group + 8) * 8 + t + 4])};
  const uint32_t fb[2] = {mdl_to_tf32(b[t * 8 + group]), mdl_to_tf32(b[(t + 4) * 8 + group])};
  const float fc[4] = {c[group * 8 + 2 * t], c[group * 8 + 2 * t + 1],
                       c[(group + 8) * 8 + 2 * t], c[(group + 8) * 8 + 2 * t + 1]};
  float fd[4];
  mdl_mma_m16n8k8_tf32(fd, fa, fb, fc);
  d[group * 8 + 2 * t] = fd[0];
  d[group * 8 + 2 * t + 1] = fd[1];
  d[(group + 8) * 8 + 2 * t] = fd[2];
  d[(group + 8) * 8 + 2 * t + 1] = fd[3];
}

static __device__ uint32_t pack(uint16_t low, uint16_t high) {
  return (uint32_t)low | (uint32_t)high << 16;
}

// A: 16x16 row-major, B: 16x8 row-major (k, n), C and D: 16x8 row-major.
template <bool BF16>
static __device__ void mmaM16n8k16(const uint16_t *a, const uint16_t *b, const float *c,
                                   float *d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  const uint32_t fa[4] = {pack(a[g * 16 + 2 * t], a[g * 16 + 2 * t + 1]),
                          pack(a[(g + 8) * 16 + 2 * t], a[(g + 8) * 16 + 2 * t + 1]),
                          pack(a[g * 16 + 2 * t + 8], a[g * 16 + 2 * t + 9]),
                          pack(a[(g + 8) * 16 + 2 * t + 8], a[(g + 8) * 16 + 2 * t + 9])};
  const uint32_t fb[2] = {pack(b[2 * t * 8 + g], b[(2 * t + 1) * 8 + g]),
                          pack(b[(2 * t + 8) * 8 + g], b[(2 * t + 9) * 8 + g])};
  const float fc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t],
                       c[(g + 8) * 8 + 2 * t + 1]};
  float fd[4];
  if (BF16)
    mdl_mma_m16n8k16_bf16(fd, fa, fb, fc);
  else
    mdl_mma_m16n8k16_f16(fd, fa, fb, fc);
  d[g * 8 + 2 * t] = fd[0];
  d[g * 8 + 2 * t + 1] = fd[1];
  d[(g + 8) * 8 + 2 * t] = fd[2];
  d[(g + 8) * 8 + 2 * t + 1] = fd[3];
}
extern "C" __global__ void mma_f16_m16n8k16(const uint16_t *a, const uint16_t *b, const float *c,
                                            float *d) {
  mmaM16n8k16<false>(a, b, c, d);
}
extern "C" __global__ void mma_bf16_m16n8k16(const uint16_t *a, const uint16_t *b, const float *c,
                                             float *d) {
  mmaM16n8k16<true>(a, b, c, d);
}

// `matrix` (32 rows of 16 elements) staged in shared memory; lane l gives
// the address of row rows[l], element columns[l] (0 or 8); out[j * 32 + l]
// is register j of lane l, plain then .trans (at out + 128).
extern "C" __global__ void ldmatrix_x4(const uint16_t *matrix, const int *rows,
                                       const int *columns, uint32_t *out) {
  __shared__ __align__(16) uint16_t tile[32][16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 32 * 16; i += 32)
    tile[i / 16][i % 16] = matrix[i];
  __syncthreads();
  uint32_t r[4], rt[4];
  mdl_ldmatrix_x4(r, &tile[rows[lane]][columns[lane]]);
  mdl_ldmatrix_x4_trans(rt, &tile[rows[lane]][columns[lane]]);
  for (int j = 0; j < 4; ++j) {
    out[j * 32 + lane] = r[j];
    out[128 + j * 32 + lane] = rt[j];
  }
}

// Two committed groups of 16-byte copies and one uncommitted copy; what
// this thread's shared memory holds after wait_group 1, then 0 (seen[0],
// seen[1], each 3 x 256 elements; 0xffff where nothing has landed).
extern "C" __global__ void cp_async_groups(const uint16_t *source, uint16_t *seen) {
  __shared__ __align__(16) uint16_t staged[3][256];
  const int lane = threadIdx.x;
  for (int s = 0; s < 3; ++s)
    for (int e = 0; e < 8; ++e)
      staged[s][lane * 8 + e] = 0xffff;
  mdl_cp_async_16(&staged[0][lane * 8], source + lane * 8);
  mdl_cp_async_commit();
  mdl_cp_async_16(&staged[1][lane * 8], source + 256 + lane * 8);
  mdl_cp_async_commit();
  mdl_cp_async_16(&staged[2][lane * 8], source + 512 + lane * 8);
  mdl_cp_async_wait<1>();
  for (int s = 0; s < 3; ++s)
    for (int e = 0; e < 8; ++e)
      seen[s * 256 + lane * 8 + e] = staged[s][lane * 8 + e];
  mdl_cp_async_wait<0>();
  for (int s = 0; s < 3; ++s)
    for (int e = 0; e < 8; ++e)
      seen[768 + s * 256 + lane * 8 + e] = staged[s][lane * 8 + e];
  mdl_cp_async_commit();
  mdl_cp_async_wait<0>(); // the third copy lands before the thread exits
}

// A copy to an address that is not 16-byte aligned.
extern "C" __global__ void cp_async_misaligned(const uint16_t *source) {
  __shared__ __align__(16) uint16_t staged[16];
  mdl_cp_async_16(&staged[1], source);
  mdl_cp_async_commit();
  mdl_cp_async_wait<0>();
}
)";

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// Device copies of host vectors, freed at the end of the test.
class DeviceBuffers {
public:
  explicit DeviceBuffers(cuda::Emulator &emu) : emu(emu) {}
  ~DeviceBuffers() {
    for (void *p : pointers) {
      EXPECT_FALSE(bool(emu.free(0, p)));
    }
  }
  template <typename T> void *&add(const std::vector<T> &host) {
    llvm::Expected<void *> m = emu.allocate(0, std::max<size_t>(host.size(), 1) * sizeof(T));
    EXPECT_TRUE(bool(m));
    pointers.push_back(m ? *m : nullptr);
    if (m && !host.empty()) {
      EXPECT_FALSE(bool(emu.copyHostToDevice(0, *m, host.data(), host.size() * sizeof(T))));
    }
    return pointers.back();
  }
  template <typename T> std::vector<T> read(void *device, size_t count) {
    std::vector<T> host(count);
    EXPECT_FALSE(bool(emu.copyDeviceToHost(0, host.data(), device, count * sizeof(T))));
    return host;
  }

private:
  cuda::Emulator &emu;
  std::deque<void *> pointers; // add() hands out references to these
};

/// The module of warpKernels on the emulator (built once).
const cuda::EmulatedModule *warpModule() {
  static llvm::Expected<std::shared_ptr<const cuda::EmulatedModule>> module =
      cuda::Emulator::global().loadModule(kernelPrelude() + warpKernels, "warp.cu");
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return module->get();
}

/// Runs `name` on one warp of 32 threads; arguments are device pointers.
llvm::Error runWarp(const char *name, std::vector<void *> pointers) {
  llvm::Expected<cuda::EmulatedKernel> kernel = warpModule()->kernel(name);
  if (!kernel)
    return kernel.takeError();
  std::vector<void *> args;
  for (void *&p : pointers)
    args.push_back(&p);
  return cuda::Emulator::global().launch(0, *kernel, {1, 1, 1}, {32, 1, 1}, args.data());
}

/// Round to an 11-bit significand (TF32), ties away from zero: written
/// apart from the emulator's bit arithmetic.
double roundToTf32(float x) {
  int exponent = 0;
  double mantissa = std::frexp(double(x), &exponent); // [0.5, 1)
  return std::ldexp(std::round(std::ldexp(mantissa, 11)), exponent - 11);
}

TEST(WarpMmaTest, Tf32M16n8k8OnTheEmulatorMatchesFloat64) {
  ASSERT_TRUE(warpModule());
  cuda::Emulator &emu = cuda::Emulator::global();
  DeviceBuffers device(emu);
  // Values with low mantissa bits set, so that TF32 rounding shows.
  std::vector<float> a = randomValues(16 * 8, 1), b = randomValues(8 * 8, 2),
                     c = randomValues(16 * 8, 3);
  a[0] = 1.0f + 0x1.0p-11f; // a tie: rounds away from zero to 1 + 2^-10
  b[0] = -(1.0f + 0x1.8p-12f);
  void *d = device.add(std::vector<float>(16 * 8));
  ASSERT_FALSE(bool(runWarp("mma_tf32_m16n8k8", {device.add(a), device.add(b), device.add(c), d})));
  std::vector<float> got = device.read<float>(d, 16 * 8);
  EXPECT_EQ(roundToTf32(a[0]), 1.0 + 0x1.0p-10);
  double largestRoundingEffect = 0;
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double want = c[i * 8 + j], exact = c[i * 8 + j], magnitude = std::fabs(c[i * 8 + j]);
      for (int k = 0; k < 8; ++k) {
        want += roundToTf32(a[i * 8 + k]) * roundToTf32(b[k * 8 + j]);
        exact += double(a[i * 8 + k]) * b[k * 8 + j];
        magnitude += std::fabs(double(a[i * 8 + k]) * b[k * 8 + j]);
      }
      // fp32 accumulation of 9 terms over exact TF32 products.
      EXPECT_NEAR(got[i * 8 + j], want, 9 * 0x1.0p-24 * magnitude) << i << "," << j;
      largestRoundingEffect = std::max(largestRoundingEffect, std::fabs(want - exact));
    }
  // The inputs were rounded (an fp32 product would differ from `want`).
  EXPECT_GT(largestRoundingEffect, 1e-5);
}

/// f16 or bf16 bits of `x` (round to nearest even) and back.
uint16_t toBits(bool bf16, float x) {
  return bf16 ? mdl_float_to_bf16_bits(x) : mdl_float_to_f16_bits(x);
}
double fromBits(bool bf16, uint16_t bits) {
  return bf16 ? mdl_bf16_bits_to_float(bits) : mdl_f16_bits_to_float(bits);
}

/// D = A B + C through the emulated m16n8k16 (A 16x16, B 16x8 as k x n).
std::vector<float> mmaM16n8k16(bool bf16, const std::vector<uint16_t> &a,
                               const std::vector<uint16_t> &b, const std::vector<float> &c) {
  DeviceBuffers device(cuda::Emulator::global());
  void *d = device.add(std::vector<float>(16 * 8));
  llvm::Error err = runWarp(bf16 ? "mma_bf16_m16n8k16" : "mma_f16_m16n8k16",
                            {device.add(a), device.add(b), device.add(c), d});
  EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
  return device.read<float>(d, 16 * 8);
}

TEST(WarpMmaTest, HalfM16n8k16OnTheEmulatorMatchesFloat64) {
  ASSERT_TRUE(warpModule());
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "f16");
    std::vector<uint16_t> a, b;
    for (float x : randomValues(16 * 16, 4))
      a.push_back(toBits(bf16, x));
    for (float x : randomValues(16 * 8, 5))
      b.push_back(toBits(bf16, 4 * x));
    std::vector<float> c = randomValues(16 * 8, 6);
    std::vector<float> d = mmaM16n8k16(bf16, a, b, c);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        double want = c[i * 8 + j], magnitude = std::fabs(c[i * 8 + j]);
        for (int k = 0; k < 16; ++k) {
          double product = fromBits(bf16, a[i * 16 + k]) * fromBits(bf16, b[k * 8 + j]);
          want += product;
          magnitude += std::fabs(product);
        }
        // Exact products, f32 accumulation of 17 terms.
        EXPECT_NEAR(d[i * 8 + j], want, 17 * 0x1.0p-24 * magnitude) << i << "," << j;
      }
  }
}

/// Values that name their positions: A(i, k) = 16 i + k (0..255, exact in
/// both half types), B(k, j) = 1 where k = j and 256 where k = j + 8, C(i,
/// j) = 65536 (8 i + j). D(i, j) = C(i, j) + A(i, j) + 256 A(i, j + 8) is
/// exact in f32 and names every element it was made of: any register, lane
/// or half in the wrong place changes it.
TEST(WarpMmaTest, HalfM16n8k16FragmentLayout) {
  ASSERT_TRUE(warpModule());
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "f16");
    std::vector<uint16_t> a(16 * 16), b(16 * 8, toBits(bf16, 0));
    std::vector<float> c(16 * 8);
    for (int i = 0; i < 16; ++i)
      for (int k = 0; k < 16; ++k)
        a[i * 16 + k] = toBits(bf16, float(16 * i + k));
    for (int j = 0; j < 8; ++j) {
      b[j * 8 + j] = toBits(bf16, 1);
      b[(j + 8) * 8 + j] = toBits(bf16, 256);
    }
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j)
        c[i * 8 + j] = float(65536 * (8 * i + j));
    std::vector<float> d = mmaM16n8k16(bf16, a, b, c);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j)
        EXPECT_EQ(d[i * 8 + j], 65536.0 * (8 * i + j) + (16 * i + j) + 256.0 * (16 * i + j + 8))
            << i << "," << j;
  }
}

/// The emulated tensor core accumulates in f32, not in the half type: one
/// product of 2048 (f16; 256 for bf16, where the type's spacing is 2) and
/// fifteen products of 1 give 2063 (271) in f32, while a half accumulator
/// rounds every + 1 back to 2048 (256) (ties to even).
TEST(WarpMmaTest, HalfM16n8k16AccumulatesInF32) {
  ASSERT_TRUE(warpModule());
  for (bool bf16 : {false, true}) {
    SCOPED_TRACE(bf16 ? "bf16" : "f16");
    const float first = bf16 ? 16 : 32, second = bf16 ? 16 : 64;
    std::vector<uint16_t> a(16 * 16, toBits(bf16, 1)), b(16 * 8, toBits(bf16, 1));
    for (int i = 0; i < 16; ++i)
      a[i * 16] = toBits(bf16, first);
    for (int j = 0; j < 8; ++j)
      b[j] = toBits(bf16, second);
    std::vector<float> d = mmaM16n8k16(bf16, a, b, std::vector<float>(16 * 8, 0.0f));
    double halfAccumulator = 0;
    for (int k = 0; k < 16; ++k)
      halfAccumulator =
          fromBits(bf16, toBits(bf16, float(halfAccumulator + (k == 0 ? first * second : 1))));
    const double f32Sum = first * second + 15;
    EXPECT_NE(halfAccumulator, f32Sum);
    for (float v : d)
      EXPECT_EQ(v, f32Sum);
  }
}

/// ldmatrix.x4 from rows that lanes name in an arbitrary order: matrix j's
/// row r is the row lane 8j + r addresses; lane 4g + t receives in register
/// j elements 2t and 2t + 1 of row g (.trans: element g of rows 2t and 2t +
/// 1), the lower one in the low half.
TEST(WarpMmaTest, LdmatrixX4AndTransLayouts) {
  ASSERT_TRUE(warpModule());
  cuda::Emulator &emu = cuda::Emulator::global();
  DeviceBuffers device(emu);
  std::vector<uint16_t> matrix(32 * 16);
  for (int i = 0; i < 32 * 16; ++i)
    matrix[i] = uint16_t(i);
  std::vector<int> rows(32), columns(32);
  for (int lane = 0; lane < 32; ++lane) {
    rows[lane] = (lane * 7 + 3) % 32;
    columns[lane] = lane % 3 == 0 ? 8 : 0;
  }
  void *out = device.add(std::vector<uint32_t>(256));
  llvm::Error err =
      runWarp("ldmatrix_x4", {device.add(matrix), device.add(rows), device.add(columns), out});
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  std::vector<uint32_t> got = device.read<uint32_t>(out, 256);
  auto element = [&](int addressingLane, int offset) {
    return uint32_t(rows[addressingLane] * 16 + columns[addressingLane] + offset);
  };
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(got[j * 32 + lane], element(8 * j + g, 2 * t) | element(8 * j + g, 2 * t + 1) << 16)
          << "lane " << lane << " register " << j;
      EXPECT_EQ(got[128 + j * 32 + lane], element(8 * j + 2 * t, g) | element(8 * j + 2 * t + 1, g)
                                                                          << 16)
          << ".trans lane " << lane << " register " << j;
    }
  }
}

/// cp.async groups: after wait_group 1 the older of two committed groups
/// has landed and the newer has not (the emulator lands copies at the
/// latest moment the PTX ISA allows); an uncommitted copy does not land at
/// wait_group 0; a misaligned copy fails the launch, as it faults on a GPU.
TEST(WarpMmaTest, CpAsyncLandsAtItsGroupsWait) {
  ASSERT_TRUE(warpModule());
  cuda::Emulator &emu = cuda::Emulator::global();
  DeviceBuffers device(emu);
  std::vector<uint16_t> source(768);
  for (int i = 0; i < 768; ++i)
    source[i] = uint16_t(i);
  void *from = device.add(source);
  void *seen = device.add(std::vector<uint16_t>(1536));
  llvm::Error err = runWarp("cp_async_groups", {from, seen});
  ASSERT_FALSE(bool(err)) << llvm::toString(std::move(err));
  std::vector<uint16_t> got = device.read<uint16_t>(seen, 1536);
  for (int i = 0; i < 256; ++i) {
    EXPECT_EQ(got[i], i) << "group 0 after wait_group 1";
    EXPECT_EQ(got[256 + i], 0xffff) << "group 1 after wait_group 1";
    EXPECT_EQ(got[512 + i], 0xffff) << "uncommitted after wait_group 1";
    EXPECT_EQ(got[768 + i], i) << "group 0 after wait_group 0";
    EXPECT_EQ(got[1024 + i], 256 + i) << "group 1 after wait_group 0";
    EXPECT_EQ(got[1280 + i], 0xffff) << "uncommitted after wait_group 0";
  }
  llvm::Error misaligned = runWarp("cp_async_misaligned", {from});
  EXPECT_TRUE(bool(misaligned));
  llvm::consumeError(std::move(misaligned));
}

TEST(WarpMmaTest, CompilesWithNvrtcAndPtxas) {
  llvm::Expected<cuda::Nvrtc &> nvrtc = cuda::Nvrtc::get();
  if (!nvrtc)
    GTEST_SKIP() << "NVRTC not found: " << llvm::toString(nvrtc.takeError());
  std::string ptxas = findPtxas();
  std::string source = kernelPrelude() + warpKernels;
  for (const char *arch : {"sm_80", "sm_90"}) {
    cuda::NvrtcRequest request;
    request.source = source;
    request.name = "warp.cu";
    request.arch = arch;
    request.output = cuda::NvrtcOutput::PTX;
    llvm::Expected<std::string> ptx = nvrtc->compile(request);
    ASSERT_TRUE(bool(ptx)) << arch << ": " << (ptx ? "" : llvm::toString(ptx.takeError()));
    for (const char *instruction :
         {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "cvt.rna.tf32.f32",
          "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
          "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
          "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16", "cp.async.cg.shared.global",
          "cp.async.commit_group", "cp.async.wait_group 1"})
      EXPECT_NE(ptx->find(instruction), std::string::npos) << arch << ": " << instruction;
    if (ptxas.empty())
      continue;
    llvm::Expected<std::string> log = runPtxas(ptxas, *ptx, arch);
    ASSERT_TRUE(bool(log)) << (log ? "" : llvm::toString(log.takeError()));
  }
  if (ptxas.empty())
    GTEST_SKIP() << "ptxas not found: NVRTC compiled the kernels, ptxas did not check them";
}

} // namespace
