//===- Type.h - Types of .mdl values: dtype, shape and device ---*- C++ -*-===//
//
// A tensor type is `dtype[dims] @ device`; the device is part of the type.
// Devices are concrete (cpu, cuda:N), rigid device parameters of a model
// (`D`, which equals nothing but itself), or unification variables that the
// checker introduces for creation ops whose device is inferred from use.
// Types are small values: dims are 4-byte handles (see Dim.h).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_TYPE_H
#define MODELC_SEMA_TYPE_H

#include "ast/AST.h"
#include "sema/Dim.h"

#include "llvm/ADT/SmallVector.h"

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace modelc::sema {

struct ModelInfo;

struct Device {
  enum class Kind : uint8_t { Cpu, Cuda, Param, Var };
  Kind kind = Kind::Cpu;
  /// Cuda: the index; Param: the index among the model's device params;
  /// Var: the unification variable.
  int64_t index = 0;
  /// Param only: the model that declares the parameter.
  const ast::ModelDecl *model = nullptr;

  static Device cpu() { return {}; }
  static Device cuda(int64_t n) { return {Kind::Cuda, n, nullptr}; }
  /// PyTorch stores a device index in an int8 (c10::DeviceIndex), so no
  /// program can address a GPU beyond cuda:127.
  static constexpr int64_t kMaxCudaIndex = 127;
  static bool isValidCudaIndex(int64_t n) { return n >= 0 && n <= kMaxCudaIndex; }
  static Device param(const ast::ModelDecl *model, unsigned i) { return {Kind::Param, i, model}; }
  static Device var(unsigned v) { return {Kind::Var, v, nullptr}; }

  bool isVar() const { return kind == Kind::Var; }
  bool isConcrete() const { return kind == Kind::Cpu || kind == Kind::Cuda; }
  friend bool operator==(const Device &a, const Device &b) {
    return a.kind == b.kind && a.index == b.index && a.model == b.model;
  }
  friend bool operator!=(const Device &a, const Device &b) { return !(a == b); }
  /// `cpu`, `cuda:1`, `D`; variables print as `?`.
  std::string str() const;
};

/// The dtype of a tensor type: a concrete dtype (`f32`), or a model's dtype
/// parameter (`dtype` in `dtype[out, in]` of `model Linear(..., dtype: dtype
/// = f32)`). Like a device parameter it is rigid while its model is checked
/// (it equals only itself), and an instance's argument replaces it. A dtype
/// parameter stands for a floating dtype, so the float-only rules accept it.
/// Converts from ast::DType, so `t.dtype == ast::DType::Bool` reads as before.
struct ElementType {
  ElementType(ast::DType concrete = ast::DType::F32) : concrete_(concrete) {}
  /// The dtype parameter whose value is the symbol `atom` (ValueParamInfo::atom).
  static ElementType parameter(AtomId atom) {
    ElementType e;
    e.param_ = atom;
    e.isParam_ = true;
    return e;
  }
  /// An instance's value of a dtype parameter: a constant (the dtype's
  /// index) or the caller's own dtype parameter; nullopt for anything else.
  static std::optional<ElementType> fromDim(Dim value);
  /// This dtype as the value of a dtype parameter (see fromDim).
  Dim asDim() const;

  bool isParam() const { return isParam_; }
  std::optional<AtomId> param() const {
    return isParam_ ? std::optional<AtomId>(param_) : std::nullopt;
  }
  /// The dtype, when it is not a parameter.
  std::optional<ast::DType> concrete() const {
    return isParam_ ? std::nullopt : std::optional<ast::DType>(concrete_);
  }
  /// The dtype of a type of an instance (CheckedProgram::instantiate), where
  /// every dtype parameter has its argument.
  ast::DType instantiated() const {
    assert(!isParam_ && "a dtype parameter left in an instantiated type");
    return concrete_;
  }
  bool isFloating() const { return isParam_ || ast::isFloating(concrete_); }
  bool isInteger() const { return !isParam_ && ast::isInteger(concrete_); }
  /// `f32`, or the parameter's name (`dtype`).
  std::string str() const;
  /// For prose: `f32`, or the parameter's name in backticks (`` `dtype` ``).
  std::string prose() const { return isParam_ ? "`" + str() + "`" : str(); }

  friend bool operator==(const ElementType &a, const ElementType &b) {
    return a.isParam_ == b.isParam_ &&
           (a.isParam_ ? a.param_ == b.param_ : a.concrete_ == b.concrete_);
  }
  friend bool operator!=(const ElementType &a, const ElementType &b) { return !(a == b); }

private:
  ast::DType concrete_;
  // A plain pair rather than std::optional: GCC 12 warns (falsely) that a
  // disengaged optional's payload is copied uninitialised.
  AtomId param_ = 0;
  bool isParam_ = false;
};

/// A shape: an optional leading pack of batch dims (`...`), then dims.
struct Shape {
  /// 0: no pack. Otherwise the pack's identity (one per fn signature).
  uint32_t pack = 0;
  llvm::SmallVector<Dim, 4> dims;

  bool hasPack() const { return pack != 0; }
  friend bool operator==(const Shape &a, const Shape &b) {
    return a.pack == b.pack && a.dims == b.dims;
  }
  friend bool operator!=(const Shape &a, const Shape &b) { return !(a == b); }
  /// `[B, 256]`, `[..., 10]`.
  std::string str() const;
  /// The product of the dims (the pack excluded).
  Dim numElements() const;
};

/// The concrete or symbolic arguments of one model instance: its devices
/// and its value arguments (int arguments as dims; others are opaque).
struct ModelInstance {
  const ModelInfo *model = nullptr;
  llvm::SmallVector<Device, 1> devices;
  /// One per value param of the model (one per element of a tuple param,
  /// see ValueParamInfo::firstSlot): int, bool (0 or 1), option (its index)
  /// and dtype (ElementType::asDim) arguments as dims; nullopt for float
  /// arguments.
  llvm::SmallVector<std::optional<Dim>, 4> values;
  std::string str() const; // "model Linear<cuda:0>"
};

class Type {
public:
  enum class Kind : uint8_t {
    Error, // a failed expression: poisons silently
    Void,  // fn without result
    Tensor,
    Int,
    Float,
    Bool,
    String,
    Device,    // a device value: `cuda:0`, `D`
    DType,     // a dtype value: `f16`
    Model,     // a submodel (model instance)
    ModelList, // a list of submodels (`for layer in layers`)
    List,      // `[a, b]`: shapes, lists of tensors
    Tuple,     // `(a, b)`: the several results of a fn
    Module,    // an imported module (`nn`)
    Builtin    // a built-in function name
  };

  Type() = default;
  static Type error() { return Type(); }
  static Type voidType() { return Type(Kind::Void); }
  static Type tensor(ElementType dtype, Shape shape, Device device);
  static Type integer(std::optional<Dim> value = std::nullopt);
  static Type floating() { return Type(Kind::Float); }
  static Type boolean() { return Type(Kind::Bool); }
  static Type string() { return Type(Kind::String); }
  static Type device(Device d);
  static Type dtypeValue(ElementType d);
  static Type model(std::shared_ptr<const ModelInstance> inst);
  static Type modelList(std::vector<std::shared_ptr<const ModelInstance>> insts);
  /// `count` copies of `inst` (`[layer for _ in 0..count]`).
  static Type repeatedModel(std::shared_ptr<const ModelInstance> inst, Dim count);
  static Type list(std::vector<Type> elements);
  static Type tuple(std::vector<Type> elements);
  static Type module(const ast::Module *module);
  static Type builtin(llvm::StringRef name);

  Kind kind() const { return kind_; }
  bool isError() const { return kind_ == Kind::Error; }
  bool isTensor() const { return kind_ == Kind::Tensor; }
  bool isScalar() const {
    return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool;
  }

  // Tensor
  ElementType dtype; // also Kind::DType
  Shape shape;
  Device dev; // also Kind::Device
  // Int: the value when it is known (`in * 2`, `3`). Bool and String: the
  // compile-time value of a model argument or bool literal (0/1, the
  // option's index), see ValueParamInfo.
  std::optional<Dim> intValue;
  // Model / ModelList
  std::shared_ptr<const ModelInstance> instance;
  std::shared_ptr<const std::vector<std::shared_ptr<const ModelInstance>>> instances;
  // ModelList of `[layer for _ in a..b]` whose length is not a constant yet
  // (`num_layers`): `instances` holds the one element, repeated this many
  // times. Substituting a constant expands it (a negative length is empty,
  // as Python's range).
  std::optional<Dim> repeat;
  /// ModelList: the number of submodels when it is known.
  std::optional<int64_t> listLength() const;
  // List, Tuple
  std::shared_ptr<const std::vector<Type>> elements;
  /// Tuple: the number of elements (0 for any other kind).
  size_t arity() const { return kind_ == Kind::Tuple && elements ? elements->size() : 0; }
  // Module
  const ast::Module *moduleDecl = nullptr;
  // Builtin
  llvm::StringRef builtinName;

  size_t rank() const { return shape.dims.size(); }

  /// Canonical text: `f32[B, 256] @ cuda:0`, `int`, `model Linear<D>`.
  std::string str() const;

private:
  explicit Type(Kind kind) : kind_(kind) {}
  Kind kind_ = Kind::Error;
};

/// Dims, dtypes and devices to substitute into the types of a model (when a caller
/// uses a submodel, or a model is instantiated with concrete arguments).
struct Substitution {
  const ast::ModelDecl *model = nullptr;
  llvm::ArrayRef<Device> devices; // for Device::Param of `model`
  llvm::SmallVector<std::pair<AtomId, Dim>, 8> dims;
  // `...` of the callee replaced by the caller's pack plus these dims.
  uint32_t packFrom = 0;
  uint32_t packTo = 0;
  llvm::SmallVector<Dim, 4> packDims;

  std::optional<Dim> lookup(AtomId atom) const;
  Dim apply(Dim d) const;
  Device apply(const Device &d) const;
  ElementType apply(const ElementType &e) const;
  Shape apply(const Shape &s) const;
  Type apply(const Type &t) const;
};

} // namespace modelc::sema

#endif // MODELC_SEMA_TYPE_H
