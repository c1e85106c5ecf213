//===- SafeTensors.cpp - Read and write .safetensors files ----------------===//
#include "runtime/SafeTensors.h"
#include "runtime/ProblemList.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;

namespace modelc::runtime {
namespace {

constexpr size_t HeaderLengthSize = 8;
constexpr StringLiteral MetadataKey("__metadata__");

/// One header entry, checked on its own but not yet against its neighbours.
struct RawEntry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

std::string formatRange(uint64_t begin, uint64_t end) {
  return formatv("[{0}, {1})", begin, end).str();
}

std::optional<Shape> parseShape(const json::Value *value) {
  const json::Array *dims = value ? value->getAsArray() : nullptr;
  if (!dims)
    return std::nullopt;
  Shape shape;
  for (const json::Value &dim : *dims) {
    std::optional<int64_t> extent = dim.getAsInteger();
    if (!extent || *extent < 0)
      return std::nullopt;
    shape.push_back(*extent);
  }
  return shape;
}

/// Checks one header entry against the data section's size.
std::optional<RawEntry> parseEntry(StringRef name, const json::Value &value, uint64_t dataSize,
                                   ProblemList &problems) {
  std::string where = "tensor '" + name.str() + "'";
  const json::Object *fields = value.getAsObject();
  if (!fields) {
    problems.add(where + ": entry is not a JSON object");
    return std::nullopt;
  }
  std::optional<StringRef> dtypeName = fields->getString("dtype");
  std::optional<DType> dtype;
  if (!dtypeName)
    problems.add(where + ": missing string field 'dtype'");
  else if (!(dtype = dtypeFromSafeTensorsName(*dtypeName)))
    problems.add(where + ": unsupported dtype '" + *dtypeName +
                 "' (supported: F16 BF16 F32 F64 I32 I64 BOOL)");
  std::optional<Shape> shape = parseShape(fields->get("shape"));
  if (!shape)
    problems.add(where + ": 'shape' must be an array of non-negative integers");
  const json::Array *offsets = fields->getArray("data_offsets");
  std::optional<int64_t> begin, end;
  if (offsets && offsets->size() == 2) {
    begin = (*offsets)[0].getAsInteger();
    end = (*offsets)[1].getAsInteger();
  }
  if (!begin || !end || *begin < 0 || *end < 0) {
    problems.add(where + ": 'data_offsets' must be [begin, end] of non-negative integers");
    return std::nullopt;
  }
  bool rangeOk = false;
  if (*end < *begin)
    problems.add(where + ": data_offsets " + formatRange(*begin, *end) + " end before they begin");
  else if (uint64_t(*end) > dataSize)
    problems.add(where + ": data_offsets " + formatRange(*begin, *end) +
                 " extend past the end of the data section (" + Twine(dataSize) + " bytes)");
  else
    rangeOk = true;
  if (!dtype || !shape)
    return std::nullopt;

  std::optional<int64_t> needed = checkedByteSize(*dtype, *shape);
  if (!needed) {
    problems.add(where + ": shape " + formatTensorType(*dtype, *shape) + " has too many elements");
    return std::nullopt;
  }
  if (rangeOk && *needed != *end - *begin) {
    problems.add(formatv("{0}: {1} needs {2} bytes, but data_offsets {3} hold {4}", where,
                         formatTensorType(*dtype, *shape), *needed, formatRange(*begin, *end),
                         *end - *begin)
                     .str());
    return std::nullopt;
  }
  if (!rangeOk)
    return std::nullopt;
  return RawEntry{name.str(), *dtype, std::move(*shape), uint64_t(*begin), uint64_t(*end)};
}

/// Sorts `entries` by offset and reports every pair of overlapping ones.
void checkOverlaps(std::vector<RawEntry> &entries, ProblemList &problems) {
  llvm::sort(entries, [](const RawEntry &a, const RawEntry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  // The entry reaching furthest so far: any later, non-empty entry starting
  // before its end overlaps it.
  const RawEntry *furthest = nullptr;
  for (const RawEntry &entry : entries) {
    if (entry.begin == entry.end)
      continue; // Empty tensors own no bytes.
    if (furthest && entry.begin < furthest->end)
      problems.add("tensors '" + furthest->name + "' " +
                   formatRange(furthest->begin, furthest->end) + " and '" + entry.name + "' " +
                   formatRange(entry.begin, entry.end) + " overlap");
    if (!furthest || entry.end > furthest->end)
      furthest = &entry;
  }
}

} // namespace

StringRef safeTensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::Bool:
    return "BOOL";
  }
  llvm_unreachable("unknown DType");
}

std::optional<DType> dtypeFromSafeTensorsName(StringRef name) {
  for (DType dtype : AllDTypes)
    if (safeTensorsDTypeName(dtype) == name)
      return dtype;
  return std::nullopt;
}

Expected<SafeTensorsFile> SafeTensorsFile::open(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return createFileError(path, buffer.getError());
  return fromBuffer(std::move(*buffer));
}

Expected<SafeTensorsFile> SafeTensorsFile::fromBuffer(std::unique_ptr<MemoryBuffer> buffer) {
  StringRef bytes = buffer->getBuffer();
  ProblemList problems(buffer->getBufferIdentifier());
  if (bytes.size() < HeaderLengthSize) {
    problems.add(
        formatv("file is {0} bytes, too short for the 8-byte header length", bytes.size()).str());
    return problems.take();
  }
  uint64_t headerLength = support::endian::read64le(bytes.data());
  if (headerLength > bytes.size() - HeaderLengthSize) {
    problems.add(formatv("header length {0} extends past the end of the file ({1} bytes)",
                         headerLength, bytes.size())
                     .str());
    return problems.take();
  }
  StringRef headerText = bytes.substr(HeaderLengthSize, headerLength);
  StringRef data = bytes.drop_front(HeaderLengthSize + headerLength);

  Expected<json::Value> header = json::parse(headerText);
  if (!header) {
    problems.add("malformed JSON header: " + toString(header.takeError()));
    return problems.take();
  }
  const json::Object *tensors = header->getAsObject();
  if (!tensors) {
    problems.add("the JSON header is not an object");
    return problems.take();
  }

  // json::Object is unordered; visit names sorted so problems are reported
  // in a stable order.
  std::vector<StringRef> names;
  for (const auto &[key, value] : *tensors)
    if (StringRef(key) != MetadataKey) // Free-form metadata; nothing here depends on it.
      names.push_back(key);
  llvm::sort(names);
  std::vector<RawEntry> rawEntries;
  for (StringRef name : names)
    if (std::optional<RawEntry> entry =
            parseEntry(name, *tensors->get(name), data.size(), problems))
      rawEntries.push_back(std::move(*entry));
  checkOverlaps(rawEntries, problems);
  std::map<std::string, std::string> metadata;
  if (const json::Value *raw = tensors->get(MetadataKey)) {
    const json::Object *object = raw->getAsObject();
    if (!object)
      problems.add("__metadata__ is not an object of strings");
    else
      for (const auto &[key, value] : *object) {
        if (std::optional<StringRef> text = value.getAsString())
          metadata[key.str()] = text->str();
        else
          problems.add(formatv("__metadata__ entry '{0}' is not a string", StringRef(key)).str());
      }
  }
  for (const RawEntry &entry : rawEntries) {
    if (entry.dtype != DType::Bool)
      continue;
    ArrayRef<uint8_t> elements = arrayRefFromStringRef(data.slice(entry.begin, entry.end));
    if (std::optional<size_t> bad = findInvalidBoolByte(elements))
      problems.add(formatv("tensor '{0}': bool element {1} is byte {2:x2}, not 0 or 1", entry.name,
                           *bad, unsigned(elements[*bad]))
                       .str());
  }
  if (!problems.empty())
    return problems.take();

  SafeTensorsFile file;
  file.Metadata = std::move(metadata);
  file.Buffer = std::move(buffer);
  auto keepAlive = std::static_pointer_cast<const void>(file.Buffer);
  for (RawEntry &entry : rawEntries) {
    const char *at = data.data() + entry.begin;
    // Zero-copy unless the bytes are misaligned for the element type.
    bool aligned = reinterpret_cast<uintptr_t>(at) % dtypeSize(entry.dtype) == 0;
    Tensor tensor = aligned ? Tensor::borrow(entry.dtype, entry.shape, at, keepAlive)
                            : Tensor::copyOf(entry.dtype, entry.shape, at);
    file.IndexByName[entry.name] = file.Entries.size();
    file.Entries.push_back({std::move(entry.name), std::move(tensor), entry.begin, entry.end});
  }
  return file;
}

StringRef SafeTensorsFile::name() const { return Buffer->getBufferIdentifier(); }

const SafeTensorsEntry *SafeTensorsFile::find(StringRef name) const {
  auto it = IndexByName.find(name);
  return it == IndexByName.end() ? nullptr : &Entries[it->second];
}

bool SafeTensorsFile::isMemoryMapped() const {
  return Buffer->getBufferKind() == MemoryBuffer::MemoryBuffer_MMap;
}

Expected<std::string> serializeSafeTensors(ArrayRef<NamedTensor> tensors,
                                           const std::map<std::string, std::string> &metadata) {
  json::Object header;
  if (!metadata.empty()) {
    json::Object entries;
    for (const auto &[key, value] : metadata)
      entries[key] = value;
    header[MetadataKey] = std::move(entries);
  }
  StringSet<> seen;
  uint64_t offset = 0;
  for (const NamedTensor &named : tensors) {
    if (named.name == MetadataKey)
      return createStringError("cannot save a tensor named '" + named.name +
                               "': the name is reserved");
    if (!seen.insert(named.name).second)
      return createStringError("cannot save two tensors named '" + named.name + "'");
    if (!named.tensor.device().isCPU())
      return createStringError("cannot save tensor '" + named.name + "' of type " +
                               named.tensor.str() + ": not a cpu tensor");
    uint64_t end = offset + named.tensor.nbytes();
    header[named.name] = json::Object{
        {"dtype", safeTensorsDTypeName(named.tensor.dtype())},
        {"shape", json::Array(named.tensor.shape())},
        {"data_offsets", json::Array{offset, end}},
    };
    offset = end;
  }

  std::string headerText = formatv("{0}", json::Value(std::move(header))).str();
  headerText.append((8 - headerText.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(HeaderLengthSize + headerText.size() + offset);
  char lengthBytes[HeaderLengthSize];
  support::endian::write64le(lengthBytes, headerText.size());
  out.append(lengthBytes, HeaderLengthSize);
  out += headerText;
  for (const NamedTensor &named : tensors) {
    Tensor dense = named.tensor.isContiguous() ? named.tensor : named.tensor.contiguous();
    out.append(static_cast<const char *>(dense.data()), dense.nbytes());
  }
  return out;
}

Error writeSafeTensors(StringRef path, ArrayRef<NamedTensor> tensors,
                       const std::map<std::string, std::string> &metadata) {
  Expected<std::string> bytes = serializeSafeTensors(tensors, metadata);
  if (!bytes)
    return bytes.takeError();
  return writeToOutput(path, [&](raw_ostream &os) {
    os << *bytes;
    return Error::success();
  });
}

} // namespace modelc::runtime
