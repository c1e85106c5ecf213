//===- warp_matrix_emulation.h - Tensor-core warp ops on the CPU -*- C++ -*-===//
//
// Included by cuda_emulation.h (after the warp collectives). The generated
// CUDA prelude reaches the tensor cores and the asynchronous copies through
// small device functions (`mdl_mma_*`, `mdl_to_tf32`, `mdl_ldmatrix_*`,
// `mdl_cp_async_*`) that are inline PTX under NVRTC; here they are C++
// computing what the hardware computes, with each lane's registers laid out
// as the PTX ISA's fragment tables say (groupID = lane / 4,
// threadID_in_group = lane % 4):
//
// "Matrix Fragments for mma.m16n8k8", .tf32 (one element per register):
//   A (16x8, row-major) a0..a3: row = groupID (+8 for a1, a3),
//                              col = threadID_in_group (+4 for a2, a3);
//   B (8x8, column-major) b0, b1: row = threadID_in_group (+4 for b1),
//                                 col = groupID;
// "Matrix Fragments for mma.m16n8k16 with floating point type", .f16 and
// .bf16 (two elements per 32-bit register, the lower index in the low half):
//   A (16x16) a0..a7 in 4 registers: row = groupID (+8 for a2, a3, a6, a7),
//             col = threadID_in_group * 2 + (i & 1) (+8 for a4..a7);
//   B (16x8) b0..b3 in 2 registers: row = threadID_in_group * 2 + (i & 1)
//            (+8 for b2, b3), col = groupID;
// both shapes, C and D (16x8 f32) c0..c3: row = groupID (+8 for c2, c3),
//   col = threadID_in_group * 2 + (i & 1).
//
// `mma.sync` and `ldmatrix` are warp collectives: every lane deposits its
// operands (fragments, row addresses) in the warp's stage, the lanes meet
// (`__syncwarp`), each computes its own results from the whole stage, and
// they meet again before the stage can be reused. Tensor-core products of
// TF32, f16 and bf16 values are exact in f32 (bf16 barring f32 overflow or
// underflow); each output adds c and the products in k order in f32 (the
// hardware's internal order and rounding are not specified: results agree
// with it to f32 rounding of a (K+1)-term sum, not bit for bit).
//
// `cp.async` copies are queued per thread and land at the latest moment
// the PTX ISA allows: when `cp.async.wait_group` releases their group (not
// at the copy), so a kernel that reads a stage before waiting for it sees
// stale data here as it could on a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_WARP_MATRIX_EMULATION_H
#define MODELC_WARP_MATRIX_EMULATION_H

namespace modelc_emu {

/// One warp's operands of an mma (m16n8k8 TF32 or m16n8k16 f16/bf16: four
/// A and two B registers per lane either way), or its ldmatrix row
/// addresses, per lane.
struct WarpMatrixStage {
  uint32_t a[32][4];
  uint32_t b[32][2];
  const uint16_t *rows[32];
};

/// One stage per warp of the running block (blocks have at most 32 warps).
static thread_local WarpMatrixStage warpMatrixStages[32];

inline float bitsToFloat(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

/// IEEE binary16 to f32, exactly (written apart from the prelude's
/// runtime/HalfConversions.h, which the tests compare against).
inline float f16BitsToFloat(uint16_t bits) {
  unsigned exponent = bits >> 10 & 31, mantissa = bits & 1023;
  float magnitude = exponent == 0    ? ldexpf(float(mantissa), -24)
                    : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                     : ldexpf(float(mantissa | 1024), int(exponent) - 25);
  return bits >> 15 ? -magnitude : magnitude;
}

/// bfloat16 is the top half of an f32.
inline float bf16BitsToFloat(uint16_t bits) { return bitsToFloat(uint32_t(bits) << 16); }

/// Half `half` (0: low, 1: high) of a 32-bit register as 16 bits.
inline uint16_t halfOf(uint32_t reg, unsigned half) { return uint16_t(reg >> (16 * half)); }

/// Whether `p` is in the running block's shared memory (static `__shared__`
/// variables are this module's thread-locals, dynamic ones the launch's
/// buffer).
MODELC_EMU_UNCHECKED inline bool inSharedMemory(const void *p) {
  uintptr_t address = reinterpret_cast<uintptr_t>(p);
  return address - reach.tlsBegin < reach.tlsBytes ||
         address - reach.sharedBegin < reach.sharedBytes;
}

//===----------------------------------------------------------------------===//
// cp.async: per-thread queues of 16-byte copies
//===----------------------------------------------------------------------===//

/// Copies one thread may have in flight; more traps. The GEMM tiles issue
/// at most 5 per slice and hold at most 2 slices in flight (10); a queue
/// per thread of the block is this module's thread-local memory (24 bytes
/// a copy, 1024 threads), so it is kept small.
constexpr unsigned MaxAsyncCopies = 16;

struct AsyncCopy {
  uint16_t *to;
  const uint16_t *from;
  unsigned group; ///< the commit group it belongs to (committed so far, at issue)
};
struct AsyncCopies {
  unsigned count;
  unsigned committed; ///< groups this thread has committed
  AsyncCopy copies[MaxAsyncCopies];
};
/// One queue per thread of the running block.
static thread_local AsyncCopies asyncCopies[1024];

MODELC_EMU_UNCHECKED inline void resetAsyncCopies(unsigned thread) {
  asyncCopies[thread].count = 0;
  asyncCopies[thread].committed = 0;
}

/// Lands the copies of every group but the newest `pending` ones, through
/// checked loads and stores (a host `from` fails the launch).
inline void landAsyncCopies(unsigned pending) {
  AsyncCopies &queue = asyncCopies[linearThreadId()];
  unsigned kept = 0;
  for (unsigned i = 0; i < queue.count; ++i) {
    AsyncCopy copy = queue.copies[i];
    if (copy.group + pending < queue.committed) {
      volatile uint16_t *to = copy.to;
      const volatile uint16_t *from = copy.from;
      for (int e = 0; e < 8; ++e)
        to[e] = from[e];
    } else {
      queue.copies[kept++] = copy;
    }
  }
  queue.count = kept;
}

} // namespace modelc_emu

/// cvt.rna.tf32.f32: rounds to the nearest value with a 10-bit mantissa,
/// ties away from zero; the low 13 bits of the result are 0. NaN and
/// infinities pass unchanged.
static inline uint32_t mdl_to_tf32(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u)
    return bits;
  return (bits + 0x1000u) & 0xffffe000u;
}

namespace modelc_emu {

/// One m16n8kK mma of the warp with f32 accumulators: every lane deposits
/// its four A and two B registers, then computes its c0..c3 (rows group and
/// group + 8, columns 2t and 2t + 1) as c plus `product(stage, row, k, col)`
/// for k = 0..K-1, added in k order in f32.
template <unsigned K, typename Product>
inline void warpMma(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4],
                    Product product) {
  unsigned thread = linearThreadId();
  unsigned lane = thread % 32;
  WarpMatrixStage &stage = warpMatrixStages[thread / 32];
  for (int r = 0; r < 4; ++r)
    stage.a[lane][r] = a[r];
  stage.b[lane][0] = b[0];
  stage.b[lane][1] = b[1];
  __syncwarp();
  float result[4];
  for (int r = 0; r < 4; ++r) {
    unsigned row = lane / 4 + (r >= 2 ? 8 : 0), col = (lane % 4) * 2 + (r & 1);
    float sum = c[r];
    for (unsigned k = 0; k < K; ++k)
      sum += product(stage, row, k, col);
    result[r] = sum;
  }
  __syncwarp(); // every lane has read the stage before any writes it again
  for (int r = 0; r < 4; ++r)
    d[r] = result[r];
}

/// A(row, k) of an m16n8k16 from the stage: lane (row % 8) * 4 + k % 8 / 2,
/// register (row >= 8) + 2 * (k >= 8), half k % 2; B(k, col): lane col * 4
/// + k % 8 / 2, register k >= 8, half k % 2.
inline uint16_t m16n8k16A(const WarpMatrixStage &stage, unsigned row, unsigned k) {
  return halfOf(stage.a[(row % 8) * 4 + k % 8 / 2][(row >= 8) + 2 * (k >= 8)], k % 2);
}
inline uint16_t m16n8k16B(const WarpMatrixStage &stage, unsigned k, unsigned col) {
  return halfOf(stage.b[col * 4 + k % 8 / 2][k >= 8], k % 2);
}

/// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 d, a, b, c
/// with `widen` the element type's conversion to f32.
inline void mmaM16n8k16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4],
                        float (*widen)(uint16_t)) {
  warpMma<16>(d, a, b, c,
              [&](const WarpMatrixStage &stage, unsigned row, unsigned k, unsigned col) {
                return widen(m16n8k16A(stage, row, k)) * widen(m16n8k16B(stage, k, col));
              });
}

} // namespace modelc_emu

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, c
static inline void mdl_mma_m16n8k8_tf32(float d[4], const uint32_t a[4], const uint32_t b[2],
                                        const float c[4]) {
  modelc_emu::warpMma<8>(
      d, a, b, c,
      [](const modelc_emu::WarpMatrixStage &stage, unsigned row, unsigned k, unsigned col) {
        // A(row, k) is held by lane (row % 8) * 4 + k % 4, register
        // (row >= 8) + 2 * (k >= 4); B(k, col) by lane col * 4 + k % 4,
        // register k >= 4. The tensor core reads only the TF32 bits of each
        // operand.
        float x = modelc_emu::bitsToFloat(
            stage.a[(row % 8) * 4 + k % 4][(row >= 8) + 2 * (k >= 4)] & 0xffffe000u);
        float y = modelc_emu::bitsToFloat(stage.b[col * 4 + k % 4][k >= 4] & 0xffffe000u);
        return x * y;
      });
}

namespace modelc_emu {

/// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lanes 8j..8j+7 give
/// the addresses of the 8 rows (8 elements, 16 bytes each) of matrix j;
/// lane 4g + t receives in r[j] row g, elements 2t and 2t + 1 (.trans:
/// element g of rows 2t and 2t + 1). A row address that is not 16-byte
/// aligned shared memory traps, as the hardware faults.
inline void ldmatrixX4(uint32_t r[4], const uint16_t *row, bool transposed) {
  unsigned thread = linearThreadId();
  unsigned lane = thread % 32;
  if ((reinterpret_cast<uintptr_t>(row) & 15) || !inSharedMemory(row))
    __builtin_trap();
  WarpMatrixStage &stage = warpMatrixStages[thread / 32];
  stage.rows[lane] = row;
  __syncwarp();
  uint32_t result[4];
  unsigned g = lane / 4, t = lane % 4;
  for (unsigned j = 0; j < 4; ++j) {
    const uint16_t *const *rows = stage.rows + 8 * j;
    uint16_t low = transposed ? rows[2 * t][g] : rows[g][2 * t];
    uint16_t high = transposed ? rows[2 * t + 1][g] : rows[g][2 * t + 1];
    result[j] = uint32_t(low) | uint32_t(high) << 16;
  }
  __syncwarp();
  for (int j = 0; j < 4; ++j)
    r[j] = result[j];
}

} // namespace modelc_emu

static inline void mdl_mma_m16n8k16_f16(float d[4], const uint32_t a[4], const uint32_t b[2],
                                        const float c[4]) {
  modelc_emu::mmaM16n8k16(d, a, b, c, modelc_emu::f16BitsToFloat);
}
static inline void mdl_mma_m16n8k16_bf16(float d[4], const uint32_t a[4], const uint32_t b[2],
                                         const float c[4]) {
  modelc_emu::mmaM16n8k16(d, a, b, c, modelc_emu::bf16BitsToFloat);
}
static inline void mdl_ldmatrix_x4(uint32_t r[4], const uint16_t *row) {
  modelc_emu::ldmatrixX4(r, row, false);
}
static inline void mdl_ldmatrix_x4_trans(uint32_t r[4], const uint16_t *row) {
  modelc_emu::ldmatrixX4(r, row, true);
}

/// cp.async.cg.shared.global [to], [from], 16: queued, lands at a wait.
/// Both addresses must be 16-byte aligned and `to` in shared memory (the
/// hardware faults otherwise); a full queue traps too.
static inline void mdl_cp_async_16(uint16_t *to, const uint16_t *from) {
  modelc_emu::AsyncCopies &queue = modelc_emu::asyncCopies[modelc_emu::linearThreadId()];
  if (((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from)) & 15) ||
      !modelc_emu::inSharedMemory(to) || queue.count == modelc_emu::MaxAsyncCopies)
    __builtin_trap();
  queue.copies[queue.count++] = {to, from, queue.committed};
}
/// cp.async.commit_group: the copies issued since the last commit form a group.
static inline void mdl_cp_async_commit() {
  ++modelc_emu::asyncCopies[modelc_emu::linearThreadId()].committed;
}
/// cp.async.wait_group N: every group but the newest N has landed.
template <int N> static inline void mdl_cp_async_wait() { modelc_emu::landAsyncCopies(N); }

#endif // MODELC_WARP_MATRIX_EMULATION_H
