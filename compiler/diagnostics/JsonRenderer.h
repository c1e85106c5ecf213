//===- JsonRenderer.h - Diagnostics as one JSON document --------*- C++ -*-===//
//
// The machine-readable form of diagnostics (`--error-format=json`, editors,
// the language server). The schema is documented in
// docs/diagnostics/README.md; lines and columns are 1-based, columns count
// characters, offsets are 0-based bytes.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DIAGNOSTICS_JSONRENDERER_H
#define MODELC_DIAGNOSTICS_JSONRENDERER_H

#include "diagnostics/Diagnostic.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/JSON.h"

namespace llvm {
class SourceMgr;
}

namespace modelc {

/// One diagnostic as a JSON object:
/// {"code", "severity", "message", "labels", "notes", "suggestions"}.
llvm::json::Value diagnosticToJson(const Diagnostic &diag, const llvm::SourceMgr &sm);

/// The whole document:
/// {"version": 1, "diagnostics": [...], "errors": N, "warnings": N}.
llvm::json::Value diagnosticsToJson(llvm::ArrayRef<Diagnostic> diags, const llvm::SourceMgr &sm);

} // namespace modelc

#endif // MODELC_DIAGNOSTICS_JSONRENDERER_H
