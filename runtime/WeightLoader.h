//===- WeightLoader.h - Bind a model's declared state to a file -*- C++ -*-===//
//
// A model instance declares its state: parameters and buffers, each with a
// PyTorch-style name ("fc1.weight"), a dtype, a concrete shape and a
// device. Binding checks a safetensors file against that declaration and
// either binds every entry or fails with every problem listed (missing key,
// unexpected key, dtype or shape mismatch, and whatever the file itself got
// wrong); nothing is half-loaded.
//
// The runtime has no device allocator yet, so each bound tensor is a cpu
// tensor over the file's bytes (zero-copy); the declared device, kept with
// it, says where the executor must place it.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_WEIGHTLOADER_H
#define MODELC_RUNTIME_WEIGHTLOADER_H

#include "runtime/SafeTensors.h"
#include "runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::runtime {

enum class StateKind : uint8_t { Param, Buffer };
/// "param" or "buffer".
llvm::StringRef stateKindName(StateKind kind);

/// One declared piece of model state.
struct StateEntry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  Device device;
  StateKind kind = StateKind::Param;
  /// When set, the file may leave the entry out: it is then a new tensor
  /// with every element this value (a buffer declared `= zeros(...)`, such as
  /// BatchNorm's num_batches_tracked, which PyTorch also fills in).
  std::optional<double> fillWhenMissing;

  /// `f32[256, 784] @ cpu`.
  std::string typeString() const { return formatTensorType(dtype, shape, device); }
};

/// A declared entry and the tensor bound to it.
struct BoundState {
  StateEntry declared;
  Tensor tensor;
};

/// The outcome of a successful bind: every declared entry, in declaration
/// order, with its tensor.
class LoadedWeights {
public:
  llvm::ArrayRef<BoundState> bindings() const { return Bindings; }
  size_t size() const { return Bindings.size(); }
  /// The binding of `name`, or nullptr.
  const BoundState *find(llvm::StringRef name) const;

private:
  friend llvm::Expected<LoadedWeights> bindWeights(llvm::ArrayRef<StateEntry>,
                                                   const SafeTensorsFile &);
  std::vector<BoundState> Bindings;
  llvm::StringMap<size_t> IndexByName;
};

/// Binds every entry of `declared` to the tensor of the same name in `file`
/// (an entry missing from the file that has fillWhenMissing gets a filled
/// tensor of its own).
/// On failure the error lists every problem, one per line, each naming the
/// file and the entry, e.g.
///   weights.safetensors: fc1.weight: expected f32[256, 784], found f32[784, 256]
llvm::Expected<LoadedWeights> bindWeights(llvm::ArrayRef<StateEntry> declared,
                                          const SafeTensorsFile &file);
/// Opens the safetensors file at `path` and binds it. Problems with the file
/// itself (truncated or overlapping data, bad header) are reported as
/// SafeTensorsFile::open reports them.
llvm::Expected<LoadedWeights> loadWeights(llvm::ArrayRef<StateEntry> declared,
                                          llvm::StringRef path);

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_WEIGHTLOADER_H
