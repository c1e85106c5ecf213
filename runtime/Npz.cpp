//===- Npz.cpp - Read NumPy .npz archives ---------------------------------===//
//
// The zip layout read here (PKWARE APPNOTE 6.3): the end-of-central-directory
// record (and its zip64 locator and record when counts or offsets overflow
// 16/32 bits) gives the central directory; each central entry gives a
// member's compression method, sizes (zip64 extra field 0x0001 when they
// read 0xFFFFFFFF) and local header offset; the local header's own name and
// extra lengths give where the data starts.
//
//===----------------------------------------------------------------------===//
#include "runtime/Npz.h"

#include "runtime/Npy.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <zlib.h>

using namespace llvm;
using support::endian::read16le;
using support::endian::read32le;
using support::endian::read64le;

namespace modelc::runtime {
namespace {

constexpr uint32_t EndOfCentralDirectory = 0x06054b50;
constexpr uint32_t Zip64Locator = 0x07064b50;
constexpr uint32_t Zip64EndOfCentralDirectory = 0x06064b50;
constexpr uint32_t CentralEntry = 0x02014b50;
constexpr uint32_t LocalHeader = 0x04034b50;
constexpr size_t EndRecordSize = 22;
constexpr size_t CentralEntrySize = 46;
constexpr size_t LocalHeaderSize = 30;
constexpr uint16_t Stored = 0;
constexpr uint16_t Deflated = 8;

struct Member {
  std::string name;
  uint16_t method = 0;
  uint64_t compressedSize = 0;
  uint64_t size = 0;
  uint64_t localOffset = 0;
};

Error problem(StringRef path, const Twine &what) { return createStringError(path + ": " + what); }

/// Reads the zip64 extended information extra field (0x0001): each value
/// that reads 0xFFFFFFFF in the fixed fields is there, in this order.
bool readZip64Extra(StringRef extra, Member &member, bool wideSize, bool wideCompressed,
                    bool wideOffset) {
  while (extra.size() >= 4) {
    uint16_t id = read16le(extra.data()), length = read16le(extra.data() + 2);
    if (extra.size() < 4 + size_t(length))
      return false;
    StringRef body = extra.substr(4, length);
    if (id == 0x0001) {
      auto next = [&](uint64_t &field) {
        if (body.size() < 8)
          return false;
        field = read64le(body.data());
        body = body.drop_front(8);
        return true;
      };
      return (!wideSize || next(member.size)) && (!wideCompressed || next(member.compressedSize)) &&
             (!wideOffset || next(member.localOffset));
    }
    extra = extra.drop_front(4 + length);
  }
  return !wideSize && !wideCompressed && !wideOffset;
}

Expected<std::vector<Member>> readCentralDirectory(StringRef path, StringRef bytes) {
  if (bytes.size() < EndRecordSize)
    return problem(path, "not a zip archive (too short)");
  // The end record is the last 22 bytes plus a comment of up to 64 KiB.
  size_t end = StringRef::npos;
  size_t lowest = bytes.size() > EndRecordSize + 0xFFFF ? bytes.size() - EndRecordSize - 0xFFFF : 0;
  for (size_t at = bytes.size() - EndRecordSize + 1; at-- > lowest;)
    if (read32le(bytes.data() + at) == EndOfCentralDirectory) {
      end = at;
      break;
    }
  if (end == StringRef::npos)
    return problem(path, "not a zip archive (no end-of-central-directory record)");
  const char *record = bytes.data() + end;
  uint64_t count = read16le(record + 10);
  uint64_t directorySize = read32le(record + 12);
  uint64_t directoryOffset = read32le(record + 16);
  if (count == 0xFFFF || directorySize == 0xFFFFFFFF || directoryOffset == 0xFFFFFFFF) {
    if (end < 20 || read32le(bytes.data() + end - 20) != Zip64Locator)
      return problem(path, "zip64 archive without its end-of-central-directory locator");
    uint64_t zip64End = read64le(bytes.data() + end - 20 + 8);
    if (zip64End + 56 > bytes.size() ||
        read32le(bytes.data() + zip64End) != Zip64EndOfCentralDirectory)
      return problem(path, "zip64 end-of-central-directory record is missing");
    const char *wide = bytes.data() + zip64End;
    count = read64le(wide + 32);
    directorySize = read64le(wide + 40);
    directoryOffset = read64le(wide + 48);
  }
  if (directoryOffset > bytes.size() || directorySize > bytes.size() - directoryOffset)
    return problem(path, "central directory extends past the end of the file");

  std::vector<Member> members;
  StringRef directory = bytes.substr(directoryOffset, directorySize);
  for (uint64_t i = 0; i < count; ++i) {
    if (directory.size() < CentralEntrySize || read32le(directory.data()) != CentralEntry)
      return problem(path, formatv("central directory entry {0} is malformed", i));
    const char *entry = directory.data();
    Member member;
    member.method = read16le(entry + 10);
    member.compressedSize = read32le(entry + 20);
    member.size = read32le(entry + 24);
    uint16_t nameLength = read16le(entry + 28), extraLength = read16le(entry + 30),
             commentLength = read16le(entry + 32);
    member.localOffset = read32le(entry + 42);
    size_t entrySize = CentralEntrySize + nameLength + extraLength + commentLength;
    if (directory.size() < entrySize)
      return problem(path, formatv("central directory entry {0} is truncated", i));
    member.name = directory.substr(CentralEntrySize, nameLength).str();
    StringRef extra = directory.substr(CentralEntrySize + nameLength, extraLength);
    if (!readZip64Extra(extra, member, member.size == 0xFFFFFFFF,
                        member.compressedSize == 0xFFFFFFFF, member.localOffset == 0xFFFFFFFF))
      return problem(path, "member '" + member.name + "' has a malformed zip64 extra field");
    members.push_back(std::move(member));
    directory = directory.drop_front(entrySize);
  }
  return members;
}

Expected<std::string> inflate(StringRef compressed, uint64_t size) {
  std::string out(size, '\0');
  z_stream stream{};
  // Negative window bits: a raw deflate stream, as zip stores it.
  if (inflateInit2(&stream, -MAX_WBITS) != Z_OK)
    return createStringError("zlib could not start");
  stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.data()));
  stream.avail_in = uInt(compressed.size());
  stream.next_out = reinterpret_cast<Bytef *>(out.data());
  stream.avail_out = uInt(out.size());
  int status = ::inflate(&stream, Z_FINISH);
  uint64_t produced = stream.total_out;
  inflateEnd(&stream);
  if (status != Z_STREAM_END || produced != size)
    return createStringError("the deflated data is corrupt");
  return out;
}

} // namespace

Expected<std::vector<NpzArray>> readNpz(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createFileError(path, buffer.getError());
  return parseNpz(std::move(*buffer));
}

Expected<std::vector<NpzArray>> parseNpz(std::shared_ptr<const MemoryBuffer> mapping) {
  StringRef path = mapping->getBufferIdentifier();
  StringRef bytes = mapping->getBuffer();
  Expected<std::vector<Member>> members = readCentralDirectory(path, bytes);
  if (!members)
    return members.takeError();

  std::vector<NpzArray> arrays;
  for (const Member &member : *members) {
    std::string where = (path + ": member '" + member.name + "'").str();
    if (member.localOffset > bytes.size() - std::min<size_t>(bytes.size(), LocalHeaderSize) ||
        read32le(bytes.data() + member.localOffset) != LocalHeader)
      return createStringError(where + ": local header is missing");
    const char *local = bytes.data() + member.localOffset;
    uint64_t dataStart =
        member.localOffset + LocalHeaderSize + read16le(local + 26) + read16le(local + 28);
    if (dataStart > bytes.size() || member.compressedSize > bytes.size() - dataStart)
      return createStringError(where + ": data extends past the end of the file");
    StringRef data = bytes.substr(dataStart, member.compressedSize);

    StringRef name = member.name;
    if (!name.consume_back(".npy"))
      return createStringError(where + ": not a .npy member");
    Expected<Tensor> tensor = Tensor();
    if (member.method == Stored) {
      tensor = parseNpy(data, where, mapping);
    } else if (member.method == Deflated) {
      Expected<std::string> inflated = inflate(data, member.size);
      if (!inflated)
        return createStringError(where + ": " + toString(inflated.takeError()));
      tensor = parseNpy(*inflated, where);
    } else {
      return createStringError(where + formatv(": compression method {0} is not supported "
                                               "(stored and deflated are)",
                                               member.method));
    }
    if (!tensor)
      return tensor.takeError();
    arrays.push_back({name.str(), std::move(*tensor)});
  }
  return arrays;
}

} // namespace modelc::runtime
