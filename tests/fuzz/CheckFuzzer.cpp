//===- CheckFuzzer.cpp - libFuzzer target for parse + check ---------------===//
//
// Parses and type-checks arbitrary bytes as a main file, with no stdlib
// (`import std.nn` is an unresolved import, so no input pays for parsing
// nn.mdl) and no rendering: the checker's own speed. FrontendFuzzer.cpp
// covers the rest of the front end (stdlib, hovers, renderers).
//
//===----------------------------------------------------------------------===//

#include "sema/Compilation.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  modelc::CompileOptions options;
  options.stdlibDir = "/nonexistent-modelc-stdlib";
  modelc::Compilation compilation(options);
  compilation.addBuffer("fuzz.mdl",
                        llvm::StringRef(reinterpret_cast<const char *>(data), size));
  compilation.check();
  return 0;
}
