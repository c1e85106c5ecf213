//===- ApiTest.cpp - The public embedding API through libmodelc.so --------===//

#include "ApiTestSupport.h"

#include "../../../examples/embed/NpyF32.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

using namespace modelc::api;
using namespace modelc::api::test;

namespace {

/// The README's example: a bias left on the cpu while the rest follows D.
constexpr const char *kDeviceBug = R"mdl(model Affine<D: device>(in: int, out: int) {
  param weight: f32[out, in]
  param bias: f32[out] @ cpu

  fn forward(x: f32[B, in] @ D) -> f32[B, out] @ D {
    return x @ weight.T + bias
  }
}
)mdl";

constexpr const char *kTiny = R"mdl(import std.nn

/// Doubles a linear layer's output.
model Tiny<D: device>(in: int, out: int, gain: float = 2.0) {
  fc = nn.Linear(in, out)

  fn forward(x: f32[B, in] @ D) -> f32[B, out] @ D {
    return fc(x) * gain
  }
}
)mdl";

/// fc.weight = [[1, 2], [3, 4], [5, 6]], fc.bias = [0.5, -0.5, 1].
std::string tinyWeights() {
  return safetensors(
      {{"fc.weight", {3, 2}, {1, 2, 3, 4, 5, 6}}, {"fc.bias", {3}, {0.5f, -0.5f, 1}}});
}

Model tinyModel() {
  Result<Program> program = Program::compileString(kTiny, "tiny.mdl");
  EXPECT_TRUE(program) << program.errorText();
  Result<Model> model = program->instantiate("Tiny", Device::cpu(), {{"in", 2}, {"out", 3}});
  EXPECT_TRUE(model) << model.errorText();
  std::string weights = tinyWeights();
  Status loaded = model->loadWeightsFromMemory(weights.data(), weights.size(), "tiny.safetensors");
  EXPECT_TRUE(loaded) << loaded.errorText();
  return *model;
}

/// `text` without the whitespace outside string literals.
std::string compactJson(const std::string &text) {
  std::string result;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      result += c;
      if (c == '\\' && i + 1 < text.size())
        result += text[++i];
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
      result += c;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      result += c;
    }
  }
  return result;
}

std::string runDriver(const std::string &arguments) {
  std::string output;
  FILE *pipe = popen((std::string(MODELC_DRIVER) + " " + arguments).c_str(), "r");
  if (!pipe)
    return output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  pclose(pipe);
  return output;
}

TEST(ApiDiagnostics, CompileErrorsAreStructuredValues) {
  Result<Program> program = Program::compileString(kDeviceBug, "affine.mdl");
  ASSERT_FALSE(program);
  ASSERT_EQ(program.diagnostics().size(), 1u);
  const Diagnostic &d = program.diagnostics()[0];
  EXPECT_EQ(d.code, "E0301");
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_EQ(d.message, "operands of `+` are on different devices");
  const Label *primary = d.primaryLabel();
  ASSERT_NE(primary, nullptr);
  EXPECT_EQ(primary->range.file, "affine.mdl");
  EXPECT_EQ(primary->range.start.line, 6u);
  EXPECT_EQ(primary->range.start.column, 27u);
  EXPECT_EQ(primary->range.end.column, 31u);
  EXPECT_EQ(primary->message, "f32[out] @ cpu");
  ASSERT_GE(d.labels.size(), 2u);
  EXPECT_EQ(d.labels[1].message, "f32[B, out] @ D");
  ASSERT_GE(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].message, "`bias` is declared on cpu here");
  ASSERT_GE(d.suggestions.size(), 2u);
  EXPECT_EQ(d.suggestions[0].message, "declare it on D");
  ASSERT_EQ(d.suggestions[0].edits.size(), 1u);
  EXPECT_EQ(d.suggestions[0].edits[0].replacement, "D");
  EXPECT_EQ(d.suggestions[0].edits[0].range.start.line, 3u);
  EXPECT_EQ(d.suggestions[1].edits[0].replacement, ".to(D)");
  EXPECT_NE(d.rendered.find("error[E0301]: operands of `+` are on different devices\n --> "
                            "affine.mdl:6:27"),
            std::string::npos)
      << d.rendered;
}

TEST(ApiDiagnostics, SameContentAsCheckFormatJson) {
  if (!std::ifstream(MODELC_DRIVER))
    GTEST_SKIP() << "the modelc driver is not built";
  std::string path = testing::TempDir() + "api_affine.mdl";
  std::ofstream(path) << kDeviceBug;
  Result<Program> program = Program::compileFile(path);
  ASSERT_FALSE(program);
  std::string driverJson = runDriver("check --format=json " + path);
  ASSERT_FALSE(driverJson.empty());
  EXPECT_EQ(compactJson(diagnosticsToJson(program.diagnostics())), compactJson(driverJson));
}

TEST(ApiDiagnostics, ErrorsOutsideTheModelHaveNoCode) {
  Result<Program> missing = Program::compileFile("/nonexistent/net.mdl");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.errorText().find("/nonexistent/net.mdl"), std::string::npos);

  Result<Program> program = Program::compileString(kTiny, "tiny.mdl");
  ASSERT_TRUE(program) << program.errorText();
  Result<Model> unknown = program->instantiate("Huge", Device::cpu());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.diagnostics()[0].code, "");
  EXPECT_EQ(unknown.diagnostics()[0].message, "no model named 'Huge' (models: Tiny)");
  Result<Model> badArg = program->instantiate("Tiny", Device::cpu(), {{"in", 2}, {"out", 2.5}});
  ASSERT_FALSE(badArg);
  EXPECT_NE(badArg.errorText().find("'out' must be an int"), std::string::npos)
      << badArg.errorText();
  EXPECT_FALSE(program->instantiate("Tiny", Device::cuda(300), {{"in", 2}, {"out", 3}}));
  EXPECT_FALSE(program->instantiate("Tiny", Device::cpu(), {{"in,x", 2}}));
  EXPECT_FALSE(Model::load("/nonexistent/model.mdlc"));
}

TEST(ApiProgram, ListsModelsAndSignatures) {
  Result<Program> program = Program::compileFile(sourcePath("examples/mlp.mdl"));
  ASSERT_TRUE(program) << program.errorText();
  std::vector<ModelInfo> models = program->models();
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].name, "Mlp");
  EXPECT_EQ(models[0].deviceParams, (std::vector<std::string>{"D"}));
  EXPECT_EQ(models[0].valueParams,
            (std::vector<std::string>{"in: int", "hidden: int", "out: int"}));

  Result<Model> model =
      program->instantiate("Mlp", Device::cuda(1), {{"in", 784}, {"hidden", 256}, {"out", 10}});
  ASSERT_TRUE(model) << model.errorText();
  EXPECT_EQ(model->name(), "Mlp");
  EXPECT_EQ(model->device(), Device::cuda(1));
  std::vector<EntryPoint> entries = model->entryPoints();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].signature, "fn forward(x: f32[B, 784] @ cuda:1) -> f32[B, 10] @ cuda:1");
  ASSERT_EQ(entries[0].params.size(), 1u);
  const TensorType &x = entries[0].params[0].type;
  EXPECT_EQ(x.dtype, DType::F32);
  ASSERT_EQ(x.shape.size(), 2u);
  EXPECT_TRUE(x.shape[0].isSymbolic());
  EXPECT_EQ(x.shape[0].symbol, "B");
  EXPECT_EQ(x.shape[1].extent, 784);
  EXPECT_EQ(x.device, Device::cuda(1));
  std::vector<StateEntry> state = model->state();
  ASSERT_EQ(state.size(), 4u);
  EXPECT_EQ(state[0].name, "fc1.weight");
  EXPECT_EQ(state[0].type.text, "f32[256, 784] @ cuda:1");
}

TEST(ApiRun, ReferenceMlpMatchesPyTorch) {
  Function forward = compiledReferenceMlp();
  std::optional<npy::NpyArray> input =
      npy::readNpyF32(std::string(MODELC_REF_DIR) + "/mlp/input.npy");
  std::optional<npy::NpyArray> expected =
      npy::readNpyF32(std::string(MODELC_REF_DIR) + "/mlp/output.npy");
  ASSERT_TRUE(input && expected);
  Result<Tensor> x = Tensor::borrowHost(DType::F32, input->shape, input->values.data());
  ASSERT_TRUE(x);
  Result<Tensor> y = forward.call({*x});
  ASSERT_TRUE(y) << y.errorText();
  EXPECT_EQ(y->str(), "f32[4, 10] @ cpu");
  std::vector<float> values = *y->toVector<float>();
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_NEAR(values[i], expected->values[i], 1e-4) << "element " << i;
}

TEST(ApiRun, OptionArgumentsAndOptionalState) {
  // `bias: false` leaves `fc.bias` out of the state; `activation` picks the
  // branch; the weights file has only `fc.weight`.
  constexpr const char *kOptions = R"mdl(import std.nn
model Head<D: device>(in: int, out: int, bias: bool = true, activation: "relu" | "neg" = "relu") {
  fc = nn.Linear(in, out, bias: bias)
  fn forward(x: f32[B, in] @ D) -> f32[B, out] @ D {
    if activation == "neg" {
      return -fc(x)
    }
    return relu(fc(x))
  }
}
)mdl";
  Result<Program> program = Program::compileString(kOptions, "head.mdl");
  ASSERT_TRUE(program) << program.errorText();
  Result<Model> model = program->instantiate(
      "Head", Device::cpu(), {{"in", 2}, {"out", 3}, {"bias", false}, {"activation", "neg"}});
  ASSERT_TRUE(model) << model.errorText();
  ASSERT_EQ(model->state().size(), 1u);
  EXPECT_EQ(model->state()[0].name, "fc.weight");
  std::string weights = safetensors({{"fc.weight", {3, 2}, {1, 2, 3, 4, 5, 6}}});
  Status loaded = model->loadWeightsFromMemory(weights.data(), weights.size(), "head.safetensors");
  ASSERT_TRUE(loaded) << loaded.errorText();
  Result<Function> forward = model->compile();
  ASSERT_TRUE(forward) << forward.errorText();
  Result<Tensor> y = forward->call({*Tensor::fromValues<float>({1, 2}, {1, 1})});
  ASSERT_TRUE(y) << y.errorText();
  EXPECT_EQ(*y->toVector<float>(), (std::vector<float>{-3, -7, -11}));
  Result<Model> unknown =
      program->instantiate("Head", Device::cpu(), {{"in", 2}, {"out", 3}, {"activation", "tanh"}});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.errorText().find("no option 'tanh' (options: relu, neg)"), std::string::npos)
      << unknown.errorText();
}

TEST(ApiRun, TupleArgumentsTakeIntsOrPairs) {
  // `kernel_size: (int, int)`: ArgValue::ints gives each element, an int
  // gives both.
  constexpr const char *kPool =
      R"mdl(model Pool<D: device>(kernel_size: (int, int), stride: (int, int) = kernel_size) {
  fn forward(x: f32[N, C, H, W] @ D) -> f32[N, C, (H - kernel_size[0]) / stride[0] + 1, (W - kernel_size[1]) / stride[1] + 1] @ D {
    return max_pool2d(x, kernel_size, stride: stride)
  }
}
)mdl";
  Result<Program> program = Program::compileString(kPool, "pool.mdl");
  ASSERT_TRUE(program) << program.errorText();
  ASSERT_EQ(program->models().size(), 1u);
  EXPECT_EQ(
      program->models()[0].valueParams,
      (std::vector<std::string>{"kernel_size: (int, int)", "stride: (int, int) = kernel_size"}));
  std::vector<float> values(2 * 4);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(i);
  Result<Tensor> x = Tensor::fromValues<float>({1, 1, 2, 4}, values);
  ASSERT_TRUE(x);

  Result<Model> rect =
      program->instantiate("Pool", Device::cpu(), {{"kernel_size", ArgValue::ints({2, 1})}});
  ASSERT_TRUE(rect) << rect.errorText();
  Result<Function> forward = rect->compile();
  ASSERT_TRUE(forward) << forward.errorText();
  Result<Tensor> y = forward->call({*x});
  ASSERT_TRUE(y) << y.errorText();
  EXPECT_EQ(y->str(), "f32[1, 1, 1, 4] @ cpu");
  EXPECT_EQ(*y->toVector<float>(), (std::vector<float>{4, 5, 6, 7}));

  Result<Model> square = program->instantiate("Pool", Device::cpu(), {{"kernel_size", 2}});
  ASSERT_TRUE(square) << square.errorText();
  Result<Function> squareForward = square->compile();
  ASSERT_TRUE(squareForward) << squareForward.errorText();
  Result<Tensor> z = squareForward->call({*x});
  ASSERT_TRUE(z) << z.errorText();
  EXPECT_EQ(*z->toVector<float>(), (std::vector<float>{5, 7}));

  Result<Model> wrong =
      program->instantiate("Pool", Device::cpu(), {{"kernel_size", ArgValue::ints({2, 1, 1})}});
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.errorText().find("must be an int or 2 ints"), std::string::npos)
      << wrong.errorText();
}

TEST(ApiRun, DtypeArguments) {
  // A model written over its dtype: the argument (a DType or its name)
  // sets the dtype of the state and of the entry fn.
  constexpr const char *kLin = R"mdl(
model Lin<D: device>(in: int, out: int, dtype: dtype = f32) {
  param weight: dtype[out, in]
  fn forward(x: f32[B, in] @ D) -> f32[B, out] @ D {
    return (x.to(dtype) @ weight.T).to(f32)
  }
}
)mdl";
  Result<Program> program = Program::compileString(kLin, "lin.mdl");
  ASSERT_TRUE(program) << program.errorText();
  for (ArgValue dtype : {ArgValue(DType::BF16), ArgValue("bf16")}) {
    Result<Model> model =
        program->instantiate("Lin", Device::cpu(), {{"in", 2}, {"out", 3}, {"dtype", dtype}});
    ASSERT_TRUE(model) << model.errorText();
    ASSERT_EQ(model->state().size(), 1u);
    EXPECT_EQ(model->state()[0].type.dtype, DType::BF16);
    EXPECT_EQ(model->state()[0].type.text, "bf16[3, 2] @ cpu");
    // f32 weights do not fit a bf16 instance.
    std::string weights = safetensors({{"weight", {3, 2}, {1, 2, 3, 4, 5, 6}}});
    Status loaded = model->loadWeightsFromMemory(weights.data(), weights.size(), "w.safetensors");
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.diagnostics().at(0).code, "E0607");
  }
  Result<Model> f32 = program->instantiate("Lin", Device::cpu(), {{"in", 2}, {"out", 3}});
  ASSERT_TRUE(f32) << f32.errorText();
  EXPECT_EQ(f32->state()[0].type.dtype, DType::F32);
  for (ArgValue bad : {ArgValue(DType::I64), ArgValue("half")}) {
    Result<Model> model =
        program->instantiate("Lin", Device::cpu(), {{"in", 2}, {"out", 3}, {"dtype", bad}});
    ASSERT_FALSE(model);
    EXPECT_NE(model.errorText().find("must be a floating dtype (f16, bf16, f32 or f64)"),
              std::string::npos)
        << model.errorText();
  }
}

TEST(ApiRun, OneCompilationServesEveryBatchSize) {
  Model model = tinyModel();
  Result<Function> forward = model.compile();
  ASSERT_TRUE(forward) << forward.errorText();
  for (int64_t batch : {1, 3, 7}) {
    std::vector<float> x(size_t(batch * 2));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = float(i);
    Result<Tensor> y = forward->call({*Tensor::fromValues<float>({batch, 2}, x)});
    ASSERT_TRUE(y) << y.errorText();
    ASSERT_EQ(y->shape(), (std::vector<int64_t>{batch, 3}));
    std::vector<float> values = *y->toVector<float>();
    for (int64_t b = 0; b < batch; ++b) {
      float x0 = x[size_t(2 * b)], x1 = x[size_t(2 * b + 1)];
      EXPECT_FLOAT_EQ(values[size_t(3 * b)], 2 * (x0 + 2 * x1 + 0.5f));
      EXPECT_FLOAT_EQ(values[size_t(3 * b + 1)], 2 * (3 * x0 + 4 * x1 - 0.5f));
      EXPECT_FLOAT_EQ(values[size_t(3 * b + 2)], 2 * (5 * x0 + 6 * x1 + 1));
    }
  }
}

TEST(ApiRun, InputsAreCheckedAtTheBoundary) {
  Model model = tinyModel();
  Result<Function> forward = model.compile("forward");
  ASSERT_TRUE(forward) << forward.errorText();
  auto firstError = [&](const std::vector<Tensor> &inputs) {
    Result<Tensor> y = forward->call(inputs);
    EXPECT_FALSE(y);
    return y ? Diagnostic() : y.diagnostics().at(0);
  };

  Diagnostic dtype = firstError({*Tensor::zeros(DType::F64, {4, 2})});
  EXPECT_EQ(dtype.code, "E0603");
  EXPECT_EQ(dtype.message, "input 1 of `forward` has dtype f64, expected f32");
  ASSERT_NE(dtype.primaryLabel(), nullptr);
  EXPECT_EQ(dtype.primaryLabel()->message, "`x` is declared f32[B, 2] @ cpu");
  EXPECT_EQ(dtype.primaryLabel()->range.start.line, 7u);

  Diagnostic shape = firstError({*Tensor::zeros(DType::F32, {4, 5})});
  EXPECT_EQ(shape.code, "E0604");
  EXPECT_EQ(shape.message, "input 1 of `forward` has shape [4, 5], expected [B, 2]");

  Diagnostic count = firstError({});
  EXPECT_EQ(count.code, "E0602");

  Result<Tensor> onCuda = Tensor::zeros(DType::F32, {4, 2}, Device::cuda(0));
  ASSERT_TRUE(onCuda) << onCuda.errorText();
  Diagnostic device = firstError({*onCuda});
  EXPECT_EQ(device.code, "E0606");
  EXPECT_EQ(device.message, "input 1 of `forward` is on cuda:0, expected cpu");

  Diagnostic null = firstError({Tensor()});
  EXPECT_NE(null.message.find("null tensor"), std::string::npos);
}

TEST(ApiWeights, MismatchesLoadNothing) {
  Result<Program> program = Program::compileString(kTiny, "tiny.mdl");
  ASSERT_TRUE(program);
  Result<Model> model = program->instantiate("Tiny", Device::cpu(), {{"in", 2}, {"out", 3}});
  ASSERT_TRUE(model);
  EXPECT_FALSE(model->compile()); // no weights yet

  std::string wrong = safetensors({{"fc.weight", {2, 3}, {1, 2, 3, 4, 5, 6}}, {"extra", {1}, {0}}});
  Status loaded = model->loadWeightsFromMemory(wrong.data(), wrong.size(), "wrong.safetensors");
  ASSERT_FALSE(loaded);
  const Diagnostic &d = loaded.diagnostics().at(0);
  EXPECT_EQ(d.code, "E0607");
  EXPECT_EQ(d.message, "the weights in `wrong.safetensors` do not fit model `Tiny`");
  std::string notes;
  for (const Note &n : d.notes)
    notes += n.message + "\n";
  EXPECT_NE(notes.find("fc.weight"), std::string::npos) << notes;
  EXPECT_NE(notes.find("fc.bias"), std::string::npos) << notes;
  EXPECT_NE(notes.find("extra"), std::string::npos) << notes;
  EXPECT_FALSE(model->hasWeights());

  std::string garbage = "not a safetensors file";
  EXPECT_FALSE(model->loadWeightsFromMemory(garbage.data(), garbage.size()));
  EXPECT_FALSE(model->loadWeights("/nonexistent/w.safetensors"));
  EXPECT_FALSE(model->hasWeights());
}

TEST(ApiTensor, HostTensorsCopyOrBorrow) {
  std::vector<float> values = {1, 2, 3, 4, 5, 6};
  Result<Tensor> copied = Tensor::copyFromHost(DType::F32, {2, 3}, values.data());
  Result<Tensor> borrowed = Tensor::borrowHost(DType::F32, {2, 3}, values.data());
  ASSERT_TRUE(copied && borrowed);
  EXPECT_EQ(borrowed->hostData(), values.data());
  EXPECT_NE(copied->hostData(), values.data());
  values[0] = 9;
  EXPECT_EQ(copied->toVector<float>()->at(0), 1);
  EXPECT_EQ(borrowed->toVector<float>()->at(0), 9);
  EXPECT_EQ(copied->str(), "f32[2, 3] @ cpu");
  EXPECT_EQ(copied->numel(), 6);
  EXPECT_EQ(copied->nbytes(), 24u);
  EXPECT_EQ(copied->rank(), 2u);

  EXPECT_FALSE(Tensor::copyFromHost(DType::F32, {-1, 3}, values.data()));
  EXPECT_FALSE(Tensor::copyFromHost(DType::F32, {int64_t(1) << 62, 8}, values.data()));
  EXPECT_FALSE(Tensor::borrowHost(DType::F32, {2}, nullptr));
  EXPECT_FALSE(Tensor::fromValues<float>({4}, {1, 2}));
  EXPECT_FALSE(copied->toVector<int32_t>());
  float small[2];
  EXPECT_FALSE(copied->copyToHost(small, sizeof small));
  uint8_t notBool = 2;
  EXPECT_FALSE(Tensor::copyFromHost(DType::Bool, {1}, &notBool));
  Result<std::vector<bool>> flags = Tensor::fromValues<bool>({2}, {true, false})->toVector<bool>();
  ASSERT_TRUE(flags);
  EXPECT_EQ(*flags, (std::vector<bool>{true, false}));
  EXPECT_TRUE(Tensor().isNull());
  EXPECT_FALSE(Tensor().to(Device::cpu()));
}

TEST(ApiTensor, CopiesBetweenDevices) {
  // MODELC_CUDA=emulate (set by ctest) runs cuda:N on the CPU emulator.
  Result<Tensor> host = Tensor::fromValues<int64_t>({3}, {7, -8, 9});
  ASSERT_TRUE(host);
  Result<Tensor> device = host->to(Device::cuda(0));
  ASSERT_TRUE(device) << device.errorText();
  EXPECT_EQ(device->str(), "i64[3] @ cuda:0");
  EXPECT_EQ(device->hostData(), nullptr);
  Result<Tensor> again = device->to(Device::cuda(0));
  ASSERT_TRUE(again) << again.errorText();
  Result<Tensor> back = again->to(Device::cpu());
  ASSERT_TRUE(back) << back.errorText();
  EXPECT_EQ(*back->toVector<int64_t>(), (std::vector<int64_t>{7, -8, 9}));
  EXPECT_EQ(*device->toVector<int64_t>(), (std::vector<int64_t>{7, -8, 9}));
  Result<Tensor> zeros = Tensor::zeros(DType::F32, {2, 2}, Device::cuda(0));
  ASSERT_TRUE(zeros);
  EXPECT_EQ(*zeros->toVector<float>(), (std::vector<float>{0, 0, 0, 0}));
  EXPECT_FALSE(Device::parse("tpu:0"));
  EXPECT_EQ(*Device::parse("cuda:2"), Device::cuda(2));
}

TEST(ApiTest, AFnWithSeveralResultsReturnsOneTensorPerResult) {
  Result<Function> forward = logitsAndLossModel(Device::cpu()).compile();
  ASSERT_TRUE(forward) << forward.errorText();
  const EntryPoint &sig = forward->signature();
  EXPECT_EQ(sig.signature,
            "fn forward(x: f32[B, 2] @ cpu, y: i64[B] @ cpu) -> (f32[B, 2] @ cpu, f32[] @ cpu)");
  ASSERT_EQ(sig.results.size(), 2u);
  EXPECT_EQ(sig.results[0].shape.size(), 2u);
  EXPECT_EQ(sig.results[1].shape.size(), 0u);

  Result<Tensor> x = Tensor::fromValues<float>({2, 2}, {0, 1, 2, 0});
  Result<Tensor> y = Tensor::fromValues<int64_t>({2}, {1, 0});
  ASSERT_TRUE(x && y);
  Result<std::vector<Tensor>> results = forward->callResults({*x, *y});
  ASSERT_TRUE(results) << results.errorText();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].str(), "f32[2, 2] @ cpu");
  EXPECT_EQ((*results)[1].str(), "f32[] @ cpu");
  Result<std::vector<float>> logits = (*results)[0].toVector<float>();
  ASSERT_TRUE(logits);
  EXPECT_EQ(*logits, (std::vector<float>{0, 1, 2, 0}));
  Result<std::vector<float>> loss = (*results)[1].toVector<float>();
  ASSERT_TRUE(loss);
  EXPECT_NEAR((*loss)[0], logitsAndLossExpected(), 1e-6);

  // call() returns one tensor: for this fn it says to take them all.
  Result<Tensor> single = forward->call({*x, *y});
  ASSERT_FALSE(single);
  EXPECT_NE(single.errorText().find("callResults"), std::string::npos) << single.errorText();
}

TEST(ApiTest, AnArtifactKeepsEveryResult) {
  std::string artifact = testing::TempDir() + "/api-classifier.mdlc";
  std::string command = std::string(MODELC_DRIVER) + " build " +
                        sourcePath("tests/lit/exec/Inputs/tuples.mdl") +
                        " --model Classifier --args n=2,k=2 -o " + artifact + " 2>&1";
  std::string output;
  ASSERT_EQ(runCommand(command, output), 0) << command << "\n" << output;
  Result<Model> loaded = Model::load(artifact);
  ASSERT_TRUE(loaded) << loaded.errorText();
  // fc.weight = [[1, 0], [0, 1]], fc.bias = 0: the logits are x itself.
  std::string weights =
      safetensors({{"fc.weight", {2, 2}, {1, 0, 0, 1}}, {"fc.bias", {2}, {0, 0}}});
  ASSERT_TRUE(loaded->loadWeightsFromMemory(weights.data(), weights.size()));
  Result<Function> forward = loaded->compile();
  ASSERT_TRUE(forward) << forward.errorText();
  EXPECT_EQ(forward->signature().signature,
            "fn forward(x: f32[B, 2] @ cpu, y: i64[B] @ cpu) -> (f32[B, 2] @ cpu, f32[] @ cpu)");
  ASSERT_EQ(forward->signature().results.size(), 2u);
  Result<Tensor> x = Tensor::fromValues<float>({2, 2}, {0, 1, 2, 0});
  Result<Tensor> y = Tensor::fromValues<int64_t>({2}, {1, 0});
  ASSERT_TRUE(x && y);
  Result<std::vector<Tensor>> results = forward->callResults({*x, *y});
  ASSERT_TRUE(results) << results.errorText();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ(*(*results)[0].toVector<float>(), (std::vector<float>{0, 1, 2, 0}));
  EXPECT_NEAR((*(*results)[1].toVector<float>())[0], logitsAndLossExpected(), 1e-6);
  Result<Tensor> single = forward->call({*x, *y});
  EXPECT_FALSE(single);
}

} // namespace
