//===- CublasLt.cpp - NVIDIA's cuBLASLt, loaded at run time ---------------===//

#include "runtime/cuda/CublasLt.h"

#include "runtime/cuda/CudaError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Process.h"

#include <mutex>

namespace modelc::cuda {

using namespace blaslt;

llvm::StringRef ltTypeName(LtType type) {
  switch (type) {
  case LtType::F32:
    return "f32";
  case LtType::F16:
    return "f16";
  case LtType::BF16:
    return "bf16";
  }
  return "?";
}

llvm::StringRef ltEpilogueName(LtEpilogue epilogue) {
  switch (epilogue) {
  case LtEpilogue::None:
    return "none";
  case LtEpilogue::Relu:
    return "relu";
  case LtEpilogue::Gelu:
    return "gelu";
  case LtEpilogue::Bias:
    return "bias";
  case LtEpilogue::ReluBias:
    return "bias+relu";
  case LtEpilogue::GeluBias:
    return "bias+gelu";
  }
  return "?";
}

bool ltEpilogueHasBias(LtEpilogue epilogue) {
  return epilogue == LtEpilogue::Bias || epilogue == LtEpilogue::ReluBias ||
         epilogue == LtEpilogue::GeluBias;
}

std::string LtProblem::str() const {
  std::string text = llvm::formatv("{0}", ltTypeName(inputType)).str();
  if (outputType != inputType)
    text += "->" + ltTypeName(outputType).str();
  if (tf32)
    text += " tf32";
  text += llvm::formatv(" {0}{1} {2}x{3}x{4}", transA ? "T" : "N", transB ? "T" : "N", m, n, k);
  if (batch != 1)
    text += llvm::formatv(" batch {0}", batch);
  if (epilogue != LtEpilogue::None)
    text += ", " + ltEpilogueName(epilogue).str();
  if (accumulate)
    text += ", beta=1";
  return text;
}

cudaDataType ltDataType(LtType type) {
  switch (type) {
  case LtType::F32:
    return CUDA_R_32F;
  case LtType::F16:
    return CUDA_R_16F;
  case LtType::BF16:
    return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

cublasLtEpilogue_t ltEpilogueValue(LtEpilogue epilogue) {
  switch (epilogue) {
  case LtEpilogue::None:
    return CUBLASLT_EPILOGUE_DEFAULT;
  case LtEpilogue::Relu:
    return CUBLASLT_EPILOGUE_RELU;
  case LtEpilogue::Gelu:
    return CUBLASLT_EPILOGUE_GELU;
  case LtEpilogue::Bias:
    return CUBLASLT_EPILOGUE_BIAS;
  case LtEpilogue::ReluBias:
    return CUBLASLT_EPILOGUE_RELU_BIAS;
  case LtEpilogue::GeluBias:
    return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

namespace {

llvm::Error notFound(const llvm::Twine &why) {
  return makeCudaError(CudaErrorKind::LibraryNotFound, "cuBLASLt is not used: " + why);
}

} // namespace

std::vector<std::string> CublasLt::defaultLibraries() {
  if (std::optional<std::string> forced = llvm::sys::Process::GetEnv("MODELC_CUBLASLT_LIBRARY"))
    if (!forced->empty())
      return *forced == "none" ? std::vector<std::string>{} : std::vector<std::string>{*forced};
  return {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
}

std::unique_ptr<CublasLt> CublasLt::tryOpen(const std::string &path, std::string &why) {
  std::string reason;
  SharedLibrary library = SharedLibrary::open(path, &reason);
  if (!library) {
    why = "cannot open " + path + ": " + reason;
    return nullptr;
  }
  std::unique_ptr<CublasLt> lt(new CublasLt());
  std::string missing;
#define MODELC_RESOLVE(name, type, member)                                                         \
  if (!(lt->api.member = library.function<type>(name)))                                            \
    missing += std::string(missing.empty() ? "" : ", ") + name;
  MODELC_CUBLASLT_FUNCTIONS(MODELC_RESOLVE)
#undef MODELC_RESOLVE
  if (!missing.empty()) {
    why = path + " lacks " + missing;
    return nullptr;
  }
  lt->libraryVersion = lt->api.getVersion();
  lt->libraryPath = path;
  lt->library = std::move(library);
  if (lt->libraryVersion < MinimumVersion) {
    why = path + " is version " + lt->versionString() + "; modelc needs 12.0 or newer";
    return nullptr;
  }
  return lt;
}

llvm::Expected<std::unique_ptr<CublasLt>> CublasLt::open(const std::string &path) {
  std::string why;
  if (std::unique_ptr<CublasLt> lt = tryOpen(path, why))
    return lt;
  return notFound(why);
}

llvm::Expected<CublasLt &> CublasLt::get() {
  static std::once_flag once;
  // Never destroyed, like the driver whose contexts its handles live in.
  static CublasLt *instance = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    std::vector<std::string> candidates = defaultLibraries();
    if (candidates.empty())
      failure = "MODELC_CUBLASLT_LIBRARY=none";
    for (const std::string &candidate : candidates) {
      std::string why;
      if (std::unique_ptr<CublasLt> lt = tryOpen(candidate, why)) {
        instance = lt.release();
        return;
      }
      // The first refusal says the most (the newest name, or the one asked for).
      if (failure.empty())
        failure = why;
    }
  });
  if (!instance)
    return notFound(failure);
  return *instance;
}

std::string CublasLt::versionString() const {
  return llvm::formatv("{0}.{1}.{2}", libraryVersion / 10000, libraryVersion / 100 % 100,
                       libraryVersion % 100)
      .str();
}

std::string CublasLt::describe(cublasStatus_t status) const {
  const char *name = api.getStatusName ? api.getStatusName(status) : nullptr;
  const char *text = api.getStatusString ? api.getStatusString(status) : nullptr;
  std::string described = name ? name : "cuBLAS status " + std::to_string(status);
  if (text)
    described += std::string(": ") + text;
  return described;
}

llvm::Error CublasLt::check(cublasStatus_t status, llvm::StringRef call) const {
  if (status == CUBLAS_STATUS_SUCCESS)
    return llvm::Error::success();
  return makeCudaError(CudaErrorKind::LibraryCallFailed,
                       llvm::formatv("{0} failed: {1}", call, describe(status)));
}

llvm::Expected<cublasLtHandle_t> CublasLt::createHandle() const {
  cublasLtHandle_t handle = nullptr;
  if (llvm::Error error = check(api.create(&handle), "cublasLtCreate"))
    return error;
  return handle;
}

void CublasLt::destroyHandle(cublasLtHandle_t handle) const {
  if (handle)
    api.destroy(handle);
}

LtMatmul::~LtMatmul() {
  const CublasLtFunctions &api = library.api;
  for (cublasLtMatrixLayout_t layout : {a, b, c})
    if (layout)
      api.matrixLayoutDestroy(layout);
  if (desc)
    api.matmulDescDestroy(desc);
}

llvm::Expected<std::unique_ptr<LtMatmul>> CublasLt::prepare(const LtProblem &p) const {
  std::unique_ptr<LtMatmul> matmul(new LtMatmul(*this, p));
  cublasComputeType_t compute =
      p.tf32 && p.inputType == LtType::F32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  if (llvm::Error error = check(api.matmulDescCreate(&matmul->desc, compute, CUDA_R_32F),
                                "cublasLtMatmulDescCreate"))
    return error;
  int32_t transA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t transB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  uint32_t epilogue = uint32_t(ltEpilogueValue(p.epilogue));
  auto setDesc = [&](cublasLtMatmulDescAttributes_t attribute, const void *value, size_t size) {
    return check(api.matmulDescSetAttribute(matmul->desc, attribute, value, size),
                 "cublasLtMatmulDescSetAttribute");
  };
  if (llvm::Error error = setDesc(CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof(transA)))
    return error;
  if (llvm::Error error = setDesc(CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof(transB)))
    return error;
  if (llvm::Error error = setDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)))
    return error;
  if (ltEpilogueHasBias(p.epilogue)) {
    int32_t biasType = ltDataType(p.outputType);
    if (llvm::Error error =
            setDesc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType, sizeof(biasType)))
      return error;
  }
  // Column-major layouts: A is stored (transA ? k x m : m x k), B likewise.
  auto layout = [&](cublasLtMatrixLayout_t *out, LtType type, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) -> llvm::Error {
    if (llvm::Error error =
            check(api.matrixLayoutCreate(out, ltDataType(type), uint64_t(rows), uint64_t(cols), ld),
                  "cublasLtMatrixLayoutCreate"))
      return error;
    if (p.batch == 1)
      return llvm::Error::success();
    int32_t count = int32_t(p.batch);
    if (llvm::Error error =
            check(api.matrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                               sizeof(count)),
                  "cublasLtMatrixLayoutSetAttribute"))
      return error;
    return check(api.matrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &stride, sizeof(stride)),
                 "cublasLtMatrixLayoutSetAttribute");
  };
  if (llvm::Error error = layout(&matmul->a, p.inputType, p.transA ? p.k : p.m,
                                 p.transA ? p.m : p.k, p.lda, p.strideA))
    return error;
  if (llvm::Error error = layout(&matmul->b, p.inputType, p.transB ? p.n : p.k,
                                 p.transB ? p.k : p.n, p.ldb, p.strideB))
    return error;
  if (llvm::Error error = layout(&matmul->c, p.outputType, p.m, p.n, p.ldc, p.strideC))
    return error;
  return matmul;
}

llvm::Expected<std::vector<LtAlgorithm>> CublasLt::algorithms(cublasLtHandle_t handle,
                                                              const LtMatmul &matmul,
                                                              size_t maxWorkspaceBytes,
                                                              int count) const {
  cublasLtMatmulPreference_t preference = nullptr;
  if (llvm::Error error =
          check(api.preferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"))
    return error;
  uint64_t workspace = maxWorkspaceBytes;
  std::vector<cublasLtMatmulHeuristicResult_t> results(size_t(std::max(count, 1)));
  int returned = 0;
  llvm::Error error =
      check(api.preferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace, sizeof(workspace)),
            "cublasLtMatmulPreferenceSetAttribute");
  if (!error)
    error = check(api.algoGetHeuristic(handle, matmul.desc, matmul.a, matmul.b, matmul.c, matmul.c,
                                       preference, int(results.size()), results.data(), &returned),
                  "cublasLtMatmulAlgoGetHeuristic");
  api.preferenceDestroy(preference);
  if (error)
    return error;
  std::vector<LtAlgorithm> algorithms;
  for (int i = 0; i < returned && i < int(results.size()); ++i)
    if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS &&
        results[size_t(i)].workspaceSize <= maxWorkspaceBytes)
      algorithms.push_back({results[size_t(i)].algo, results[size_t(i)].workspaceSize});
  if (algorithms.empty())
    return makeCudaError(CudaErrorKind::LibraryCallFailed,
                         "cublasLtMatmulAlgoGetHeuristic found no algorithm for " +
                             matmul.problem().str());
  return algorithms;
}

llvm::Error CublasLt::run(cublasLtHandle_t handle, const LtMatmul &matmul,
                          const LtAlgorithm &algorithm, const LtOperands &operands,
                          cudaStream_t stream) const {
  const LtProblem &p = matmul.problem();
  if (ltEpilogueHasBias(p.epilogue)) {
    const void *bias = reinterpret_cast<const void *>(uintptr_t(operands.bias));
    if (llvm::Error error =
            check(api.matmulDescSetAttribute(matmul.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                             sizeof(bias)),
                  "cublasLtMatmulDescSetAttribute"))
      return error;
  }
  // Host scalars: read when the call is enqueued (or captured).
  const float alpha = 1.0f, beta = p.accumulate ? 1.0f : 0.0f;
  auto pointer = [](uint64_t address) { return reinterpret_cast<void *>(uintptr_t(address)); };
  void *d = pointer(operands.d);
  return check(
      api.matmul(handle, matmul.desc, &alpha, pointer(operands.a), matmul.a, pointer(operands.b),
                 matmul.b, &beta, p.accumulate ? pointer(operands.c) : d, matmul.c, d, matmul.c,
                 &algorithm.algo, pointer(operands.workspace), operands.workspaceBytes, stream),
      "cublasLtMatmul");
}

} // namespace modelc::cuda
