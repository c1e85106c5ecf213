//===- CollectiveTest.cpp - Open MPI collectives, run as ranks by mpirun --===//
//
// ctest starts this binary under `mpirun -np 2`. With --hang-rank=R, rank R
// stops answering before the first all-reduce: the others must exit within
// the 2 s timeout with the watchdog's message (the ctest looks for it).
//
//===----------------------------------------------------------------------===//
#include "runtime/training/Collective.h"

#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

using namespace modelc::runtime::training;

namespace {

Collective *world = nullptr;

TEST(CollectiveTest, RanksKnowEachOther) {
  EXPECT_EQ(world->size(), 2);
  EXPECT_EQ(world->localSize(), 2);
  EXPECT_EQ(world->localRank(), world->rank());
  EXPECT_NE(world->description().find("Open MPI"), std::string::npos) << world->description();
}

TEST(CollectiveTest, BroadcastCopiesRankZerosBytes) {
  std::vector<int> values(1000, world->rank() == 0 ? 7 : -1);
  ASSERT_FALSE(bool(world->broadcast(values.data(), values.size() * sizeof(int), 0)));
  EXPECT_EQ(std::accumulate(values.begin(), values.end(), 0), 7000);
}

TEST(CollectiveTest, PostedAllReducesSumInPlaceAndCompleteInOrder) {
  // Buckets as a backward pass posts them: several, of both types.
  std::vector<std::vector<float>> buckets;
  for (size_t n : {1, 1000, 65537})
    buckets.emplace_back(n, float(world->rank() + 1));
  std::vector<double> wide(10, 0.5 * (world->rank() + 1));
  std::vector<Collective::Ticket> tickets;
  for (auto &bucket : buckets)
    tickets.push_back(
        world->postAllReduce(bucket.data(), bucket.size(), ReduceType::F32, "bucket"));
  Collective::Ticket last = world->postAllReduce(wide.data(), wide.size(), ReduceType::F64, "f64");
  ASSERT_FALSE(bool(world->wait(last))); // waits for the earlier ones too
  for (auto &bucket : buckets)
    for (float v : bucket)
      ASSERT_EQ(v, 3.0f);
  for (double v : wide)
    ASSERT_EQ(v, 1.5);
  EXPECT_GT(world->takeReduceTime().count(), 0.0);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  int hangRank = -1;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg.consume_front("--hang-rank="))
      arg.getAsInteger(10, hangRank);
  }
  auto mpi = openMpi(MODELC_MPI_MODULE_DIR, std::chrono::seconds(2));
  if (!mpi) {
    fprintf(stderr, "%s\n", llvm::toString(mpi.takeError()).c_str());
    return 1;
  }
  world = mpi->get();
  if (hangRank >= 0) {
    if (world->rank() == hangRank)
      std::this_thread::sleep_for(std::chrono::seconds(30));
    float x = 1;
    llvm::Error err = world->allReduce(&x, 1, ReduceType::F32, "all-reduce of the first bucket");
    fprintf(stderr, "unexpected: the all-reduce returned\n");
    llvm::consumeError(std::move(err));
    return 1;
  }
  int status = RUN_ALL_TESTS();
  mpi->reset();
  return status;
}
