//===- ApiDiagnostics.cpp - Internal diagnostics as public values ---------===//
//
// Positions come from the same resolveRange/bufferName the JSON renderer
// uses, and `rendered` from the text renderer, so a Diagnostic carries what
// `modelc check --format=json` and `modelc check` show.
//
//===----------------------------------------------------------------------===//

#include "api/ApiImpl.h"

#include "diagnostics/SourcePosition.h"
#include "diagnostics/TextRenderer.h"
#include "runtime/cuda/CudaError.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace modelc;
using namespace modelc::api;

namespace {

api::Severity fromInternal(modelc::Severity severity) {
  switch (severity) {
  case modelc::Severity::Error:
    return api::Severity::Error;
  case modelc::Severity::Warning:
    return api::Severity::Warning;
  case modelc::Severity::Note:
    return api::Severity::Note;
  case modelc::Severity::Help:
    return api::Severity::Help;
  }
  return api::Severity::Error;
}

api::SourcePosition fromInternal(const modelc::SourcePosition &pos) {
  return {pos.line, pos.column, pos.offset};
}

/// Nullopt for a range outside every buffer (the JSON renderer drops those too).
std::optional<api::SourceRange> resolve(const llvm::SourceMgr &sm, modelc::Range range) {
  auto ends = resolveRange(sm, range);
  if (!ends)
    return std::nullopt;
  return api::SourceRange{bufferName(sm, ends->first.buffer).str(), fromInternal(ends->first),
                          fromInternal(ends->second)};
}

std::vector<api::Label> fromInternal(llvm::ArrayRef<modelc::Label> labels,
                                     const llvm::SourceMgr &sm) {
  std::vector<api::Label> result;
  for (const modelc::Label &label : labels)
    if (std::optional<api::SourceRange> range = resolve(sm, label.range))
      result.push_back({std::move(*range), label.message, label.primary});
  return result;
}

api::Diagnostic fromInternal(const modelc::Diagnostic &diag, const llvm::SourceMgr &sm) {
  api::Diagnostic result;
  result.code = diag.code().str();
  result.severity = fromInternal(diag.severity);
  result.message = diag.message;
  result.labels = fromInternal(diag.labels, sm);
  for (const modelc::Note &note : diag.notes)
    result.notes.push_back({note.message, fromInternal(note.labels, sm)});
  for (const modelc::Suggestion &suggestion : diag.suggestions) {
    api::Suggestion s{suggestion.message, applicabilityName(suggestion.applicability).str(), {}};
    for (const modelc::Edit &edit : suggestion.edits)
      if (std::optional<api::SourceRange> range = resolve(sm, edit.range))
        s.edits.push_back({std::move(*range), edit.replacement});
    result.suggestions.push_back(std::move(s));
  }
  llvm::raw_string_ostream os(result.rendered);
  renderText(diag, sm, os);
  return result;
}

llvm::json::Value positionToJson(const api::SourcePosition &pos) {
  return llvm::json::Object{
      {"line", pos.line}, {"column", pos.column}, {"offset", uint64_t(pos.offset)}};
}

llvm::json::Array labelsToJson(const std::vector<api::Label> &labels) {
  llvm::json::Array result;
  for (const api::Label &label : labels)
    result.push_back(llvm::json::Object{{"file", label.range.file},
                                        {"primary", label.primary},
                                        {"message", label.message},
                                        {"start", positionToJson(label.range.start)},
                                        {"end", positionToJson(label.range.end)}});
  return result;
}

} // namespace

std::vector<api::Diagnostic> api::takeDiagnostics(DiagnosticEngine &engine,
                                                  Program::Impl &program) {
  std::vector<api::Diagnostic> result;
  {
    std::lock_guard<std::mutex> lock(program.sourceMutex);
    engine.sortByLocation();
    for (const modelc::Diagnostic &diag : engine.diagnostics())
      result.push_back(fromInternal(diag, engine.sourceMgr()));
  }
  engine.clear();
  return result;
}

api::Diagnostic api::errorDiagnostic(llvm::Error error) {
  api::Diagnostic result;
  llvm::handleAllErrors(
      std::move(error),
      [&](const cuda::CudaError &failure) {
        // The headline, then the driver's or compiler's log as a note.
        result = api::Diagnostic::error(failure.getMessage().str());
        llvm::StringRef log = llvm::StringRef(failure.getLog()).rtrim();
        if (!log.empty()) {
          result.notes.push_back({log.str(), {}});
          result.rendered += "note: " + log.str() + "\n";
        }
      },
      [&](const llvm::ErrorInfoBase &other) { result = api::Diagnostic::error(other.message()); });
  return result;
}

const char *api::severityName(api::Severity severity) {
  switch (severity) {
  case api::Severity::Error:
    return "error";
  case api::Severity::Warning:
    return "warning";
  case api::Severity::Note:
    return "note";
  case api::Severity::Help:
    return "help";
  }
  return "error";
}

std::string api::formatDiagnostics(const std::vector<api::Diagnostic> &diagnostics) {
  std::string text;
  for (const api::Diagnostic &diag : diagnostics)
    text += diag.rendered;
  return text;
}

std::string api::diagnosticsToJson(const std::vector<api::Diagnostic> &diagnostics) {
  llvm::json::Array all;
  unsigned errors = 0, warnings = 0;
  for (const api::Diagnostic &diag : diagnostics) {
    errors += diag.severity == api::Severity::Error;
    warnings += diag.severity == api::Severity::Warning;
    llvm::json::Array notes;
    for (const api::Note &note : diag.notes)
      notes.push_back(
          llvm::json::Object{{"message", note.message}, {"labels", labelsToJson(note.labels)}});
    llvm::json::Array suggestions;
    for (const api::Suggestion &suggestion : diag.suggestions) {
      llvm::json::Array edits;
      for (const api::Edit &edit : suggestion.edits)
        edits.push_back(llvm::json::Object{{"file", edit.range.file},
                                           {"start", positionToJson(edit.range.start)},
                                           {"end", positionToJson(edit.range.end)},
                                           {"replacement", edit.replacement}});
      suggestions.push_back(llvm::json::Object{{"message", suggestion.message},
                                               {"applicability", suggestion.applicability},
                                               {"edits", std::move(edits)}});
    }
    all.push_back(llvm::json::Object{{"code", diag.code},
                                     {"severity", severityName(diag.severity)},
                                     {"message", diag.message},
                                     {"labels", labelsToJson(diag.labels)},
                                     {"notes", std::move(notes)},
                                     {"suggestions", std::move(suggestions)}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(llvm::json::Object{
      {"version", 1}, {"diagnostics", std::move(all)}, {"errors", errors}, {"warnings", warnings}});
  return text;
}
