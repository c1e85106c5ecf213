//===- AstBuilder.cpp - ANTLR parse tree to modelc AST --------------------===//
//
// Every build function returns null (or nullopt) when error recovery left
// its construct incomplete; the caller then drops the enclosing statement
// or declaration. Recursion follows the bracket nesting, which the parser
// has already limited to kMaxBracketDepth; operator and postfix chains are
// folded in loops. Children are told apart with NodeClassifier (one virtual
// call each), never with dynamic_cast.
//
//===----------------------------------------------------------------------===//
#include "parse/AstBuilder.h"

#include "parse/NodeKind.h"
#include "parse/Parser.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"

using namespace modelc;
using namespace modelc::ast;
using namespace modelc::parse;
using Mdl = modelc::grammar::MdlParser;
using antlr4::ParserRuleContext;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;

namespace {

class AstBuilder {
public:
  explicit AstBuilder(ParseState &state) : state_(state) {}

  void buildFile(Mdl::FileContext &file, Module &module) {
    for (ParseTree *child : file.children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::ImportDecl) {
        if (auto decl = buildImport(*node.as<Mdl::ImportDeclContext>()))
          module.imports.push_back(std::move(*decl));
      } else if (node.kind == NodeKind::ModelDecl) {
        if (auto decl = buildModel(*node.as<Mdl::ModelDeclContext>()))
          module.models.push_back(std::move(*decl));
      }
    }
  }

private:
  //===--------------------------------------------------------------------===//
  // Nodes, tokens, ranges, doc comments
  //===--------------------------------------------------------------------===//

  Classified classify(ParseTree *node) { return classifier_.classify(node); }

  /// A real token: not missing, not conjured or skipped by error recovery.
  bool present(TerminalNode *node) { return node && classify(node).kind == NodeKind::Token; }
  /// The token of a real token child, or null.
  antlr4::Token *tokenOf(ParseTree *child) {
    Classified node = classify(child);
    return node.kind == NodeKind::Token ? node.token->getSymbol() : nullptr;
  }
  Range range(antlr4::Token *token) const { return state_.range(token); }
  Range range(TerminalNode *node) const { return state_.range(node->getSymbol()); }
  Range range(ParserRuleContext *ctx) const { return state_.range(ctx); }
  std::optional<Ident> ident(antlr4::Token *token) const {
    if (!token || token->getType() != Mdl::IDENT)
      return std::nullopt;
    Range r = range(token);
    return Ident{r.text().str(), r};
  }
  std::optional<Ident> ident(TerminalNode *node) {
    if (!present(node))
      return std::nullopt;
    return ident(node->getSymbol());
  }
  llvm::StringRef text(antlr4::Token *token) const { return range(token).text(); }

  /// The `///` comments right before `ctx`, without `///` and one space,
  /// joined by newlines.
  std::string docBefore(ParserRuleContext &ctx) const {
    size_t index = ctx.start->getTokenIndex();
    if (index == INVALID_INDEX || !state_.tokens || index == 0 ||
        state_.tokens->get(index - 1)->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
      return {};
    std::string doc;
    for (antlr4::Token *token : state_.tokens->getHiddenTokensToLeft(index)) {
      if (token->getType() != Mdl::DOC_COMMENT)
        continue;
      llvm::StringRef line = range(token).text().drop_front(3);
      line.consume_front(" ");
      if (!doc.empty())
        doc += '\n';
      doc += line.rtrim("\r").str();
    }
    return doc;
  }

  //===--------------------------------------------------------------------===//
  // Literals
  //===--------------------------------------------------------------------===//

  /// The value of an integer literal token; reports E0005 and returns
  /// nullopt when it does not fit in int64.
  std::optional<int64_t> intValue(antlr4::Token *token) {
    Range r = range(token);
    int64_t value = 0;
    if (!r.text().getAsInteger(10, value))
      return value;
    std::string shown =
        r.text().size() > 40 ? (r.text().take_front(40) + "...").str() : r.text().str();
    state_.diags.report(DiagId::IntegerTooLarge, r, shown)
        .primary("the largest integer is 9223372036854775807");
    return std::nullopt;
  }

  /// Resolves the escapes of a string literal token, reporting E0009 for
  /// unknown ones. Unterminated strings (already reported) have no closing
  /// quote to strip.
  std::string stringValue(antlr4::Token *token) {
    Range r = range(token);
    bool terminated = token->getType() == Mdl::STRING_LIT;
    llvm::StringRef body = r.text().drop_front(1);
    if (terminated)
      body = body.drop_back(1);
    std::string value;
    value.reserve(body.size());
    for (size_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c != '\\' || i + 1 == body.size()) {
        value += c;
        continue;
      }
      char escaped = body[++i];
      switch (escaped) {
      case 'n':
        value += '\n';
        continue;
      case 't':
        value += '\t';
        continue;
      case '"':
      case '\\':
        value += escaped;
        continue;
      default:
        break;
      }
      // The escape is `\` plus one whole UTF-8 character.
      size_t length = std::max(1u, llvm::getNumBytesForUTF8(escaped));
      length = std::min(length, body.size() - i);
      size_t begin = state_.offsetOf(r.begin) + i; // the `\`: 1 (quote) + i - 1
      Range escapeRange = state_.bytes(begin, begin + 1 + length);
      state_.diags.report(DiagId::InvalidEscape, escapeRange, escapeRange.text())
          .primary("unknown escape")
          .note("the escapes are `\\\"`, `\\\\`, `\\n` and `\\t`");
      value += body.substr(i, length).str();
      i += length - 1;
    }
    return value;
  }

  //===--------------------------------------------------------------------===//
  // Declarations
  //===--------------------------------------------------------------------===//

  std::optional<ImportDecl> buildImport(Mdl::ImportDeclContext &ctx) {
    Mdl::QualifiedNameContext *name = ctx.qualifiedName();
    if (!name)
      return std::nullopt;
    ImportDecl decl;
    decl.range = range(&ctx);
    for (ParseTree *child : name->children) {
      antlr4::Token *token = tokenOf(child);
      if (!token)
        return std::nullopt;
      if (token->getType() == Mdl::IDENT)
        decl.path.push_back(*ident(token));
    }
    if (decl.path.empty())
      return std::nullopt;
    return decl;
  }

  std::optional<ModelDecl> buildModel(Mdl::ModelDeclContext &ctx) {
    auto name = ident(ctx.IDENT());
    if (!name)
      return std::nullopt;
    ModelDecl model;
    model.name = std::move(*name);
    model.range = range(&ctx);
    model.doc = docBefore(ctx);
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      switch (node.kind) {
      case NodeKind::DevParams:
        for (Mdl::DevParamContext *param : node.as<Mdl::DevParamsContext>()->devParam())
          if (auto id = ident(param->IDENT()); id && present(param->DEVICE()))
            model.deviceParams.push_back({std::move(*id), range(param)});
        break;
      case NodeKind::ValueParams:
        for (Mdl::ValueParamContext *param : node.as<Mdl::ValueParamsContext>()->valueParam())
          if (auto built = buildValueParam(*param))
            model.valueParams.push_back(std::move(*built));
        break;
      default:
        buildMember(node, model, {});
        break;
      }
    }
    return model;
  }

  /// One member of `model`; `guards` are the conditions of the `if` blocks
  /// it is in.
  void buildMember(Classified node, ModelDecl &model, const std::vector<MemberGuard> &guards) {
    switch (node.kind) {
    case NodeKind::StateMember:
      buildState(*node.as<Mdl::StateMemberContext>(), model, guards);
      break;
    case NodeKind::SubmodelMember:
      buildSubmodel(*node.as<Mdl::SubmodelMemberContext>(), model, guards);
      break;
    case NodeKind::FnMember:
      if (!guards.empty()) {
        Range keyword = range(node.as<Mdl::FnMemberContext>()->FN());
        state_.diags
            .report(DiagId::UnexpectedToken, keyword, "a `param`, `buffer` or submodel declaration",
                    "`fn`")
            .primary("a fn cannot be declared under a condition")
            .note("declare the fn in the model body and branch inside it: `if cond { ... }`");
        break;
      }
      if (auto fn = buildFn(*node.as<Mdl::FnMemberContext>()))
        model.fns.push_back(std::move(*fn));
      break;
    case NodeKind::IfMember:
      if (Mdl::MemberIfContext *branch = node.as<Mdl::IfMemberContext>()->memberIf())
        buildMemberIf(*branch, model, guards);
      break;
    case NodeKind::AssertMember: {
      auto &ctx = *node.as<Mdl::AssertMemberContext>();
      AssertDecl decl;
      if (!ctx.expr() || !(decl.condition = buildTopExpr(ctx.expr())))
        break;
      if (antlr4::tree::TerminalNode *message = ctx.STRING_LIT())
        decl.message = stringValue(message->getSymbol());
      decl.guards = guards;
      decl.range = range(&ctx);
      model.asserts.push_back(std::move(decl));
      break;
    }
    default:
      break;
    }
  }

  /// `if cond { members } else { members }`: each member gets the enclosing
  /// guards plus this condition (held in the then block, failed in the else).
  void buildMemberIf(Mdl::MemberIfContext &ctx, ModelDecl &model,
                     const std::vector<MemberGuard> &outer) {
    ExprPtr condition = ctx.expr() ? buildTopExpr(ctx.expr()) : nullptr;
    if (!condition)
      return;
    const Expr *cond = condition.get();
    model.memberConditions.push_back(std::move(condition));
    std::vector<Mdl::MemberBlockContext *> blocks = ctx.memberBlock();
    for (size_t i = 0; i < blocks.size(); ++i) {
      std::vector<MemberGuard> guards = outer;
      guards.push_back({cond, i == 0});
      for (ParseTree *child : blocks[i]->children)
        buildMember(classify(child), model, guards);
    }
    if (Mdl::MemberIfContext *elseIf = ctx.memberIf()) {
      std::vector<MemberGuard> guards = outer;
      guards.push_back({cond, false});
      buildMemberIf(*elseIf, model, guards);
    }
  }

  std::optional<ValueParam> buildValueParam(Mdl::ValueParamContext &ctx) {
    auto name = ident(ctx.IDENT(0));
    // `dtype: dtype`: the one type written as a name.
    TerminalNode *typeName = ctx.IDENT(1);
    std::optional<ScalarKind> scalar;
    if (ctx.scalarType())
      scalar = scalarKind(*ctx.scalarType());
    else if (ctx.optionType())
      scalar = ScalarKind::Option;
    else if (ctx.tupleType())
      scalar = ScalarKind::Int;
    else if (present(typeName) && text(typeName->getSymbol()) == "dtype")
      scalar = ScalarKind::DType;
    else if (present(typeName))
      state_.diags
          .report(DiagId::UnexpectedToken, range(typeName),
                  "`int`, `float`, `bool`, `dtype`, options (`\"a\" | \"b\"`) or a tuple",
                  "`" + text(typeName->getSymbol()).str() + "`")
          .primary("not a type of model arguments");
    if (!name || !scalar)
      return std::nullopt;
    ValueParam param;
    param.name = std::move(*name);
    param.type = *scalar;
    if (Mdl::TupleTypeContext *tuple = ctx.tupleType()) {
      // `(int, int)`: PyTorch's `_pair` arguments are ints.
      param.typeRange = range(tuple);
      for (Mdl::ScalarTypeContext *element : tuple->scalarType()) {
        std::optional<ScalarKind> kind = scalarKind(*element);
        if (!kind)
          return std::nullopt;
        if (*kind != ScalarKind::Int) {
          state_.diags
              .report(DiagId::UnexpectedToken, range(element), "`int`",
                      "`" + scalarKindName(*kind).str() + "`")
              .primary("a tuple parameter holds ints (a kernel size, a stride, ...)");
        }
        ++param.arity; // read as an int from here on, so uses are not errors too
      }
    } else if (Mdl::OptionTypeContext *options = ctx.optionType()) {
      param.typeRange = range(options);
      for (TerminalNode *literal : options->STRING_LIT()) {
        if (!present(literal))
          return std::nullopt;
        param.options.push_back({stringValue(literal->getSymbol()), range(literal)});
      }
    } else {
      param.typeRange = ctx.scalarType() ? range(ctx.scalarType()) : range(typeName);
    }
    param.range = range(&ctx);
    if (ctx.expr() && !(param.defaultValue = buildTopExpr(ctx.expr())))
      return std::nullopt;
    return param;
  }

  void buildState(Mdl::StateMemberContext &ctx, ModelDecl &model,
                  const std::vector<MemberGuard> &guards) {
    auto name = ident(ctx.IDENT());
    auto type = ctx.type() ? buildType(*ctx.type()) : nullptr;
    bool isParam = present(ctx.PARAM());
    if (!name || !type || !(isParam || present(ctx.BUFFER())))
      return;
    StateDecl decl;
    decl.kind = isParam ? StateDecl::Kind::Param : StateDecl::Kind::Buffer;
    decl.name = std::move(*name);
    decl.type = std::move(type);
    if (ctx.expr() && !(decl.init = buildTopExpr(ctx.expr())))
      return;
    decl.guards = guards;
    decl.doc = docBefore(ctx);
    decl.range = range(&ctx);
    model.state.push_back(std::move(decl));
  }

  void buildSubmodel(Mdl::SubmodelMemberContext &ctx, ModelDecl &model,
                     const std::vector<MemberGuard> &guards) {
    auto name = ident(ctx.IDENT(0));
    if (!name)
      return;
    SubmodelDecl decl;
    decl.name = std::move(*name);
    if (!(decl.init = buildTopExpr(ctx.expr())))
      return;
    if (TerminalNode *as = ctx.IDENT(1); present(as) && ctx.STRING_LIT()) {
      if (as->getText() != "as") {
        Range keyword = range(as);
        state_.diags
            .report(DiagId::UnexpectedToken, keyword, "`as` or the next member",
                    "`" + keyword.text().str() + "`")
            .primary("expected `as`")
            .help("the names of a submodel's state are given as `name = Layer(...) as \"{}\"`",
                  {{keyword, "as"}}, Applicability::MaybeIncorrect);
        return;
      }
      decl.stateNames =
          StateNameTemplate{stringValue(ctx.STRING_LIT()->getSymbol()), range(ctx.STRING_LIT())};
    }
    decl.guards = guards;
    decl.doc = docBefore(ctx);
    decl.range = range(&ctx);
    model.submodels.push_back(std::move(decl));
  }

  std::optional<FnDecl> buildFn(Mdl::FnMemberContext &ctx) {
    auto name = ident(ctx.IDENT());
    if (!name || !ctx.block())
      return std::nullopt;
    FnDecl fn;
    fn.name = std::move(*name);
    if (Mdl::FnDTypesContext *dtypes = ctx.fnDTypes()) {
      for (Mdl::FnDTypeContext *d : dtypes->fnDType()) {
        auto dtypeName = ident(d->IDENT(0));
        TerminalNode *kind = d->IDENT(1);
        if (!dtypeName || !present(kind))
          return std::nullopt;
        if (text(kind->getSymbol()) != "dtype") {
          state_.diags
              .report(DiagId::UnexpectedToken, range(kind), "`dtype`",
                      "`" + text(kind->getSymbol()).str() + "`")
              .primary("a fn's generic parameters are dtypes: `<T: dtype>`");
          return std::nullopt;
        }
        fn.dtypeParams.push_back(std::move(*dtypeName));
      }
    }
    for (Mdl::FnParamContext *paramCtx : ctx.fnParam()) {
      auto paramName = ident(paramCtx->IDENT());
      auto type = paramCtx->type() ? buildType(*paramCtx->type()) : nullptr;
      if (!paramName || !type)
        return std::nullopt;
      fn.params.push_back({std::move(*paramName), std::move(type), range(paramCtx)});
    }
    if (ctx.resultType() && !(fn.result = buildResultType(*ctx.resultType())))
      return std::nullopt;
    fn.body = buildBlock(*ctx.block());
    fn.bodyRange = range(ctx.block());
    fn.doc = docBefore(ctx);
    fn.range = range(&ctx);
    return fn;
  }

  //===--------------------------------------------------------------------===//
  // Types
  //===--------------------------------------------------------------------===//

  std::optional<ScalarKind> scalarKind(Mdl::ScalarTypeContext &ctx) {
    antlr4::Token *token = ctx.children.size() == 1 ? tokenOf(ctx.children[0]) : nullptr;
    switch (token ? token->getType() : 0) {
    case Mdl::INT_T:
      return ScalarKind::Int;
    case Mdl::FLOAT_T:
      return ScalarKind::Float;
    case Mdl::BOOL:
      return ScalarKind::Bool;
    default:
      return std::nullopt;
    }
  }

  std::optional<DType> dtype(Mdl::DtypeContext &ctx) {
    antlr4::Token *token = ctx.children.size() == 1 ? tokenOf(ctx.children[0]) : nullptr;
    switch (token ? token->getType() : 0) {
    case Mdl::F16:
      return DType::F16;
    case Mdl::BF16:
      return DType::BF16;
    case Mdl::F32:
      return DType::F32;
    case Mdl::F64:
      return DType::F64;
    case Mdl::I32:
      return DType::I32;
    case Mdl::I64:
      return DType::I64;
    case Mdl::BOOL:
      return DType::Bool;
    default:
      return std::nullopt;
    }
  }

  /// `T`, or `(T, U, ...)` as a tuple (a single parenthesized `(T)` is T).
  std::unique_ptr<TypeExpr> buildResultType(Mdl::ResultTypeContext &ctx) {
    std::vector<Mdl::TypeContext *> types = ctx.type();
    if (types.empty())
      return nullptr;
    if (types.size() == 1) {
      std::unique_ptr<TypeExpr> type = buildType(*types.front());
      if (type && ctx.children.size() > 1)
        type->range = range(&ctx); // the parentheses belong to it
      return type;
    }
    auto tuple = std::make_unique<TypeExpr>();
    tuple->kind = TypeExpr::Kind::Tuple;
    tuple->range = range(&ctx);
    for (Mdl::TypeContext *element : types) {
      std::unique_ptr<TypeExpr> type = buildType(*element);
      if (!type)
        return nullptr;
      tuple->elements.push_back(std::move(type));
    }
    return tuple;
  }

  std::unique_ptr<TypeExpr> buildType(Mdl::TypeContext &ctx) {
    auto type = std::make_unique<TypeExpr>();
    type->range = range(&ctx);
    Classified node = classify(ctx.children.empty() ? nullptr : ctx.children[0]);
    if (node.kind == NodeKind::ScalarType) {
      auto kind = scalarKind(*node.as<Mdl::ScalarTypeContext>());
      if (!kind)
        return nullptr;
      type->kind = TypeExpr::Kind::Scalar;
      type->scalar = *kind;
      return type;
    }
    if (node.kind != NodeKind::TensorType)
      return nullptr;
    type->kind = TypeExpr::Kind::Tensor;
    dimNodes_ = 0;
    // `dtype[out, in]`: the model's dtype parameter (sema resolves the name).
    TerminalNode *param = node.as<Mdl::TensorTypeContext>()->IDENT();
    bool haveDtype = present(param);
    if (haveDtype)
      type->dtypeParam = ident(param);
    for (ParseTree *child : node.ctx->children) {
      Classified part = classify(child);
      switch (part.kind) {
      case NodeKind::Dtype: {
        auto elementType = dtype(*part.as<Mdl::DtypeContext>());
        if (!elementType)
          return nullptr;
        type->dtype = *elementType;
        haveDtype = true;
        break;
      }
      case NodeKind::Dim: {
        auto dim = buildDim(*part.as<Mdl::DimContext>());
        if (!dim)
          return nullptr;
        type->dims.push_back(std::move(dim));
        break;
      }
      case NodeKind::Device:
        if (!(type->device = buildDevice(*part.as<Mdl::DeviceContext>())))
          return nullptr;
        break;
      case NodeKind::Token:
        break;
      default:
        return nullptr;
      }
    }
    return haveDtype ? std::move(type) : nullptr;
  }

  /// Counts dimension nodes of one type: more than kMaxExpressionDepth of
  /// them (and so possibly that deep) is E0010.
  bool countDimNode(ParserRuleContext &ctx) {
    if (++dimNodes_ <= kMaxExpressionDepth)
      return true;
    if (dimNodes_ == kMaxExpressionDepth + 1)
      state_.diags.report(DiagId::ExpressionTooDeep, range(&ctx), kMaxExpressionDepth)
          .primary("this dimension is too complex");
    return false;
  }

  std::unique_ptr<DimExpr> binaryDim(char op, std::unique_ptr<DimExpr> lhs,
                                     std::unique_ptr<DimExpr> rhs) {
    auto dim = std::make_unique<DimExpr>();
    dim->kind = DimExpr::Kind::Binary;
    dim->op = op;
    dim->range = Range::join(lhs->range, rhs->range);
    dim->lhs = std::move(lhs);
    dim->rhs = std::move(rhs);
    return dim;
  }

  /// `a (op a)*` with `* /` binding tighter than `+ -`, left-associative.
  std::unique_ptr<DimExpr> buildDim(Mdl::DimContext &ctx) {
    llvm::SmallVector<std::unique_ptr<DimExpr>, 4> operands;
    llvm::SmallVector<char, 4> ops;
    auto tighter = [](char op) { return op == '*' || op == '/'; };
    auto reduce = [&] {
      std::unique_ptr<DimExpr> rhs = operands.pop_back_val();
      operands.back() = binaryDim(ops.pop_back_val(), std::move(operands.back()), std::move(rhs));
    };
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::DimAtom) {
        auto built = buildDimAtom(*node.as<Mdl::DimAtomContext>());
        if (!built || operands.size() != ops.size() || !countDimNode(*node.ctx))
          return nullptr;
        operands.push_back(std::move(built));
        continue;
      }
      if (node.kind != NodeKind::Token || operands.size() != ops.size() + 1)
        return nullptr;
      char op = text(node.token->getSymbol()).front();
      while (!ops.empty() && tighter(ops.back()) >= tighter(op))
        reduce();
      ops.push_back(op);
    }
    if (operands.empty() || operands.size() != ops.size() + 1)
      return nullptr;
    while (!ops.empty())
      reduce();
    return std::move(operands.front());
  }

  std::unique_ptr<DimExpr> buildDimAtom(Mdl::DimAtomContext &ctx) {
    if (ctx.children.size() == 3) { // '(' dim ')'
      Classified inner = classify(ctx.children[1]);
      if (inner.kind != NodeKind::Dim || !tokenOf(ctx.children[0]) || !tokenOf(ctx.children[2]))
        return nullptr;
      return buildDim(*inner.as<Mdl::DimContext>());
    }
    if (ctx.children.size() == 4) { // IDENT '[' INT_LIT ']': `kernel_size[0]`
      antlr4::Token *name = tokenOf(ctx.children[0]), *index = tokenOf(ctx.children[2]);
      if (!name || !index || !tokenOf(ctx.children[1]) || !tokenOf(ctx.children[3]))
        return nullptr;
      auto value = intValue(index);
      if (!value)
        return nullptr;
      auto dim = std::make_unique<DimExpr>();
      dim->kind = DimExpr::Kind::Element;
      dim->name = text(name).str();
      dim->value = *value;
      dim->range = range(&ctx);
      return dim;
    }
    antlr4::Token *token = ctx.children.size() == 1 ? tokenOf(ctx.children[0]) : nullptr;
    if (!token)
      return nullptr;
    auto dim = std::make_unique<DimExpr>();
    dim->range = range(token);
    switch (token->getType()) {
    case Mdl::INT_LIT: {
      auto value = intValue(token);
      if (!value)
        return nullptr;
      dim->kind = DimExpr::Kind::Int;
      dim->value = *value;
      return dim;
    }
    case Mdl::IDENT:
      dim->kind = DimExpr::Kind::Name;
      dim->name = text(token).str();
      return dim;
    case Mdl::ELLIPSIS:
      dim->kind = DimExpr::Kind::Ellipsis;
      return dim;
    default:
      return nullptr;
    }
  }

  /// `cpu`, `cuda:N` or a device parameter's name, from the tokens of a
  /// device rule or of a cpu/cuda primary.
  std::optional<DeviceExpr> deviceFromTokens(ParserRuleContext &ctx) {
    llvm::SmallVector<antlr4::Token *, 3> tokens;
    for (ParseTree *child : ctx.children) {
      antlr4::Token *token = tokenOf(child);
      if (!token)
        return std::nullopt;
      tokens.push_back(token);
    }
    DeviceExpr device;
    device.range = range(&ctx);
    if (tokens.size() == 1 && tokens[0]->getType() == Mdl::CPU) {
      device.kind = DeviceExpr::Kind::Cpu;
    } else if (tokens.size() == 1 && tokens[0]->getType() == Mdl::IDENT) {
      device.kind = DeviceExpr::Kind::Var;
      device.varName = text(tokens[0]).str();
    } else if (tokens.size() == 3 && tokens[0]->getType() == Mdl::CUDA &&
               tokens[2]->getType() == Mdl::INT_LIT) {
      auto index = intValue(tokens[2]);
      if (!index)
        return std::nullopt;
      device.kind = DeviceExpr::Kind::Cuda;
      device.cudaIndex = *index;
    } else {
      return std::nullopt;
    }
    return device;
  }
  std::optional<DeviceExpr> buildDevice(Mdl::DeviceContext &ctx) { return deviceFromTokens(ctx); }

  //===--------------------------------------------------------------------===//
  // Statements
  //===--------------------------------------------------------------------===//

  std::vector<StmtPtr> buildBlock(Mdl::BlockContext &ctx) {
    std::vector<StmtPtr> stmts;
    for (ParseTree *child : ctx.children)
      if (StmtPtr stmt = buildStmt(classify(child)))
        stmts.push_back(std::move(stmt));
    return stmts;
  }

  StmtPtr buildStmt(Classified node) {
    switch (node.kind) {
    case NodeKind::LetStmt: {
      auto &let = *node.as<Mdl::LetStmtContext>();
      bool isTuple = llvm::any_of(let.children, [&](ParseTree *child) {
        antlr4::Token *token = tokenOf(child);
        return token && text(token) == "(";
      });
      if (isTuple)
        return buildLetTuple(let);
      if (let.IDENT().size() != 1)
        return nullptr;
      auto name = ident(let.IDENT(0));
      if (!name || !let.expr())
        return nullptr;
      auto stmt = std::make_unique<LetStmt>(range(&let), std::move(*name));
      if (let.type() && !(stmt->type = buildType(*let.type())))
        return nullptr;
      if (!(stmt->value = buildTopExpr(let.expr())))
        return nullptr;
      return stmt;
    }
    case NodeKind::ReturnStmt: {
      auto &ret = *node.as<Mdl::ReturnStmtContext>();
      auto stmt = std::make_unique<ReturnStmt>(range(&ret));
      std::vector<Mdl::ExprContext *> values = ret.expr();
      if (values.size() == 1 && !(stmt->value = buildTopExpr(values.front())))
        return nullptr;
      if (values.size() > 1) { // `return a, b`
        reportedDepth_ = false;
        depths_.clear();
        auto tuple =
            std::make_unique<TupleExpr>(Range::join(range(values.front()), range(values.back())));
        unsigned depth = 1;
        for (Mdl::ExprContext *value : values) {
          ExprPtr built = buildChild(value, depth);
          if (!built)
            return nullptr;
          tuple->elements.push_back(std::move(built));
        }
        if (!(stmt->value = checkDepth(std::move(tuple), depth)))
          return nullptr;
      }
      return stmt;
    }
    case NodeKind::ForStmt:
      return buildFor(*node.as<Mdl::ForStmtContext>());
    case NodeKind::AssignStmt: {
      auto &assign = *node.as<Mdl::AssignStmtContext>();
      auto name = ident(assign.IDENT());
      if (!name)
        return nullptr;
      auto stmt = std::make_unique<AssignStmt>(range(&assign), std::move(*name));
      if (!assign.slice().empty()) {
        // `x[...] = v`: the target is the index expression `x[...]`, up to
        // the `]` before `=`.
        Range targetRange = stmt->target.range;
        for (ParseTree *child : assign.children)
          if (antlr4::Token *token = tokenOf(child); token && text(token) == "]")
            targetRange = Range::join(targetRange, range(token));
        auto index = std::make_unique<IndexExpr>(
            targetRange, std::make_unique<NameExpr>(stmt->target.range, stmt->target.name));
        unsigned depth = 1;
        for (Mdl::SliceContext *sliceCtx : assign.slice()) {
          auto slice = buildSlice(*sliceCtx, depth);
          if (!slice)
            return nullptr;
          index->subscripts.push_back(std::move(*slice));
        }
        if (!(stmt->indexedTarget = checkDepth(std::move(index), depth + 1)))
          return nullptr;
      }
      if (!(stmt->value = buildTopExpr(assign.expr())))
        return nullptr;
      return stmt;
    }
    case NodeKind::IfStmt:
      if (Mdl::StmtIfContext *branch = node.as<Mdl::IfStmtContext>()->stmtIf())
        return buildIf(*branch);
      return nullptr;
    case NodeKind::ExprStmt: {
      auto &exprStmt = *node.as<Mdl::ExprStmtContext>();
      ExprPtr expr = buildTopExpr(exprStmt.expr());
      if (!expr)
        return nullptr;
      return std::make_unique<ExprStmt>(range(&exprStmt), std::move(expr));
    }
    default:
      return nullptr;
    }
  }

  /// `let (a, b) = value`.
  StmtPtr buildLetTuple(Mdl::LetStmtContext &let) {
    auto stmt = std::make_unique<LetTupleStmt>(range(&let));
    antlr4::Token *open = nullptr, *close = nullptr;
    for (ParseTree *child : let.children)
      if (antlr4::Token *token = tokenOf(child)) {
        if (text(token) == "(")
          open = token;
        else if (text(token) == ")")
          close = token;
      }
    for (TerminalNode *name : let.IDENT()) {
      std::optional<Ident> built = present(name) ? ident(name->getSymbol()) : std::nullopt;
      if (!built)
        return nullptr;
      stmt->names.push_back(std::move(*built));
    }
    if (!open || !close || !let.expr() || !(stmt->value = buildTopExpr(let.expr())))
      return nullptr;
    stmt->namesRange = Range::join(range(open), range(close));
    return stmt;
  }

  StmtPtr buildIf(Mdl::StmtIfContext &ctx) {
    std::vector<Mdl::BlockContext *> blocks = ctx.block();
    if (!ctx.expr() || blocks.empty())
      return nullptr;
    auto stmt = std::make_unique<IfStmt>(range(&ctx));
    if (!(stmt->condition = buildTopExpr(ctx.expr())))
      return nullptr;
    stmt->thenBody = buildBlock(*blocks[0]);
    if (Mdl::StmtIfContext *elseIf = ctx.stmtIf()) {
      stmt->hasElse = true;
      if (StmtPtr nested = buildIf(*elseIf))
        stmt->elseBody.push_back(std::move(nested));
    } else if (blocks.size() > 1) {
      stmt->hasElse = true;
      stmt->elseBody = buildBlock(*blocks[1]);
    }
    return stmt;
  }

  StmtPtr buildFor(Mdl::ForStmtContext &ctx) {
    std::vector<TerminalNode *> idents = ctx.IDENT();
    if (idents.size() != 2 || !present(idents[0]) || !present(idents[1]) || ctx.expr().empty() ||
        !ctx.block())
      return nullptr;
    if (idents[1]->getText() != "in") {
      Range keyword = range(idents[1]);
      state_.diags.report(DiagId::ExpectedInKeyword, keyword, keyword.text())
          .primary("expected `in`")
          .help("loops are written `for x in xs { ... }`", {{keyword, "in"}},
                Applicability::MaybeIncorrect);
      return nullptr;
    }
    auto stmt = std::make_unique<ForStmt>(range(&ctx), *ident(idents[0]));
    std::vector<Mdl::ExprContext *> exprs = ctx.expr();
    if (!(stmt->iterable = buildTopExpr(exprs[0])))
      return nullptr;
    if (ctx.DOTDOT() && (exprs.size() != 2 || !(stmt->rangeEnd = buildTopExpr(exprs[1]))))
      return nullptr;
    stmt->body = buildBlock(*ctx.block());
    return stmt;
  }

  //===--------------------------------------------------------------------===//
  // Expressions
  //===--------------------------------------------------------------------===//

  unsigned depthOf(const Expr &expr) const {
    auto it = depths_.find(&expr);
    return it == depths_.end() ? 1 : it->second;
  }

  /// Records the depth of a new node; over kMaxExpressionDepth it reports
  /// E0010 (once per top-level expression) and drops the expression.
  ExprPtr checkDepth(ExprPtr expr, unsigned depth) {
    if (depth <= kMaxExpressionDepth) {
      if (depth > 1)
        depths_[expr.get()] = depth;
      return expr;
    }
    if (!reportedDepth_) {
      reportedDepth_ = true;
      state_.diags.report(DiagId::ExpressionTooDeep, expr->range, kMaxExpressionDepth)
          .primary("this expression is too deeply nested")
          .help("split it into several `let` bindings");
    }
    return nullptr;
  }

  ExprPtr makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs, Range opRange) {
    unsigned depth = 1 + std::max(depthOf(*lhs), depthOf(*rhs));
    Range r = Range::join(lhs->range, rhs->range);
    return checkDepth(std::make_unique<BinaryExpr>(r, op, std::move(lhs), std::move(rhs), opRange),
                      depth);
  }

  ExprPtr makeUnary(UnaryOp op, ExprPtr operand, Range opRange) {
    unsigned depth = 1 + depthOf(*operand);
    Range r = Range::join(opRange, operand->range);
    return checkDepth(std::make_unique<UnaryExpr>(r, op, std::move(operand), opRange), depth);
  }

  /// An expression that stands on its own (a statement's, a default): the
  /// E0010 report is per such expression.
  ExprPtr buildTopExpr(Mdl::ExprContext *ctx) {
    if (!ctx)
      return nullptr;
    reportedDepth_ = false;
    depths_.clear();
    return buildExpr(ctx);
  }

  static std::optional<BinaryOp> binaryOp(llvm::StringRef spelling) {
    return llvm::StringSwitch<std::optional<BinaryOp>>(spelling)
        .Case("+", BinaryOp::Add)
        .Case("-", BinaryOp::Sub)
        .Case("*", BinaryOp::Mul)
        .Case("/", BinaryOp::Div)
        .Case("%", BinaryOp::Mod)
        .Case("@", BinaryOp::MatMul)
        .Case("==", BinaryOp::Eq)
        .Case("!=", BinaryOp::Ne)
        .Case("<", BinaryOp::Lt)
        .Case("<=", BinaryOp::Le)
        .Case(">", BinaryOp::Gt)
        .Case(">=", BinaryOp::Ge)
        .Case("and", BinaryOp::And)
        .Case("or", BinaryOp::Or)
        .Default(std::nullopt);
  }

  static constexpr unsigned kComparison = 3;
  /// Binding strength of the flat binary operators (higher binds tighter).
  static unsigned precedence(BinaryOp op) {
    switch (op) {
    case BinaryOp::Or:
      return 1;
    case BinaryOp::And:
      return 2;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      return kComparison;
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return 4;
    default:
      return 5; // * / % @ (`**` is handled inside operands)
    }
  }

  /// `operand (op operand)*` folded by precedence (operator-precedence
  /// parsing with explicit stacks, so no recursion). Comparisons do not
  /// chain.
  ExprPtr buildExpr(Mdl::ExprContext *ctx) {
    if (!ctx)
      return nullptr;
    struct PendingOp {
      BinaryOp op;
      Range range;
    };
    llvm::SmallVector<ExprPtr, 4> operands;
    llvm::SmallVector<PendingOp, 4> ops;
    auto reduce = [&]() -> bool {
      ExprPtr rhs = operands.pop_back_val();
      PendingOp pending = ops.pop_back_val();
      operands.back() =
          makeBinary(pending.op, std::move(operands.back()), std::move(rhs), pending.range);
      return operands.back() != nullptr;
    };
    for (ParseTree *child : ctx->children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::Operand) {
        ExprPtr built = buildOperand(*node.ctx);
        if (!built || operands.size() != ops.size())
          return nullptr;
        operands.push_back(std::move(built));
        continue;
      }
      if (node.kind != NodeKind::Token || operands.size() != ops.size() + 1)
        return nullptr;
      Range opRange = range(node.token);
      std::optional<BinaryOp> op = binaryOp(opRange.text());
      if (!op)
        return nullptr;
      unsigned level = precedence(*op);
      while (!ops.empty() && precedence(ops.back().op) >= level) {
        if (level == kComparison && precedence(ops.back().op) == kComparison) {
          reportChainedComparison(ops.back().range, opRange);
          return nullptr;
        }
        if (!reduce())
          return nullptr;
      }
      ops.push_back({*op, opRange});
    }
    if (operands.empty() || operands.size() != ops.size() + 1)
      return nullptr;
    while (!ops.empty())
      if (!reduce())
        return nullptr;
    return std::move(operands.front());
  }

  void reportChainedComparison(Range first, Range second) {
    state_.diags
        .report(DiagId::UnexpectedToken, second, "an operator that is not a comparison",
                "`" + second.text() + "`")
        .primary("comparisons cannot be chained")
        .label(first, "after this comparison")
        .help("join the two comparisons with `and`: `a < b and b < c`", {},
              Applicability::HasPlaceholders);
  }

  /// Applies prefix operators, innermost (last written) first.
  ExprPtr applyPrefixes(llvm::ArrayRef<antlr4::Token *> prefixes, ExprPtr operand) {
    for (antlr4::Token *prefix : llvm::reverse(prefixes)) {
      if (!operand)
        return nullptr;
      Range opRange = range(prefix);
      operand = makeUnary(prefix->getType() == Mdl::NOT ? UnaryOp::Not : UnaryOp::Neg,
                          std::move(operand), opRange);
    }
    return operand;
  }

  /// `p0 o0 ** p1 o1 ** p2 o2` (prefixes p, postfix operands o) is
  /// `p0(o0 ** p1(o1 ** p2(o2)))`: `**` is right-associative and binds
  /// tighter than the prefixes written before each operand.
  ExprPtr buildOperand(ParserRuleContext &ctx) {
    struct Segment {
      llvm::SmallVector<antlr4::Token *, 1> prefixes;
      Classified primary;
      llvm::SmallVector<Classified, 2> postfixes;
      Range powRange; // the `**` before this segment
    };
    llvm::SmallVector<Segment, 1> segments(1);
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      Segment &segment = segments.back();
      switch (node.kind) {
      case NodeKind::CallPostfix:
      case NodeKind::MemberPostfix:
      case NodeKind::IndexPostfix:
        if (!segment.primary.ctx)
          return nullptr;
        segment.postfixes.push_back(node);
        break;
      case NodeKind::Token: {
        antlr4::Token *token = node.token->getSymbol();
        if (segment.primary.ctx && text(token) == "**") {
          segments.emplace_back();
          segments.back().powRange = range(token);
        } else if (!segment.primary.ctx && text(token) != "**") {
          segment.prefixes.push_back(token); // `-` or `not`
        } else {
          return nullptr;
        }
        break;
      }
      case NodeKind::Other:
      case NodeKind::Error:
        return nullptr;
      default: // one of the primaries
        if (segment.primary.ctx)
          return nullptr;
        segment.primary = node;
        break;
      }
    }
    ExprPtr acc;
    for (size_t i = segments.size(); i-- > 0;) {
      Segment &segment = segments[i];
      if (!segment.primary.ctx)
        return nullptr;
      ExprPtr operand = buildPostfixes(buildPrimary(segment.primary), segment.postfixes);
      if (!operand)
        return nullptr;
      acc = acc ? makeBinary(BinaryOp::Pow, std::move(operand), std::move(acc),
                             segments[i + 1].powRange)
                : std::move(operand);
      acc = applyPrefixes(segment.prefixes, std::move(acc));
      if (!acc)
        return nullptr;
    }
    return acc;
  }

  ExprPtr buildPostfixes(ExprPtr base, llvm::ArrayRef<Classified> postfixes) {
    for (const Classified &postfix : postfixes) {
      if (!base)
        return nullptr;
      Range r = Range::join(base->range, range(postfix.ctx));
      unsigned depth = 1 + depthOf(*base);
      switch (postfix.kind) {
      case NodeKind::CallPostfix: {
        auto expr = std::make_unique<CallExpr>(r, std::move(base));
        expr->argsRange = range(postfix.ctx);
        if (!buildCallArgs(*postfix.ctx, expr->args, depth))
          return nullptr;
        base = checkDepth(std::move(expr), depth);
        break;
      }
      case NodeKind::MemberPostfix: {
        auto &children = postfix.ctx->children;
        auto name = children.size() == 2 && tokenOf(children[0]) ? ident(tokenOf(children[1]))
                                                                 : std::nullopt;
        if (!name)
          return nullptr;
        base =
            checkDepth(std::make_unique<MemberExpr>(r, std::move(base), std::move(*name)), depth);
        break;
      }
      case NodeKind::IndexPostfix: {
        auto expr = std::make_unique<IndexExpr>(r, std::move(base));
        for (ParseTree *child : postfix.ctx->children) {
          Classified node = classify(child);
          if (node.kind == NodeKind::Token)
            continue;
          if (node.kind != NodeKind::Slice)
            return nullptr;
          auto slice = buildSlice(*node.as<Mdl::SliceContext>(), depth);
          if (!slice)
            return nullptr;
          expr->subscripts.push_back(std::move(*slice));
        }
        if (expr->subscripts.empty())
          return nullptr;
        base = checkDepth(std::move(expr), depth);
        break;
      }
      default:
        return nullptr;
      }
    }
    return base;
  }

  /// Builds a child expression and raises `depth` to cover it.
  ExprPtr buildChild(Mdl::ExprContext *ctx, unsigned &depth) {
    ExprPtr expr = buildExpr(ctx);
    if (expr)
      depth = std::max(depth, 1 + depthOf(*expr));
    return expr;
  }

  /// The arguments between `(` and `)` in the children of `ctx` (a call
  /// postfix or an instantiation).
  bool buildCallArgs(ParserRuleContext &ctx, std::vector<Arg> &args, unsigned &depth) {
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::Args) {
        if (!buildArgs(*node.ctx, args, depth))
          return false;
      } else if (node.kind != NodeKind::Token && node.kind != NodeKind::Device) {
        return false;
      }
    }
    return true;
  }

  /// `dim=1`, Python's keyword argument, is `dim: 1` here: an error whose
  /// fix is exact; the argument is kept as the named one it means.
  void reportPythonKeywordArgument(const Ident &name, antlr4::Token *equals) {
    Range at = range(equals);
    // From the name's end to the value: `dim=1` and `dim = 1` become `dim: 1`
    // (the source buffer ends in a NUL, which stops the scan).
    const char *value = at.end.getPointer();
    while (*value == ' ' || *value == '\t')
      ++value;
    Range between{name.range.end, llvm::SMLoc::getFromPointer(value)};
    state_.diags.report(DiagId::UnexpectedToken, at, "`:`", "`=`")
        .primary("a named argument takes `:`")
        .help("Python's `" + name.name + "=` is `" + name.name + ":` here", {{between, ": "}});
  }

  bool buildArgs(ParserRuleContext &ctx, std::vector<Arg> &args, unsigned &depth) {
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::Token)
        continue; // `,`
      if (node.kind != NodeKind::Arg)
        return false;
      Arg arg;
      arg.range = range(node.ctx);
      Mdl::ExprContext *value = nullptr;
      for (ParseTree *part : node.ctx->children) {
        Classified piece = classify(part);
        if (piece.kind == NodeKind::Expr) {
          value = piece.as<Mdl::ExprContext>();
        } else if (piece.kind == NodeKind::Token) {
          antlr4::Token *token = piece.token->getSymbol();
          if (token->getType() == Mdl::IDENT || token->getType() == Mdl::DEVICE)
            arg.name = Ident{text(token).str(), range(token)};
          else if (token->getText() == "=" && arg.name)
            reportPythonKeywordArgument(*arg.name, token);
        } else {
          return false;
        }
      }
      if (!(arg.value = buildChild(value, depth)))
        return false;
      args.push_back(std::move(arg));
    }
    return true;
  }

  std::optional<Slice> buildSlice(Mdl::SliceContext &ctx, unsigned &depth) {
    Slice slice;
    slice.range = range(&ctx);
    Mdl::ExprContext *index = nullptr;
    ParserRuleContext *tail = nullptr;
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::Expr)
        index = node.as<Mdl::ExprContext>();
      else if (node.kind == NodeKind::SliceTail)
        tail = node.ctx;
      else
        return std::nullopt;
    }
    if (!tail) {
      if (!(slice.index = buildChild(index, depth)))
        return std::nullopt;
      return slice;
    }
    slice.isSlice = true;
    if (index && !(slice.begin = buildChild(index, depth)))
      return std::nullopt;
    // sliceTail: ':' expr? (':' expr?)?
    unsigned colons = 0;
    for (ParseTree *child : tail->children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::Token) {
        ++colons;
      } else if (node.kind == NodeKind::Expr && (colons == 1 || colons == 2)) {
        ExprPtr &slot = colons == 1 ? slice.end : slice.step;
        if (!(slot = buildChild(node.as<Mdl::ExprContext>(), depth)))
          return std::nullopt;
      } else {
        return std::nullopt;
      }
    }
    return slice;
  }

  ExprPtr buildPrimary(const Classified &node) {
    ParserRuleContext &ctx = *node.ctx;
    Range r = range(&ctx);
    // Single-token primaries: the token is ctx.start, if it is real.
    antlr4::Token *token = ctx.children.size() == 1 ? tokenOf(ctx.children[0]) : nullptr;
    switch (node.kind) {
    case NodeKind::NamePrimary:
      if (!token)
        return nullptr;
      return std::make_unique<NameExpr>(r, text(token).str());
    case NodeKind::IntPrimary: {
      if (!token)
        return nullptr;
      auto value = intValue(token);
      auto expr = std::make_unique<IntLitExpr>(r, value.value_or(0));
      expr->overflowed = !value;
      return expr;
    }
    case NodeKind::FloatPrimary: {
      double value = 0;
      if (!token || r.text().getAsDouble(value, /*AllowInexact=*/true))
        return nullptr;
      return std::make_unique<FloatLitExpr>(r, value);
    }
    case NodeKind::BoolPrimary:
      if (!token)
        return nullptr;
      return std::make_unique<BoolLitExpr>(r, token->getType() == Mdl::TRUE);
    case NodeKind::StringPrimary:
      if (!token)
        return nullptr;
      return std::make_unique<StringLitExpr>(r, stringValue(token));
    case NodeKind::CpuPrimary:
    case NodeKind::CudaPrimary: {
      auto device = deviceFromTokens(ctx);
      if (!device)
        return nullptr;
      return std::make_unique<DeviceLitExpr>(r, std::move(*device));
    }
    case NodeKind::DtypePrimary: {
      Classified inner = classify(ctx.children.size() == 1 ? ctx.children[0] : nullptr);
      auto type =
          inner.kind == NodeKind::Dtype ? dtype(*inner.as<Mdl::DtypeContext>()) : std::nullopt;
      if (!type)
        return nullptr;
      return std::make_unique<DTypeLitExpr>(r, *type);
    }
    case NodeKind::ListPrimary: {
      auto expr = std::make_unique<ListExpr>(r);
      unsigned depth = 1;
      if (!buildElements(ctx, expr->elements, depth))
        return nullptr;
      return checkDepth(std::move(expr), depth);
    }
    case NodeKind::RepeatPrimary:
      return buildRepeat(*node.as<Mdl::RepeatPrimaryContext>());
    case NodeKind::ParenPrimary: {
      if (ctx.children.size() > 4) // `(a, b)`: a tuple
        return buildTuple(ctx);
      // `(a)` or `(a,)`: the expression itself.
      if (ctx.children.size() < 3 || !tokenOf(ctx.children[0]) || !tokenOf(ctx.children.back()))
        return nullptr;
      Classified inner = classify(ctx.children[1]);
      ExprPtr expr =
          inner.kind == NodeKind::Expr ? buildExpr(inner.as<Mdl::ExprContext>()) : nullptr;
      if (expr)
        expr->range = r; // the parentheses belong to the operand
      return expr;
    }
    case NodeKind::InstantiatePrimary:
      return buildInstantiate(ctx);
    default:
      return nullptr;
    }
  }

  /// The expressions among the children of `ctx` (between brackets and
  /// commas); false when one is incomplete.
  bool buildElements(ParserRuleContext &ctx, std::vector<ExprPtr> &elements, unsigned &depth) {
    for (ParseTree *child : ctx.children) {
      Classified element = classify(child);
      if (element.kind == NodeKind::Token)
        continue;
      ExprPtr built = element.kind == NodeKind::Expr
                          ? buildChild(element.as<Mdl::ExprContext>(), depth)
                          : nullptr;
      if (!built)
        return false;
      elements.push_back(std::move(built));
    }
    return true;
  }

  /// `[element for var in begin..end]`.
  ExprPtr buildRepeat(Mdl::RepeatPrimaryContext &ctx) {
    std::vector<TerminalNode *> idents = ctx.IDENT();
    std::vector<Mdl::ExprContext *> exprs = ctx.expr();
    if (idents.size() != 2 || !present(idents[0]) || !present(idents[1]) || exprs.size() != 3)
      return nullptr;
    if (idents[1]->getText() != "in") {
      Range keyword = range(idents[1]);
      state_.diags.report(DiagId::ExpectedInKeyword, keyword, keyword.text())
          .primary("expected `in`")
          .help("a repeated list is written `[layer for _ in 0..n]`", {{keyword, "in"}},
                Applicability::MaybeIncorrect);
      return nullptr;
    }
    auto list = std::make_unique<ListExpr>(range(&ctx));
    list->repeat = std::make_unique<ListExpr::Repeat>();
    list->repeat->var = *ident(idents[0]);
    unsigned depth = 1;
    ExprPtr element = buildChild(exprs[0], depth);
    if (!element || !(list->repeat->begin = buildChild(exprs[1], depth)) ||
        !(list->repeat->end = buildChild(exprs[2], depth)))
      return nullptr;
    list->elements.push_back(std::move(element));
    return checkDepth(std::move(list), depth);
  }

  /// `(a, b, ...)`.
  ExprPtr buildTuple(ParserRuleContext &ctx) {
    auto tuple = std::make_unique<TupleExpr>(range(&ctx));
    unsigned depth = 1;
    if (!buildElements(ctx, tuple->elements, depth) || tuple->elements.size() < 2)
      return nullptr;
    return checkDepth(std::move(tuple), depth);
  }

  /// `Model<devices>(args)` or `module.Model<devices>(args)`.
  ExprPtr buildInstantiate(ParserRuleContext &ctx) {
    llvm::SmallVector<antlr4::Token *, 2> names;
    std::vector<DeviceExpr> devices;
    antlr4::Token *open = nullptr;
    for (ParseTree *child : ctx.children) {
      Classified node = classify(child);
      if (node.kind == NodeKind::Device) {
        auto device = buildDevice(*node.as<Mdl::DeviceContext>());
        if (!device)
          return nullptr;
        devices.push_back(std::move(*device));
      } else if (node.kind == NodeKind::Token) {
        antlr4::Token *token = node.token->getSymbol();
        if (token->getType() == Mdl::IDENT && devices.empty())
          names.push_back(token);
        else if (text(token) == "(")
          open = token;
      } else if (node.kind != NodeKind::Args) {
        return nullptr;
      }
    }
    if (names.empty() || names.size() > 2 || devices.empty() || !open || !ctx.stop)
      return nullptr;
    auto expr = std::make_unique<InstantiateExpr>(range(&ctx), *ident(names.back()));
    if (names.size() == 2)
      expr->module = ident(names.front());
    expr->devices = std::move(devices);
    expr->argsRange = Range::join(range(open), range(ctx.stop));
    unsigned depth = 1;
    if (!buildCallArgs(ctx, expr->args, depth))
      return nullptr;
    return checkDepth(std::move(expr), depth);
  }

  ParseState &state_;
  NodeClassifier classifier_;
  llvm::DenseMap<const Expr *, unsigned> depths_;
  bool reportedDepth_ = false;
  unsigned dimNodes_ = 0;
};

} // namespace

void parse::buildModule(Mdl::FileContext &file, ParseState &state, Module &module) {
  AstBuilder(state).buildFile(file, module);
}
