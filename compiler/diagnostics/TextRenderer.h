//===- TextRenderer.h - rustc-style terminal output of diagnostics -*- C++ -*-===//
//
// Renders a Diagnostic the way rustc does:
//
//   error[E0301]: operands of `+` are on different devices
//    --> net.mdl:7:25
//     |
//   7 |     return weight @ x + bias
//     |            ----------   ^^^^ f32[out] @ cpu
//     |            |
//     |            f32[B, out] @ cuda:0
//
// followed by notes and `help:` suggestions showing the patched source.
// Columns are computed on characters (UTF-8) with tabs expanded to four
// spaces; colours are ANSI escapes and only emitted when asked for.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_DIAGNOSTICS_TEXTRENDERER_H
#define MODELC_DIAGNOSTICS_TEXTRENDERER_H

#include "diagnostics/Diagnostic.h"

#include "llvm/ADT/ArrayRef.h"

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace modelc {

struct TextRenderOptions {
  bool color = false; // ANSI colours, as rustc uses them
};

/// Writes `diag` followed by one blank line (which separates diagnostics).
void renderText(const Diagnostic &diag, const llvm::SourceMgr &sm, llvm::raw_ostream &os,
                const TextRenderOptions &options = {});

/// Writes the closing line, e.g. "error: aborting due to 2 errors; 1 warning
/// emitted" or "warning: 1 warning emitted"; nothing when both are zero.
void renderSummary(unsigned errors, unsigned warnings, llvm::raw_ostream &os, bool color = false);

/// Writes every diagnostic of `diags`, then the summary.
void renderTextAll(llvm::ArrayRef<Diagnostic> diags, const llvm::SourceMgr &sm,
                   llvm::raw_ostream &os, const TextRenderOptions &options = {});

} // namespace modelc

#endif // MODELC_DIAGNOSTICS_TEXTRENDERER_H
