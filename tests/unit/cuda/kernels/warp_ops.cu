// Warp collectives and built-in indices, each result written per thread so
// the test can check every lane. Blocks are 2D, so lanes are numbered by the
// linear thread index x + blockDim.x * y.
extern "C" __global__ void warp_ops(int *out) {
  unsigned tid = threadIdx.x + blockDim.x * threadIdx.y;
  int lane = tid % 32;
  int *o = out + (blockIdx.x * blockDim.x * blockDim.y + tid) * 8;
  o[0] = __shfl_sync(0xffffffffu, lane * 10, 3);
  o[1] = __shfl_up_sync(0xffffffffu, lane, 2);
  o[2] = __shfl_down_sync(0xffffffffu, lane, 5, 16);
  o[3] = __shfl_xor_sync(0xffffffffu, lane, 6, 8);
  o[4] = (int)__ballot_sync(0xffffffffu, lane % 3 == 0);
  o[5] = __any_sync(0xffffffffu, lane == 31);
  o[6] = __all_sync(0xffffffffu, lane < 31);
  __syncwarp();
  float reversed = __shfl_sync(0xffffffffu, (float)lane + 0.5f, 31 - lane);
  o[7] = (int)(reversed * 2.0f);
}

// Writes x + 10 y + 100 z of threadIdx and blockIdx and the dimensions.
extern "C" __global__ void thread_indices(int *out) {
  int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int *o = out + (block * blockDim.x * blockDim.y * blockDim.z + thread) * 4;
  o[0] = threadIdx.x + 10 * threadIdx.y + 100 * threadIdx.z;
  o[1] = blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z;
  o[2] = blockDim.x + 10 * blockDim.y + 100 * blockDim.z;
  o[3] = gridDim.x + 10 * gridDim.y + 100 * gridDim.z;
}

// Barriers that vote: out[block * 4 + k] gets the count of threads with an
// even index, whether all are below 1000, whether any is 5, whether any is
// above 5000.
extern "C" __global__ void barrier_votes(int *out) {
  int count = __syncthreads_count(threadIdx.x % 2 == 0);
  int all = __syncthreads_and(threadIdx.x < 1000);
  int any = __syncthreads_or(threadIdx.x == 5);
  int none = __syncthreads_or(threadIdx.x > 5000);
  if (threadIdx.x == 0) {
    out[blockIdx.x * 4 + 0] = count;
    out[blockIdx.x * 4 + 1] = all;
    out[blockIdx.x * 4 + 2] = any;
    out[blockIdx.x * 4 + 3] = none;
  }
}
