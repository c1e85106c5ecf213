//===- CheckSchedulerTest.cpp - Superseding and cancelling checks ---------===//

#include "lsp/CheckScheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

using namespace modelc::lsp;
using namespace std::chrono_literals;

namespace {

/// A check that reads the document's "version" when it starts and can be
/// held at its start until the test releases it.
struct FakeDocuments {
  std::mutex mutex;
  std::condition_variable cv;
  bool holdChecks = false;
  bool checkStarted = false;
  int version = 0;
  std::vector<std::string> committed; // "key@version" in commit order

  CheckScheduler::Commit check(llvm::StringRef key) {
    std::unique_lock<std::mutex> lock(mutex);
    int seen = version;
    checkStarted = true;
    cv.notify_all();
    cv.wait(lock, [&] { return !holdChecks; });
    return [this, name = key.str() + "@" + std::to_string(seen)] {
      std::lock_guard<std::mutex> lock(mutex);
      committed.push_back(name);
    };
  }
  void waitStarted() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return checkStarted; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    holdChecks = false;
    cv.notify_all();
  }
};

TEST(CheckScheduler, ChecksAndCommitsADocument) {
  FakeDocuments docs;
  CheckScheduler scheduler([&](llvm::StringRef key) { return docs.check(key); });
  scheduler.schedule("a.mdl");
  scheduler.waitIdle();
  EXPECT_EQ(docs.committed, std::vector<std::string>{"a.mdl@0"});
  EXPECT_EQ(scheduler.checksRun(), 1u);
  EXPECT_EQ(scheduler.checksDropped(), 0u);
}

TEST(CheckScheduler, NewerEditSupersedesRunningCheckAndCoalescesQueued) {
  FakeDocuments docs;
  docs.holdChecks = true;
  CheckScheduler scheduler([&](llvm::StringRef key) { return docs.check(key); });
  scheduler.schedule("a.mdl");
  docs.waitStarted(); // the check of version 0 is running
  for (int version = 1; version <= 3; ++version) {
    {
      std::lock_guard<std::mutex> lock(docs.mutex);
      docs.version = version;
    }
    scheduler.schedule("a.mdl");
  }
  EXPECT_FALSE(scheduler.waitFor("a.mdl", 10ms)); // still busy
  docs.release();
  scheduler.waitIdle();
  // Version 0's result is dropped; edits 1-3 coalesce into one check.
  EXPECT_EQ(docs.committed, std::vector<std::string>{"a.mdl@3"});
  EXPECT_EQ(scheduler.checksRun(), 2u);
  EXPECT_EQ(scheduler.checksDropped(), 1u);
  EXPECT_TRUE(scheduler.waitFor("a.mdl", 0ms));
}

TEST(CheckScheduler, CancelDropsQueuedAndRunningChecks) {
  FakeDocuments docs;
  docs.holdChecks = true;
  CheckScheduler scheduler([&](llvm::StringRef key) { return docs.check(key); });
  scheduler.schedule("a.mdl");
  docs.waitStarted();
  scheduler.schedule("b.mdl"); // queued behind a.mdl
  scheduler.cancel("a.mdl");
  scheduler.cancel("b.mdl");
  docs.release();
  scheduler.waitIdle();
  EXPECT_TRUE(docs.committed.empty());
  EXPECT_EQ(scheduler.checksRun(), 1u);
  EXPECT_EQ(scheduler.checksDropped(), 1u);
}

TEST(CheckScheduler, DocumentsAreCheckedInOrder) {
  FakeDocuments docs;
  docs.holdChecks = true;
  CheckScheduler scheduler([&](llvm::StringRef key) { return docs.check(key); });
  scheduler.schedule("a.mdl");
  docs.waitStarted();
  scheduler.schedule("b.mdl");
  scheduler.schedule("c.mdl");
  scheduler.schedule("b.mdl"); // already queued: keeps its place
  docs.release();
  scheduler.waitIdle();
  EXPECT_EQ(docs.committed, (std::vector<std::string>{"a.mdl@0", "b.mdl@0", "c.mdl@0"}));
}

TEST(CheckScheduler, DestructorStopsWithWorkQueued) {
  FakeDocuments docs;
  docs.holdChecks = true;
  std::thread releaser;
  {
    CheckScheduler scheduler([&](llvm::StringRef key) { return docs.check(key); });
    scheduler.schedule("a.mdl");
    docs.waitStarted();
    scheduler.schedule("b.mdl");
    // Release the held check only once the destructor is (very likely)
    // waiting for it, so `b.mdl` is still queued when stopping begins.
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      docs.release();
    });
  } // must not hang, must not commit after stopping
  releaser.join();
  EXPECT_LE(docs.committed.size(), 1u);
}

} // namespace
