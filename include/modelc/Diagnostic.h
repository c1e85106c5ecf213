//===- modelc/Diagnostic.h - Diagnostics as plain values ----------------===//
//
// The same content as `modelc check --format=json` (docs/diagnostics):
// a code (`E0301`), a severity, the headline, labelled source ranges (the
// primary one first), notes and `help:` suggestions with their edits. Lines
// and columns are 1-based, columns count characters, offsets are 0-based
// bytes. Errors that are not about a model (a file that cannot be read, an
// unknown model name, a bad argument) have an empty code and no labels.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PUBLIC_DIAGNOSTIC_H
#define MODELC_PUBLIC_DIAGNOSTIC_H

#include "modelc/Export.h"

#include <cstddef>
#include <string>
#include <vector>

namespace modelc::api {

enum class Severity { Error, Warning, Note, Help };

struct SourcePosition {
  unsigned line = 0;   // 1-based
  unsigned column = 0; // 1-based, in characters
  size_t offset = 0;   // 0-based byte offset into the file
};

/// A half-open range [start, end) in one file.
struct SourceRange {
  std::string file;
  SourcePosition start, end;
};

struct Label {
  SourceRange range;
  std::string message;
  bool primary = false;
};

struct Note {
  std::string message;
  std::vector<Label> labels;
};

/// Replace `range` by `replacement` (an empty range inserts).
struct Edit {
  SourceRange range;
  std::string replacement;
};

struct Suggestion {
  std::string message;
  /// "machine-applicable", "maybe-incorrect" or "has-placeholders".
  std::string applicability;
  std::vector<Edit> edits;
};

struct Diagnostic {
  std::string code; // "E0301"; empty for errors outside the model
  Severity severity = Severity::Error;
  std::string message;
  std::vector<Label> labels; // the primary label first
  std::vector<Note> notes;
  std::vector<Suggestion> suggestions;
  /// The diagnostic as `modelc check` prints it (no colour).
  std::string rendered;

  /// The primary label, or null for diagnostics without a location.
  const Label *primaryLabel() const {
    for (const Label &l : labels)
      if (l.primary)
        return &l;
    return labels.empty() ? nullptr : &labels.front();
  }
  /// An error that is not about a model: no code, no location.
  static Diagnostic error(std::string message) {
    Diagnostic d;
    d.message = message;
    d.rendered = "error: " + std::move(message) + "\n";
    return d;
  }
};

/// "error", "warning", "note", "help".
MODELC_API const char *severityName(Severity severity);
/// The rendered text of every diagnostic, in order.
MODELC_API std::string formatDiagnostics(const std::vector<Diagnostic> &diagnostics);
/// The diagnostics as the JSON document of `modelc check --format=json`.
MODELC_API std::string diagnosticsToJson(const std::vector<Diagnostic> &diagnostics);

} // namespace modelc::api

#endif // MODELC_PUBLIC_DIAGNOSTIC_H
