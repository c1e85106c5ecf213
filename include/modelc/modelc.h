//===- modelc/modelc.h - The modelc embedding API (everything) ----------===//
//
// Compile .mdl models, instantiate them on a device, bind their weights and
// call their entry fns from a host program. See docs/embedding.md.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PUBLIC_MODELC_H
#define MODELC_PUBLIC_MODELC_H

#include "modelc/Diagnostic.h"
#include "modelc/Export.h"
#include "modelc/Model.h"
#include "modelc/Result.h"
#include "modelc/Tensor.h"

namespace modelc::api {

/// The library's version, "0.1.0".
MODELC_API const char *version();

} // namespace modelc::api

#endif // MODELC_PUBLIC_MODELC_H
