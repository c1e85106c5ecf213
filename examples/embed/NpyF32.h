//===- NpyF32.h - Read a float32 .npy file (for the embedding example) -===//
//
// Just enough of the .npy format for the example and its tests: format 1.0
// or 2.0, little-endian float32, C order. Anything else reads as nullopt.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_EXAMPLES_EMBED_NPYF32_H
#define MODELC_EXAMPLES_EMBED_NPYF32_H

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace npy {

/// A little-endian float32, C-order .npy file (format 1.0 or 2.0).
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

inline std::optional<NpyArray> readNpyF32(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    return std::nullopt;
  size_t headerLength = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8, start = 10;
  if (bytes[6] >= 2) {
    if (bytes.size() < 12)
      return std::nullopt;
    headerLength |= size_t(uint8_t(bytes[10])) << 16 | size_t(uint8_t(bytes[11])) << 24;
    start = 12;
  }
  if (start + headerLength > bytes.size())
    return std::nullopt;
  std::string header = bytes.substr(start, headerLength);
  if (header.find("'<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos)
    return std::nullopt;
  NpyArray array;
  size_t open = header.find('(', header.find("'shape'")), close = header.find(')', open);
  if (open == std::string::npos || close == std::string::npos)
    return std::nullopt;
  int64_t count = 1;
  for (size_t at = open + 1; at < close;) {
    size_t end = header.find_first_of(",)", at);
    std::string dim = header.substr(at, end - at);
    if (dim.find_first_not_of(' ') != std::string::npos) {
      array.shape.push_back(std::strtoll(dim.c_str(), nullptr, 10));
      if (array.shape.back() < 0 || array.shape.back() > (int64_t(1) << 32))
        return std::nullopt;
      count *= array.shape.back();
      if (count > (int64_t(1) << 32))
        return std::nullopt;
    }
    at = end + 1;
  }
  size_t dataBytes = size_t(count) * sizeof(float);
  if (bytes.size() - start - headerLength != dataBytes)
    return std::nullopt;
  array.values.resize(size_t(count));
  std::memcpy(array.values.data(), bytes.data() + start + headerLength, dataBytes);
  return array;
}

} // namespace npy

#endif // MODELC_EXAMPLES_EMBED_NPYF32_H
