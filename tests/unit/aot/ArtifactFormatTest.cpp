//===- ArtifactFormatTest.cpp - .mdlc reader/writer round trip and refusals ===//

#include "aot/ArtifactFormat.h"

#include "llvm/Support/Endian.h"

#include <gtest/gtest.h>

using namespace modelc;
using namespace modelc::aot;

namespace {

/// `2*B + 1`.
SymbolicDim twoBPlusOne() {
  SymbolicDim d;
  d.terms.push_back({2, {"B"}});
  d.terms.push_back({1, {}});
  return d;
}

Artifact sample() {
  Artifact a;
  a.writerVersion = "9.8.7";
  a.target = {"x86_64-pc-linux-gnu", "skylake", {"avx2", "fma", "sse4.2"}};
  a.modelName = "Mlp";
  a.modelArgs = "in=784,hidden=256,out=10";
  a.modelDevice = "cpu";
  EntryFn fn;
  fn.name = "forward";
  fn.symbol = "_mlir__mlir_ciface_forward";
  TensorSpec x;
  x.name = "x";
  x.shape = {SymbolicDim::symbol("B"), SymbolicDim::constant(784)};
  x.declared = "f32[B, 784] @ cpu";
  TensorSpec mask;
  mask.name = "mask";
  mask.dtype = runtime::DType::Bool;
  mask.shape = {twoBPlusOne()};
  mask.declared = "bool[2*B + 1] @ cpu";
  fn.params = {x, mask};
  TensorSpec logits;
  logits.shape = {SymbolicDim::symbol("B"), SymbolicDim::constant(10)};
  logits.declared = "f32[B, 10] @ cpu";
  TensorSpec loss;
  loss.declared = "f32[] @ cpu";
  fn.results = {logits, loss};
  a.fns.push_back(fn);
  a.state = {{"fc1.weight",
              runtime::DType::F32,
              {256, 784},
              runtime::Device::cpu(),
              runtime::StateKind::Param,
              std::nullopt},
             {"bn.running_mean",
              runtime::DType::F64,
              {16},
              runtime::Device::cpu(),
              runtime::StateKind::Buffer,
              std::nullopt}};
  a.runtimeSymbols = {"_mlir_ciface_modelc_sgemm", "free", "malloc"};
  a.object = "\x7f"
             "ELF pretend object code";
  return a;
}

std::string messageOf(llvm::Error err, ArtifactErrorKind *kind = nullptr) {
  std::string message;
  llvm::handleAllErrors(std::move(err), [&](const ArtifactError &e) {
    message = e.message;
    if (kind)
      *kind = e.kind;
  });
  return message;
}

void expectSameSpec(const TensorSpec &a, const TensorSpec &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.device, b.device);
  EXPECT_EQ(a.declared, b.declared);
  EXPECT_EQ(a.shapeString(), b.shapeString());
}

TEST(ArtifactFormatTest, RoundTripsEverySection) {
  Artifact a = sample();
  std::string weights = "pretend safetensors";
  a.weights = weights;
  std::string bytes = serializeArtifact(a);
  llvm::Expected<Artifact> b = parseArtifact(bytes, "net.mdlc");
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_EQ(b->writerVersion, "9.8.7");
  EXPECT_EQ(b->target.triple, a.target.triple);
  EXPECT_EQ(b->target.cpu, a.target.cpu);
  EXPECT_EQ(b->target.features, a.target.features);
  EXPECT_EQ(b->modelName, "Mlp");
  EXPECT_EQ(b->modelArgs, a.modelArgs);
  EXPECT_EQ(b->modelDevice, "cpu");
  EXPECT_EQ(b->runtimeSymbols, a.runtimeSymbols);
  ASSERT_EQ(b->fns.size(), 1u);
  const EntryFn &fn = b->fns[0];
  EXPECT_EQ(fn.name, "forward");
  EXPECT_EQ(fn.symbol, "_mlir__mlir_ciface_forward");
  ASSERT_EQ(fn.params.size(), 2u);
  expectSameSpec(fn.params[0], a.fns[0].params[0]);
  expectSameSpec(fn.params[1], a.fns[0].params[1]);
  ASSERT_EQ(fn.results.size(), 2u);
  expectSameSpec(fn.results[0], a.fns[0].results[0]);
  expectSameSpec(fn.results[1], a.fns[0].results[1]);
  EXPECT_EQ(fn.results[1].shapeString(), "[]");
  EXPECT_EQ(fn.params[1].shapeString(), "[2*B + 1]");
  ASSERT_EQ(b->state.size(), 2u);
  EXPECT_EQ(b->state[0].typeString(), "f32[256, 784] @ cpu");
  EXPECT_EQ(b->state[1].name, "bn.running_mean");
  EXPECT_EQ(b->state[1].kind, runtime::StateKind::Buffer);
  EXPECT_EQ(b->object, a.object);
  ASSERT_TRUE(b->weights.has_value());
  EXPECT_EQ(*b->weights, weights);
  // The object code and the weights start 64-byte aligned in the file.
  EXPECT_EQ((b->object.data() - bytes.data()) % 64, 0);
  EXPECT_EQ((b->weights->data() - bytes.data()) % 64, 0);
  // Serializing is deterministic.
  EXPECT_EQ(serializeArtifact(*b), bytes);
}

TEST(ArtifactFormatTest, WeightsAreOptional) {
  llvm::Expected<Artifact> b = parseArtifact(serializeArtifact(sample()), "net.mdlc");
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_FALSE(b->weights.has_value());
}

TEST(ArtifactFormatTest, RefusesEveryTruncation) {
  std::string bytes = serializeArtifact(sample());
  for (size_t size = 0; size < bytes.size(); ++size) {
    ArtifactErrorKind kind;
    std::string message = messageOf(
        parseArtifact(llvm::StringRef(bytes).take_front(size), "net.mdlc").takeError(), &kind);
    if (size < kMagic.size())
      EXPECT_EQ(kind, ArtifactErrorKind::NotAnArtifact) << size;
    else
      EXPECT_EQ(kind, ArtifactErrorKind::Truncated) << size << ": " << message;
  }
  EXPECT_EQ(messageOf(parseArtifact(llvm::StringRef(bytes).drop_back(7), "net.mdlc").takeError()),
            "net.mdlc: truncated: " + std::to_string(bytes.size() - 7) +
                " bytes, but the header says " + std::to_string(bytes.size()));
}

TEST(ArtifactFormatTest, RefusesEveryFlippedByte) {
  std::string bytes = serializeArtifact(sample());
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string corrupt = bytes;
    corrupt[i] ^= 0x20;
    llvm::Expected<Artifact> parsed = parseArtifact(corrupt, "net.mdlc");
    ASSERT_FALSE(bool(parsed)) << "byte " << i;
    ArtifactErrorKind kind;
    std::string message = messageOf(parsed.takeError(), &kind);
    if (i < kMagic.size())
      EXPECT_EQ(kind, ArtifactErrorKind::NotAnArtifact) << i;
    else if (i >= 8 && i < 12)
      EXPECT_EQ(kind, ArtifactErrorKind::Version) << i;
    else if (i >= 32 && i < 40)
      EXPECT_TRUE(kind == ArtifactErrorKind::Truncated || kind == ArtifactErrorKind::Corrupted)
          << i;
    else
      EXPECT_EQ(kind, ArtifactErrorKind::Corrupted) << i << ": " << message;
  }
}

TEST(ArtifactFormatTest, ChecksumMessageNamesBothValues) {
  std::string bytes = serializeArtifact(sample());
  bytes[bytes.size() - 1] ^= 1;
  std::string message = messageOf(parseArtifact(bytes, "net.mdlc").takeError());
  EXPECT_TRUE(llvm::StringRef(message).starts_with("net.mdlc: checksum mismatch (stored 0x"))
      << message;
  EXPECT_TRUE(llvm::StringRef(message).ends_with("): the file is corrupted")) << message;
}

TEST(ArtifactFormatTest, OtherFormatVersionNamesBothVersions) {
  std::string bytes = serializeArtifact(sample(), kFormatVersion + 1);
  ArtifactErrorKind kind;
  std::string message = messageOf(parseArtifact(bytes, "net.mdlc").takeError(), &kind);
  EXPECT_EQ(kind, ArtifactErrorKind::Version);
  EXPECT_EQ(message, "net.mdlc: artifact format version " + std::to_string(kFormatVersion + 1) +
                         " (written by modelc 9.8.7), but this modelc (" + modelcVersion().str() +
                         ") reads format version " + std::to_string(kFormatVersion) +
                         "; rebuild it with `modelc build`");
}

TEST(ArtifactFormatTest, RefusesOtherFiles) {
  ArtifactErrorKind kind;
  std::string message = messageOf(parseArtifact("model Mlp {}", "x.mdl").takeError(), &kind);
  EXPECT_EQ(kind, ArtifactErrorKind::NotAnArtifact);
  EXPECT_EQ(message, "x.mdl: not a modelc artifact (no .mdlc magic at the start of the file)");
}

TEST(ArtifactFormatTest, RefusesInconsistentSectionsBehindAValidChecksum) {
  // A section table pointing past the end, re-checksummed: a writer bug is
  // still reported, never trusted.
  std::string bytes = serializeArtifact(sample());
  llvm::support::endian::write64le(bytes.data() + kHeaderSize + 24, bytes.size());
  llvm::support::endian::write64le(bytes.data() + kChecksumOffset, artifactChecksum(bytes));
  ArtifactErrorKind kind;
  std::string message = messageOf(parseArtifact(bytes, "net.mdlc").takeError(), &kind);
  EXPECT_EQ(kind, ArtifactErrorKind::Malformed);
  EXPECT_EQ(message, "net.mdlc: malformed: section 'meta' lies outside the file");
}

/// sample() placed on two GPUs: a plan, each GPU's kernels, no cpu regions.
Artifact cudaSample() {
  Artifact a = sample();
  a.object = "";
  a.runtimeSymbols.clear();
  a.devicePlan = R"({"format": "modelc-device-plan"})";
  a.gpus = {{0, "sm_90",
             "\x7f"
             "ELF cubin 0",
             "compute_90", ".version 8.0 ptx 0", "__global__ void k0() {}"},
            {1, "sm_90",
             "\x7f"
             "ELF cubin 1",
             "compute_90", ".version 8.0 ptx 1", "__global__ void k1() {}"}};
  return a;
}

TEST(ArtifactFormatTest, CudaSectionsRoundTrip) {
  Artifact a = cudaSample();
  std::string bytes = serializeArtifact(a);
  llvm::Expected<Artifact> b = parseArtifact(bytes, "net.mdlc");
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_TRUE(b->isCuda());
  EXPECT_EQ(*b->devicePlan, *a.devicePlan);
  EXPECT_TRUE(b->object.empty());
  ASSERT_EQ(b->gpus.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(b->gpus[i].device, a.gpus[i].device);
    EXPECT_EQ(b->gpus[i].cubinArch, "sm_90");
    EXPECT_EQ(b->gpus[i].ptxArch, "compute_90");
    EXPECT_EQ(b->gpus[i].cubin, a.gpus[i].cubin);
    EXPECT_EQ(b->gpus[i].ptx, a.gpus[i].ptx);
    EXPECT_EQ(b->gpus[i].source, a.gpus[i].source);
  }
  // Every byte of the kernels is covered by the checksum.
  size_t at = bytes.find("ptx 1");
  ASSERT_NE(at, std::string::npos);
  bytes[at] ^= 1;
  ArtifactErrorKind kind;
  messageOf(parseArtifact(bytes, "net.mdlc").takeError(), &kind);
  EXPECT_EQ(kind, ArtifactErrorKind::Corrupted);
}

TEST(ArtifactFormatTest, CudaArtifactsNeedEveryGpuSection) {
  // A GPU listed in meta without its sections: a writer bug, reported.
  Artifact a = cudaSample();
  Artifact withoutSecondGpu = a;
  withoutSecondGpu.gpus.pop_back();
  std::string bytes = serializeArtifact(withoutSecondGpu);
  // Rename "cuda0.ptx" to "cuda2.ptx" and re-checksum.
  size_t at = bytes.find("cuda0.ptx");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 4] = '2';
  llvm::support::endian::write64le(bytes.data() + kChecksumOffset, artifactChecksum(bytes));
  ArtifactErrorKind kind;
  std::string message = messageOf(parseArtifact(bytes, "net.mdlc").takeError(), &kind);
  EXPECT_EQ(kind, ArtifactErrorKind::Malformed);
  EXPECT_EQ(message, "net.mdlc: malformed: no 'cuda0.ptx' section");
}

TEST(ArtifactFormatTest, SymbolicDimsEvaluateAndPrint) {
  llvm::StringMap<int64_t> symbols;
  symbols["B"] = 4;
  EXPECT_EQ(twoBPlusOne().evaluate(symbols), 9);
  EXPECT_EQ(twoBPlusOne().str(), "2*B + 1");
  EXPECT_EQ(SymbolicDim::constant(784).evaluate({}), 784);
  EXPECT_EQ(SymbolicDim::constant(0).str(), "0");
  EXPECT_EQ(SymbolicDim::symbol("B").asSymbol(), llvm::StringRef("B"));
  EXPECT_FALSE(SymbolicDim::symbol("N").evaluate(symbols).has_value());
  SymbolicDim huge;
  huge.terms.push_back({INT64_MAX, {"B"}});
  EXPECT_FALSE(huge.evaluate(symbols).has_value()); // overflow
  SymbolicDim negative;
  negative.terms.push_back({-1, {"B"}});
  negative.terms.push_back({-3, {}});
  EXPECT_EQ(negative.str(), "-B - 3");
}

TEST(ArtifactFormatTest, HostTargetHasFeatures) {
  TargetInfo host = TargetInfo::host();
  EXPECT_FALSE(host.triple.empty());
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_TRUE(std::is_sorted(host.features.begin(), host.features.end()));
}

} // namespace
