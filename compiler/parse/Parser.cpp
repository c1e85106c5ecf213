//===- Parser.cpp - Parse a .mdl buffer into an AST -----------------------===//
//
// The pipeline: validate UTF-8 (E0007), lex the whole buffer, report lexical
// errors (E0002-E0004) and refuse brackets nested too deep (E0006), then
// parse in two stages - a first pass that bails at the first error, and
// only on failure a second pass with error recovery and our own
// listener - and finally build the AST from the parse tree.
//
//===----------------------------------------------------------------------===//
#include "parse/Parser.h"

#include "parse/AstBuilder.h"
#include "parse/Lexer.h"
#include "parse/ParseState.h"
#include "parse/Recovery.h"
#include "parse/SourceStream.h"
#include "parse/SyntaxErrors.h"

#include "BailErrorStrategy.h"
#include "CommonTokenStream.h"
#include "Exceptions.h"
#include "MdlLexer.h"
#include "MdlParser.h"
#include "atn/ParserATNSimulator.h"
#include "atn/PredictionMode.h"

#include "llvm/Support/BuryPointer.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace modelc;
using namespace modelc::parse;
using modelc::grammar::MdlLexer;
using modelc::grammar::MdlParser;

namespace {

/// "`$`" for printable ASCII, "U+0000" for everything else.
std::string describeChar(llvm::StringRef bytes) {
  if (bytes.size() == 1 && bytes[0] >= 0x21 && bytes[0] < 0x7F)
    return "`" + bytes.str() + "`";
  uint32_t codePoint = 0;
  const auto *cursor = reinterpret_cast<const llvm::UTF8 *>(bytes.data());
  const auto *end = cursor + bytes.size();
  llvm::UTF32 *out = &codePoint;
  if (llvm::ConvertUTF8toUTF32(&cursor, end, &out, out + 1, llvm::strictConversion) !=
      llvm::conversionOK)
    codePoint = (unsigned char)bytes.front();
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("U+%04X", codePoint);
  return text;
}

/// The ASCII character a look-alike stands for ("" if none).
llvm::StringRef asciiLookAlike(llvm::StringRef bytes) {
  if (bytes == "\u201C" || bytes == "\u201D")
    return "\"";
  if (bytes == "\u2018" || bytes == "\u2019")
    return "'";
  if (bytes == "\u2212" || bytes == "\u2013")
    return "-";
  if (bytes == "\u00D7")
    return "*";
  return {};
}

/// One parse of one buffer.
class ParseRun {
public:
  ParseRun(DiagnosticEngine &diags, llvm::StringRef text, llvm::StringRef name)
      : stream_(text, name), state_(diags, stream_, text.data()), listener_(state_),
        lexer_(stream_), tokens_(&lexer_) {
    state_.tokens = &tokens_;
  }

  void run(ast::Module &module) {
    tokens_.fill();
    if (!scanTokens())
      return;
    if (MdlParser::FileContext *file = parse())
      buildModule(*file, state_, module);
  }

private:
  /// The token type of a punctuation token, from the parser's vocabulary.
  size_t tokenType(llvm::StringRef spelling) {
    if (!parser_)
      parser_ = std::make_unique<MdlParser>(&tokens_);
    const antlr4::dfa::Vocabulary &vocab = parser_->getVocabulary();
    std::string quoted = ("'" + spelling + "'").str();
    for (size_t type = 1; type <= vocab.getMaxTokenType(); ++type)
      if (vocab.getLiteralName(type) == quoted)
        return type;
    return 0;
  }

  void reportBadChars(antlr4::Token *first, antlr4::Token *last) {
    Range r = Range::join(state_.range(first), state_.range(last));
    if (!state_.admitLexicalError(first->getLine(), last->getLine(), false))
      return;
    Range firstChar = state_.range(first);
    auto builder = state_.diags.report(DiagId::InvalidCharacter, r, describeChar(firstChar.text()));
    builder.primary(r.size() > firstChar.size() ? "these characters are not part of the language"
                                                : "this character is not part of the language");
    if (llvm::StringRef ascii = asciiLookAlike(firstChar.text()); !ascii.empty())
      builder.help(
          ("`" + firstChar.text() + "` looks like `" + ascii + "`, which may be meant").str(),
          {{firstChar, ascii.str()}}, Applicability::MaybeIncorrect);
  }

  /// Reports lexical errors and measures bracket nesting. Returns false when
  /// the nesting is too deep to parse.
  bool scanTokens() {
    const size_t openers[] = {tokenType("("), tokenType("["), tokenType("{")};
    const size_t closers[] = {tokenType(")"), tokenType("]"), tokenType("}")};
    struct OpenBracket {
      size_t offset; // in bytes
      size_t kind;   // index into openers
    };
    std::vector<OpenBracket> open;
    std::vector<uint16_t> braces; // stack positions of the open `{`
    bool tooDeep = false;
    const std::vector<antlr4::Token *> &tokens = tokens_.getTokens();
    state_.bracketDepth.resize(tokens.size());
    state_.braceDepth.resize(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
      antlr4::Token *token = tokens[i];
      size_t type = token->getType();
      state_.bracketDepth[i] = uint16_t(open.size());
      state_.braceDepth[i] = braces.empty() ? 0 : braces.back();
      if (type == MdlLexer::BAD_CHAR) {
        // One report for a run of adjacent bad characters.
        size_t last = i;
        while (last + 1 < tokens.size() && tokens[last + 1]->getType() == MdlLexer::BAD_CHAR &&
               tokens[last + 1]->getStartIndex() == tokens[last]->getStopIndex() + 1)
          ++last;
        reportBadChars(token, tokens[last]);
        i = last;
      } else if (type == MdlLexer::UNTERMINATED_STRING) {
        Range r = state_.range(token);
        if (state_.admitLexicalError(token->getLine(), token->getLine(), true))
          state_.diags.report(DiagId::UnterminatedString, r)
              .primary("this string is never closed")
              .help("close it with `\"`", {{r.after(), "\""}}, Applicability::MaybeIncorrect);
      } else if (type == MdlLexer::UNTERMINATED_COMMENT) {
        Range r = state_.range(token);
        size_t begin = state_.offsetOf(r.begin);
        size_t endLine = token->getLine() + size_t(llvm::count(r.text(), '\n'));
        if (state_.admitLexicalError(token->getLine(), endLine, true))
          state_.diags.report(DiagId::UnterminatedComment, state_.bytes(begin, begin + 2))
              .primary("this comment is never closed")
              .note("a block comment runs to the first `*/`; they do not nest");
      } else if (!tooDeep && llvm::is_contained(openers, type)) {
        size_t kind = size_t(llvm::find(openers, type) - std::begin(openers));
        open.push_back({state_.offsetOf(state_.range(token).begin), kind});
        if (kind == 2)
          braces.push_back(uint16_t(open.size()));
        if (open.size() > kMaxBracketDepth) {
          tooDeep = true;
          state_.diags.report(DiagId::NestingTooDeep, state_.range(token), kMaxBracketDepth)
              .primary("this bracket is one level too deep")
              .note("deeper nesting is refused so that parsing cannot exhaust the stack");
        }
      } else if (!tooDeep && llvm::is_contained(closers, type)) {
        // A closer ends its nearest matching opener and any unclosed ones
        // inside it (`f(a[1)` closes the `[` too); a stray one ends nothing.
        // It sits at the depth of the bracket it closes, so recovery sees
        // the `}` of a block as leaving the block.
        size_t kind = size_t(llvm::find(closers, type) - std::begin(closers));
        auto match = llvm::find_if(llvm::reverse(open),
                                   [&](const OpenBracket &b) { return b.kind == kind; });
        if (match != open.rend()) {
          open.erase(std::prev(match.base()), open.end());
          while (!braces.empty() && braces.back() > open.size())
            braces.pop_back();
          state_.bracketDepth[i] = uint16_t(open.size());
        }
      }
    }
    for (const OpenBracket &bracket : open)
      state_.unclosedBrackets.push_back(bracket.offset);
    return !tooDeep;
  }

  /// Two passes, both with SLL prediction. The first bails out at the
  /// first syntax error (the common, valid case costs one pass); only then
  /// the second recovers and reports. Full-LL prediction is not used: the
  /// grammar's real ambiguities (a statement may start where an expression
  /// could go on: `a \n -b`, `f \n (x)`) are resolved to the first
  /// alternative by SLL and LL alike, while LL re-predicts each of them with
  /// full context and made the error pass 5-20x slower than SLL (0.55 s vs
  /// 0.10 s for bench/gen_large_model.py's 10,000 lines).
  MdlParser::FileContext *parse() {
    if (!parser_)
      parser_ = std::make_unique<MdlParser>(&tokens_);
    parser_->removeErrorListeners();
    parser_->setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    parser_->getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::SLL);
    try {
      return parser_->file();
    } catch (const antlr4::ParseCancellationException &) {
    }
    tokens_.seek(0);
    parser_->reset();
    parser_->addErrorListener(&listener_);
    parser_->setErrorHandler(std::make_shared<RecoveryStrategy>(state_));
    return parser_->file();
  }

  SourceStream stream_;
  ParseState state_;
  SyntaxErrorListener listener_;
  Lexer lexer_;
  antlr4::CommonTokenStream tokens_;
  std::unique_ptr<MdlParser> parser_;
};

void parseInto(ast::Module &module, llvm::StringRef text, DiagnosticEngine &diags,
               const ParseOptions &options) {
  // A byte-order mark is not part of the program.
  if (text.starts_with("\xEF\xBB\xBF"))
    text = text.drop_front(3);
  if (std::optional<size_t> bad = findInvalidUtf8(text)) {
    Range r{llvm::SMLoc::getFromPointer(text.data() + *bad),
            llvm::SMLoc::getFromPointer(text.data() + *bad + 1)};
    std::string label;
    llvm::raw_string_ostream(label)
        << llvm::format("byte 0x%02X is not valid UTF-8 here", (unsigned char)text[*bad]);
    diags.report(DiagId::InvalidUtf8, r).primary(label).note("save the file as UTF-8");
    return;
  }
  if (options.disableFree) {
    auto *run = new ParseRun(diags, text, module.fileName);
    run->run(module);
    llvm::BuryPointer(run); // reclaimed at process exit
    return;
  }
  ParseRun(diags, text, module.fileName).run(module);
}

} // namespace

std::unique_ptr<ast::Module> modelc::parseModule(llvm::SourceMgr &sm, unsigned bufferId,
                                                 DiagnosticEngine &diags,
                                                 const ParseOptions &options) {
  auto module = std::make_unique<ast::Module>();
  module->bufferId = bufferId;
  module->sourceMgr = &sm;
  if (bufferId == 0 || bufferId > sm.getNumBuffers())
    return module;
  const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(bufferId);
  module->fileName = buffer->getBufferIdentifier().str();
  try {
    parseInto(*module, buffer->getBuffer(), diags, options);
  } catch (...) {
    // Nothing in the pipeline is expected to throw; if the runtime does
    // anyway (e.g. out of memory), keep what was built and say the file
    // could not be read rather than passing it as valid.
    llvm::StringRef text = buffer->getBuffer();
    Range start{llvm::SMLoc::getFromPointer(text.data()), llvm::SMLoc::getFromPointer(text.data())};
    diags.report(DiagId::UnexpectedToken, start, "a parsable file",
                 "input the parser could not handle");
  }
  return module;
}
