//===- ArtifactEdit.cpp - Damage or retarget a .mdlc file for tests -------===//
//
//   modelc-artifact-edit IN -o OUT [--format-version=N] [--triple=T]
//                        [--add-feature=F] [--truncate=N] [--flip=OFFSET]
//                        [--flip-section=NAME] [--extract=NAME]
//
// --format-version, --triple and --add-feature rewrite the artifact and give
// it a valid checksum, so the loader's version and host checks are what
// refuses it; --truncate and --flip damage the bytes as they are
// (--flip-section: the first byte of section NAME). --extract writes the
// bytes of section NAME to OUT instead (`cuda0.ptx` for ptxas).
//
//===----------------------------------------------------------------------===//

#include "aot/ArtifactFormat.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace cl = llvm::cl;
using namespace modelc::aot;

static cl::opt<std::string> inputPath(cl::Positional, cl::Required, cl::desc("IN"));
static cl::opt<std::string> outputPath("o", cl::Required, cl::desc("OUT"));
static cl::opt<unsigned> formatVersion("format-version", cl::desc("Write this format version"));
static cl::opt<std::string> triple("triple", cl::desc("Claim this target triple"));
static cl::list<std::string> addFeatures("add-feature", cl::desc("Claim this CPU feature"));
static cl::opt<long long> truncateTo("truncate", cl::init(-1), cl::desc("Keep this many bytes"));
static cl::opt<long long> flipAt("flip", cl::init(-1), cl::desc("Invert the byte at OFFSET"));
static cl::opt<std::string> flipSection("flip-section",
                                        cl::desc("Invert the first byte of this section"));
static cl::opt<std::string> extract("extract", cl::desc("Write this section's bytes to OUT"));

/// The offset and size of section `name`, from the section table.
static std::optional<std::pair<uint64_t, uint64_t>> findSection(llvm::StringRef bytes,
                                                                llvm::StringRef name) {
  if (bytes.size() < kHeaderSize)
    return std::nullopt;
  uint32_t count = llvm::support::endian::read32le(bytes.data() + 48);
  uint64_t table = llvm::support::endian::read64le(bytes.data() + 56);
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t entry = table + uint64_t(i) * kSectionEntrySize;
    if (entry + kSectionEntrySize > bytes.size())
      return std::nullopt;
    llvm::StringRef entryName =
        bytes.substr(entry, kSectionNameSize).take_until([](char c) { return c == '\0'; });
    if (entryName == name)
      return std::pair{llvm::support::endian::read64le(bytes.data() + entry + 16),
                       llvm::support::endian::read64le(bytes.data() + entry + 24)};
  }
  return std::nullopt;
}

static int fail(const llvm::Twine &message) {
  llvm::errs() << "modelc-artifact-edit: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "Edit a .mdlc artifact for tests\n");
  auto input = llvm::MemoryBuffer::getFile(inputPath, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!input)
    return fail("cannot read " + inputPath + ": " + input.getError().message());
  std::string bytes = (*input)->getBuffer().str();
  for (const std::string *name : {&extract.getValue(), &flipSection.getValue()}) {
    if (name->empty())
      continue;
    std::optional<std::pair<uint64_t, uint64_t>> section = findSection(bytes, *name);
    if (!section || section->first + section->second > bytes.size())
      return fail("no section '" + *name + "' in " + inputPath);
    if (name == &extract.getValue())
      bytes = bytes.substr(section->first, section->second);
    else
      bytes[section->first] = char(~bytes[section->first]);
  }

  bool rewrite = formatVersion.getNumOccurrences() || !triple.empty() || !addFeatures.empty();
  if (rewrite) {
    llvm::Expected<Artifact> artifact = parseArtifact(bytes, inputPath);
    if (!artifact)
      return fail(llvm::toString(artifact.takeError()));
    if (!triple.empty())
      artifact->target.triple = triple;
    for (const std::string &f : addFeatures)
      artifact->target.features.push_back(f);
    bytes = serializeArtifact(*artifact, formatVersion.getNumOccurrences() ? unsigned(formatVersion)
                                                                           : kFormatVersion);
  }
  if (truncateTo >= 0 && size_t(truncateTo) < bytes.size())
    bytes.resize(size_t(truncateTo));
  if (flipAt >= 0) {
    if (size_t(flipAt) >= bytes.size())
      return fail("--flip=" + llvm::Twine(flipAt) + " is past the end");
    bytes[size_t(flipAt)] = char(~bytes[size_t(flipAt)]);
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(outputPath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return fail("cannot write " + outputPath + ": " + ec.message());
  out << bytes;
  return 0;
}
