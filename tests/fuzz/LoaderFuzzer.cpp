//===- LoaderFuzzer.cpp - libFuzzer targets for the file loaders ----------===//
//
// One target per reader of files modelc gets from elsewhere, chosen by
// MODELC_FUZZ_LOADER at compile time: `npy` (runtime/Npy.cpp), `safetensors`
// (runtime/SafeTensors.cpp), `mdlc` (the artifact parser, with the header's
// size, version and checksum fixed up so that inputs get past them to the
// sections and their JSON) and `lsp` (the language server's message reader
// over the bytes as its standard input).
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>
#include <string>

#if MODELC_FUZZ_LOADER_NPY
#include "runtime/Npy.h"
#elif MODELC_FUZZ_LOADER_SAFETENSORS
#include "runtime/SafeTensors.h"
#elif MODELC_FUZZ_LOADER_MDLC
#include "aot/ArtifactFormat.h"
#include "llvm/Support/Endian.h"
#elif MODELC_FUZZ_LOADER_LSP
#include "lsp/MessageInput.h"
#include <cstdio>
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
#if MODELC_FUZZ_LOADER_NPY
  llvm::consumeError(modelc::runtime::parseNpy(bytes, "fuzz.npy").takeError());
#elif MODELC_FUZZ_LOADER_SAFETENSORS
  auto file = modelc::runtime::SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(bytes, "fuzz.safetensors"));
  if (file)
    for (const auto &entry : file->entries())
      (void)file->find(entry.name);
  else
    llvm::consumeError(file.takeError());
#elif MODELC_FUZZ_LOADER_MDLC
  namespace aot = modelc::aot;
  (void)aot::readHeaderVersion(bytes);
  std::string fixed = bytes.str();
  if (fixed.size() >= aot::kHeaderSize && bytes.starts_with(aot::kMagic)) {
    llvm::support::endian::write32le(fixed.data() + 8, aot::kFormatVersion);
    llvm::support::endian::write64le(fixed.data() + 32, fixed.size());
    llvm::support::endian::write64le(fixed.data() + aot::kChecksumOffset,
                                     aot::artifactChecksum(fixed));
  }
  llvm::consumeError(aot::parseArtifact(fixed, "fuzz.mdlc").takeError());
#elif MODELC_FUZZ_LOADER_LSP
  std::string copy = bytes.str();
  std::FILE *in = fmemopen(copy.data(), copy.size(), "r");
  if (!in)
    return 0;
  modelc::lsp::MessageInput input(in, llvm::lsp::JSONStreamStyle::Standard);
  for (int i = 0; i < 64 && !input.isEndOfInput() && !input.hasError(); ++i) {
    std::string json;
    if (llvm::failed(input.readStandardMessage(json)))
      break;
  }
  std::fclose(in);
#endif
  return 0;
}
