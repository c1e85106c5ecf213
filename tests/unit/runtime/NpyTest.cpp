//===- NpyTest.cpp - .npy round trips and every malformed-file error ------===//
#include "runtime/Npy.h"

#include "RuntimeTestSupport.h"

#include "llvm/Support/Endian.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

using namespace modelc::runtime;
using namespace modelc::runtime::testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// A .npy file with the given header dict text and data bytes; the header
/// length field says `headerText.size()` unless `lengthOverride` is given.
std::string craftNpy(llvm::StringRef dict, llvm::StringRef data, uint8_t major = 1,
                     std::optional<uint32_t> lengthOverride = std::nullopt) {
  std::string bytes = "\x93NUMPY";
  bytes += char(major);
  bytes += char(0);
  uint32_t length = lengthOverride.value_or(uint32_t(dict.size()));
  char lengthBytes[4];
  llvm::support::endian::write32le(lengthBytes, length);
  bytes.append(lengthBytes, major == 1 ? 2 : 4);
  bytes += dict;
  bytes += data;
  return bytes;
}

std::string floatBytes(std::initializer_list<float> values) {
  return std::string(reinterpret_cast<const char *>(values.begin()), values.size() * sizeof(float));
}

void expectSameElements(const Tensor &actual, const Tensor &expected) {
  ASSERT_EQ(actual.str(), expected.str());
  ASSERT_EQ(actual.nbytes(), expected.nbytes());
  Tensor a = actual.contiguous(), b = expected.contiguous();
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.nbytes())) << actual.str();
}

} // namespace

TEST(NpyTest, RoundTripsEverySupportedDType) {
  TempDir dir;
  const std::vector<int64_t> shapes[] = {{}, {5}, {2, 3, 4}, {0, 3}};
  for (DType dtype : {DType::F16, DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool})
    for (const std::vector<int64_t> &shape : shapes) {
      Tensor original = sampleTensor(dtype, shape);
      std::string path = dir.file("t.npy");
      ASSERT_FALSE(bool(writeNpy(path, original)));
      llvm::Expected<Tensor> loaded = readNpy(path);
      ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
      EXPECT_TRUE(loaded->isOwning());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(loaded->data()) % Tensor::Alignment, 0u);
      expectSameElements(*loaded, original);
    }
}

TEST(NpyTest, WritesNumPysHeaderLayout) {
  llvm::Expected<std::string> bytes = serializeNpy(sampleTensor(DType::F32, {2, 3}));
  ASSERT_TRUE(bool(bytes));
  EXPECT_THAT(*bytes, StartsWith(llvm::StringRef("\x93NUMPY\x01\x00", 8).str()));
  size_t headerLength = llvm::support::endian::read16le(bytes->data() + 8);
  EXPECT_EQ((10 + headerLength) % 64, 0u) << "data must start 64-byte aligned";
  EXPECT_EQ(bytes->size(), 10 + headerLength + 6 * 4);
  llvm::StringRef header = llvm::StringRef(*bytes).substr(10, headerLength);
  EXPECT_THAT(header.str(),
              StartsWith("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
  EXPECT_TRUE(header.ends_with(" \n"));

  llvm::Expected<std::string> vector = serializeNpy(sampleTensor(DType::Bool, {7}));
  ASSERT_TRUE(bool(vector));
  EXPECT_THAT(*vector, HasSubstr("'descr': '|b1'"));
  EXPECT_THAT(*vector, HasSubstr("'shape': (7,)"));
  llvm::Expected<std::string> scalar = serializeNpy(sampleTensor(DType::I64, {}));
  ASSERT_TRUE(bool(scalar));
  EXPECT_THAT(*scalar, HasSubstr("'descr': '<i8', 'fortran_order': False, 'shape': ()"));
}

TEST(NpyTest, WritesStridedTensorsInCOrder) {
  const float values[] = {0, 1, 2, 3, 4, 5};
  Tensor transposed = Tensor::fromValues<float>({2, 3}, values).transpose(0, 1);
  llvm::Expected<std::string> bytes = serializeNpy(transposed);
  ASSERT_TRUE(bool(bytes));
  llvm::Expected<Tensor> loaded = parseNpy(*bytes, "t.npy");
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->str(), "f32[3, 2] @ cpu");
  EXPECT_THAT(loaded->values<float>(), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(NpyTest, LongHeadersUseVersion2) {
  std::vector<int64_t> shape(30000, 1); // "1, " per dim: a header over 64 KiB.
  llvm::Expected<std::string> bytes = serializeNpy(Tensor::zeros(DType::I32, shape));
  ASSERT_TRUE(bool(bytes));
  EXPECT_EQ((*bytes)[6], 2);
  size_t headerLength = llvm::support::endian::read32le(bytes->data() + 8);
  EXPECT_GT(headerLength, 65535u);
  EXPECT_EQ((12 + headerLength) % 64, 0u);
  llvm::Expected<Tensor> loaded = parseNpy(*bytes, "long.npy");
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->rank(), 30000u);
}

TEST(NpyTest, RefusesToWriteBFloat16) {
  EXPECT_THAT(failureText(serializeNpy(Tensor::zeros(DType::BF16, {2}))),
              HasSubstr("NumPy has no standard dtype for bf16"));
}

TEST(NpyTest, AcceptsHeaderVariants) {
  std::string data = floatBytes({1, 2, 3, 4});
  const std::pair<const char *, uint8_t> variants[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 1},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 2},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", 3},
      {"{\"shape\": (2,2), \"descr\": \"<f4\", \"fortran_order\": False}", 1},
      {"{ 'fortran_order' : False , 'shape' : ( 2 , 2 , ) , 'descr' : '<f4' }  \n", 1},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L), }\n", 1},
  };
  for (auto [dict, major] : variants) {
    llvm::Expected<Tensor> loaded = parseNpy(craftNpy(dict, data, major), "v.npy");
    ASSERT_TRUE(bool(loaded)) << dict << ": " << llvm::toString(loaded.takeError());
    EXPECT_EQ(loaded->str(), "f32[2, 2] @ cpu");
    EXPECT_THAT(loaded->values<float>(), ElementsAre(1, 2, 3, 4));
  }
}

TEST(NpyTest, ReportsMalformedFiles) {
  const char *f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string two = floatBytes({1, 2});
  struct Case {
    std::string bytes;
    const char *message;
  };
  const Case cases[] = {
      {"", "not a .npy file (bad magic)"},
      {"\x93NUMP", "not a .npy file (bad magic)"},
      {"PK\x03\x04 this is a zip file", "not a .npy file (bad magic)"},
      {std::string("\x93NUMPY\x01\x00", 8), "file ends inside the header length"},
      {craftNpy(f4, two, 4), "unsupported .npy version 4.0"},
      {craftNpy(f4, two, 0), "unsupported .npy version 0.0"},
      {craftNpy(f4, "", 1, 60000), "header length 60000 extends past the end of the file"},
      {craftNpy(f4, "", 2, 0xffffffffu), "header length 4294967295 extends past the end"},
      {craftNpy("[1, 2]", ""), "malformed header: expected '{'"},
      {craftNpy("{'descr': '<f4', 'shape': (2,)}", two), "missing key 'fortran_order'"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False}", two), "missing key 'shape'"},
      {craftNpy("{'fortran_order': False, 'shape': (2,)}", two), "missing key 'descr'"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two),
       "unexpected key 'x'"},
      {craftNpy("{'descr': '<f4', 'descr': '<f4'}", two), "key 'descr' appears twice"},
      {craftNpy("{'descr: '<f4'}", two), "malformed header: expected ':'"},
      {craftNpy("{'descr': '<f4", two), "unterminated string"},
      {craftNpy("{'descr': <f4}", two), "expected a quoted string"},
      {craftNpy("{'descr': '<f4', 'fortran_order': Maybe}", two), "expected True or False"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", two),
       "expected a non-negative integer in 'shape'"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}", two), "expected ')'"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", two), "expected '('"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", two),
       "dimension 99999999999999999999 is too large"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", two),
       "has too many elements"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", two), "expected '}'"},
      {craftNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", two),
       "unexpected text after the closing '}'"},
      {craftNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}", two),
       "Fortran-order arrays are not supported"},
      {craftNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}", two),
       "big-endian dtype '>f4' is not supported"},
      {craftNpy("{'descr': '|u1', 'fortran_order': False, 'shape': (8,)}", two),
       "unsupported dtype '|u1' (supported: <f2 <f4 <f8 <i4 <i8 |b1)"},
      {craftNpy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", two),
       "unsupported dtype '<c8'"},
      {craftNpy(f4, floatBytes({1})), "f32[2] needs 8 bytes of data, but the file has 4"},
      {craftNpy(f4, floatBytes({1, 2, 3})), "f32[2] needs 8 bytes of data, but the file has 12"},
      {craftNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}",
                llvm::StringRef("\x01\x00\x07", 3)),
       "bool element 2 is byte 0x07, not 0 or 1"},
  };
  for (const Case &test : cases)
    EXPECT_THAT(failureText(parseNpy(test.bytes, "bad.npy")),
                ::testing::AllOf(StartsWith("bad.npy: "), HasSubstr(test.message)))
        << "expected: " << test.message;
}

TEST(NpyTest, EveryTruncationIsAnErrorNotACrash) {
  llvm::Expected<std::string> bytes = serializeNpy(sampleTensor(DType::F64, {3, 4}));
  ASSERT_TRUE(bool(bytes));
  for (size_t length = 0; length < bytes->size(); ++length)
    EXPECT_NE(failureText(parseNpy(llvm::StringRef(*bytes).take_front(length), "cut.npy")),
              "<success>")
        << "prefix of " << length << " bytes";
}

TEST(NpyTest, CorruptedHeaderBytesNeverCrash) {
  llvm::Expected<std::string> valid = serializeNpy(sampleTensor(DType::I32, {2, 5}));
  ASSERT_TRUE(bool(valid));
  // Flip every header byte to each of a few troublesome values: the parser
  // either reads a (different) valid file or reports an error.
  const char replacements[] = {'\0', '(', ')', '\'', ',', '9', '-', '}', '\xff'};
  for (size_t at = 0; at < 128 && at < valid->size(); ++at)
    for (char replacement : replacements) {
      std::string bytes = *valid;
      bytes[at] = replacement;
      llvm::Expected<Tensor> result = parseNpy(bytes, "flip.npy");
      if (result)
        EXPECT_LE(result->nbytes(), bytes.size());
      else
        llvm::consumeError(result.takeError());
    }
}

TEST(NpyTest, MissingFileNamesThePath) {
  TempDir dir;
  std::string path = dir.file("absent.npy");
  EXPECT_THAT(failureText(readNpy(path)), HasSubstr(path));
}
