//===- FrontendFuzzer.cpp - libFuzzer target for the whole front end ------===//
//
// Feeds arbitrary bytes to a Compilation as a main file, parses and checks
// them, asks for hovers at a few positions (what the language server does),
// and renders every diagnostic as text (with and without colour) and as JSON
// into a null stream: any crash, sanitizer report or hang anywhere between
// the lexer and the renderers is a bug.
//
//===----------------------------------------------------------------------===//

#include "diagnostics/JsonRenderer.h"
#include "diagnostics/TextRenderer.h"
#include "sema/Compilation.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  modelc::CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  modelc::Compilation compilation(options);
  unsigned bufferId = compilation.addBuffer(
      "fuzz.mdl", llvm::StringRef(reinterpret_cast<const char *>(data), size));
  compilation.check();

  const char *text = compilation.sourceMgr().getMemoryBuffer(bufferId)->getBufferStart();
  for (size_t offset : {size_t(0), size / 3, size / 2, size})
    (void)compilation.symbolAt(llvm::SMLoc::getFromPointer(text + offset));

  modelc::DiagnosticEngine &engine = compilation.diagnostics();
  engine.sortByLocation();
  llvm::raw_null_ostream sink;
  for (bool color : {false, true}) {
    modelc::TextRenderOptions renderOptions;
    renderOptions.color = color;
    for (const modelc::Diagnostic &diag : engine.diagnostics())
      modelc::renderText(diag, compilation.sourceMgr(), sink, renderOptions);
    modelc::renderSummary(engine.errorCount(), engine.warningCount(), sink, color);
  }
  sink << modelc::diagnosticsToJson(engine.diagnostics(), compilation.sourceMgr());
  return 0;
}
