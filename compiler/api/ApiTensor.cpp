//===- ApiTensor.cpp - Public tensors over runtime::Tensor ----------------===//
//
// Host tensors are runtime tensors. A cuda tensor is a runtime tensor whose
// storage is a device address from runtime/cuda's CudaBackend (the driver or
// the emulator: setCudaBackend, else MODELC_CUDA), freed when the last copy
// goes.
//
//===----------------------------------------------------------------------===//

#include "api/ApiImpl.h"

#include "runtime/cuda/CudaBackend.h"

#include "llvm/ADT/StringExtras.h"

#include <atomic>
#include <cstring>

namespace modelc::api {

namespace {

/// setCudaBackend's choice; Default until it is called.
std::atomic<CudaBackend> chosenBackend{CudaBackend::Default};

Diagnostic tensorError(const std::string &message) { return Diagnostic::error(message); }

std::string shapeText(const std::vector<int64_t> &shape) {
  return "[" +
         llvm::join(llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), ", ") +
         "]";
}

/// Nullopt (with `error` set) unless `shape` is valid and its bytes fit.
std::optional<size_t> checkedBytes(DType dtype, const std::vector<int64_t> &shape,
                                   std::string &error) {
  std::optional<int64_t> bytes = runtime::checkedByteSize(toRuntime(dtype), shape);
  if (!bytes) {
    error = "invalid tensor shape " + shapeText(shape) +
            ": dims must be non-negative and the size must fit in 64 bits";
    return std::nullopt;
  }
  return size_t(*bytes);
}

/// Device memory holding `bytes`, freed through the backend when released.
llvm::Expected<runtime::Tensor> allocateOnCuda(DType dtype, const std::vector<int64_t> &shape,
                                               int index) {
  llvm::Expected<cuda::CudaBackend &> backend = apiCudaBackend(index);
  if (!backend)
    return backend.takeError();
  size_t bytes = size_t(*runtime::checkedByteSize(toRuntime(dtype), shape));
  llvm::Expected<cuda::DeviceAddress> address =
      backend->allocate(index, std::max<size_t>(bytes, 1));
  if (!address)
    return address.takeError();
  cuda::CudaBackend *owner = &*backend;
  cuda::DeviceAddress at = *address;
  std::shared_ptr<const void> release(
      reinterpret_cast<const void *>(uintptr_t(at)),
      [owner, index, at](const void *) { llvm::consumeError(owner->free(index, at)); });
  return runtime::Tensor::borrowMutable(toRuntime(dtype), shape,
                                        reinterpret_cast<void *>(uintptr_t(at)), release,
                                        runtime::Device::cuda(index));
}

cuda::DeviceAddress deviceAddress(const runtime::Tensor &t) {
  return cuda::DeviceAddress(reinterpret_cast<uintptr_t>(t.data()));
}

} // namespace

void setCudaBackend(CudaBackend backend) { chosenBackend = backend; }

CudaBackend cudaBackend() {
  return apiCudaMode() == cudaexec::CudaMode::Emulate ? CudaBackend::Emulator : CudaBackend::Driver;
}

cudaexec::CudaMode apiCudaMode() {
  switch (chosenBackend.load()) {
  case CudaBackend::Driver:
    return cudaexec::CudaMode::Driver;
  case CudaBackend::Emulator:
    return cudaexec::CudaMode::Emulate;
  case CudaBackend::Default:
    break;
  }
  return cudaexec::cudaModeFromEnvironment();
}

llvm::Expected<cuda::CudaBackend &> apiCudaBackend(int device) {
  return cudaexec::backendFor(device, apiCudaMode(), /*compilesKernels=*/false);
}

//===----------------------------------------------------------------------===//
// dtypes and devices
//===----------------------------------------------------------------------===//

runtime::DType toRuntime(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return runtime::DType::F16;
  case DType::BF16:
    return runtime::DType::BF16;
  case DType::F32:
    return runtime::DType::F32;
  case DType::F64:
    return runtime::DType::F64;
  case DType::I32:
    return runtime::DType::I32;
  case DType::I64:
    return runtime::DType::I64;
  case DType::Bool:
    return runtime::DType::Bool;
  }
  return runtime::DType::F32;
}

DType fromRuntime(runtime::DType dtype) {
  switch (dtype) {
  case runtime::DType::F16:
    return DType::F16;
  case runtime::DType::BF16:
    return DType::BF16;
  case runtime::DType::F32:
    return DType::F32;
  case runtime::DType::F64:
    return DType::F64;
  case runtime::DType::I32:
    return DType::I32;
  case runtime::DType::I64:
    return DType::I64;
  case runtime::DType::Bool:
    return DType::Bool;
  }
  return DType::F32;
}

runtime::Device toRuntime(Device device) {
  return device.isCPU() ? runtime::Device::cpu() : runtime::Device::cuda(device.index);
}

Device fromRuntime(runtime::Device device) {
  return device.isCPU() ? Device::cpu() : Device::cuda(device.index);
}

const char *dtypeName(DType dtype) { return runtime::dtypeName(toRuntime(dtype)).data(); }

size_t dtypeSize(DType dtype) { return runtime::dtypeSize(toRuntime(dtype)); }

std::string Device::str() const { return toRuntime(*this).str(); }

Result<Device> Device::parse(std::string_view text) {
  llvm::Expected<runtime::Device> device = runtime::parseDevice(llvm::StringRef(text));
  if (!device)
    return Result<Device>::failure(errorDiagnostic(device.takeError()));
  return fromRuntime(*device);
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor() = default;
Tensor::~Tensor() = default;
Tensor::Tensor(const Tensor &) = default;
Tensor &Tensor::operator=(const Tensor &) = default;
Tensor::Tensor(Tensor &&) noexcept = default;
Tensor &Tensor::operator=(Tensor &&) noexcept = default;
Tensor::Tensor(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

Tensor wrapTensor(runtime::Tensor tensor) {
  return Tensor(std::make_shared<Tensor::Impl>(Tensor::Impl{std::move(tensor)}));
}

Result<Tensor> Tensor::copyFromHost(DType dtype, const std::vector<int64_t> &shape,
                                    const void *data) {
  std::string error;
  std::optional<size_t> bytes = checkedBytes(dtype, shape, error);
  if (!bytes)
    return Result<Tensor>::failure(tensorError("copyFromHost: " + error));
  if (!data && *bytes)
    return Result<Tensor>::failure(tensorError("copyFromHost: no data"));
  if (dtype == DType::Bool && data)
    if (std::optional<size_t> bad = runtime::findInvalidBoolByte(
            llvm::ArrayRef(static_cast<const uint8_t *>(data), *bytes)))
      return Result<Tensor>::failure(tensorError("copyFromHost: byte " + std::to_string(*bad) +
                                                 " is not a valid bool (0 or 1)"));
  if (!*bytes)
    return wrapTensor(runtime::Tensor::zeros(toRuntime(dtype), shape));
  return wrapTensor(runtime::Tensor::copyOf(toRuntime(dtype), shape, data));
}

Result<Tensor> Tensor::borrowHost(DType dtype, const std::vector<int64_t> &shape,
                                  const void *data) {
  std::string error;
  std::optional<size_t> bytes = checkedBytes(dtype, shape, error);
  if (!bytes)
    return Result<Tensor>::failure(tensorError("borrowHost: " + error));
  if (!data)
    return Result<Tensor>::failure(tensorError("borrowHost: no data"));
  return wrapTensor(runtime::Tensor::borrow(toRuntime(dtype), shape, data));
}

Result<Tensor> Tensor::zeros(DType dtype, const std::vector<int64_t> &shape, Device device) {
  std::string error;
  std::optional<size_t> bytes = checkedBytes(dtype, shape, error);
  if (!bytes)
    return Result<Tensor>::failure(tensorError("zeros: " + error));
  if (device.isCPU())
    return wrapTensor(runtime::Tensor::zeros(toRuntime(dtype), shape));
  llvm::Expected<runtime::Tensor> t = allocateOnCuda(dtype, shape, device.index);
  if (!t)
    return Result<Tensor>::failure(errorDiagnostic(t.takeError()));
  std::vector<uint8_t> zeroBytes(*bytes);
  Tensor result = wrapTensor(std::move(*t));
  if (*bytes)
    if (llvm::Error err = llvm::cantFail(apiCudaBackend(device.index))
                              .copyHostToDevice(device.index, deviceAddress(result.impl()->tensor),
                                                zeroBytes.data(), *bytes))
      return Result<Tensor>::failure(errorDiagnostic(std::move(err)));
  return result;
}

DType Tensor::dtype() const { return impl_ ? fromRuntime(impl_->tensor.dtype()) : DType::F32; }

std::vector<int64_t> Tensor::shape() const {
  if (!impl_)
    return {};
  llvm::ArrayRef<int64_t> dims = impl_->tensor.shape();
  return {dims.begin(), dims.end()};
}

Device Tensor::device() const {
  return impl_ ? fromRuntime(impl_->tensor.device()) : Device::cpu();
}

size_t Tensor::rank() const { return impl_ ? impl_->tensor.rank() : 0; }

int64_t Tensor::numel() const { return impl_ ? impl_->tensor.numel() : 0; }

size_t Tensor::nbytes() const { return impl_ ? impl_->tensor.nbytes() : 0; }

std::string Tensor::str() const { return impl_ ? impl_->tensor.str() : "null"; }

const void *Tensor::hostData() const {
  return impl_ && impl_->tensor.device().isCPU() ? impl_->tensor.data() : nullptr;
}

Status Tensor::copyToHost(void *out, size_t bytes) const {
  if (!impl_)
    return Status::failure(tensorError("copyToHost: the tensor is null"));
  const runtime::Tensor &t = impl_->tensor;
  if (bytes != t.nbytes())
    return Status::failure(tensorError("copyToHost: " + t.str() + " holds " +
                                       std::to_string(t.nbytes()) + " bytes, the buffer " +
                                       std::to_string(bytes)));
  if (!bytes)
    return Ok{};
  if (!out)
    return Status::failure(tensorError("copyToHost: no buffer"));
  if (t.device().isCPU()) {
    runtime::Tensor dense = t.isContiguous() ? t : t.contiguous();
    std::memcpy(out, dense.data(), bytes);
    return Ok{};
  }
  llvm::Expected<cuda::CudaBackend &> backend = apiCudaBackend(t.device().index);
  if (!backend)
    return Status::failure(errorDiagnostic(backend.takeError()));
  if (llvm::Error err = backend->copyDeviceToHost(t.device().index, out, deviceAddress(t), bytes))
    return Status::failure(errorDiagnostic(std::move(err)));
  return Ok{};
}

Result<Tensor> Tensor::to(Device device) const {
  if (!impl_)
    return Result<Tensor>::failure(tensorError("to: the tensor is null"));
  const runtime::Tensor &t = impl_->tensor;
  std::vector<int64_t> dims = shape();
  if (device.isCPU()) {
    Result<Tensor> host = zeros(dtype(), dims);
    if (!host)
      return host;
    Status copied = copyToHost(host->impl()->tensor.mutableData(), nbytes());
    if (!copied)
      return Result<Tensor>::failure(copied.diagnostics());
    return host;
  }
  llvm::Expected<runtime::Tensor> target = allocateOnCuda(dtype(), dims, device.index);
  if (!target)
    return Result<Tensor>::failure(errorDiagnostic(target.takeError()));
  cuda::CudaBackend &backend = llvm::cantFail(apiCudaBackend(device.index));
  cuda::DeviceAddress to = deviceAddress(*target);
  llvm::Error err = llvm::Error::success();
  if (!nbytes()) {
    // nothing to copy
  } else if (t.device().isCPU()) {
    runtime::Tensor dense = t.isContiguous() ? t : t.contiguous();
    err = backend.copyHostToDevice(device.index, to, dense.data(), nbytes());
  } else if (t.device().index == device.index) {
    err = backend.copyDeviceToDevice(device.index, to, deviceAddress(t), nbytes());
  } else {
    err = backend.copyPeer(device.index, to, t.device().index, deviceAddress(t), nbytes());
  }
  if (err)
    return Result<Tensor>::failure(errorDiagnostic(std::move(err)));
  return wrapTensor(std::move(*target));
}

} // namespace modelc::api
