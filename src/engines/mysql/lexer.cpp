#include "engines/mysql/lexer.hpp"

namespace mcpdb::mysql::guard {
namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// MySQL's lexer counts every byte with the high bit set as part of an identifier (multi-byte
// characters of the connection's character set), as well as ASCII letters, digits, _ and $.
bool isIdentChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' ||
         u == '$' || u >= 0x80;
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool allOf(std::string_view s, bool (*pred)(char)) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

bool isBinDigit(char c) {
  return c == '0' || c == '1';
}

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  LexResult run() {
    while (result_.error == LexError::None) {
      skipSpaceAndComments();
      if (result_.error != LexError::None || pos_ >= text_.size()) break;
      next();
    }
    return std::move(result_);
  }

 private:
  char at(std::size_t i) const { return i < text_.size() ? text_[i] : '\0'; }
  bool atEnd(std::size_t i) const { return i >= text_.size(); }

  void fail(LexError error, std::size_t offset) {
    if (result_.error != LexError::None) return;
    result_.error = error;
    result_.error_offset = offset;
  }

  void push(TokenKind kind, std::size_t start, std::size_t end, std::string text) {
    result_.tokens.push_back(Token{kind, start, end - start, std::move(text), spaced_});
    spaced_ = false;
    pos_ = end;
  }

  void pushRaw(TokenKind kind, std::size_t start, std::size_t end) {
    push(kind, start, end, std::string(text_.substr(start, end - start)));
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size() && result_.error == LexError::None) {
      const char c = text_[pos_];
      if (isSpace(c)) {
        ++pos_;
        spaced_ = true;
      } else if (c == '#') {
        lineComment(pos_ + 1);
      } else if (c == '-' && at(pos_ + 1) == '-' && startsDashComment(pos_ + 2)) {
        // Whether a control character other than whitespace opens a comment has differed
        // between servers; refuse rather than guess.
        if (!atEnd(pos_ + 2) && !isSpace(text_[pos_ + 2])) {
          fail(LexError::AmbiguousComment, pos_);
          return;
        }
        lineComment(pos_ + 2);
      } else if (c == '/' && at(pos_ + 1) == '*') {
        blockComment();
      } else {
        return;
      }
    }
  }

  // "--" starts a comment only when followed by whitespace, a control character or the end
  // (sql_lex.cc); "--1" is minus minus one.
  bool startsDashComment(std::size_t i) const {
    if (atEnd(i)) return true;
    const auto u = static_cast<unsigned char>(text_[i]);
    return isSpace(text_[i]) || u < 0x20 || u == 0x7f;
  }

  // Runs to the next '\n' (MySQL ends a line comment there and nowhere else).
  void lineComment(std::size_t from) {
    const std::size_t start = pos_;
    std::size_t i = from;
    while (!atEnd(i) && text_[i] != '\n') {
      if (text_[i] == '\r') {
        fail(LexError::AmbiguousComment, start);
        return;
      }
      ++i;
    }
    pos_ = i;
    spaced_ = true;
    result_.had_comment = true;
  }

  void blockComment() {
    const std::size_t start = pos_;
    const char kind = at(pos_ + 2);
    if (kind == '!' || ((kind == 'M' || kind == 'm') && at(pos_ + 3) == '!')) {
      fail(LexError::ExecutableComment, start);
      return;
    }
    if (kind == '+') {
      fail(LexError::OptimizerHint, start);
      return;
    }
    std::size_t i = pos_ + 2;
    while (true) {
      if (atEnd(i)) {
        fail(LexError::Unterminated, start);
        return;
      }
      if (text_[i] == '*' && at(i + 1) == '/') break;
      if (text_[i] == '/' && at(i + 1) == '*') {
        fail(LexError::AmbiguousComment, start);
        return;
      }
      ++i;
    }
    pos_ = i + 2;
    spaced_ = true;
    result_.had_comment = true;
  }

  // A '...' literal whose opening quote is at `quote`; returns the offset after the closing
  // quote, or 0 after failing.
  std::size_t stringEnd(std::size_t quote) {
    std::size_t i = quote + 1;
    while (true) {
      if (atEnd(i)) {
        fail(LexError::Unterminated, quote);
        return 0;
      }
      const char c = text_[i];
      if (c == '\\') {
        // \% and \_ stay two characters in both modes; every other escape differs.
        if (at(i + 1) == '%' || at(i + 1) == '_') {
          i += 2;
          continue;
        }
        fail(LexError::AmbiguousQuoting, quote);
        return 0;
      }
      if (c == '\'') {
        if (at(i + 1) == '\'') {
          i += 2;
          continue;
        }
        return i + 1;
      }
      ++i;
    }
  }

  // `...` with `` for a backtick; returns the offset after the closing backtick (0 on failure)
  // and the decoded name in `name`.
  std::size_t quotedIdentEnd(std::size_t quote, std::string& name) {
    std::size_t i = quote + 1;
    while (true) {
      if (atEnd(i)) {
        fail(LexError::Unterminated, quote);
        return 0;
      }
      if (text_[i] == '`') {
        if (at(i + 1) == '`') {
          name += '`';
          i += 2;
          continue;
        }
        return i + 1;
      }
      name += text_[i];
      ++i;
    }
  }

  std::size_t identEnd(std::size_t i) const {
    while (!atEnd(i) && isIdentChar(text_[i])) ++i;
    return i;
  }

  void next() {
    const std::size_t start = pos_;
    const char c = text_[pos_];
    switch (c) {
      case '\'': {
        const std::size_t end = stringEnd(start);
        if (end != 0) pushRaw(TokenKind::String, start, end);
        return;
      }
      case '"': fail(LexError::AmbiguousQuoting, start); return;
      case '`': {
        std::string name;
        const std::size_t end = quotedIdentEnd(start, name);
        if (end != 0) push(TokenKind::QuotedIdent, start, end, std::move(name));
        return;
      }
      case '@': variable(); return;
      case '?': pushRaw(TokenKind::Placeholder, start, start + 1); return;
      case '(': pushRaw(TokenKind::LParen, start, start + 1); return;
      case ')': pushRaw(TokenKind::RParen, start, start + 1); return;
      case ',': pushRaw(TokenKind::Comma, start, start + 1); return;
      case ';': pushRaw(TokenKind::Semicolon, start, start + 1); return;
      case '\\':
        // \N is NULL outside a string; any other backslash starts nothing.
        if (at(start + 1) == 'N' && !isIdentChar(at(start + 2))) {
          pushRaw(TokenKind::Word, start, start + 2);
        } else {
          fail(LexError::BadCharacter, start);
        }
        return;
      case '.':
        if (isDigit(at(start + 1)) && !afterIdentifier()) {
          number();
        } else {
          pushRaw(TokenKind::Dot, start, start + 1);
        }
        return;
      case ':':
        if (at(start + 1) == '=') {
          pushRaw(TokenKind::Assign, start, start + 2);
        } else {
          pushRaw(TokenKind::Operator, start, start + 1);
        }
        return;
      default: break;
    }
    if (isDigit(c)) {
      number();
      return;
    }
    if (isIdentChar(c)) {
      word();
      return;
    }
    operatorToken();
  }

  // A '.' right after a name (t.5 is column 5 of t in MySQL, not t followed by .5).
  bool afterIdentifier() const {
    if (result_.tokens.empty() || spaced_) return false;
    const TokenKind k = result_.tokens.back().kind;
    return k == TokenKind::Word || k == TokenKind::QuotedIdent;
  }

  void variable() {
    const std::size_t start = pos_;
    std::size_t i = start + 1;
    if (at(i) == '@') ++i;
    // The name: identifier characters and dots (@@session.x), or one quoted part.
    if (at(i) == '\'') {
      const std::size_t end = stringEnd(i);
      if (end == 0) return;
      i = end;
    } else if (at(i) == '`') {
      std::string ignored;
      const std::size_t end = quotedIdentEnd(i, ignored);
      if (end == 0) return;
      i = end;
    } else if (at(i) == '"') {
      fail(LexError::AmbiguousQuoting, i);
      return;
    } else {
      while (!atEnd(i) && (isIdentChar(text_[i]) || text_[i] == '.')) ++i;
    }
    pushRaw(TokenKind::Variable, start, i);
  }

  void word() {
    const std::size_t start = pos_;
    const std::size_t end = identEnd(start);
    const std::string_view w = text_.substr(start, end - start);
    // X'..', B'..', N'..' are literals only with the quote right after the letter.
    if (at(end) == '\'' && w.size() == 1) {
      const char k = w[0];
      if (k == 'x' || k == 'X' || k == 'b' || k == 'B') {
        const std::size_t close = stringEnd(end);
        if (close == 0) return;
        const std::string_view digits = text_.substr(end + 1, close - end - 2);
        const bool ok = (k == 'x' || k == 'X') ? allOf(digits, isHexDigit) && digits.size() % 2 == 0
                                               : allOf(digits, isBinDigit);
        if (!ok) {
          fail(LexError::BadLiteral, start);
          return;
        }
        pushRaw(TokenKind::Number, start, close);
        return;
      }
      if (k == 'n' || k == 'N') {
        const std::size_t close = stringEnd(end);
        if (close != 0) pushRaw(TokenKind::String, start, close);
        return;
      }
    }
    pushRaw(TokenKind::Word, start, end);
  }

  // Digits first: 12, 1.5, 1e3, 1.5E-3, .5, 0x1F, 0b101; digits followed by letters are an
  // identifier (MySQL allows 1abc), except after a fraction or exponent, which is refused.
  void number() {
    const std::size_t start = pos_;
    std::size_t i = start;
    if ((at(i) == '0') && (at(i + 1) == 'x' || at(i + 1) == 'b')) {
      const std::size_t end = identEnd(i);
      const std::string_view digits = text_.substr(i + 2, end - i - 2);
      const bool ok = at(i + 1) == 'x' ? !digits.empty() && allOf(digits, isHexDigit)
                                       : !digits.empty() && allOf(digits, isBinDigit);
      pushRaw(ok ? TokenKind::Number : TokenKind::Word, start, end);
      return;
    }
    while (isDigit(at(i))) ++i;
    bool fraction = false;
    if (at(i) == '.' && isDigit(at(i + 1))) {
      fraction = true;
      ++i;
      while (isDigit(at(i))) ++i;
    } else if (at(i) == '.' && i > start && !isIdentChar(at(i + 1))) {
      ++i;  // "1." is a number
      fraction = true;
    }
    if ((at(i) == 'e' || at(i) == 'E') &&
        (isDigit(at(i + 1)) || ((at(i + 1) == '+' || at(i + 1) == '-') && isDigit(at(i + 2))))) {
      fraction = true;
      i += 2;
      while (isDigit(at(i))) ++i;
    }
    if (isIdentChar(at(i))) {
      if (fraction) {
        fail(LexError::BadLiteral, start);
        return;
      }
      pushRaw(TokenKind::Word, start, identEnd(i));
      return;
    }
    pushRaw(TokenKind::Number, start, i);
  }

  void operatorToken() {
    const std::size_t start = pos_;
    const char c = text_[start];
    static constexpr std::string_view kSingle = "+-*/%=<>!~^&|{}";
    if (kSingle.find(c) == std::string_view::npos) {
      fail(LexError::BadCharacter, start);
      return;
    }
    // Longest of the multi-character operators; the guard needs none of them apart from :=,
    // but keeping them whole keeps positions honest.
    static constexpr std::string_view kMulti[] = {
        "<=>", "->>", "<=", ">=", "<>", "!=", "<<", ">>", "&&", "||", "->"};
    for (std::string_view op : kMulti) {
      if (text_.substr(start, op.size()) == op) {
        pushRaw(TokenKind::Operator, start, start + op.size());
        return;
      }
    }
    pushRaw(TokenKind::Operator, start, start + 1);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  bool spaced_ = false;
  LexResult result_;
};

}  // namespace

LexResult lex(std::string_view text) {
  return Lexer(text).run();
}

std::string lowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string quoteName(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') out += '`';
  }
  return out + "`";
}

}  // namespace mcpdb::mysql::guard
