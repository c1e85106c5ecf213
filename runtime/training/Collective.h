//===- Collective.h - The ranks of a data-parallel run ----------*- C++ -*-===//
//
// A Collective is what the ranks of one training run share: who they are,
// and the broadcasts and sums that keep their replicas equal. One process
// alone is the trivial Collective. Under `mpirun` it is Open MPI, reached
// through a small module (`libmodelc_mpi.so`, built from mpi/MpiModule.cpp
// against Debian's Open MPI) that is opened only when the process was
// started by mpirun, so no other modelc command loads MPI.
//
// All MPI calls run on one communication thread (MPI_THREAD_SERIALIZED):
// the training loop posts all-reduces of gradient buckets as the backward
// pass produces them and waits for each only before the optimizer reads it,
// so communication overlaps the rest of the backward pass. A watchdog
// bounds every collective: one that has not completed within the timeout
// (a rank that hangs or died without mpirun noticing) ends this process
// with an error naming the operation, and mpirun then stops the others.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_TRAINING_COLLECTIVE_H
#define MODELC_RUNTIME_TRAINING_COLLECTIVE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace modelc::runtime::training {

/// Element types a collective sums.
enum class ReduceType { F32, F64 };

class Collective {
public:
  virtual ~Collective();

  int rank() const { return Rank; }
  int size() const { return Size; }
  /// This rank's index among the ranks of its machine, and their number
  /// (the rank's GPU is cuda:(localRank mod the machine's GPU count)).
  int localRank() const { return LocalRank; }
  int localSize() const { return LocalSize; }
  /// "Open MPI 4.1.4" or "single process".
  virtual std::string description() const = 0;
  /// Whether device buffers may be passed to the collectives directly
  /// (MPIX_Query_cuda_support); otherwise they go through host memory.
  virtual bool cudaAware() const { return false; }

  /// Copies `bytes` bytes at `data` from rank `root` to every rank.
  virtual llvm::Error broadcast(void *data, size_t bytes, int root) = 0;

  /// A posted all-reduce (sum, in place); complete it with wait().
  using Ticket = uint64_t;
  /// Posts the sum over the ranks of `count` elements at `data`, in place.
  /// The buffer must stay untouched until wait(ticket) returns. Tickets
  /// complete in the order they were posted.
  virtual Ticket postAllReduce(void *data, size_t count, ReduceType type, llvm::StringRef what) = 0;
  /// Waits for `ticket` (and every earlier one); the first failure of any
  /// of them is returned.
  virtual llvm::Error wait(Ticket ticket) = 0;
  /// postAllReduce + wait.
  llvm::Error allReduce(void *data, size_t count, ReduceType type, llvm::StringRef what);

  /// Time spent inside all-reduces since the last call (for the progress
  /// log's overlap figure), and reset.
  virtual std::chrono::duration<double> takeReduceTime() = 0;

  /// Ends every rank of the run (MPI_Abort); a single process exits.
  [[noreturn]] virtual void abort(int code) = 0;

protected:
  int Rank = 0, Size = 1, LocalRank = 0, LocalSize = 1;
};

/// One process: collectives are identities.
std::unique_ptr<Collective> makeSingleProcess();

/// True when this process was started by mpirun (Open MPI's or a PMIx
/// launcher's environment says so).
bool startedByMpirun();

/// Initialises Open MPI through libmodelc_mpi.so found in `moduleDir`
/// (empty: beside the running executable's lib folder). `timeout` bounds
/// each collective (0: none).
llvm::Expected<std::unique_ptr<Collective>> openMpi(llvm::StringRef moduleDir,
                                                    std::chrono::seconds timeout);

} // namespace modelc::runtime::training

#endif // MODELC_RUNTIME_TRAINING_COLLECTIVE_H
