//===- InputCheck.cpp - Inputs against an entry fn's signature ------------===//

#include "runtime/InputCheck.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace modelc::runtime {

DeclaredDim DeclaredDim::ofConstant(int64_t value) {
  DeclaredDim dim;
  dim.constant = value;
  return dim;
}

DeclaredDim DeclaredDim::ofSymbol(llvm::StringRef name) {
  DeclaredDim dim;
  dim.symbol = name.str();
  return dim;
}

DeclaredDim DeclaredDim::ofExpression(
    std::function<std::optional<int64_t>(const llvm::StringMap<int64_t> &)> evaluate) {
  DeclaredDim dim;
  dim.evaluate = std::move(evaluate);
  return dim;
}

std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), ", ") +
         "]";
}

namespace {

/// Checks one input; returns its first mismatch.
std::optional<InputMismatch> bindInput(const DeclaredInput &want, const GivenInput &have,
                                       size_t index, InputBindings &bindings) {
  InputMismatch mismatch;
  mismatch.input = index;
  auto fail = [&](InputMismatch::Kind kind) {
    mismatch.kind = kind;
    return std::optional<InputMismatch>(mismatch);
  };
  if (have.dtype != want.dtype)
    return fail(InputMismatch::Kind::DType);
  if (want.device && have.device != *want.device)
    return fail(InputMismatch::Kind::Device);
  size_t rank = want.shape.size();
  if (want.leadingPack ? have.shape.size() < rank : have.shape.size() != rank) {
    mismatch.expected = int64_t(rank);
    mismatch.actual = int64_t(have.shape.size());
    return fail(InputMismatch::Kind::Rank);
  }
  size_t lead = have.shape.size() - rank;
  if (want.leadingPack) {
    Shape extents(have.shape.begin(), have.shape.begin() + lead);
    if (!bindings.pack) {
      bindings.pack = extents;
      bindings.packInput = index;
    } else if (*bindings.pack != extents) {
      mismatch.pack = extents;
      mismatch.firstPack = *bindings.pack;
      mismatch.firstInput = bindings.packInput;
      return fail(InputMismatch::Kind::PackConflict);
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    const DeclaredDim &dim = want.shape[d];
    int64_t extent = have.shape[lead + d];
    mismatch.dim = lead + d;
    mismatch.actual = extent;
    if (dim.constant) {
      if (*dim.constant != extent) {
        mismatch.expected = *dim.constant;
        return fail(InputMismatch::Kind::Dim);
      }
      continue;
    }
    if (dim.symbol.empty())
      continue; // an expression: checked once every symbol is bound
    auto [it, inserted] = bindings.symbols.try_emplace(dim.symbol, extent);
    if (inserted) {
      bindings.boundBy[dim.symbol] = index;
    } else if (it->second != extent) {
      mismatch.symbol = dim.symbol;
      mismatch.expected = it->second;
      mismatch.firstInput = bindings.boundBy.lookup(dim.symbol);
      return fail(InputMismatch::Kind::SymbolConflict);
    }
  }
  return std::nullopt;
}

} // namespace

bool bindInputs(llvm::ArrayRef<DeclaredInput> declared, llvm::ArrayRef<GivenInput> given,
                InputBindings &bindings, MismatchHandler report) {
  if (declared.size() != given.size()) {
    InputMismatch mismatch;
    mismatch.kind = InputMismatch::Kind::Count;
    mismatch.expected = int64_t(declared.size());
    mismatch.actual = int64_t(given.size());
    report(mismatch);
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < given.size(); ++i) {
    if (declared[i].skip)
      continue;
    if (std::optional<InputMismatch> mismatch = bindInput(declared[i], given[i], i, bindings)) {
      ok = false;
      if (!report(*mismatch))
        return false;
    }
  }
  return ok;
}

bool checkCompoundDims(llvm::ArrayRef<DeclaredInput> declared, llvm::ArrayRef<GivenInput> given,
                       const InputBindings &bindings, MismatchHandler report) {
  for (size_t i = 0; i < given.size() && i < declared.size(); ++i) {
    const DeclaredInput &want = declared[i];
    if (want.skip || given[i].shape.size() < want.shape.size())
      continue;
    size_t lead = given[i].shape.size() - want.shape.size();
    for (size_t d = 0; d < want.shape.size(); ++d) {
      const DeclaredDim &dim = want.shape[d];
      if (!dim.evaluate)
        continue;
      std::optional<int64_t> value = dim.evaluate(bindings.symbols);
      int64_t extent = given[i].shape[lead + d];
      if (value && *value != extent) {
        InputMismatch mismatch;
        mismatch.kind = InputMismatch::Kind::Dim;
        mismatch.input = i;
        mismatch.dim = lead + d;
        mismatch.expected = *value;
        mismatch.actual = extent;
        report(mismatch);
        return false;
      }
    }
  }
  return true;
}

} // namespace modelc::runtime
