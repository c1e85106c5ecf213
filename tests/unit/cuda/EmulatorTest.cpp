//===- EmulatorTest.cpp - CUDA kernels run on the CPU emulator ------------===//
//
// The same kernel sources that NvrtcTest compiles for sm_80/sm_90 run here
// on the emulator and are checked against plain CPU references; the checks
// for out-of-bounds and cross-device accesses run misbehaving kernels.
//
//===----------------------------------------------------------------------===//

#include "CudaTestSupport.h"

#include "runtime/cuda/emulator/Emulator.h"

#include "gtest/gtest.h"

#include <cmath>
#include <csignal>
#include <cstring>
#include <numeric>
#include <random>

using namespace modelc::cuda;
using namespace modelc::cuda::test;

namespace {

/// Device memory for the duration of a test.
class DeviceBuffer {
public:
  DeviceBuffer(Emulator &emulator, int device, size_t bytes) : emulator(emulator), device(device) {
    llvm::Expected<void *> allocated = emulator.allocate(device, bytes);
    if (!allocated)
      throw std::runtime_error(llvm::toString(allocated.takeError()));
    pointer = *allocated;
  }
  ~DeviceBuffer() { llvm::consumeError(emulator.free(device, pointer)); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  template <typename T>
  static DeviceBuffer upload(Emulator &emulator, int device, const std::vector<T> &values) {
    DeviceBuffer buffer(emulator, device, values.size() * sizeof(T));
    if (llvm::Error error = emulator.copyHostToDevice(device, buffer.pointer, values.data(),
                                                      values.size() * sizeof(T)))
      throw std::runtime_error(llvm::toString(std::move(error)));
    return buffer;
  }
  template <typename T> std::vector<T> download(size_t count) const {
    std::vector<T> values(count);
    if (llvm::Error error =
            emulator.copyDeviceToHost(device, values.data(), pointer, count * sizeof(T)))
      throw std::runtime_error(llvm::toString(std::move(error)));
    return values;
  }

  DeviceBuffer(DeviceBuffer &&other) noexcept
      : emulator(other.emulator), device(other.device), pointer(other.pointer) {
    other.pointer = nullptr;
  }

  Emulator &emulator;
  int device;
  void *pointer = nullptr;
};

std::vector<float> randomFloats(size_t count, unsigned seed, float low = -1.0f, float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float &value : values)
    value = distribution(generator);
  return values;
}

class EmulatorTest : public ::testing::Test {
protected:
  static Emulator &emulator() {
    static Emulator instance([] {
      EmulatorOptions options;
      options.deviceCount = 2;
      options.workerThreads = 2;
      return options;
    }());
    return instance;
  }

  static EmulatedKernel kernel(const std::string &file, const std::string &name) {
    llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
        emulator().loadModule(readKernel(file), file);
    if (!module)
      throw std::runtime_error(llvm::toString(module.takeError()));
    llvm::Expected<EmulatedKernel> found = (*module)->kernel(name);
    if (!found)
      throw std::runtime_error(llvm::toString(found.takeError()));
    return *found;
  }
};

TEST_F(EmulatorTest, VectorAddMatchesReference) {
  const int n = 1000; // not a multiple of the block size: the tail is guarded
  std::vector<float> a = randomFloats(n, 1), b = randomFloats(n, 2);
  DeviceBuffer da = DeviceBuffer::upload(emulator(), 0, a);
  DeviceBuffer db = DeviceBuffer::upload(emulator(), 0, b);
  DeviceBuffer dc(emulator(), 0, n * sizeof(float));
  int count = n;
  void *args[] = {&da.pointer, &db.pointer, &dc.pointer, &count};
  ASSERT_OK(
      emulator().launch(0, kernel("vector_add.cu", "vector_add"), {(n + 127) / 128}, {128}, args));
  std::vector<float> c = dc.download<float>(n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(c[i], a[i] + b[i]) << "element " << i;
}

void checkMatmul(const EmulatedKernel &matmul, Emulator &emulator, int m, int n, int k) {
  std::vector<float> a = randomFloats(size_t(m) * k, 3), b = randomFloats(size_t(k) * n, 4);
  std::vector<float> expected(size_t(m) * n, 0.0f);
  for (int row = 0; row < m; ++row)
    for (int col = 0; col < n; ++col) {
      double sum = 0;
      for (int i = 0; i < k; ++i)
        sum += double(a[row * k + i]) * b[i * n + col];
      expected[row * n + col] = float(sum);
    }
  DeviceBuffer da = DeviceBuffer::upload(emulator, 1, a);
  DeviceBuffer db = DeviceBuffer::upload(emulator, 1, b);
  DeviceBuffer dc(emulator, 1, expected.size() * sizeof(float));
  void *args[] = {&da.pointer, &db.pointer, &dc.pointer, &m, &n, &k};
  ASSERT_OK(
      emulator.launch(1, matmul, {unsigned(n + 15) / 16, unsigned(m + 15) / 16}, {16, 16}, args));
  std::vector<float> c = dc.download<float>(expected.size());
  for (size_t i = 0; i < c.size(); ++i)
    ASSERT_NEAR(c[i], expected[i], 1e-4f * (1 + std::fabs(expected[i]))) << "element " << i;
}

TEST_F(EmulatorTest, TiledMatmulWithSharedMemoryMatchesReference) {
  EmulatedKernel matmul = kernel("tiled_matmul.cu", "tiled_matmul");
  checkMatmul(matmul, emulator(), 64, 64, 64);
  // Edges that are not multiples of the tile exercise the guarded loads.
  checkMatmul(matmul, emulator(), 70, 45, 33);
}

TEST_F(EmulatorTest, BlockReductionWithWarpShufflesMatchesReference) {
  EmulatedKernel reduce = kernel("block_reduce.cu", "block_reduce");
  for (unsigned threads : {256u, 96u, 32u}) {
    const int n = 10007;
    std::vector<float> in = randomFloats(n, 5);
    unsigned blocks = (n + threads - 1) / threads;
    DeviceBuffer din = DeviceBuffer::upload(emulator(), 0, in);
    DeviceBuffer dout(emulator(), 0, blocks * sizeof(float));
    int count = n;
    void *args[] = {&din.pointer, &dout.pointer, &count};
    ASSERT_OK(emulator().launch(0, reduce, {blocks}, {threads}, args));
    std::vector<float> sums = dout.download<float>(blocks);
    for (unsigned block = 0; block < blocks; ++block) {
      double expected = 0;
      for (unsigned i = block * threads; i < std::min<unsigned>(n, (block + 1) * threads); ++i)
        expected += in[i];
      ASSERT_NEAR(sums[block], expected, 1e-4) << "block " << block << " of " << threads;
    }
  }
}

TEST_F(EmulatorTest, SoftmaxRowsMatchesReference) {
  const int rows = 37, cols = 300;
  std::vector<float> in = randomFloats(size_t(rows) * cols, 6, -8.0f, 8.0f);
  DeviceBuffer din = DeviceBuffer::upload(emulator(), 0, in);
  DeviceBuffer dout(emulator(), 0, in.size() * sizeof(float));
  int r = rows, c = cols;
  void *args[] = {&din.pointer, &dout.pointer, &r, &c};
  ASSERT_OK(emulator().launch(0, kernel("softmax_rows.cu", "softmax_rows"), {rows}, {128}, args));
  std::vector<float> out = dout.download<float>(in.size());
  for (int row = 0; row < rows; ++row) {
    double maximum = -INFINITY, sum = 0;
    for (int col = 0; col < cols; ++col)
      maximum = std::max<double>(maximum, in[row * cols + col]);
    for (int col = 0; col < cols; ++col)
      sum += std::exp(double(in[row * cols + col]) - maximum);
    for (int col = 0; col < cols; ++col) {
      double expected = std::exp(double(in[row * cols + col]) - maximum) / sum;
      ASSERT_NEAR(out[row * cols + col], expected, 1e-6 + 1e-4 * expected)
          << "row " << row << " col " << col;
    }
  }
}

TEST_F(EmulatorTest, SoftmaxRowsInDynamicSharedMemoryMatchesReference) {
  const int rows = 9, cols = 77;
  std::vector<float> in = randomFloats(size_t(rows) * cols, 9, -5.0f, 5.0f);
  DeviceBuffer din = DeviceBuffer::upload(emulator(), 0, in);
  DeviceBuffer dout(emulator(), 0, in.size() * sizeof(float));
  int r = rows, c = cols;
  void *args[] = {&din.pointer, &dout.pointer, &r, &c};
  ASSERT_OK(emulator().launch(0, kernel("softmax_rows.cu", "softmax_rows_dynamic"), {rows}, {64},
                              args, 64 * sizeof(float)));
  std::vector<float> out = dout.download<float>(in.size());
  for (int row = 0; row < rows; ++row) {
    double maximum = -INFINITY, sum = 0;
    for (int col = 0; col < cols; ++col)
      maximum = std::max<double>(maximum, in[row * cols + col]);
    for (int col = 0; col < cols; ++col)
      sum += std::exp(double(in[row * cols + col]) - maximum);
    for (int col = 0; col < cols; ++col)
      ASSERT_NEAR(out[row * cols + col], std::exp(double(in[row * cols + col]) - maximum) / sum,
                  1e-6)
          << "row " << row << " col " << col;
  }
}

TEST_F(EmulatorTest, DynamicSharedMemoryOverrunIsCaught) {
  DeviceBuffer out(emulator(), 0, 64 * sizeof(int));
  void *args[] = {&out.pointer};
  Failure failure = failureOf(emulator().launch(0, kernel("faults.cu", "shared_overrun"), {2}, {64},
                                                args, 64 * sizeof(int)));
  EXPECT_EQ(failure.kind, CudaErrorKind::OutOfBounds) << failure.text;
  EXPECT_NE(failure.text.find("kernel 'shared_overrun' on cuda:0 wrote past the end of its 256 "
                              "bytes of dynamic shared memory (thread (63,0,0)"),
            std::string::npos)
      << failure.text;
  // One element more of shared memory and the kernel is fine.
  ASSERT_OK(emulator().launch(0, kernel("faults.cu", "shared_overrun"), {2}, {64}, args,
                              65 * sizeof(int)));
  EXPECT_EQ(failureOf(emulator().launch(0, kernel("faults.cu", "shared_overrun"), {1}, {64}, args,
                                        size_t(1) << 30))
                .kind,
            CudaErrorKind::InvalidLaunch);
}

TEST_F(EmulatorTest, FileScopeDynamicSharedMemoryIsPerBlock) {
  const char *source = R"(
extern __shared__ float staged[];
extern "C" __global__ void reverse_each_block(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  staged[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = staged[blockDim.x - 1 - threadIdx.x];
}
)";
  llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
      emulator().loadModule(source, "reverse.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::Expected<EmulatedKernel> reverse = (*module)->kernel("reverse_each_block");
  ASSERT_TRUE(bool(reverse)) << llvm::toString(reverse.takeError());
  std::vector<float> in(8 * 32);
  std::iota(in.begin(), in.end(), 0.0f);
  DeviceBuffer din = DeviceBuffer::upload(emulator(), 0, in);
  DeviceBuffer dout(emulator(), 0, in.size() * sizeof(float));
  void *args[] = {&din.pointer, &dout.pointer};
  ASSERT_OK(emulator().launch(0, *reverse, {8}, {32}, args, 32 * sizeof(float)));
  std::vector<float> out = dout.download<float>(in.size());
  for (int block = 0; block < 8; ++block)
    for (int t = 0; t < 32; ++t)
      ASSERT_EQ(out[block * 32 + t], in[block * 32 + 31 - t]);
}

TEST_F(EmulatorTest, EmitCGeneratedKernelMatchesReference) {
  const int n = 777;
  std::vector<float> in = randomFloats(n, 10, -2.0f, 2.0f);
  DeviceBuffer din = DeviceBuffer::upload(emulator(), 0, in);
  DeviceBuffer dout(emulator(), 0, n * sizeof(float));
  int32_t count = n;
  float alpha = 1.5f;
  void *args[] = {&din.pointer, &dout.pointer, &count, &alpha};
  ASSERT_OK(emulator().launch(0, kernel("emitc_scale_relu.cu", "emitc_scale_relu"),
                              {(n + 255) / 256}, {256}, args));
  std::vector<float> out = dout.download<float>(n);
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(out[i], std::max(in[i] * alpha, 0.0f)) << i;
}

TEST_F(EmulatorTest, WarpShufflesAndVotesGiveEveryLaneItsValue) {
  const unsigned blocks = 3, threads = 64; // 8x8 blocks: two warps across rows
  DeviceBuffer out(emulator(), 0, blocks * threads * 8 * sizeof(int));
  void *args[] = {&out.pointer};
  ASSERT_OK(emulator().launch(0, kernel("warp_ops.cu", "warp_ops"), {blocks}, {8, 8}, args));
  std::vector<int> values = out.download<int>(blocks * threads * 8);
  for (unsigned thread = 0; thread < blocks * threads; ++thread) {
    int lane = thread % 32;
    const int *o = &values[thread * 8];
    SCOPED_TRACE("thread " + std::to_string(thread));
    EXPECT_EQ(o[0], 30);
    EXPECT_EQ(o[1], lane >= 2 ? lane - 2 : lane);
    EXPECT_EQ(o[2], lane % 16 + 5 < 16 ? lane + 5 : lane);
    EXPECT_EQ(o[3], lane ^ 6);
    EXPECT_EQ(unsigned(o[4]), 0x49249249u);
    EXPECT_EQ(o[5], 1);
    EXPECT_EQ(o[6], 0);
    EXPECT_EQ(o[7], (31 - lane) * 2 + 1);
  }
}

TEST_F(EmulatorTest, VotingBarriersCountAndCombinePredicates) {
  DeviceBuffer out(emulator(), 0, 3 * 4 * sizeof(int));
  void *args[] = {&out.pointer};
  ASSERT_OK(emulator().launch(0, kernel("warp_ops.cu", "barrier_votes"), {3}, {100}, args));
  EXPECT_EQ(out.download<int>(12), std::vector<int>({50, 1, 1, 0, 50, 1, 1, 0, 50, 1, 1, 0}));
}

TEST_F(EmulatorTest, ThreeDimensionalIndicesAndDimensions) {
  Dim3 grid{2, 3, 2}, block{4, 3, 2};
  unsigned blocks = 2 * 3 * 2, threads = 4 * 3 * 2;
  DeviceBuffer out(emulator(), 1, blocks * threads * 4 * sizeof(int));
  void *args[] = {&out.pointer};
  ASSERT_OK(emulator().launch(1, kernel("warp_ops.cu", "thread_indices"), grid, block, args));
  std::vector<int> values = out.download<int>(blocks * threads * 4);
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      const int *o = &values[(b * threads + t) * 4];
      EXPECT_EQ(o[0], int(t % 4 + 10 * (t / 4 % 3) + 100 * (t / 12)));
      EXPECT_EQ(o[1], int(b % 2 + 10 * (b / 2 % 3) + 100 * (b / 6)));
      EXPECT_EQ(o[2], 4 + 30 + 200);
      EXPECT_EQ(o[3], 2 + 30 + 200);
    }
}

TEST_F(EmulatorTest, AtomicsAreExactAcrossBlocksOnSeveralThreads) {
  const int n = 20000, bins = 7;
  DeviceBuffer histogram = DeviceBuffer::upload(emulator(), 0, std::vector<int>(bins, 0));
  int binCount = bins, count = n;
  void *args[] = {&histogram.pointer, &binCount, &count};
  ASSERT_OK(emulator().launch(0, kernel("faults.cu", "atomic_histogram"), {(n + 255) / 256}, {256},
                              args));
  std::vector<int> counts = histogram.download<int>(bins);
  for (int bin = 0; bin < bins; ++bin)
    EXPECT_EQ(counts[bin], n / bins + (bin < n % bins ? 1 : 0)) << "bin " << bin;
}

TEST_F(EmulatorTest, AtomicsOfEveryKindAreExact) {
  const int n = 5000;
  std::vector<float> values = randomFloats(n, 11, -1.0f, 1.0f);
  DeviceBuffer dvalues = DeviceBuffer::upload(emulator(), 0, values);
  DeviceBuffer floatSum = DeviceBuffer::upload(emulator(), 0, std::vector<float>{0.0f});
  DeviceBuffer doubleSum = DeviceBuffer::upload(emulator(), 0, std::vector<double>{0.0});
  DeviceBuffer extremes =
      DeviceBuffer::upload(emulator(), 0, std::vector<int>{INT32_MIN, INT32_MAX});
  DeviceBuffer bits = DeviceBuffer::upload(emulator(), 0, std::vector<unsigned>{0u, ~0u});
  DeviceBuffer count = DeviceBuffer::upload(emulator(), 0, std::vector<unsigned long long>{0});
  DeviceBuffer winner = DeviceBuffer::upload(emulator(), 0, std::vector<int>{0, 0});
  int elements = n;
  void *args[] = {&dvalues.pointer,  &elements,     &floatSum.pointer, &doubleSum.pointer,
                  &extremes.pointer, &bits.pointer, &count.pointer,    &winner.pointer};
  ASSERT_OK(
      emulator().launch(0, kernel("atomics.cu", "atomic_mix"), {(n + 127) / 128}, {128}, args));
  double expected = 0;
  int maximum = INT32_MIN, minimum = INT32_MAX;
  for (float value : values) {
    expected += value;
    maximum = std::max(maximum, int(value * 1000.0f));
    minimum = std::min(minimum, int(value * 1000.0f));
  }
  EXPECT_NEAR(floatSum.download<float>(1)[0], expected, 1e-2);
  EXPECT_NEAR(doubleSum.download<double>(1)[0], expected, 1e-9);
  EXPECT_EQ(extremes.download<int>(2), std::vector<int>({maximum, minimum}));
  EXPECT_EQ(bits.download<unsigned>(2), std::vector<unsigned>({~0u, 0u}));
  EXPECT_EQ(count.download<unsigned long long>(1)[0], unsigned(n));
  std::vector<int> elected = winner.download<int>(2);
  EXPECT_GE(elected[0], 1);
  EXPECT_LE(elected[0], n);
  EXPECT_EQ(elected[1], 7);
}

TEST_F(EmulatorTest, ExitedThreadsDoNotBlockABarrier) {
  DeviceBuffer out = DeviceBuffer::upload(emulator(), 0, std::vector<int>(3, 0));
  void *args[] = {&out.pointer};
  ASSERT_OK(emulator().launch(0, kernel("faults.cu", "early_exit_barrier"), {3}, {64}, args));
  EXPECT_EQ(out.download<int>(3), std::vector<int>({7, 7, 7}));
}

TEST_F(EmulatorTest, MismatchedBarriersAreReportedAsDeadlock) {
  DeviceBuffer out(emulator(), 0, 64 * sizeof(float));
  void *args[] = {&out.pointer};
  Failure failure =
      failureOf(emulator().launch(0, kernel("faults.cu", "mismatched_barriers"), {1}, {64}, args));
  EXPECT_EQ(failure.kind, CudaErrorKind::Deadlock) << failure.text;
  EXPECT_NE(failure.text.find("mismatched_barriers"), std::string::npos) << failure.text;
  EXPECT_NE(failure.text.find("48 thread(s) wait at __syncthreads(), 16 at a warp collective"),
            std::string::npos)
      << failure.text;
}

TEST_F(EmulatorTest, OutOfBoundsWriteIsCaughtWithKernelName) {
  const int n = 1000;
  DeviceBuffer out(emulator(), 0, n * sizeof(float));
  int count = n;
  void *args[] = {&out.pointer, &count};
  Failure failure = failureOf(
      emulator().launch(0, kernel("faults.cu", "off_by_one"), {(n + 127) / 128}, {128}, args));
  EXPECT_EQ(failure.kind, CudaErrorKind::OutOfBounds) << failure.text;
  EXPECT_NE(failure.text.find("kernel 'off_by_one' on cuda:0 wrote out of bounds"),
            std::string::npos)
      << failure.text;
  EXPECT_NE(failure.text.find("0 bytes past the end of a 4000-byte allocation on cuda:0"),
            std::string::npos)
      << failure.text;
  EXPECT_NE(failure.text.find("thread (104,0,0) of block (7,0,0)"), std::string::npos)
      << failure.text;

  // The process and the emulator survive: the same kernel within bounds runs.
  count = n - 1;
  ASSERT_OK(
      emulator().launch(0, kernel("faults.cu", "off_by_one"), {(n + 127) / 128}, {128}, args));
  std::vector<float> values = out.download<float>(n);
  EXPECT_EQ(std::count(values.begin(), values.end(), 1.0f), n);
}

TEST_F(EmulatorTest, ArgumentOnAnotherDeviceIsRejectedAtLaunch) {
  const int n = 256;
  DeviceBuffer onOne = DeviceBuffer::upload(emulator(), 1, randomFloats(n, 7));
  DeviceBuffer onZero(emulator(), 0, n * sizeof(float));
  int count = n;
  void *args[] = {&onOne.pointer, &onZero.pointer, &count};
  Failure failure =
      failureOf(emulator().launch(0, kernel("faults.cu", "copy_through"), {1}, {256}, args));
  EXPECT_EQ(failure.kind, CudaErrorKind::CrossDeviceAccess) << failure.text;
  EXPECT_NE(failure.text.find("kernel 'copy_through' launched on cuda:0 gets argument 1 "
                              "pointing into a 1024-byte allocation on cuda:1"),
            std::string::npos)
      << failure.text;
}

TEST_F(EmulatorTest, AccessToAnotherDevicesMemoryIsCaughtWhenItHappens) {
  const int n = 64;
  DeviceBuffer onOne = DeviceBuffer::upload(emulator(), 1, randomFloats(n, 8));
  std::vector<unsigned long long> table = {reinterpret_cast<uintptr_t>(onOne.pointer)};
  DeviceBuffer tableOnZero = DeviceBuffer::upload(emulator(), 0, table);
  DeviceBuffer out(emulator(), 0, n * sizeof(float));
  int count = n;
  void *args[] = {&tableOnZero.pointer, &out.pointer, &count};
  Failure failure =
      failureOf(emulator().launch(0, kernel("faults.cu", "gather_indirect"), {1}, {n}, args));
  EXPECT_EQ(failure.kind, CudaErrorKind::CrossDeviceAccess) << failure.text;
  EXPECT_NE(failure.text.find("kernel 'gather_indirect' on cuda:0 read memory of cuda:1"),
            std::string::npos)
      << failure.text;
  // Launched on the device that owns it, the same pointer is fine.
  DeviceBuffer tableOnOne = DeviceBuffer::upload(emulator(), 1, table);
  DeviceBuffer outOnOne(emulator(), 1, n * sizeof(float));
  void *argsOnOne[] = {&tableOnOne.pointer, &outOnOne.pointer, &count};
  ASSERT_OK(emulator().launch(1, kernel("faults.cu", "gather_indirect"), {1}, {n}, argsOnOne));
  EXPECT_EQ(outOnOne.download<float>(n), onOne.download<float>(n));
}

TEST_F(EmulatorTest, HostMemoryIsOutOfAKernelsReach) {
  const int n = 64;
  // A host pointer hidden in device memory passes the launch's argument
  // check; a GPU faults on the access, and so must the emulator.
  std::vector<float> host = randomFloats(n, 9);
  std::vector<unsigned long long> table = {reinterpret_cast<uintptr_t>(host.data())};
  DeviceBuffer tableOnZero = DeviceBuffer::upload(emulator(), 0, table);
  DeviceBuffer out(emulator(), 0, n * sizeof(float));
  int count = n;
  void *readArgs[] = {&tableOnZero.pointer, &out.pointer, &count};
  Failure read =
      failureOf(emulator().launch(0, kernel("faults.cu", "gather_indirect"), {1}, {n}, readArgs));
  EXPECT_EQ(read.kind, CudaErrorKind::HostMemoryAccess) << read.text;
  EXPECT_NE(read.text.find("kernel 'gather_indirect' on cuda:0 read host memory at 0x"),
            std::string::npos)
      << read.text;
  EXPECT_NE(read.text.find("thread ("), std::string::npos) << read.text;

  std::vector<float> untouched = host;
  void *writeArgs[] = {&tableOnZero.pointer, &out.pointer, &count};
  Failure write =
      failureOf(emulator().launch(0, kernel("faults.cu", "scatter_indirect"), {1}, {n}, writeArgs));
  EXPECT_EQ(write.kind, CudaErrorKind::HostMemoryAccess) << write.text;
  EXPECT_NE(write.text.find("kernel 'scatter_indirect' on cuda:0 wrote host memory"),
            std::string::npos)
      << write.text;
  EXPECT_EQ(host, untouched);

  // Its own constant tables, stack and shared memory stay within reach.
  void *ownArgs[] = {&out.pointer, &count};
  ASSERT_OK(emulator().launch(0, kernel("faults.cu", "own_memory"), {1}, {n}, ownArgs));
  std::vector<float> values = out.download<float>(n);
  for (int t = 0; t < n; ++t) {
    auto square = [](int k) { return float((k % 8) * (k % 8)); };
    int u = (t + 1) % 64;
    EXPECT_EQ(values[t], square(u % n % 8 + u) + square((t * 3) % 8 + t)) << t;
  }
}

TEST(EmulatorHostCheck, WithTheCheckOffAHostPointerIsReadSilently) {
  // What the check above guards against: built without it, the same kernel
  // reads host memory as if it were the GPU's.
  EmulatorOptions options;
  options.deviceCount = 1;
  options.workerThreads = 1;
  options.checkHostAccess = false;
  Emulator emulator(options);
  llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
      emulator.loadModule(readKernel("faults.cu"), "faults.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::Expected<EmulatedKernel> gather = (*module)->kernel("gather_indirect");
  ASSERT_TRUE(bool(gather)) << llvm::toString(gather.takeError());
  const int n = 32;
  std::vector<float> host = randomFloats(n, 10);
  std::vector<unsigned long long> table = {reinterpret_cast<uintptr_t>(host.data())};
  DeviceBuffer tableOnZero = DeviceBuffer::upload(emulator, 0, table);
  DeviceBuffer out(emulator, 0, n * sizeof(float));
  int count = n;
  void *args[] = {&tableOnZero.pointer, &out.pointer, &count};
  ASSERT_OK(emulator.launch(0, *gather, {1}, {n}, args));
  EXPECT_EQ(out.download<float>(n), host);
}

TEST_F(EmulatorTest, NullPointerDivisionByZeroTrapAndStackOverflowAreReported) {
  DeviceBuffer out(emulator(), 0, 64 * sizeof(int));
  void *nowhere = nullptr;
  void *nullArgs[] = {&nowhere};
  Failure null =
      failureOf(emulator().launch(0, kernel("faults.cu", "write_through"), {1}, {32}, nullArgs));
  EXPECT_EQ(null.kind, CudaErrorKind::KernelFault) << null.text;
  EXPECT_NE(null.text.find("wrote through a null pointer"), std::string::npos) << null.text;

  DeviceBuffer in = DeviceBuffer::upload(emulator(), 0, std::vector<int>(32, 5));
  int zero = 0;
  void *divideArgs[] = {&in.pointer, &out.pointer, &zero};
  Failure divide =
      failureOf(emulator().launch(0, kernel("faults.cu", "divide"), {1}, {32}, divideArgs));
  EXPECT_EQ(divide.kind, CudaErrorKind::KernelFault) << divide.text;
  EXPECT_NE(divide.text.find("arithmetic fault"), std::string::npos) << divide.text;

  DeviceBuffer negative = DeviceBuffer::upload(emulator(), 0, std::vector<int>(32, -1));
  void *trapArgs[] = {&negative.pointer};
  Failure trap =
      failureOf(emulator().launch(0, kernel("faults.cu", "trap_when"), {1}, {32}, trapArgs));
  EXPECT_EQ(trap.kind, CudaErrorKind::KernelFault) << trap.text;
  EXPECT_NE(trap.text.find("kernel 'trap_when' on cuda:0 trapped"), std::string::npos) << trap.text;

  int depth = 100000;
  void *deepArgs[] = {&out.pointer, &depth};
  Failure deep =
      failureOf(emulator().launch(0, kernel("faults.cu", "overflow_stack"), {1}, {4}, deepArgs));
  EXPECT_EQ(deep.kind, CudaErrorKind::KernelFault) << deep.text;
  EXPECT_NE(deep.text.find("overflowed its stack"), std::string::npos) << deep.text;
}

TEST_F(EmulatorTest, CopiesAreCheckedForBoundsAndOwnership) {
  DeviceBuffer zero(emulator(), 0, 256), one(emulator(), 1, 256);
  std::vector<char> host(512, 1);
  Failure overrun =
      failureOf(emulator().copyHostToDevice(0, zero.pointer, host.data(), host.size()));
  EXPECT_EQ(overrun.kind, CudaErrorKind::InvalidCopy) << overrun.text;
  EXPECT_NE(overrun.text.find("run 256 bytes past the end of a 256-byte allocation on cuda:0"),
            std::string::npos)
      << overrun.text;

  Failure wrongDevice = failureOf(emulator().copyDeviceToDevice(0, zero.pointer, one.pointer, 256));
  EXPECT_EQ(wrongDevice.kind, CudaErrorKind::CrossDeviceAccess) << wrongDevice.text;

  Failure hostAsDevice =
      failureOf(emulator().copyDeviceToHost(0, host.data(), host.data() + 256, 16));
  EXPECT_EQ(hostAsDevice.kind, CudaErrorKind::InvalidCopy) << hostAsDevice.text;

  // A peer copy is the right way across devices.
  std::vector<int> values(64);
  std::iota(values.begin(), values.end(), 0);
  ASSERT_OK(emulator().copyHostToDevice(1, one.pointer, values.data(), 256));
  ASSERT_OK(emulator().copyPeer(0, zero.pointer, 1, one.pointer, 256));
  EXPECT_EQ(zero.download<int>(64), values);
}

TEST_F(EmulatorTest, DeviceIndexBeyondTheEmulatedGpusIsAClearError) {
  Failure failure = failureOf(emulator().allocate(3, 16).takeError());
  EXPECT_EQ(failure.kind, CudaErrorKind::NoSuchDevice);
  EXPECT_NE(failure.text.find("cuda:3 does not exist: the CUDA emulator has 2 GPUs"),
            std::string::npos)
      << failure.text;
}

TEST_F(EmulatorTest, BadLaunchesAndFreesAreErrorsNotCrashes) {
  EmulatedKernel add = kernel("vector_add.cu", "vector_add");
  DeviceBuffer buffer(emulator(), 0, 64);
  int n = 16;
  void *args[] = {&buffer.pointer, &buffer.pointer, &buffer.pointer, &n};
  EXPECT_EQ(failureOf(emulator().launch(0, add, {1}, {2048}, args)).kind,
            CudaErrorKind::InvalidLaunch);
  EXPECT_EQ(failureOf(emulator().launch(0, add, {0}, {32}, args)).kind,
            CudaErrorKind::InvalidLaunch);
  EXPECT_EQ(failureOf(emulator().launch(0, add, {1}, {32}, nullptr)).kind,
            CudaErrorKind::InvalidLaunch);
  std::vector<float> host(16);
  void *hostPointer = host.data();
  void *hostArgs[] = {&hostPointer, &buffer.pointer, &buffer.pointer, &n};
  Failure hostArgument = failureOf(emulator().launch(0, add, {1}, {16}, hostArgs));
  EXPECT_EQ(hostArgument.kind, CudaErrorKind::InvalidLaunch) << hostArgument.text;
  EXPECT_NE(hostArgument.text.find("argument 1 of kernel 'vector_add'"), std::string::npos)
      << hostArgument.text;

  llvm::Expected<void *> once = emulator().allocate(0, 32);
  ASSERT_TRUE(bool(once)) << llvm::toString(once.takeError());
  ASSERT_OK(emulator().free(0, *once));
  EXPECT_EQ(failureOf(emulator().free(0, *once)).kind, CudaErrorKind::InvalidFree);
}

TEST_F(EmulatorTest, ModulesReportMissingKernelsAndCompileErrors) {
  llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
      emulator().loadModule(readKernel("vector_add.cu"), "vector_add.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::ArrayRef<std::string> names = (*module)->kernelNames();
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.end()),
            std::vector<std::string>({"vector_add"}));
  Failure missing = failureOf((*module)->kernel("vector_sub").takeError());
  EXPECT_EQ(missing.kind, CudaErrorKind::KernelNotFound);
  EXPECT_NE(missing.text.find("its kernels: vector_add"), std::string::npos) << missing.text;

  Failure broken = failureOf(
      emulator()
          .loadModule("extern \"C\" __global__ void broken(float *x) { x[0] = undefined_name; }",
                      "broken.cu")
          .takeError());
  EXPECT_EQ(broken.kind, CudaErrorKind::HostCompileFailed);
  EXPECT_NE(broken.text.find("broken.cu"), std::string::npos) << broken.text;
  EXPECT_NE(broken.text.find("undefined_name"), std::string::npos) << broken.text;
}

TEST(EmulatorSignals, FaultsStayReportableWhenAnotherHandlerWasInstalledLater) {
  EmulatorOptions options;
  options.deviceCount = 1;
  options.workerThreads = 1;
  Emulator emulator(options);
  llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
      emulator.loadModule(readKernel("faults.cu"), "faults.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::Expected<EmulatedKernel> overrun = (*module)->kernel("off_by_one");
  ASSERT_TRUE(bool(overrun));
  DeviceBuffer out(emulator, 0, 16 * sizeof(float));
  int n = 16;
  void *args[] = {&out.pointer, &n};
  // Someone (a crash reporter) takes SIGSEGV after the emulator's first use.
  EXPECT_EQ(failureOf(emulator.launch(0, *overrun, {1}, {32}, args)).kind,
            CudaErrorKind::OutOfBounds);
  struct sigaction crashReporter, previous;
  std::memset(&crashReporter, 0, sizeof(crashReporter));
  crashReporter.sa_handler = [](int) { std::_Exit(86); };
  sigaction(SIGSEGV, &crashReporter, &previous);
  EXPECT_EQ(failureOf(emulator.launch(0, *overrun, {1}, {32}, args)).kind,
            CudaErrorKind::OutOfBounds);
  sigaction(SIGSEGV, &previous, nullptr);
}

TEST(EmulatorWatchdog, EndlessKernelIsStoppedAndReported) {
  EmulatorOptions options;
  options.deviceCount = 1;
  options.workerThreads = 2;
  options.timeoutSeconds = 1;
  Emulator emulator(options);
  llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
      emulator.loadModule(readKernel("faults.cu"), "faults.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::Expected<EmulatedKernel> spin = (*module)->kernel("spin_forever");
  ASSERT_TRUE(bool(spin)) << llvm::toString(spin.takeError());
  DeviceBuffer flag = DeviceBuffer::upload(emulator, 0, std::vector<int>(1, 0));
  void *args[] = {&flag.pointer};
  Failure failure = failureOf(emulator.launch(0, *spin, {4}, {64}, args));
  EXPECT_EQ(failure.kind, CudaErrorKind::Timeout) << failure.text;
  EXPECT_NE(failure.text.find("kernel 'spin_forever' on cuda:0 ran longer than 1 s"),
            std::string::npos)
      << failure.text;
  // The workers were freed: the emulator runs the next kernel.
  llvm::Expected<EmulatedKernel> histogram = (*module)->kernel("atomic_histogram");
  ASSERT_TRUE(bool(histogram));
  DeviceBuffer bins = DeviceBuffer::upload(emulator, 0, std::vector<int>(2, 0));
  int binCount = 2, n = 100;
  void *histogramArgs[] = {&bins.pointer, &binCount, &n};
  ASSERT_OK(emulator.launch(0, *histogram, {1}, {128}, histogramArgs));
  EXPECT_EQ(bins.download<int>(2), std::vector<int>({50, 50}));
}

TEST(EmulatorDynamicShared, DeclarationsBecomePointersAndKeepLineNumbers) {
  std::string local = rewriteDynamicShared("__global__ void k() {\n"
                                           "  extern __shared__ unsigned char bytes[];\n"
                                           "  extern __shared__ __align__(16) float4 v[ ] ;\n}\n");
  EXPECT_EQ(local,
            "__global__ void k() {\n"
            "  unsigned char *const bytes = reinterpret_cast<unsigned char "
            "*>(::modelc_emu::dynamicShared());\n"
            "  float4 *const v = reinterpret_cast<float4 *>(::modelc_emu::dynamicShared());\n"
            "}\n");
  std::string global = rewriteDynamicShared("int a;\nextern __shared__ float s[];\nint b;\n");
  EXPECT_EQ(global, "int a;\n\n#undef s\n#define s (reinterpret_cast<float "
                    "*>(::modelc_emu::dynamicShared()))\n#line 2\n\nint b;\n");
  EXPECT_EQ(rewriteDynamicShared("__shared__ float tile[16][16];"),
            "__shared__ float tile[16][16];");
}

TEST(EmulatorKernelNames, FindsGlobalFunctionsAndIgnoresComments) {
  EXPECT_EQ(findKernelNames("extern \"C\" __global__ void a(int x) {}\n"
                            "// __global__ void commented(int) {}\n"
                            "/* __global__ void block(int) {} */\n"
                            "__device__ void helper() {}\n"
                            "extern \"C\" __global__ void __launch_bounds__(256) b(float *y) {}\n"),
            std::vector<std::string>({"a", "b"}));
}

TEST(EmulatorUcontext, FallbackFiberSwitchRunsTheSameKernels) {
  EmulatorOptions options;
  options.deviceCount = 2;
  options.workerThreads = 2;
  options.compilerFlags = {"-DMODELC_EMU_USE_UCONTEXT"};
  Emulator emulator(options);
  llvm::Expected<std::shared_ptr<const EmulatedModule>> module =
      emulator.loadModule(readKernel("tiled_matmul.cu"), "tiled_matmul.cu");
  ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
  llvm::Expected<EmulatedKernel> matmul = (*module)->kernel("tiled_matmul");
  ASSERT_TRUE(bool(matmul)) << llvm::toString(matmul.takeError());
  checkMatmul(*matmul, emulator, 48, 40, 20);
}

} // namespace
