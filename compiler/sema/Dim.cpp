//===- Dim.cpp - Hash-consed dimension polynomials ------------------------===//

#include "sema/Dim.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <deque>
#include <mutex>

using namespace modelc::sema;

namespace {

struct AtomInfo {
  std::string name;
  // An opaque floor quotient `numerator / divisor`, kept so substitution
  // can evaluate it once the numerator becomes divisible or constant.
  bool isQuotient = false;
  // An exact quotient (Dim::exactQuotient): numerator == atom * divisor.
  bool isExact = false;
  Dim numerator;
  Dim divisor;
};

/// Process-wide storage of polynomials and atoms. Elements of the deques
/// never move, so references handed out stay valid.
struct Tables {
  std::mutex mutex;
  std::deque<llvm::SmallVector<Term, 1>> polys;
  llvm::StringMap<uint32_t> polyIds;
  std::deque<AtomInfo> atoms;
  llvm::StringMap<AtomId> atomIds;

  Tables() {
    polys.emplace_back(); // id 0: the constant 0 (no terms)
    polyIds[""] = 0;
  }
};

Tables &tables() {
  static Tables t;
  return t;
}

// Wrapping arithmetic: absurd dims must not be undefined behaviour.
int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

/// Graded lexicographic order: higher degree first; the constant last.
bool termBefore(const Term &a, const Term &b) {
  if (a.atoms.size() != b.atoms.size())
    return a.atoms.size() > b.atoms.size();
  return a.atoms < b.atoms;
}

void appendKey(std::string &key, const void *data, size_t size) {
  key.append(static_cast<const char *>(data), size);
}

Dim intern(llvm::SmallVector<Term, 1> terms) {
  // Canonicalize: sort, merge equal monomials, drop zero coefficients.
  std::sort(terms.begin(), terms.end(), termBefore);
  llvm::SmallVector<Term, 1> merged;
  for (Term &t : terms) {
    if (!merged.empty() && merged.back().atoms == t.atoms)
      merged.back().coeff = wrapAdd(merged.back().coeff, t.coeff);
    else
      merged.push_back(std::move(t));
    if (merged.back().coeff == 0)
      merged.pop_back();
  }
  std::string key;
  for (const Term &t : merged) {
    appendKey(key, &t.coeff, sizeof(t.coeff));
    uint32_t n = t.atoms.size();
    appendKey(key, &n, sizeof(n));
    appendKey(key, t.atoms.data(), n * sizeof(AtomId));
  }
  Tables &tb = tables();
  std::lock_guard<std::mutex> lock(tb.mutex);
  auto [it, inserted] = tb.polyIds.try_emplace(key, uint32_t(tb.polys.size()));
  if (inserted)
    tb.polys.push_back(std::move(merged));
  return Dim::fromId(it->second);
}

const AtomInfo &atomInfo(AtomId atom) {
  Tables &tb = tables();
  std::lock_guard<std::mutex> lock(tb.mutex);
  return tb.atoms[atom];
}

AtomId internAtom(llvm::StringRef name, const AtomInfo *quotient, llvm::StringRef key = {}) {
  Tables &tb = tables();
  std::lock_guard<std::mutex> lock(tb.mutex);
  auto [it, inserted] = tb.atomIds.try_emplace(key.empty() ? name : key, AtomId(tb.atoms.size()));
  if (inserted) {
    AtomInfo info = quotient ? *quotient : AtomInfo();
    info.name = name.str();
    tb.atoms.push_back(std::move(info));
  }
  return it->second;
}

int64_t floorDivide(int64_t a, int64_t b) {
  if (b == -1)
    return int64_t(0 - uint64_t(a)); // avoids INT64_MIN / -1
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

/// Divides monomial `a` by monomial `b` (both sorted); nullopt if b does
/// not divide a.
std::optional<llvm::SmallVector<AtomId, 2>> divideAtoms(llvm::ArrayRef<AtomId> a,
                                                        llvm::ArrayRef<AtomId> b) {
  llvm::SmallVector<AtomId, 2> rest;
  size_t j = 0;
  for (AtomId x : a) {
    if (j < b.size() && b[j] == x)
      ++j;
    else
      rest.push_back(x);
  }
  if (j != b.size())
    return std::nullopt;
  return rest;
}

} // namespace

Dim Dim::constant(int64_t value) {
  if (value == 0)
    return Dim();
  llvm::SmallVector<Term, 1> terms;
  terms.push_back(Term{value, {}});
  return intern(std::move(terms));
}

AtomId modelc::sema::internSymbol(llvm::StringRef name) { return internAtom(name, nullptr); }

Dim Dim::symbol(llvm::StringRef name) { return atom(internSymbol(name)); }

Dim Dim::atom(AtomId atom) {
  llvm::SmallVector<Term, 1> terms;
  terms.push_back(Term{1, {atom}});
  return intern(std::move(terms));
}

llvm::ArrayRef<Term> Dim::terms() const {
  Tables &tb = tables();
  std::lock_guard<std::mutex> lock(tb.mutex);
  return tb.polys[id_];
}

llvm::StringRef modelc::sema::atomName(AtomId atom) { return atomInfo(atom).name; }

Dim modelc::sema::operator+(Dim a, Dim b) {
  llvm::SmallVector<Term, 1> terms(a.terms().begin(), a.terms().end());
  terms.append(b.terms().begin(), b.terms().end());
  return intern(std::move(terms));
}

Dim modelc::sema::operator-(Dim a, Dim b) {
  llvm::SmallVector<Term, 1> terms(a.terms().begin(), a.terms().end());
  for (const Term &t : b.terms())
    terms.push_back(Term{wrapMul(t.coeff, -1), t.atoms});
  return intern(std::move(terms));
}

namespace {

/// `term` with one exact quotient q = n/d cancelled against its divisor
/// (`c * q * d * rest` is `c * n * rest`), when d is a monomial that divides
/// the rest of the term; nullopt when nothing cancels.
std::optional<Dim> cancelExactQuotient(const Term &term) {
  for (size_t i = 0; i < term.atoms.size(); ++i) {
    if (i && term.atoms[i] == term.atoms[i - 1])
      continue;
    const AtomInfo &info = atomInfo(term.atoms[i]);
    if (!info.isExact)
      continue;
    llvm::ArrayRef<Term> ds = info.divisor.terms();
    if (ds.size() != 1 || ds[0].coeff == 0 || term.coeff % ds[0].coeff != 0)
      continue;
    llvm::SmallVector<AtomId, 2> rest(term.atoms.begin(), term.atoms.end());
    rest.erase(rest.begin() + i);
    std::optional<llvm::SmallVector<AtomId, 2>> left = divideAtoms(rest, ds[0].atoms);
    if (!left)
      continue;
    llvm::SmallVector<Term, 1> factor;
    factor.push_back(Term{term.coeff / ds[0].coeff, std::move(*left)});
    return intern(std::move(factor)) * info.numerator;
  }
  return std::nullopt;
}

} // namespace

Dim modelc::sema::operator*(Dim a, Dim b) {
  llvm::SmallVector<Term, 1> terms;
  Dim cancelled;
  for (const Term &x : a.terms()) {
    for (const Term &y : b.terms()) {
      Term t{wrapMul(x.coeff, y.coeff), x.atoms};
      t.atoms.append(y.atoms.begin(), y.atoms.end());
      std::sort(t.atoms.begin(), t.atoms.end());
      if (std::optional<Dim> c = cancelExactQuotient(t))
        cancelled = cancelled + *c;
      else
        terms.push_back(std::move(t));
    }
  }
  return intern(std::move(terms)) + cancelled;
}

std::optional<int64_t> Dim::asConstant() const {
  llvm::ArrayRef<Term> ts = terms();
  if (ts.empty())
    return 0;
  if (ts.size() == 1 && ts[0].atoms.empty())
    return ts[0].coeff;
  return std::nullopt;
}

std::optional<AtomId> Dim::asAtom() const {
  llvm::ArrayRef<Term> ts = terms();
  if (ts.size() == 1 && ts[0].coeff == 1 && ts[0].atoms.size() == 1)
    return ts[0].atoms[0];
  return std::nullopt;
}

bool Dim::mentions(AtomId atom) const {
  for (const Term &t : terms())
    if (llvm::is_contained(t.atoms, atom))
      return true;
  return false;
}

Dim Dim::floorDiv(int64_t divisor) const {
  if (divisor == 0 || divisor == 1)
    return *this;
  if (std::optional<int64_t> c = asConstant())
    return constant(floorDivide(*c, divisor));
  return floorDiv(constant(divisor));
}

/// The text of a quotient atom: `n/d`, parenthesised where an operand is
/// not a single atom (`(a + b)/(c * d)`); constants need no parentheses.
static std::string quotientName(Dim numerator, Dim divisor) {
  std::string name;
  llvm::raw_string_ostream os(name);
  if (numerator.asAtom())
    os << numerator;
  else
    os << "(" << numerator << ")";
  if (divisor.asConstant() || divisor.asAtom())
    os << "/" << divisor;
  else
    os << "/(" << divisor << ")";
  return name;
}

Dim Dim::floorDiv(Dim divisor) const {
  std::optional<int64_t> d = divisor.asConstant();
  if (d && (*d == 0 || *d == 1))
    return *this;
  if (std::optional<int64_t> c = asConstant(); c && d)
    return constant(floorDivide(*c, *d));
  if (std::optional<Dim> q = exactDiv(divisor))
    return *q;
  // Whole multiples of a constant divisor leave the floor, each symbolic
  // term's coefficient c = d * floor(c / d) + (c mod d): (2*h + 1) / 2 is h,
  // the length of arange(0, 2 * h, step: 2) and of x[0::2] when x has 2 * h
  // elements. The constant term stays inside: (H - 1)/2 keeps its form.
  if (d && *d > 1) {
    Dim whole, rest;
    for (const Term &t : terms()) {
      int64_t quotient = t.atoms.empty() ? 0 : floorDivide(t.coeff, *d);
      int64_t remainder = t.coeff - quotient * *d;
      if (quotient != 0)
        whole = whole + intern({Term{quotient, t.atoms}});
      if (remainder != 0)
        rest = rest + intern({Term{remainder, t.atoms}});
    }
    if (!whole.terms().empty())
      return whole + rest.floorDiv(divisor);
  }
  // Terms that are multiples of a symbolic monomial divisor leave the floor:
  // (img - patch) / patch is img / patch - 1, so a conv with stride = kernel
  // = patch has img / patch outputs, as PyTorch's ViT patch count says.
  if (llvm::ArrayRef<Term> ds = divisor.terms(); !d && ds.size() == 1) {
    Dim whole, rest;
    for (const Term &t : terms()) {
      llvm::SmallVector<Term, 1> single{t};
      Dim term = intern(std::move(single));
      std::optional<Dim> q;
      if (t.coeff % ds.front().coeff == 0)
        q = term.exactDiv(divisor);
      if (q)
        whole = whole + *q;
      else
        rest = rest + term;
    }
    if (!whole.terms().empty() && !rest.terms().empty())
      return whole + rest.floorDiv(divisor);
  }
  std::string name = quotientName(*this, divisor);
  AtomInfo info;
  info.isQuotient = true;
  info.numerator = *this;
  info.divisor = divisor;
  return atom(internAtom(name, &info));
}

Dim Dim::exactQuotient(Dim divisor) const {
  std::optional<int64_t> d = divisor.asConstant();
  if (d && (*d == 0 || *d == 1))
    return *this;
  if (std::optional<int64_t> c = asConstant(); c && d)
    return constant(floorDivide(*c, *d));
  if (std::optional<Dim> q = exactDiv(divisor))
    return *q;
  std::string name = quotientName(*this, divisor);
  AtomInfo info;
  info.isExact = true;
  info.numerator = *this;
  info.divisor = divisor;
  // Keyed apart from the floor quotient of the same text.
  return atom(internAtom(name, &info, "\x01" + name));
}

std::optional<std::pair<Dim, Dim>> modelc::sema::floorQuotientParts(AtomId atom) {
  const AtomInfo &info = atomInfo(atom);
  if (!info.isQuotient)
    return std::nullopt;
  return std::make_pair(info.numerator, info.divisor);
}

std::optional<std::pair<Dim, Dim>> modelc::sema::exactQuotientParts(AtomId atom) {
  const AtomInfo &info = atomInfo(atom);
  if (!info.isExact)
    return std::nullopt;
  return std::make_pair(info.numerator, info.divisor);
}

std::optional<Dim> Dim::exactDiv(Dim divisor) const {
  llvm::ArrayRef<Term> ds = divisor.terms();
  if (ds.empty())
    return std::nullopt;
  // Multivariate division by the leading term; graded lex is a monomial
  // order, so every step strictly lowers the remainder's leading term.
  Dim remainder = *this, quotient;
  for (unsigned steps = 0; steps < 4096; ++steps) {
    llvm::ArrayRef<Term> rs = remainder.terms();
    if (rs.empty())
      return quotient;
    const Term &lead = rs.front();
    if (lead.coeff % ds.front().coeff != 0)
      return std::nullopt;
    std::optional<llvm::SmallVector<AtomId, 2>> atoms = divideAtoms(lead.atoms, ds.front().atoms);
    if (!atoms)
      return std::nullopt;
    llvm::SmallVector<Term, 1> qt;
    qt.push_back(Term{lead.coeff / ds.front().coeff, std::move(*atoms)});
    Dim step = intern(std::move(qt));
    quotient = quotient + step;
    remainder = remainder - step * divisor;
  }
  return std::nullopt;
}

Dim Dim::substitute(llvm::function_ref<std::optional<Dim>(AtomId)> map) const {
  Dim result;
  for (const Term &t : terms()) {
    Dim product = constant(t.coeff);
    for (AtomId a : t.atoms) {
      Dim replaced = atom(a);
      if (std::optional<Dim> m = map(a)) {
        replaced = *m;
      } else {
        const AtomInfo &info = atomInfo(a);
        if (info.isQuotient)
          replaced = info.numerator.substitute(map).floorDiv(info.divisor.substitute(map));
        else if (info.isExact)
          replaced = info.numerator.substitute(map).exactQuotient(info.divisor.substitute(map));
      }
      product = product * replaced;
    }
    result = result + product;
  }
  return result;
}

void Dim::print(llvm::raw_ostream &os) const {
  llvm::ArrayRef<Term> stored = terms();
  if (stored.empty()) {
    os << "0";
    return;
  }
  // Print by name, not by interning order, so text never depends on which
  // file was checked first: higher degree first, then names alphabetically.
  struct Named {
    const Term *term;
    llvm::SmallVector<llvm::StringRef, 2> names;
  };
  llvm::SmallVector<Named, 4> ts;
  for (const Term &t : stored) {
    Named n{&t, {}};
    for (AtomId a : t.atoms)
      n.names.push_back(atomName(a));
    llvm::sort(n.names);
    ts.push_back(std::move(n));
  }
  std::stable_sort(ts.begin(), ts.end(), [](const Named &a, const Named &b) {
    if (a.names.size() != b.names.size())
      return a.names.size() > b.names.size();
    return a.names < b.names;
  });
  bool first = true;
  for (const Named &named : ts) {
    const Term &t = *named.term;
    bool negative = t.coeff < 0;
    uint64_t magnitude = negative ? 0 - uint64_t(t.coeff) : uint64_t(t.coeff);
    if (first)
      os << (negative ? "-" : "");
    else
      os << (negative ? " - " : " + ");
    first = false;
    if (t.atoms.empty()) {
      os << magnitude;
      continue;
    }
    if (magnitude != 1)
      os << magnitude << "*";
    for (size_t i = 0; i < named.names.size(); ++i)
      os << (i ? "*" : "") << named.names[i];
  }
}

std::string Dim::str() const {
  std::string s;
  llvm::raw_string_ostream os(s);
  print(os);
  return s;
}
