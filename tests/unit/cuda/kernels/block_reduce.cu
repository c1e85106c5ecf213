// Sums `in` into out[blockIdx.x] per block: each warp reduces with
// __shfl_down_sync, warp leaders meet in shared memory, and the first warp
// reduces the partial sums with __shfl_xor_sync (so every lane holds the sum).
__device__ float warp_sum_down(float value) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  return value;
}

__device__ float warp_sum_xor(float value) {
  for (int mask = warpSize / 2; mask > 0; mask /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, mask);
  return value;
}

extern "C" __global__ void block_reduce(const float *__restrict__ in, float *__restrict__ out,
                                        int n) {
  __shared__ float partial[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float value = i < n ? in[i] : 0.0f;
  value = warp_sum_down(value);
  int lane = threadIdx.x % warpSize;
  int warp = threadIdx.x / warpSize;
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  int warps = (blockDim.x + warpSize - 1) / warpSize;
  if (warp == 0) {
    value = lane < warps ? partial[lane] : 0.0f;
    value = warp_sum_xor(value);
    if (lane == 0)
      out[blockIdx.x] = value;
  }
}
