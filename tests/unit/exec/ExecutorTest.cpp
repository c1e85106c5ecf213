//===- ExecutorTest.cpp - instantiation, input checks and runs of models --===//

#include "exec/Executor.h"

#include "sema/CheckedProgram.h"
#include "sema/Compilation.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace modelc;
using namespace modelc::exec;

namespace {

constexpr const char *kSource = R"mdl(
import std.nn

model Tiny<D: device>(in: int, out: int, gain: float = 2.0) {
  fc = nn.Linear(in, out)
  norm = nn.LayerNorm(out, eps: 0.5)

  fn forward(x: f32[B, in] @ D, y: f32[B, out] @ D) -> f32[B, out] @ D {
    return fc(x) * gain + y
  }
  fn normed(x: f32[B, in] @ D) -> f32[B, out] @ D {
    return norm(fc(x))
  }
}
)mdl";

/// A checked Compilation of kSource.
std::unique_ptr<Compilation> compile() {
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  auto c = std::make_unique<Compilation>(options);
  c->addBuffer("tiny.mdl", kSource);
  EXPECT_TRUE(c->check());
  return c;
}

runtime::Tensor floats(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<float> values) {
  return runtime::Tensor::fromValues<float>(shape, values);
}

/// fc.weight = [[1, 2], [3, 4], [5, 6]], fc.bias = [0.5, -0.5, 1], norm = identity affine.
runtime::SafeTensorsFile weightsFile(bool wrongShape = false) {
  std::vector<runtime::NamedTensor> tensors = {
      {"fc.weight",
       wrongShape ? floats({2, 3}, {1, 2, 3, 4, 5, 6}) : floats({3, 2}, {1, 2, 3, 4, 5, 6})},
      {"fc.bias", floats({3}, {0.5f, -0.5f, 1})},
      {"norm.weight", floats({3}, {1, 1, 1})},
      {"norm.bias", floats({3}, {0, 0, 0})},
  };
  llvm::Expected<std::string> bytes = runtime::serializeSafeTensors(tensors);
  EXPECT_TRUE(bool(bytes));
  auto file = runtime::SafeTensorsFile::fromBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(*bytes, "tiny.safetensors"));
  EXPECT_TRUE(bool(file));
  return std::move(*file);
}

TEST(ExecutorTest, InstantiatesWithArgumentsAndDefaults) {
  auto c = compile();
  auto model = mlirgen::instantiateModel(*c->program(), "Tiny", "in=2, out=3", sema::Device::cpu());
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  EXPECT_EQ(model->scalarArgs.lookup("gain"), 2.0);
  std::vector<std::string> names;
  for (const sema::InstantiatedState &s : model->concrete.state)
    names.push_back(s.name + " " + s.type.str());
  EXPECT_EQ(names,
            (std::vector<std::string>{"fc.weight f32[3, 2] @ cpu", "fc.bias f32[3] @ cpu",
                                      "norm.weight f32[3] @ cpu", "norm.bias f32[3] @ cpu"}));
  auto withGain = mlirgen::instantiateModel(*c->program(), "Tiny", "in=2,out=3,gain=0.25",
                                            sema::Device::cuda(1));
  ASSERT_TRUE(bool(withGain));
  EXPECT_EQ(withGain->scalarArgs.lookup("gain"), 0.25);
  EXPECT_EQ(withGain->concrete.state[0].type.str(), "f32[3, 2] @ cuda:1");
}

// `modelc build tiny.mdl` without --model: the file's own model once its
// arguments are given, never a stdlib model it imports.
TEST(ExecutorTest, ChoosesTheFilesOneRunnableModel) {
  auto c = compile();
  auto chosen = mlirgen::chooseModel(*c->program(), *c->mainModule(), "in=2,out=3", "forward");
  ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
  EXPECT_EQ(*chosen, "Tiny");
  for (auto [args, fn] : {std::pair{"", "forward"}, std::pair{"in=2,out=3", "backward"},
                          std::pair{"in=2,out=3,depth=1", "forward"}}) {
    auto refused = mlirgen::chooseModel(*c->program(), *c->mainModule(), args, fn);
    ASSERT_FALSE(bool(refused)) << args << " " << fn;
    std::string message = llvm::toString(refused.takeError());
    EXPECT_NE(message.find("\n  Tiny<D: device>(in: int, out: int, gain: float = 2.0)"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("Linear"), std::string::npos) << message;
  }
}

TEST(ExecutorTest, RejectsBadModelArguments) {
  auto c = compile();
  auto expectError = [&](llvm::StringRef model, llvm::StringRef args, llvm::StringRef message) {
    auto m = mlirgen::instantiateModel(*c->program(), model, args, sema::Device::cpu());
    ASSERT_FALSE(bool(m));
    EXPECT_EQ(llvm::toString(m.takeError()), message.str());
  };
  expectError("Tiny", "in=2",
              "missing model argument 'out' of model 'Tiny'; give it with `--args out=VALUE` "
              "(Tiny<D: device>(in: int, out: int, gain: float = 2.0))");
  expectError("Tiny", "in=2,out=x", "model argument 'out' must be an int, got 'x'");
  expectError("Tiny", "in=2,out=3,gain=fast", "model argument 'gain' must be a float, got 'fast'");
  expectError("Tiny", "in=2,out=3,in=4", "model argument 'in' is given twice");
  expectError("Tiny", "in=2,out=3,depth=1", "model 'Tiny' has no argument named 'depth'");
  expectError("Tiny", "in2", "malformed model argument 'in2' (expected name=value)");
  expectError("Huge", "", "no model named 'Huge' (models: Tiny)");
  EXPECT_FALSE(bool(mlirgen::parseDevice("cuda:-1")));
  EXPECT_FALSE(bool(mlirgen::parseDevice("tpu")));
  auto cuda = mlirgen::parseDevice("cuda:3");
  ASSERT_TRUE(bool(cuda));
  EXPECT_EQ(cuda->index, 3);
}

TEST(ExecutorTest, InputsBindSymbolicDimsConsistently) {
  auto c = compile();
  auto model = mlirgen::instantiateModel(*c->program(), "Tiny", "in=2,out=3", sema::Device::cpu());
  ASSERT_TRUE(bool(model));
  DiagnosticEngine &diags = c->diagnostics();
  std::vector<EntryInput> inputs = {
      {runtime::Tensor::zeros(runtime::DType::F32, {5, 2}), runtime::Device::cpu(), "x.npy"},
      {runtime::Tensor::zeros(runtime::DType::F32, {5, 3}), runtime::Device::cpu(), "y.npy"}};
  std::optional<BoundSignature> sig = checkInputs(*model, "forward", inputs, diags);
  ASSERT_TRUE(sig.has_value());
  ASSERT_EQ(sig->results.size(), 1u);
  EXPECT_EQ(sig->results[0].shape, (runtime::Shape{5, 3}));
  EXPECT_EQ(diags.errorCount(), 0u);

  inputs[1].tensor = runtime::Tensor::zeros(runtime::DType::F32, {4, 3});
  EXPECT_FALSE(checkInputs(*model, "forward", inputs, diags).has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].code(), "E0605");
  EXPECT_EQ(diags.diagnostics()[0].message,
            "input 2 of `forward` gives `B` = 4, but an earlier input gave 5");

  diags.clear();
  inputs[1].tensor = runtime::Tensor::zeros(runtime::DType::I64, {5, 3});
  EXPECT_FALSE(checkInputs(*model, "forward", inputs, diags).has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].code(), "E0603");

  diags.clear();
  inputs.pop_back();
  EXPECT_FALSE(checkInputs(*model, "forward", inputs, diags).has_value());
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].code(), "E0602");
}

TEST(ExecutorTest, WeightMismatchesAreListedAndNothingLoads) {
  auto c = compile();
  auto model = mlirgen::instantiateModel(*c->program(), "Tiny", "in=2,out=3", sema::Device::cpu());
  ASSERT_TRUE(bool(model));
  runtime::SafeTensorsFile file = weightsFile(/*wrongShape=*/true);
  EXPECT_FALSE(bindModelWeights(*model, file, c->diagnostics()).has_value());
  ASSERT_EQ(c->diagnostics().diagnostics().size(), 1u);
  const Diagnostic &d = c->diagnostics().diagnostics()[0];
  EXPECT_EQ(d.code(), "E0607");
  ASSERT_GE(d.notes.size(), 2u);
  EXPECT_NE(d.notes[0].message.find("fc.weight: expected f32[3, 2], found f32[2, 3]"),
            std::string::npos)
      << d.notes[0].message;
}

TEST(ExecutorTest, RunsTheEntryFnThroughTheJit) {
  auto c = compile();
  auto model =
      mlirgen::instantiateModel(*c->program(), "Tiny", "in=2,out=3,gain=0.5", sema::Device::cpu());
  ASSERT_TRUE(bool(model));
  runtime::SafeTensorsFile file = weightsFile();
  std::optional<runtime::LoadedWeights> weights = bindModelWeights(*model, file, c->diagnostics());
  ASSERT_TRUE(weights.has_value());
  std::vector<EntryInput> inputs = {
      {floats({2, 2}, {1, -1, 0.5f, 2}), runtime::Device::cpu(), "x"},
      {floats({2, 3}, {10, 20, 30, 40, 50, 60}), runtime::Device::cpu(), "y"}};
  auto out = runModel(*c->program(), c->sourceMgr(), *model, *weights, inputs, RunOptions{},
                      c->diagnostics());
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  ASSERT_TRUE(out->has_value());
  // fc(x) = x @ W.T + b, rows: [-0.5, -1.5, 0], [5, 9, 15.5]; * 0.5 + y.
  std::vector<float> expected = {9.75f, 19.25f, 30, 42.5f, 54.5f, 67.75f};
  llvm::ArrayRef<float> got = (*out)->values<float>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 1e-5) << "element " << i;

  // normed: layer_norm with eps 0.5 taken from the submodel's construction.
  RunOptions normed;
  normed.fnName = "normed";
  inputs.pop_back();
  auto n =
      runModel(*c->program(), c->sourceMgr(), *model, *weights, inputs, normed, c->diagnostics());
  ASSERT_TRUE(bool(n)) << llvm::toString(n.takeError());
  ASSERT_TRUE(n->has_value());
  const float row[3] = {-0.5f, -1.5f, 0};
  double mean = (row[0] + row[1] + row[2]) / 3, var = 0;
  for (float v : row)
    var += (v - mean) * (v - mean) / 3;
  for (int j = 0; j < 3; ++j)
    EXPECT_NEAR((*n)->values<float>()[j], (row[j] - mean) / std::sqrt(var + 0.5), 1e-5);
}

} // namespace

namespace {

constexpr const char *kSignatures = R"mdl(
model Shapes<D: device>(n: int) {
  fn plain(x: f32[B, n] @ D, y: f32[B, n] @ D) -> f32[B, n] @ D { return x + y }
  fn gates(x: f32[B, 4 * H] @ D) -> f32[B, H] @ D { return x[:, 0:H] * x[:, 2 * H:3 * H] }
  fn pair(x: f32[B, 4 * H] @ D, y: f32[H + 1] @ D) -> (f32[H + 1] @ D, f32[B, 4 * H] @ D) {
    return (y * 2.0, x)
  }
  fn packed(x: f32[..., n] @ D) -> f32[..., n] @ D { return x * 2.0 }
  fn scaled(x: f32[B, n] @ D, gain: float) -> f32[B, n] @ D { return x * gain }
}
)mdl";

runtime::Tensor zerosOf(runtime::Shape shape, runtime::DType dtype = runtime::DType::F32) {
  return runtime::Tensor::zeros(dtype, shape);
}

// The signature derived once per compiled fn binds what checkInputs binds,
// and gives up (leaving the report to checkInputs) on whatever does not fit.
TEST(ExecutorTest, PreparedSignatureBindsAsCheckInputs) {
  CompileOptions options;
  options.stdlibDir = MODELC_STDLIB_DIR;
  Compilation c(options);
  c.addBuffer("shapes.mdl", kSignatures);
  ASSERT_TRUE(c.check());
  auto model = mlirgen::instantiateModel(*c.program(), "Shapes", "n=3", sema::Device::cpu());
  ASSERT_TRUE(bool(model));
  DiagnosticEngine &diags = c.diagnostics();
  runtime::Device cpu = runtime::Device::cpu();
  auto in = [&](runtime::Shape shape, runtime::DType dtype = runtime::DType::F32) {
    return EntryInput{zerosOf(std::move(shape), dtype), cpu, "input.npy"};
  };
  struct Case {
    const char *fn;
    std::vector<EntryInput> inputs;
    bool fits;
  };
  std::vector<Case> cases = {
      {"plain", {in({5, 3}), in({5, 3})}, true},
      {"plain", {in({1, 3}), in({1, 3})}, true},
      {"plain", {in({5, 3}), in({4, 3})}, false},                      // B conflicts
      {"plain", {in({5, 3}), in({5, 3}, runtime::DType::I64)}, false}, // dtype
      {"plain", {in({5, 3}), EntryInput{zerosOf({5, 3}), runtime::Device::cuda(0), "y"}}, false},
      {"plain", {in({5, 3})}, false},             // count
      {"plain", {in({5, 4}), in({5, 4})}, false}, // n
      {"gates", {in({2, 32})}, true},             // H solved: 8
      {"gates", {in({2, 30})}, false},            // not a multiple of 4
      {"pair", {in({2, 8}), in({3})}, true},      // tuple of results
      {"pair", {in({2, 8}), in({4})}, false},     // H + 1 != 4
      {"packed", {in({2, 7, 3})}, true},
      {"packed", {in({3})}, true},
      {"packed", {in({2, 7, 4})}, false},
  };
  for (const Case &test : cases) {
    SCOPED_TRACE(std::string(test.fn) + " with " + std::to_string(test.inputs.size()) +
                 " input(s), first " + test.inputs.front().tensor.str());
    std::optional<PreparedSignature> prepared = PreparedSignature::prepare(*model, test.fn);
    ASSERT_TRUE(prepared.has_value());
    std::optional<BoundSignature> fast = prepared->bind(test.inputs);
    diags.clear();
    std::optional<BoundSignature> slow = checkInputs(*model, test.fn, test.inputs, diags);
    EXPECT_EQ(slow.has_value(), test.fits);
    ASSERT_EQ(fast.has_value(), test.fits);
    if (!test.fits) {
      EXPECT_GT(diags.errorCount(), 0u); // checkInputs still says why
      continue;
    }
    ASSERT_EQ(fast->results.size(), slow->results.size());
    for (size_t r = 0; r < fast->results.size(); ++r) {
      EXPECT_EQ(fast->results[r].shape, slow->results[r].shape) << "result " << r;
      EXPECT_EQ(fast->results[r].dtype, slow->results[r].dtype) << "result " << r;
    }
    auto sorted = [](std::vector<std::pair<sema::AtomId, int64_t>> dims) {
      llvm::sort(dims);
      return dims;
    };
    EXPECT_EQ(sorted(fast->dims), sorted(slow->dims));
    EXPECT_EQ(fast->pack, slow->pack);
    EXPECT_EQ(fast->isScalar, slow->isScalar);
  }
  // A scalar parameter is compiled in from its input: left to checkInputs.
  EXPECT_FALSE(PreparedSignature::prepare(*model, "scaled").has_value());
  EXPECT_FALSE(PreparedSignature::prepare(*model, "nothing").has_value());
}

} // namespace
