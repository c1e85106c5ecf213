//===- Tensor.cpp - Element types, devices and host tensors ---------------===//
#include "runtime/Tensor.h"
#include "runtime/Float16.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemAlloc.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace llvm;

namespace modelc::runtime {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

StringRef dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "bool";
  }
  llvm_unreachable("unknown DType");
}

std::optional<DType> dtypeFromName(StringRef name) {
  for (DType dtype : AllDTypes)
    if (dtypeName(dtype) == name)
      return dtype;
  return std::nullopt;
}

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  }
  llvm_unreachable("unknown DType");
}

bool isFloatingPoint(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::F64;
}

std::optional<size_t> findInvalidBoolByte(ArrayRef<uint8_t> bytes) {
  const auto *bad = llvm::find_if(bytes, [](uint8_t byte) { return byte > 1; });
  if (bad == bytes.end())
    return std::nullopt;
  return size_t(bad - bytes.begin());
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

std::string Device::str() const {
  return isCPU() ? std::string("cpu") : "cuda:" + std::to_string(index);
}

Expected<Device> parseDevice(StringRef text) {
  if (text == "cpu")
    return Device::cpu();
  StringRef indexText = text;
  unsigned index = 0;
  if (indexText.consume_front("cuda:") && !indexText.empty() && isDigit(indexText.front()) &&
      !indexText.getAsInteger(10, index) && index <= unsigned(std::numeric_limits<int>::max()))
    return Device::cuda(int(index));
  return createStringError("invalid device '" + text + "': expected 'cpu' or 'cuda:<index>'");
}

raw_ostream &operator<<(raw_ostream &os, const Device &device) { return os << device.str(); }

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

std::optional<int64_t> checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || MulOverflow(count, dim, count))
      return std::nullopt;
  return count;
}

std::optional<int64_t> checkedByteSize(DType dtype, ArrayRef<int64_t> shape) {
  std::optional<int64_t> count = checkedNumElements(shape);
  int64_t bytes = 0;
  if (!count || MulOverflow(*count, int64_t(dtypeSize(dtype)), bytes))
    return std::nullopt;
  return bytes;
}

Shape rowMajorStrides(ArrayRef<int64_t> shape) {
  Shape strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i)
    strides[i - 2] = strides[i - 1] * shape[i - 1];
  return strides;
}

std::string formatTensorType(DType dtype, ArrayRef<int64_t> shape) {
  std::string text;
  raw_string_ostream os(text);
  os << dtypeName(dtype) << '[';
  interleaveComma(shape, os);
  os << ']';
  return text;
}

std::string formatTensorType(DType dtype, ArrayRef<int64_t> shape, Device device) {
  return formatTensorType(dtype, shape) + " @ " + device.str();
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor Tensor::zeros(DType dtype, ArrayRef<int64_t> shape) {
  Tensor tensor = uninitialized(dtype, shape);
  std::memset(tensor.Storage.get(), 0, std::max(tensor.nbytes(), Alignment));
  return tensor;
}

Tensor Tensor::uninitialized(DType dtype, ArrayRef<int64_t> shape) {
  std::optional<int64_t> count = checkedNumElements(shape);
  assert(count && "negative dim or numel overflow");
  // Never allocate 0 bytes: a zero-element tensor still has a non-null data().
  size_t bytes = std::max(size_t(*count) * dtypeSize(dtype), Alignment);
  auto *memory = static_cast<std::byte *>(allocate_buffer(bytes, Alignment));

  Tensor tensor;
  tensor.Type = dtype;
  tensor.Dims.assign(shape.begin(), shape.end());
  tensor.Strides = rowMajorStrides(shape);
  tensor.Where = Device::cpu();
  tensor.Storage = std::shared_ptr<std::byte>(
      memory, [bytes](std::byte *p) { deallocate_buffer(p, bytes, Alignment); });
  tensor.Owning = true;
  tensor.Writable = true;
  return tensor;
}

Tensor Tensor::copyOf(DType dtype, ArrayRef<int64_t> shape, const void *bytes) {
  Tensor tensor = uninitialized(dtype, shape);
  if (tensor.nbytes())
    std::memcpy(tensor.mutableData(), bytes, tensor.nbytes());
  return tensor;
}

Tensor Tensor::makeBorrowed(DType dtype, ArrayRef<int64_t> shape, std::byte *data,
                            std::shared_ptr<const void> keepAlive, Device device, bool writable) {
  assert(data && "a borrowed tensor needs a non-null data pointer");
  assert(checkedNumElements(shape) && "negative dim or numel overflow");
  Tensor tensor;
  tensor.Type = dtype;
  tensor.Dims.assign(shape.begin(), shape.end());
  tensor.Strides = rowMajorStrides(shape);
  tensor.Where = device;
  // The aliasing constructor: points at `data`, shares ownership of
  // `keepAlive` (or of nothing, for a plain borrowed pointer).
  tensor.Storage = std::shared_ptr<std::byte>(std::move(keepAlive), data);
  tensor.Owning = false;
  tensor.Writable = writable;
  return tensor;
}

Tensor Tensor::borrow(DType dtype, ArrayRef<int64_t> shape, const void *data,
                      std::shared_ptr<const void> keepAlive, Device device) {
  // Read-only: Writable stays false, so mutableData() refuses this pointer.
  auto *bytes = const_cast<std::byte *>(static_cast<const std::byte *>(data));
  return makeBorrowed(dtype, shape, bytes, std::move(keepAlive), device, /*writable=*/false);
}

Tensor Tensor::borrowMutable(DType dtype, ArrayRef<int64_t> shape, void *data,
                             std::shared_ptr<const void> keepAlive, Device device) {
  return makeBorrowed(dtype, shape, static_cast<std::byte *>(data), std::move(keepAlive), device,
                      /*writable=*/true);
}

int64_t Tensor::numel() const {
  int64_t count = 1;
  for (int64_t dim : Dims)
    count *= dim; // Checked when the tensor was made.
  return count;
}

bool Tensor::isContiguous() const {
  int64_t expected = 1;
  for (size_t i = Dims.size(); i > 0; --i) {
    if (Dims[i - 1] != 1 && Strides[i - 1] != expected)
      return false;
    expected *= Dims[i - 1];
  }
  return true;
}

int64_t Tensor::elementOffset(ArrayRef<int64_t> index) const {
  assert(index.size() == Dims.size() && "index rank differs from tensor rank");
  int64_t offset = 0;
  for (auto [i, dim, stride] : llvm::zip_equal(index, Dims, Strides)) {
    assert(i >= 0 && i < dim && "index out of bounds");
    (void)dim;
    offset += i * stride;
  }
  return offset;
}

double Tensor::getAsDouble(ArrayRef<int64_t> index) const {
  assert(Where.isCPU() && "element access needs a cpu tensor");
  const std::byte *at = Storage.get() + elementOffset(index) * int64_t(dtypeSize(Type));
  auto load = [at]<typename T>(T) {
    T value;
    std::memcpy(&value, at, sizeof(T));
    return value;
  };
  switch (Type) {
  case DType::F16:
    return halfBitsToFloat(load(uint16_t()));
  case DType::BF16:
    return bfloat16BitsToFloat(load(uint16_t()));
  case DType::F32:
    return load(float());
  case DType::F64:
    return load(double());
  case DType::I32:
    return load(int32_t());
  case DType::I64:
    return double(load(int64_t()));
  case DType::Bool:
    return load(uint8_t()) != 0 ? 1.0 : 0.0;
  }
  llvm_unreachable("unknown DType");
}

/// `value` as integer type T, truncated toward zero and saturated to T's
/// range (NaN becomes 0), so no out-of-range conversion is undefined.
template <typename T> static T saturatingCast(double value) {
  if (std::isnan(value))
    return 0;
  if (value <= double(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (value >= double(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return T(value);
}

void Tensor::setFromDouble(ArrayRef<int64_t> index, double value) const {
  assert(Where.isCPU() && "element access needs a cpu tensor");
  std::byte *at =
      static_cast<std::byte *>(mutableData()) + elementOffset(index) * int64_t(dtypeSize(Type));
  auto store = [at](auto stored) { std::memcpy(at, &stored, sizeof(stored)); };
  switch (Type) {
  case DType::F16:
    return store(floatToHalfBits(float(value)));
  case DType::BF16:
    return store(floatToBFloat16Bits(float(value)));
  case DType::F32:
    return store(float(value));
  case DType::F64:
    return store(value);
  case DType::I32:
    return store(saturatingCast<int32_t>(value));
  case DType::I64:
    return store(saturatingCast<int64_t>(value));
  case DType::Bool:
    return store(uint8_t(value != 0.0));
  }
  llvm_unreachable("unknown DType");
}

Tensor Tensor::transpose(unsigned a, unsigned b) const {
  assert(a < rank() && b < rank() && "transpose dim out of range");
  Tensor view = *this;
  std::swap(view.Dims[a], view.Dims[b]);
  std::swap(view.Strides[a], view.Strides[b]);
  return view;
}

Tensor Tensor::contiguous() const {
  assert(Where.isCPU() && "contiguous() copies host memory");
  Tensor copy = zeros(Type, Dims);
  size_t itemSize = dtypeSize(Type);
  if (isContiguous()) {
    if (nbytes())
      std::memcpy(copy.mutableData(), data(), nbytes());
    return copy;
  }
  // Walk the source in row-major order with an odometer over the index.
  auto *out = static_cast<std::byte *>(copy.mutableData());
  Shape index(rank(), 0);
  for (int64_t n = 0, e = numel(); n < e; ++n) {
    std::memcpy(out + n * itemSize, Storage.get() + elementOffset(index) * int64_t(itemSize),
                itemSize);
    for (size_t d = rank(); d > 0; --d) {
      if (++index[d - 1] < Dims[d - 1])
        break;
      index[d - 1] = 0;
    }
  }
  return copy;
}

} // namespace modelc::runtime
