//===- DriverOutput.cpp - Colour choice and driver-level errors -----------===//

#include "DriverOutput.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace modelc::driver {

bool shouldColorStderr(ColorChoice choice) {
  switch (choice) {
  case ColorChoice::Always:
    return true;
  case ColorChoice::Never:
    return false;
  case ColorChoice::Auto:
    break;
  }
  std::optional<std::string> noColor = llvm::sys::Process::GetEnv("NO_COLOR");
  if (noColor && !noColor->empty())
    return false;
  return llvm::sys::Process::StandardErrHasColors();
}

void reportDriverError(const llvm::Twine &message, bool color) {
  llvm::raw_ostream &os = llvm::errs();
  llvm::ColorMode mode = color ? llvm::ColorMode::Enable : llvm::ColorMode::Disable;
  llvm::WithColor(os, llvm::raw_ostream::RED, /*Bold=*/true, /*BG=*/false, mode) << "error";
  llvm::WithColor(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true, /*BG=*/false, mode)
      << ": " << message;
  os << "\n";
}

} // namespace modelc::driver
