//===- KernelCache.h - On-disk and in-process cache of kernels -*- C++ -*-===//
//
// Compiled kernels (PTX, CUBIN, emulator shared objects) cached by a key that
// hashes everything that determines the output: source, target architecture,
// compiler version and options.
//
// Disk: one file per key, `<dir>/<sha256>.kernel`, written to a unique
// temporary name and renamed into place, so concurrent processes never see a
// half-written entry. Each file starts with a header (magic, payload length,
// xxh3 checksum of the payload, the full key digest); an entry that fails any
// check (truncated, corrupted, from another key) counts as a miss and is
// rebuilt and replaced. A disk that cannot be written only costs speed.
//
// Directory: $MODELC_CACHE_DIR; the empty string turns the disk cache off;
// unset means $XDG_CACHE_HOME/modelc or ~/.cache/modelc. An in-process memo
// sits in front of the disk in either case.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_CUDA_KERNELCACHE_H
#define MODELC_RUNTIME_CUDA_KERNELCACHE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SHA256.h"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace modelc::cuda {

/// Accumulates the fields that identify one compiled kernel. Each field is
/// length-prefixed, so ("ab", "c") and ("a", "bc") give different keys.
class CacheKey {
public:
  CacheKey &add(llvm::StringRef field);
  CacheKey &add(int64_t field);
  /// The SHA-256 digest of all fields; the builder can no longer be added to.
  std::array<uint8_t, 32> digest() const;
  /// digest() as 64 lower-case hex digits.
  std::string hex() const;

private:
  std::string fields;
};

/// Counters for tests and diagnostics.
struct KernelCacheStats {
  unsigned memoHits = 0;
  unsigned diskHits = 0;
  unsigned misses = 0;
  unsigned corruptEntries = 0; ///< Entries found on disk but rejected.
  unsigned failedWrites = 0;
};

class KernelCache {
public:
  using Payload = std::shared_ptr<const std::string>;

  /// `directory` std::nullopt turns the disk cache off (the memo stays on).
  explicit KernelCache(std::optional<std::string> directory);

  /// The directory from the environment (see the file comment).
  static std::optional<std::string> directoryFromEnvironment();
  /// The process-wide cache, configured from the environment on first use.
  static KernelCache &global();

  /// Returns the cached payload for `key`, or runs `build`, stores its result
  /// and returns it. A failed build is returned as is and not cached.
  llvm::Expected<Payload> getOrBuild(const CacheKey &key,
                                     llvm::function_ref<llvm::Expected<std::string>()> build);

  /// Disk-only lookup: the payload of a valid entry, else std::nullopt
  /// (missing, or rejected as corrupt).
  std::optional<std::string> lookupOnDisk(const CacheKey &key);
  /// Atomically writes the entry for `key`.
  llvm::Error storeOnDisk(const CacheKey &key, llvm::StringRef payload);

  /// The file holding `key`'s entry; empty when the disk cache is off.
  std::string entryPath(const CacheKey &key) const;
  const std::optional<std::string> &directory() const { return dir; }
  KernelCacheStats stats() const;
  /// Forgets the in-process memo (the disk is untouched).
  void clearMemo();

private:
  std::optional<std::string> dir;
  mutable std::mutex mutex;
  llvm::StringMap<Payload> memo;
  KernelCacheStats counters;
};

} // namespace modelc::cuda

#endif // MODELC_RUNTIME_CUDA_KERNELCACHE_H
