//===- MachineLoad.h - Whether timings taken now can be kept ---*- C++ -*-===//
//
// The measured kernel choices (the cpu GEMM library, jit/GemmChoice.h; the
// GPU GEMM candidates, cudaexec/CudaGemm.h) are saved on disk for later
// processes, but only when they were measured on a machine quiet enough for
// the timings to mean something: on a busy one a descheduled thread shows
// up as a slow kernel (on the cpu) or as gaps between launches (on a GPU,
// where a small product's time is the host's enqueueing).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_MACHINELOAD_H
#define MODELC_RUNTIME_MACHINELOAD_H

#include <optional>

namespace modelc::runtime {

/// Whether timings taken now are too noisy to keep: the 1-minute load
/// average exceeds the hardware threads by more than one (other processes
/// wait for a core). A choice measured then serves this process but is not
/// saved, so a later process on a quieter machine measures again.
/// MODELC_ASSUMED_LOAD (a number) stands in for the machine's load.
bool machineBusyForMeasuring();
/// For tests: the load average to assume instead of the machine's
/// (std::nullopt: the machine's again, even over MODELC_ASSUMED_LOAD).
void assumeLoadAverage(std::optional<double> load);

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_MACHINELOAD_H
