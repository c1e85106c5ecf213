//===- DriverOutput.h - Colour choice and driver-level errors ---*- C++ -*-===//
//
// Errors that are not about the checked source (a file that cannot be read,
// an unknown diagnostic code) are printed in the same `error: ...` shape as
// the compiler's diagnostics, with the same colour policy.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_DRIVEROUTPUT_H
#define MODELC_DRIVER_DRIVEROUTPUT_H

#include "llvm/ADT/Twine.h"

namespace modelc::driver {

enum class ColorChoice { Auto, Always, Never };

/// Whether to colour what goes to stderr: `Auto` colours only when stderr is
/// a terminal and NO_COLOR is unset or empty (https://no-color.org).
bool shouldColorStderr(ColorChoice choice);

/// Prints `error: <message>` to stderr.
void reportDriverError(const llvm::Twine &message, bool color);

} // namespace modelc::driver

#endif // MODELC_DRIVER_DRIVEROUTPUT_H
