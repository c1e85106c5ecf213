//===- Npy.cpp - Read and write NumPy .npy files --------------------------===//
#include "runtime/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

namespace modelc::runtime {
namespace {

constexpr StringLiteral Magic("\x93NUMPY");
/// Magic, major and minor version.
constexpr size_t PreambleSize = 8;

struct NpyDType {
  StringLiteral descr;
  DType dtype;
};
constexpr NpyDType SupportedDTypes[] = {
    {"<f2", DType::F16}, {"<f4", DType::F32}, {"<f8", DType::F64},
    {"<i4", DType::I32}, {"<i8", DType::I64}, {"|b1", DType::Bool},
};

/// What the header dict says.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  Shape shape;
};

/// A parser for the header dict, a Python literal of the form
/// {'descr': '<f4', 'fortran_order': False, 'shape': (4, 784), }.
/// It accepts exactly the three keys, in any order, each once.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : Text(text) {}

  Expected<NpyHeader> parse() {
    NpyHeader header;
    bool seenDescr = false, seenOrder = false, seenShape = false;
    if (Error err = expect('{'))
      return err;
    while (!consume('}')) {
      std::string key;
      if (Error err = parseString(key))
        return err;
      if (Error err = expect(':'))
        return err;
      Error err = Error::success();
      if (key == "descr" && !seenDescr) {
        seenDescr = true;
        err = parseString(header.descr);
      } else if (key == "fortran_order" && !seenOrder) {
        seenOrder = true;
        err = parseBool(header.fortranOrder);
      } else if (key == "shape" && !seenShape) {
        seenShape = true;
        err = parseShape(header.shape);
      } else if (key == "descr" || key == "fortran_order" || key == "shape") {
        err = fail("key '" + key + "' appears twice");
      } else {
        err = fail("unexpected key '" + key + "'");
      }
      if (err)
        return err;
      // Entries are separated by commas; a trailing comma is allowed.
      if (!consume(',')) {
        if (Error err = expect('}'))
          return err;
        break;
      }
    }
    skipSpace();
    if (Pos != Text.size())
      return fail("unexpected text after the closing '}'");
    if (!seenDescr || !seenOrder || !seenShape)
      return fail(formatv("missing key '{0}'", !seenDescr   ? "descr"
                                               : !seenOrder ? "fortran_order"
                                                            : "shape")
                      .str());
    return header;
  }

private:
  Error fail(const Twine &message) {
    return createStringError("malformed header: " + message + " (at header offset " + Twine(Pos) +
                             ")");
  }
  void skipSpace() {
    while (Pos < Text.size() && isSpace(Text[Pos]))
      ++Pos;
  }
  bool consume(char c) {
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == c) {
      ++Pos;
      return true;
    }
    return false;
  }
  Error expect(char c) {
    if (consume(c))
      return Error::success();
    return fail(formatv("expected '{0}'", c).str());
  }
  Error parseString(std::string &out) {
    skipSpace();
    if (Pos >= Text.size() || (Text[Pos] != '\'' && Text[Pos] != '"'))
      return fail("expected a quoted string");
    char quote = Text[Pos];
    size_t end = Text.find(quote, Pos + 1);
    if (end == StringRef::npos)
      return fail("unterminated string");
    out = Text.slice(Pos + 1, end).str();
    Pos = end + 1;
    return Error::success();
  }
  Error parseBool(bool &out) {
    skipSpace();
    StringRef rest = Text.drop_front(Pos);
    if (rest.starts_with("True") || rest.starts_with("False")) {
      out = rest.starts_with("True");
      Pos += out ? 4 : 5;
      return Error::success();
    }
    return fail("expected True or False");
  }
  /// A tuple of non-negative integers: (), (3,), (4, 784), (4, 784,).
  /// Python 2 NumPy wrote longs with an `L` suffix: (4L, 784L).
  Error parseShape(Shape &out) {
    if (Error err = expect('('))
      return err;
    while (!consume(')')) {
      skipSpace();
      size_t digitsEnd = Pos;
      while (digitsEnd < Text.size() && isDigit(Text[digitsEnd]))
        ++digitsEnd;
      int64_t dim = 0;
      if (digitsEnd == Pos)
        return fail("expected a non-negative integer in 'shape'");
      if (Text.slice(Pos, digitsEnd).getAsInteger(10, dim))
        return fail("dimension " + Text.slice(Pos, digitsEnd) + " is too large");
      out.push_back(dim);
      Pos = digitsEnd;
      if (Pos < Text.size() && Text[Pos] == 'L')
        ++Pos;
      if (!consume(',')) {
        if (Error err = expect(')'))
          return err;
        break;
      }
    }
    return Error::success();
  }

  StringRef Text;
  size_t Pos = 0;
};

Expected<DType> dtypeFromDescr(StringRef descr) {
  for (const NpyDType &entry : SupportedDTypes)
    if (entry.descr == descr)
      return entry.dtype;
  if (descr.starts_with(">"))
    return createStringError("big-endian dtype '" + descr +
                             "' is not supported; save the array as little-endian");
  std::string supported = join(
      map_range(SupportedDTypes, [](const NpyDType &entry) { return entry.descr.str(); }), " ");
  return createStringError("unsupported dtype '" + descr + "' (supported: " + supported + ")");
}

Expected<Tensor> parseNpyImpl(StringRef bytes, std::shared_ptr<const void> keepAlive) {
  if (bytes.size() < PreambleSize || !bytes.starts_with(Magic))
    return createStringError("not a .npy file (bad magic)");
  auto major = uint8_t(bytes[6]), minor = uint8_t(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return createStringError(formatv("unsupported .npy version {0}.{1}", major, minor).str());
  // Version 1.0 stores the header length in 2 bytes, later versions in 4.
  size_t lengthSize = major == 1 ? 2 : 4;
  if (bytes.size() < PreambleSize + lengthSize)
    return createStringError("file ends inside the header length");
  const char *lengthAt = bytes.data() + PreambleSize;
  uint64_t headerLength =
      major == 1 ? support::endian::read16le(lengthAt) : support::endian::read32le(lengthAt);
  uint64_t dataStart = PreambleSize + lengthSize + headerLength;
  if (dataStart > bytes.size())
    return createStringError(formatv("header length {0} extends past the end of the file "
                                     "({1} bytes)",
                                     headerLength, bytes.size())
                                 .str());

  Expected<NpyHeader> header =
      HeaderParser(bytes.slice(PreambleSize + lengthSize, dataStart)).parse();
  if (!header)
    return header.takeError();
  if (header->fortranOrder)
    return createStringError("Fortran-order arrays are not supported; save the array in C "
                             "order (numpy.ascontiguousarray)");
  Expected<DType> dtype = dtypeFromDescr(header->descr);
  if (!dtype)
    return dtype.takeError();

  std::optional<int64_t> expectedBytes = checkedByteSize(*dtype, header->shape);
  if (!expectedBytes)
    return createStringError("shape " + formatTensorType(*dtype, header->shape) +
                             " has too many elements");
  StringRef data = bytes.drop_front(dataStart);
  if (data.size() != uint64_t(*expectedBytes))
    return createStringError(formatv("{0} needs {1} bytes of data, but the file has {2}",
                                     formatTensorType(*dtype, header->shape), *expectedBytes,
                                     data.size())
                                 .str());
  if (*dtype == DType::Bool)
    if (std::optional<size_t> bad = findInvalidBoolByte(arrayRefFromStringRef(data)))
      return createStringError(formatv("bool element {0} is byte {1:x2}, not 0 or 1", *bad,
                                       unsigned(uint8_t(data[*bad])))
                                   .str());
  bool aligned = reinterpret_cast<uintptr_t>(data.data()) % dtypeSize(*dtype) == 0;
  if (keepAlive && aligned)
    return Tensor::borrow(*dtype, header->shape, data.data(), std::move(keepAlive));
  return Tensor::copyOf(*dtype, header->shape, data.data());
}

} // namespace

Expected<Tensor> parseNpy(StringRef bytes, StringRef sourceName,
                          std::shared_ptr<const void> keepAlive) {
  Expected<Tensor> tensor = parseNpyImpl(bytes, std::move(keepAlive));
  if (!tensor)
    return createStringError(sourceName + ": " + toString(tensor.takeError()));
  return tensor;
}

Expected<Tensor> readNpy(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createFileError(path, buffer.getError());
  return parseNpy((*buffer)->getBuffer(), path);
}

Expected<Tensor> mapNpy(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createFileError(path, buffer.getError());
  std::shared_ptr<const MemoryBuffer> mapping = std::move(*buffer);
  return parseNpy(mapping->getBuffer(), path, mapping);
}

Expected<std::string> serializeNpy(const Tensor &tensor) {
  if (!tensor.device().isCPU())
    return createStringError("cannot write " + tensor.str() + " to .npy: not a cpu tensor");
  const auto *format = find_if(
      SupportedDTypes, [&](const NpyDType &entry) { return entry.dtype == tensor.dtype(); });
  if (format == std::end(SupportedDTypes))
    return createStringError("cannot write " + tensor.str() +
                             " to .npy: NumPy has no standard dtype for " +
                             dtypeName(tensor.dtype()));

  std::string dict;
  raw_string_ostream dictStream(dict);
  dictStream << "{'descr': '" << format->descr << "', 'fortran_order': False, 'shape': (";
  interleaveComma(tensor.shape(), dictStream);
  dictStream << (tensor.rank() == 1 ? ",), }" : "), }");

  // Pad with spaces and end with '\n' so the data starts 64-byte aligned.
  // Version 1.0 has a 2-byte header length; a longer header needs 2.0.
  auto paddedHeaderLength = [&](size_t lengthSize) {
    size_t unpadded = PreambleSize + lengthSize + dict.size() + 1;
    return dict.size() + (64 - unpadded % 64) % 64 + 1;
  };
  size_t lengthSize = 2;
  size_t headerLength = paddedHeaderLength(lengthSize);
  if (headerLength > 65535) {
    lengthSize = 4;
    headerLength = paddedHeaderLength(lengthSize);
  }

  std::string out;
  raw_string_ostream os(out);
  os << Magic << char(lengthSize == 2 ? 1 : 2) << char(0);
  char lengthBytes[4];
  support::endian::write32le(lengthBytes, uint32_t(headerLength));
  os.write(lengthBytes, lengthSize);
  os << dict;
  os.indent(headerLength - dict.size() - 1) << '\n';
  Tensor dense = tensor.isContiguous() ? tensor : tensor.contiguous();
  os.write(static_cast<const char *>(dense.data()), dense.nbytes());
  return out;
}

Error writeNpy(StringRef path, const Tensor &tensor) {
  Expected<std::string> bytes = serializeNpy(tensor);
  if (!bytes)
    return bytes.takeError();
  return writeToOutput(path, [&](raw_ostream &os) {
    os << *bytes;
    return Error::success();
  });
}

} // namespace modelc::runtime
