// Atomics from many blocks at once: float and double sums (compare-and-swap
// loops in the emulator), integer max/min, bit sets, a 64-bit counter and a
// compare-and-swap election.
extern "C" __global__ void atomic_mix(const float *values, int n, float *floatSum,
                                      double *doubleSum, int *extremes, unsigned *bits,
                                      unsigned long long *count, int *winner) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float value = values[i];
  atomicAdd(floatSum, value);
  atomicAdd(doubleSum, (double)value);
  atomicMax(&extremes[0], (int)(value * 1000.0f));
  atomicMin(&extremes[1], (int)(value * 1000.0f));
  atomicOr(bits, 1u << (i % 32));
  atomicAnd(bits + 1, ~(1u << (i % 32)));
  atomicAdd(count, 1ull);
  atomicCAS(winner, 0, i + 1);
  atomicExch(winner + 1, 7);
}
