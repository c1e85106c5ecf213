//===- KernelCacheTest.cpp - The on-disk kernel cache ---------------------===//

#include "CudaTestSupport.h"

#include "runtime/cuda/KernelCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace modelc::cuda;
using namespace modelc::cuda::test;

namespace {

CacheKey keyFor(llvm::StringRef source) {
  CacheKey key;
  key.add("test").add(source).add("sm_90");
  return key;
}

/// A builder that counts its calls.
struct CountingBuilder {
  std::string output;
  int calls = 0;
  llvm::Expected<std::string> operator()() {
    ++calls;
    return output;
  }
};

std::string readFile(const std::string &path) {
  auto file = llvm::MemoryBuffer::getFile(path, false, false);
  return file ? (*file)->getBuffer().str() : std::string();
}

void writeFile(const std::string &path, llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  out << bytes;
}

TEST(CacheKey, FieldBoundariesAndEveryFieldMatter) {
  EXPECT_NE(CacheKey().add("ab").add("c").hex(), CacheKey().add("a").add("bc").hex());
  EXPECT_NE(keyFor("x").hex(), keyFor("y").hex());
  EXPECT_EQ(keyFor("x").hex(), keyFor("x").hex());
  EXPECT_EQ(keyFor("x").hex().size(), 64u);
}

TEST(KernelCache, MissThenDiskHitThenMemoHit) {
  TemporaryDirectory dir;
  CountingBuilder builder{"PTX bytes"};
  {
    KernelCache cache(dir.path());
    auto first = cache.getOrBuild(keyFor("k"), std::ref(builder));
    ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
    EXPECT_EQ(**first, "PTX bytes");
    auto second = cache.getOrBuild(keyFor("k"), std::ref(builder));
    ASSERT_TRUE(bool(second));
    EXPECT_EQ(builder.calls, 1);
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(cache.stats().memoHits, 1u);
    EXPECT_TRUE(llvm::sys::fs::exists(cache.entryPath(keyFor("k"))));
  }
  // A new process (a new cache object) finds it on disk.
  KernelCache cache(dir.path());
  auto again = cache.getOrBuild(keyFor("k"), std::ref(builder));
  ASSERT_TRUE(bool(again));
  EXPECT_EQ(**again, "PTX bytes");
  EXPECT_EQ(builder.calls, 1);
  EXPECT_EQ(cache.stats().diskHits, 1u);
  // A different key is a miss.
  auto other = cache.getOrBuild(keyFor("other"), std::ref(builder));
  ASSERT_TRUE(bool(other));
  EXPECT_EQ(builder.calls, 2);
}

TEST(KernelCache, CorruptEntryIsDetectedAndRebuilt) {
  TemporaryDirectory dir;
  CountingBuilder builder{std::string(1000, 'k')};
  KernelCache writer(dir.path());
  ASSERT_TRUE(bool(writer.getOrBuild(keyFor("k"), std::ref(builder))));
  std::string path = writer.entryPath(keyFor("k"));
  std::string bytes = readFile(path);
  bytes[bytes.size() - 10] ^= 0x40; // one flipped bit in the payload
  writeFile(path, bytes);

  KernelCache reader(dir.path());
  EXPECT_FALSE(reader.lookupOnDisk(keyFor("k")).has_value());
  auto rebuilt = reader.getOrBuild(keyFor("k"), std::ref(builder));
  ASSERT_TRUE(bool(rebuilt));
  EXPECT_EQ(**rebuilt, std::string(1000, 'k'));
  EXPECT_EQ(builder.calls, 2);
  EXPECT_GE(reader.stats().corruptEntries, 1u);
  // The rebuilt entry replaced the corrupt one.
  KernelCache third(dir.path());
  EXPECT_EQ(third.lookupOnDisk(keyFor("k")), std::string(1000, 'k'));
}

TEST(KernelCache, TruncatedOrForeignEntriesAreMisses) {
  TemporaryDirectory dir;
  KernelCache cache(dir.path());
  ASSERT_OK(cache.storeOnDisk(keyFor("k"), "payload of some length"));
  std::string path = cache.entryPath(keyFor("k"));
  std::string bytes = readFile(path);
  for (size_t keep : {size_t(0), size_t(5), size_t(40), bytes.size() - 1}) {
    writeFile(path, llvm::StringRef(bytes).take_front(keep));
    EXPECT_FALSE(cache.lookupOnDisk(keyFor("k")).has_value()) << "kept " << keep << " bytes";
  }
  // Another key's valid entry under this key's name is rejected too.
  ASSERT_OK(cache.storeOnDisk(keyFor("other"), "payload of some length"));
  writeFile(path, readFile(cache.entryPath(keyFor("other"))));
  EXPECT_FALSE(cache.lookupOnDisk(keyFor("k")).has_value());
}

TEST(KernelCache, FailedBuildsAreNotCached) {
  TemporaryDirectory dir;
  KernelCache cache(dir.path());
  int calls = 0;
  auto failing = [&]() -> llvm::Expected<std::string> {
    ++calls;
    return makeCudaError(CudaErrorKind::NvrtcCompileFailed, "no");
  };
  EXPECT_EQ(failureOf(cache.getOrBuild(keyFor("k"), failing).takeError()).kind,
            CudaErrorKind::NvrtcCompileFailed);
  EXPECT_EQ(failureOf(cache.getOrBuild(keyFor("k"), failing).takeError()).kind,
            CudaErrorKind::NvrtcCompileFailed);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(llvm::sys::fs::exists(cache.entryPath(keyFor("k"))));
}

TEST(KernelCache, TwoThreadsWritingTheSameKeyLeaveAValidEntry) {
  TemporaryDirectory dir;
  std::string payload(64 * 1024, 'x');
  std::atomic<int> bad{0};
  auto hammer = [&] {
    KernelCache cache(dir.path());
    for (int i = 0; i < 100; ++i) {
      if (llvm::Error error = cache.storeOnDisk(keyFor("shared"), payload)) {
        llvm::consumeError(std::move(error));
        ++bad;
      }
      std::optional<std::string> read = cache.lookupOnDisk(keyFor("shared"));
      if (!read || *read != payload)
        ++bad;
    }
  };
  std::thread first(hammer), second(hammer);
  first.join();
  second.join();
  EXPECT_EQ(bad, 0);
  // No temporary files are left behind.
  int files = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir.path(), ec), end; it != end && !ec;
       it.increment(ec))
    ++files;
  EXPECT_EQ(files, 1);
}

TEST(KernelCache, TwoProcessesWritingTheSameKeyNeverSeeAPartialEntry) {
  TemporaryDirectory dir;
  std::string payload(256 * 1024, 'p');
  pid_t children[2];
  for (pid_t &child : children) {
    child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      KernelCache cache(dir.path());
      int bad = 0;
      for (int i = 0; i < 60; ++i) {
        bad += llvm::errorToBool(cache.storeOnDisk(keyFor("shared"), payload));
        std::optional<std::string> read = cache.lookupOnDisk(keyFor("shared"));
        bad += !read || *read != payload;
      }
      _exit(bad == 0 ? 0 : 1);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer saw a bad entry";
  }
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.lookupOnDisk(keyFor("shared")), payload);
}

TEST(KernelCache, EmptyDirectoryVariableTurnsTheDiskOff) {
  {
    ScopedEnvironment off("MODELC_CACHE_DIR", std::string());
    EXPECT_FALSE(KernelCache::directoryFromEnvironment().has_value());
  }
  {
    ScopedEnvironment set("MODELC_CACHE_DIR", std::string("/some/where"));
    EXPECT_EQ(KernelCache::directoryFromEnvironment(), std::string("/some/where"));
  }
  {
    ScopedEnvironment unset("MODELC_CACHE_DIR", std::nullopt);
    ScopedEnvironment xdg("XDG_CACHE_HOME", std::string("/xdg/cache"));
    EXPECT_EQ(KernelCache::directoryFromEnvironment(), std::string("/xdg/cache/modelc"));
  }
  KernelCache off(std::nullopt);
  CountingBuilder builder{"bytes"};
  ASSERT_TRUE(bool(off.getOrBuild(keyFor("k"), std::ref(builder))));
  ASSERT_TRUE(bool(off.getOrBuild(keyFor("k"), std::ref(builder))));
  EXPECT_EQ(builder.calls, 1); // the in-process memo still works
  EXPECT_TRUE(off.entryPath(keyFor("k")).empty());
  off.clearMemo();
  ASSERT_TRUE(bool(off.getOrBuild(keyFor("k"), std::ref(builder))));
  EXPECT_EQ(builder.calls, 2); // and nothing was written to disk
}

TEST(KernelCache, UnwritableDirectoryOnlyCostsSpeed) {
  KernelCache cache(std::string("/proc/modelc-cannot-write-here"));
  CountingBuilder builder{"bytes"};
  auto built = cache.getOrBuild(keyFor("k"), std::ref(builder));
  ASSERT_TRUE(bool(built)) << llvm::toString(built.takeError());
  EXPECT_EQ(**built, "bytes");
  EXPECT_EQ(cache.stats().failedWrites, 1u);
}

} // namespace
