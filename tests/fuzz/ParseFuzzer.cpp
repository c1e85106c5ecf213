//===- ParseFuzzer.cpp - libFuzzer target for the lexer and parser --------===//
//
// Parses arbitrary bytes into an AST, nothing else: no checker, no imports,
// no rendering. One SourceMgr and DiagnosticEngine per input, nothing read
// from disk, so it runs at the parser's own speed.
//
//===----------------------------------------------------------------------===//

#include "diagnostics/DiagnosticEngine.h"
#include "parse/Parser.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.mdl"),
      llvm::SMLoc());
  modelc::DiagnosticEngine diags(sm);
  (void)modelc::parseModule(sm, id, diags);
  return 0;
}
