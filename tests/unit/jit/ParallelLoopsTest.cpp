//===- ParallelLoopsTest.cpp - loop nests on the OpenMP threads -----------===//

#include "JitTestUtils.h"

#include "jit/ParallelRuntime.h"

#include <omp.h>

#include <set>

using namespace modelc::jit;
using namespace modelc::jit::test;

namespace {

/// Every iteration of lower..upper (inclusive, step `increment`) is given to
/// exactly one of `threads` threads, each thread's iterations contiguous and
/// their counts within one of each other; one thread has the last.
void expectBalancedPartition(int64_t lower, int64_t upper, int64_t increment, int32_t threads) {
  int64_t trips = increment > 0 ? (upper < lower ? 0 : (upper - lower) / increment + 1)
                                : (upper > lower ? 0 : (lower - upper) / -increment + 1);
  std::multiset<int64_t> seen;
  int64_t fewest = INT64_MAX, most = 0;
  int lastOwners = 0;
  for (int32_t thread = 0; thread < threads; ++thread) {
    int64_t lo = lower, up = upper, stride = 0;
    int32_t isLast = -1;
    staticSchedule(kScheduleStatic, thread, threads, &isLast, &lo, &up, &stride, increment, 0);
    // The generated loop runs (up - lo) / increment + 1 iterations.
    int64_t count = (up - lo) / increment + 1;
    ASSERT_GE(count, 0) << "thread " << thread;
    for (int64_t i = 0; i < count; ++i)
      seen.insert(lo + i * increment);
    fewest = std::min(fewest, count);
    most = std::max(most, count);
    lastOwners += isLast;
    if (isLast) {
      EXPECT_EQ(lo + (count - 1) * increment, lower + (trips - 1) * increment);
    }
  }
  ASSERT_EQ(int64_t(seen.size()), trips);
  for (int64_t i = 0; i < trips; ++i)
    EXPECT_EQ(seen.count(lower + i * increment), 1u) << "iteration " << i;
  EXPECT_LE(most - fewest, 1);
  EXPECT_EQ(lastOwners, trips > 0 ? 1 : 0);
}

TEST(ParallelLoopsTest, StaticScheduleGivesEachIterationToOneThread) {
  for (int32_t threads : {1, 2, 3, 4, 8})
    for (int64_t trips : {0, 1, 2, 3, 7, 8, 100, 1031}) {
      SCOPED_TRACE("threads " + std::to_string(threads) + ", trips " + std::to_string(trips));
      expectBalancedPartition(0, trips - 1, 1, threads);
      expectBalancedPartition(5, 5 + 3 * (trips - 1), 3, threads);
      expectBalancedPartition(10, 10 - 2 * (trips - 1), -2, threads);
    }
}

TEST(ParallelLoopsTest, ChunkedScheduleDealsBlocksRoundRobin) {
  const int64_t trips = 23, chunk = 4;
  const int32_t threads = 3;
  std::multiset<int64_t> seen;
  int lastOwners = 0;
  for (int32_t thread = 0; thread < threads; ++thread) {
    int64_t lo = 0, up = trips - 1, stride = 0;
    int32_t isLast = 0;
    staticSchedule(kScheduleStaticChunked, thread, threads, &isLast, &lo, &up, &stride, 1, chunk);
    EXPECT_EQ(stride, chunk * threads);
    // What the generated dispatch loop does: a block, then the next stride on.
    for (int64_t first = lo; first < trips; first += stride)
      for (int64_t i = first; i < std::min(first + chunk, trips); ++i)
        seen.insert(i);
    lastOwners += isLast;
  }
  ASSERT_EQ(int64_t(seen.size()), trips);
  for (int64_t i = 0; i < trips; ++i)
    EXPECT_EQ(seen.count(i), 1u);
  EXPECT_EQ(lastOwners, 1);
}

// A row-wise softmax over a dynamic number of rows: the nest runs on the
// threads from kParallelLoopMinWork on, and computes what it computes
// serially, bit for bit.
const char *kSoftmax = R"mlir(
!x = tensor<?x256xf32, #mdl.device<cpu>>
func.func @softmax(%x: !x) -> !x {
  %0 = mdl.softmax %x {dim = 1} : !x
  return %0 : !x
}
)mlir";

TEST(ParallelLoopsTest, LargeNestsRunOnTheThreadsAndMatchTheSerialLoops) {
  JitOptions serialOptions;
  serialOptions.parallelLoopMinWork = 0;
  auto parallel = compileOrFail(kSoftmax);
  auto serial = compileOrFail(kSoftmax, serialOptions);
  ASSERT_TRUE(parallel && serial);
  int savedThreads = omp_get_max_threads();
  omp_set_num_threads(2);
  for (int64_t rows : {int64_t(4), int64_t(1031)}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    OwnedMemRef<float, 2> x({rows, 256}), fromThreads({rows, 256}), fromOne({rows, 256});
    fillRandom(x.values(), 7);
    uint64_t before = parallelRegionsEntered();
    ASSERT_FALSE(parallel->call("softmax", {x.get(), fromThreads.get()}));
    uint64_t regions = parallelRegionsEntered() - before;
    ASSERT_FALSE(serial->call("softmax", {x.get(), fromOne.get()}));
    EXPECT_EQ(parallelRegionsEntered() - before, regions) << "min-work 0 ran a region";
    if (rows == 4)
      EXPECT_EQ(regions, 0u) << "4 rows are too little work to share";
    else
      EXPECT_GE(regions, 1u) << "1031 rows should run on the threads";
    EXPECT_EQ(fromThreads.values(), fromOne.values());
  }
  omp_set_num_threads(savedThreads);
}

} // namespace
