//===- ArtifactFormat.h - The .mdlc file: layout, reader and writer -*- C++ -*-===//
//
// A .mdlc artifact is one model instance compiled ahead of time: a fixed
// 64-byte header, a section table and the sections (docs/artifacts.md):
//
//   offset  size  field
//        0     8  magic "\x89MDLC\r\n\x1a"
//        8     4  format version (little-endian u32)
//       12     4  header size (64)
//       16    16  modelc version that wrote the file (ASCII, NUL-padded)
//       32     8  file size
//       40     8  checksum (see artifactChecksum)
//       48     4  section count
//       52     4  reserved (0)
//       56     8  section table offset
//
// Each section table entry is 32 bytes: a NUL-padded 16-byte name, then the
// section's offset and size (u64). The first 32 bytes keep their meaning in
// every format version, so a reader can always say which version and which
// modelc wrote a file it cannot read.
//
// Sections: "meta" (JSON: target triple, cpu, features, model, runtime
// symbols, the GPUs' architectures), "signature" (JSON: the entry fns),
// "state" (JSON: the parameter layout), "cpu.object" (an ELF relocatable
// object), optionally "weights" (a safetensors file); for a model placed on
// GPUs "device.plan" (the DevicePlan's JSON) and per GPU N "cudaN.cubin",
// "cudaN.ptx" and "cudaN.cu" (its CUDA C++), with "cpu.object" holding the
// plan's cpu regions, if it has any.
//
// This file depends on LLVM Support and runtime/ only.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_AOT_ARTIFACTFORMAT_H
#define MODELC_AOT_ARTIFACTFORMAT_H

#include "runtime/Tensor.h"
#include "runtime/WeightLoader.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace modelc::aot {

/// The format version this modelc reads and writes. Bumped whenever the
/// layout, a section's schema or the calling convention between compiled code
/// and the runtime changes; a reader accepts exactly its own version.
inline constexpr uint32_t kFormatVersion = 3;
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kSectionEntrySize = 32;
inline constexpr size_t kSectionNameSize = 16;
inline constexpr size_t kWriterVersionSize = 16;
/// Offset of the checksum field in the header.
inline constexpr size_t kChecksumOffset = 40;
inline constexpr llvm::StringLiteral kMagic("\x89MDLC\r\n\x1a");

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Why an artifact was refused. Every refusal happens before any of its code
/// is linked or run.
enum class ArtifactErrorKind {
  NotAnArtifact, ///< no magic
  Truncated,     ///< shorter than its header says
  Version,       ///< another format version
  Corrupted,     ///< checksum mismatch
  Malformed,     ///< checksum fine, contents inconsistent (a writer bug)
  WrongHost,     ///< another CPU architecture or missing CPU features
  Unsupported,   ///< something this modelc cannot load (cuda code)
  Link,          ///< the object code did not link
};

class ArtifactError : public llvm::ErrorInfo<ArtifactError> {
public:
  static char ID;
  ArtifactError(ArtifactErrorKind kind, std::string message)
      : kind(kind), message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  ArtifactErrorKind kind;
  std::string message;
};

//===----------------------------------------------------------------------===//
// Contents
//===----------------------------------------------------------------------===//

/// One term of a symbolic dim: coeff * symbols[0] * symbols[1] * ...
struct DimTerm {
  int64_t coeff = 0;
  llvm::SmallVector<std::string, 1> symbols;
};

/// A dim of an entry signature: a polynomial over the fn's symbolic dims
/// (`B`, `2*B + 1`), or a constant.
struct SymbolicDim {
  llvm::SmallVector<DimTerm, 1> terms;

  static SymbolicDim constant(int64_t value);
  static SymbolicDim symbol(llvm::StringRef name);
  std::optional<int64_t> asConstant() const;
  /// The symbol when this is exactly `1 * symbol`.
  std::optional<llvm::StringRef> asSymbol() const;
  /// The value with `symbols` bound; nullopt when one is unbound or the
  /// arithmetic overflows.
  std::optional<int64_t> evaluate(const llvm::StringMap<int64_t> &symbols) const;
  std::string str() const;
};

/// A parameter or result of an entry fn.
struct TensorSpec {
  std::string name; ///< the parameter's name; empty for a result
  runtime::DType dtype = runtime::DType::F32;
  std::vector<SymbolicDim> shape;
  runtime::Device device;
  /// The type as the .mdl spells it (`f32[B, 784] @ cpu`), for messages.
  std::string declared;

  /// `[B, 784]`.
  std::string shapeString() const;
};

struct EntryFn {
  std::string name;   ///< `forward`
  std::string symbol; ///< the packed entry point in the object code
  std::vector<TensorSpec> params;
  /// One per result, in order (`-> (f32[B, 5] @ cpu, f32[] @ cpu)` has two);
  /// the compiled code takes one output buffer per result.
  std::vector<TensorSpec> results;
};

/// What the object code was compiled for.
struct TargetInfo {
  std::string triple;
  std::string cpu;
  /// The CPU features the code may use (`avx2`, `fma`...), sorted.
  std::vector<std::string> features;

  /// The machine this process runs on, as the JIT targets it.
  static TargetInfo host();
};

/// The kernels of one GPU of a cuda artifact (views, like Artifact::object).
struct GpuCode {
  int device = 0;
  std::string cubinArch; ///< "sm_90"
  llvm::StringRef cubin;
  std::string ptxArch; ///< "compute_90"
  llvm::StringRef ptx;
  llvm::StringRef source; ///< the CUDA C++ (the emulator builds it)
};

/// Everything an artifact holds. `object` and `weights` are views: of the
/// file's bytes after parsing, of the writer's buffers before serializing.
struct Artifact {
  std::string writerVersion;
  TargetInfo target;
  std::string modelName;
  std::string modelArgs;
  std::string modelDevice;
  std::vector<EntryFn> fns;
  /// The parameter layout: every param and buffer in state_dict order, the
  /// order the compiled code takes them in.
  std::vector<runtime::StateEntry> state;
  /// Symbols the object code leaves undefined (runtime and libc/libm).
  std::vector<std::string> runtimeSymbols;
  /// The object code: the entry fns (cpu artifacts) or the device plan's cpu
  /// regions (cuda artifacts; empty when the plan has none).
  llvm::StringRef object;
  /// A safetensors file, when the weights were built in.
  std::optional<llvm::StringRef> weights;
  /// Cuda artifacts: the DevicePlan as JSON (compiler/cudagen/DevicePlan.h)
  /// and the kernels of each GPU it uses.
  std::optional<llvm::StringRef> devicePlan;
  std::vector<GpuCode> gpus;

  bool isCuda() const { return devicePlan.has_value(); }
  const EntryFn *findFn(llvm::StringRef name) const;
};

/// The checksum of a whole file: xxh3-64 of (xxh3-64 of bytes [0, 40), then
/// xxh3-64 of bytes [48, end)), both little-endian; only the checksum field
/// itself is left out.
uint64_t artifactChecksum(llvm::StringRef bytes);

/// The file's bytes, with a fresh checksum.
std::string serializeArtifact(const Artifact &artifact, uint32_t formatVersion = kFormatVersion);

/// Checks `bytes` (magic, format version, size, checksum, then every
/// section) and returns views into them. `name` prefixes every message.
/// Refuses other format versions, naming both versions and the modelc
/// that wrote the file. The host is not checked here (see ArtifactLoader).
llvm::Expected<Artifact> parseArtifact(llvm::StringRef bytes, llvm::StringRef name);

/// The header's format and writer version, for files parseArtifact refuses
/// (nullopt when there is no header).
struct HeaderVersion {
  uint32_t formatVersion;
  std::string writerVersion;
};
std::optional<HeaderVersion> readHeaderVersion(llvm::StringRef bytes);

/// The modelc version this build writes into artifacts.
llvm::StringRef modelcVersion();

} // namespace modelc::aot

#endif // MODELC_AOT_ARTIFACTFORMAT_H
