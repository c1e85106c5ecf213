//===- CudaGemm.cpp - Own kernels or cuBLASLt, chosen by measurement ------===//

#include "cudaexec/CudaGemm.h"

#include "runtime/cuda/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>

namespace modelc::cudaexec {

llvm::StringRef gemmBackendName(GemmBackend backend) {
  switch (backend) {
  case GemmBackend::Auto:
    return "auto";
  case GemmBackend::Own:
    return "own";
  case GemmBackend::CublasLt:
    return "cublaslt";
  }
  return "auto";
}

std::optional<GemmBackend> parseGemmBackend(llvm::StringRef name) {
  for (GemmBackend backend : {GemmBackend::Auto, GemmBackend::Own, GemmBackend::CublasLt})
    if (name == gemmBackendName(backend))
      return backend;
  return std::nullopt;
}

GemmBackend gemmBackendFromEnvironment() {
  std::optional<std::string> value = llvm::sys::Process::GetEnv("MODELC_CUDA_GEMM");
  if (!value || value->empty())
    return GemmBackend::Auto;
  if (std::optional<GemmBackend> backend = parseGemmBackend(*value))
    return *backend;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    llvm::errs() << "modelc: warning: MODELC_CUDA_GEMM=" << *value
                 << " is not one of auto, own, cublaslt; measuring instead\n";
  });
  return GemmBackend::Auto;
}

namespace {

cuda::LtType ltType(runtime::DType dtype) {
  switch (dtype) {
  case runtime::DType::F16:
    return cuda::LtType::F16;
  case runtime::DType::BF16:
    return cuda::LtType::BF16;
  default:
    return cuda::LtType::F32;
  }
}

} // namespace

llvm::Expected<cuda::LtProblem> ltProblemOf(const cudagen::GemmCall &gemm,
                                            const cudagen::SymbolValues &symbols) {
  llvm::Error failure = llvm::Error::success();
  auto value = [&](const cudagen::SizeExpr &size) -> int64_t {
    if (failure)
      return 0;
    llvm::Expected<int64_t> evaluated = size.evaluate(symbols);
    if (evaluated)
      return *evaluated;
    failure = evaluated.takeError();
    return 0;
  };
  int64_t m = value(gemm.m), n = value(gemm.n), k = value(gemm.k), batch = value(gemm.batch);
  int64_t lda = value(gemm.a.ld), ldb = value(gemm.b.ld);
  int64_t strideA = value(gemm.a.batchStride), strideB = value(gemm.b.batchStride);
  if (failure)
    return failure;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
    return llvm::createStringError(
        llvm::formatv("an empty product ({0}x{1}x{2}, batch {3})", m, n, k, batch).str());
  if (batch > INT32_MAX)
    return llvm::createStringError(
        llvm::formatv("a batch of {0} is more than cuBLASLt takes", batch).str());
  cuda::LtProblem p;
  p.inputType = ltType(gemm.inputType);
  p.outputType = ltType(gemm.outputType);
  p.tf32 = gemm.tf32;
  // Column-major: out^T (n x m, leading dim n) = b^T (n x k) a^T (k x m).
  p.m = n;
  p.n = m;
  p.k = k;
  p.transA = gemm.b.transposed;
  p.lda = ldb;
  p.strideA = strideB;
  p.transB = gemm.a.transposed;
  p.ldb = lda;
  p.strideB = strideA;
  p.ldc = n;
  p.batch = batch;
  p.strideC = batch > 1 ? m * n : 0;
  bool bias = gemm.bias.has_value();
  switch (gemm.activation) {
  case cudagen::GemmActivation::None:
    p.epilogue = bias ? cuda::LtEpilogue::Bias : cuda::LtEpilogue::None;
    break;
  case cudagen::GemmActivation::Relu:
    p.epilogue = bias ? cuda::LtEpilogue::ReluBias : cuda::LtEpilogue::Relu;
    break;
  case cudagen::GemmActivation::GeluTanh:
    p.epilogue = bias ? cuda::LtEpilogue::GeluBias : cuda::LtEpilogue::Gelu;
    break;
  }
  p.accumulate = gemm.residual.has_value();
  return p;
}

std::string gemmClassKey(const cuda::LtProblem &p, bool after) {
  std::string types = cuda::ltTypeName(p.inputType).str();
  if (p.outputType != p.inputType)
    types += "-" + cuda::ltTypeName(p.outputType).str();
  if (p.tf32)
    types += "-tf32";
  return llvm::formatv("{0} {1}{2} m{3} n{4} k{5} b{6} {7} beta{8} after{9}", types,
                       p.transA ? "T" : "N", p.transB ? "T" : "N",
                       llvm::Log2_64_Ceil(uint64_t(p.m)), llvm::Log2_64_Ceil(uint64_t(p.n)),
                       llvm::Log2_64_Ceil(uint64_t(p.k)), llvm::Log2_64_Ceil(uint64_t(p.batch)),
                       cuda::ltEpilogueName(p.epilogue), p.accumulate ? 1 : 0, after ? 1 : 0)
      .str();
}

//===----------------------------------------------------------------------===//
// The choice table
//===----------------------------------------------------------------------===//

namespace {

constexpr llvm::StringLiteral FileHeader = "# modelc-cuda-gemm-choice v1: ";

std::string choiceText(GemmChoice choice) {
  return choice.library ? "cublaslt " + std::to_string(choice.algorithm) : "own";
}

std::optional<GemmChoice> parseChoice(llvm::StringRef text) {
  if (text == "own")
    return GemmChoice{};
  int algorithm;
  if (text.consume_front("cublaslt ") && !text.getAsInteger(10, algorithm) && algorithm >= 0)
    return GemmChoice{true, algorithm};
  return std::nullopt;
}

} // namespace

GemmChoiceTable &GemmChoiceTable::global() {
  static GemmChoiceTable table;
  return table;
}

std::string GemmChoiceTable::fileFor(const std::string &identity) {
  std::optional<std::string> dir = cuda::KernelCache::directoryFromEnvironment();
  if (!dir)
    return {};
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(identity));
  llvm::SmallString<256> path(*dir);
  llvm::sys::path::append(
      path, "cuda-gemm-" + llvm::toHex(llvm::ArrayRef(digest).take_front(8), true) + ".txt");
  return std::string(path);
}

GemmChoiceTable::Identity &GemmChoiceTable::load(const std::string &identity) {
  Identity &table = identities[identity];
  if (table.loaded)
    return table;
  table.loaded = true;
  std::string file = fileFor(identity);
  if (file.empty())
    return table;
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
  if (!buffer)
    return table;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, false);
  // Another identity's file (a hash collision, or an edit): ignored.
  if (lines.empty() || lines.front() != (FileHeader + identity).str())
    return table;
  for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front()) {
    auto [key, choice] = line.split('\t');
    if (std::optional<GemmChoice> parsed = parseChoice(choice); parsed && !key.empty())
      table.choices[key.str()] = *parsed;
  }
  return table;
}

void GemmChoiceTable::save(const std::string &identity, const Identity &table) {
  std::string file = fileFor(identity);
  if (file.empty())
    return;
  llvm::sys::fs::create_directories(llvm::sys::path::parent_path(file));
  // A temporary file renamed over the old one: a reader never sees half.
  llvm::consumeError(llvm::writeToOutput(file, [&](llvm::raw_ostream &out) {
    out << FileHeader << identity << "\n";
    for (const auto &[key, choice] : table.choices)
      if (!table.provisional.count(key))
        out << key << "\t" << choiceText(choice) << "\n";
    return llvm::Error::success();
  }));
}

std::optional<GemmChoice> GemmChoiceTable::lookup(const std::string &identity,
                                                  const std::string &classKey) {
  std::lock_guard<std::mutex> lock(mutex);
  Identity &table = load(identity);
  auto found = table.choices.find(classKey);
  if (found == table.choices.end())
    return std::nullopt;
  return found->second;
}

void GemmChoiceTable::record(const std::string &identity, const std::string &classKey,
                             GemmChoice choice, bool provisional) {
  std::lock_guard<std::mutex> lock(mutex);
  Identity &table = load(identity);
  table.choices[classKey] = choice;
  if (provisional) {
    table.provisional.insert(classKey);
    return;
  }
  table.provisional.erase(classKey);
  save(identity, table);
}

void GemmChoiceTable::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  identities.clear();
}

} // namespace modelc::cudaexec
