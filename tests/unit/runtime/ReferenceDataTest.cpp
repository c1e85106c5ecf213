//===- ReferenceDataTest.cpp - Load PyTorch's exported reference models ---===//
//
// ../shared/ref/{mlp,lenet5,mlp_block} hold PyTorch state dicts as
// safetensors, an input and PyTorch's output as .npy, and meta.json naming
// everything. These tests bind the weights against the state declared in
// meta.json, then recompute each model's forward pass in plain C++ from
// the loaded tensors and compare with PyTorch's output: the loader is right
// end to end only if every byte landed where it belongs.
//
//===----------------------------------------------------------------------===//
#include "runtime/Npy.h"
#include "runtime/SafeTensors.h"
#include "runtime/WeightLoader.h"

#include "RuntimeTestSupport.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace modelc::runtime;
using namespace modelc::runtime::testing;
using ::testing::HasSubstr;

namespace {

/// The directory of one reference model; empty when ../shared is absent.
std::string modelDir(llvm::StringRef model) {
  std::string ref = sharedRefDir();
  if (ref.empty())
    return ref;
  llvm::SmallString<256> path(ref);
  llvm::sys::path::append(path, model);
  return std::string(path);
}

std::string fileIn(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

#define SKIP_WITHOUT_SHARED_DATA(dir)                                                              \
  if ((dir).empty())                                                                               \
  GTEST_SKIP() << "reference data not found at " MODELC_SOURCE_DIR "/../shared/ref; "              \
                  "these tests need the shared/ folder beside the source tree"

DType dtypeFromTorchName(llvm::StringRef name) {
  if (name == "float32")
    return DType::F32;
  if (name == "float64")
    return DType::F64;
  if (name == "float16")
    return DType::F16;
  if (name == "bfloat16")
    return DType::BF16;
  if (name == "int32")
    return DType::I32;
  if (name == "int64")
    return DType::I64;
  EXPECT_EQ(name, "bool") << "unknown torch dtype in meta.json";
  return DType::Bool;
}

Shape shapeOf(const llvm::json::Object &spec) {
  Shape shape;
  if (const llvm::json::Array *dims = spec.getArray("shape"))
    for (const llvm::json::Value &dim : *dims)
      shape.push_back(dim.getAsInteger().value_or(-1));
  return shape;
}

/// What meta.json says about a model.
struct Meta {
  std::vector<StateEntry> state;
  std::string inputType, outputType;
};

Meta readMeta(llvm::StringRef dir) {
  Meta meta;
  auto buffer = llvm::MemoryBuffer::getFile(fileIn(dir, "meta.json"));
  EXPECT_TRUE(bool(buffer)) << "cannot read meta.json in " << dir.str();
  if (!buffer)
    return meta;
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*buffer)->getBuffer());
  EXPECT_TRUE(bool(json)) << llvm::toString(json.takeError());
  const llvm::json::Object *root = json ? json->getAsObject() : nullptr;
  if (!root)
    return meta;
  // {"dtype": "float32", "shape": [..]} as a dtype and shape; a malformed
  // entry fails the test instead of crashing it.
  auto typeOf = [](const llvm::json::Value *value) -> std::optional<std::pair<DType, Shape>> {
    const llvm::json::Object *spec = value ? value->getAsObject() : nullptr;
    std::optional<llvm::StringRef> dtype = spec ? spec->getString("dtype") : std::nullopt;
    EXPECT_TRUE(dtype.has_value()) << "meta.json: an entry without a dtype";
    if (!dtype)
      return std::nullopt;
    return std::make_pair(dtypeFromTorchName(*dtype), shapeOf(*spec));
  };
  auto firstOf = [&](llvm::StringRef key) -> const llvm::json::Value * {
    const llvm::json::Array *list = root->getArray(key);
    return list && !list->empty() ? &(*list)[0] : nullptr;
  };
  if (const llvm::json::Object *state = root->getObject("state"))
    for (const auto &[name, value] : *state)
      if (auto type = typeOf(&value))
        meta.state.push_back(
            {name.str(), type->first, type->second, Device::cpu(), StateKind::Param, std::nullopt});
  // json::Object is unordered; the loader does not care about declaration
  // order, but sorted names keep failure messages stable.
  llvm::sort(meta.state, [](const StateEntry &a, const StateEntry &b) { return a.name < b.name; });
  if (auto input = typeOf(firstOf("inputs")))
    meta.inputType = formatTensorType(input->first, input->second, Device::cpu());
  if (auto output = typeOf(firstOf("outputs")))
    meta.outputType = formatTensorType(output->first, output->second, Device::cpu());
  return meta;
}

/// A loaded reference model: bound weights, input, both outputs.
struct Reference {
  LoadedWeights weights;
  Tensor input, output, outputFp64;

  const Tensor &weight(llvm::StringRef name) const {
    const BoundState *bound = weights.find(name);
    EXPECT_NE(bound, nullptr) << name.str();
    return bound->tensor;
  }
};

std::optional<Reference> loadReference(llvm::StringRef dir) {
  Meta meta = readMeta(dir);
  llvm::Expected<LoadedWeights> weights =
      loadWeights(meta.state, fileIn(dir, "weights.safetensors"));
  llvm::Expected<Tensor> input = readNpy(fileIn(dir, "input.npy"));
  llvm::Expected<Tensor> output = readNpy(fileIn(dir, "output.npy"));
  llvm::Expected<Tensor> outputFp64 = readNpy(fileIn(dir, "output_fp64.npy"));
  if (!weights || !input || !output || !outputFp64) {
    ADD_FAILURE() << failureText(std::move(weights)) << "\n"
                  << failureText(std::move(input)) << "\n"
                  << failureText(std::move(output)) << "\n"
                  << failureText(std::move(outputFp64));
    return std::nullopt;
  }
  EXPECT_EQ(input->str(), meta.inputType);
  EXPECT_EQ(output->str(), meta.outputType);
  return Reference{std::move(*weights), *input, *output, *outputFp64};
}

//===----------------------------------------------------------------------===//
// Plain C++ forward passes, in double, on row-major buffers.
//===----------------------------------------------------------------------===//

using Values = std::vector<double>;

Values toValues(const Tensor &tensor) {
  Values values(size_t(tensor.numel()));
  Tensor flat = tensor.contiguous();
  Tensor view = Tensor::borrow(flat.dtype(), {flat.numel()}, flat.data());
  for (int64_t i = 0; i < flat.numel(); ++i)
    values[size_t(i)] = view.getAsDouble({i});
  return values;
}

/// y = x W^T + b for `rows` rows; W is [out, in] as PyTorch stores it.
Values linear(const Values &x, size_t rows, const Tensor &weight, const Tensor &bias) {
  size_t out = size_t(weight.shape()[0]), in = size_t(weight.shape()[1]);
  Values w = toValues(weight), b = toValues(bias), y(rows * out);
  for (size_t r = 0; r < rows; ++r)
    for (size_t o = 0; o < out; ++o) {
      double sum = b[o];
      for (size_t i = 0; i < in; ++i)
        sum += x[r * in + i] * w[o * in + i];
      y[r * out + o] = sum;
    }
  return y;
}

Values relu(Values x) {
  for (double &v : x)
    v = std::max(v, 0.0);
  return x;
}

/// Cross-correlation, stride 1, zero padding; x is [N, C, H, W].
Values conv2d(const Values &x, int64_t n, int64_t c, int64_t h, int64_t w, const Tensor &weight,
              const Tensor &bias, int64_t padding, int64_t &outH, int64_t &outW) {
  int64_t o = weight.shape()[0], k = weight.shape()[2];
  EXPECT_EQ(weight.shape()[1], c);
  outH = h + 2 * padding - k + 1;
  outW = w + 2 * padding - k + 1;
  Values kernel = toValues(weight), b = toValues(bias);
  Values y(size_t(n * o * outH * outW));
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t oi = 0; oi < o; ++oi)
      for (int64_t yi = 0; yi < outH; ++yi)
        for (int64_t xi = 0; xi < outW; ++xi) {
          double sum = b[size_t(oi)];
          for (int64_t ci = 0; ci < c; ++ci)
            for (int64_t ky = 0; ky < k; ++ky)
              for (int64_t kx = 0; kx < k; ++kx) {
                int64_t sy = yi + ky - padding, sx = xi + kx - padding;
                if (sy < 0 || sy >= h || sx < 0 || sx >= w)
                  continue;
                sum += x[size_t(((ni * c + ci) * h + sy) * w + sx)] *
                       kernel[size_t(((oi * c + ci) * k + ky) * k + kx)];
              }
          y[size_t(((ni * o + oi) * outH + yi) * outW + xi)] = sum;
        }
  return y;
}

/// MaxPool2d(2): 2x2 windows, stride 2, floor.
Values maxPool2(const Values &x, int64_t planes, int64_t &h, int64_t &w) {
  int64_t outH = h / 2, outW = w / 2;
  Values y(size_t(planes * outH * outW));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t yi = 0; yi < outH; ++yi)
      for (int64_t xi = 0; xi < outW; ++xi) {
        double best = -INFINITY;
        for (int64_t dy = 0; dy < 2; ++dy)
          for (int64_t dx = 0; dx < 2; ++dx)
            best = std::max(best, x[size_t((p * h + 2 * yi + dy) * w + 2 * xi + dx)]);
        y[size_t((p * outH + yi) * outW + xi)] = best;
      }
  h = outH;
  w = outW;
  return y;
}

/// The largest |a - b| over all elements.
double maxAbsDiff(const Values &a, const Values &b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

void expectMatchesPyTorch(const Values &computed, const Reference &ref) {
  // PyTorch's f32 output differs from exact arithmetic by rounding only;
  // the f64 reference used the same weights and input, so it agrees with
  // our double computation up to summation order.
  EXPECT_LT(maxAbsDiff(computed, toValues(ref.output)), 1e-4);
  EXPECT_LT(maxAbsDiff(computed, toValues(ref.outputFp64)), 1e-9);
}

} // namespace

//===----------------------------------------------------------------------===//
// The files agree with meta.json
//===----------------------------------------------------------------------===//

class ReferenceFilesTest : public ::testing::TestWithParam<const char *> {};

TEST_P(ReferenceFilesTest, WeightsMatchTheDeclaredState) {
  std::string dir = modelDir(GetParam());
  SKIP_WITHOUT_SHARED_DATA(dir);
  Meta meta = readMeta(dir);
  ASSERT_FALSE(meta.state.empty());

  llvm::Expected<SafeTensorsFile> file = SafeTensorsFile::open(fileIn(dir, "weights.safetensors"));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_TRUE(file->isMemoryMapped());
  EXPECT_EQ(file->entries().size(), meta.state.size());
  for (const StateEntry &entry : meta.state) {
    const SafeTensorsEntry *found = file->find(entry.name);
    ASSERT_NE(found, nullptr) << entry.name;
    EXPECT_EQ(found->tensor.str(), entry.typeString());
    EXPECT_FALSE(found->tensor.isOwning()) << entry.name << " should be zero-copy";
    for (double value : toValues(found->tensor))
      ASSERT_TRUE(std::isfinite(value)) << entry.name;
  }

  llvm::Expected<LoadedWeights> loaded = bindWeights(meta.state, *file);
  ASSERT_TRUE(bool(loaded)) << llvm::toString(loaded.takeError());
  EXPECT_EQ(loaded->size(), meta.state.size());
}

TEST_P(ReferenceFilesTest, InputsAndOutputsMatchMeta) {
  std::string dir = modelDir(GetParam());
  SKIP_WITHOUT_SHARED_DATA(dir);
  std::optional<Reference> ref = loadReference(dir);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->outputFp64.dtype(), DType::F64);
  EXPECT_EQ(ref->outputFp64.shape(), ref->output.shape());
  // PyTorch's f32 output is within 1e-6 of its f64 output (ref/README.md).
  EXPECT_LT(maxAbsDiff(toValues(ref->output), toValues(ref->outputFp64)), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Models, ReferenceFilesTest,
                         ::testing::Values("mlp", "lenet5", "mlp_block"));

TEST(ReferenceModelTest, TransposedDeclarationIsReported) {
  std::string dir = modelDir("mlp");
  SKIP_WITHOUT_SHARED_DATA(dir);
  std::vector<StateEntry> state = readMeta(dir).state;
  auto fc1 = llvm::find_if(state, [](const StateEntry &e) { return e.name == "fc1.weight"; });
  ASSERT_NE(fc1, state.end());
  fc1->shape = {784, 256};
  std::string path = fileIn(dir, "weights.safetensors");
  EXPECT_EQ(failureText(loadWeights(state, path)),
            path + ": fc1.weight: expected f32[784, 256], found f32[256, 784]");
}

//===----------------------------------------------------------------------===//
// Forward passes from the loaded tensors reproduce PyTorch's outputs
//===----------------------------------------------------------------------===//

TEST(ReferenceModelTest, MlpForwardMatchesPyTorch) {
  std::string dir = modelDir("mlp");
  SKIP_WITHOUT_SHARED_DATA(dir);
  std::optional<Reference> ref = loadReference(dir);
  ASSERT_TRUE(ref.has_value());
  size_t batch = size_t(ref->input.shape()[0]);
  Values h =
      relu(linear(toValues(ref->input), batch, ref->weight("fc1.weight"), ref->weight("fc1.bias")));
  Values logits = linear(h, batch, ref->weight("fc2.weight"), ref->weight("fc2.bias"));
  // log_softmax over dim 1.
  const size_t classes = 10;
  for (size_t r = 0; r < batch; ++r) {
    double *row = &logits[r * classes];
    double top = *std::max_element(row, row + classes), sum = 0;
    for (size_t c = 0; c < classes; ++c)
      sum += std::exp(row[c] - top);
    for (size_t c = 0; c < classes; ++c)
      row[c] -= top + std::log(sum);
  }
  expectMatchesPyTorch(logits, *ref);
}

TEST(ReferenceModelTest, LeNet5ForwardMatchesPyTorch) {
  std::string dir = modelDir("lenet5");
  SKIP_WITHOUT_SHARED_DATA(dir);
  std::optional<Reference> ref = loadReference(dir);
  ASSERT_TRUE(ref.has_value());
  llvm::ArrayRef<int64_t> in = ref->input.shape(); // [N, 1, 28, 28]
  int64_t n = in[0], h = in[2], w = in[3], outH = 0, outW = 0;
  Values x = conv2d(toValues(ref->input), n, in[1], h, w, ref->weight("conv1.weight"),
                    ref->weight("conv1.bias"), /*padding=*/2, outH, outW);
  x = maxPool2(relu(std::move(x)), n * 6, outH, outW);
  h = outH;
  w = outW;
  x = conv2d(x, n, 6, h, w, ref->weight("conv2.weight"), ref->weight("conv2.bias"),
             /*padding=*/0, outH, outW);
  x = maxPool2(relu(std::move(x)), n * 16, outH, outW);
  ASSERT_EQ(16 * outH * outW, 400) << "flatten must give fc1's 400 inputs";
  x = relu(linear(x, size_t(n), ref->weight("fc1.weight"), ref->weight("fc1.bias")));
  x = relu(linear(x, size_t(n), ref->weight("fc2.weight"), ref->weight("fc2.bias")));
  x = linear(x, size_t(n), ref->weight("fc3.weight"), ref->weight("fc3.bias"));
  expectMatchesPyTorch(x, *ref);
}

TEST(ReferenceModelTest, MlpBlockForwardMatchesPyTorch) {
  std::string dir = modelDir("mlp_block");
  SKIP_WITHOUT_SHARED_DATA(dir);
  std::optional<Reference> ref = loadReference(dir);
  ASSERT_TRUE(ref.has_value());
  const size_t width = 256, rows = size_t(ref->input.numel()) / width;
  Values x = toValues(ref->input);
  // LayerNorm(256): biased variance, eps 1e-5, then scale and shift.
  Values gamma = toValues(ref->weight("norm.weight")), beta = toValues(ref->weight("norm.bias"));
  Values normed(x.size());
  for (size_t r = 0; r < rows; ++r) {
    const double *row = &x[r * width];
    double mean = 0, var = 0;
    for (size_t i = 0; i < width; ++i)
      mean += row[i];
    mean /= width;
    for (size_t i = 0; i < width; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= width;
    for (size_t i = 0; i < width; ++i)
      normed[r * width + i] = (row[i] - mean) / std::sqrt(var + 1e-5) * gamma[i] + beta[i];
  }
  Values hidden = linear(normed, rows, ref->weight("fc1.weight"), ref->weight("fc1.bias"));
  for (double &v : hidden) // Exact GELU.
    v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  Values y = linear(hidden, rows, ref->weight("fc2.weight"), ref->weight("fc2.bias"));
  for (size_t i = 0; i < y.size(); ++i)
    y[i] += x[i];
  expectMatchesPyTorch(y, *ref);
}
