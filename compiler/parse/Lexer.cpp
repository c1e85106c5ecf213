//===- Lexer.cpp - The .mdl lexer, written by hand for speed --------------===//
//
// Each branch of scan() mirrors one or more lexer rules of grammar/Mdl.g4,
// including ANTLR's longest-match and first-rule-wins tie breaking.
//
//===----------------------------------------------------------------------===//
#include "parse/Lexer.h"
#include "parse/TokenDump.h"

#include "CommonToken.h"
#include "CommonTokenFactory.h"
#include "CommonTokenStream.h"
#include "MdlLexer.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace modelc::parse;
using modelc::grammar::MdlLexer;

namespace {

/// Token types of the grammar's literal tokens (keywords and punctuation),
/// by spelling, read from the generated vocabulary.
const llvm::StringMap<size_t> &literalTypes() {
  static const llvm::StringMap<size_t> types = [] {
    llvm::StringMap<size_t> map;
    antlr4::ANTLRInputStream empty;
    MdlLexer lexer(&empty);
    const antlr4::dfa::Vocabulary &vocab = lexer.getVocabulary();
    for (size_t type = 1; type <= vocab.getMaxTokenType(); ++type) {
      std::string name = vocab.getLiteralName(type);
      if (name.size() >= 2 && name.front() == '\'' && name.back() == '\'')
        map[name.substr(1, name.size() - 2)] = type;
    }
    return map;
  }();
  return types;
}

bool isDigit(char32_t c) { return c >= '0' && c <= '9'; }
bool isIdentStart(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char32_t c) { return isIdentStart(c) || isDigit(c); }

} // namespace

antlr4::TokenFactory<antlr4::CommonToken> *Lexer::getTokenFactory() {
  return antlr4::CommonTokenFactory::DEFAULT.get();
}

void Lexer::advanceTo(size_t end) {
  for (; pos_ < end; ++pos_)
    if (text_[pos_] == '\n') {
      ++line_;
      lineStart_ = pos_ + 1;
    }
}

size_t Lexer::scan(size_t &type, size_t &channel) {
  const size_t start = pos_;
  const char32_t c = text_[start];
  channel = antlr4::Token::DEFAULT_CHANNEL;
  auto endOfLine = [&](size_t i) {
    while (!atEnd(i) && text_[i] != '\n' && text_[i] != '\r')
      ++i;
    return i;
  };

  // WS : [ \t\r\n]+ -> skip
  if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
    size_t i = start + 1;
    while (!atEnd(i) &&
           (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\r' || text_[i] == '\n'))
      ++i;
    advanceTo(i);
    return 0;
  }

  if (c == '/' && at(start + 1) == '/') {
    size_t end = endOfLine(start + 2);
    if (at(start + 2) == '/') { // DOC_COMMENT : '///' ~[\r\n]* -> channel(HIDDEN)
      type = MdlLexer::DOC_COMMENT;
      channel = antlr4::Token::HIDDEN_CHANNEL;
      return end - start;
    }
    advanceTo(end); // LINE_COMMENT -> skip
    return 0;
  }
  if (c == '/' && at(start + 1) == '*') {
    // BLOCK_COMMENT : '/*' .*? '*/' -> skip, or UNTERMINATED_COMMENT to EOF.
    for (size_t i = start + 2; i + 1 < text_.size(); ++i)
      if (text_[i] == '*' && text_[i + 1] == '/') {
        advanceTo(i + 2);
        return 0;
      }
    type = MdlLexer::UNTERMINATED_COMMENT;
    channel = antlr4::Token::HIDDEN_CHANNEL;
    return text_.size() - start;
  }

  if (isIdentStart(c)) { // keywords, then IDENT
    size_t i = start + 1;
    while (!atEnd(i) && isIdentChar(text_[i]))
      ++i;
    std::string word(i - start, '\0');
    for (size_t k = start; k < i; ++k)
      word[k - start] = char(text_[k]);
    auto keyword = literalTypes().find(word);
    type = keyword != literalTypes().end() ? keyword->second : size_t(MdlLexer::IDENT);
    return i - start;
  }

  if (isDigit(c)) { // FLOAT_LIT, INT_LIT
    auto exponentEnd = [&](size_t i) -> size_t {
      if (at(i) != 'e' && at(i) != 'E')
        return 0;
      size_t k = i + 1;
      if (at(k) == '+' || at(k) == '-')
        ++k;
      if (!isDigit(at(k)))
        return 0;
      while (isDigit(at(k)))
        ++k;
      return k;
    };
    size_t i = start + 1;
    while (isDigit(at(i)))
      ++i;
    type = MdlLexer::INT_LIT;
    size_t end = i;
    if (at(i) == '.' && isDigit(at(i + 1))) {
      size_t k = i + 2;
      while (isDigit(at(k)))
        ++k;
      size_t exponent = exponentEnd(k);
      end = exponent ? exponent : k;
      type = MdlLexer::FLOAT_LIT;
    } else if (size_t exponent = exponentEnd(i)) {
      end = exponent;
      type = MdlLexer::FLOAT_LIT;
    }
    return end - start;
  }

  if (c == '"') { // STRING_LIT, UNTERMINATED_STRING
    size_t i = start + 1;
    while (!atEnd(i)) {
      char32_t d = text_[i];
      if (d == '"') {
        type = MdlLexer::STRING_LIT;
        return i + 1 - start;
      }
      if (d == '\r' || d == '\n')
        break;
      if (d == '\\') {
        if (atEnd(i + 1) || text_[i + 1] == '\r' || text_[i + 1] == '\n')
          break;
        i += 2;
        continue;
      }
      ++i;
    }
    type = MdlLexer::UNTERMINATED_STRING;
    return i - start;
  }

  // Punctuation: the longest spelling that matches.
  if (c < 0x80) {
    char spelling[3];
    for (size_t k = 0; k < 3; ++k)
      spelling[k] = at(start + k) < 0x80 ? char(at(start + k)) : '\0';
    const llvm::StringMap<size_t> &types = literalTypes();
    for (size_t length = 3; length >= 1; --length) {
      bool ascii = true;
      for (size_t k = 0; k < length; ++k)
        ascii &= at(start + k) > 0 && at(start + k) < 0x80;
      if (!ascii)
        continue;
      auto it = types.find(llvm::StringRef(spelling, length));
      if (it != types.end() && !isIdentStart(spelling[0])) {
        type = it->second;
        return length;
      }
    }
  }

  // BAD_CHAR : . -> channel(HIDDEN)
  type = MdlLexer::BAD_CHAR;
  channel = antlr4::Token::HIDDEN_CHANNEL;
  return 1;
}

std::unique_ptr<antlr4::Token> Lexer::nextToken() {
  size_t type = 0, channel = 0, length = 0;
  while (!atEnd(pos_) && (length = scan(type, channel)) == 0) {
  }
  size_t line = line_, column = pos_ - lineStart_;
  if (atEnd(pos_))
    type = antlr4::Token::EOF, channel = antlr4::Token::DEFAULT_CHANNEL, length = 0;
  auto token = std::make_unique<antlr4::CommonToken>(
      std::make_pair<antlr4::TokenSource *, antlr4::CharStream *>(this, &stream_), type, channel,
      pos_, pos_ + length - 1);
  token->setLine(line);
  token->setCharPositionInLine(column);
  advanceTo(pos_ + length);
  return token;
}

std::string modelc::parse::describeTokens(llvm::StringRef text, bool useAntlr) {
  SourceStream stream(text, "tokens");
  std::unique_ptr<antlr4::TokenSource> source;
  if (useAntlr) {
    auto lexer = std::make_unique<MdlLexer>(&stream);
    lexer->removeErrorListeners();
    source = std::move(lexer);
  } else {
    source = std::make_unique<Lexer>(stream);
  }
  antlr4::CommonTokenStream tokens(source.get());
  tokens.fill();
  std::string out;
  llvm::raw_string_ostream os(out);
  for (antlr4::Token *token : tokens.getTokens())
    os << ssize_t(token->getType()) << ' ' << token->getChannel() << ' ' << token->getStartIndex()
       << ':' << ssize_t(token->getStopIndex()) << ' ' << token->getLine() << ':'
       << token->getCharPositionInLine() << '\n';
  return out;
}
