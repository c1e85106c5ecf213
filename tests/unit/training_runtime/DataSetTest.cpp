//===- DataSetTest.cpp - Data sets, epoch orders and shards ---------------===//
#include "runtime/training/DataSet.h"

#include "runtime/Npy.h"
#include "runtime/Npz.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace modelc::runtime;
using namespace modelc::runtime::training;

namespace {

std::string input(const char *name) { return std::string(MODELC_TEST_INPUTS "/") + name; }

std::string errorOf(llvm::Error err) { return llvm::toString(std::move(err)); }

TEST(NpzTest, ReadsStoredAndDeflatedMembersAlike) {
  for (const char *file : {"stored.npz", "deflated.npz"}) {
    SCOPED_TRACE(file);
    llvm::Expected<std::vector<NpzArray>> arrays = readNpz(input(file));
    ASSERT_TRUE(bool(arrays)) << llvm::toString(arrays.takeError());
    ASSERT_EQ(arrays->size(), 2u);
    EXPECT_EQ((*arrays)[0].name, "x");
    EXPECT_EQ((*arrays)[0].tensor.str(), "f32[5, 3] @ cpu");
    EXPECT_EQ((*arrays)[0].tensor.values<float>()[14], 14.0f);
    EXPECT_EQ((*arrays)[1].name, "y");
    EXPECT_EQ((*arrays)[1].tensor.values<int64_t>()[0], 4);
  }
}

TEST(NpzTest, EveryTruncationIsAnErrorNotACrash) {
  auto whole = llvm::MemoryBuffer::getFile(input("stored.npz"));
  ASSERT_TRUE(bool(whole));
  llvm::StringRef bytes = (*whole)->getBuffer();
  for (size_t size = 0; size < bytes.size(); ++size) {
    llvm::Expected<std::vector<NpzArray>> arrays =
        parseNpz(llvm::MemoryBuffer::getMemBufferCopy(bytes.take_front(size), "cut.npz"));
    ASSERT_FALSE(bool(arrays)) << "cut at " << size;
    std::string message = llvm::toString(arrays.takeError());
    EXPECT_EQ(message.rfind("cut.npz", 0), 0u) << message;
  }
}

TEST(DataSetTest, OpensAnArchiveByTheStepsParameterNames) {
  llvm::Expected<DataSet> data = DataSet::open(input("deflated.npz"), {"y", "x"});
  ASSERT_TRUE(bool(data)) << llvm::toString(data.takeError());
  EXPECT_EQ(data->size(), 5);
  ASSERT_EQ(data->fields().size(), 2u);
  EXPECT_EQ(data->fields()[0].name, "y");
  std::vector<Tensor> batch = data->gather({4, 0});
  EXPECT_EQ(batch[0].values<int64_t>()[0], 0);
  EXPECT_EQ(batch[0].values<int64_t>()[1], 4);
  EXPECT_EQ(batch[1].str(), "f32[2, 3] @ cpu");
  EXPECT_EQ(batch[1].values<float>()[0], 12.0f);
  EXPECT_EQ(batch[1].values<float>()[3], 0.0f);
}

TEST(DataSetTest, ARenameFeedsAParameterFromAnotherArray) {
  llvm::Expected<DataSet> data =
      DataSet::open(input("stored.npz"), {"images", "labels"}, {{"images", "x"}, {"labels", "y"}});
  ASSERT_TRUE(bool(data)) << llvm::toString(data.takeError());
  EXPECT_EQ(data->fields()[0].name, "images");
  EXPECT_EQ(data->fields()[0].samples.str(), "f32[5, 3] @ cpu");
}

TEST(DataSetTest, AMissingArrayIsNamedWithWhatTheDataHas) {
  llvm::Expected<DataSet> data = DataSet::open(input("stored.npz"), {"x", "target"});
  ASSERT_FALSE(bool(data));
  std::string message = errorOf(data.takeError());
  EXPECT_NE(message.find("no array 'target'; the data has 'x' f32[5, 3], 'y' i64[5]"),
            std::string::npos)
      << message;
}

TEST(DataSetTest, ArraysOfDifferentLengthsAreAnError) {
  llvm::Expected<DataSet> data = DataSet::open(input("mismatch.npz"), {"x", "y"});
  ASSERT_FALSE(bool(data));
  std::string message = errorOf(data.takeError());
  EXPECT_NE(message.find("'x' has 5, 'y' has 4 samples"), std::string::npos) << message;
}

TEST(DataSetTest, AFolderOfNpyFilesIsReadMemoryMapped) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("data", dir));
  Tensor x = Tensor::fromValues<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor y = Tensor::fromValues<int64_t>({4}, {1, 0, 1, 0});
  ASSERT_FALSE(bool(writeNpy((dir + "/x.npy").str(), x)));
  ASSERT_FALSE(bool(writeNpy((dir + "/y.npy").str(), y)));
  llvm::Expected<DataSet> data = DataSet::open(dir, {"x", "y"});
  ASSERT_TRUE(bool(data)) << llvm::toString(data.takeError());
  EXPECT_FALSE(data->fields()[0].samples.isOwning()); // borrowed from the mapping
  EXPECT_EQ(data->gather({3})[0].values<float>()[1], 7.0f);
  llvm::sys::fs::remove_directories(dir);
}

TEST(EpochOrderTest, OrdersArePermutationsFixedBySeedAndEpoch) {
  EpochOrder order({/*samples=*/100, /*batchSize=*/10, /*shuffle=*/true, /*seed=*/7});
  std::vector<int64_t> first = order.permutation(0);
  std::vector<int64_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i)
    ASSERT_EQ(sorted[size_t(i)], i);
  EXPECT_EQ(first, EpochOrder({100, 10, true, 7}).permutation(0));
  EXPECT_NE(first, order.permutation(1));
  EXPECT_NE(first, EpochOrder({100, 10, true, 8}).permutation(0));
  // The generator is DataSet.cpp's, not the standard library's: pin it
  // (splitmix64's published first output for state 0).
  uint64_t state = 0;
  EXPECT_EQ(splitMix64(state), 0xE220A8397B1DCDAFull);
}

TEST(EpochOrderTest, RanksSplitEachStepOfOneRankExactly) {
  // 1 rank of batch 8 vs 2 ranks of batch 4 vs 4 ranks of batch 2, 30
  // samples: the same samples in every step, the last step partial.
  BatchPlan one{30, 8, true, 3, false, 0, 1};
  EpochOrder single(one);
  ASSERT_EQ(single.stepsPerEpoch(), 4);
  for (int world : {2, 4}) {
    for (int64_t step = 0; step < 4; ++step) {
      Shard whole = single.shard(1, step);
      std::vector<int64_t> joined;
      int64_t total = 0;
      for (int rank = 0; rank < world; ++rank) {
        BatchPlan plan{30, 8 / world, true, 3, false, rank, world};
        EpochOrder order(plan);
        ASSERT_EQ(order.stepsPerEpoch(), 4);
        Shard part = order.shard(1, step);
        EXPECT_EQ(part.stepSamples, whole.stepSamples);
        total += int64_t(part.indices.size());
        joined.insert(joined.end(), part.indices.begin(), part.indices.end());
      }
      EXPECT_EQ(total, whole.stepSamples);
      EXPECT_EQ(joined, whole.indices) << "world " << world << " step " << step;
    }
  }
}

TEST(EpochOrderTest, DropLastAndTooFewSamplesForTheRanks) {
  EXPECT_EQ(EpochOrder({30, 8, false, 0, /*dropLast=*/true}).stepsPerEpoch(), 3);
  EXPECT_EQ(EpochOrder({30, 8, false, 0, false}).stepsPerEpoch(), 4);
  // 33 samples, 4 ranks of 8: one full step, then 1 sample for 4 ranks.
  EXPECT_EQ(EpochOrder({33, 8, false, 0, false, 0, 4}).stepsPerEpoch(), 1);
  Shard last = EpochOrder({30, 8, false, 0}).shard(0, 3);
  EXPECT_EQ(last.indices, (std::vector<int64_t>{24, 25, 26, 27, 28, 29}));
}

} // namespace
