//===- AST.cpp - Names of AST enums and the text dump of a module ---------===//
//
// The dump is a stable, indented rendering of the whole tree used by tests
// and `modelc emit --stage=ast`: one node per line, children indented by two
// spaces, each node followed by its range as `@line:col-line:col`.
//
//===----------------------------------------------------------------------===//
#include "ast/AST.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace modelc;
using namespace modelc::ast;

llvm::StringRef ast::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "bool";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType> ast::dtypeFromName(llvm::StringRef name) {
  for (DType d :
       {DType::F16, DType::BF16, DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool})
    if (dtypeName(d) == name)
      return d;
  return std::nullopt;
}

bool ast::isFloating(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 || dtype == DType::F64;
}

bool ast::isInteger(DType dtype) { return dtype == DType::I32 || dtype == DType::I64; }

llvm::StringRef ast::scalarKindName(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::Int:
    return "int";
  case ScalarKind::Float:
    return "float";
  case ScalarKind::Bool:
    return "bool";
  case ScalarKind::Option:
    return "str";
  case ScalarKind::DType:
    return "dtype";
  }
  llvm_unreachable("unknown scalar kind");
}

std::string ast::valueParamTypeText(const ValueParam &param) {
  std::string text;
  if (param.type == ScalarKind::Option) {
    for (const Ident &option : param.options)
      text += (text.empty() ? "\"" : " | \"") + option.name + "\"";
    return text;
  }
  if (param.arity == 0)
    return scalarKindName(param.type).str();
  for (unsigned i = 0; i < param.arity; ++i)
    text += (i ? ", " : "(") + scalarKindName(param.type).str();
  return text + ")";
}

bool ast::isArithmetic(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod:
  case BinaryOp::Pow:
    return true;
  default:
    return false;
  }
}

llvm::StringRef ast::binaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::MatMul:
    return "@";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "and";
  case BinaryOp::Or:
    return "or";
  }
  llvm_unreachable("unknown binary operator");
}

namespace {

/// Writes the tree; every node's line is `indent + text + range`.
class Dumper {
public:
  Dumper(const Module &module, llvm::raw_ostream &os) : module_(module), os_(os) {}

  void dumpModule() {
    os_ << "Module \"" << module_.fileName << "\"\n";
    indent_ += 2;
    for (const ImportDecl &import : module_.imports) {
      line() << "Import ";
      llvm::interleave(
          import.path, os_, [&](const Ident &part) { os_ << part.name; }, ".");
      end(import.range);
    }
    for (const ModelDecl &model : module_.models)
      dumpModel(model);
    indent_ -= 2;
  }

private:
  llvm::raw_ostream &line() { return os_.indent(indent_); }

  void printLoc(llvm::SMLoc loc) {
    auto [lineNo, col] = module_.sourceMgr->getLineAndColumn(loc, module_.bufferId);
    os_ << lineNo << ':' << col;
  }

  /// Finishes a node's line with its range.
  void end(Range range) {
    if (module_.sourceMgr && range.isValid()) {
      os_ << " @";
      printLoc(range.begin);
      os_ << '-';
      printLoc(range.end);
    }
    os_ << '\n';
  }

  void dumpDoc(const std::string &doc) {
    if (doc.empty())
      return;
    line() << "Doc \"";
    os_.write_escaped(doc);
    os_ << "\"\n";
  }

  struct Nested {
    Dumper &dumper;
    explicit Nested(Dumper &d) : dumper(d) { dumper.indent_ += 2; }
    ~Nested() { dumper.indent_ -= 2; }
  };

  void dumpModel(const ModelDecl &model) {
    line() << "Model " << model.name.name;
    end(model.range);
    Nested nested(*this);
    dumpDoc(model.doc);
    for (const DeviceParam &param : model.deviceParams) {
      line() << "DeviceParam " << param.name.name;
      end(param.range);
    }
    for (const ValueParam &param : model.valueParams) {
      line() << "ValueParam " << param.name.name << ": " << valueParamTypeText(param);
      end(param.range);
      if (param.defaultValue) {
        Nested inner(*this);
        dumpExpr(*param.defaultValue);
      }
    }
    for (const StateDecl &state : model.state) {
      line() << (state.kind == StateDecl::Kind::Param ? "Param " : "Buffer ") << state.name.name;
      end(state.range);
      Nested inner(*this);
      dumpDoc(state.doc);
      dumpGuards(state.guards);
      if (state.type)
        dumpType(*state.type);
      if (state.init)
        dumpExpr(*state.init);
    }
    for (const SubmodelDecl &submodel : model.submodels) {
      line() << "Submodel " << submodel.name.name;
      if (submodel.stateNames)
        os_ << " as \"" << submodel.stateNames->text << "\"";
      end(submodel.range);
      Nested inner(*this);
      dumpDoc(submodel.doc);
      dumpGuards(submodel.guards);
      if (submodel.init)
        dumpExpr(*submodel.init);
    }
    for (const FnDecl &fn : model.fns)
      dumpFn(fn);
  }

  void dumpGuards(const std::vector<MemberGuard> &guards) {
    for (const MemberGuard &guard : guards) {
      line() << (guard.holds ? "If" : "IfNot");
      end(guard.condition->range);
      Nested inner(*this);
      dumpExpr(*guard.condition);
    }
  }

  void dumpFn(const FnDecl &fn) {
    line() << "Fn " << fn.name.name;
    end(fn.range);
    Nested nested(*this);
    dumpDoc(fn.doc);
    for (const Ident &dtype : fn.dtypeParams) {
      line() << "DTypeParam " << dtype.name;
      end(dtype.range);
    }
    for (const FnParam &param : fn.params) {
      line() << "FnParam " << param.name.name;
      end(param.range);
      Nested inner(*this);
      if (param.type)
        dumpType(*param.type);
    }
    if (fn.result) {
      line() << "Result";
      end(fn.result->range);
      Nested inner(*this);
      dumpType(*fn.result);
    }
    line() << "Body";
    end(fn.bodyRange);
    Nested inner(*this);
    for (const StmtPtr &stmt : fn.body)
      dumpStmt(*stmt);
  }

  void printDevice(const DeviceExpr &device) {
    switch (device.kind) {
    case DeviceExpr::Kind::Cpu:
      os_ << "cpu";
      break;
    case DeviceExpr::Kind::Cuda:
      os_ << "cuda:" << device.cudaIndex;
      break;
    case DeviceExpr::Kind::Var:
      os_ << device.varName;
      break;
    }
  }

  void printDim(const DimExpr &dim) {
    switch (dim.kind) {
    case DimExpr::Kind::Int:
      os_ << dim.value;
      break;
    case DimExpr::Kind::Name:
      os_ << dim.name;
      break;
    case DimExpr::Kind::Element:
      os_ << dim.name << '[' << dim.value << ']';
      break;
    case DimExpr::Kind::Ellipsis:
      os_ << "...";
      break;
    case DimExpr::Kind::Binary:
      os_ << '(';
      if (dim.lhs)
        printDim(*dim.lhs);
      os_ << ' ' << dim.op << ' ';
      if (dim.rhs)
        printDim(*dim.rhs);
      os_ << ')';
      break;
    }
  }

  void dumpType(const TypeExpr &type) {
    if (type.kind == TypeExpr::Kind::Tuple) {
      line() << "TupleType";
      end(type.range);
      Nested nested(*this);
      for (const std::unique_ptr<TypeExpr> &element : type.elements)
        dumpType(*element);
      return;
    }
    line() << "Type ";
    if (type.kind == TypeExpr::Kind::Scalar) {
      os_ << scalarKindName(type.scalar);
    } else {
      os_ << (type.dtypeParam ? llvm::StringRef(type.dtypeParam->name) : dtypeName(type.dtype))
          << '[';
      llvm::interleaveComma(type.dims, os_,
                            [&](const std::unique_ptr<DimExpr> &dim) { printDim(*dim); });
      os_ << ']';
      if (type.device) {
        os_ << " @ ";
        printDevice(*type.device);
      }
    }
    end(type.range);
  }

  void dumpStmt(const Stmt &stmt) {
    if (const auto *let = llvm::dyn_cast<LetStmt>(&stmt)) {
      line() << "Let " << let->name.name;
      end(let->range);
      Nested nested(*this);
      if (let->type)
        dumpType(*let->type);
      if (let->value)
        dumpExpr(*let->value);
    } else if (const auto *let = llvm::dyn_cast<LetTupleStmt>(&stmt)) {
      line() << "LetTuple";
      for (const Ident &name : let->names)
        os_ << ' ' << name.name;
      end(let->range);
      Nested nested(*this);
      if (let->value)
        dumpExpr(*let->value);
    } else if (const auto *ret = llvm::dyn_cast<ReturnStmt>(&stmt)) {
      line() << "Return";
      end(ret->range);
      Nested nested(*this);
      if (ret->value)
        dumpExpr(*ret->value);
    } else if (const auto *loop = llvm::dyn_cast<ForStmt>(&stmt)) {
      line() << "For " << loop->var.name;
      end(loop->range);
      Nested nested(*this);
      if (loop->iterable)
        dumpExpr(*loop->iterable);
      if (loop->rangeEnd) {
        line() << "RangeEnd\n";
        Nested inner(*this);
        dumpExpr(*loop->rangeEnd);
      }
      line() << "Body\n";
      Nested inner(*this);
      for (const StmtPtr &bodyStmt : loop->body)
        dumpStmt(*bodyStmt);
    } else if (const auto *assign = llvm::dyn_cast<AssignStmt>(&stmt)) {
      line() << "Assign " << assign->target.name;
      end(assign->range);
      Nested nested(*this);
      if (assign->indexedTarget)
        dumpExpr(*assign->indexedTarget);
      if (assign->value)
        dumpExpr(*assign->value);
    } else if (const auto *branch = llvm::dyn_cast<IfStmt>(&stmt)) {
      line() << "If";
      end(branch->range);
      Nested nested(*this);
      if (branch->condition)
        dumpExpr(*branch->condition);
      line() << "Then\n";
      {
        Nested inner(*this);
        for (const StmtPtr &bodyStmt : branch->thenBody)
          dumpStmt(*bodyStmt);
      }
      if (branch->hasElse) {
        line() << "Else\n";
        Nested inner(*this);
        for (const StmtPtr &bodyStmt : branch->elseBody)
          dumpStmt(*bodyStmt);
      }
    } else if (const auto *exprStmt = llvm::dyn_cast<ExprStmt>(&stmt)) {
      line() << "ExprStmt";
      end(exprStmt->range);
      Nested nested(*this);
      if (exprStmt->expr)
        dumpExpr(*exprStmt->expr);
    }
  }

  void dumpArgs(const std::vector<Arg> &args) {
    for (const Arg &arg : args) {
      line() << "Arg";
      if (arg.name)
        os_ << ' ' << arg.name->name;
      end(arg.range);
      Nested nested(*this);
      if (arg.value)
        dumpExpr(*arg.value);
    }
  }

  void dumpOptional(llvm::StringRef label, const ExprPtr &expr) {
    if (!expr)
      return;
    line() << label;
    os_ << '\n';
    Nested nested(*this);
    dumpExpr(*expr);
  }

  void dumpExpr(const Expr &expr) {
    switch (expr.kind()) {
    case Expr::Kind::IntLit: {
      const auto &lit = llvm::cast<IntLitExpr>(expr);
      line() << "IntLit " << lit.value << (lit.overflowed ? " overflowed" : "");
      end(expr.range);
      return;
    }
    case Expr::Kind::FloatLit:
      line() << "FloatLit " << llvm::cast<FloatLitExpr>(expr).value;
      end(expr.range);
      return;
    case Expr::Kind::BoolLit:
      line() << "BoolLit " << (llvm::cast<BoolLitExpr>(expr).value ? "true" : "false");
      end(expr.range);
      return;
    case Expr::Kind::StringLit:
      line() << "StringLit \"";
      os_.write_escaped(llvm::cast<StringLitExpr>(expr).value);
      os_ << '"';
      end(expr.range);
      return;
    case Expr::Kind::DeviceLit:
      line() << "DeviceLit ";
      printDevice(llvm::cast<DeviceLitExpr>(expr).device);
      end(expr.range);
      return;
    case Expr::Kind::DTypeLit:
      line() << "DTypeLit " << dtypeName(llvm::cast<DTypeLitExpr>(expr).dtype);
      end(expr.range);
      return;
    case Expr::Kind::Name:
      line() << "Name " << llvm::cast<NameExpr>(expr).name;
      end(expr.range);
      return;
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      const auto *list = llvm::dyn_cast<ListExpr>(&expr);
      line() << (list ? "List" : "Tuple");
      end(expr.range);
      Nested nested(*this);
      for (const ExprPtr &element : list ? list->elements : llvm::cast<TupleExpr>(expr).elements)
        dumpExpr(*element);
      if (list && list->repeat) {
        line() << "Repeat " << list->repeat->var.name;
        end(list->range);
        Nested inner(*this);
        dumpExpr(*list->repeat->begin);
        dumpExpr(*list->repeat->end);
      }
      return;
    }
    case Expr::Kind::Unary: {
      const auto &unary = llvm::cast<UnaryExpr>(expr);
      line() << "Unary " << (unary.op == UnaryOp::Neg ? "-" : "not");
      end(expr.range);
      Nested nested(*this);
      dumpExpr(*unary.operand);
      return;
    }
    case Expr::Kind::Binary: {
      const auto &binary = llvm::cast<BinaryExpr>(expr);
      line() << "Binary " << binaryOpSpelling(binary.op);
      end(expr.range);
      Nested nested(*this);
      dumpExpr(*binary.lhs);
      dumpExpr(*binary.rhs);
      return;
    }
    case Expr::Kind::Call: {
      const auto &call = llvm::cast<CallExpr>(expr);
      line() << "Call";
      end(expr.range);
      Nested nested(*this);
      dumpExpr(*call.callee);
      dumpArgs(call.args);
      return;
    }
    case Expr::Kind::Member: {
      const auto &member = llvm::cast<MemberExpr>(expr);
      line() << "Member " << member.member.name;
      end(expr.range);
      Nested nested(*this);
      dumpExpr(*member.base);
      return;
    }
    case Expr::Kind::Index: {
      const auto &index = llvm::cast<IndexExpr>(expr);
      line() << "Index";
      end(expr.range);
      Nested nested(*this);
      dumpExpr(*index.base);
      for (const Slice &slice : index.subscripts) {
        line() << (slice.isSlice ? "Slice" : "Subscript");
        end(slice.range);
        Nested inner(*this);
        if (!slice.isSlice) {
          dumpExpr(*slice.index);
          continue;
        }
        dumpOptional("Begin", slice.begin);
        dumpOptional("End", slice.end);
        dumpOptional("Step", slice.step);
      }
      return;
    }
    case Expr::Kind::Instantiate: {
      const auto &inst = llvm::cast<InstantiateExpr>(expr);
      line() << "Instantiate ";
      if (inst.module)
        os_ << inst.module->name << '.';
      os_ << inst.model.name << '<';
      llvm::interleaveComma(inst.devices, os_,
                            [&](const DeviceExpr &device) { printDevice(device); });
      os_ << '>';
      end(expr.range);
      Nested nested(*this);
      dumpArgs(inst.args);
      return;
    }
    }
  }

  const Module &module_;
  llvm::raw_ostream &os_;
  unsigned indent_ = 0;
};

} // namespace

void ast::dump(const Module &module, llvm::raw_ostream &os) { Dumper(module, os).dumpModule(); }

void modelc::ast::forEachSubexpr(const Expr &expr, llvm::function_ref<void(const Expr &)> visit) {
  visit(expr);
  auto sub = [&](const ExprPtr &e) {
    if (e)
      forEachSubexpr(*e, visit);
  };
  switch (expr.kind()) {
  case Expr::Kind::List: {
    const auto &list = llvm::cast<ListExpr>(expr);
    for (const ExprPtr &e : list.elements)
      sub(e);
    if (list.repeat) {
      sub(list.repeat->begin);
      sub(list.repeat->end);
    }
    return;
  }
  case Expr::Kind::Tuple:
    for (const ExprPtr &e : llvm::cast<TupleExpr>(expr).elements)
      sub(e);
    return;
  case Expr::Kind::Unary:
    sub(llvm::cast<UnaryExpr>(expr).operand);
    return;
  case Expr::Kind::Binary:
    sub(llvm::cast<BinaryExpr>(expr).lhs);
    sub(llvm::cast<BinaryExpr>(expr).rhs);
    return;
  case Expr::Kind::Call:
    sub(llvm::cast<CallExpr>(expr).callee);
    for (const Arg &a : llvm::cast<CallExpr>(expr).args)
      sub(a.value);
    return;
  case Expr::Kind::Member:
    sub(llvm::cast<MemberExpr>(expr).base);
    return;
  case Expr::Kind::Index:
    sub(llvm::cast<IndexExpr>(expr).base);
    for (const Slice &s : llvm::cast<IndexExpr>(expr).subscripts) {
      sub(s.index);
      sub(s.begin);
      sub(s.end);
      sub(s.step);
    }
    return;
  case Expr::Kind::Instantiate:
    for (const Arg &a : llvm::cast<InstantiateExpr>(expr).args)
      sub(a.value);
    return;
  default:
    return;
  }
}
