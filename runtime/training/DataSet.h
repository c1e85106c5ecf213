//===- DataSet.h - Training data: named arrays, epochs, batches --*- C++ -*-===//
//
// A data set is a set of named arrays whose first dim counts the samples
// (`x: f32[60000, 784]`, `y: i64[60000]`), read from an .npz, an .npy or a
// folder of them, memory-mapped where the format allows. Each array feeds
// the train step's parameter of its name (or the name a rename gives it).
//
// The order of an epoch is a permutation drawn from (seed, epoch) alone, with
// a generator defined here (splitmix64, Fisher-Yates), so it is the same on
// every machine, thread count and rank, and a run resumed at step N sees the
// batches an unbroken run sees. A step of a data-parallel run takes the
// next `world * batch` samples of the epoch's order and rank r takes the r-th
// slice of them: N ranks of batch B/N see exactly the samples one rank of
// batch B sees.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_TRAINING_DATASET_H
#define MODELC_RUNTIME_TRAINING_DATASET_H

#include "runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace modelc::runtime::training {

/// One array of a data set; dim 0 counts the samples.
struct DataField {
  std::string name;
  Tensor samples;
};

class DataSet {
public:
  /// Opens `path` (an .npz, an .npy named after its field, or a folder of
  /// .npy/.npz files) and keeps the arrays `wanted` names, in that order.
  /// `renames` maps a wanted name to the array that feeds it (`x` ->
  /// `images`). Errors name every wanted array that is missing (listing
  /// what the data has) and every array whose sample count differs.
  static llvm::Expected<DataSet> open(llvm::StringRef path, llvm::ArrayRef<std::string> wanted,
                                      const std::map<std::string, std::string> &renames = {});
  /// A data set over arrays already in memory (tests, the embedding API).
  static llvm::Expected<DataSet> fromFields(std::vector<DataField> fields,
                                            llvm::StringRef sourceName);

  int64_t size() const { return Size; }
  llvm::ArrayRef<DataField> fields() const { return Fields; }
  llvm::StringRef sourceName() const { return Source; }

  /// Rows `indices` of every field, copied into one contiguous tensor per
  /// field (dim 0 is indices.size()).
  std::vector<Tensor> gather(llvm::ArrayRef<int64_t> indices) const;

private:
  std::vector<DataField> Fields;
  int64_t Size = 0;
  std::string Source;
};

/// How the samples of each epoch are ordered and batched.
struct BatchPlan {
  int64_t samples = 0;
  int64_t batchSize = 1; ///< per rank
  bool shuffle = true;
  uint64_t seed = 0;
  /// Drop an epoch's last step when it has fewer than world * batchSize
  /// samples (PyTorch's DataLoader(drop_last=True)); otherwise it is a
  /// smaller step, split over the ranks as evenly as possible.
  bool dropLast = false;
  int rank = 0;
  int worldSize = 1;
};

/// The samples one rank runs in one step.
struct Shard {
  std::vector<int64_t> indices;
  /// Samples of the step over all ranks: a rank's gradient counts
  /// indices.size() / stepSamples of the mean.
  int64_t stepSamples = 0;
};

class EpochOrder {
public:
  explicit EpochOrder(BatchPlan plan) : Plan(plan) {}

  /// Steps in one epoch. The last, smaller step is dropped when dropLast is
  /// set or when it has fewer samples than ranks (no rank runs empty).
  int64_t stepsPerEpoch() const;
  /// This rank's samples of step `step` (0-based within the epoch) of epoch
  /// `epoch`.
  Shard shard(int64_t epoch, int64_t step) const;
  /// The order of the samples in epoch `epoch`: 0..n-1 permuted by
  /// (seed, epoch), or in order without shuffling.
  std::vector<int64_t> permutation(int64_t epoch) const;
  const BatchPlan &plan() const { return Plan; }

private:
  BatchPlan Plan;
  mutable int64_t CachedEpoch = -1;
  mutable std::vector<int64_t> CachedOrder;
};

/// splitmix64: the generator of the epoch order (and of nothing else), so
/// orders never depend on a standard library's distributions.
uint64_t splitMix64(uint64_t &state);

} // namespace modelc::runtime::training

#endif // MODELC_RUNTIME_TRAINING_DATASET_H
