//===- SafeTensorsTest.cpp - safetensors round trips and header checks ----===//
#include "runtime/SafeTensors.h"

#include "RuntimeTestSupport.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace modelc::runtime;
using namespace modelc::runtime::testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

namespace {

/// A safetensors file: the 8-byte length of `header` (or `lengthOverride`),
/// the header, then `data`.
std::string craftSafeTensors(llvm::StringRef header, llvm::StringRef data,
                             std::optional<uint64_t> lengthOverride = std::nullopt) {
  char lengthBytes[8];
  llvm::support::endian::write64le(lengthBytes, lengthOverride.value_or(header.size()));
  return std::string(lengthBytes, 8) + header.str() + data.str();
}

llvm::Expected<SafeTensorsFile> parseBytes(llvm::StringRef bytes,
                                           llvm::StringRef name = "bad.safetensors") {
  return SafeTensorsFile::fromBuffer(llvm::MemoryBuffer::getMemBufferCopy(bytes, name));
}

bool sameBytes(const Tensor &a, const Tensor &b) {
  return a.str() == b.str() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.contiguous().data(), b.contiguous().data(), a.nbytes()) == 0;
}

} // namespace

TEST(SafeTensorsTest, DTypeNames) {
  EXPECT_EQ(safeTensorsDTypeName(DType::BF16), "BF16");
  EXPECT_EQ(safeTensorsDTypeName(DType::Bool), "BOOL");
  for (DType dtype : AllDTypes)
    EXPECT_EQ(dtypeFromSafeTensorsName(safeTensorsDTypeName(dtype)), dtype);
  EXPECT_EQ(dtypeFromSafeTensorsName("U8"), std::nullopt);
  EXPECT_EQ(dtypeFromSafeTensorsName("f32"), std::nullopt);
}

TEST(SafeTensorsTest, RoundTripsEveryDTypeZeroCopy) {
  TempDir dir;
  std::vector<NamedTensor> tensors;
  for (DType dtype : AllDTypes) {
    // Eight elements each: every tensor's byte size is a multiple of 8, so
    // all stay aligned and all can be borrowed.
    tensors.push_back({"w." + dtypeName(dtype).str(), sampleTensor(dtype, {2, 4})});
  }
  tensors.push_back({"scalar", sampleTensor(DType::F64, {})});
  tensors.push_back({"empty", Tensor::zeros(DType::F32, {0, 7})});
  std::string path = dir.file("all.safetensors");
  ASSERT_FALSE(bool(writeSafeTensors(path, tensors)));

  llvm::Expected<SafeTensorsFile> file = SafeTensorsFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->name(), path);
  ASSERT_THAT(file->entries(), SizeIs(tensors.size()));
  // Entries come in data order, which is the order they were written in.
  for (auto [entry, written] : llvm::zip_equal(file->entries(), tensors)) {
    EXPECT_EQ(entry.name, written.name);
    EXPECT_TRUE(sameBytes(entry.tensor, written.tensor)) << entry.name;
    EXPECT_FALSE(entry.tensor.isOwning()) << entry.name << " should borrow the file's bytes";
    EXPECT_FALSE(entry.tensor.isWritable());
    EXPECT_EQ(entry.dataEnd - entry.dataBegin, written.tensor.nbytes());
    EXPECT_EQ(file->find(entry.name), &entry);
  }
  EXPECT_EQ(file->find("absent"), nullptr);
}

TEST(SafeTensorsTest, WritesPaddedHeaderAndPackedData) {
  const float values[] = {1, 2, 3};
  const int64_t counts[] = {7};
  llvm::Expected<std::string> bytes =
      serializeSafeTensors({{"a", Tensor::fromValues<float>({3}, values)},
                            {"b", Tensor::fromValues<int64_t>({1}, counts)}});
  ASSERT_TRUE(bool(bytes));
  uint64_t headerLength = llvm::support::endian::read64le(bytes->data());
  EXPECT_EQ(headerLength % 8, 0u);
  EXPECT_EQ(bytes->size(), 8 + headerLength + 12 + 8);
  llvm::StringRef header = llvm::StringRef(*bytes).substr(8, headerLength).rtrim(' ');
  EXPECT_EQ(header, R"({"a":{"data_offsets":[0,12],"dtype":"F32","shape":[3]},)"
                    R"("b":{"data_offsets":[12,20],"dtype":"I64","shape":[1]}})");
}

TEST(SafeTensorsTest, StridedTensorsAreWrittenInRowMajorOrder) {
  const int32_t values[] = {0, 1, 2, 3, 4, 5};
  Tensor transposed = Tensor::fromValues<int32_t>({2, 3}, values).transpose(0, 1);
  llvm::Expected<std::string> bytes = serializeSafeTensors({{"t", transposed}});
  ASSERT_TRUE(bool(bytes));
  llvm::Expected<SafeTensorsFile> file = parseBytes(*bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->find("t")->tensor.str(), "i32[3, 2] @ cpu");
  EXPECT_THAT(file->find("t")->tensor.values<int32_t>(), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(SafeTensorsTest, MisalignedTensorsAreCopied) {
  // One f16 (2 bytes) pushes the following f32 to an odd multiple of 2.
  const float values[] = {1.5f, -2.0f};
  llvm::Expected<std::string> bytes = serializeSafeTensors(
      {{"h", Tensor::zeros(DType::F16, {1})}, {"f", Tensor::fromValues<float>({2}, values)}});
  ASSERT_TRUE(bool(bytes));
  llvm::Expected<SafeTensorsFile> file = parseBytes(*bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const Tensor &f = file->find("f")->tensor;
  EXPECT_TRUE(f.isOwning()) << "a misaligned f32 must be copied";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f.data()) % 4, 0u);
  EXPECT_THAT(f.values<float>(), ElementsAre(1.5f, -2.0f));
  EXPECT_FALSE(file->find("h")->tensor.isOwning());
}

TEST(SafeTensorsTest, TensorsOutliveTheFileObject) {
  Tensor kept;
  {
    const double values[] = {3.25, -1};
    llvm::Expected<std::string> bytes =
        serializeSafeTensors({{"x", Tensor::fromValues<double>({2}, values)}});
    ASSERT_TRUE(bool(bytes));
    llvm::Expected<SafeTensorsFile> file = parseBytes(*bytes);
    ASSERT_TRUE(bool(file));
    kept = file->find("x")->tensor;
  }
  EXPECT_THAT(kept.values<double>(), ElementsAre(3.25, -1));
}

TEST(SafeTensorsTest, LargeFilesAreMemoryMapped) {
  TempDir dir;
  std::string path = dir.file("big.safetensors");
  ASSERT_FALSE(bool(writeSafeTensors(path, {{"big", sampleTensor(DType::F32, {256, 256})}})));
  llvm::Expected<SafeTensorsFile> file = SafeTensorsFile::open(path);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_TRUE(file->isMemoryMapped());
  EXPECT_EQ(file->find("big")->tensor.getAsDouble({255, 255}), 256.0 * 256 - 1 - 2.5);
}

TEST(SafeTensorsTest, MetadataIsReadAsStringsAndIsNoTensor) {
  std::string header = R"({"__metadata__":{"format":"pt"},)"
                       R"("x":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})";
  const int32_t values[] = {5, -6};
  llvm::Expected<SafeTensorsFile> file = parseBytes(
      craftSafeTensors(header, llvm::StringRef(reinterpret_cast<const char *>(values), 8)));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  ASSERT_THAT(file->entries(), SizeIs(1));
  EXPECT_THAT(file->find("x")->tensor.values<int32_t>(), ElementsAre(5, -6));
  EXPECT_EQ(file->find("__metadata__"), nullptr);
  EXPECT_EQ(file->metadata().at("format"), "pt");
}

TEST(SafeTensorsTest, MetadataRoundTrips) {
  llvm::Expected<std::string> bytes = serializeSafeTensors({{"w", Tensor::zeros(DType::F32, {2})}},
                                                           {{"step", "12"}, {"model", "Mlp"}});
  ASSERT_TRUE(bool(bytes)) << llvm::toString(bytes.takeError());
  llvm::Expected<SafeTensorsFile> file = parseBytes(*bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->metadata().size(), 2u);
  EXPECT_EQ(file->metadata().at("step"), "12");
  EXPECT_EQ(file->metadata().at("model"), "Mlp");
}

TEST(SafeTensorsTest, MetadataThatIsNotStringsIsAnError) {
  std::string header = R"({"__metadata__":{"step":12},)"
                       R"("x":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_THAT(failureText(parseBytes(craftSafeTensors(header, "abcd"))),
              HasSubstr("__metadata__ entry 'step' is not a string"));
  header = R"({"__metadata__":[1],"x":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})";
  EXPECT_THAT(failureText(parseBytes(craftSafeTensors(header, "abcd"))),
              HasSubstr("__metadata__ is not an object of strings"));
}

TEST(SafeTensorsTest, WriterRejectsBadNames) {
  Tensor t = Tensor::zeros(DType::F32, {1});
  EXPECT_THAT(failureText(serializeSafeTensors({{"a", t}, {"a", t}})),
              HasSubstr("cannot save two tensors named 'a'"));
  EXPECT_THAT(failureText(serializeSafeTensors({{"__metadata__", t}})),
              HasSubstr("the name is reserved"));
}

TEST(SafeTensorsTest, ReportsMalformedFiles) {
  std::string eight(8, '\0');
  auto entry = [](const char *name, const char *body) {
    return std::string("{\"") + name + "\":" + body + "}";
  };
  struct Case {
    std::string bytes;
    const char *message;
  };
  const Case cases[] = {
      {"", "file is 0 bytes, too short for the 8-byte header length"},
      {"abc", "file is 3 bytes, too short"},
      {craftSafeTensors("{}", "", 100), "header length 100 extends past the end of the file"},
      {craftSafeTensors("{}", "", ~uint64_t(0)),
       "header length 18446744073709551615 extends past the end of the file (10 bytes)"},
      {craftSafeTensors("{\"a\":", ""), "malformed JSON header"},
      {craftSafeTensors("{\"a\":1,}", ""), "malformed JSON header"},
      {craftSafeTensors("\xff\xfe", ""), "malformed JSON header"},
      {craftSafeTensors("[1,2]", ""), "the JSON header is not an object"},
      {craftSafeTensors(entry("w", "[]"), ""), "tensor 'w': entry is not a JSON object"},
      {craftSafeTensors(entry("w", R"({"shape":[2],"data_offsets":[0,8]})"), eight),
       "tensor 'w': missing string field 'dtype'"},
      {craftSafeTensors(entry("w", R"({"dtype":"U8","shape":[8],"data_offsets":[0,8]})"), eight),
       "tensor 'w': unsupported dtype 'U8' (supported: F16 BF16 F32 F64 I32 I64 BOOL)"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})"), eight),
       "tensor 'w': 'shape' must be an array of non-negative integers"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[2.5],"data_offsets":[0,8]})"), eight),
       "tensor 'w': 'shape' must be an array of non-negative integers"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})"), eight),
       "tensor 'w': 'shape' must be an array of non-negative integers"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[2],"data_offsets":[8]})"), eight),
       "tensor 'w': 'data_offsets' must be [begin, end] of non-negative integers"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[2],"data_offsets":[-8,0]})"), eight),
       "tensor 'w': 'data_offsets' must be [begin, end]"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[2],"data_offsets":["0","8"]})"),
                        eight),
       "tensor 'w': 'data_offsets' must be [begin, end]"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[2]})"), eight),
       "tensor 'w': 'data_offsets' must be [begin, end]"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[0],"data_offsets":[8,4]})"), eight),
       "tensor 'w': data_offsets [8, 4) end before they begin"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), eight),
       "tensor 'w': data_offsets [0, 16) extend past the end of the data section (8 bytes)"},
      {craftSafeTensors(entry("w", R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), eight),
       "tensor 'w': f32[3] needs 12 bytes, but data_offsets [0, 8) hold 8"},
      {craftSafeTensors(
           entry("w", R"({"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]})"),
           eight),
       "tensor 'w': shape f64[4294967296, 4294967296] has too many elements"},
      {craftSafeTensors(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
                        eight),
       "tensors 'a' [0, 8) and 'b' [4, 8) overlap"},
      {craftSafeTensors(entry("m", R"({"dtype":"BOOL","shape":[8],"data_offsets":[0,8]})"),
                        llvm::StringRef("\0\1\0\1\0\2\0\0", 8)),
       "tensor 'm': bool element 5 is byte 0x02, not 0 or 1"},
  };
  for (const Case &test : cases)
    EXPECT_THAT(
        failureText(parseBytes(test.bytes)),
        ::testing::AllOf(::testing::StartsWith("bad.safetensors: "), HasSubstr(test.message)))
        << "expected: " << test.message;
}

TEST(SafeTensorsTest, ReportsEveryProblemAtOnce) {
  // Three tensors, each wrong in its own way, plus one that is fine; an
  // overlap is found between the fine one and a tensor that spans it.
  std::string header = R"({"bad_dtype":{"dtype":"Q4","shape":[1],"data_offsets":[0,4]},)"
                       R"("too_far":{"dtype":"F32","shape":[8],"data_offsets":[16,48]},)"
                       R"("fine":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},)"
                       R"("spans":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
  llvm::Expected<SafeTensorsFile> file = parseBytes(craftSafeTensors(header, std::string(24, 0)));
  ASSERT_FALSE(bool(file));
  std::vector<std::string> problems = errorMessages(file.takeError());
  EXPECT_THAT(problems,
              ElementsAre(HasSubstr("tensor 'bad_dtype': unsupported dtype 'Q4'"),
                          HasSubstr("tensor 'too_far': data_offsets [16, 48) extend past the end"),
                          HasSubstr("tensors 'spans' [0, 16) and 'fine' [8, 16) overlap")));
}

TEST(SafeTensorsTest, OverlapsAreFoundBeyondNeighbours) {
  // 'long' overlaps 'c', which is not its neighbour in offset order.
  std::string header = R"({"long":{"dtype":"I32","shape":[6],"data_offsets":[0,24]},)"
                       R"("b":{"dtype":"I32","shape":[0],"data_offsets":[4,4]},)"
                       R"("c":{"dtype":"I32","shape":[1],"data_offsets":[20,24]}})";
  std::vector<std::string> problems =
      errorMessages(parseBytes(craftSafeTensors(header, std::string(24, 0))).takeError());
  EXPECT_THAT(problems, ElementsAre(HasSubstr("tensors 'long' [0, 24) and 'c' [20, 24) overlap")));
}

TEST(SafeTensorsTest, EveryTruncationIsAnErrorNotACrash) {
  const float values[] = {1, 2, 3, 4};
  llvm::Expected<std::string> bytes =
      serializeSafeTensors({{"a", Tensor::fromValues<float>({4}, values)},
                            {"b", Tensor::fromValues<float>({2, 2}, values)}});
  ASSERT_TRUE(bool(bytes));
  for (size_t length = 0; length < bytes->size(); ++length) {
    // A cut lands in the length, the header or the data: each is an error.
    llvm::StringRef prefix = llvm::StringRef(*bytes).take_front(length);
    EXPECT_NE(failureText(parseBytes(prefix)), "<success>") << "prefix of " << length;
  }
}

TEST(SafeTensorsTest, MissingFileNamesThePath) {
  TempDir dir;
  std::string path = dir.file("absent.safetensors");
  EXPECT_THAT(failureText(SafeTensorsFile::open(path)), HasSubstr(path));
}
