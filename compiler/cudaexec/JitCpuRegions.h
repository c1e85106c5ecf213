//===- JitCpuRegions.h - A plan's cpu module compiled by the JIT -*- C++ -*-===//
//
// The CpuRegionsProvider of `modelc run` and the API's JIT path: parses the
// plan's cpu module (MLIR text), lowers it with the cpu pipeline and
// JIT-compiles it. Kept apart from PlanExecutor so that running a plan from
// an artifact needs no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_CUDAEXEC_JITCPUREGIONS_H
#define MODELC_CUDAEXEC_JITCPUREGIONS_H

#include "cudaexec/PlanExecutor.h"

namespace modelc::cudaexec {

CpuRegionsProvider jitCpuRegions(unsigned optLevel = 3, bool useBlas = true);

} // namespace modelc::cudaexec

#endif // MODELC_CUDAEXEC_JITCPUREGIONS_H
