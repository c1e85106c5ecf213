//===- warp_matrix_emulation.h - Tensor-core warp ops on the CPU -*- C++ -*-===//
//
// Included by cuda_emulation.h (after the warp collectives). The generated
// CUDA prelude reaches the tensor cores through small device functions
// (`mdl_mma_*`, `mdl_to_tf32`) that are inline PTX under NVRTC; here they
// are C++ computing what the warp computes, with each lane's registers laid
// out as the PTX ISA's fragment tables say ("Matrix Fragments for
// mma.m16n8k8", .tf32):
//
//   groupID = lane / 4, threadID_in_group = lane % 4;
//   A (16x8, row-major) a0..a3: row = groupID (+8 for a1, a3),
//                              col = threadID_in_group (+4 for a2, a3);
//   B (8x8, column-major) b0, b1: row = threadID_in_group (+4 for b1),
//                                 col = groupID;
//   C, D (16x8 f32) c0..c3: row = groupID (+8 for c2, c3),
//                           col = threadID_in_group * 2 + (i & 1).
//
// `mma.sync` is a warp collective: every lane deposits its fragments in the
// warp's stage, the lanes meet (`__syncwarp`), each computes its own four
// results from the whole stage, and they meet again before the stage can be
// reused. Products of TF32 values (11-bit significands) are exact in fp32;
// each output adds c and the eight products in k order in fp32 (the
// hardware's internal order and rounding are not specified: results agree
// with it to fp32 rounding of an 8-term sum, not bit for bit).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_WARP_MATRIX_EMULATION_H
#define MODELC_WARP_MATRIX_EMULATION_H

namespace modelc_emu {

/// One warp's operands of an m16n8k8 TF32 mma, per lane.
struct WarpMatrixStage {
  uint32_t a[32][4];
  uint32_t b[32][2];
};

/// One stage per warp of the running block (blocks have at most 32 warps).
static thread_local WarpMatrixStage warpMatrixStages[32];

inline float bitsToFloat(uint32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
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

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, c
static inline void mdl_mma_m16n8k8_tf32(float d[4], const uint32_t a[4], const uint32_t b[2],
                                        const float c[4]) {
  unsigned thread = modelc_emu::linearThreadId();
  unsigned lane = thread % 32;
  modelc_emu::WarpMatrixStage &stage = modelc_emu::warpMatrixStages[thread / 32];
  for (int r = 0; r < 4; ++r)
    stage.a[lane][r] = a[r];
  stage.b[lane][0] = b[0];
  stage.b[lane][1] = b[1];
  __syncwarp();
  float result[4];
  for (int r = 0; r < 4; ++r) {
    unsigned row = lane / 4 + (r >= 2 ? 8 : 0), col = (lane % 4) * 2 + (r & 1);
    float sum = c[r];
    for (unsigned k = 0; k < 8; ++k) {
      // A(row, k) is held by lane (row % 8) * 4 + k % 4, register
      // (row >= 8) + 2 * (k >= 4); B(k, col) by lane col * 4 + k % 4,
      // register k >= 4.
      // The tensor core reads only the TF32 bits of each operand.
      float x = modelc_emu::bitsToFloat(stage.a[(row % 8) * 4 + k % 4][(row >= 8) + 2 * (k >= 4)] &
                                        0xffffe000u);
      float y = modelc_emu::bitsToFloat(stage.b[col * 4 + k % 4][k >= 4] & 0xffffe000u);
      sum += x * y;
    }
    result[r] = sum;
  }
  __syncwarp(); // every lane has read the stage before any writes it again
  for (int r = 0; r < 4; ++r)
    d[r] = result[r];
}

#endif // MODELC_WARP_MATRIX_EMULATION_H
