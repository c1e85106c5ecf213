//===- main.cpp - Run the reference MLP through the modelc embedding API -===//
//
//   embed_mlp MLP.mdl WEIGHTS.safetensors INPUT.npy [EXPECTED.npy]
//
// Compiles the model, binds PyTorch's weights, runs `forward` on the input
// and prints the output; with EXPECTED.npy it also prints the largest
// absolute difference and fails above 1e-4. Inputs are float32 .npy files.
//
//===----------------------------------------------------------------------===//

#include "NpyF32.h"

#include <modelc/modelc.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace api = modelc::api;

namespace {

/// Prints what went wrong, as `modelc check` would, and fails.
template <typename T> bool failed(const api::Result<T> &result) {
  if (result)
    return false;
  std::fputs(result.errorText().c_str(), stderr);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MLP.mdl WEIGHTS.safetensors INPUT.npy [EXPECTED.npy]\n",
                 argv[0]);
    return 2;
  }
  std::printf("modelc %s\nstdlib: %s\n", api::version(), api::defaultStdlibDir().c_str());

  // Check the model file; diagnostics come back as values.
  api::Result<api::Program> program = api::Program::compileFile(argv[1]);
  if (failed(program))
    return 1;
  api::Result<api::Model> model =
      program->instantiate("Mlp", api::Device::cpu(), {{"in", 784}, {"hidden", 256}, {"out", 10}});
  if (failed(model))
    return 1;
  for (const api::EntryPoint &entry : model->entryPoints())
    std::printf("%s\n", entry.signature.c_str());

  // Bind the weights (all or nothing) and compile forward once.
  if (failed(model->loadWeights(argv[2])))
    return 1;
  api::Result<api::Function> forward = model->compile("forward");
  if (failed(forward))
    return 1;

  std::optional<npy::NpyArray> input = npy::readNpyF32(argv[3]);
  if (!input) {
    std::fprintf(stderr, "error: %s is not a float32 C-order .npy file\n", argv[3]);
    return 1;
  }
  api::Result<api::Tensor> x =
      api::Tensor::borrowHost(api::DType::F32, input->shape, input->values.data());
  if (failed(x))
    return 1;
  api::Result<api::Tensor> y = forward->call({*x});
  if (failed(y))
    return 1;
  std::vector<float> values = *y->toVector<float>();
  std::vector<int64_t> shape = y->shape();
  std::printf("output %s\n", y->str().c_str());
  for (int64_t row = 0; row < shape[0]; ++row) {
    for (int64_t col = 0; col < shape[1]; ++col)
      std::printf("%s%.6f", col ? " " : "", values[size_t(row * shape[1] + col)]);
    std::printf("\n");
  }

  if (argc > 4) {
    std::optional<npy::NpyArray> expected = npy::readNpyF32(argv[4]);
    if (!expected || expected->shape != shape) {
      std::fprintf(stderr, "error: %s does not hold a float32 %s array\n", argv[4],
                   y->str().c_str());
      return 1;
    }
    double worst = 0;
    for (size_t i = 0; i < values.size(); ++i)
      worst = std::max(worst, std::fabs(double(values[i]) - double(expected->values[i])));
    std::printf("max abs difference from %s: %.3g\n", argv[4], worst);
    if (!(worst <= 1e-4))
      return 1;
  }
  return 0;
}
