//===- Checkpoint.cpp - Training checkpoints, written atomically ----------===//
#include "runtime/training/Checkpoint.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

using namespace llvm;

namespace modelc::runtime::training {
namespace {

constexpr StringLiteral Prefix("ckpt-");
constexpr StringLiteral Suffix(".safetensors");

/// The step of a checkpoint's file name, or nothing for other files
/// (temporary ones included).
std::optional<int64_t> stepOf(StringRef fileName) {
  if (!fileName.consume_front(Prefix) || !fileName.consume_back(Suffix))
    return std::nullopt;
  int64_t step;
  if (fileName.getAsInteger(10, step) || step < 0)
    return std::nullopt;
  return step;
}

Error syncPath(StringRef path, bool directory) {
  int fd = ::open(path.str().c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0)
    return createFileError(path, std::error_code(errno, std::generic_category()));
  int status = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (status != 0)
    return createFileError(path, std::error_code(saved, std::generic_category()));
  return Error::success();
}

} // namespace

std::string checkpointPath(StringRef folder, int64_t step) {
  SmallString<256> path(folder);
  sys::path::append(path, formatv("{0}{1:d9}{2}", Prefix, step, Suffix).str());
  return path.str().str();
}

Error writeFileAtomically(StringRef path, StringRef bytes) {
  SmallString<256> folder(path);
  sys::path::remove_filename(folder);
  if (folder.empty())
    folder = ".";
  SmallString<256> temporary(path);
  temporary += formatv(".tmp.{0}", ::getpid()).str();
  {
    std::error_code ec;
    raw_fd_ostream out(temporary, ec, sys::fs::OF_None);
    if (ec)
      return createFileError(temporary, ec);
    out << bytes;
    out.flush();
    if (out.has_error()) {
      std::error_code err = out.error();
      out.clear_error();
      sys::fs::remove(temporary);
      return createFileError(temporary, err);
    }
  }
  if (Error err = syncPath(temporary, /*directory=*/false)) {
    sys::fs::remove(temporary);
    return err;
  }
  if (std::error_code ec = sys::fs::rename(temporary, path)) {
    sys::fs::remove(temporary);
    return createFileError(path, ec);
  }
  return syncPath(folder, /*directory=*/true);
}

std::vector<std::string> listCheckpoints(StringRef folder) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (sys::fs::directory_iterator it(folder, ec), end; it != end && !ec; it.increment(ec))
    if (std::optional<int64_t> step = stepOf(sys::path::filename(it->path())))
      found.emplace_back(*step, it->path());
  llvm::sort(found);
  std::vector<std::string> paths;
  for (auto &[step, path] : found)
    paths.push_back(std::move(path));
  return paths;
}

std::optional<std::string> latestCheckpoint(StringRef folder) {
  std::vector<std::string> all = listCheckpoints(folder);
  if (all.empty())
    return std::nullopt;
  return all.back();
}

Expected<std::string> writeCheckpoint(StringRef folder, int64_t step, ArrayRef<NamedTensor> tensors,
                                      const std::map<std::string, std::string> &metadata,
                                      int keep) {
  if (std::error_code ec = sys::fs::create_directories(folder))
    return createFileError(folder, ec);
  Expected<std::string> bytes = serializeSafeTensors(tensors, metadata);
  if (!bytes)
    return bytes.takeError();
  std::string path = checkpointPath(folder, step);
  if (Error err = writeFileAtomically(path, *bytes))
    return err;

  // Temporary files of a writer that crashed, then checkpoints past `keep`.
  std::error_code ec;
  for (sys::fs::directory_iterator it(folder, ec), end; it != end && !ec; it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    if (name.starts_with(Prefix) && name.contains(".tmp."))
      sys::fs::remove(it->path());
  }
  std::vector<std::string> all = listCheckpoints(folder);
  if (keep > 0 && all.size() > size_t(keep))
    for (size_t i = 0; i + size_t(keep) < all.size(); ++i)
      sys::fs::remove(all[i]);
  return path;
}

} // namespace modelc::runtime::training
