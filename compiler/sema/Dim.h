//===- Dim.h - Tensor dimensions as canonical polynomials -------*- C++ -*-===//
//
// A dimension is a polynomial with integer coefficients over symbols: model
// value arguments (`in`), symbolic dims of a fn signature (`B`) and opaque
// floor quotients that could not be divided exactly (`(H - 1)/2`). Every
// polynomial is kept in one canonical form and hash-consed, so a Dim is a
// 4-byte handle and `in*2 == 2*in`, `C*H*W == (C*H)*W` are plain id
// comparisons. The tables are process-wide and guarded by a mutex, so Dims
// may be shared between Compilations and threads.
//
//===----------------------------------------------------------------------===//
#ifndef MODELC_SEMA_DIM_H
#define MODELC_SEMA_DIM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/FunctionExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace llvm {
class raw_ostream;
}

namespace modelc::sema {

/// An interned symbol of a dimension polynomial.
using AtomId = uint32_t;

/// One term of a polynomial: coeff * atoms[0] * atoms[1] * ... (atoms sorted,
/// repeated for powers; empty for the constant term).
struct Term {
  int64_t coeff = 0;
  llvm::SmallVector<AtomId, 2> atoms;
};

class Dim {
public:
  /// The constant 0.
  Dim() = default;
  static Dim constant(int64_t value);
  /// The symbol `name` (interned).
  static Dim symbol(llvm::StringRef name);
  static Dim atom(AtomId atom);

  /// floor(this / divisor): exact when every coefficient divides, a
  /// constant when this is constant, else an opaque quotient atom.
  Dim floorDiv(int64_t divisor) const;
  /// floor(this / divisor) for a symbolic divisor (`(H - k) / stride`).
  Dim floorDiv(Dim divisor) const;
  /// this / divisor when the division is exact, e.g. (B*C*H)/(C*H) = B.
  std::optional<Dim> exactDiv(Dim divisor) const;
  /// this / divisor *assumed* exact (`embed_dim / num_heads`, checked when
  /// the model is instantiated): the polynomial quotient when there is one,
  /// else an exact-quotient atom q with q * divisor == this, so products
  /// simplify: `(embed_dim / num_heads) * num_heads == embed_dim`. Two
  /// constants give their floor quotient (the caller checks exactness).
  Dim exactQuotient(Dim divisor) const;

  friend Dim operator+(Dim a, Dim b);
  friend Dim operator-(Dim a, Dim b);
  friend Dim operator*(Dim a, Dim b);
  friend Dim operator-(Dim a) { return Dim() - a; }
  friend bool operator==(Dim a, Dim b) { return a.id_ == b.id_; }
  friend bool operator!=(Dim a, Dim b) { return a.id_ != b.id_; }

  std::optional<int64_t> asConstant() const;
  bool isConstant(int64_t value) const { return asConstant() == value; }
  /// The atom when this is exactly `1 * atom`.
  std::optional<AtomId> asAtom() const;
  /// The canonical terms (highest degree first, constant last).
  llvm::ArrayRef<Term> terms() const;
  bool mentions(AtomId atom) const;

  /// Replaces atoms by polynomials (atoms for which `map` returns nothing
  /// stay); opaque quotients are re-evaluated after substitution.
  Dim substitute(llvm::function_ref<std::optional<Dim>(AtomId)> map) const;

  void print(llvm::raw_ostream &os) const;
  std::string str() const;
  uint32_t id() const { return id_; }
  static Dim fromId(uint32_t id) {
    Dim d;
    d.id_ = id;
    return d;
  }

private:
  uint32_t id_ = 0; // 0 is the constant 0
};

Dim operator+(Dim a, Dim b);
Dim operator-(Dim a, Dim b);
Dim operator*(Dim a, Dim b);

/// The printed name of an atom (`in`, `(H - 1)/2`).
llvm::StringRef atomName(AtomId atom);
/// The numerator and divisor of an exact-quotient atom
/// (Dim::exactQuotient); nullopt for any other atom.
std::optional<std::pair<Dim, Dim>> exactQuotientParts(AtomId atom);
/// The numerator and divisor of a floor-quotient atom (Dim::floorDiv);
/// nullopt for any other atom.
std::optional<std::pair<Dim, Dim>> floorQuotientParts(AtomId atom);
/// The atom of a symbol name, interning it.
AtomId internSymbol(llvm::StringRef name);

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Dim d) {
  d.print(os);
  return os;
}

} // namespace modelc::sema

namespace llvm {
template <> struct DenseMapInfo<modelc::sema::Dim> {
  static modelc::sema::Dim getEmptyKey() { return modelc::sema::Dim::fromId(~0u); }
  static modelc::sema::Dim getTombstoneKey() { return modelc::sema::Dim::fromId(~0u - 1); }
  static unsigned getHashValue(modelc::sema::Dim d) { return d.id() * 37u; }
  static bool isEqual(modelc::sema::Dim a, modelc::sema::Dim b) { return a == b; }
};
} // namespace llvm

#endif // MODELC_SEMA_DIM_H
