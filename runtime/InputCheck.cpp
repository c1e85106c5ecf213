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
    std::function<std::optional<int64_t>(const llvm::StringMap<int64_t> &)> evaluate,
    std::vector<std::string> symbols) {
  DeclaredDim dim;
  dim.evaluate = std::move(evaluate);
  dim.symbols = std::move(symbols);
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

namespace {

/// What binding the one unbound symbol of `dim` to fit `extent` gives.
struct Solution {
  std::string symbol;
  std::optional<int64_t> value; ///< set when the extent fits
  int64_t nearest = 0;          ///< else the nearest extent the dim can have
};

/// Solves `dim` (an expression) for its one unbound symbol, if it has one
/// and is linear in it with a positive slope (probed at 0, 1 and 2, and the
/// solution checked), so `4 * H`, `H + 1` and `2 * B * H` with B bound solve.
std::optional<Solution> solveFor(const DeclaredDim &dim, int64_t extent,
                                 const llvm::StringMap<int64_t> &bound) {
  std::optional<std::string> unbound;
  for (const std::string &symbol : dim.symbols) {
    if (bound.count(symbol) || unbound == symbol)
      continue;
    if (unbound)
      return std::nullopt; // two unknowns
    unbound = symbol;
  }
  if (!unbound)
    return std::nullopt;
  llvm::StringMap<int64_t> trial = bound;
  auto at = [&](int64_t value) {
    trial[*unbound] = value;
    return dim.evaluate(trial);
  };
  std::optional<int64_t> v0 = at(0), v1 = at(1), v2 = at(2);
  if (!v0 || !v1 || !v2 || *v1 <= *v0 || *v2 - *v1 != *v1 - *v0)
    return std::nullopt;
  int64_t slope = *v1 - *v0;
  Solution solution;
  solution.symbol = *unbound;
  int64_t steps = extent < *v0 ? 0 : (extent - *v0) / slope;
  solution.nearest = *v0 + steps * slope;
  if (extent >= *v0 && (extent - *v0) % slope == 0 && at(steps) == extent)
    solution.value = steps;
  return solution;
}

} // namespace

bool checkCompoundDims(llvm::ArrayRef<DeclaredInput> declared, llvm::ArrayRef<GivenInput> given,
                       InputBindings &bindings, MismatchHandler report) {
  auto forEachExpression = [&](auto fn) {
    for (size_t i = 0; i < given.size() && i < declared.size(); ++i) {
      const DeclaredInput &want = declared[i];
      if (want.skip || given[i].shape.size() < want.shape.size())
        continue;
      size_t lead = given[i].shape.size() - want.shape.size();
      for (size_t d = 0; d < want.shape.size(); ++d)
        if (want.shape[d].evaluate && !fn(i, lead + d, want.shape[d], given[i].shape[lead + d]))
          return false;
    }
    return true;
  };
  auto reportDim = [&](size_t input, size_t at, int64_t expected, int64_t actual) {
    InputMismatch mismatch;
    mismatch.kind = InputMismatch::Kind::Dim;
    mismatch.input = input;
    mismatch.dim = at;
    mismatch.expected = expected;
    mismatch.actual = actual;
    report(mismatch);
    return false;
  };
  // Bind what the expressions determine, until nothing more is learnt (one
  // solution may make another expression's last unknown solvable).
  for (bool learnt = true; learnt;) {
    learnt = false;
    bool ok =
        forEachExpression([&](size_t input, size_t at, const DeclaredDim &dim, int64_t extent) {
          std::optional<Solution> solution = solveFor(dim, extent, bindings.symbols);
          if (!solution)
            return true;
          if (!solution->value)
            return reportDim(input, at, solution->nearest, extent);
          bindings.symbols[solution->symbol] = *solution->value;
          bindings.boundBy[solution->symbol] = input;
          learnt = true;
          return true;
        });
    if (!ok)
      return false;
  }
  return forEachExpression([&](size_t input, size_t at, const DeclaredDim &dim, int64_t extent) {
    std::optional<int64_t> value = dim.evaluate(bindings.symbols);
    return !value || *value == extent || reportDim(input, at, *value, extent);
  });
}

} // namespace modelc::runtime
