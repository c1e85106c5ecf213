//===- Checkpoint.h - Training checkpoints, written atomically ---*- C++ -*-===//
//
// A checkpoint is one safetensors file: every parameter and buffer under its
// PyTorch state_dict name, the optimizer state (docs/training.md gives the
// names), and, in `__metadata__`, the step, the epoch, the schedule and RNG
// state and what model it belongs to. Files are `ckpt-<step>.safetensors` in
// a folder.
//
// A checkpoint is written to a temporary name in the same folder, flushed to
// disk and renamed over its final name (rename is atomic on POSIX), then the
// folder itself is flushed: a crash at any moment leaves the previous
// checkpoints intact and never a partial file under a checkpoint's name.
// Temporary files a crash left behind are ignored and cleaned up.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_TRAINING_CHECKPOINT_H
#define MODELC_RUNTIME_TRAINING_CHECKPOINT_H

#include "runtime/SafeTensors.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace modelc::runtime::training {

/// `<folder>/ckpt-<step, 9 digits>.safetensors`.
std::string checkpointPath(llvm::StringRef folder, int64_t step);

/// Writes `tensors` and `metadata` as the checkpoint of `step` in `folder`
/// (created if missing), atomically, then deletes all but the newest `keep`
/// checkpoints (keep <= 0 keeps all). Returns the path written.
llvm::Expected<std::string> writeCheckpoint(llvm::StringRef folder, int64_t step,
                                            llvm::ArrayRef<NamedTensor> tensors,
                                            const std::map<std::string, std::string> &metadata,
                                            int keep);

/// The checkpoints in `folder`, oldest first (by step).
std::vector<std::string> listCheckpoints(llvm::StringRef folder);

/// The newest checkpoint in `folder`, if any.
std::optional<std::string> latestCheckpoint(llvm::StringRef folder);

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync,
/// rename, fsync of the folder.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef bytes);

} // namespace modelc::runtime::training

#endif // MODELC_RUNTIME_TRAINING_CHECKPOINT_H
