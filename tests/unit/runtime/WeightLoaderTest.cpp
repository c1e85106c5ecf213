//===- WeightLoaderTest.cpp - Binding declared state to a file ------------===//
#include "runtime/WeightLoader.h"

#include "RuntimeTestSupport.h"

#include "llvm/Support/Endian.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace modelc::runtime;
using namespace modelc::runtime::testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

StateEntry param(std::string name, DType dtype, Shape shape, Device device = Device::cpu()) {
  return {std::move(name), dtype, std::move(shape), device, StateKind::Param, std::nullopt};
}
StateEntry buffer(std::string name, DType dtype, Shape shape) {
  return {std::move(name), dtype, std::move(shape), Device::cpu(), StateKind::Buffer, std::nullopt};
}

/// A small MLP-like state dict: fc1 (weight, bias), a step counter buffer.
std::vector<NamedTensor> smallStateDict() {
  Tensor weight = Tensor::zeros(DType::F32, {3, 4});
  for (int64_t i = 0; i < 12; ++i)
    weight.mutableValues<float>()[i] = float(i) / 4;
  const float bias[] = {0.5f, -0.5f, 1.5f};
  const int64_t steps[] = {1000};
  return {{"fc1.weight", weight},
          {"fc1.bias", Tensor::fromValues<float>({3}, bias)},
          {"steps", Tensor::fromValues<int64_t>({}, llvm::ArrayRef(steps, 1))}};
}

std::vector<StateEntry> smallDeclaration(Device device = Device::cpu()) {
  return {param("fc1.weight", DType::F32, {3, 4}, device),
          param("fc1.bias", DType::F32, {3}, device), buffer("steps", DType::I64, {})};
}

class WeightLoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    Path = Dir.file("w.safetensors");
    ASSERT_FALSE(bool(writeSafeTensors(Path, smallStateDict())));
  }
  TempDir Dir;
  std::string Path;
};

} // namespace

TEST_F(WeightLoaderTest, BindsEveryDeclaredEntryInDeclarationOrder) {
  llvm::Expected<LoadedWeights> loaded = loadWeights(smallDeclaration(), Path);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  ASSERT_EQ(loaded->size(), 3u);
  std::vector<std::string> names;
  for (const BoundState &bound : loaded->bindings())
    names.push_back(bound.declared.name);
  EXPECT_THAT(names, ElementsAre("fc1.weight", "fc1.bias", "steps"));

  const BoundState *weight = loaded->find("fc1.weight");
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->tensor.str(), "f32[3, 4] @ cpu");
  EXPECT_FALSE(weight->tensor.isOwning()) << "weights should borrow the mapped file";
  EXPECT_EQ(weight->tensor.getAsDouble({2, 3}), 11.0 / 4);
  EXPECT_EQ(loaded->find("steps")->declared.kind, StateKind::Buffer);
  EXPECT_EQ(loaded->find("steps")->tensor.values<int64_t>()[0], 1000);
  EXPECT_EQ(loaded->find("fc1.bias")->tensor.values<float>()[2], 1.5f);
  EXPECT_EQ(loaded->find("nope"), nullptr);
}

TEST_F(WeightLoaderTest, KeepsTheDeclaredDeviceBesideAHostTensor) {
  llvm::Expected<LoadedWeights> loaded = loadWeights(smallDeclaration(Device::cuda(0)), Path);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  const BoundState *weight = loaded->find("fc1.weight");
  EXPECT_EQ(weight->declared.typeString(), "f32[3, 4] @ cuda:0");
  EXPECT_EQ(weight->tensor.device(), Device::cpu());
}

TEST_F(WeightLoaderTest, ShapeMismatchNamesBothTypes) {
  std::vector<StateEntry> declared = smallDeclaration();
  declared[0].shape = {4, 3};
  EXPECT_EQ(failureText(loadWeights(declared, Path)),
            Path + ": fc1.weight: expected f32[4, 3], found f32[3, 4]");
}

TEST_F(WeightLoaderTest, DTypeMismatchNamesBothTypes) {
  std::vector<StateEntry> declared = smallDeclaration();
  declared[2].dtype = DType::I32;
  EXPECT_EQ(failureText(loadWeights(declared, Path)),
            Path + ": steps: expected i32[], found i64[]");
}

TEST_F(WeightLoaderTest, ListsEveryProblemAndBindsNothing) {
  std::vector<StateEntry> declared = {
      param("fc1.weight", DType::F16, {3, 4}),  // dtype mismatch
      param("fc1.bias", DType::F32, {1, 3}),    // shape mismatch
      param("fc2.weight", DType::F32, {2, 3}),  // missing
      param("fc1.bias", DType::F32, {3}),       // declared twice
      param("fc3.weight", DType::F32, {-1, 3}), // not concrete
  };                                            // and "steps" is unexpected
  llvm::Expected<LoadedWeights> loaded = loadWeights(declared, Path);
  ASSERT_FALSE(bool(loaded));
  std::vector<std::string> problems = errorMessages(loaded.takeError());
  std::string prefix = Path + ": ";
  EXPECT_THAT(problems,
              ElementsAre(prefix + "fc1.weight: expected f16[3, 4], found f32[3, 4]",
                          prefix + "fc1.bias: expected f32[1, 3], found f32[3]",
                          prefix + "fc2.weight: missing from the file (declared param "
                                   "f32[2, 3] @ cpu)",
                          prefix + "fc1.bias: declared more than once",
                          prefix + "fc3.weight: declared type f32[-1, 3] @ cpu has a negative "
                                   "dimension or too many elements",
                          prefix + "steps: unexpected key; the model declares no such state "
                                   "(found i64[])"));
}

TEST_F(WeightLoaderTest, EmptyDeclarationAgainstEmptyFile) {
  std::string empty = Dir.file("empty.safetensors");
  ASSERT_FALSE(bool(writeSafeTensors(empty, {})));
  llvm::Expected<LoadedWeights> loaded = loadWeights({}, empty);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->size(), 0u);
}

TEST_F(WeightLoaderTest, TruncatedFileIsReportedByKey) {
  llvm::Expected<std::string> bytes = serializeSafeTensors(smallStateDict());
  ASSERT_TRUE(bool(bytes));
  std::string cut = Dir.write("cut.safetensors", llvm::StringRef(*bytes).drop_back(6));
  std::string text = failureText(loadWeights(smallDeclaration(), cut));
  EXPECT_THAT(text, HasSubstr("tensor 'steps': data_offsets [60, 68) extend past the end of "
                              "the data section (62 bytes)"));
}

TEST_F(WeightLoaderTest, OverlappingFileIsReported) {
  std::string header = R"({"fc1.weight":{"dtype":"F32","shape":[3,4],"data_offsets":[0,48]},)"
                       R"("fc1.bias":{"dtype":"F32","shape":[3],"data_offsets":[40,52]},)"
                       R"("steps":{"dtype":"I64","shape":[],"data_offsets":[52,60]}})";
  char length[8];
  llvm::support::endian::write64le(length, header.size());
  std::string path =
      Dir.write("overlap.safetensors", std::string(length, 8) + header + std::string(60, '\0'));
  EXPECT_THAT(failureText(loadWeights(smallDeclaration(), path)),
              HasSubstr("tensors 'fc1.weight' [0, 48) and 'fc1.bias' [40, 52) overlap"));
}

TEST_F(WeightLoaderTest, MissingFile) {
  EXPECT_THAT(failureText(loadWeights(smallDeclaration(), Dir.file("none.safetensors"))),
              HasSubstr("none.safetensors"));
}

TEST(StateKindTest, Names) {
  EXPECT_EQ(stateKindName(StateKind::Param), "param");
  EXPECT_EQ(stateKindName(StateKind::Buffer), "buffer");
}
