//===- JsonRenderer.cpp - Diagnostics as one JSON document ----------------===//

#include "diagnostics/JsonRenderer.h"

#include "diagnostics/SourcePosition.h"

#include "llvm/Support/SourceMgr.h"

using namespace modelc;
using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

static Value positionToJson(const SourcePosition &pos) {
  return Object{{"line", pos.line}, {"column", pos.column}, {"offset", uint64_t(pos.offset)}};
}

static Array labelsToJson(llvm::ArrayRef<Label> labels, const llvm::SourceMgr &sm) {
  Array result;
  for (const Label &label : labels) {
    auto ends = resolveRange(sm, label.range);
    if (!ends)
      continue;
    result.push_back(Object{{"file", bufferName(sm, ends->first.buffer)},
                            {"primary", label.primary},
                            {"message", label.message},
                            {"start", positionToJson(ends->first)},
                            {"end", positionToJson(ends->second)}});
  }
  return result;
}

static Array editsToJson(llvm::ArrayRef<Edit> edits, const llvm::SourceMgr &sm) {
  Array result;
  for (const Edit &edit : edits) {
    auto ends = resolveRange(sm, edit.range);
    if (!ends)
      continue;
    result.push_back(Object{{"file", bufferName(sm, ends->first.buffer)},
                            {"start", positionToJson(ends->first)},
                            {"end", positionToJson(ends->second)},
                            {"replacement", edit.replacement}});
  }
  return result;
}

Value modelc::diagnosticToJson(const Diagnostic &diag, const llvm::SourceMgr &sm) {
  Array notes;
  for (const Note &note : diag.notes)
    notes.push_back(Object{{"message", note.message}, {"labels", labelsToJson(note.labels, sm)}});
  Array suggestions;
  for (const Suggestion &suggestion : diag.suggestions)
    suggestions.push_back(Object{{"message", suggestion.message},
                                 {"applicability", applicabilityName(suggestion.applicability)},
                                 {"edits", editsToJson(suggestion.edits, sm)}});
  return Object{{"code", diag.code()},       {"severity", severityName(diag.severity)},
                {"message", diag.message},   {"labels", labelsToJson(diag.labels, sm)},
                {"notes", std::move(notes)}, {"suggestions", std::move(suggestions)}};
}

Value modelc::diagnosticsToJson(llvm::ArrayRef<Diagnostic> diags, const llvm::SourceMgr &sm) {
  Array all;
  unsigned errors = 0, warnings = 0;
  for (const Diagnostic &diag : diags) {
    errors += diag.severity == Severity::Error;
    warnings += diag.severity == Severity::Warning;
    all.push_back(diagnosticToJson(diag, sm));
  }
  return Object{
      {"version", 1}, {"diagnostics", std::move(all)}, {"errors", errors}, {"warnings", warnings}};
}
