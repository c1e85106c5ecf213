//===- CheckpointTest.cpp - Atomic checkpoints, kept and found ------------===//
#include "runtime/training/Checkpoint.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace modelc::runtime;
using namespace modelc::runtime::training;

namespace {

class CheckpointTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ckpt", Dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  std::vector<NamedTensor> state(float v) {
    return {{"fc.weight", Tensor::fromValues<float>({2}, {v, -v})},
            {"optimizer.opt.step", Tensor::fromValues<int64_t>({}, {int64_t(v)})}};
  }
  llvm::SmallString<128> Dir;
};

TEST_F(CheckpointTest, WritesAndReadsBackTensorsAndMetadata) {
  llvm::Expected<std::string> path = writeCheckpoint(Dir, 12, state(3), {{"step", "12"}}, 0);
  ASSERT_TRUE(bool(path)) << llvm::toString(path.takeError());
  EXPECT_EQ(llvm::sys::path::filename(*path), "ckpt-000000012.safetensors");
  llvm::Expected<SafeTensorsFile> file = SafeTensorsFile::open(*path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->metadata().at("step"), "12");
  EXPECT_EQ(file->find("fc.weight")->tensor.values<float>()[1], -3.0f);
}

TEST_F(CheckpointTest, KeepsTheNewestAndFindsTheLatestByStep) {
  for (int step : {5, 10, 100, 20})
    ASSERT_TRUE(bool(writeCheckpoint(Dir, step, state(float(step)), {}, /*keep=*/3)));
  std::vector<std::string> all = listCheckpoints(Dir);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(llvm::sys::path::filename(all[0]), "ckpt-000000010.safetensors");
  EXPECT_EQ(llvm::sys::path::filename(*latestCheckpoint(Dir)), "ckpt-000000100.safetensors");
}

TEST_F(CheckpointTest, AWriterThatDiedMidWriteLeavesTheLatestIntact) {
  ASSERT_TRUE(bool(writeCheckpoint(Dir, 1, state(1), {}, 0)));
  // What a crash between open and rename leaves: a partial temporary file.
  {
    std::error_code ec;
    llvm::raw_fd_ostream out((Dir + "/ckpt-000000002.safetensors.tmp.999").str(), ec);
    out << "\x10\x00\x00";
  }
  EXPECT_EQ(llvm::sys::path::filename(*latestCheckpoint(Dir)), "ckpt-000000001.safetensors");
  ASSERT_TRUE(bool(writeCheckpoint(Dir, 3, state(3), {}, 0)));
  EXPECT_FALSE(llvm::sys::fs::exists(Dir + "/ckpt-000000002.safetensors.tmp.999"));
  EXPECT_EQ(listCheckpoints(Dir).size(), 2u);
}

TEST_F(CheckpointTest, AFolderThatCannotBeCreatedIsAnError) {
  std::string file = (Dir + "/plain").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(file, ec);
  }
  llvm::Expected<std::string> path = writeCheckpoint(file + "/sub", 1, state(1), {}, 0);
  ASSERT_FALSE(bool(path));
  EXPECT_NE(llvm::toString(path.takeError()).find("plain/sub"), std::string::npos);
}

} // namespace
