//===- KernelCache.cpp - On-disk and in-process cache of kernels ----------===//

#include "runtime/cuda/KernelCache.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <cstring>

namespace modelc::cuda {

namespace {

constexpr char EntryMagic[8] = {'M', 'D', 'L', 'C', 'K', 'R', 'N', '1'};
constexpr size_t DigestOffset = 24;
constexpr size_t HeaderSize = DigestOffset + 32;

std::string encodeHeader(const std::array<uint8_t, 32> &digest, llvm::StringRef payload) {
  std::string header(HeaderSize, '\0');
  std::memcpy(header.data(), EntryMagic, sizeof(EntryMagic));
  llvm::support::endian::write64le(header.data() + 8, payload.size());
  llvm::support::endian::write64le(header.data() + 16, llvm::xxh3_64bits(payload));
  std::memcpy(header.data() + DigestOffset, digest.data(), digest.size());
  return header;
}

/// The payload of a well-formed entry for `digest`, else std::nullopt.
std::optional<std::string> decodeEntry(llvm::StringRef bytes,
                                       const std::array<uint8_t, 32> &digest) {
  if (bytes.size() < HeaderSize || std::memcmp(bytes.data(), EntryMagic, sizeof(EntryMagic)) != 0)
    return std::nullopt;
  uint64_t length = llvm::support::endian::read64le(bytes.data() + 8);
  uint64_t checksum = llvm::support::endian::read64le(bytes.data() + 16);
  if (std::memcmp(bytes.data() + DigestOffset, digest.data(), digest.size()) != 0)
    return std::nullopt;
  if (bytes.size() - HeaderSize != length)
    return std::nullopt;
  llvm::StringRef payload = bytes.drop_front(HeaderSize);
  if (llvm::xxh3_64bits(payload) != checksum)
    return std::nullopt;
  return payload.str();
}

} // namespace

CacheKey &CacheKey::add(llvm::StringRef field) {
  char length[8];
  llvm::support::endian::write64le(length, field.size());
  fields.append(length, sizeof(length));
  fields.append(field.data(), field.size());
  return *this;
}

CacheKey &CacheKey::add(int64_t field) { return add(llvm::StringRef(std::to_string(field))); }

std::array<uint8_t, 32> CacheKey::digest() const {
  return llvm::SHA256::hash(llvm::arrayRefFromStringRef(fields));
}

std::string CacheKey::hex() const {
  std::array<uint8_t, 32> bytes = digest();
  return llvm::toHex(bytes, /*LowerCase=*/true);
}

KernelCache::KernelCache(std::optional<std::string> directory) : dir(std::move(directory)) {}

std::optional<std::string> KernelCache::directoryFromEnvironment() {
  if (std::optional<std::string> configured = llvm::sys::Process::GetEnv("MODELC_CACHE_DIR")) {
    if (configured->empty())
      return std::nullopt;
    return configured;
  }
  llvm::SmallString<256> path;
  if (!llvm::sys::path::cache_directory(path))
    return std::nullopt;
  llvm::sys::path::append(path, "modelc");
  return std::string(path);
}

KernelCache &KernelCache::global() {
  static KernelCache cache(directoryFromEnvironment());
  return cache;
}

std::string KernelCache::entryPath(const CacheKey &key) const {
  if (!dir)
    return {};
  llvm::SmallString<256> path(*dir);
  llvm::sys::path::append(path, key.hex() + ".kernel");
  return std::string(path);
}

std::optional<std::string> KernelCache::lookupOnDisk(const CacheKey &key) {
  if (!dir)
    return std::nullopt;
  std::string path = entryPath(key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return std::nullopt;
  std::optional<std::string> payload = decodeEntry((*file)->getBuffer(), key.digest());
  if (!payload) {
    std::lock_guard<std::mutex> lock(mutex);
    ++counters.corruptEntries;
  }
  return payload;
}

llvm::Error KernelCache::storeOnDisk(const CacheKey &key, llvm::StringRef payload) {
  if (!dir)
    return llvm::Error::success();
  if (std::error_code ec = llvm::sys::fs::create_directories(*dir))
    return makeCudaError(CudaErrorKind::CacheFailure,
                         "cannot create kernel cache directory '" + *dir + "': " + ec.message());
  std::string path = entryPath(key);
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%%%%%", fd, temporary))
    return makeCudaError(CudaErrorKind::CacheFailure,
                         "cannot write to kernel cache '" + *dir + "': " + ec.message());
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << encodeHeader(key.digest(), payload) << payload;
    out.close();
    if (out.has_error()) {
      std::string reason = out.error().message();
      out.clear_error();
      llvm::sys::fs::remove(temporary);
      return makeCudaError(CudaErrorKind::CacheFailure,
                           "cannot write kernel cache entry '" + path + "': " + reason);
    }
  }
  // rename() replaces the old entry atomically: readers see either the old
  // file or the new one, never a mix.
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return makeCudaError(CudaErrorKind::CacheFailure,
                         "cannot install kernel cache entry '" + path + "': " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Expected<KernelCache::Payload>
KernelCache::getOrBuild(const CacheKey &key,
                        llvm::function_ref<llvm::Expected<std::string>()> build) {
  std::string hex = key.hex();
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = memo.find(hex);
    if (found != memo.end()) {
      ++counters.memoHits;
      return found->second;
    }
  }
  Payload payload;
  if (std::optional<std::string> onDisk = lookupOnDisk(key)) {
    payload = std::make_shared<const std::string>(std::move(*onDisk));
    std::lock_guard<std::mutex> lock(mutex);
    ++counters.diskHits;
  } else {
    llvm::Expected<std::string> built = build();
    if (!built)
      return built.takeError();
    payload = std::make_shared<const std::string>(std::move(*built));
    // A cache that cannot be written only costs time: keep the result.
    bool stored = !llvm::errorToBool(storeOnDisk(key, *payload));
    std::lock_guard<std::mutex> lock(mutex);
    ++counters.misses;
    counters.failedWrites += !stored;
  }
  std::lock_guard<std::mutex> lock(mutex);
  return memo.try_emplace(hex, payload).first->second;
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex);
  return counters;
}

void KernelCache::clearMemo() {
  std::lock_guard<std::mutex> lock(mutex);
  memo.clear();
}

} // namespace modelc::cuda
