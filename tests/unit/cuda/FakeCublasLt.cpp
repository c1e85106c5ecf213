//===- FakeCublasLt.cpp - A libcublasLt stand-in for the tests ------------===//
//
// Exports the cuBLASLt entry points modelc resolves (runtime/cuda/
// CublasLtApi.h) and computes each matmul on the fake driver's host-backed
// device memory in float64, so tests check numbers without a GPU. It is
// strict where the real library is: attributes must have their documented
// sizes, layouts must agree with the operations and the problem, pointers
// and workspace must lie inside allocations, a handle needs a current
// context, and the work is enqueued on the given stream through the fake
// driver (FakeCudaDriver.cpp, which this library links), so it runs now or
// when the CUDA graph that captured it is launched. Every call is recorded
// (FakeCublasLt.h): modelc_fake_cublaslt_last(), modelc_fake_cublaslt_matmuls().
//
// The arithmetic is LtReference.h's: GELU is the tanh approximation, as
// cuBLASLt's epilogue computes it; with CUBLAS_COMPUTE_32F_FAST_TF32 f32
// inputs are rounded to TF32 first.
//
// Environment: MODELC_FAKE_CUBLASLT_VERSION (cublasLtGetVersion, default
// 130100), MODELC_FAKE_CUBLASLT_CREATE_RESULT, MODELC_FAKE_CUBLASLT_MATMUL_RESULT
// (statuses, default 0), MODELC_FAKE_CUBLASLT_ALGOS (algorithms the
// heuristic offers, default 3; algorithm i needs i * 64 KiB of workspace)
// and MODELC_FAKE_CUBLASLT_US (fake microseconds per call, a comma-separated
// list by algorithm, the last repeated; default 5).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/cuda/FakeCublasLt.h"
#include "tests/unit/cuda/LtReference.h"

#include "runtime/cuda/CublasLtApi.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

using namespace modelc::cuda::blaslt;
using modelc::cuda::driver::CUresult;
using modelc::cuda::driver::CUstream;
using modelc::fake::LtCall;

extern "C" {
// The fake driver's hooks.
void modelc_fake_cuda_count(const char *name);
int modelc_fake_cuda_current_device();
bool modelc_fake_cuda_is_capturing(CUstream stream);
bool modelc_fake_cuda_inside(modelc::cuda::driver::CUdeviceptr pointer, size_t bytes);
CUresult modelc_fake_cuda_enqueue(CUstream stream, const std::function<void()> *work,
                                  double microseconds);
}

namespace modelc::cuda::blaslt {
struct cublasLtContext {
  int device;
};
struct cublasLtMatmulDescOpaque_t {
  int compute, scale;
  int32_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  uint32_t epilogue = uint32_t(CUBLASLT_EPILOGUE_DEFAULT);
  const void *bias = nullptr;
  int32_t biasType = -1;
};
struct cublasLtMatrixLayoutOpaque_t {
  int type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct cublasLtMatmulPreferenceOpaque_t {
  uint64_t maxWorkspace = 0;
};
} // namespace modelc::cuda::blaslt

namespace {

constexpr size_t WorkspacePerAlgorithm = 64 * 1024;

int envInt(const char *name, int fallback) {
  const char *value = std::getenv(name);
  return value ? std::atoi(value) : fallback;
}

double microsecondsOf(uint64_t algorithm) {
  const char *value = std::getenv("MODELC_FAKE_CUBLASLT_US");
  std::vector<double> times;
  for (const char *p = value; p && *p;) {
    char *end = nullptr;
    times.push_back(std::strtod(p, &end));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p)
      break;
  }
  if (times.empty())
    return 5;
  return times[std::min<size_t>(algorithm, times.size() - 1)];
}

struct Recorded {
  std::mutex mutex;
  std::vector<LtCall> calls;
};
Recorded &recorded() {
  static Recorded instance;
  return instance;
}

bool knownType(int type) { return type == CUDA_R_32F || type == CUDA_R_16F || type == CUDA_R_16BF; }

/// Bytes a strided-batched matrix spans.
size_t extent(const cublasLtMatrixLayoutOpaque_t &layout) {
  if (!layout.rows || !layout.cols)
    return 0;
  uint64_t last = uint64_t(layout.batch - 1) * uint64_t(layout.stride) +
                  (layout.cols - 1) * uint64_t(layout.ld) + layout.rows;
  return last * modelc::fake::ltElementSize(layout.type);
}

template <typename T> bool setValue(T &field, const void *buffer, size_t size) {
  if (!buffer || size != sizeof(T))
    return false;
  std::memcpy(&field, buffer, sizeof(T));
  return true;
}

/// Whether the four layouts describe one problem under `desc`'s operations;
/// sets m, n, k.
bool consistent(const cublasLtMatmulDescOpaque_t &desc, const cublasLtMatrixLayoutOpaque_t &a,
                const cublasLtMatrixLayoutOpaque_t &b, const cublasLtMatrixLayoutOpaque_t &c,
                const cublasLtMatrixLayoutOpaque_t &d, uint64_t &m, uint64_t &n, uint64_t &k) {
  m = c.rows;
  n = c.cols;
  k = desc.transA == CUBLAS_OP_T ? a.rows : a.cols;
  uint64_t aRows = desc.transA == CUBLAS_OP_T ? k : m, aCols = desc.transA == CUBLAS_OP_T ? m : k;
  uint64_t bRows = desc.transB == CUBLAS_OP_T ? n : k, bCols = desc.transB == CUBLAS_OP_T ? k : n;
  bool shapes = a.rows == aRows && a.cols == aCols && b.rows == bRows && b.cols == bCols &&
                d.rows == m && d.cols == n;
  bool leading = a.ld >= int64_t(a.rows) && b.ld >= int64_t(b.rows) && c.ld >= int64_t(c.rows) &&
                 d.ld >= int64_t(d.rows);
  bool types = knownType(a.type) && a.type == b.type && knownType(c.type) && c.type == d.type &&
               (desc.compute == CUBLAS_COMPUTE_32F ||
                (desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32 && a.type == CUDA_R_32F)) &&
               desc.scale == CUDA_R_32F;
  bool batches = a.batch == c.batch && b.batch == c.batch && d.batch == c.batch && c.batch >= 1;
  return shapes && leading && types && batches;
}

bool knownEpilogue(uint32_t epilogue) {
  for (cublasLtEpilogue_t known :
       {CUBLASLT_EPILOGUE_DEFAULT, CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_BIAS,
        CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU, CUBLASLT_EPILOGUE_GELU_BIAS})
    if (epilogue == uint32_t(known))
      return true;
  return false;
}

bool hasBias(uint32_t epilogue) { return epilogue & uint32_t(CUBLASLT_EPILOGUE_BIAS); }

} // namespace

extern "C" {

size_t cublasLtGetVersion() { return size_t(envInt("MODELC_FAKE_CUBLASLT_VERSION", 130100)); }

const char *cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  default:
    return "CUBLAS_STATUS_UNKNOWN";
  }
}

const char *cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "the library was not initialized";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the functionality requested is not supported";
  default:
    return "unknown error";
  }
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  modelc_fake_cuda_count("cublasLtCreate");
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (cublasStatus_t forced = envInt("MODELC_FAKE_CUBLASLT_CREATE_RESULT", 0))
    return forced;
  int device = modelc_fake_cuda_current_device();
  if (device < 0)
    return CUBLAS_STATUS_NOT_INITIALIZED; // no CUDA context
  *handle = new cublasLtContext{device};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType scale) {
  if (!desc || (compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_FAST_TF32))
    return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t{compute, scale};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attribute,
                                              const void *buffer, size_t size) {
  bool ok = false;
  switch (attribute) {
  case CUBLASLT_MATMUL_DESC_TRANSA:
    ok = setValue(desc->transA, buffer, size);
    break;
  case CUBLASLT_MATMUL_DESC_TRANSB:
    ok = setValue(desc->transB, buffer, size);
    break;
  case CUBLASLT_MATMUL_DESC_EPILOGUE:
    ok = setValue(desc->epilogue, buffer, size) && knownEpilogue(desc->epilogue);
    break;
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    ok = setValue(desc->bias, buffer, size);
    break;
  case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
    ok = setValue(desc->biasType, buffer, size) && knownType(desc->biasType);
    break;
  default:
    break;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (!layout || !knownType(type) || ld < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{type, rows, cols, ld};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attribute,
                                                const void *buffer, size_t size) {
  bool ok = false;
  if (attribute == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
    ok = setValue(layout->batch, buffer, size) && layout->batch >= 1;
  else if (attribute == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
    ok = setValue(layout->stride, buffer, size) && layout->stride >= 0;
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *preference) {
  if (!preference)
    return CUBLAS_STATUS_INVALID_VALUE;
  *preference = new cublasLtMatmulPreferenceOpaque_t;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t preference) {
  delete preference;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t preference,
                                                    cublasLtMatmulPreferenceAttributes_t attribute,
                                                    const void *buffer, size_t size) {
  if (attribute != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES ||
      !setValue(preference->maxWorkspace, buffer, size))
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t preference, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *returned) {
  modelc_fake_cuda_count("cublasLtMatmulAlgoGetHeuristic");
  if (!handle || !desc || !a || !b || !c || !d || !preference || requested <= 0 || !returned)
    return CUBLAS_STATUS_INVALID_VALUE;
  uint64_t m, n, k;
  if (!consistent(*desc, *a, *b, *c, *d, m, n, k))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  *returned = 0;
  int offered = envInt("MODELC_FAKE_CUBLASLT_ALGOS", 3);
  for (int i = 0; i < offered && *returned < requested; ++i) {
    size_t workspace = size_t(i) * WorkspacePerAlgorithm;
    if (workspace > preference->maxWorkspace)
      continue;
    cublasLtMatmulHeuristicResult_t &result = results[*returned];
    std::memset(&result, 0, sizeof(result));
    result.algo.data[0] = uint64_t(i);
    result.workspaceSize = workspace;
    result.state = CUBLAS_STATUS_SUCCESS;
    result.wavesCount = 1.0f;
    ++*returned;
  }
  return *returned ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha,
                              const void *aData, cublasLtMatrixLayout_t a, const void *bData,
                              cublasLtMatrixLayout_t b, const void *beta, const void *cData,
                              cublasLtMatrixLayout_t c, void *dData, cublasLtMatrixLayout_t d,
                              const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceBytes, cudaStream_t stream) {
  modelc_fake_cuda_count("cublasLtMatmul");
  if (cublasStatus_t forced = envInt("MODELC_FAKE_CUBLASLT_MATMUL_RESULT", 0))
    return forced;
  if (!handle || !desc || !alpha || !beta || !a || !b || !c || !d || !algo)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (handle->device != modelc_fake_cuda_current_device())
    return CUBLAS_STATUS_NOT_INITIALIZED; // the handle's context is not current
  uint64_t m, n, k;
  if (!consistent(*desc, *a, *b, *c, *d, m, n, k))
    return CUBLAS_STATUS_NOT_SUPPORTED;

  LtCall call;
  call.computeType = desc->compute;
  call.scaleType = desc->scale;
  call.transA = desc->transA;
  call.transB = desc->transB;
  call.epilogue = desc->epilogue;
  call.biasType = desc->biasType;
  call.aType = a->type;
  call.bType = b->type;
  call.cType = c->type;
  call.dType = d->type;
  call.aRows = a->rows;
  call.aCols = a->cols;
  call.bRows = b->rows;
  call.bCols = b->cols;
  call.cRows = c->rows;
  call.cCols = c->cols;
  call.lda = a->ld;
  call.ldb = b->ld;
  call.ldc = c->ld;
  call.ldd = d->ld;
  call.batch = c->batch;
  call.strideA = a->stride;
  call.strideB = b->stride;
  call.strideC = c->stride;
  call.strideD = d->stride;
  std::memcpy(&call.alpha, alpha, 4);
  std::memcpy(&call.beta, beta, 4);
  call.a = uint64_t(uintptr_t(aData));
  call.b = uint64_t(uintptr_t(bData));
  call.c = uint64_t(uintptr_t(cData));
  call.d = uint64_t(uintptr_t(dData));
  call.bias = hasBias(desc->epilogue) ? uint64_t(uintptr_t(desc->bias)) : 0;
  call.workspace = uint64_t(uintptr_t(workspace));
  call.workspaceBytes = workspaceBytes;
  call.algorithm = algo->data[0];
  call.stream = stream;
  call.captured = modelc_fake_cuda_is_capturing(stream);

  // What the real library would reject: memory it cannot reach.
  size_t needed = size_t(call.algorithm) * WorkspacePerAlgorithm;
  bool memory =
      modelc_fake_cuda_inside(call.a, extent(*a)) && modelc_fake_cuda_inside(call.b, extent(*b)) &&
      (call.beta == 0 || modelc_fake_cuda_inside(call.c, extent(*c))) &&
      modelc_fake_cuda_inside(call.d, extent(*d)) &&
      (!call.bias || modelc_fake_cuda_inside(
                         call.bias, m * modelc::fake::ltElementSize(
                                            desc->biasType < 0 ? d->type : desc->biasType))) &&
      (needed == 0 ||
       (workspaceBytes >= needed && modelc_fake_cuda_inside(call.workspace, needed)));
  if (!memory || (hasBias(desc->epilogue) && !desc->bias))
    return CUBLAS_STATUS_INVALID_VALUE;
  {
    std::lock_guard<std::mutex> lock(recorded().mutex);
    recorded().calls.push_back(call);
  }

  cublasLtMatrixLayoutOpaque_t la = *a, lb = *b, lc = *c, ld = *d;
  cublasLtMatmulDescOpaque_t op = *desc;
  std::function<void()> work = [=] {
    using modelc::fake::LtMatrixView;
    modelc::fake::computeLtProduct(op.transA == CUBLAS_OP_T, op.transB == CUBLAS_OP_T, m, n, k,
                                   lc.batch, LtMatrixView{la.type, call.a, la.ld, la.stride},
                                   LtMatrixView{lb.type, call.b, lb.ld, lb.stride},
                                   LtMatrixView{lc.type, call.c, lc.ld, lc.stride},
                                   LtMatrixView{ld.type, call.d, ld.ld, ld.stride}, call.alpha,
                                   call.beta, call.bias, op.biasType < 0 ? ld.type : op.biasType,
                                   op.epilogue, op.compute == CUBLAS_COMPUTE_32F_FAST_TF32);
  };
  if (modelc_fake_cuda_enqueue(stream, &work, microsecondsOf(call.algorithm)) != 0)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  return CUBLAS_STATUS_SUCCESS;
}

/// The calls recorded so far (up to `capacity` of them, oldest first) and
/// their number.
size_t modelc_fake_cublaslt_matmuls(LtCall *calls, size_t capacity) {
  std::lock_guard<std::mutex> lock(recorded().mutex);
  for (size_t i = 0; i < capacity && i < recorded().calls.size(); ++i)
    calls[i] = recorded().calls[i];
  return recorded().calls.size();
}

/// The last call recorded; false when there is none.
bool modelc_fake_cublaslt_last(LtCall *call) {
  std::lock_guard<std::mutex> lock(recorded().mutex);
  if (recorded().calls.empty())
    return false;
  *call = recorded().calls.back();
  return true;
}

void modelc_fake_cublaslt_reset() {
  std::lock_guard<std::mutex> lock(recorded().mutex);
  recorded().calls.clear();
}

} // extern "C"

// Each export has the type the wrapper calls it as (CublasLtApi.h).
#define MODELC_CHECK_EXPORT(name)                                                                  \
  static_assert(std::is_same_v<decltype(&::name), PFN_##name>, #name " drifted from "              \
                                                                     "CublasLtApi.h");
MODELC_CHECK_EXPORT(cublasLtGetVersion)
MODELC_CHECK_EXPORT(cublasLtGetStatusName)
MODELC_CHECK_EXPORT(cublasLtGetStatusString)
MODELC_CHECK_EXPORT(cublasLtCreate)
MODELC_CHECK_EXPORT(cublasLtDestroy)
MODELC_CHECK_EXPORT(cublasLtMatmulDescCreate)
MODELC_CHECK_EXPORT(cublasLtMatmulDescDestroy)
MODELC_CHECK_EXPORT(cublasLtMatmulDescSetAttribute)
MODELC_CHECK_EXPORT(cublasLtMatrixLayoutCreate)
MODELC_CHECK_EXPORT(cublasLtMatrixLayoutDestroy)
MODELC_CHECK_EXPORT(cublasLtMatrixLayoutSetAttribute)
MODELC_CHECK_EXPORT(cublasLtMatmulPreferenceCreate)
MODELC_CHECK_EXPORT(cublasLtMatmulPreferenceDestroy)
MODELC_CHECK_EXPORT(cublasLtMatmulPreferenceSetAttribute)
MODELC_CHECK_EXPORT(cublasLtMatmulAlgoGetHeuristic)
MODELC_CHECK_EXPORT(cublasLtMatmul)
#undef MODELC_CHECK_EXPORT
