//===- modelc/Model.h - Compile, instantiate and call models ------------===//
//
//   auto program = modelc::Program::compileFile("mlp.mdl");
//   auto model = program->instantiate("Mlp", modelc::Device::cpu(),
//                                     {{"in", 784}, {"hidden", 256}, {"out", 10}});
//   model->loadWeights("weights.safetensors");
//   auto forward = model->compile("forward");
//   auto y = forward->call({x});
//
// Program: a checked .mdl file with its imports. Model: one instance of a
// model of it (devices and value arguments fixed) and its weights. Function:
// an entry fn of a model, compiled once; call() is thread-safe.
//
// Objects share what they need: a Model keeps its Program alive, a Function
// its Model's weights; each may be destroyed in any order.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_PUBLIC_MODEL_H
#define MODELC_PUBLIC_MODEL_H

#include "modelc/Diagnostic.h"
#include "modelc/Export.h"
#include "modelc/Result.h"
#include "modelc/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace modelc::api {

struct CompileOptions {
  /// Folders searched for `import a.b` (as a/b.mdl), after the importing
  /// file's own folder.
  std::vector<std::string> importPaths;
  /// Where `import std.*` is found. Empty: $MODELC_STDLIB if set, else the
  /// stdlib installed next to the library (<prefix>/share/modelc/stdlib),
  /// else the source tree's.
  std::string stdlibDir;
  /// Models on `cuda:N`: f32 matmuls and convolutions run on TF32 tensor
  /// cores (inputs rounded to a 10-bit mantissa, f32 accumulation: each
  /// product off by at most 2^-10 of |a| |b|). Off: exact f32 (the default).
  /// No effect on the cpu.
  bool tf32 = false;
};

/// The folder `import std.*` reads when CompileOptions::stdlibDir is
/// empty: $MODELC_STDLIB, else the installed stdlib, else the source tree's.
MODELC_API std::string defaultStdlibDir();

/// A value argument of a model: an int, a float, a bool, an option string
/// (`{"activation", "gelu"}` for `activation: "relu" | "gelu"`), a tuple of
/// ints (`{"kernel_size", ArgValue::ints({1, 7})}` for
/// `kernel_size: (int, int)`; an int gives every element) or a dtype
/// (`{"dtype", DType::BF16}` for `dtype: dtype = f32`; the string "bf16"
/// works too).
class ArgValue {
public:
  enum class Kind { Int, Float, Bool, String, Ints, DType };
  ArgValue(int v) : kind_(Kind::Int), int_(v) {}
  ArgValue(long v) : kind_(Kind::Int), int_(v) {}
  ArgValue(long long v) : kind_(Kind::Int), int_(v) {}
  ArgValue(double v) : kind_(Kind::Float), float_(v) {}
  ArgValue(bool v) : kind_(Kind::Bool), bool_(v) {}
  ArgValue(const char *v) : kind_(Kind::String), string_(v) {}
  ArgValue(std::string v) : kind_(Kind::String), string_(std::move(v)) {}
  ArgValue(DType v) : kind_(Kind::DType), dtype_(v) {}
  static ArgValue ints(std::vector<int64_t> values) {
    ArgValue v(0);
    v.kind_ = Kind::Ints;
    v.ints_ = std::move(values);
    return v;
  }
  Kind kind() const { return kind_; }
  int64_t intValue() const { return int_; }
  const std::vector<int64_t> &intsValue() const { return ints_; }
  double floatValue() const { return float_; }
  bool boolValue() const { return bool_; }
  const std::string &stringValue() const { return string_; }
  DType dtypeValue() const { return dtype_; }

private:
  Kind kind_;
  int64_t int_ = 0;
  double float_ = 0;
  bool bool_ = false;
  std::string string_;
  std::vector<int64_t> ints_;
  DType dtype_ = DType::F32;
};

/// Value arguments by name, e.g. {{"in", 784}, {"eps", 1e-5}}; left-out
/// arguments take their defaults.
using ModelArgs = std::vector<std::pair<std::string, ArgValue>>;

/// One dim of a declared shape: a constant extent, or a symbol (`B`, or a
/// compound such as `2 * B`) bound by the inputs at each call.
struct Dim {
  int64_t extent = -1; // -1 for a symbolic dim
  std::string symbol;  // "" for a constant dim
  bool isSymbolic() const { return extent < 0; }
};

/// A declared type: `f32[B, 784] @ cpu`. Non-tensor types (an int
/// parameter) have isTensor false and only `text`.
struct TensorType {
  bool isTensor = true;
  DType dtype = DType::F32;
  std::vector<Dim> shape;
  Device device;
  std::string text;
};

struct Parameter {
  std::string name;
  TensorType type;
};

/// An entry fn's signature, with the instance's arguments substituted.
struct EntryPoint {
  std::string name;
  std::vector<Parameter> params;
  /// The result; for a fn with several results (`-> (f32[B, 5] @ cpu,
  /// f32[] @ cpu)`) the first of them, and `text` is the whole tuple.
  TensorType result;
  /// One per result, in order (one for a fn with a single result).
  std::vector<TensorType> results;
  /// `fn forward(x: f32[B, 784] @ cpu) -> f32[B, 10] @ cpu`.
  std::string signature;
};

/// A param or buffer of an instance, by its PyTorch state_dict name.
struct StateEntry {
  std::string name;
  bool isBuffer = false;
  TensorType type;
};

/// A model of a program, before instantiation.
struct ModelInfo {
  std::string name;
  std::vector<std::string> deviceParams;
  /// Value params as `name: kind` (`in: int`, `eps: float = 1e-5`).
  std::vector<std::string> valueParams;
  std::string doc;
};

class Model;
class Function;

class MODELC_API Program {
public:
  /// Parses and checks `path` and its imports.
  static Result<Program> compileFile(const std::string &path, const CompileOptions &options = {});
  /// Parses and checks `source`; `name` is the file name diagnostics use.
  static Result<Program> compileString(std::string_view source, std::string_view name = "<string>",
                                       const CompileOptions &options = {});

  /// Every model of the main file, in source order.
  std::vector<ModelInfo> models() const;
  /// Instantiates model `name` with every device parameter set to `device`.
  Result<Model> instantiate(const std::string &name, Device device,
                            const ModelArgs &args = {}) const;

  struct Impl;
  explicit Program(std::shared_ptr<Impl> impl);

private:
  std::shared_ptr<Impl> impl_;
};

class MODELC_API Model {
public:
  /// Loads a prebuilt `.mdlc` artifact (see docs/embedding.md).
  static Result<Model> load(const std::string &path);

  std::string name() const;
  Device device() const;
  std::vector<EntryPoint> entryPoints() const;
  /// The params and buffers the weights must provide, in state_dict order.
  std::vector<StateEntry> state() const;

  /// Binds every param and buffer to the safetensors file at `path`
  /// (memory-mapped, zero-copy), all or nothing: a mismatch is one E0607
  /// error listing every problem, and nothing is loaded.
  Status loadWeights(const std::string &path);
  /// As loadWeights, from a safetensors image in memory (copied).
  Status loadWeightsFromMemory(const void *data, size_t size, std::string_view name = "<memory>");
  bool hasWeights() const;

  /// Compiles entry fn `fn` once for every batch size (symbolic dims stay
  /// dynamic). Needs the weights (unless the model has no state).
  Result<Function> compile(const std::string &fn = "forward") const;

  struct Impl;
  explicit Model(std::shared_ptr<Impl> impl);

private:
  std::shared_ptr<Impl> impl_;
};

class MODELC_API Function {
public:
  const EntryPoint &signature() const;
  /// Checks `inputs` against the signature (count E0602, dtype E0603,
  /// shape E0604, symbolic dims E0605, device E0606: each names the
  /// parameter, the expected and the found type) and runs the fn. Never
  /// converts or copies an input to another device. Thread-safe.
  /// Returns one tensor per result of the fn, in order. A result on a GPU
  /// is returned once its work is enqueued on that GPU's one stream: reading
  /// it (copyToHost, toVector, to(cpu)) waits for it, and reports there a
  /// kernel that failed.
  Result<std::vector<Tensor>> callResults(const std::vector<Tensor> &inputs) const;
  /// callResults for a fn with one result: that tensor. A fn with several
  /// results is an error here (use callResults).
  Result<Tensor> call(const std::vector<Tensor> &inputs) const;
  /// How the last call ran on its GPUs, as text: whether a CUDA graph was
  /// captured or replayed, the device memory kept, and for each matrix
  /// product whether cuBLASLt or modelc's own kernels ran it and why (a
  /// measurement, MODELC_CUDA_GEMM, or why cuBLASLt is not used). Empty for
  /// a fn that runs on the cpu, and before the first call.
  std::string runReport() const;

  struct Impl;
  explicit Function(std::shared_ptr<const Impl> impl);

private:
  std::shared_ptr<const Impl> impl_;
};

} // namespace modelc::api

#endif // MODELC_PUBLIC_MODEL_H
