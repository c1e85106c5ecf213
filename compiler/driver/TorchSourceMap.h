//===- TorchSourceMap.h - .mdl lines of an import back to Python -*- C++ -*-===//
//
// `modelc import-torch` checks the .mdl it imported; a PyTorch user wants the
// diagnostics on their Python. The importer reports, for each .mdl line it
// wrote, the Python line and columns it came from and, where a device bug
// starts there, the fix in PyTorch terms. This class loads the Python files
// into the Compilation's SourceMgr and rewrites a diagnostic so that its
// location is the Python line (the .mdl labels move into a note) and its
// help says what to change in the PyTorch code.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DRIVER_TORCHSOURCEMAP_H
#define MODELC_DRIVER_TORCHSOURCEMAP_H

#include "diagnostics/Diagnostic.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <optional>
#include <string>

namespace modelc::driver {

class TorchSourceMap {
public:
  explicit TorchSourceMap(llvm::SourceMgr &sourceMgr) : sourceMgr_(sourceMgr) {}

  /// The diagnostic for an importer failure: {"status": "error", "code",
  /// "message", "location", "label", "notes", "help"}.
  Diagnostic importerError(const llvm::json::Object &result);

  /// Reads the "map" of a successful import whose checked .mdl is buffer
  /// `mdlBuffer`, checked with the model on `device` ("D" for every device).
  void load(const llvm::json::Object &result, unsigned mdlBuffer, llvm::StringRef device);

  /// `diag` located at the Python line its primary label came from, the
  /// .mdl labels kept in a note, and PyTorch-phrased help. A diagnostic with
  /// no Python origin is returned unchanged.
  Diagnostic toPython(const Diagnostic &diag);

private:
  struct Entry {
    Range python;
    std::string fix;          // help when the bug starts on this line
    std::string redundantFix; // help for a transfer that does nothing
  };

  /// The range of a location object {"file", "line", "col", "end_col"}.
  std::optional<Range> pythonRange(const llvm::json::Object &location);
  std::optional<unsigned> pythonBuffer(llvm::StringRef path);
  const Entry *entryAt(llvm::SMLoc loc) const;
  /// `.to(cuda:0)` / `cast(x, f32)` edits, said the PyTorch way.
  std::optional<std::string> pytorchEdit(const Edit &edit) const;

  llvm::SourceMgr &sourceMgr_;
  unsigned mdlBuffer_ = 0;
  std::string device_;
  std::string inputName_ = "x";
  std::map<unsigned, Entry> entries_; // by .mdl line
  std::map<std::string, unsigned> pythonBuffers_;
};

} // namespace modelc::driver

#endif // MODELC_DRIVER_TORCHSOURCEMAP_H
