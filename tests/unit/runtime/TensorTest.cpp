//===- TensorTest.cpp - DType, Device and Tensor ---------------------------===//
#include "runtime/Tensor.h"

#include "RuntimeTestSupport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace modelc::runtime;
using modelc::runtime::testing::failureText;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DTypeTest, NamesAndSizes) {
  EXPECT_EQ(dtypeName(DType::F16), "f16");
  EXPECT_EQ(dtypeName(DType::BF16), "bf16");
  EXPECT_EQ(dtypeName(DType::F32), "f32");
  EXPECT_EQ(dtypeName(DType::F64), "f64");
  EXPECT_EQ(dtypeName(DType::I32), "i32");
  EXPECT_EQ(dtypeName(DType::I64), "i64");
  EXPECT_EQ(dtypeName(DType::Bool), "bool");
  size_t expectedSizes[] = {2, 2, 4, 8, 4, 8, 1};
  for (auto [dtype, size] : llvm::zip_equal(AllDTypes, expectedSizes)) {
    EXPECT_EQ(dtypeSize(dtype), size) << dtypeName(dtype).str();
    EXPECT_EQ(dtypeFromName(dtypeName(dtype)), dtype);
  }
  EXPECT_EQ(dtypeFromName("float32"), std::nullopt);
  EXPECT_EQ(dtypeFromName(""), std::nullopt);
  EXPECT_TRUE(isFloatingPoint(DType::BF16));
  EXPECT_FALSE(isFloatingPoint(DType::I64));
  EXPECT_FALSE(isFloatingPoint(DType::Bool));
}

TEST(DeviceTest, PrintsAndParses) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cuda(0).str(), "cuda:0");
  EXPECT_EQ(Device::cuda(3).str(), "cuda:3");
  EXPECT_EQ(Device(), Device::cpu());
  EXPECT_NE(Device::cuda(0), Device::cuda(1));
  EXPECT_NE(Device::cuda(0), Device::cpu());

  for (llvm::StringRef text : {"cpu", "cuda:0", "cuda:12"}) {
    llvm::Expected<Device> device = parseDevice(text);
    ASSERT_TRUE(bool(device)) << llvm::toString(device.takeError());
    EXPECT_EQ(device->str(), text.str());
  }
  for (llvm::StringRef text : {"", "gpu", "cuda", "cuda:", "cuda:-1", "cuda:+1", "cuda:1x",
                               "cuda:99999999999", "CPU", "cpu:0"})
    EXPECT_THAT(failureText(parseDevice(text)), HasSubstr("invalid device '" + text.str() + "'"));
}

TEST(ShapeTest, NumElementsAndStrides) {
  EXPECT_EQ(checkedNumElements({}), 1);
  EXPECT_EQ(checkedNumElements({4, 784}), 3136);
  EXPECT_EQ(checkedNumElements({3, 0, 5}), 0);
  EXPECT_EQ(checkedNumElements({2, -1}), std::nullopt);
  EXPECT_EQ(checkedNumElements({int64_t(1) << 32, int64_t(1) << 32}), std::nullopt);
  EXPECT_EQ(checkedByteSize(DType::F64, {3, 5}), 120);
  EXPECT_EQ(checkedByteSize(DType::F64, {int64_t(1) << 61}), std::nullopt);
  EXPECT_THAT(rowMajorStrides({2, 3, 4}), ElementsAre(12, 4, 1));
  EXPECT_TRUE(rowMajorStrides({}).empty());
  EXPECT_EQ(formatTensorType(DType::F32, {4, 784}), "f32[4, 784]");
  EXPECT_EQ(formatTensorType(DType::I64, {}, Device::cuda(0)), "i64[] @ cuda:0");
}

TEST(TensorTest, ZerosIsOwningAlignedAndZeroFilled) {
  Tensor tensor = Tensor::zeros(DType::F32, {4, 784});
  EXPECT_FALSE(tensor.isNull());
  EXPECT_EQ(tensor.str(), "f32[4, 784] @ cpu");
  EXPECT_EQ(tensor.rank(), 2u);
  EXPECT_EQ(tensor.numel(), 3136);
  EXPECT_EQ(tensor.nbytes(), 3136u * 4);
  EXPECT_THAT(tensor.strides(), ElementsAre(784, 1));
  EXPECT_TRUE(tensor.isContiguous());
  EXPECT_TRUE(tensor.isOwning());
  EXPECT_TRUE(tensor.isWritable());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor.data()) % Tensor::Alignment, 0u);
  for (float value : tensor.values<float>())
    ASSERT_EQ(value, 0.0f);
}

TEST(TensorTest, ScalarsAndEmptyTensors) {
  Tensor scalar = Tensor::zeros(DType::I64, {});
  EXPECT_EQ(scalar.str(), "i64[] @ cpu");
  EXPECT_EQ(scalar.numel(), 1);
  scalar.setFromDouble({}, 42);
  EXPECT_EQ(scalar.values<int64_t>()[0], 42);

  Tensor empty = Tensor::zeros(DType::F16, {0, 3});
  EXPECT_EQ(empty.str(), "f16[0, 3] @ cpu");
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.nbytes(), 0u);
  EXPECT_NE(empty.data(), nullptr);
  EXPECT_TRUE(empty.contiguous().values<uint16_t>().empty());

  EXPECT_TRUE(Tensor().isNull());
}

TEST(TensorTest, ElementAccessConvertsEveryDType) {
  const double samples[] = {0.0, 1.0, -2.0, 3.0, 100.0};
  for (DType dtype : AllDTypes) {
    Tensor tensor = Tensor::zeros(dtype, {5});
    for (int64_t i = 0; i < 5; ++i)
      tensor.setFromDouble({i}, samples[i]);
    for (int64_t i = 0; i < 5; ++i) {
      double expected = dtype == DType::Bool ? double(samples[i] != 0.0) : samples[i];
      EXPECT_EQ(tensor.getAsDouble({i}), expected) << dtypeName(dtype).str() << " #" << i;
    }
  }
  // Narrowing rounds (f16, bf16) or truncates and saturates (integers).
  Tensor half = Tensor::zeros(DType::F16, {1});
  half.setFromDouble({0}, 0.1);
  EXPECT_EQ(half.values<uint16_t>()[0], 0x2e66);
  Tensor bf16 = Tensor::zeros(DType::BF16, {1});
  bf16.setFromDouble({0}, 1.0 / 3.0);
  EXPECT_EQ(bf16.values<uint16_t>()[0], 0x3eab);
  Tensor ints = Tensor::zeros(DType::I32, {4});
  ints.setFromDouble({0}, -2.7);
  ints.setFromDouble({1}, 1e20);
  ints.setFromDouble({2}, -1e20);
  ints.setFromDouble({3}, std::nan(""));
  EXPECT_THAT(ints.values<int32_t>(), ElementsAre(-2, std::numeric_limits<int32_t>::max(),
                                                  std::numeric_limits<int32_t>::min(), 0));
}

TEST(TensorTest, FromValuesAndTypedViews) {
  const int32_t values[] = {1, 2, 3, 4, 5, 6};
  Tensor tensor = Tensor::fromValues<int32_t>({2, 3}, values);
  EXPECT_EQ(tensor.str(), "i32[2, 3] @ cpu");
  EXPECT_THAT(tensor.values<int32_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(tensor.getAsDouble({1, 2}), 6);
  EXPECT_EQ(tensor.elementOffset({1, 1}), 4);
  tensor.mutableValues<int32_t>()[0] = -7;
  EXPECT_EQ(tensor.getAsDouble({0, 0}), -7);

  const bool flags[] = {true, false, true};
  EXPECT_THAT(Tensor::fromValues<bool>({3}, flags).values<bool>(), ElementsAre(true, false, true));
}

TEST(TensorTest, CopiesShareStorage) {
  Tensor original = Tensor::zeros(DType::F64, {2});
  Tensor copy = original;
  copy.setFromDouble({1}, 2.5);
  EXPECT_EQ(original.getAsDouble({1}), 2.5);
  EXPECT_EQ(copy.data(), original.data());
}

TEST(TensorTest, TransposeIsAStridedViewAndContiguousCopies) {
  const float values[] = {0, 1, 2, 3, 4, 5};
  Tensor matrix = Tensor::fromValues<float>({2, 3}, values);
  Tensor transposed = matrix.transpose(0, 1);
  EXPECT_EQ(transposed.str(), "f32[3, 2] @ cpu");
  EXPECT_THAT(transposed.strides(), ElementsAre(1, 3));
  EXPECT_FALSE(transposed.isContiguous());
  EXPECT_EQ(transposed.data(), matrix.data());
  EXPECT_EQ(transposed.getAsDouble({2, 1}), 5);
  EXPECT_EQ(transposed.getAsDouble({1, 0}), 1);

  Tensor dense = transposed.contiguous();
  EXPECT_TRUE(dense.isContiguous());
  EXPECT_TRUE(dense.isOwning());
  EXPECT_NE(dense.data(), matrix.data());
  EXPECT_THAT(dense.values<float>(), ElementsAre(0, 3, 1, 4, 2, 5));

  // A dim of extent 1 may have any stride and still be contiguous.
  const float row[] = {1, 2, 3};
  Tensor column = Tensor::fromValues<float>({1, 3}, row).transpose(0, 1);
  EXPECT_THAT(column.strides(), ElementsAre(1, 3));
  EXPECT_TRUE(column.isContiguous());
}

TEST(TensorTest, BorrowedStorageIsKeptAliveAndReadOnly) {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4});
  std::weak_ptr<std::vector<float>> watch = owner;
  Tensor view = Tensor::borrow(DType::F32, {2, 2}, owner->data(), owner);
  owner.reset();
  EXPECT_FALSE(watch.expired()) << "the tensor must keep its owner alive";
  EXPECT_FALSE(view.isOwning());
  EXPECT_FALSE(view.isWritable());
  EXPECT_EQ(view.str(), "f32[2, 2] @ cpu");
  EXPECT_THAT(view.values<float>(), ElementsAre(1, 2, 3, 4));
  {
    Tensor alsoView = view.transpose(0, 1);
    view = Tensor();
    EXPECT_FALSE(watch.expired());
    EXPECT_EQ(alsoView.getAsDouble({0, 1}), 3);
  }
  EXPECT_TRUE(watch.expired()) << "the last view released the owner";
}

TEST(TensorTest, BorrowMutableWritesThrough) {
  int64_t buffer[3] = {0, 0, 0};
  Tensor view = Tensor::borrowMutable(DType::I64, {3}, buffer);
  EXPECT_TRUE(view.isWritable());
  view.setFromDouble({2}, 9);
  view.mutableValues<int64_t>()[0] = 5;
  EXPECT_EQ(buffer[0], 5);
  EXPECT_EQ(buffer[2], 9);
}

TEST(TensorTest, BorrowedDeviceTensorKeepsItsDevice) {
  // Only the type is inspected: the pointer stands in for device memory.
  static const char fakeDeviceMemory[8] = {};
  Tensor tensor = Tensor::borrow(DType::F32, {2}, fakeDeviceMemory, nullptr, Device::cuda(1));
  EXPECT_EQ(tensor.str(), "f32[2] @ cuda:1");
  EXPECT_EQ(tensor.device(), Device::cuda(1));
}

TEST(TensorTest, FindsInvalidBoolBytes) {
  const uint8_t good[] = {0, 1, 1, 0};
  const uint8_t bad[] = {0, 1, 2, 0};
  EXPECT_EQ(findInvalidBoolByte(good), std::nullopt);
  EXPECT_EQ(findInvalidBoolByte(bad), 2u);
}
