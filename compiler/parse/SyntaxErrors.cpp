//===- SyntaxErrors.cpp - ANTLR errors as modelc diagnostics --------------===//
#include "parse/SyntaxErrors.h"

#include "Exceptions.h"
#include "MdlLexer.h"
#include "MdlParser.h"
#include "Parser.h"
#include "Vocabulary.h"
#include "misc/IntervalSet.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace modelc;
using namespace modelc::parse;
using modelc::grammar::MdlLexer;

namespace {

/// The spelling of a literal token ("(" for `'('`), or "" for token kinds
/// without a fixed spelling (identifiers, literals).
std::string literalSpelling(size_t type, const antlr4::dfa::Vocabulary &vocab) {
  std::string name = vocab.getLiteralName(type);
  if (name.size() >= 2 && name.front() == '\'' && name.back() == '\'')
    return name.substr(1, name.size() - 2);
  return {};
}

bool isKeywordSpelling(llvm::StringRef spelling) {
  return !spelling.empty() && llvm::isAlpha(spelling.front());
}

/// A short, single-line excerpt of token text for messages.
std::string excerpt(llvm::StringRef text) {
  text = text.take_until([](char c) { return c == '\n' || c == '\r'; });
  if (text.size() > 24)
    return (text.take_front(24) + "...").str();
  return text.str();
}

/// How an expected token kind reads in "expected ...".
std::string describeKind(size_t type, const antlr4::dfa::Vocabulary &vocab) {
  switch (type) {
  case antlr4::Token::EOF:
    return "end of file";
  case MdlLexer::IDENT:
    return "identifier";
  case MdlLexer::INT_LIT:
    return "integer literal";
  case MdlLexer::FLOAT_LIT:
    return "float literal";
  case MdlLexer::STRING_LIT:
  case MdlLexer::UNTERMINATED_STRING:
    return "string literal";
  default:
    break;
  }
  std::string spelling = literalSpelling(type, vocab);
  if (spelling.empty())
    return vocab.getDisplayName(type);
  return "`" + spelling + "`";
}

/// Reads an expected-token set as a short phrase, folding the large sets
/// ANTLR computes into what a person would say ("expression", "type").
class ExpectedSet {
public:
  ExpectedSet(const std::vector<ssize_t> &types, const antlr4::dfa::Vocabulary &vocab)
      : vocab_(vocab) {
    for (ssize_t type : types)
      types_.push_back(type == -1 ? antlr4::Token::EOF : size_t(type));
    fold();
  }
  /// A set that is just one category ("expression").
  ExpectedSet(llvm::StringRef category, const antlr4::dfa::Vocabulary &vocab) : vocab_(vocab) {
    categories_.push_back(category.str());
    items_.push_back(category.str());
  }

  /// "`)`", "`)` or `,`", "one of `)`, `,` or `@`".
  std::string phrase() const {
    if (items_.empty())
      return "something else";
    if (items_.size() == 1)
      return items_.front();
    std::string head = llvm::join(llvm::ArrayRef(items_).drop_back(), ", ");
    return (items_.size() > 2 ? "one of " : "") + head + " or " + items_.back();
  }
  size_t size() const { return items_.size(); }
  /// The single punctuation token expected, if that is all that fits.
  std::string onlyPunctuation() const {
    if (types_.size() != 1 || !categories_.empty())
      return {};
    std::string spelling = literalSpelling(types_.front(), vocab_);
    return isKeywordSpelling(spelling) ? std::string() : spelling;
  }

private:
  bool has(size_t type) const { return llvm::is_contained(types_, type); }
  size_t punct(llvm::StringRef spelling) const {
    for (size_t type = 1; type <= vocab_.getMaxTokenType(); ++type)
      if (literalSpelling(type, vocab_) == spelling)
        return type;
    return 0;
  }
  /// Replaces `members` by `category` when `trigger` are all present.
  void collapse(std::initializer_list<size_t> trigger, llvm::ArrayRef<size_t> members,
                llvm::StringRef category) {
    if (!llvm::all_of(trigger, [&](size_t type) { return has(type); }))
      return;
    llvm::erase_if(types_, [&](size_t type) { return llvm::is_contained(members, type); });
    categories_.push_back(category.str());
  }

  void fold() {
    using L = MdlLexer;
    size_t lparen = punct("("), lbracket = punct("["), minus = punct("-");
    llvm::SmallVector<size_t> exprStart = {
        L::IDENT, L::INT_LIT, L::FLOAT_LIT, L::STRING_LIT, L::UNTERMINATED_STRING,
        L::TRUE,  L::FALSE,   L::CPU,       L::CUDA,       L::F16,
        L::BF16,  L::F32,     L::F64,       L::I32,        L::I64,
        L::BOOL,  L::NOT,     lparen,       lbracket,      minus};
    llvm::SmallVector<size_t> operators = {L::AND, L::OR};
    for (llvm::StringRef op :
         {".", "(", "[", "**", "*", "/", "%", "@", "+", "-", "==", "!=", "<", "<=", ">", ">="})
      operators.push_back(punct(op));
    // After a complete operand ANTLR expects every operator; say so once.
    collapse({punct("+"), punct("*"), L::AND}, operators, "operator");
    collapse({L::INT_LIT, L::FLOAT_LIT, L::STRING_LIT}, exprStart, "expression");
    // A type may start with a dtype parameter's name (`dtype[n]`).
    collapse(
        {L::F32, L::INT_T},
        {L::F16, L::BF16, L::F32, L::F64, L::I32, L::I64, L::BOOL, L::INT_T, L::FLOAT_T, L::IDENT},
        "type");
    collapse({L::F32, L::I64}, {L::F16, L::BF16, L::F32, L::F64, L::I32, L::I64, L::BOOL}, "dtype");
    collapse({L::CPU, L::CUDA, L::IDENT}, {L::CPU, L::CUDA, L::IDENT}, "device");
    collapse({L::INT_LIT, L::ELLIPSIS}, {L::INT_LIT, L::IDENT, L::ELLIPSIS, lparen}, "dimension");
    // Categories read first, in the order above; operators last.
    bool hasOperator = !categories_.empty() && categories_.front() == "operator";
    for (size_t i = hasOperator ? 1 : 0; i < categories_.size(); ++i)
      items_.push_back(categories_[i]);
    for (size_t type : types_)
      if (std::string item = describeKind(type, vocab_); !llvm::is_contained(items_, item))
        items_.push_back(item);
    if (hasOperator)
      items_.push_back("operator");
  }

  const antlr4::dfa::Vocabulary &vocab_;
  std::vector<size_t> types_;
  std::vector<std::string> categories_;
  std::vector<std::string> items_;
};

} // namespace

std::string parse::describeToken(const antlr4::Token &token, const antlr4::dfa::Vocabulary &vocab) {
  size_t type = token.getType();
  switch (type) {
  case antlr4::Token::EOF:
    return "end of file";
  case MdlLexer::IDENT:
    return "identifier `" + token.getText() + "`";
  case MdlLexer::INT_LIT:
    return "integer literal `" + excerpt(token.getText()) + "`";
  case MdlLexer::FLOAT_LIT:
    return "float literal `" + excerpt(token.getText()) + "`";
  case MdlLexer::STRING_LIT:
  case MdlLexer::UNTERMINATED_STRING:
    return "string literal";
  default:
    break;
  }
  std::string spelling = literalSpelling(type, vocab);
  if (isKeywordSpelling(spelling))
    return "keyword `" + spelling + "`";
  if (!spelling.empty())
    return "`" + spelling + "`";
  return "`" + excerpt(token.getText()) + "`";
}

namespace {

/// Tokens after which only an operand can come: when prediction fails just
/// after one of them, "expected expression" is the useful message (ANTLR's
/// expected set belongs to the decision that started earlier).
bool needsOperandAfter(const antlr4::Token &token, const antlr4::dfa::Vocabulary &vocab) {
  if (token.getType() == MdlLexer::AND || token.getType() == MdlLexer::OR ||
      token.getType() == MdlLexer::NOT)
    return true;
  static const llvm::StringRef operators[] = {"+",  "-", "*",  "/", "%",  "@", "**", "==", ",",
                                              "!=", "<", "<=", ">", ">=", "=", "(",  "["};
  return llvm::is_contained(operators, literalSpelling(token.getType(), vocab));
}

/// The keyword an identifier was probably meant to be (`modle` -> `model`).
std::optional<llvm::StringRef> likelyKeyword(const antlr4::Token &token) {
  if (token.getType() != MdlLexer::IDENT)
    return std::nullopt;
  std::string text = token.getText();
  if (text.size() < 3)
    return std::nullopt;
  for (llvm::StringRef keyword :
       {"model", "import", "param", "buffer", "return", "let", "for", "else"})
    if (llvm::StringRef(text).edit_distance(keyword, true, 2) <= (keyword.size() > 4 ? 2 : 1))
      return keyword;
  return std::nullopt;
}

} // namespace

void SyntaxErrorListener::syntaxError(antlr4::Recognizer *recognizer,
                                      antlr4::Token *offendingSymbol, size_t line,
                                      size_t /*charPositionInLine*/, const std::string & /*msg*/,
                                      std::exception_ptr /*e*/) {
  auto *parser = dynamic_cast<antlr4::Parser *>(recognizer);
  if (!parser || !offendingSymbol) {
    // The lexer has a catch-all rule and never fails; if it ever does, say
    // something rather than nothing.
    auto *lexer = dynamic_cast<antlr4::Lexer *>(recognizer);
    size_t offset = lexer ? state_.stream.byteOffset(lexer->tokenStartCharIndex) : 0;
    if (state_.admitError(offset, line))
      state_.diags.report(DiagId::InvalidCharacter, state_.bytes(offset, offset + 1), "here");
    return;
  }

  Range at = state_.range(offendingSymbol);
  if (!state_.admitError(state_.offsetOf(at.begin), line))
    return;

  const antlr4::dfa::Vocabulary &vocab = parser->getVocabulary();
  std::vector<ssize_t> expectedTypes;
  try {
    expectedTypes = parser->getExpectedTokens().toList();
  } catch (...) {
    // An inconsistent parser state has no expected set; describe nothing.
  }
  // At the top level ANTLR only knows EOF can come next; a model can, too.
  if (expectedTypes == std::vector<ssize_t>{-1} &&
      dynamic_cast<grammar::MdlParser::FileContext *>(parser->getContext()))
    expectedTypes.insert(expectedTypes.begin(), MdlLexer::MODEL);

  // The real token before the offending one.
  antlr4::Token *previous = nullptr;
  size_t index = offendingSymbol->getTokenIndex();
  if (state_.tokens && index != INVALID_INDEX)
    for (size_t i = index; i-- > 0;)
      if (antlr4::Token *token = state_.tokens->get(i);
          token->getChannel() == antlr4::Token::DEFAULT_CHANNEL) {
        previous = token;
        break;
      }

  // Just after an operator, `=`, `(`, `[` or `,` of an expression only an
  // operand can come: say "expression" rather than echo ANTLR's set, which
  // belongs to a decision that began earlier. (In types and declarations
  // `@`, `(`, `[` and `,` are not operators; `=` always wants a value.)
  bool wantsOperand = false;
  if (previous && needsOperandAfter(*previous, vocab)) {
    using P = grammar::MdlParser;
    antlr4::ParserRuleContext *ctx = parser->getContext();
    size_t rule = ctx ? ctx->getRuleIndex() : size_t(-1);
    bool inExpression = rule == P::RuleExpr || rule == P::RuleOperand || rule == P::RulePrimary ||
                        rule == P::RulePostfix || rule == P::RuleArgs || rule == P::RuleArg ||
                        rule == P::RuleSlice || rule == P::RuleSliceTail || rule == P::RuleStmt;
    wantsOperand = inExpression || literalSpelling(previous->getType(), vocab) == "=";
  }
  // `name = Layer(...) as` without its string: ANTLR took `as` for the name
  // of the next member and wants its `=`.
  if (previous && previous->getType() == MdlLexer::IDENT && previous->getText() == "as" &&
      expectedTypes.size() == 1 && literalSpelling(size_t(expectedTypes[0]), vocab) == "=") {
    state_.diags
        .report(DiagId::UnexpectedToken, at, "the state names after `as` (a string)",
                describeToken(*offendingSymbol, vocab))
        .primary("expected a string such as \"{}_l0\"")
        .label(state_.range(previous), "a submodel's state names follow `as`")
        .note("`{}` in the string is the name of each state inside the submodel "
              "(docs/language.md, State names)");
    return;
  }
  ExpectedSet expected =
      wantsOperand ? ExpectedSet("expression", vocab) : ExpectedSet(expectedTypes, vocab);
  std::string found = describeToken(*offendingSymbol, vocab);

  auto builder = state_.diags.report(DiagId::UnexpectedToken, at, expected.phrase(), found);
  builder.primary(expected.size() <= 3 ? "expected " + expected.phrase()
                                       : std::string("unexpected token"));
  if (offendingSymbol->getType() == antlr4::Token::EOF && !state_.unclosedBrackets.empty()) {
    size_t open = state_.unclosedBrackets.back();
    builder.label(state_.bytes(open, open + 1), "unclosed delimiter");
  }
  std::string spelling = literalSpelling(offendingSymbol->getType(), vocab);
  if (isKeywordSpelling(spelling) && expected.phrase().find("identifier") != std::string::npos)
    builder.note("`" + spelling + "` is a keyword and cannot be used as a name");
  // PyTorch's `x.cpu()`, `x.cuda()`: a transfer is `.to(DEVICE)` here.
  if (previous && previous->getText() == "." && (spelling == "cpu" || spelling == "cuda")) {
    // `cpu()` -> `to(cpu)` when the call has no arguments.
    std::vector<Edit> edits;
    if (state_.tokens && index != INVALID_INDEX && index + 2 < state_.tokens->size() &&
        state_.tokens->get(index + 1)->getText() == "(" &&
        state_.tokens->get(index + 2)->getText() == ")")
      edits.push_back({Range::join(at, state_.range(state_.tokens->get(index + 2))),
                       spelling == "cpu" ? "to(cpu)" : "to(cuda:0)"});
    if (spelling == "cpu")
      builder.help("PyTorch's `.cpu()` is `.to(cpu)` here", edits,
                   Applicability::MachineApplicable);
    else
      builder.help("PyTorch's `.cuda()` is `.to(cuda:0)` here (`.to(D)` with the model's device "
                   "parameter in a generic model)",
                   edits, Applicability::MaybeIncorrect);
    return;
  }
  // PyTorch's `x.float()`, `x.int()`, `x.bool()`: a conversion is `cast` here.
  if (previous && previous->getText() == "." &&
      (spelling == "float" || spelling == "int" || spelling == "bool")) {
    std::string dtype = spelling == "float" ? "f32" : spelling == "int" ? "i32" : "bool";
    builder.help("PyTorch's `." + spelling + "()` is `cast(x, " + dtype + ")` here, or `x.to(" +
                     dtype + ")`",
                 {}, Applicability::HasPlaceholders);
    return;
  }
  // PyTorch's `float("-inf")`.
  if (spelling == "float" && expected.phrase().find("expression") != std::string::npos) {
    builder.help("PyTorch's `float(\"inf\")` is the literal `inf` here (`-inf` for minus "
                 "infinity)",
                 {}, Applicability::HasPlaceholders);
    return;
  }
  // PyTorch's `x.to(y.device)`: a device is written, not read from a tensor.
  if (previous && previous->getText() == "." && spelling == "device") {
    builder.help("a tensor's device is part of its type: name the device itself (`x.to(D)` with "
                 "the model's device parameter, or `x.to(cuda:0)`)",
                 {}, Applicability::HasPlaceholders);
    return;
  }
  // `x.to(cuda)`: a cuda device names its GPU.
  if (previous && previous->getText() == "cuda" && expected.onlyPunctuation() == ":") {
    builder.help("a cuda device names its GPU: `cuda:0`", {{state_.range(previous).after(), ":0"}},
                 Applicability::MaybeIncorrect);
    return;
  }

  for (antlr4::Token *candidate : {offendingSymbol, previous}) {
    if (!candidate)
      continue;
    if (std::optional<llvm::StringRef> keyword = likelyKeyword(*candidate)) {
      builder.help(("did you mean `" + *keyword + "`?").str(),
                   {{state_.range(candidate), keyword->str()}}, Applicability::MaybeIncorrect);
      return;
    }
  }
  std::string insert = expected.onlyPunctuation();
  if (!insert.empty() && previous)
    builder.help("insert `" + insert + "`", {{state_.range(previous).after(), insert}},
                 Applicability::MaybeIncorrect);
}
