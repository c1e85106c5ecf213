//===- MachineLoad.cpp - Whether timings taken now can be kept ------------===//

#include "runtime/MachineLoad.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

namespace modelc::runtime {

namespace {

/// The load average to assume (MODELC_ASSUMED_LOAD, assumeLoadAverage);
/// negative: read the machine's.
std::atomic<double> &assumedLoad() {
  static std::atomic<double> load{[] {
    double value = -1.0;
    if (std::optional<std::string> text = llvm::sys::Process::GetEnv("MODELC_ASSUMED_LOAD"))
      if (llvm::StringRef(*text).trim().getAsDouble(value) || value < 0)
        value = -1.0;
    return value;
  }()};
  return load;
}

} // namespace

void assumeLoadAverage(std::optional<double> load) { assumedLoad().store(load ? *load : -1.0); }

bool machineBusyForMeasuring() {
  double load = assumedLoad().load();
  if (load < 0 && getloadavg(&load, 1) != 1)
    return false;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return load > double(cores) + 1.0;
}

} // namespace modelc::runtime
