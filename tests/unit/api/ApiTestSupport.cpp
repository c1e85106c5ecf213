//===- ApiTestSupport.cpp - Shared fixtures of the public API tests -------===//

#include "ApiTestSupport.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace modelc::api::test {

std::string sourcePath(const std::string &file) {
  return std::string(MODELC_SOURCE_DIR) + "/" + file;
}

std::string safetensors(
    const std::vector<std::tuple<std::string, std::vector<int64_t>, std::vector<float>>> &tensors) {
  std::string header = "{", data;
  for (const auto &[name, shape, values] : tensors) {
    std::string dims;
    for (int64_t d : shape)
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    size_t begin = data.size();
    data.append(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name +
              "\":{\"dtype\":\"F32\",\"shape\":[" + dims + "],\"data_offsets\":[" +
              std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
  }
  header += "}";
  while (header.size() % 8)
    header += ' ';
  std::string image(8, '\0');
  uint64_t length = header.size();
  for (int i = 0; i < 8; ++i)
    image[size_t(i)] = char((length >> (8 * i)) & 0xff);
  return image + header + data;
}

int runCommand(const std::string &command, std::string &output) {
  output.clear();
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  return pclose(pipe);
}

Function compiledReferenceMlp(Device device) {
  Result<Program> program = Program::compileFile(sourcePath("examples/mlp.mdl"));
  if (!program)
    ADD_FAILURE() << program.errorText();
  Result<Model> model =
      program->instantiate("Mlp", device, {{"in", 784}, {"hidden", 256}, {"out", 10}});
  if (!model)
    ADD_FAILURE() << model.errorText();
  Status loaded = model->loadWeights(std::string(MODELC_REF_DIR) + "/mlp/weights.safetensors");
  if (!loaded)
    ADD_FAILURE() << loaded.errorText();
  Result<Function> forward = model->compile("forward");
  if (!forward) {
    ADD_FAILURE() << forward.errorText();
    std::abort();
  }
  return *forward;
}

std::vector<float> mlpInput(int64_t rows, unsigned seed) {
  std::vector<float> values(size_t(rows * 784));
  uint32_t state = seed * 2654435761u + 1;
  for (float &v : values) {
    state = state * 1664525u + 1013904223u;
    v = float(state >> 8) / float(1 << 24) * 2.0f - 1.0f;
  }
  return values;
}

Model logitsAndLossModel(Device device) {
  constexpr const char *source = R"mdl(model Head<D: device>(n: int, k: int) {
  param weight: f32[k, n]
  fn forward(x: f32[B, n] @ D, y: i64[B] @ D) -> (f32[B, k] @ D, f32[] @ D) {
    let logits = x @ weight.T
    return logits, cross_entropy(logits, y)
  }
}
)mdl";
  Result<Program> program = Program::compileString(source, "head.mdl");
  EXPECT_TRUE(program) << program.errorText();
  Result<Model> model = program->instantiate("Head", device, {{"n", 2}, {"k", 2}});
  EXPECT_TRUE(model) << model.errorText();
  std::string weights = safetensors({{"weight", {2, 2}, {1, 0, 0, 1}}});
  Status loaded = model->loadWeightsFromMemory(weights.data(), weights.size());
  EXPECT_TRUE(loaded) << loaded.errorText();
  return *model;
}

double logitsAndLossExpected() {
  return (std::log(1 + std::exp(-1.0)) + std::log(1 + std::exp(-2.0))) / 2;
}

} // namespace modelc::api::test
