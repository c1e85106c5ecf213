//===- Diagnostic.cpp - The diagnostic registry and its explanations ------===//

#include "diagnostics/Diagnostic.h"

#include "llvm/Support/ErrorHandling.h"

using namespace modelc;

namespace {

constexpr DiagInfo registry[] = {
#define DIAG(Name, Code, Sev, Format) {DiagId::Name, #Name, Code, Severity::Sev, Format},
#include "diagnostics/Diagnostics.def"
#undef DIAG
};

struct Explanation {
  llvm::StringRef code;
  llvm::StringRef text;
};

// Generated at build time from docs/diagnostics/<Code>.md.
const Explanation explanations[] = {
#include "DiagnosticExplanations.inc"
    {{}, {}}, // keeps the array non-empty while docs are missing
};

} // namespace

llvm::StringRef modelc::severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Help:
    return "help";
  }
  llvm_unreachable("unknown severity");
}

llvm::StringRef modelc::applicabilityName(Applicability a) {
  switch (a) {
  case Applicability::MachineApplicable:
    return "machine-applicable";
  case Applicability::MaybeIncorrect:
    return "maybe-incorrect";
  case Applicability::HasPlaceholders:
    return "has-placeholders";
  }
  llvm_unreachable("unknown applicability");
}

const DiagInfo &modelc::getDiagInfo(DiagId id) { return registry[static_cast<size_t>(id)]; }

llvm::ArrayRef<DiagInfo> modelc::allDiagInfos() { return registry; }

std::optional<DiagId> modelc::lookupDiagCode(llvm::StringRef code) {
  for (const DiagInfo &info : registry)
    if (info.code.equals_insensitive(code))
      return info.id;
  return std::nullopt;
}

llvm::StringRef modelc::getDiagExplanation(llvm::StringRef code) {
  for (const Explanation &e : explanations)
    if (e.code.equals_insensitive(code))
      return e.text;
  return {};
}

Range Diagnostic::primaryRange() const {
  for (const Label &label : labels)
    if (label.primary)
      return label.range;
  return {};
}
