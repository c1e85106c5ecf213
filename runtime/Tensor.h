//===- Tensor.h - Element types, devices and host tensors ------*- C++ -*-===//
//
// A Tensor is a typed, shaped view of bytes: dtype, shape, strides (counted
// in elements), the device the bytes live on, and a storage handle. The
// storage is either owning (a zero-filled, 64-byte aligned host allocation)
// or borrowed (someone else's bytes, optionally kept alive through a
// shared_ptr, e.g. a memory-mapped weights file). Copying a Tensor shares
// its storage, like a PyTorch tensor; `contiguous()` makes a private copy.
//
// The type string `str()` matches the compiler's spelling of tensor types:
// `f32[4, 784] @ cpu`, `i64[] @ cuda:0`.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_TENSOR_H
#define MODELC_RUNTIME_TENSOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

namespace llvm {
class raw_ostream;
}

namespace modelc::runtime {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Element types. f16 and bf16 elements are stored as raw 16-bit patterns
/// (see Float16.h); bool elements are one byte holding 0 or 1.
enum class DType : uint8_t { F16, BF16, F32, F64, I32, I64, Bool };

inline constexpr DType AllDTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64,
                                      DType::I32, DType::I64,  DType::Bool};

/// The language's spelling: "f16", "bf16", "f32", "f64", "i32", "i64", "bool".
llvm::StringRef dtypeName(DType dtype);
/// The inverse of dtypeName; std::nullopt for anything else.
std::optional<DType> dtypeFromName(llvm::StringRef name);
/// Bytes per element.
size_t dtypeSize(DType dtype);
bool isFloatingPoint(DType dtype);
/// The index of the first byte that is neither 0 nor 1: such a byte is no
/// valid bool element, and file readers reject it.
std::optional<size_t> findInvalidBoolByte(llvm::ArrayRef<uint8_t> bytes);

/// The DType whose elements are stored as a C++ T. f16 and bf16 have no C++
/// type of their own; their raw bits are read as uint16_t (see Tensor::values).
template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::F32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::F64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::I32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::I64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

/// Where a tensor's bytes live. Printed as `cpu` or `cuda:<index>`; the index
/// of a cpu device is always 0.
struct Device {
  enum class Kind : uint8_t { CPU, CUDA };
  Kind kind = Kind::CPU;
  int index = 0;

  static Device cpu() { return {Kind::CPU, 0}; }
  static Device cuda(int index) { return {Kind::CUDA, index}; }
  bool isCPU() const { return kind == Kind::CPU; }
  std::string str() const;
  friend bool operator==(const Device &, const Device &) = default;
};

/// Parses `cpu` or `cuda:<n>` (n a non-negative decimal).
llvm::Expected<Device> parseDevice(llvm::StringRef text);
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const Device &device);

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

using Shape = llvm::SmallVector<int64_t, 4>;

/// The product of the dims, or std::nullopt when a dim is negative or the
/// product overflows int64 (file parsers must not trust their headers).
std::optional<int64_t> checkedNumElements(llvm::ArrayRef<int64_t> shape);
/// numel * dtypeSize(dtype), or std::nullopt as for checkedNumElements.
std::optional<int64_t> checkedByteSize(DType dtype, llvm::ArrayRef<int64_t> shape);
/// Strides, in elements, of a dense row-major (C order) layout.
Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape);
/// `f32[4, 784]`: the tensor type without a device.
std::string formatTensorType(DType dtype, llvm::ArrayRef<int64_t> shape);
/// `f32[4, 784] @ cpu`.
std::string formatTensorType(DType dtype, llvm::ArrayRef<int64_t> shape, Device device);

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

class Tensor {
public:
  /// Byte alignment of every owning allocation.
  static constexpr size_t Alignment = 64;

  /// A null tensor: no storage. Only assignment and isNull() are meaningful.
  Tensor() = default;

  /// A new owning, zero-filled, row-major host tensor. Dims must be >= 0.
  static Tensor zeros(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// zeros() without the fill, for a buffer whose every element is written
  /// before it is read (a compiled fn's outputs).
  static Tensor uninitialized(DType dtype, llvm::ArrayRef<int64_t> shape);
  /// A new owning row-major host tensor holding a copy of `bytes`
  /// (numel * dtypeSize(dtype) bytes, row-major).
  static Tensor copyOf(DType dtype, llvm::ArrayRef<int64_t> shape, const void *bytes);
  /// A new owning host tensor filled from `values` (numel of them).
  template <typename T>
  static Tensor fromValues(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<T> values);

  /// A read-only, row-major view of bytes owned elsewhere. `keepAlive`, if
  /// given, holds the owner (e.g. a mapped file) for as long as any view of
  /// this tensor exists.
  static Tensor borrow(DType dtype, llvm::ArrayRef<int64_t> shape, const void *data,
                       std::shared_ptr<const void> keepAlive = nullptr,
                       Device device = Device::cpu());
  /// As borrow(), but the tensor may write to the bytes.
  static Tensor borrowMutable(DType dtype, llvm::ArrayRef<int64_t> shape, void *data,
                              std::shared_ptr<const void> keepAlive = nullptr,
                              Device device = Device::cpu());

  bool isNull() const { return !Storage; }
  DType dtype() const { return Type; }
  llvm::ArrayRef<int64_t> shape() const { return Dims; }
  llvm::ArrayRef<int64_t> strides() const { return Strides; }
  Device device() const { return Where; }
  size_t rank() const { return Dims.size(); }
  int64_t numel() const;
  /// numel() * dtypeSize(dtype()): the bytes of the elements, not of the
  /// storage (a strided view may span more).
  size_t nbytes() const { return size_t(numel()) * dtypeSize(Type); }
  /// True when the strides are the row-major strides of the shape (dims of
  /// extent 1 may have any stride).
  bool isContiguous() const;
  /// True for storage this tensor allocated itself.
  bool isOwning() const { return Owning; }
  bool isWritable() const { return Writable; }

  /// The first element's address (device memory for a non-cpu tensor).
  const void *data() const { return Storage.get(); }
  void *mutableData() const {
    assert(Writable && "tensor storage is read-only");
    return Storage.get();
  }

  /// The elements of a contiguous cpu tensor as T (uint16_t for f16/bf16).
  template <typename T> llvm::ArrayRef<T> values() const {
    assertReadableAs<T>();
    return llvm::ArrayRef<T>(static_cast<const T *>(data()), size_t(numel()));
  }
  template <typename T> llvm::MutableArrayRef<T> mutableValues() const {
    assertReadableAs<T>();
    return llvm::MutableArrayRef<T>(static_cast<T *>(mutableData()), size_t(numel()));
  }

  /// The element at `index` (one coordinate per dim), converted to double;
  /// any dtype and any strides. i64 values beyond 2^53 lose precision.
  double getAsDouble(llvm::ArrayRef<int64_t> index) const;
  /// Stores `value` at `index`, converted to dtype() (f16/bf16 round to
  /// nearest even; integers truncate toward zero; bool is value != 0).
  void setFromDouble(llvm::ArrayRef<int64_t> index, double value) const;
  /// Offset, in elements, of `index` from data().
  int64_t elementOffset(llvm::ArrayRef<int64_t> index) const;

  /// A view with dims `a` and `b` swapped (shares storage; not contiguous
  /// in general).
  Tensor transpose(unsigned a, unsigned b) const;
  /// A contiguous, owning, writable copy on the cpu.
  Tensor contiguous() const;

  /// The tensor's type: `f32[4, 784] @ cpu`.
  std::string str() const { return formatTensorType(Type, Dims, Where); }

private:
  static Tensor makeBorrowed(DType dtype, llvm::ArrayRef<int64_t> shape, std::byte *data,
                             std::shared_ptr<const void> keepAlive, Device device, bool writable);
  template <typename T> void assertReadableAs() const {
    if constexpr (std::is_same_v<T, uint16_t>)
      assert((Type == DType::F16 || Type == DType::BF16) && "uint16_t reads f16/bf16 bits");
    else
      assert(Type == DTypeOf<T>::value && "element type does not match dtype");
    assert(Where.isCPU() && isContiguous() && "values() needs a contiguous cpu tensor");
  }

  DType Type = DType::F32;
  Shape Dims;
  Shape Strides;
  Device Where;
  /// Points at the first element; its control block (if any) owns the bytes.
  std::shared_ptr<std::byte> Storage;
  bool Owning = false;
  bool Writable = false;
};

template <typename T>
Tensor Tensor::fromValues(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<T> values) {
  constexpr DType dtype = DTypeOf<T>::value;
  assert(checkedNumElements(shape) == int64_t(values.size()) && "value count != numel");
  return copyOf(dtype, shape, values.data());
}

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_TENSOR_H
