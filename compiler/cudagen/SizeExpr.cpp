//===- SizeExpr.cpp - Integer expressions over symbolic dims --------------===//

#include "cudagen/DevicePlan.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

namespace modelc::cudagen {

struct SizeExpr::Node {
  Kind kind = Kind::Constant;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> lhs, rhs;
};

namespace {

bool isBinary(SizeExpr::Kind kind) {
  return kind != SizeExpr::Kind::Constant && kind != SizeExpr::Kind::Symbol;
}

int64_t floorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDivide(int64_t a, int64_t b) { return -floorDivide(-a, b); }

const char *functionName(SizeExpr::Kind kind) {
  switch (kind) {
  case SizeExpr::Kind::FloorDiv:
    return "floordiv";
  case SizeExpr::Kind::CeilDiv:
    return "ceildiv";
  case SizeExpr::Kind::Min:
    return "min";
  case SizeExpr::Kind::Max:
    return "max";
  default:
    return nullptr;
  }
}

/// Binding strength for printing: + - bind loosest, * tighter, atoms tightest.
int precedence(SizeExpr::Kind kind) {
  switch (kind) {
  case SizeExpr::Kind::Add:
  case SizeExpr::Kind::Sub:
    return 1;
  case SizeExpr::Kind::Mul:
    return 2;
  default:
    return 3;
  }
}

} // namespace

SizeExpr::SizeExpr() : SizeExpr(int64_t(0)) {}

SizeExpr::SizeExpr(int64_t value) {
  auto n = std::make_shared<Node>();
  n->value = value;
  node = std::move(n);
}

SizeExpr SizeExpr::symbol(llvm::StringRef name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Symbol;
  n->name = name.str();
  return SizeExpr(std::shared_ptr<const Node>(std::move(n)));
}

SizeExpr SizeExpr::binary(Kind kind, const SizeExpr &lhs, const SizeExpr &rhs) {
  std::optional<int64_t> a = lhs.constant(), b = rhs.constant();
  // Fold constants and the identities that keep generated code readable.
  if (a && b) {
    switch (kind) {
    case Kind::Add:
      return *a + *b;
    case Kind::Sub:
      return *a - *b;
    case Kind::Mul:
      return *a * *b;
    case Kind::FloorDiv:
      if (*b != 0)
        return floorDivide(*a, *b);
      break;
    case Kind::CeilDiv:
      if (*b != 0)
        return ceilDivide(*a, *b);
      break;
    case Kind::Min:
      return std::min(*a, *b);
    case Kind::Max:
      return std::max(*a, *b);
    default:
      break;
    }
  }
  if (kind == Kind::Add && a == 0)
    return rhs;
  if ((kind == Kind::Add || kind == Kind::Sub) && b == 0)
    return lhs;
  if (kind == Kind::Mul && (a == 0 || b == 0))
    return 0;
  if (kind == Kind::Mul && a == 1)
    return rhs;
  if ((kind == Kind::Mul || kind == Kind::FloorDiv || kind == Kind::CeilDiv) && b == 1)
    return lhs;
  if ((kind == Kind::Min || kind == Kind::Max) && lhs == rhs)
    return lhs;
  // Keep constants of a product in front (`2 * B`, not `B * 2`) and chains
  // left-nested, so `4 * (2 * B)` folds to `8 * B` and the printed text
  // `a * b * c` parses back to the same tree.
  if (kind == Kind::Mul && b && !a)
    return binary(kind, rhs, lhs);
  if ((kind == Kind::Mul || kind == Kind::Add) && rhs.kind() == kind)
    return binary(kind, binary(kind, lhs, rhs.lhs()), rhs.rhs());
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->lhs = lhs.node;
  n->rhs = rhs.node;
  return SizeExpr(std::shared_ptr<const Node>(std::move(n)));
}

SizeExpr SizeExpr::floorDiv(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(Kind::FloorDiv, lhs, rhs);
}
SizeExpr SizeExpr::ceilDiv(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(Kind::CeilDiv, lhs, rhs);
}
SizeExpr SizeExpr::min(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(Kind::Min, lhs, rhs);
}
SizeExpr SizeExpr::max(const SizeExpr &lhs, const SizeExpr &rhs) {
  return binary(Kind::Max, lhs, rhs);
}
SizeExpr operator+(const SizeExpr &lhs, const SizeExpr &rhs) {
  return SizeExpr::binary(SizeExpr::Kind::Add, lhs, rhs);
}
SizeExpr operator-(const SizeExpr &lhs, const SizeExpr &rhs) {
  return SizeExpr::binary(SizeExpr::Kind::Sub, lhs, rhs);
}
SizeExpr operator*(const SizeExpr &lhs, const SizeExpr &rhs) {
  return SizeExpr::binary(SizeExpr::Kind::Mul, lhs, rhs);
}

SizeExpr::Kind SizeExpr::kind() const { return node->kind; }

std::optional<int64_t> SizeExpr::constant() const {
  if (node->kind != Kind::Constant)
    return std::nullopt;
  return node->value;
}

llvm::StringRef SizeExpr::symbolName() const { return node->name; }
SizeExpr SizeExpr::lhs() const { return SizeExpr(node->lhs); }
SizeExpr SizeExpr::rhs() const { return SizeExpr(node->rhs); }

llvm::Expected<int64_t> SizeExpr::evaluate(const SymbolValues &symbols) const {
  switch (node->kind) {
  case Kind::Constant:
    return node->value;
  case Kind::Symbol: {
    auto it = symbols.find(node->name);
    if (it == symbols.end())
      return llvm::createStringError(
          llvm::formatv("the size `{0}` needs a value for the symbolic dim `{1}`", str(),
                        node->name)
              .str());
    return it->second;
  }
  default:
    break;
  }
  llvm::Expected<int64_t> a = lhs().evaluate(symbols);
  if (!a)
    return a.takeError();
  llvm::Expected<int64_t> b = rhs().evaluate(symbols);
  if (!b)
    return b.takeError();
  switch (node->kind) {
  case Kind::Add:
    return *a + *b;
  case Kind::Sub:
    return *a - *b;
  case Kind::Mul:
    return *a * *b;
  case Kind::Min:
    return std::min(*a, *b);
  case Kind::Max:
    return std::max(*a, *b);
  default:
    if (*b == 0)
      return llvm::createStringError(llvm::formatv("the size `{0}` divides by zero", str()).str());
    return node->kind == Kind::FloorDiv ? floorDivide(*a, *b) : ceilDivide(*a, *b);
  }
}

void SizeExpr::collectSymbols(llvm::SmallVectorImpl<std::string> &names) const {
  if (node->kind == Kind::Symbol) {
    if (!llvm::is_contained(names, node->name))
      names.push_back(node->name);
    return;
  }
  if (isBinary(node->kind)) {
    lhs().collectSymbols(names);
    rhs().collectSymbols(names);
  }
}

namespace {

using Rename = llvm::function_ref<std::string(llvm::StringRef)>;

std::string print(const SizeExpr &e, bool cpp, Rename rename = nullptr) {
  switch (e.kind()) {
  case SizeExpr::Kind::Constant:
    return std::to_string(*e.constant());
  case SizeExpr::Kind::Symbol:
    return rename ? rename(e.symbolName()) : e.symbolName().str();
  default:
    break;
  }
  if (const char *fn = functionName(e.kind())) {
    if (!cpp)
      return llvm::formatv("{0}({1}, {2})", fn, print(e.lhs(), cpp, rename),
                           print(e.rhs(), cpp, rename))
          .str();
    // Generated kernels only divide non-negative sizes by positive ones.
    std::string a = print(e.lhs(), cpp, rename), b = print(e.rhs(), cpp, rename);
    switch (e.kind()) {
    case SizeExpr::Kind::FloorDiv:
      return "((" + a + ") / (" + b + "))";
    case SizeExpr::Kind::CeilDiv:
      return "((" + a + " + " + b + " - 1) / (" + b + "))";
    case SizeExpr::Kind::Min:
      return "((" + a + ") < (" + b + ") ? (" + a + ") : (" + b + "))";
    default:
      return "((" + a + ") > (" + b + ") ? (" + a + ") : (" + b + "))";
    }
  }
  int mine = precedence(e.kind());
  auto operand = [&](const SizeExpr &o, bool right) {
    std::string text = print(o, cpp, rename);
    int theirs = precedence(o.kind());
    bool wrap = theirs < mine || (right && theirs == mine && e.kind() == SizeExpr::Kind::Sub);
    return wrap ? "(" + text + ")" : text;
  };
  const char *op = e.kind() == SizeExpr::Kind::Add   ? " + "
                   : e.kind() == SizeExpr::Kind::Sub ? " - "
                                                     : " * ";
  return operand(e.lhs(), false) + op + operand(e.rhs(), true);
}

/// A recursive-descent parser for the text form.
class Parser {
public:
  explicit Parser(llvm::StringRef text) : text(text) {}

  llvm::Expected<SizeExpr> parseAll() {
    llvm::Expected<SizeExpr> e = parseSum();
    if (!e)
      return e;
    skipSpace();
    if (pos != text.size())
      return error("unexpected `" + text.substr(pos, 1).str() + "`");
    return e;
  }

private:
  llvm::Error error(const std::string &what) {
    return llvm::createStringError(
        llvm::formatv("bad size expression `{0}` at column {1}: {2}", text, pos + 1, what).str());
  }
  void skipSpace() {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  llvm::Expected<SizeExpr> parseSum() {
    llvm::Expected<SizeExpr> lhs = parseProduct();
    if (!lhs)
      return lhs;
    SizeExpr e = *lhs;
    while (true) {
      bool add = consume('+');
      if (!add && !consume('-'))
        return e;
      llvm::Expected<SizeExpr> rhs = parseProduct();
      if (!rhs)
        return rhs;
      e = add ? e + *rhs : e - *rhs;
    }
  }

  llvm::Expected<SizeExpr> parseProduct() {
    llvm::Expected<SizeExpr> lhs = parseAtom();
    if (!lhs)
      return lhs;
    SizeExpr e = *lhs;
    while (consume('*')) {
      llvm::Expected<SizeExpr> rhs = parseAtom();
      if (!rhs)
        return rhs;
      e = e * *rhs;
    }
    return e;
  }

  llvm::Expected<SizeExpr> parseAtom() {
    if (++depth > 200)
      return error("nested too deeply");
    llvm::scope_exit leave([&] { --depth; });
    skipSpace();
    if (pos >= text.size())
      return error("expected a number, a name or `(`");
    if (consume('-')) {
      llvm::Expected<SizeExpr> e = parseAtom();
      if (!e)
        return e;
      return SizeExpr(0) - *e;
    }
    if (consume('(')) {
      llvm::Expected<SizeExpr> e = parseSum();
      if (!e)
        return e;
      if (!consume(')'))
        return error("expected `)`");
      return e;
    }
    if (llvm::isDigit(text[pos])) {
      size_t start = pos;
      while (pos < text.size() && llvm::isDigit(text[pos]))
        ++pos;
      int64_t value;
      if (text.substr(start, pos - start).getAsInteger(10, value))
        return error("number out of range");
      return SizeExpr(value);
    }
    if (!llvm::isAlpha(text[pos]) && text[pos] != '_')
      return error("expected a number, a name or `(`");
    size_t start = pos;
    while (pos < text.size() && (llvm::isAlnum(text[pos]) || text[pos] == '_'))
      ++pos;
    llvm::StringRef name = text.substr(start, pos - start);
    static constexpr std::pair<const char *, SizeExpr (*)(const SizeExpr &, const SizeExpr &)>
        functions[] = {{"floordiv", &SizeExpr::floorDiv},
                       {"ceildiv", &SizeExpr::ceilDiv},
                       {"min", &SizeExpr::min},
                       {"max", &SizeExpr::max}};
    for (const auto &[fnName, build] : functions) {
      if (name != fnName)
        continue;
      if (!consume('('))
        return error("expected `(` after " + name.str());
      llvm::Expected<SizeExpr> a = parseSum();
      if (!a)
        return a;
      if (!consume(','))
        return error("expected `,`");
      llvm::Expected<SizeExpr> b = parseSum();
      if (!b)
        return b;
      if (!consume(')'))
        return error("expected `)`");
      return build(*a, *b);
    }
    return SizeExpr::symbol(name);
  }

  llvm::StringRef text;
  size_t pos = 0;
  unsigned depth = 0;
};

} // namespace

std::string SizeExpr::str() const { return print(*this, /*cpp=*/false); }
std::string SizeExpr::cpp(Rename rename) const { return print(*this, /*cpp=*/true, rename); }

llvm::Expected<SizeExpr> SizeExpr::parse(llvm::StringRef text) { return Parser(text).parseAll(); }

bool operator==(const SizeExpr &lhs, const SizeExpr &rhs) {
  if (lhs.node == rhs.node)
    return true;
  if (lhs.kind() != rhs.kind())
    return false;
  switch (lhs.kind()) {
  case SizeExpr::Kind::Constant:
    return lhs.node->value == rhs.node->value;
  case SizeExpr::Kind::Symbol:
    return lhs.node->name == rhs.node->name;
  default:
    return lhs.lhs() == rhs.lhs() && lhs.rhs() == rhs.rhs();
  }
}

SizeExpr product(llvm::ArrayRef<SizeExpr> dims) {
  SizeExpr result(1);
  for (const SizeExpr &d : dims)
    result = result * d;
  return result;
}

} // namespace modelc::cudagen
