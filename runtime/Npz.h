//===- Npz.h - Read NumPy .npz archives -------------------------*- C++ -*-===//
//
// An .npz is a zip archive of .npy members: `np.savez` stores them,
// `np.savez_compressed` deflates them, and NumPy writes zip64 size fields.
// A stored member is read in place from the memory-mapped archive (a large
// training set costs no copy); a deflated one is inflated once into an
// owning tensor. Every malformed archive is an llvm::Error naming the file,
// the member and the problem.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_NPZ_H
#define MODELC_RUNTIME_NPZ_H

#include "runtime/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
}

namespace modelc::runtime {

/// One array of an archive: the member's name without `.npy`, and its data.
struct NpzArray {
  std::string name;
  Tensor tensor;
};

/// Every array of the .npz at `path`, in the archive's order.
llvm::Expected<std::vector<NpzArray>> readNpz(llvm::StringRef path);
/// The same for an archive in memory (its identifier names it in errors);
/// stored members borrow `archive`'s bytes and keep it alive.
llvm::Expected<std::vector<NpzArray>> parseNpz(std::shared_ptr<const llvm::MemoryBuffer> archive);

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_NPZ_H
