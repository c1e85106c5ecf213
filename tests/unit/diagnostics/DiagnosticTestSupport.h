//===- DiagnosticTestSupport.h - In-memory sources for diagnostic tests ---===//
#ifndef MODELC_TESTS_DIAGNOSTICTESTSUPPORT_H
#define MODELC_TESTS_DIAGNOSTICTESTSUPPORT_H

#include "diagnostics/DiagnosticEngine.h"
#include "diagnostics/TextRenderer.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

namespace modelc::testing {

/// Holds source buffers and finds ranges in them by their text.
class SourceFixture : public ::testing::Test {
protected:
  /// Adds a buffer named `name`; later find() calls search it.
  void load(llvm::StringRef text, llvm::StringRef name = "net.mdl") {
    current_ =
        sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  }

  /// The range of the `occurrence`-th (0-based) `needle` in the last buffer.
  Range find(llvm::StringRef needle, unsigned occurrence = 0) const {
    llvm::StringRef text = sm.getMemoryBuffer(current_)->getBuffer();
    size_t at = text.find(needle);
    for (unsigned i = 0; i < occurrence && at != llvm::StringRef::npos; ++i)
      at = text.find(needle, at + 1);
    if (at == llvm::StringRef::npos) {
      ADD_FAILURE() << "`" << needle.str() << "` is not in the source";
      return {};
    }
    const char *begin = text.data() + at;
    return {llvm::SMLoc::getFromPointer(begin), llvm::SMLoc::getFromPointer(begin + needle.size())};
  }

  std::string render(const Diagnostic &diag, bool color = false) const {
    std::string text;
    llvm::raw_string_ostream os(text);
    renderText(diag, sm, os, TextRenderOptions{color});
    return text;
  }

  llvm::SourceMgr sm;
  unsigned current_ = 0;
};

} // namespace modelc::testing

#endif
