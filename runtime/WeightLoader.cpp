//===- WeightLoader.cpp - Bind a model's declared state to a file ---------===//
#include "runtime/WeightLoader.h"
#include "runtime/ProblemList.h"

#include "llvm/ADT/StringSet.h"

using namespace llvm;

namespace modelc::runtime {

StringRef stateKindName(StateKind kind) { return kind == StateKind::Param ? "param" : "buffer"; }

const BoundState *LoadedWeights::find(StringRef name) const {
  auto it = IndexByName.find(name);
  return it == IndexByName.end() ? nullptr : &Bindings[it->second];
}

/// A new tensor of `entry`'s dtype and shape with every element `value`.
static Tensor filledTensor(const StateEntry &entry, double value) {
  Tensor t = Tensor::zeros(entry.dtype, entry.shape);
  if (value == 0)
    return t;
  llvm::SmallVector<int64_t, 4> index(entry.shape.size(), 0);
  for (int64_t n = t.numel(); n > 0; --n) {
    t.setFromDouble(index, value);
    for (size_t d = index.size(); d-- > 0;) { // the next index, row-major
      if (++index[d] < entry.shape[d])
        break;
      index[d] = 0;
    }
  }
  return t;
}

Expected<LoadedWeights> bindWeights(ArrayRef<StateEntry> declared, const SafeTensorsFile &file) {
  ProblemList problems(file.name());
  LoadedWeights loaded;
  StringSet<> declaredNames;
  for (const StateEntry &entry : declared) {
    if (!declaredNames.insert(entry.name).second) {
      problems.add(entry.name + ": declared more than once");
      continue;
    }
    if (!checkedNumElements(entry.shape)) {
      problems.add(entry.name + ": declared type " + entry.typeString() +
                   " has a negative dimension or too many elements");
      continue;
    }
    const SafeTensorsEntry *found = file.find(entry.name);
    if (!found && entry.fillWhenMissing) {
      loaded.IndexByName[entry.name] = loaded.Bindings.size();
      loaded.Bindings.push_back({entry, filledTensor(entry, *entry.fillWhenMissing)});
      continue;
    }
    if (!found) {
      problems.add(entry.name + ": missing from the file (declared " + stateKindName(entry.kind) +
                   " " + entry.typeString() + ")");
      continue;
    }
    const Tensor &tensor = found->tensor;
    if (tensor.dtype() != entry.dtype || tensor.shape() != ArrayRef<int64_t>(entry.shape)) {
      problems.add(entry.name + ": expected " + formatTensorType(entry.dtype, entry.shape) +
                   ", found " + formatTensorType(tensor.dtype(), tensor.shape()));
      continue;
    }
    loaded.IndexByName[entry.name] = loaded.Bindings.size();
    loaded.Bindings.push_back({entry, tensor});
  }
  for (const SafeTensorsEntry &entry : file.entries())
    if (!declaredNames.contains(entry.name))
      problems.add(entry.name + ": unexpected key; the model declares no such state (found " +
                   formatTensorType(entry.tensor.dtype(), entry.tensor.shape()) + ")");
  if (!problems.empty())
    return problems.take();
  return loaded;
}

Expected<LoadedWeights> loadWeights(ArrayRef<StateEntry> declared, StringRef path) {
  Expected<SafeTensorsFile> file = SafeTensorsFile::open(path);
  if (!file)
    return file.takeError();
  return bindWeights(declared, *file);
}

} // namespace modelc::runtime
