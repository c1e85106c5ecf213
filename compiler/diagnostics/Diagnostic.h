//===- Diagnostic.h - Diagnostics as plain data -----------------*- C++ -*-===//
//
// A Diagnostic is a value: a registered id (code, severity), a headline, a
// primary label on the offending range, secondary labels on the other values
// involved, notes that say where a value got its type or device, and
// suggestions ("help:") with exact edits. Renderers turn it into text or
// JSON; the library never prints on its own.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DIAGNOSTICS_DIAGNOSTIC_H
#define MODELC_DIAGNOSTICS_DIAGNOSTIC_H

#include "basic/SourceRange.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelc {

enum class DiagId : uint16_t {
#define DIAG(Name, Code, Severity, Format) Name,
#include "diagnostics/Diagnostics.def"
#undef DIAG
};

enum class Severity : uint8_t { Error, Warning, Note, Help };
llvm::StringRef severityName(Severity severity); // "error", "warning", ...

/// The registry entry of one diagnostic.
struct DiagInfo {
  DiagId id;
  llvm::StringRef name; // "DeviceMismatch"
  llvm::StringRef code; // "E0301"
  Severity severity;
  llvm::StringRef format; // formatv headline
};
const DiagInfo &getDiagInfo(DiagId id);
llvm::ArrayRef<DiagInfo> allDiagInfos();
std::optional<DiagId> lookupDiagCode(llvm::StringRef code);
/// The long explanation of `code` (markdown), or "" if there is none.
llvm::StringRef getDiagExplanation(llvm::StringRef code);

/// A labelled range. The primary label marks what is wrong; secondary
/// labels show the other values involved.
struct Label {
  Range range;
  std::string message;
  bool primary = false;
};

/// How safe it is for a tool to apply a suggestion without asking.
enum class Applicability : uint8_t {
  MachineApplicable, // exactly right; editors offer it as a quick fix
  MaybeIncorrect,    // probably right; review it
  HasPlaceholders,   // the edit contains text the user must fill in
};
llvm::StringRef applicabilityName(Applicability a); // "machine-applicable", ...

/// Replace `range` by `replacement` (an empty range inserts).
struct Edit {
  Range range;
  std::string replacement;
};

struct Suggestion {
  std::string message;
  std::vector<Edit> edits; // may be empty: advice without an edit
  Applicability applicability = Applicability::MachineApplicable;
};

/// A `note:` with optional labelled locations.
struct Note {
  std::string message;
  std::vector<Label> labels;
};

struct Diagnostic {
  DiagId id;
  Severity severity = Severity::Error;
  std::string message;       // the formatted headline
  std::vector<Label> labels; // labels[0] is the primary one
  std::vector<Note> notes;
  std::vector<Suggestion> suggestions;

  llvm::StringRef code() const { return getDiagInfo(id).code; }
  /// The range of the primary label (invalid for file-level diagnostics).
  Range primaryRange() const;
};

} // namespace modelc

#endif // MODELC_DIAGNOSTICS_DIAGNOSTIC_H
