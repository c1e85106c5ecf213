// l2_stream.c - how fast one core streams a buffer it already holds in L2.
//
// The bound of a batch-1 Linear layer: its forward is one pass over the
// weight. Sums N floats (default 784 x 256, the MLP's fc1 weight, 803 KB)
// with eight independent AVX-512 accumulators and prints the best of 2000
// passes after 100 warm ones (docs/performance.md, "Session 16"):
//
//   gcc -O2 -o /tmp/l2_stream bench/l2_stream.c && /tmp/l2_stream [N]
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Eight named accumulators: GCC -O2 keeps an array of them in memory.
__attribute__((target("avx512f"))) static float sum(const float *p, long n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  for (long i = 0; i + 128 <= n; i += 128) {
    a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
    a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
    a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 64));
    a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 80));
    a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 96));
    a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 112));
  }
  a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                     _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  return _mm512_reduce_add_ps(a0);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 784 * 256;
  n = (n + 127) / 128 * 128;
  float *p = aligned_alloc(64, (size_t)n * sizeof(float));
  for (long i = 0; i < n; ++i)
    p[i] = 1.0f;
  float s = 0;
  for (int r = 0; r < 100; ++r)
    s += sum(p, n);
  double best = 1e9;
  for (int r = 0; r < 2000; ++r) {
    double t = now();
    s += sum(p, n);
    t = now() - t;
    if (t < best)
      best = t;
  }
  printf("%ld floats (%.0f KB): %.2f us, %.1f GB/s (checksum %g)\n", n, n * 4 / 1024.0, best * 1e6,
         n * 4 / best / 1e9, s);
  free(p);
  return 0;
}
