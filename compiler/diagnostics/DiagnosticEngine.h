//===- DiagnosticEngine.h - Collects diagnostics for one run ----*- C++ -*-===//
//
// Phases report through a DiagnosticEngine:
//
//   diags.report(DiagId::DeviceMismatch, plus.opRange, "+")
//       .primary(bias.range, "f32[out] @ cpu")
//       .label(lhs.range, "f32[B, out] @ cuda:0")
//       .note("`bias` is declared on cpu here", declRange, "declared on cpu")
//       .help("move `bias` to cuda:0", {{bias.range.after(), ".to(cuda:0)"}});
//
// The builder adds the diagnostic when it goes out of scope. The engine only
// collects; drivers and the language server render what it holds.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DIAGNOSTICS_DIAGNOSTICENGINE_H
#define MODELC_DIAGNOSTICS_DIAGNOSTICENGINE_H

#include "diagnostics/Diagnostic.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>
#include <tuple>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace modelc {

class DiagnosticEngine;

/// Substitutes `{N}` in a registered headline by args[N]. A missing argument
/// leaves its `{N}` visible rather than printing something misleading.
std::string formatHeadline(llvm::StringRef format, llvm::ArrayRef<std::string> args);

/// Builds one diagnostic; adds it to the engine when destroyed.
class DiagnosticBuilder {
public:
  DiagnosticBuilder(DiagnosticEngine &engine, Diagnostic diag)
      : engine_(&engine), diag_(std::move(diag)) {}
  DiagnosticBuilder(DiagnosticBuilder &&other) noexcept
      : engine_(other.engine_), diag_(std::move(other.diag_)) {
    other.engine_ = nullptr;
  }
  DiagnosticBuilder(const DiagnosticBuilder &) = delete;
  DiagnosticBuilder &operator=(const DiagnosticBuilder &) = delete;
  ~DiagnosticBuilder();

  /// Sets the message of the primary label (the range given to report()),
  /// or moves the primary label to `range`.
  DiagnosticBuilder &primary(std::string message);
  DiagnosticBuilder &primary(Range range, std::string message);
  /// Adds a secondary label.
  DiagnosticBuilder &label(Range range, std::string message);
  /// Adds a note, optionally pointing at `at` with a label message.
  DiagnosticBuilder &note(std::string message);
  DiagnosticBuilder &note(std::string message, Range at, std::string labelMessage = {});
  /// Adds a `help:` suggestion with edits.
  DiagnosticBuilder &help(std::string message, std::vector<Edit> edits = {},
                          Applicability applicability = Applicability::MachineApplicable);

  Diagnostic &get() { return diag_; }

private:
  DiagnosticEngine *engine_;
  Diagnostic diag_;
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &sourceMgr) : sourceMgr_(sourceMgr) {}

  /// Starts a diagnostic whose headline is the registered format applied to
  /// `args`, with an (initially unlabelled) primary label on `at`.
  template <typename... Args> DiagnosticBuilder report(DiagId id, Range at, Args &&...args) {
    return begin(id, at,
                 formatHeadline(getDiagInfo(id).format,
                                {llvm::formatv("{0}", std::forward<Args>(args)).str()...}));
  }

  /// Adds `diag` unless an identical mistake (same code, same primary range)
  /// was already reported: one mistake never prints twice.
  void add(Diagnostic diag);

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }
  bool hasErrors() const { return errors_ != 0; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  /// Orders diagnostics by the position of their primary range (stable), so
  /// output follows the file top to bottom.
  void sortByLocation();
  /// Drops the diagnostics `drop` selects (follow-on errors of a mistake
  /// already reported).
  void eraseIf(llvm::function_ref<bool(const Diagnostic &)> drop);
  void clear();

  llvm::SourceMgr &sourceMgr() const { return sourceMgr_; }

private:
  DiagnosticBuilder begin(DiagId id, Range at, std::string message);
  /// Adds `diag` to the error or warning count.
  void count(const Diagnostic &diag);

  llvm::SourceMgr &sourceMgr_;
  std::vector<Diagnostic> diags_;
  unsigned errors_ = 0, warnings_ = 0;
  /// (id, primary begin, primary end) of every diagnostic held, for dedupe.
  std::set<std::tuple<DiagId, const char *, const char *>> seen_;
};

} // namespace modelc

#endif // MODELC_DIAGNOSTICS_DIAGNOSTICENGINE_H
