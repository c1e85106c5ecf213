//===- DataSet.cpp - Training data: named arrays, epochs, batches ---------===//
#include "runtime/training/DataSet.h"

#include "runtime/Npy.h"
#include "runtime/Npz.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstring>

using namespace llvm;

namespace modelc::runtime::training {
namespace {

/// Every array in `path`: an .npz's members, an .npy under its file's stem,
/// or those of each .npy/.npz in a folder (sorted by file name).
Error collectArrays(StringRef path, std::vector<DataField> &arrays) {
  if (sys::fs::is_directory(path)) {
    std::vector<std::string> files;
    std::error_code ec;
    for (sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec)) {
      StringRef ext = sys::path::extension(it->path());
      if (ext == ".npy" || ext == ".npz")
        files.push_back(it->path());
    }
    if (ec)
      return createFileError(path, ec);
    llvm::sort(files);
    if (files.empty())
      return createStringError(path + ": the folder holds no .npy or .npz file");
    for (const std::string &file : files)
      if (Error err = collectArrays(file, arrays))
        return err;
    return Error::success();
  }
  if (sys::path::extension(path) == ".npz") {
    Expected<std::vector<NpzArray>> members = readNpz(path);
    if (!members)
      return members.takeError();
    for (NpzArray &member : *members)
      arrays.push_back({std::move(member.name), std::move(member.tensor)});
    return Error::success();
  }
  if (sys::path::extension(path) == ".npy") {
    Expected<Tensor> tensor = mapNpy(path);
    if (!tensor)
      return tensor.takeError();
    arrays.push_back({sys::path::stem(path).str(), std::move(*tensor)});
    return Error::success();
  }
  if (!sys::fs::exists(path))
    return createFileError(path, std::make_error_code(std::errc::no_such_file_or_directory));
  return createStringError(path + ": not an .npy or .npz file, nor a folder of them");
}

} // namespace

Expected<DataSet> DataSet::open(StringRef path, ArrayRef<std::string> wanted,
                                const std::map<std::string, std::string> &renames) {
  std::vector<DataField> arrays;
  if (Error err = collectArrays(path, arrays))
    return err;
  std::vector<DataField> fields;
  std::vector<std::string> missing;
  for (const std::string &name : wanted) {
    auto renamed = renames.find(name);
    StringRef source = renamed == renames.end() ? StringRef(name) : StringRef(renamed->second);
    auto found = llvm::find_if(arrays, [&](const DataField &f) { return f.name == source; });
    if (found == arrays.end()) {
      missing.push_back(source == name ? "'" + name + "'"
                                       : "'" + source.str() + "' (for '" + name + "')");
      continue;
    }
    fields.push_back({name, found->samples});
  }
  if (!missing.empty()) {
    std::vector<std::string> available;
    for (const DataField &array : arrays)
      available.push_back("'" + array.name + "' " +
                          formatTensorType(array.samples.dtype(), array.samples.shape()));
    return createStringError(formatv("{0}: no array {1}; the data has {2}", path,
                                     join(missing, ", "),
                                     available.empty() ? "none" : join(available, ", "))
                                 .str());
  }
  return fromFields(std::move(fields), path);
}

Expected<DataSet> DataSet::fromFields(std::vector<DataField> fields, StringRef sourceName) {
  if (fields.empty())
    return createStringError(sourceName + ": no arrays to train on");
  std::vector<std::string> problems;
  for (const DataField &field : fields)
    if (field.samples.rank() == 0)
      problems.push_back("'" + field.name + "' is a scalar; dim 0 must count the samples");
  if (!problems.empty())
    return createStringError(sourceName + ": " + join(problems, "; "));
  int64_t size = fields.front().samples.shape()[0];
  for (const DataField &field : fields)
    if (field.samples.shape()[0] != size)
      problems.push_back(formatv("'{0}' has {1} samples", field.name, field.samples.shape()[0]));
  if (!problems.empty())
    return createStringError(formatv("{0}: the arrays count different samples: '{1}' has {2}, {3}",
                                     sourceName, fields.front().name, size, join(problems, ", "))
                                 .str());
  DataSet data;
  data.Fields = std::move(fields);
  data.Size = size;
  data.Source = sourceName.str();
  return data;
}

std::vector<Tensor> DataSet::gather(ArrayRef<int64_t> indices) const {
  std::vector<Tensor> batch;
  for (const DataField &field : Fields) {
    Tensor samples = field.samples.isContiguous() ? field.samples : field.samples.contiguous();
    SmallVector<int64_t> shape(samples.shape());
    shape[0] = int64_t(indices.size());
    Tensor out = Tensor::uninitialized(samples.dtype(), shape);
    size_t rowBytes = shape[0] ? out.nbytes() / size_t(shape[0]) : 0;
    const auto *from = static_cast<const char *>(samples.data());
    auto *to = static_cast<char *>(out.mutableData());
    for (size_t i = 0; i < indices.size(); ++i)
      std::memcpy(to + i * rowBytes, from + size_t(indices[i]) * rowBytes, rowBytes);
    batch.push_back(std::move(out));
  }
  return batch;
}

uint64_t splitMix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int64_t EpochOrder::stepsPerEpoch() const {
  int64_t perStep = Plan.batchSize * Plan.worldSize;
  int64_t full = Plan.samples / perStep, rest = Plan.samples % perStep;
  bool partial = !Plan.dropLast && rest >= Plan.worldSize;
  return full + (partial ? 1 : 0);
}

std::vector<int64_t> EpochOrder::permutation(int64_t epoch) const {
  std::vector<int64_t> order(size_t(Plan.samples));
  for (int64_t i = 0; i < Plan.samples; ++i)
    order[size_t(i)] = i;
  if (!Plan.shuffle)
    return order;
  uint64_t state = Plan.seed ^ (uint64_t(epoch) * 0xD1B54A32D192ED03ull);
  // Fisher-Yates from the back; the modulo bias (< n / 2^64) is immaterial.
  for (int64_t i = Plan.samples - 1; i > 0; --i) {
    int64_t j = int64_t(splitMix64(state) % uint64_t(i + 1));
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
  return order;
}

Shard EpochOrder::shard(int64_t epoch, int64_t step) const {
  if (epoch != CachedEpoch) {
    CachedOrder = permutation(epoch);
    CachedEpoch = epoch;
  }
  int64_t perStep = Plan.batchSize * Plan.worldSize;
  int64_t begin = step * perStep;
  int64_t stepSamples = std::min(perStep, Plan.samples - begin);
  // Rank r takes [r * n / W, (r + 1) * n / W): equal slices for a full step,
  // slices differing by at most one for the last.
  int64_t lo = begin + Plan.rank * stepSamples / Plan.worldSize;
  int64_t hi = begin + (Plan.rank + 1) * stepSamples / Plan.worldSize;
  Shard shard;
  shard.indices.assign(CachedOrder.begin() + lo, CachedOrder.begin() + hi);
  shard.stepSamples = stepSamples;
  return shard;
}

} // namespace modelc::runtime::training
