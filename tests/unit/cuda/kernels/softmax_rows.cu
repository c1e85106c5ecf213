// Row-wise softmax of a [rows, cols] matrix: one block per row; the block
// finds the row maximum and the sum of exponentials with shared-memory tree
// reductions (blockDim.x must be a power of two, at most 256).
extern "C" __global__ void softmax_rows(const float *__restrict__ in, float *__restrict__ out,
                                        int rows, int cols) {
  __shared__ float scratch[256];
  int row = blockIdx.x;
  if (row >= rows)
    return;
  const float *x = in + (long long)row * cols;
  float *y = out + (long long)row * cols;

  float localMax = -3.402823466e38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    localMax = fmaxf(localMax, x[c]);
  scratch[threadIdx.x] = localMax;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  float rowMax = scratch[0];
  __syncthreads();

  float localSum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    localSum += __expf(x[c] - rowMax);
  scratch[threadIdx.x] = localSum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      scratch[threadIdx.x] += scratch[threadIdx.x + stride];
    __syncthreads();
  }
  float inverse = 1.0f / scratch[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    y[c] = expf(x[c] - rowMax) * inverse;
}

// The same with the scratch space in dynamic shared memory: the launch
// passes blockDim.x * sizeof(float) bytes.
extern "C" __global__ void softmax_rows_dynamic(const float *__restrict__ in,
                                                float *__restrict__ out, int rows, int cols) {
  extern __shared__ float partial[];
  int row = blockIdx.x;
  if (row >= rows)
    return;
  const float *x = in + (long long)row * cols;
  float *y = out + (long long)row * cols;

  float localMax = -3.402823466e38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    localMax = fmaxf(localMax, x[c]);
  partial[threadIdx.x] = localMax;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  float rowMax = partial[0];
  __syncthreads();

  float localSum = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    localSum += expf(x[c] - rowMax);
  partial[threadIdx.x] = localSum;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  float inverse = 1.0f / partial[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    y[c] = expf(x[c] - rowMax) * inverse;
}
