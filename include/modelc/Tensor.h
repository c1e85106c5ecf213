//===- modelc/Tensor.h - Element types, devices and tensors -------------===//
//
// A Tensor is a dtype, a shape and the device its bytes live on, with
// shared storage: copying a Tensor shares its bytes (like a PyTorch tensor).
// Host tensors either own a copy of the caller's bytes or borrow them (the
// caller keeps them alive and unchanged while the tensor is in use).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PUBLIC_TENSOR_H
#define MODELC_PUBLIC_TENSOR_H

#include "modelc/Export.h"
#include "modelc/Result.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace modelc::api {

/// Element types; f16 and bf16 elements are raw 16-bit patterns, bool
/// elements one byte holding 0 or 1.
enum class DType { F16, BF16, F32, F64, I32, I64, Bool };

/// "f16", "bf16", "f32", "f64", "i32", "i64", "bool".
MODELC_API const char *dtypeName(DType dtype);
/// Bytes per element.
MODELC_API size_t dtypeSize(DType dtype);

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };

/// Where a tensor lives: `cpu` or `cuda:N`.
struct Device {
  enum class Kind { CPU, CUDA };
  Kind kind = Kind::CPU;
  int index = 0;

  static Device cpu() { return {Kind::CPU, 0}; }
  static Device cuda(int index) { return {Kind::CUDA, index}; }
  bool isCPU() const { return kind == Kind::CPU; }
  friend bool operator==(const Device &, const Device &) = default;

  /// `cpu`, `cuda:0`.
  MODELC_API std::string str() const;
  /// Parses `cpu` or `cuda:N`.
  MODELC_API static Result<Device> parse(std::string_view text);
};

/// What runs `cuda:N`, for the whole process: the CUDA driver (a real GPU,
/// libcuda.so.1 loaded at run time) or the CPU emulator (a test device that
/// compiles kernels with the host's C++ compiler). `Default` follows
/// $MODELC_CUDA (`emulate`), else the driver.
enum class CudaBackend { Default, Driver, Emulator };

/// Chooses the backend of cuda tensors and models created from now on.
/// Device memory belongs to the backend that allocated it: a tensor made
/// before a switch fails (with an error, never a crash) when used after it.
MODELC_API void setCudaBackend(CudaBackend backend);
/// The backend in effect: Driver or Emulator.
MODELC_API CudaBackend cudaBackend();

class MODELC_API Tensor {
public:
  /// A null tensor (no storage); isNull() is true.
  Tensor();
  ~Tensor();
  Tensor(const Tensor &);
  Tensor &operator=(const Tensor &);
  Tensor(Tensor &&) noexcept;
  Tensor &operator=(Tensor &&) noexcept;

  /// A host tensor holding a copy of `data` (numel * dtypeSize bytes,
  /// row-major). Fails on a negative dim or an overflowing size.
  static Result<Tensor> copyFromHost(DType dtype, const std::vector<int64_t> &shape,
                                     const void *data);
  /// A host tensor over the caller's bytes, without a copy: they must stay
  /// alive and unchanged while any copy of this Tensor is used.
  static Result<Tensor> borrowHost(DType dtype, const std::vector<int64_t> &shape,
                                   const void *data);
  /// A zero-filled tensor on `device`.
  static Result<Tensor> zeros(DType dtype, const std::vector<int64_t> &shape,
                              Device device = Device::cpu());
  /// A host tensor from typed values (values.size() must be the numel).
  template <typename T>
  static Result<Tensor> fromValues(const std::vector<int64_t> &shape, const std::vector<T> &values);

  bool isNull() const { return !impl_; }
  DType dtype() const;
  std::vector<int64_t> shape() const;
  Device device() const;
  size_t rank() const;
  int64_t numel() const;
  size_t nbytes() const;
  /// `f32[4, 784] @ cpu`.
  std::string str() const;

  /// A copy of this tensor on `device` (a new tensor even on the same one).
  Result<Tensor> to(Device device) const;
  /// Copies the elements, row-major, into `out` (`bytes` must be nbytes()).
  Status copyToHost(void *out, size_t bytes) const;
  /// The elements as T (T must match the dtype).
  template <typename T> Result<std::vector<T>> toVector() const;
  /// The elements of a host tensor (null for device tensors).
  const void *hostData() const;

  struct Impl;
  /// For the library's own use.
  explicit Tensor(std::shared_ptr<Impl> impl);
  const std::shared_ptr<Impl> &impl() const { return impl_; }

private:
  std::shared_ptr<Impl> impl_;
};

template <typename T>
Result<Tensor> Tensor::fromValues(const std::vector<int64_t> &shape, const std::vector<T> &values) {
  int64_t count = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(count, d, &count))
      return copyFromHost(DTypeOf<T>::value, shape, nullptr); // reports the bad shape
  if (count != int64_t(values.size()))
    return Result<Tensor>::failure(
        Diagnostic::error("fromValues: " + std::to_string(values.size()) +
                          " value(s) for a shape of " + std::to_string(count) + " element(s)"));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return copyFromHost(DType::Bool, shape, bytes.data());
  } else {
    return copyFromHost(DTypeOf<T>::value, shape, values.data());
  }
}

template <typename T> Result<std::vector<T>> Tensor::toVector() const {
  if (isNull() || dtype() != DTypeOf<T>::value)
    return Result<std::vector<T>>::failure(
        Diagnostic::error(std::string("toVector: the tensor is ") + (isNull() ? "null" : str()) +
                          ", not " + dtypeName(DTypeOf<T>::value)));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(nbytes());
    Status copied = copyToHost(bytes.data(), bytes.size());
    if (!copied)
      return Result<std::vector<T>>::failure(copied.diagnostics());
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<T> values(static_cast<size_t>(numel()));
    Status copied = copyToHost(values.data(), nbytes());
    if (!copied)
      return Result<std::vector<T>>::failure(copied.diagnostics());
    return values;
  }
}

} // namespace modelc::api

#endif // MODELC_PUBLIC_TENSOR_H
