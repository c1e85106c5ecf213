// Kernels that misbehave on purpose, for the emulator's checks.

// Writes out[i] for i <= n: the last thread writes one element past the end.
extern "C" __global__ void off_by_one(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    out[i] = 1.0f;
}

// Copies through a pointer, so the caller can hand it another device's memory.
extern "C" __global__ void copy_through(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i];
}

// Only thread 0 reaches the barrier; the others have returned, so the barrier
// releases (exited threads do not count) and the kernel finishes.
extern "C" __global__ void early_exit_barrier(int *out) {
  if (threadIdx.x != 0)
    return;
  __syncthreads();
  out[blockIdx.x] = 7;
}

// Half of warp 0 waits in a full-warp shuffle for lanes that wait at
// __syncthreads() with everyone else: neither can ever be released.
extern "C" __global__ void mismatched_barriers(float *out) {
  float value = threadIdx.x;
  if (threadIdx.x < 16)
    value = __shfl_down_sync(0xffffffffu, value, 1);
  else
    __syncthreads();
  out[threadIdx.x] = value;
}

// Atomic histogram: every thread adds 1 to bin (i % bins).
extern "C" __global__ void atomic_histogram(int *bins, int nbins, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&bins[i % nbins], 1);
}

// Reads through a pointer stored in device memory, which the launch-time
// argument check cannot see: only the access itself can be caught.
extern "C" __global__ void gather_indirect(const unsigned long long *table, float *out, int n) {
  const float *source = (const float *)table[0];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = source[i];
}

// Writes through `out`, which the caller passes as a null pointer.
extern "C" __global__ void write_through(float *out) { out[threadIdx.x] = 1.0f; }

// Aborts the kernel, as a failed device-side check would.
extern "C" __global__ void trap_when(const int *in) {
  if (in[threadIdx.x] < 0)
    __trap();
}

// Integer division by the `zero` argument.
extern "C" __global__ void divide(const int *in, int *out, int zero) {
  out[threadIdx.x] = in[threadIdx.x] / zero;
}

// Recurses with a kilobyte of locals per frame: far beyond a fiber's stack.
__device__ int deep_recursion(int depth) {
  volatile char frame[1024];
  frame[depth % 1024] = (char)depth;
  if (depth == 0)
    return frame[0];
  return deep_recursion(depth - 1) + frame[depth % 1024];
}

extern "C" __global__ void overflow_stack(int *out, int depth) {
  out[threadIdx.x] = deep_recursion(depth);
}

// Spins until flag[0] becomes nonzero, which nobody ever does.
extern "C" __global__ void spin_forever(volatile int *flag) {
  while (flag[0] == 0) {
  }
}

// Stages one element per thread in dynamic shared memory, one slot too far.
extern "C" __global__ void shared_overrun(int *out) {
  extern __shared__ int stage[];
  stage[threadIdx.x + 1] = (int)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = stage[threadIdx.x];
}

// Writes through a pointer stored in device memory.
extern "C" __global__ void scatter_indirect(const unsigned long long *table, const float *in,
                                            int n) {
  float *destination = (float *)table[0];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    destination[i] = in[i];
}

// Touches everything a kernel may besides device memory: a constant table of
// its module, a local array indexed at run time (the thread's stack) and
// static shared memory.
__device__ const float kSquares[8] = {0, 1, 4, 9, 16, 25, 36, 49};
extern "C" __global__ void own_memory(float *out, int n) {
  __shared__ float staged[64];
  float local[8];
  int t = threadIdx.x;
  for (int k = 0; k < 8; ++k)
    local[k] = kSquares[(k + t) % 8];
  staged[t % 64] = local[t % n % 8];
  __syncthreads();
  out[t] = staged[(t + 1) % 64] + local[(t * 3) % 8];
}
