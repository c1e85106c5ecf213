//===- InputCheck.h - Inputs against an entry fn's signature ----*- C++ -*-===//
//
// The one check of given inputs against a declared signature, for every
// place that runs a model: the JIT executor (compiler/exec), the artifact
// loader (compiler/aot) and the device plan executor (compiler/cudaexec).
// It knows dtypes, devices, shapes and symbolic dims by name, nothing of the
// front end or MLIR; each caller turns an InputMismatch into its own
// diagnostic.
//
// Two phases: bindInputs checks the count, each input's dtype, device, rank
// and number dims, and binds each symbol (`B`) to the extent of the first
// input that has it (and `...` to the leading dims); checkCompoundDims then
// checks the dims written as expressions (`2 * B`) once every symbol has a
// value (callers may bind more symbols in between, such as `int` scalars).
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_RUNTIME_INPUTCHECK_H
#define MODELC_RUNTIME_INPUTCHECK_H

#include "runtime/Tensor.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace modelc::runtime {

/// One dim of a declared parameter: a number, a symbol, or an expression
/// over symbols.
struct DeclaredDim {
  std::optional<int64_t> constant;
  std::string symbol; ///< non-empty for a symbol
  /// An expression's value with the symbols bound; nullopt while one is not.
  std::function<std::optional<int64_t>(const llvm::StringMap<int64_t> &)> evaluate;
  /// The symbols an expression mentions, when the caller knows them: one
  /// that no input binds alone can then be solved for (`4 * H` binds H).
  std::vector<std::string> symbols;

  static DeclaredDim ofConstant(int64_t value);
  static DeclaredDim ofSymbol(llvm::StringRef name);
  static DeclaredDim
  ofExpression(std::function<std::optional<int64_t>(const llvm::StringMap<int64_t> &)> evaluate,
               std::vector<std::string> symbols = {});
};

struct DeclaredInput {
  DType dtype = DType::F32;
  std::optional<Device> device; ///< unset: any device will do
  std::vector<DeclaredDim> shape;
  /// `...`: any number of leading dims, the same in every input that has them.
  bool leadingPack = false;
  /// Checked by the caller, not here (a scalar parameter).
  bool skip = false;
};

struct GivenInput {
  DType dtype = DType::F32;
  Device device;
  llvm::ArrayRef<int64_t> shape;
};

struct InputMismatch {
  enum class Kind {
    Count,          ///< expected = declared inputs, actual = given
    DType,          ///< the input's dtype is not the declared one
    Device,         ///< the input is on another device
    Rank,           ///< expected = declared rank (a minimum with `...`)
    Dim,            ///< dim `dim` of the given shape is `actual`, not `expected`
    SymbolConflict, ///< `symbol` is `actual` here, `expected` in `firstInput`
    PackConflict,   ///< the `...` dims are `pack`, `firstPack` in `firstInput`
  };
  Kind kind = Kind::Count;
  size_t input = 0;
  size_t dim = 0; ///< the position in the given shape (leading `...` dims included)
  int64_t expected = 0, actual = 0;
  std::string symbol;
  size_t firstInput = 0;
  Shape pack, firstPack;
};

/// What the inputs bound.
struct InputBindings {
  llvm::StringMap<int64_t> symbols;
  llvm::StringMap<size_t> boundBy; ///< the input each symbol came from
  std::optional<Shape> pack;       ///< the `...` dims
  size_t packInput = 0;
};

/// Called with each mismatch; returns true to go on with the next input
/// (report every problem) or false to stop at this one.
using MismatchHandler = llvm::function_ref<bool(const InputMismatch &)>;

/// Phase one; false when any input mismatched (a count mismatch always
/// stops). An input stops being checked at its first mismatch.
bool bindInputs(llvm::ArrayRef<DeclaredInput> declared, llvm::ArrayRef<GivenInput> given,
                InputBindings &bindings, MismatchHandler report);

/// Phase two: a symbol that only appears in expression dims is bound from
/// one that is linear in it and mentions no other unbound symbol (`4 * H`
/// of an input of extent 32 binds H = 8; an extent it cannot have is a Dim
/// mismatch naming the nearest it can). Then the expression dims whose
/// symbols are all bound are checked; stops at the first mismatch and
/// returns false.
bool checkCompoundDims(llvm::ArrayRef<DeclaredInput> declared, llvm::ArrayRef<GivenInput> given,
                       InputBindings &bindings, MismatchHandler report);

/// `[4, 784]`.
std::string shapeString(llvm::ArrayRef<int64_t> shape);

} // namespace modelc::runtime

#endif // MODELC_RUNTIME_INPUTCHECK_H
