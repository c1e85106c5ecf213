//===- KernelSource.cpp - CUDA C++ text for the generated kernels ---------===//
//
// Conventions of the generated text: `i` is the linear index of an output
// element, `cN` its coordinate in dim N, `vN` an SSA-like temporary of an
// elementwise expression, `inN` the input buffers, `out` the output. Sizes
// are int64_t: symbolic dims are kernel parameters, static dims literals.
//
//===----------------------------------------------------------------------===//

#include "cudagen/KernelSource.h"
#include "cudagen/GemmKernels.h"

#include "runtime/Float16.h"
#include "runtime/ScalarOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace modelc::cudagen {

using runtime::DType;

namespace {

/// Threads per block of the one-thread-per-element kernels.
constexpr int64_t ElementwiseBlock = 256;
/// Grid-stride loops cover the rest beyond this many blocks.
constexpr int64_t MaxBlocks = 65535;

bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

/// The type arithmetic on `t` values happens in: f16 and bf16 values are
/// widened to f32 on load, computed on and rounded back on store.
DType arithmeticType(DType t) { return isHalf(t) ? DType::F32 : t; }

bool isFloat(DType t) {
  t = arithmeticType(t);
  return t == DType::F32 || t == DType::F64;
}

/// The C type of a `t` value in registers (a stored element's type is cType).
llvm::StringRef computeType(DType t) { return cType(arithmeticType(t)); }

/// The type reductions accumulate in: f32 for f16, bf16 and f32.
DType accumulatorType(DType t) {
  if (isFloat(t))
    return arithmeticType(t);
  return DType::I64;
}

/// The stored element `element` of a `t` buffer as a computeType(t) value.
std::string widen(DType t, const std::string &element) {
  return isHalf(t) ? "mdl_widen(" + element + ")" : element;
}

/// A stored `t` buffer element read into an accumulator of type `acc`.
std::string loadAs(DType acc, DType t, const std::string &element) {
  return isHalf(t) ? widen(t, element) : "(" + cType(acc).str() + ")" + element;
}

/// A computeType(t) `value` as a stored `t` element: f16 and bf16 round to
/// nearest even, other types are taken as they are.
std::string storeValue(DType t, const std::string &value) {
  if (t == DType::F16)
    return "mdl_to_f16(" + value + ")";
  if (t == DType::BF16)
    return "mdl_to_bf16(" + value + ")";
  return value;
}

/// As storeValue, but other types convert with a C cast.
std::string storeAs(DType t, const std::string &value) {
  return isHalf(t) ? storeValue(t, value) : "(" + cType(t).str() + ")" + value;
}

/// `value` rounded to the nearest `t` value and kept in a float (a cast to
/// f16 or bf16 inside a kernel). Other types are unchanged.
std::string roundTo(DType t, const std::string &value) {
  if (t == DType::F16)
    return "mdl_round_f16(" + value + ")";
  if (t == DType::BF16)
    return "mdl_round_bf16(" + value + ")";
  return value;
}

/// `value` as the nearest `t` value (f16 and bf16 round to nearest even).
double representable(double value, DType t) {
  if (t == DType::F16)
    return runtime::halfBitsToFloat(runtime::floatToHalfBits(float(value)));
  if (t == DType::BF16)
    return runtime::bfloat16BitsToFloat(runtime::floatToBFloat16Bits(float(value)));
  return value;
}

std::string floatLiteral(double value, DType dtype) {
  if (std::isnan(value))
    return dtype == DType::F64 ? "__longlong_as_double(0x7ff8000000000000LL)"
                               : "__int_as_float(0x7fc00000)";
  if (std::isinf(value)) {
    if (dtype == DType::F64)
      return value > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                       : "__longlong_as_double((long long)0xfff0000000000000ULL)";
    return value > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float((int)0xff800000u)";
  }
  std::string text = llvm::formatv(dtype == DType::F64 ? "{0:e16}" : "{0:e8}", value).str();
  // Keep short values short: 0.5f, not 5.00000000e-01f.
  for (int digits = 1; digits <= 17; ++digits) {
    std::string shortText = llvm::formatv("{0}", llvm::format("%.*g", digits, value)).str();
    double parsed = 0;
    if (llvm::to_float(shortText, parsed) &&
        (dtype == DType::F64 ? parsed == value : float(parsed) == float(value))) {
      text = shortText;
      break;
    }
  }
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return dtype == DType::F64 ? text : text + "f";
}

/// A literal of `dtype` holding `value`.
std::string literal(double value, DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return floatLiteral(representable(value, dtype), DType::F32);
  case DType::F32:
  case DType::F64:
    return floatLiteral(value, dtype);
  case DType::Bool:
    return value != 0 ? "true" : "false";
  case DType::I64:
    return llvm::formatv("(int64_t){0}", int64_t(value)).str();
  default:
    return std::to_string(int64_t(value));
  }
}

/// -inf (floats) or the lowest value (integers), the identity of max.
std::string lowest(DType dtype) {
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    return floatLiteral(-INFINITY, DType::F32);
  case DType::F32:
  case DType::F64:
    return floatLiteral(-INFINITY, dtype);
  case DType::I32:
    return "(int32_t)0x80000000";
  case DType::I64:
    return "(int64_t)0x8000000000000000ULL";
  default:
    return "false";
  }
}

/// `name` with the f32 suffix: expf / exp.
std::string mathFn(llvm::StringRef name, DType dtype) {
  return arithmeticType(dtype) == DType::F32 ? (name + "f").str() : name.str();
}

/// The parameter name of a symbolic dim: its own name when it cannot clash
/// with the generated locals (lower-case, and the matmul's, conv's, pools'
/// and losses' upper-case extents: a batch named `N` once broke the matmul's
/// `N`), else `dim_<name>`.
std::string symbolParam(llvm::StringRef name) {
  static const llvm::StringSet<> extents = {"M",  "N",  "K",  "C",  "H",  "W", "O",
                                            "KH", "KW", "OH", "OW", "CG", "OG"};
  if (llvm::any_of(name, [](char c) { return llvm::isUpper(c); }) && !extents.contains(name))
    return name.str();
  return "dim_" + name.str();
}

/// Builds one kernel: parameters, body lines and the metadata.
class KernelWriter {
public:
  KernelWriter(const KernelOrigin &origin, int device, llvm::StringRef category) {
    result.info.name = origin.name;
    result.info.category = category.str();
    result.info.sourceLines = origin.sourceLines;
    result.launch.device = device;
    result.launch.kernel = origin.name;
  }

  /// The C++ text of `e`; its symbols become int64_t parameters.
  std::string size(const SizeExpr &e) {
    e.collectSymbols(symbols);
    return e.cpp(symbolParam);
  }

  /// A buffer parameter (once per buffer); returns its name.
  std::string buffer(const BufferRef &b, bool written = false) {
    auto it = bufferNames.find(b.id);
    if (it != bufferNames.end())
      return it->second;
    std::string name = written ? "out" : "in" + std::to_string(readCount++);
    if (written && writtenCount++ > 0)
      name += std::to_string(writtenCount - 1);
    bufferNames[b.id] = name;
    params.push_back(
        llvm::formatv("{0}{1} *__restrict__ {2}", written ? "" : "const ", cType(b.dtype), name)
            .str());
    result.launch.args.push_back(KernelArg::ofBuffer(b.id));
    SizeExpr bytes = SizeExpr(int64_t(runtime::dtypeSize(b.dtype))) * product(b.shape);
    if (written)
      result.info.bytesWritten = result.info.bytesWritten + bytes;
    else
      result.info.bytesRead = result.info.bytesRead + bytes;
    return name;
  }

  void line(const llvm::Twine &text) {
    body += std::string(2 + 2 * depth, ' ') + text.str() + "\n";
  }
  /// Extra indentation (two spaces per level) of the following lines.
  void setDepth(int levels) { depth = levels; }

  void setFlops(SizeExpr flops) { result.info.flops = std::move(flops); }
  /// For a kernel that writes only part of its output buffer.
  void setBytesWritten(SizeExpr bytes) { result.info.bytesWritten = std::move(bytes); }
  /// A 1-D launch of `threads` threads per block over `work` items.
  void launch1d(const SizeExpr &work, int64_t threads = ElementwiseBlock) {
    result.launch.grid[0] = SizeExpr::min(SizeExpr::ceilDiv(work, threads), MaxBlocks);
    result.launch.block[0] = threads;
  }
  Launch &launch() { return result.launch; }

  /// Coordinates `c0..` of linear index `index` in `shape` (row-major).
  void coordinates(llvm::ArrayRef<SizeExpr> shape, llvm::StringRef index, llvm::StringRef prefix,
                   unsigned firstDim = 0) {
    if (shape.empty())
      return;
    std::string rest = (prefix + "rest").str();
    line(llvm::formatv("int64_t {0} = {1};", rest, index));
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
      std::string extent = size(shape[d]);
      if (d == 0) {
        line(llvm::formatv("const int64_t {0}{1} = {2};", prefix, d + firstDim, rest));
        break;
      }
      line(llvm::formatv("const int64_t {0}{1} = {2} % {3};", prefix, d + firstDim, rest, extent));
      line(llvm::formatv("{0} /= {1};", rest, extent));
    }
  }

  /// Offset of a buffer element whose dim j is at coordinate
  /// `coord(dimMap[j])` (dims mapped to -1 read index 0).
  std::string offset(const BufferRef &b, llvm::ArrayRef<int> dimMap,
                     llvm::function_ref<std::string(int)> coord) {
    std::string text;
    SizeExpr stride(1);
    for (int j = int(b.shape.size()) - 1; j >= 0; --j) {
      if (dimMap[j] >= 0) {
        std::string term = coord(dimMap[j]);
        if (!(stride == SizeExpr(1)))
          term += " * " + wrap(size(stride));
        text = text.empty() ? term : term + " + " + text;
      }
      stride = stride * b.shape[j];
    }
    return text.empty() ? "0" : text;
  }

  GeneratedKernel finish(llvm::StringRef comment) {
    dropUnusedLocals();
    std::string source;
    llvm::raw_string_ostream os(source);
    os << "// " << result.info.name << ": " << comment << "\n";
    os << "// from "
       << (result.info.sourceLines.empty() ? std::string("(no source location)")
                                           : llvm::join(result.info.sourceLines, ", "))
       << "\n";
    os << "extern \"C\" __global__ void " << result.info.name << "(";
    std::vector<std::string> all = params;
    for (const std::string &s : symbols) {
      all.push_back("int64_t " + symbolParam(s));
      result.launch.args.push_back(KernelArg::ofSize(SizeExpr::symbol(s)));
    }
    os << llvm::join(all, ", ") << ") {\n" << body << "}\n";
    result.source = source;
    return result;
  }

  /// Coordinates are declared for every dim, but an expression reads only
  /// some: drop the declarations nothing reads (no unused-variable warnings).
  void dropUnusedLocals() {
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(body).split(lines, '\n');
    std::vector<std::string> kept(lines.begin(), lines.end());
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < kept.size(); ++i) {
        llvm::StringRef line = llvm::StringRef(kept[i]).trim();
        if (!line.consume_front("const int64_t ") && !line.consume_front("int64_t "))
          continue;
        std::string name =
            line.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; }).str();
        auto mentions = [&](llvm::StringRef text) {
          for (size_t at = text.find(name); at != llvm::StringRef::npos;
               at = text.find(name, at + 1)) {
            bool startOk = at == 0 || !(llvm::isAlnum(text[at - 1]) || text[at - 1] == '_');
            size_t end = at + name.size();
            bool endOk = end >= text.size() || !(llvm::isAlnum(text[end]) || text[end] == '_');
            if (startOk && endOk)
              return true;
          }
          return false;
        };
        // `rest /= extent;` updates a variable without reading it for anyone.
        auto isUpdate = [&](llvm::StringRef text) {
          return text.trim().starts_with(name + " /= ");
        };
        bool used = false;
        for (size_t j = 0; j < kept.size() && !used; ++j)
          used = j != i && !isUpdate(kept[j]) && mentions(kept[j]);
        if (!used) {
          kept.erase(kept.begin() + i);
          llvm::erase_if(kept, [&](const std::string &l) { return isUpdate(l); });
          changed = true;
          break;
        }
      }
    }
    body = llvm::join(kept, "\n");
  }

  static std::string wrap(const std::string &text) {
    bool simple = llvm::all_of(text, [](char c) { return llvm::isAlnum(c) || c == '_'; });
    return simple ? text : "(" + text + ")";
  }

private:
  GeneratedKernel result;
  std::vector<std::string> params;
  llvm::SmallVector<std::string> symbols;
  llvm::DenseMap<BufferId, std::string> bufferNames;
  unsigned readCount = 0;
  unsigned writtenCount = 0;
  std::string body;
  int depth = 0;
};

/// Emits the statements of an elementwise expression, one temporary per
/// node (shared nodes once), reading coordinates `c0..` of the output.
class ExprEmitter {
public:
  ExprEmitter(KernelWriter &writer, llvm::ArrayRef<SizeExpr> outShape, std::string accumulator,
              std::string linearIndex)
      : w(writer), outShape(outShape), accumulator(std::move(accumulator)),
        linearIndex(std::move(linearIndex)) {}

  std::string emit(const ExprPtr &e) {
    auto it = names.find(e.get());
    if (it != names.end())
      return it->second;
    std::string value = compute(*e);
    // Leaves are read in place: `v0 = acc + in1[c1]`, not a temporary each.
    if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Constant ||
        e->kind == Expr::Kind::Epilogue)
      return value;
    std::string name = "v" + std::to_string(counter++);
    w.line(llvm::formatv("const {0} {1} = {2};", computeType(e->dtype), name, value));
    names[e.get()] = name;
    return name;
  }

  unsigned operations() const { return ops; }

private:
  std::string coord(int d) { return "c" + std::to_string(d); }

  std::string compute(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::Load: {
      std::string name = w.buffer(e.buffer);
      bool identity = e.buffer.shape.size() == outShape.size();
      for (size_t j = 0; j < e.dimMap.size() && identity; ++j)
        identity = e.dimMap[j] == int(j);
      std::string at =
          identity ? linearIndex : w.offset(e.buffer, e.dimMap, [&](int d) { return coord(d); });
      return widen(e.buffer.dtype, name + "[" + at + "]");
    }
    case Expr::Kind::Constant:
      return literal(e.value, e.dtype);
    case Expr::Kind::Arange:
      ++ops;
      return llvm::formatv("({0})({1} + (double){2} * {3})", computeType(e.dtype),
                           floatLiteral(e.start, DType::F64), coord(e.dimMap[0]),
                           floatLiteral(e.step, DType::F64))
          .str();
    case Expr::Kind::Eye:
      return llvm::formatv("({0})({1} == {2})", computeType(e.dtype), coord(e.dimMap[0]),
                           coord(e.dimMap[1]))
          .str();
    case Expr::Kind::Epilogue: // f16/bf16: the f32 accumulator itself
      return "(" + computeType(e.dtype).str() + ")" + accumulator;
    case Expr::Kind::Cast: {
      std::string x = emit(e.operands[0]);
      if (e.dtype == DType::Bool)
        return "(" + x + " != 0)";
      // A cast to f16/bf16 rounds even when the value stays in a register.
      return roundTo(e.dtype, llvm::formatv("({0}){1}", computeType(e.dtype), x).str());
    }
    case Expr::Kind::Select:
      return llvm::formatv("{0} ? {1} : {2}", emit(e.operands[0]), emit(e.operands[1]),
                           emit(e.operands[2]))
          .str();
    case Expr::Kind::Compare: {
      static const llvm::StringMap<const char *> ops = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                        {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
      ++this->ops;
      return llvm::formatv("{0} {1} {2}", emit(e.operands[0]), ops.lookup(e.op),
                           emit(e.operands[1]))
          .str();
    }
    case Expr::Kind::Unary:
      ++ops;
      return unary(e.op, e.dtype, emit(e.operands[0]));
    case Expr::Kind::Binary:
      ++ops;
      return binary(e.op, e.dtype, emit(e.operands[0]), emit(e.operands[1]));
    }
    return "0";
  }

  static std::string unary(llvm::StringRef op, DType t, const std::string &x) {
    t = arithmeticType(t);
    auto lit = [&](double v) { return literal(v, t); };
    auto fn = [&](llvm::StringRef name) { return mathFn(name, t); };
    // Every op whose meaning is more than one C operator calls its
    // runtime/ScalarOps.h function, the definition all back ends share.
    if (!isFloat(t)) {
      if (op == "relu")
        return llvm::formatv("{0} > 0 ? {0} : 0", x).str();
      if (op == "neg")
        return llvm::formatv("({0})mdl_ineg({1})", cType(t), x).str();
      if (op == "not")
        return "!" + x;
      if (op == "abs")
        return llvm::formatv("({0})mdl_iabs({1})", cType(t), x).str();
      // Transcendentals of integers go through double.
      return llvm::formatv("({0}){1}((double){2})", cType(t), op == "sigmoid" ? "" : op, x).str();
    }
    if (op == "relu")
      return llvm::formatv("mdl_max({0}, {1})", x, lit(0)).str();
    if (op == "gelu" || op == "gelu_tanh" || op == "silu" || op == "sigmoid")
      return llvm::formatv("mdl_{0}({1})", op, x).str();
    if (op == "neg")
      return "-(" + x + ")";
    if (op == "not")
      return "!" + x;
    if (op == "abs")
      return fn("fabs") + "(" + x + ")";
    return fn(op) + "(" + x + ")"; // tanh exp log sqrt sin cos
  }

  static std::string binary(llvm::StringRef op, DType t, const std::string &a,
                            const std::string &b) {
    t = arithmeticType(t);
    static const llvm::StringMap<const char *> infix = {
        {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"div", "/"}};
    if (op == "div" && !isFloat(t)) // floor division; x / 0 is 0
      return llvm::formatv("({0})mdl_floordiv({1}, {2})", cType(t), a, b).str();
    if (const char *symbol = infix.lookup(op))
      return llvm::formatv("{0} {1} {2}", a, symbol, b).str();
    if (op == "and" || op == "or")
      return llvm::formatv("{0} {1} {2}", a, op == "and" ? "&&" : "||", b).str();
    if (op == "rem") // Python's %: the sign of the divisor; integer x % 0 is 0
      return isFloat(t) ? llvm::formatv("mdl_rem({0}, {1})", a, b).str()
                        : llvm::formatv("({0})mdl_irem({1}, {2})", cType(t), a, b).str();
    if (op == "pow")
      return isFloat(t) ? llvm::formatv("{0}({1}, {2})", mathFn("pow", t), a, b).str()
                        : llvm::formatv("({0})mdl_ipow({1}, {2})", cType(t), a, b).str();
    bool isMax = op == "max";
    if (isFloat(t)) // NaN propagates, -0 < +0
      return llvm::formatv("{0}({1}, {2})", isMax ? "mdl_max" : "mdl_min", a, b).str();
    return llvm::formatv("{0} {1} {2} ? {0} : {2}", a, isMax ? ">" : "<", b).str();
  }

  KernelWriter &w;
  llvm::ArrayRef<SizeExpr> outShape;
  std::string accumulator, linearIndex;
  llvm::DenseMap<const Expr *, std::string> names;
  unsigned counter = 0, ops = 0;
};

/// "f32[B, 784]" for comments.
std::string describe(const BufferRef &b) {
  std::vector<std::string> dims;
  for (const SizeExpr &d : b.shape)
    dims.push_back(d.str());
  return (runtime::dtypeName(b.dtype) + "[" + llvm::join(dims, ", ") + "]").str();
}

/// Row-major stride of dim `d` of `shape`.
SizeExpr strideOf(llvm::ArrayRef<SizeExpr> shape, size_t d) {
  return product(shape.drop_front(d + 1));
}

} // namespace

llvm::StringRef cType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::I32:
    return "int32_t";
  case DType::I64:
    return "int64_t";
  case DType::Bool:
    return "bool";
  case DType::F16:
    return "mdl_f16";
  case DType::BF16:
    return "mdl_bf16";
  }
  return "float";
}

std::string kernelPrelude() {
  return R"(// Generated by modelc (compiler/cudagen). Compiles with NVRTC and, against
// runtime/cuda/emulator/cuda_emulation.h, with a host C++ compiler.
#include <stdint.h>

// Index reads are clamped into range, as on the cpu back end.
static __device__ __forceinline__ int64_t mdl_clamp_index(int64_t index, int64_t extent) {
  return index < 0 ? 0 : (index >= extent ? extent - 1 : index);
}

// What each op computes on one element: runtime/ScalarOps.h, shared with the
// cpu back end's tests and documented in MdlOps.td.
)" +
         std::string(
#include "cudagen/ScalarOpsHeader.inc"
             ) +
         R"(
// f16 and bf16 elements are 16-bit storage with no arithmetic of their own:
// loads widen them to float (mdl_widen), all arithmetic and every
// accumulation is in float, and stores round to nearest even (mdl_to_f16,
// mdl_to_bf16), as does a cast to f16/bf16 inside a kernel (mdl_round_f16,
// mdl_round_bf16). The bit conversions are runtime/HalfConversions.h, shared
// with the cpu runtime.
)" +
         std::string(
#include "cudagen/HalfConversionsHeader.inc"
             ) +
         R"(
struct mdl_f16 {
  uint16_t bits;
};
struct mdl_bf16 {
  uint16_t bits;
};
static __device__ __forceinline__ float mdl_widen(mdl_f16 x) { return mdl_f16_bits_to_float(x.bits); }
static __device__ __forceinline__ float mdl_widen(mdl_bf16 x) {
  return mdl_bf16_bits_to_float(x.bits);
}
static __device__ __forceinline__ mdl_f16 mdl_to_f16(float x) {
  mdl_f16 h;
  h.bits = mdl_float_to_f16_bits(x);
  return h;
}
static __device__ __forceinline__ mdl_bf16 mdl_to_bf16(float x) {
  mdl_bf16 h;
  h.bits = mdl_float_to_bf16_bits(x);
  return h;
}
static __device__ __forceinline__ float mdl_round_f16(float x) {
  return mdl_f16_bits_to_float(mdl_float_to_f16_bits(x));
}
static __device__ __forceinline__ float mdl_round_bf16(float x) {
  return mdl_bf16_bits_to_float(mdl_float_to_bf16_bits(x));
}
)" + gemmPrelude().str() +
         R"(

struct MdlSum {
  template <typename T> __device__ T operator()(T a, T b) const { return a + b; }
};
struct MdlMax {
  // NaN wins, as in PyTorch.
  template <typename T> __device__ T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};

// Reduces over the 32 lanes of a warp; every lane gets the result.
template <typename T, typename Op>
static __device__ __forceinline__ T mdl_warp_reduce(T value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// Reduces over a block whose size is a multiple of 32; every thread gets the
// result. `scratch` holds 32 values in shared memory.
template <typename T, typename Op>
static __device__ __forceinline__ T mdl_block_reduce(T value, T *scratch, Op op) {
  value = mdl_warp_reduce(value, op);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  __syncthreads(); // scratch may still be read by a previous reduction
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  value = scratch[0];
  for (int w = 1; w < warps; ++w)
    value = op(value, scratch[w]);
  return value;
}
)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

ExprPtr identityLoad(BufferRef buffer, runtime::DType dtype, size_t rank) {
  Expr load;
  load.kind = Expr::Kind::Load;
  load.dtype = dtype;
  load.buffer = std::move(buffer);
  for (unsigned d = 0; d < rank; ++d)
    load.dimMap.push_back(int(d));
  return std::make_shared<const Expr>(std::move(load));
}

GeneratedKernel elementwiseKernel(const KernelOrigin &origin, int device, const ExprPtr &expr,
                                  const BufferRef &out) {
  KernelWriter w(origin, device, "elementwise");
  SizeExpr total = product(out.shape);
  ExprEmitter emitter(w, out.shape, "", "i");
  std::string outName = w.buffer(out, /*written=*/true);
  w.line("const int64_t total = " + w.size(total) + ";");
  w.line("for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;");
  w.line("     i += (int64_t)gridDim.x * blockDim.x) {");
  w.setDepth(1);
  w.coordinates(out.shape, "i", "c");
  std::string value = emitter.emit(expr);
  w.line(llvm::formatv("{0}[i] = {1};", outName, storeValue(out.dtype, value)));
  w.setDepth(0);
  w.line("}");
  w.setFlops(SizeExpr(int64_t(emitter.operations())) * total);
  w.launch1d(total);
  return w.finish("fused elementwise, " + describe(out));
}

//===----------------------------------------------------------------------===//
// Matmul and conv2d
//===----------------------------------------------------------------------===//

namespace {

/// Stores `acc` at linear output index `index` through `epilogue`.
void storeThroughEpilogue(KernelWriter &w, ExprEmitter &emitter, const ExprPtr &epilogue,
                          const BufferRef &out, const std::string &outName,
                          const std::string &index) {
  if (!epilogue) {
    w.line(llvm::formatv("{0}[{1}] = {2};", outName, index, storeAs(out.dtype, "acc")));
    return;
  }
  w.coordinates(out.shape, index, "c");
  std::string value = emitter.emit(epilogue);
  w.line(llvm::formatv("{0}[{1}] = {2};", outName, index, storeValue(out.dtype, value)));
}

/// The offset of operand element (batch coords `b*`, row, col).
std::string operandOffset(KernelWriter &w, const MatmulOperand &op, unsigned outBatchRank,
                          llvm::StringRef row, llvm::StringRef col) {
  unsigned rank = op.shape.size();
  return w.offset(op.buffer, op.dimMap, [&](int d) -> std::string {
    if (d == int(rank) - 2)
      return row.str();
    if (d == int(rank) - 1)
      return col.str();
    // Batch dims align right with the output's batch dims.
    return "b" + std::to_string(outBatchRank - (rank - 2) + d);
  });
}

/// The lines that bound this block's slice of K: blockIdx.z picks one of
/// gridDim.z slices, each a multiple of the tile's depth.
void emitKSlice(KernelWriter &w, const GemmVariant &v) {
  if (!v.mayTakeSplits()) {
    w.line("const int64_t kBegin = 0, kEnd = K;");
    return;
  }
  w.line("// split-K: blockIdx.z adds up slice z of K; with more than one slice the partial");
  w.line("// sums go to the workspace");
  w.line("const int64_t splits = gridDim.z;");
  w.line(llvm::formatv("const int64_t kSlice = (K + splits * {0} - 1) / (splits * {0}) * {0};",
                       v.tile.blockK));
  w.line("const int64_t kBegin = blockIdx.z * kSlice;");
  w.line("const int64_t kEnd = kBegin + kSlice < K ? kBegin + kSlice : K;");
}

/// The launch of one GEMM variant: blocks over M and N (the one on x may
/// have more than 65535 tiles), `z` on z; no blocks where the variant is not
/// active.
void setGemmLaunch(KernelWriter &w, const GemmVariant &v, const SizeExpr &m, const SizeExpr &n,
                   const SizeExpr &z, bool rowsOnX) {
  Launch &l = w.launch();
  SizeExpr rowTiles = SizeExpr::ceilDiv(m, v.tile.blockM);
  SizeExpr columnTiles = SizeExpr::ceilDiv(n, v.tile.blockN);
  l.grid = {(rowsOnX ? rowTiles : columnTiles) * v.active, rowsOnX ? columnTiles : rowTiles,
            v.mayTakeSplits() ? v.splits : z};
  l.block = {SizeExpr(v.tile.threads()), SizeExpr(1), SizeExpr(1)};
}

/// A kernel that runs only where `runs` is 1 moves no bytes elsewhere.
GeneratedKernel scaledByRuns(GeneratedKernel kernel, const SizeExpr &runs) {
  kernel.info.bytesRead = kernel.info.bytesRead * runs;
  kernel.info.bytesWritten = kernel.info.bytesWritten * runs;
  return kernel;
}

/// A variant's kernel name: the GEMM's own when it is the only kernel.
KernelOrigin variantOrigin(const KernelOrigin &origin, const std::vector<GemmVariant> &variants,
                           const GemmVariant &v) {
  KernelOrigin named = origin;
  if (variants.size() > 1 || v.mayTakeSplits())
    named.name += llvm::formatv("_{0}x{1}", v.tile.blockM, v.tile.blockN).str();
  return named;
}

/// Adds the K slices a split-K GEMM variant wrote to `workspace` in slice
/// order (the result does not depend on timing) and stores the sum through
/// `epilogue`, plus `bias[c<biasDim>]` first where given.
GeneratedKernel splitKSumKernel(const KernelOrigin &origin, int device, const GemmVariant &v,
                                const BufferRef &workspace, const std::optional<BufferRef> &bias,
                                int biasDim, const ExprPtr &epilogue, const BufferRef &out) {
  KernelOrigin named = origin;
  named.name += llvm::formatv("_{0}x{1}_sum", v.tile.blockM, v.tile.blockN).str();
  KernelWriter w(named, device, "matmul");
  std::string partial = w.buffer(workspace);
  std::string outName = w.buffer(out, /*written=*/true);
  std::string biasName = bias ? w.buffer(*bias) : "";
  // The workspace holds the product's accumulators; the epilogue may store
  // another dtype (a comparison stores bool).
  DType acc = workspace.dtype;
  SizeExpr total = product(out.shape);
  w.line(llvm::formatv("const int64_t total = {0};", w.size(total)));
  w.line(llvm::formatv("const int64_t splits = {0};", w.size(v.splits)));
  w.line("for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;");
  w.line("     i += (int64_t)gridDim.x * blockDim.x) {");
  w.setDepth(1);
  w.line(llvm::formatv("{0} acc = 0;", cType(acc)));
  w.line("for (int64_t s = 0; s < splits; ++s)");
  w.line(llvm::formatv("  acc += {0}[s * total + i];", partial));
  ExprEmitter emitter(w, out.shape, "acc", "i");
  if (bias) {
    w.coordinates(out.shape, "i", "c");
    w.line(llvm::formatv(
        "acc += {0};", loadAs(acc, bias->dtype, biasName + "[c" + std::to_string(biasDim) + "]")));
    if (!epilogue)
      w.line(llvm::formatv("{0}[i] = {1};", outName, storeAs(out.dtype, "acc")));
    else
      w.line(
          llvm::formatv("{0}[i] = {1};", outName, storeValue(out.dtype, emitter.emit(epilogue))));
  } else {
    storeThroughEpilogue(w, emitter, epilogue, out, outName, "i");
  }
  w.setDepth(0);
  w.line("}");
  SizeExpr runs = v.active * SizeExpr::min(v.splits - 1, 1);
  w.setFlops((v.splits + int64_t(emitter.operations()) + (bias ? 1 : 0)) * total * runs);
  w.launch1d(total);
  w.launch().grid[0] = w.launch().grid[0] * runs;
  return scaledByRuns(
      w.finish(llvm::formatv("the {0} K slices of {1} added in order, {2}{3}", v.splits.str(),
                             origin.name, describe(out), epilogue ? " with the fused epilogue" : "")
                   .str()),
      runs);
}

/// The store lambda's split-K branch: partial sums go to the workspace.
void storePartialSum(KernelWriter &w, const GemmVariant &v, const std::string &workspace,
                     const std::string &index) {
  if (!v.mayTakeSplits())
    return;
  w.line("if (splits > 1) {");
  w.line(llvm::formatv("  {0}[blockIdx.z * total + {1}] = acc;", workspace, index));
  w.line("  return;");
  w.line("}");
}

/// Which way a matmul operand's tile loads go (`kDim` and `otherDim` are its
/// logical K and M or N dims): along its innermost buffer dim where that is
/// K or the other dim, else along K element by element (a permuted batch
/// dim or a broadcast innermost).
GemmOperandLayout operandLayout(const MatmulOperand &op, unsigned kDim, unsigned otherDim) {
  int innermost = op.buffer.shape.empty() ? -1 : op.dimMap.back();
  GemmOperandLayout layout;
  layout.kFast = innermost == int(kDim);
  layout.contiguous = innermost == int(kDim) || innermost == int(otherDim);
  return layout;
}

} // namespace

/// Whether `lhs @ rhs -> out` can run as one GEMM over the batch dims and
/// M together: rhs a matrix (the same for every batch), lhs's buffer exactly
/// [batch..., M, K] as out's batch dims (row b * M + m is then at offset
/// (b * M + m) * K, as out's at (b * M + m) * N).
static bool foldsBatchIntoRows(const MatmulOperand &lhs, const MatmulOperand &rhs,
                               const BufferRef &out) {
  unsigned rank = out.shape.size();
  if (rank < 3 || rhs.shape.size() != 2 || lhs.shape.size() != rank ||
      lhs.buffer.shape.size() != rank)
    return false;
  for (unsigned d = 0; d < rank; ++d)
    if (lhs.dimMap[d] != int(d) || !(lhs.buffer.shape[d] == lhs.shape[d]) ||
        (d + 2 < rank && !(lhs.shape[d] == out.shape[d])))
      return false;
  return true;
}

std::vector<GeneratedKernel> matmulKernels(const KernelOrigin &origin, int device,
                                           const MatmulOperand &lhs, const MatmulOperand &rhs,
                                           const ExprPtr &epilogue, const BufferRef &out,
                                           const WorkspaceMaker &makeWorkspace,
                                           GemmPrecision precision) {
  unsigned rank = out.shape.size();
  llvm::ArrayRef<SizeExpr> batchShape = llvm::ArrayRef(out.shape).drop_back(2);
  SizeExpr m = out.shape[rank - 2], n = out.shape[rank - 1];
  SizeExpr k = lhs.shape.back();
  SizeExpr batches = product(batchShape);
  // [B..., M, K] @ [K, N] with the lhs laid out as it is indexed: one GEMM
  // of B... * M rows, so that a small batch of short sequences still gets a
  // tile class and split-K for all its rows (as B GEMMs of M rows it got
  // neither). The epilogue's coordinates come back from the folded row.
  const bool folded = foldsBatchIntoRows(lhs, rhs, out);
  MatmulOperand lhsRows = lhs;
  SizeExpr rows = m, gemms = batches;
  if (folded) {
    rows = batches * m;
    gemms = 1;
    lhsRows.buffer.shape = {rows, k};
    lhsRows.shape = {rows, k};
    lhsRows.dimMap = {0, 1};
  }
  // The product accumulates in its operands' dtype whatever its fused
  // epilogue stores (`x @ w.T + b > p` stores bool).
  DType acc = accumulatorType(lhs.buffer.dtype);
  GemmMath math =
      chooseGemmMath(lhs.buffer.dtype, rhs.buffer.dtype, lhs.buffer.dtype, precision);
  const bool onHalf = math == GemmMath::HalfMma;
  // Tensor cores hand the epilogue f32 accumulators.
  std::string accType = onHalf ? "float" : cType(acc).str();
  GemmOperandLayout aLayout = operandLayout(lhs, lhs.shape.size() - 1, lhs.shape.size() - 2);
  GemmOperandLayout bLayout = operandLayout(rhs, rhs.shape.size() - 2, rhs.shape.size() - 1);

  std::vector<GeneratedKernel> kernels;
  std::vector<GemmVariant> variants = chooseGemmVariants(rows, n, k, gemms, math);
  for (const GemmVariant &v : variants) {
    std::optional<BufferRef> workspace;
    if (v.mayTakeSplits())
      workspace = makeWorkspace(acc, {v.workspaceRows(), batches * m * n});
    KernelWriter w(variantOrigin(origin, variants, v), device, "matmul");
    std::string a = w.buffer(lhs.buffer), b = w.buffer(rhs.buffer);
    std::string outName = w.buffer(out, /*written=*/true);
    std::string partial = workspace ? w.buffer(*workspace, /*written=*/true) : "";
    w.line(llvm::formatv("// {0} GEMM: {1}; block (x, y) computes the tile at rows "
                         "blockIdx.x, columns blockIdx.y",
                         v.sizeClass, v.tile.str()));
    w.line(llvm::formatv("const int64_t M = {0}, N = {1}, K = {2}, batches = {3};", w.size(rows),
                         w.size(n), w.size(k), w.size(gemms)));
    w.line("const int64_t total = batches * M * N;");
    emitKSlice(w, v);
    if (v.mayTakeSplits())
      w.line("{");
    else
      w.line("for (int64_t batch = blockIdx.z; batch < batches; batch += gridDim.z) {");
    w.setDepth(1);
    if (v.mayTakeSplits())
      w.line("const int64_t batch = 0;");
    if (!folded)
      w.coordinates(batchShape, "batch", "b");
    w.line(llvm::formatv("{0}(",
                         gemmTileCall(v.tile, aLayout, bLayout, accType, cType(lhs.buffer.dtype))));
    w.line(llvm::formatv("    M, N, kBegin, kEnd, blockIdx.x * (int64_t){0}, blockIdx.y * "
                         "(int64_t){1},",
                         v.tile.blockM, v.tile.blockN));
    std::string aElement =
        a + "[" + operandOffset(w, lhsRows, folded ? 0 : batchShape.size(), "row", "ka") + "]";
    std::string bElement = b + "[" + operandOffset(w, rhs, batchShape.size(), "kb", "col") + "]";
    if (onHalf) {
      w.line(llvm::formatv("    [&](int64_t row, int64_t ka) -> const uint16_t * {{ return "
                           "&{0}.bits; },",
                           aElement));
      w.line(llvm::formatv("    [&](int64_t kb, int64_t col) -> const uint16_t * {{ return "
                           "&{0}.bits; },",
                           bElement));
    } else {
      w.line(llvm::formatv("    [&](int64_t row, int64_t ka) {{ return {0}; },",
                           widen(lhs.buffer.dtype, aElement)));
      w.line(llvm::formatv("    [&](int64_t kb, int64_t col) {{ return {0}; },",
                           widen(rhs.buffer.dtype, bElement)));
    }
    w.line(llvm::formatv("    [&](int64_t row, int64_t col, {0} acc) {{", accType));
    w.setDepth(4);
    w.line("const int64_t i = (batch * M + row) * N + col;");
    storePartialSum(w, v, partial, "i");
    ExprEmitter emitter(w, out.shape, "acc", "i");
    if (epilogue) {
      if (folded) {
        w.line(llvm::formatv("const int64_t folded_batch = row / {0};", w.size(m)));
        w.coordinates(batchShape, "folded_batch", "b");
      }
      for (unsigned d = 0; d + 2 < rank; ++d)
        w.line(llvm::formatv("const int64_t c{0} = b{0};", d));
      w.line(llvm::formatv(folded ? "const int64_t c{0} = row % {1};" : "const int64_t c{0} = row;",
                           rank - 2, w.size(m)));
      w.line(llvm::formatv("const int64_t c{0} = col;", rank - 1));
      w.line(
          llvm::formatv("{0}[i] = {1};", outName, storeValue(out.dtype, emitter.emit(epilogue))));
    } else {
      w.line(llvm::formatv("{0}[i] = {1};", outName, storeAs(out.dtype, "acc")));
    }
    w.setDepth(1);
    w.line("  });");
    w.setDepth(0);
    w.line("}");
    w.setFlops((SizeExpr(2) * batches * m * n * k +
                SizeExpr(int64_t(emitter.operations())) * product(out.shape)) *
               v.active);
    setGemmLaunch(w, v, rows, n, SizeExpr::min(gemms, 65535), /*rowsOnX=*/true);
    std::string how = v.mayTakeSplits() ? ", K split over blockIdx.z" : "";
    kernels.push_back(
        scaledByRuns(w.finish(llvm::formatv("tiled matmul {0} @ {1} -> {2}{3}; {4} ({5}){6}",
                                            describe(lhs.buffer), describe(rhs.buffer),
                                            describe(out), epilogue ? " with a fused epilogue" : "",
                                            v.sizeClass, v.tile.str(), how)
                                  .str()),
                     v.active));
    if (workspace)
      kernels.push_back(
          splitKSumKernel(origin, device, v, *workspace, std::nullopt, 0, epilogue, out));
  }
  return kernels;
}

std::vector<GeneratedKernel>
conv2dKernels(const KernelOrigin &origin, int device, const BufferRef &input,
              const BufferRef &weight, const std::optional<BufferRef> &bias, const Conv2dParams &p,
              const ExprPtr &epilogue, const BufferRef &out, const WorkspaceMaker &makeWorkspace,
              GemmPrecision precision) {
  DType acc = accumulatorType(input.dtype); // as a matmul's: not the epilogue's dtype
  GemmMath math = chooseGemmMath(weight.dtype, input.dtype, input.dtype, precision);
  const bool onHalf = math == GemmMath::HalfMma;
  std::string accType = onHalf ? "float" : cType(acc).str();
  const SizeExpr &batch = input.shape[0], &channels = input.shape[1], &h = input.shape[2],
                 &wd = input.shape[3];
  const SizeExpr &outChannels = weight.shape[0], &kh = weight.shape[2], &kw = weight.shape[3];
  const SizeExpr &oh = out.shape[2], &ow = out.shape[3];
  SizeExpr groupChannels = weight.shape[1];
  SizeExpr groupOut = SizeExpr::floorDiv(outChannels, p.groups);
  SizeExpr reduction = groupChannels * kh * kw;
  SizeExpr columns = batch * oh * ow;

  std::vector<GeneratedKernel> kernels;
  // Rows are a group's output channels (the weight's rows, K contiguous),
  // columns the output pixels (n, oh, ow): neighbouring columns are
  // neighbouring input and output pixels (a gather: not contiguous).
  GemmOperandLayout weightLayout{/*kFast=*/true, /*contiguous=*/true};
  GemmOperandLayout im2colLayout{/*kFast=*/false, /*contiguous=*/false};
  std::vector<GemmVariant> variants =
      chooseGemmVariants(groupOut, columns, reduction, p.groups, math);
  for (const GemmVariant &v : variants) {
    std::optional<BufferRef> workspace;
    if (v.mayTakeSplits())
      workspace = makeWorkspace(acc, {v.workspaceRows(), product(out.shape)});
    KernelWriter w(variantOrigin(origin, variants, v), device, "conv2d");
    std::string x = w.buffer(input), wt = w.buffer(weight);
    std::string biasName = bias ? w.buffer(*bias) : "";
    std::string outName = w.buffer(out, /*written=*/true);
    std::string partial = workspace ? w.buffer(*workspace, /*written=*/true) : "";
    w.line("// implicit GEMM per group: rows are output channels, columns (n, oh, ow),");
    w.line("// the reduction runs over (c, kh, kw) of the group's input channels;");
    w.line(llvm::formatv("// {0} GEMM: {1}", v.sizeClass, v.tile.str()));
    w.line(llvm::formatv("const int64_t C = {0}, H = {1}, W = {2}, O = {3}, KH = {4}, KW = {5};",
                         w.size(channels), w.size(h), w.size(wd), w.size(outChannels), w.size(kh),
                         w.size(kw)));
    w.line(llvm::formatv("const int64_t OH = {0}, OW = {1}, CG = {2}, OG = {3};", w.size(oh),
                         w.size(ow), w.size(groupChannels), w.size(groupOut)));
    w.line(llvm::formatv("const int64_t columns = {0}, K = CG * KH * KW;", w.size(columns)));
    w.line("const int64_t total = columns * O;");
    // blockIdx.z is the group, or the slice of K of a split GEMM (one group).
    w.line(v.mayTakeSplits() ? "const int64_t group = 0;" : "const int64_t group = blockIdx.z;");
    emitKSlice(w, v);
    w.line("// this thread's last loaded and stored pixels (MdlPixel)");
    w.line("MdlPixel loaded, stored;");
    w.line(llvm::formatv(
        "{0}(", gemmTileCall(v.tile, weightLayout, im2colLayout, accType, cType(input.dtype))));
    w.line(llvm::formatv("    OG, columns, kBegin, kEnd, blockIdx.y * (int64_t){0}, blockIdx.x * "
                         "(int64_t){1},",
                         v.tile.blockM, v.tile.blockN));
    std::string weightElement = wt + "[(group * OG + oc) * K + k]";
    std::string inputElement = x + "[((n * C + group * CG + c) * H + ih) * W + iw]";
    if (onHalf)
      w.line(llvm::formatv(
          "    [&](int64_t oc, int64_t k) -> const uint16_t * {{ return &{0}.bits; },",
          weightElement));
    else
      w.line(llvm::formatv("    [&](int64_t oc, int64_t k) {{ return {0}; },",
                           widen(weight.dtype, weightElement)));
    w.line(onHalf ? "    [&](int64_t k, int64_t column) -> const uint16_t * {"
                  : "    [&](int64_t k, int64_t column) {");
    w.setDepth(4);
    w.line("loaded.seek(column, OH, OW);");
    w.line("const int64_t n = loaded.n, oh = loaded.oh, ow = loaded.ow;");
    // (c, r, s) of k: divisions by constants when the kernel's extent is
    // static, in 32 bits when the reduction fits.
    std::optional<int64_t> staticK = reduction.constant();
    if (staticK && *staticK <= INT32_MAX && kh.isConstant() && kw.isConstant())
      w.line("const int kk = (int)k, c = kk / (int)(KH * KW), r = kk / (int)KW % (int)KH, "
             "s = kk % (int)KW;");
    else
      w.line("const int64_t c = k / (KH * KW), r = k / KW % KH, s = k % KW;");
    w.line(llvm::formatv("const int64_t ih = oh * {0} - {1} + r * {2}, iw = ow * {3} - {4} + s * "
                         "{5};",
                         p.strideH, p.padH, p.dilationH, p.strideW, p.padW, p.dilationW));
    if (onHalf) // padding reads as 0
      w.line(llvm::formatv("return ih >= 0 && ih < H && iw >= 0 && iw < W ? &{0}.bits : nullptr;",
                           inputElement));
    else
      w.line(llvm::formatv("return ih >= 0 && ih < H && iw >= 0 && iw < W ? {0} : ({1})0;",
                           loadAs(acc, input.dtype, inputElement), accType));
    w.setDepth(1);
    w.line("  },");
    w.line(llvm::formatv("  [&](int64_t oc, int64_t column, {0} acc) {{", accType));
    w.setDepth(3);
    w.line("stored.seek(column, OH, OW);");
    w.line("const int64_t n = stored.n, oh = stored.oh, ow = stored.ow;");
    w.line("const int64_t channel = group * OG + oc;");
    w.line("const int64_t i = ((n * O + channel) * OH + oh) * OW + ow;");
    storePartialSum(w, v, partial, "i");
    if (bias)
      w.line(llvm::formatv("acc += {0};", loadAs(acc, bias->dtype, biasName + "[channel]")));
    ExprEmitter emitter(w, out.shape, "acc", "i");
    if (epilogue) {
      w.line("const int64_t c0 = n;");
      w.line("const int64_t c1 = channel;");
      w.line("const int64_t c2 = oh;");
      w.line("const int64_t c3 = ow;");
      w.line(
          llvm::formatv("{0}[i] = {1};", outName, storeValue(out.dtype, emitter.emit(epilogue))));
    } else {
      w.line(llvm::formatv("{0}[i] = {1};", outName, storeAs(out.dtype, "acc")));
    }
    w.setDepth(0);
    w.line("  });");
    w.setFlops((SizeExpr(2) * columns * outChannels * reduction +
                SizeExpr(int64_t(emitter.operations()) + (bias ? 1 : 0)) * product(out.shape)) *
               v.active);
    setGemmLaunch(w, v, groupOut, columns, p.groups, /*rowsOnX=*/false);
    std::string how = v.mayTakeSplits() ? ", K split over blockIdx.z" : "";
    kernels.push_back(scaledByRuns(
        w.finish(llvm::formatv("conv2d {0} * {1} -> {2} (stride {3}x{4}, padding "
                               "{5}x{6}, dilation {7}x{8}, groups {9}){10}; {11} "
                               "({12}){13}",
                               describe(input), describe(weight), describe(out), p.strideH,
                               p.strideW, p.padH, p.padW, p.dilationH, p.dilationW, p.groups,
                               epilogue ? " with a fused epilogue" : "", v.sizeClass, v.tile.str(),
                               how)
                     .str()),
        v.active));
    if (workspace)
      kernels.push_back(splitKSumKernel(origin, device, v, *workspace, bias, 1, epilogue, out));
  }
  return kernels;
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, layer norm
//===----------------------------------------------------------------------===//

namespace {

/// Threads per block for a reduction over `extent` elements: one warp for
/// short rows, eight otherwise.
int64_t reductionBlock(const SizeExpr &extent) {
  std::optional<int64_t> c = extent.constant();
  return c && *c <= 64 ? 32 : 256;
}

} // namespace

GeneratedKernel reduceKernel(const KernelOrigin &origin, int device, ReduceKind kind,
                             const BufferRef &input, llvm::ArrayRef<int64_t> dims,
                             const BufferRef &out) {
  KernelWriter w(origin, device, "reduction");
  std::string in = w.buffer(input), outName = w.buffer(out, /*written=*/true);
  DType acc = accumulatorType(input.dtype);
  std::string accType = cType(acc).str();
  llvm::SmallVector<SizeExpr> kept, reduced;
  llvm::SmallVector<unsigned> keptDims, reducedDims;
  for (unsigned d = 0; d < input.shape.size(); ++d) {
    if (llvm::is_contained(dims, int64_t(d))) {
      reduced.push_back(input.shape[d]);
      reducedDims.push_back(d);
    } else {
      kept.push_back(input.shape[d]);
      keptDims.push_back(d);
    }
  }
  SizeExpr rows = product(kept), extent = product(reduced);
  const char *op = kind == ReduceKind::Max ? "MdlMax" : "MdlSum";
  w.line(llvm::formatv("__shared__ {0} scratch[32];", accType));
  w.line(llvm::formatv("const int64_t rows = {0}, extent = {1};", w.size(rows), w.size(extent)));
  w.line("for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {");
  // Name each coordinate after its input dim so one offset formula serves.
  auto coords = [&](llvm::ArrayRef<SizeExpr> shape, llvm::ArrayRef<unsigned> which,
                    llvm::StringRef index) {
    if (shape.empty())
      return;
    w.line(llvm::formatv("  int64_t rest_{0} = {0};", index));
    for (int j = int(shape.size()) - 1; j >= 0; --j) {
      w.line(llvm::formatv("  const int64_t c{0} = rest_{1} % {2};", which[j], index,
                           KernelWriter::wrap(w.size(shape[j]))));
      w.line(llvm::formatv("  rest_{0} /= {1};", index, KernelWriter::wrap(w.size(shape[j]))));
    }
  };
  coords(kept, keptDims, "row");
  w.line(llvm::formatv("  {0} acc = {1};", accType,
                       kind == ReduceKind::Max ? lowest(acc) : std::string("0")));
  w.line("  for (int64_t j = threadIdx.x; j < extent; j += blockDim.x) {");
  coords(reduced, reducedDims, "j");
  llvm::SmallVector<int> identity;
  for (unsigned d = 0; d < input.shape.size(); ++d)
    identity.push_back(int(d));
  w.line(llvm::formatv("    acc = {0}()(acc, {1});", op,
                       loadAs(acc, input.dtype, in + "[" + w.offset(input, identity, [](int d) {
                         return "c" + std::to_string(d);
                       }) + "]")));
  w.line("  }");
  w.line(llvm::formatv("  acc = mdl_block_reduce(acc, scratch, {0}());", op));
  w.line("  if (threadIdx.x == 0)");
  if (kind == ReduceKind::Mean)
    w.line(llvm::formatv("    {0}[row] = {1};", outName,
                         storeAs(out.dtype, "(acc / (" + accType + ")extent)")));
  else
    w.line(llvm::formatv("    {0}[row] = {1};", outName, storeAs(out.dtype, "acc")));
  w.line("}");
  w.setFlops(product(input.shape));
  Launch &l = w.launch();
  l.grid[0] = SizeExpr::min(rows, MaxBlocks);
  l.block[0] = reductionBlock(extent);
  static const char *names[] = {"sum", "mean", "reduce_max"};
  std::vector<std::string> dimText;
  for (int64_t d : dims)
    dimText.push_back(std::to_string(d));
  return w.finish(llvm::formatv("{0} over dims [{1}] of {2}, one block per output element",
                                names[int(kind)], llvm::join(dimText, ", "), describe(input))
                      .str());
}

GeneratedKernel softmaxKernel(const KernelOrigin &origin, int device, bool logSoftmax,
                              const BufferRef &input, int64_t dim, const BufferRef &out) {
  KernelWriter w(origin, device, "softmax");
  std::string in = w.buffer(input), outName = w.buffer(out, /*written=*/true);
  DType t = input.dtype;
  std::string type = computeType(t).str();
  std::string element = widen(t, in + "[base + k * inner]");
  SizeExpr length = input.shape[dim];
  SizeExpr inner = strideOf(input.shape, dim);
  // Rows are every coordinate but `dim`: outer * inner of them.
  SizeExpr rows = product(llvm::ArrayRef(input.shape).take_front(dim)) * inner;
  w.line(llvm::formatv("__shared__ {0} scratch[32];", type));
  w.line(llvm::formatv("const int64_t rows = {0}, length = {1}, inner = {2};", w.size(rows),
                       w.size(length), w.size(inner)));
  w.line("for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {");
  w.line("  const int64_t base = row / inner * length * inner + row % inner;");
  w.line(llvm::formatv("  {0} largest = {1};", type, lowest(t)));
  w.line("  for (int64_t k = threadIdx.x; k < length; k += blockDim.x)");
  w.line(llvm::formatv("    largest = MdlMax()(largest, {0});", element));
  w.line("  largest = mdl_block_reduce(largest, scratch, MdlMax());");
  w.line(llvm::formatv("  {0} total = 0;", type));
  w.line("  for (int64_t k = threadIdx.x; k < length; k += blockDim.x)");
  w.line(llvm::formatv("    total += {0}({1} - largest);", mathFn("exp", t), element));
  w.line("  total = mdl_block_reduce(total, scratch, MdlSum());");
  if (logSoftmax)
    w.line(llvm::formatv("  const {0} shift = largest + {1}(total);", type, mathFn("log", t)));
  w.line("  for (int64_t k = threadIdx.x; k < length; k += blockDim.x)");
  if (logSoftmax)
    w.line(llvm::formatv("    {0}[base + k * inner] = {1};", outName,
                         storeValue(out.dtype, element + " - shift")));
  else
    w.line(llvm::formatv(
        "    {0}[base + k * inner] = {1};", outName,
        storeValue(out.dtype, mathFn("exp", t) + "(" + element + " - largest) / total")));
  w.line("}");
  w.setFlops(SizeExpr(5) * product(input.shape));
  Launch &l = w.launch();
  l.grid[0] = SizeExpr::min(rows, MaxBlocks);
  l.block[0] = reductionBlock(length);
  return w.finish(llvm::formatv("{0} along dim {1} of {2}, one block per row",
                                logSoftmax ? "log_softmax" : "softmax", dim, describe(input))
                      .str());
}

GeneratedKernel layerNormKernel(const KernelOrigin &origin, int device, const BufferRef &input,
                                const std::optional<BufferRef> &weight,
                                const std::optional<BufferRef> &bias, int64_t normalizedRank,
                                double epsilon, const BufferRef &out) {
  KernelWriter w(origin, device, "layer_norm");
  std::string in = w.buffer(input);
  std::string weightName = weight ? w.buffer(*weight) : "";
  std::string biasName = bias ? w.buffer(*bias) : "";
  std::string outName = w.buffer(out, /*written=*/true);
  DType t = input.dtype;
  std::string type = computeType(t).str();
  std::string element = widen(t, "x[k]");
  size_t lead = input.shape.size() - normalizedRank;
  SizeExpr rows = product(llvm::ArrayRef(input.shape).take_front(lead));
  SizeExpr length = product(llvm::ArrayRef(input.shape).drop_front(lead));
  w.line(llvm::formatv("__shared__ {0} scratch[32];", type));
  w.line(llvm::formatv("const int64_t rows = {0}, length = {1};", w.size(rows), w.size(length)));
  w.line("for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {");
  w.line(llvm::formatv("  const {0} *x = {1} + row * length;", cType(t), in));
  w.line(llvm::formatv("  {0} total = 0;", type));
  w.line("  for (int64_t k = threadIdx.x; k < length; k += blockDim.x)");
  w.line("    total += " + element + ";");
  w.line(llvm::formatv("  const {0} mean = mdl_block_reduce(total, scratch, MdlSum()) / "
                       "({0})length;",
                       type));
  w.line(llvm::formatv("  {0} squares = 0;", type));
  w.line("  for (int64_t k = threadIdx.x; k < length; k += blockDim.x)");
  w.line(llvm::formatv("    squares += ({0} - mean) * ({0} - mean);", element));
  w.line(llvm::formatv("  const {0} variance = mdl_block_reduce(squares, scratch, MdlSum()) / "
                       "({0})length;",
                       type));
  w.line(llvm::formatv("  const {0} scale = {1} / {2}(variance + {3});", type, literal(1, t),
                       mathFn("sqrt", t), literal(epsilon, arithmeticType(t))));
  w.line("  for (int64_t k = threadIdx.x; k < length; k += blockDim.x)");
  std::string value = "(" + element + " - mean) * scale";
  if (weight)
    value += " * " + widen(weight->dtype, weightName + "[k]");
  if (bias)
    value += " + " + widen(bias->dtype, biasName + "[k]");
  w.line(llvm::formatv("    {0}[row * length + k] = {1};", outName, storeValue(out.dtype, value)));
  w.line("}");
  w.setFlops(SizeExpr(8) * product(input.shape));
  Launch &l = w.launch();
  l.grid[0] = SizeExpr::min(rows, MaxBlocks);
  l.block[0] = reductionBlock(length);
  return w.finish(llvm::formatv("layer_norm over the last {0} dim(s) of {1}, one block per row",
                                normalizedRank, describe(input))
                      .str());
}

//===----------------------------------------------------------------------===//
// Pooling, gathers, concat
//===----------------------------------------------------------------------===//

namespace {

/// Opens a one-thread-per-output-element loop with coordinates `c0..`.
void openElementLoop(KernelWriter &w, const BufferRef &out) {
  w.line("const int64_t total = " + w.size(product(out.shape)) + ";");
  w.line("for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;");
  w.line("     i += (int64_t)gridDim.x * blockDim.x) {");
  w.setDepth(1);
  w.coordinates(out.shape, "i", "c");
  w.setDepth(0);
}

} // namespace

GeneratedKernel pool2dKernel(const KernelOrigin &origin, int device, PoolKind kind,
                             const BufferRef &input, llvm::ArrayRef<int64_t> kernel,
                             llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                             const BufferRef &out) {
  KernelWriter w(origin, device, "pool");
  std::string in = w.buffer(input), outName = w.buffer(out, /*written=*/true);
  DType t = input.dtype, acc = accumulatorType(t);
  std::string accType = cType(acc).str();
  w.line(llvm::formatv("const int64_t H = {0}, W = {1};", w.size(input.shape[2]),
                       w.size(input.shape[3])));
  if (kind == PoolKind::AdaptiveAvg)
    w.line(llvm::formatv("const int64_t OH = {0}, OW = {1};", w.size(out.shape[2]),
                         w.size(out.shape[3])));
  openElementLoop(w, out);
  w.line(llvm::formatv("  const {0} *plane = {1} + (c0 * {2} + c1) * H * W;", cType(t), in,
                       KernelWriter::wrap(w.size(input.shape[1]))));
  std::string element = widen(t, "plane[h * W + x]");
  SizeExpr windows = product(out.shape);
  std::string comment;
  if (kind == PoolKind::AdaptiveAvg) {
    w.line("  const int64_t h0 = c2 * H / OH, h1 = ((c2 + 1) * H + OH - 1) / OH;");
    w.line("  const int64_t w0 = c3 * W / OW, w1 = ((c3 + 1) * W + OW - 1) / OW;");
    w.line(llvm::formatv("  {0} total = 0;", accType));
    w.line("  for (int64_t h = h0; h < h1; ++h)");
    w.line("    for (int64_t x = w0; x < w1; ++x)");
    w.line("      total += " + element + ";");
    w.line(llvm::formatv("  {0}[i] = {1};", outName,
                         storeAs(out.dtype, "(total / (" + accType + ")((h1 - h0) * (w1 - w0)))")));
    comment = "adaptive_avg_pool2d";
  } else {
    bool isMax = kind == PoolKind::Max;
    w.line(llvm::formatv("  {0} acc = {1};", accType, isMax ? lowest(acc) : std::string("0")));
    w.line(llvm::formatv("  for (int64_t r = 0; r < {0}; ++r) {{", kernel[0]));
    w.line(llvm::formatv("    const int64_t h = c2 * {0} - {1} + r;", stride[0], padding[0]));
    w.line(llvm::formatv("    for (int64_t s = 0; s < {0}; ++s) {{", kernel[1]));
    w.line(llvm::formatv("      const int64_t x = c3 * {0} - {1} + s;", stride[1], padding[1]));
    w.line("      if (h >= 0 && h < H && x >= 0 && x < W)");
    w.line(isMax ? "        acc = MdlMax()(acc, " + element + ");"
                 : "        acc += " + element + ";");
    w.line("    }");
    w.line("  }");
    if (isMax)
      w.line(llvm::formatv("  {0}[i] = {1};", outName, storeValue(out.dtype, "acc")));
    else // padding counts in the divisor (count_include_pad)
      w.line(llvm::formatv(
          "  {0}[i] = {1};", outName,
          storeAs(out.dtype, llvm::formatv("(acc / ({0}){1})", accType, kernel[0] * kernel[1]))));
    comment = llvm::formatv("{0} {1}x{2}, stride {3}x{4}, padding {5}x{6}",
                            isMax ? "max_pool2d" : "avg_pool2d", kernel[0], kernel[1], stride[0],
                            stride[1], padding[0], padding[1]);
  }
  w.line("}");
  std::optional<int64_t> window =
      kind == PoolKind::AdaptiveAvg ? std::nullopt : std::optional(kernel[0] * kernel[1]);
  w.setFlops(window ? SizeExpr(*window) * windows : product(input.shape));
  w.launch1d(windows);
  return w.finish(comment + " of " + describe(input) + ", one thread per output element");
}

GeneratedKernel gatherKernel(const KernelOrigin &origin, int device, GatherKind kind,
                             const BufferRef &input, const BufferRef &index, int64_t dim,
                             const BufferRef &out) {
  KernelWriter w(origin, device, "gather");
  std::string in = w.buffer(input), idx = w.buffer(index);
  std::string outName = w.buffer(out, /*written=*/true);
  openElementLoop(w, out);
  unsigned rank = out.shape.size();
  llvm::SmallVector<int> identity;
  for (unsigned d = 0; d < input.shape.size(); ++d)
    identity.push_back(int(d));
  std::string comment;
  if (kind == GatherKind::Embedding) {
    // out[..., d] = weight[indices[...], d]
    llvm::SmallVector<int> indexMap;
    for (unsigned d = 0; d + 1 < rank; ++d)
      indexMap.push_back(int(d));
    w.line(llvm::formatv("  const int64_t r = mdl_clamp_index((int64_t){0}[{1}], {2});", idx,
                         w.offset(index, indexMap, [](int d) { return "c" + std::to_string(d); }),
                         w.size(input.shape[0])));
    w.line(llvm::formatv("  {0}[i] = {1}[r * {2} + c{3}];", outName, in,
                         KernelWriter::wrap(w.size(input.shape[1])), rank - 1));
    comment = "embedding";
  } else {
    std::string at = kind == GatherKind::Gather ? "i" : "c" + std::to_string(dim);
    w.line(llvm::formatv("  const int64_t picked = mdl_clamp_index((int64_t){0}[{1}], {2});", idx,
                         at, w.size(input.shape[dim])));
    w.line(llvm::formatv("  {0}[i] = {1}[{2}];", outName, in, w.offset(input, identity, [&](int d) {
      return d == dim ? std::string("picked") : "c" + std::to_string(d);
    })));
    comment = kind == GatherKind::Gather ? "gather" : "index_select";
    comment += " along dim " + std::to_string(dim);
  }
  w.line("}");
  w.setFlops(SizeExpr(0));
  w.launch1d(product(out.shape));
  return w.finish(comment + " of " + describe(input) + " (indices clamped into range)");
}

GeneratedKernel concatPieceKernel(const KernelOrigin &origin, int device, const BufferRef &input,
                                  int64_t dim, const SizeExpr &offset, const BufferRef &out) {
  KernelWriter w(origin, device, "copy");
  std::string in = w.buffer(input), outName = w.buffer(out, /*written=*/true);
  w.line("const int64_t total = " + w.size(product(input.shape)) + ";");
  w.line("for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;");
  w.line("     i += (int64_t)gridDim.x * blockDim.x) {");
  w.setDepth(1);
  w.coordinates(input.shape, "i", "c");
  w.setDepth(0);
  llvm::SmallVector<int> identity;
  for (unsigned d = 0; d < out.shape.size(); ++d)
    identity.push_back(int(d));
  std::string shifted =
      "(c" + std::to_string(dim) + " + " + KernelWriter::wrap(w.size(offset)) + ")";
  w.line(llvm::formatv(
      "  {0}[{1}] = {2}[i];", outName,
      w.offset(out, identity, [&](int d) { return d == dim ? shifted : "c" + std::to_string(d); }),
      in));
  w.line("}");
  w.setFlops(SizeExpr(0));
  w.launch1d(product(input.shape));
  return w.finish(llvm::formatv("concat: copies {0} into {1} at offset {2} of dim {3}",
                                describe(input), describe(out), offset.str(), dim)
                      .str());
}

GeneratedKernel sliceKernel(const KernelOrigin &origin, int device, const BufferRef &input,
                            llvm::ArrayRef<SizeExpr> starts, llvm::ArrayRef<int64_t> steps,
                            llvm::ArrayRef<int> outDimOf, const BufferRef &out) {
  KernelWriter w(origin, device, "copy");
  std::string in = w.buffer(input), outName = w.buffer(out, /*written=*/true);
  w.line("const int64_t total = " + w.size(product(out.shape)) + ";");
  w.line("for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;");
  w.line("     i += (int64_t)gridDim.x * blockDim.x) {");
  w.setDepth(1);
  w.coordinates(out.shape, "i", "c");
  w.setDepth(0);
  llvm::SmallVector<int> identity;
  for (unsigned d = 0; d < input.shape.size(); ++d)
    identity.push_back(int(d));
  w.line(llvm::formatv("  {0}[i] = {1}[{2}];", outName, in, w.offset(input, identity, [&](int d) {
    std::string start = KernelWriter::wrap(w.size(starts[d]));
    if (outDimOf[d] < 0)
      return start;
    std::string c = "c" + std::to_string(outDimOf[d]);
    if (steps[d] != 1)
      c += " * " + std::to_string(steps[d]);
    return start == "0" ? c : "(" + start + " + " + c + ")";
  })));
  w.line("}");
  w.setFlops(SizeExpr(0));
  w.launch1d(product(out.shape));
  return w.finish(
      llvm::formatv("slice: copies part of {0} into {1}", describe(input), describe(out)).str());
}

GeneratedKernel selectScatterKernel(const KernelOrigin &origin, int device,
                                    const std::optional<BufferRef> &input, const BufferRef &source,
                                    llvm::ArrayRef<int64_t> dims,
                                    llvm::ArrayRef<SizeExpr> positions, const BufferRef &out) {
  KernelWriter w(origin, device, "copy");
  std::string src = w.buffer(source);
  std::string in = input ? w.buffer(*input) : "";
  std::string outName = w.buffer(out, /*written=*/true);
  // Source dim j is the j-th dim of `out` that is not selected.
  llvm::SmallVector<int> outDimOfSource;
  for (int d = 0; d < int(out.shape.size()); ++d)
    if (!llvm::is_contained(dims, int64_t(d)))
      outDimOfSource.push_back(d);
  auto position = [&](int d) {
    return KernelWriter::wrap(w.size(positions[llvm::find(dims, int64_t(d)) - dims.begin()]));
  };
  auto outCoord = [](int d) { return "c" + std::to_string(d); };
  // The copy walks the whole result, the in-place write only the source.
  const BufferRef &walked = input ? out : source;
  openElementLoop(w, walked);
  if (input) {
    std::string selected;
    for (int64_t d : dims)
      selected += (selected.empty() ? "" : " && ") + outCoord(int(d)) + " == " + position(int(d));
    w.line(llvm::formatv("  {0}[i] = ({1}) ? {2}[{3}] : {4}[i];", outName, selected, src,
                         w.offset(source, outDimOfSource, outCoord), in));
  } else {
    // Walking the source: its coordinate j is out dim outDimOfSource[j].
    llvm::SmallVector<int> identity;
    for (unsigned d = 0; d < out.shape.size(); ++d)
      identity.push_back(int(d));
    w.line(llvm::formatv("  {0}[{1}] = {2}[i];", outName,
                         w.offset(out, identity,
                                  [&](int d) {
                                    if (llvm::is_contained(dims, int64_t(d)))
                                      return position(d);
                                    return outCoord(int(llvm::find(outDimOfSource, d) -
                                                        outDimOfSource.begin()));
                                  }),
                         src));
    w.setBytesWritten(SizeExpr(int64_t(runtime::dtypeSize(out.dtype))) * product(source.shape));
  }
  w.line("}");
  w.setFlops(SizeExpr(0));
  w.launch1d(product(walked.shape));
  return w.finish(input ? llvm::formatv("select_scatter: {0} with part replaced by {1}, into {2}",
                                        describe(*input), describe(source), describe(out))
                              .str()
                        : llvm::formatv("select_scatter: writes {0} into part of {1} in place",
                                        describe(source), describe(out))
                              .str());
}

GeneratedKernel lossKernel(const KernelOrigin &origin, int device, bool fromLogits,
                           const BufferRef &input, const BufferRef &target,
                           const std::optional<BufferRef> &weight, llvm::StringRef reduction,
                           const BufferRef &out) {
  KernelWriter w(origin, device, "loss");
  std::string in = w.buffer(input), targets = w.buffer(target);
  std::string weightName = weight ? w.buffer(*weight) : "";
  std::string outName = w.buffer(out, /*written=*/true);
  DType t = input.dtype;
  std::string type = computeType(t).str();
  bool none = reduction == "none";
  w.line("// one warp per row (sample), the block's warps stride over the rows");
  w.line(llvm::formatv("const int64_t N = {0}, C = {1};", w.size(input.shape[0]),
                       w.size(input.shape[1])));
  w.line("const int lane = threadIdx.x % 32, warps = blockDim.x / 32;");
  if (!none) {
    w.line(llvm::formatv("__shared__ {0} scratch[32];", type));
    w.line(llvm::formatv("{0} weighted = 0, weights = 0;", type));
  }
  w.line("for (int64_t n = threadIdx.x / 32; n < N; n += warps) {");
  w.line(llvm::formatv("  const {0} *x = {1} + n * C;", cType(t), in));
  w.line(llvm::formatv("  const int64_t target = mdl_clamp_index((int64_t){0}[n], C);", targets));
  w.line(llvm::formatv("  const {0} w = {1};", type,
                       weight ? widen(weight->dtype, weightName + "[target]") : literal(1, t)));
  if (fromLogits) {
    w.line(llvm::formatv("  {0} largest = {1};", type, lowest(t)));
    w.line("  for (int64_t k = lane; k < C; k += 32)");
    w.line("    largest = MdlMax()(largest, " + widen(t, "x[k]") + ");");
    w.line("  largest = mdl_warp_reduce(largest, MdlMax());");
    w.line(llvm::formatv("  {0} total = 0;", type));
    w.line("  for (int64_t k = lane; k < C; k += 32)");
    w.line(llvm::formatv("    total += {0}({1} - largest);", mathFn("exp", t), widen(t, "x[k]")));
    w.line("  total = mdl_warp_reduce(total, MdlSum());");
    w.line(llvm::formatv("  const {0} loss = w * (largest + {1}(total) - {2});", type,
                         mathFn("log", t), widen(t, "x[target]")));
  } else {
    w.line(llvm::formatv("  const {0} loss = -w * {1};", type, widen(t, "x[target]")));
  }
  if (none) {
    w.line("  if (lane == 0)");
    w.line(llvm::formatv("    {0}[n] = {1};", outName, storeValue(out.dtype, "loss")));
    w.line("}");
  } else {
    w.line("  if (lane == 0) {");
    w.line("    weighted += loss;");
    w.line("    weights += w;");
    w.line("  }");
    w.line("}");
    w.line("weighted = mdl_block_reduce(weighted, scratch, MdlSum());");
    if (reduction == "mean") {
      w.line("weights = mdl_block_reduce(weights, scratch, MdlSum());");
      w.line("if (threadIdx.x == 0)");
      w.line(
          llvm::formatv("  {0}[0] = {1};", outName, storeValue(out.dtype, "weighted / weights")));
    } else {
      w.line("if (threadIdx.x == 0)");
      w.line(llvm::formatv("  {0}[0] = {1};", outName, storeValue(out.dtype, "weighted")));
    }
  }
  w.setFlops(SizeExpr(fromLogits ? 4 : 1) * product(input.shape));
  Launch &l = w.launch();
  l.grid[0] = 1; // one block: the reduction needs no second pass
  l.block[0] = 256;
  return w.finish(llvm::formatv("{0} of {1}, reduction {2}",
                                fromLogits ? "cross_entropy" : "nll_loss", describe(input),
                                reduction)
                      .str());
}

GeneratedKernel randnKernel(const KernelOrigin &origin, int device, int64_t seed,
                            const BufferRef &out) {
  KernelWriter w(origin, device, "fill");
  std::string outName = w.buffer(out, /*written=*/true);
  uint32_t mixed = mdl_randn_seed(seed);
  w.line("const int64_t total = " + w.size(product(out.shape)) + ";");
  w.line("for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;");
  w.line("     i += (int64_t)gridDim.x * blockDim.x)");
  w.line(llvm::formatv("  {0}[i] = {1};", outName,
                       storeAs(out.dtype, llvm::formatv("mdl_randn({0}u, i)", mixed).str())));
  w.setFlops(SizeExpr(20) * product(out.shape));
  w.launch1d(product(out.shape));
  return w.finish(llvm::formatv("randn(seed {0}) into {1}", seed, describe(out)).str());
}

} // namespace modelc::cudagen
