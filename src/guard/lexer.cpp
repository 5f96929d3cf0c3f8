#include "guard/lexer.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

namespace mcpdb::guard {
namespace {

constexpr std::size_t kNpos = std::string_view::npos;

bool isNewline(char c) {
  return c == '\n' || c == '\r';
}
// \v counts as whitespace as in PostgreSQL 16; PostgreSQL 15 rejects it, so either way nothing
// hides.
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v' || isNewline(c);
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isOctalDigit(char c) {
  return c >= '0' && c <= '7';
}
bool isHexDigit(char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
std::uint32_t hexValue(char c) {
  if (isDigit(c)) return static_cast<std::uint32_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<std::uint32_t>(c - 'a' + 10);
  return static_cast<std::uint32_t>(c - 'A' + 10);
}
char toLowerAscii(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
// Every byte >= 0x80 is an identifier byte for the server, so non-ASCII "spaces" join identifiers.
bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool isIdentCont(char c) {
  return isIdentStart(c) || isDigit(c) || c == '$';
}
bool isDollarTagCont(char c) {
  return isIdentStart(c) || isDigit(c);
}
bool isOpChar(char c) {
  return c != '\0' && std::string_view("~!@#^&|`?+-*/%<>=").find(c) != kNpos;
}
bool isHighSurrogate(std::uint32_t cp) {
  return cp >= 0xD800 && cp <= 0xDBFF;
}
bool isLowSurrogate(std::uint32_t cp) {
  return cp >= 0xDC00 && cp <= 0xDFFF;
}
bool isValidCodePoint(std::uint32_t cp) {
  return cp > 0 && cp <= 0x10FFFF && !isHighSurrogate(cp) && !isLowSurrogate(cp);
}
std::uint32_t combineSurrogates(std::uint32_t high, std::uint32_t low) {
  return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
}

void appendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Messages name a byte offset only: the SQL itself is never echoed.
Error lexError(std::string_view what, std::size_t at) {
  return makeError(Code::InvalidArgument, std::string(what) + " at byte " + std::to_string(at));
}

// The server refuses invalid UTF-8, and libpq would cut the text at a NUL that we would still see:
// both are refused up front so that our view and the server's cannot diverge.
std::optional<std::size_t> firstInvalidByte(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == 0) return i;
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07, min = 0x10000;
    } else {
      return i;
    }
    if (len > s.size() - i) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || isHighSurrogate(cp) || isLowSurrogate(cp)) return i;
    i += len;
  }
  return std::nullopt;
}

// Decodes U&'...' / U&"..." escapes: <esc>XXXX, <esc>+XXXXXX, <esc><esc>; surrogate pairs combine.
Result<std::string> decodeUnicodeEscapes(std::string_view raw, char esc, std::size_t at) {
  std::string out;
  std::uint32_t pendingHigh = 0;
  std::size_t i = 0;
  auto hexRun = [&](std::size_t from, std::size_t count, std::uint32_t& cp) {
    if (count > raw.size() - std::min(from, raw.size())) return false;
    cp = 0;
    for (std::size_t k = 0; k < count; ++k) {
      if (!isHexDigit(raw[from + k])) return false;
      cp = (cp << 4) | hexValue(raw[from + k]);
    }
    return true;
  };
  while (i < raw.size()) {
    if (raw[i] != esc) {
      if (pendingHigh != 0) return lexError("invalid Unicode surrogate pair", at);
      out += raw[i++];
      continue;
    }
    if (i + 1 < raw.size() && raw[i + 1] == esc) {
      if (pendingHigh != 0) return lexError("invalid Unicode surrogate pair", at);
      out += esc;
      i += 2;
      continue;
    }
    std::uint32_t cp = 0;
    if (hexRun(i + 1, 4, cp)) {
      i += 5;
    } else if (i + 1 < raw.size() && raw[i + 1] == '+' && hexRun(i + 2, 6, cp)) {
      i += 8;
    } else {
      return lexError("invalid Unicode escape", at);
    }
    if (pendingHigh != 0) {
      if (!isLowSurrogate(cp)) return lexError("invalid Unicode surrogate pair", at);
      cp = combineSurrogates(pendingHigh, cp);
      pendingHigh = 0;
    } else if (isHighSurrogate(cp)) {
      pendingHigh = cp;
      continue;
    }
    if (!isValidCodePoint(cp)) return lexError("invalid Unicode escape value", at);
    appendUtf8(out, cp);
  }
  if (pendingHigh != 0) return lexError("invalid Unicode surrogate pair", at);
  return out;
}

enum class QuoteMode { Standard, Extended, Unicode, Bit, Hex };

struct RawToken {
  Token token;
  bool unicodeEscapes = false;  // U&'...' or U&"...": escapes are decoded once UESCAPE is known
};

class Lexer {
 public:
  Lexer(std::string_view sql, LexOptions options) : sql_(sql), options_(options) {}

  Result<std::vector<Token>> run() {
    if (auto bad = firstInvalidByte(sql_)) return lexError("invalid UTF-8 or NUL byte", *bad);
    while (pos_ < sql_.size()) {
      const std::size_t before = pos_;
      Status st = step();
      if (!st) return st.error();
      // Every branch consumes input; this turns a future bug into an error instead of a hang.
      if (pos_ <= before) return makeError(Code::Internal, "SQL lexer made no progress");
    }
    return finish();
  }

 private:
  // The byte at i, or NUL past the end (NUL never occurs inside: it is refused up front).
  char at(std::size_t i) const { return i < sql_.size() ? sql_[i] : '\0'; }

  QuoteMode plainMode() const {
    return options_.standardConformingStrings ? QuoteMode::Standard : QuoteMode::Extended;
  }

  void push(TokenKind kind, std::string value, std::size_t start, std::size_t end,
            bool unicodeEscapes = false, std::uint32_t param = 0) {
    RawToken raw;
    raw.token.kind = kind;
    raw.token.value = std::move(value);
    raw.token.offset = start;
    raw.token.length = end - start;
    raw.token.param = param;
    raw.unicodeEscapes = unicodeEscapes;
    tokens_.push_back(std::move(raw));
    pos_ = end;
  }

  Status step() {
    const char c = sql_[pos_];
    const char n1 = at(pos_ + 1);
    const char n2 = at(pos_ + 2);
    if (isSpace(c)) {
      ++pos_;
      return {};
    }
    if (c == '-' && n1 == '-') {
      while (pos_ < sql_.size() && !isNewline(sql_[pos_])) ++pos_;
      return {};
    }
    if (c == '/' && n1 == '*') return skipBlockComment();
    const char lc = toLowerAscii(c);
    if (n1 == '\'') {
      if (lc == 'e') return lexQuoted(QuoteMode::Extended, pos_ + 2);
      if (lc == 'b') return lexQuoted(QuoteMode::Bit, pos_ + 2);
      if (lc == 'x') return lexQuoted(QuoteMode::Hex, pos_ + 2);
      if (lc == 'n') return lexQuoted(plainMode(), pos_ + 2);  // national character: a plain string
    }
    if (lc == 'u' && n1 == '&') {
      if (n2 == '\'') {
        // The server refuses U&'' when backslashes escape, as the escape character would be
        // ambiguous.
        if (!options_.standardConformingStrings) {
          return lexError("unsafe use of string constant with Unicode escapes", pos_);
        }
        return lexQuoted(QuoteMode::Unicode, pos_ + 3);
      }
      if (n2 == '"') return lexQuotedIdentifier(true, pos_ + 3);
    }
    if (c == '\'') return lexQuoted(plainMode(), pos_ + 1);
    if (c == '"') return lexQuotedIdentifier(false, pos_ + 1);
    if (c == '$') return lexDollar();
    if (isIdentStart(c)) {
      lexIdentifier();
      return {};
    }
    if (isDigit(c) || (c == '.' && isDigit(n1))) return lexNumber();
    if (c == ':') {
      const std::size_t len = (n1 == ':' || n1 == '=') ? 2 : 1;
      push(TokenKind::Punctuation, std::string(sql_.substr(pos_, len)), pos_, pos_ + len);
      return {};
    }
    if (c == '.') {
      const std::size_t len = n1 == '.' ? 2 : 1;
      push(TokenKind::Punctuation, std::string(sql_.substr(pos_, len)), pos_, pos_ + len);
      return {};
    }
    if (c == ',' || c == '(' || c == ')' || c == '[' || c == ']' || c == ';') {
      push(TokenKind::Punctuation, std::string(1, c), pos_, pos_ + 1);
      return {};
    }
    if (isOpChar(c)) {
      lexOperator();
      return {};
    }
    push(TokenKind::Other, std::string(1, c), pos_, pos_ + 1);
    return {};
  }

  Status skipBlockComment() {
    const std::size_t start = pos_;
    std::size_t depth = 0;  // block comments nest, unlike in the SQL standard's other dialects
    std::size_t i = pos_;
    while (i < sql_.size()) {
      if (sql_[i] == '/' && at(i + 1) == '*') {
        ++depth;
        i += 2;
      } else if (sql_[i] == '*' && at(i + 1) == '/') {
        --depth;
        i += 2;
        if (depth == 0) {
          pos_ = i;
          return {};
        }
      } else {
        ++i;
      }
    }
    return lexError("unterminated /* comment", start);
  }

  // After a closing quote: if only whitespace containing a newline (and `--` comments, but not
  // /* */ comments) separates it from another quote, the literal continues there, in the same mode.
  // Returns the index of that continuing quote, or npos.
  std::size_t continuationQuote(std::size_t i) const {
    bool sawNewline = false;
    while (i < sql_.size()) {
      const char c = sql_[i];
      if (isSpace(c)) {
        sawNewline = sawNewline || isNewline(c);
        ++i;
      } else if (c == '-' && at(i + 1) == '-') {
        while (i < sql_.size() && !isNewline(sql_[i])) ++i;
      } else {
        break;
      }
    }
    return (sawNewline && at(i) == '\'') ? i : kNpos;
  }

  // One backslash escape of an E'' string (i at the backslash, which is not the last byte).
  Status decodeBackslash(std::size_t& i, std::string& out) const {
    const std::size_t at0 = i;
    const char c = sql_[i + 1];
    switch (c) {
      case 'b':
        out += '\b';
        i += 2;
        return {};
      case 'f':
        out += '\f';
        i += 2;
        return {};
      case 'n':
        out += '\n';
        i += 2;
        return {};
      case 'r':
        out += '\r';
        i += 2;
        return {};
      case 't':
        out += '\t';
        i += 2;
        return {};
      default: break;
    }
    if (isOctalDigit(c)) {
      std::uint32_t v = 0;
      std::size_t k = i + 1;
      for (int n = 0; n < 3 && isOctalDigit(at(k)); ++n, ++k)
        v = v * 8 + static_cast<std::uint32_t>(at(k) - '0');
      out += static_cast<char>(v & 0xFF);
      i = k;
      return {};
    }
    if (c == 'x' && isHexDigit(at(i + 2))) {
      std::uint32_t v = 0;
      std::size_t k = i + 2;
      for (int n = 0; n < 2 && isHexDigit(at(k)); ++n, ++k) v = (v << 4) | hexValue(at(k));
      out += static_cast<char>(v);
      i = k;
      return {};
    }
    if (c == 'u' || c == 'U') {
      std::uint32_t cp = 0;
      if (!readHexEscape(i, cp)) return lexError("invalid Unicode escape", at0);
      if (isHighSurrogate(cp)) {
        std::uint32_t low = 0;
        if (at(i) != '\\' || !readHexEscape(i, low) || !isLowSurrogate(low)) {
          return lexError("invalid Unicode surrogate pair", at0);
        }
        cp = combineSurrogates(cp, low);
      }
      if (!isValidCodePoint(cp)) return lexError("invalid Unicode escape value", at0);
      appendUtf8(out, cp);
      return {};
    }
    out += c;  // any other escaped byte stands for itself, including a quote
    i += 2;
    return {};
  }

  // \uXXXX or \UXXXXXXXX at i; advances i past it on success.
  bool readHexEscape(std::size_t& i, std::uint32_t& cp) const {
    const char kind = at(i + 1);
    const std::size_t digits = kind == 'u' ? 4 : (kind == 'U' ? 8 : 0);
    if (digits == 0) return false;
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < digits; ++k) {
      const char d = at(i + 2 + k);
      if (!isHexDigit(d)) return false;
      v = (v << 4) | hexValue(d);
    }
    if (v > std::numeric_limits<std::uint32_t>::max()) return false;
    cp = static_cast<std::uint32_t>(v);
    i += 2 + digits;
    return true;
  }

  Status lexQuoted(QuoteMode mode, std::size_t bodyStart) {
    const std::size_t start = pos_;
    // '' stands for a quote in character strings; bit strings have no escapes at all.
    const bool doubledQuote = mode != QuoteMode::Bit && mode != QuoteMode::Hex;
    std::string value;
    std::size_t i = bodyStart;
    while (true) {
      if (i >= sql_.size()) return lexError("unterminated quoted string", start);
      const char c = sql_[i];
      if (c == '\'') {
        if (doubledQuote && at(i + 1) == '\'') {
          value += '\'';
          i += 2;
          continue;
        }
        const std::size_t next = continuationQuote(i + 1);
        if (next != kNpos) {
          i = next + 1;
          continue;
        }
        ++i;
        break;
      }
      if (c == '\\' && mode == QuoteMode::Extended) {
        if (i + 1 >= sql_.size()) return lexError("unterminated quoted string", start);
        Status st = decodeBackslash(i, value);
        if (!st) return st;
        continue;
      }
      value += c;
      ++i;
    }
    const bool bits = mode == QuoteMode::Bit || mode == QuoteMode::Hex;
    push(bits ? TokenKind::BitString : TokenKind::String, std::move(value), start, i,
         mode == QuoteMode::Unicode);
    return {};
  }

  Status lexQuotedIdentifier(bool unicode, std::size_t bodyStart) {
    const std::size_t start = pos_;
    std::string value;
    std::size_t i = bodyStart;
    while (true) {
      if (i >= sql_.size()) return lexError("unterminated quoted identifier", start);
      if (sql_[i] == '"') {
        if (at(i + 1) == '"') {
          value += '"';
          i += 2;
          continue;
        }
        ++i;
        break;
      }
      value += sql_[i++];
    }
    if (value.empty()) return lexError("zero-length delimited identifier", start);
    push(TokenKind::QuotedIdentifier, std::move(value), start, i, unicode);
    return {};
  }

  // `$` starts a placeholder ($1), a dollar-quoted string ($$...$$, $tag$...$tag$), or nothing
  // valid.
  Status lexDollar() {
    const std::size_t start = pos_;
    if (isDigit(at(start + 1))) {
      std::uint64_t n = 0;
      std::size_t i = start + 1;
      for (; isDigit(at(i)); ++i) {
        n = std::min<std::uint64_t>(n * 10 + static_cast<std::uint64_t>(at(i) - '0'),
                                    std::numeric_limits<std::uint32_t>::max());
      }
      if (isIdentStart(at(i))) return lexError("trailing junk after parameter", start);
      push(TokenKind::Param, std::string(sql_.substr(start, i - start)), start, i, false,
           static_cast<std::uint32_t>(n));
      return {};
    }
    std::size_t i = start + 1;
    if (isIdentStart(at(i))) {
      while (isDollarTagCont(at(i))) ++i;
    }
    if (at(i) == '$') {
      const std::string_view delimiter = sql_.substr(start, i + 1 - start);
      // The body ends at the first exact (case-sensitive) repeat of the opening delimiter.
      const std::size_t close = sql_.find(delimiter, i + 1);
      if (close == kNpos) return lexError("unterminated dollar-quoted string", start);
      push(TokenKind::String, std::string(sql_.substr(i + 1, close - i - 1)), start,
           close + delimiter.size());
      return {};
    }
    push(TokenKind::Other, "$", start, start + 1);
    return {};
  }

  void lexIdentifier() {
    std::string value;
    std::size_t i = pos_;
    for (; isIdentCont(at(i)); ++i) value += toLowerAscii(sql_[i]);
    push(TokenKind::Identifier, std::move(value), pos_, i);
  }

  Status lexNumber() {
    const std::size_t start = pos_;
    std::size_t i = pos_;
    while (isDigit(at(i))) ++i;
    if (at(i) == '.' && at(i + 1) != '.') {  // `1..2` is 1 followed by `..`
      ++i;
      while (isDigit(at(i))) ++i;
    }
    if (at(i) == 'e' || at(i) == 'E') {
      std::size_t k = i + 1;
      if (at(k) == '+' || at(k) == '-') ++k;
      if (!isDigit(at(k))) return lexError("trailing junk after numeric literal", start);
      for (i = k; isDigit(at(i)); ++i) {
      }
    }
    // PostgreSQL 15 refuses `123abc` rather than reading `123 abc` (think `1into`).
    if (isIdentStart(at(i))) return lexError("trailing junk after numeric literal", start);
    push(TokenKind::Number, std::string(sql_.substr(start, i - start)), start, i);
    return {};
  }

  void lexOperator() {
    // A comment start inside a run of operator characters ends the operator there. Stopping the
    // scan at it (rather than scanning the whole run) keeps `+/**/+/**/...` linear.
    std::size_t end = pos_ + 1;
    for (; isOpChar(at(end)); ++end) {
      const char next = at(end + 1);
      if ((sql_[end] == '-' && next == '-') || (sql_[end] == '/' && next == '*')) break;
    }
    std::size_t len = end - pos_;
    // A multi-character operator cannot end in + or - unless it contains one of ~!@#%^&|`?
    // (so `=-1` is `=` then `-1`).
    auto endsInSign = [&] { return sql_[pos_ + len - 1] == '+' || sql_[pos_ + len - 1] == '-'; };
    if (len > 1 && endsInSign()) {
      const std::string_view op = sql_.substr(pos_, len);
      if (op.find_first_of("~!@#%^&|`?") == kNpos) {
        do {
          --len;
        } while (len > 1 && endsInSign());
      }
    }
    std::string value(sql_.substr(pos_, len));
    if (value == "!=") value = "<>";
    const std::size_t start = pos_;
    push(TokenKind::Operator, std::move(value), start, start + len);
    // The stripped signs would each lex again as a run of only + and -, which is stripped down to
    // its first character: emit them one by one here instead of rescanning (quadratic on
    // `++++...`).
    for (std::size_t k = start + len; k < end; ++k) {
      push(TokenKind::Operator, std::string(1, sql_[k]), k, k + 1);
    }
  }

  // Resolves U&'...' / U&"..." escapes, consuming a following `UESCAPE '<char>'` clause.
  Result<std::vector<Token>> finish() {
    std::vector<Token> out;
    out.reserve(tokens_.size());
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      Token token = std::move(tokens_[i].token);
      if (!tokens_[i].unicodeEscapes) {
        out.push_back(std::move(token));
        continue;
      }
      char esc = '\\';
      std::size_t end = token.offset + token.length;
      if (i + 1 < tokens_.size() && tokens_[i + 1].token.kind == TokenKind::Identifier &&
          tokens_[i + 1].token.value == "uescape") {
        if (i + 2 >= tokens_.size() || tokens_[i + 2].token.kind != TokenKind::String ||
            tokens_[i + 2].unicodeEscapes) {
          return lexError("UESCAPE must be followed by a simple string literal", token.offset);
        }
        const Token& escToken = tokens_[i + 2].token;
        const std::string& v = escToken.value;
        if (v.size() != 1 || isHexDigit(v[0]) || v[0] == '+' || v[0] == '\'' || v[0] == '"' ||
            isSpace(v[0])) {
          return lexError("invalid Unicode escape character", escToken.offset);
        }
        esc = v[0];
        end = escToken.offset + escToken.length;
        i += 2;
      }
      auto decoded = decodeUnicodeEscapes(token.value, esc, token.offset);
      if (!decoded) return decoded.error();
      token.value = std::move(*decoded);
      token.length = end - token.offset;
      out.push_back(std::move(token));
    }
    return out;
  }

  std::string_view sql_;
  LexOptions options_;
  std::size_t pos_ = 0;
  std::vector<RawToken> tokens_;
};

}  // namespace

Result<std::vector<Token>> lex(std::string_view sql, LexOptions options) {
  return Lexer(sql, options).run();
}

std::string_view tokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::Identifier: return "identifier";
    case TokenKind::QuotedIdentifier: return "quoted_identifier";
    case TokenKind::String: return "string";
    case TokenKind::BitString: return "bit_string";
    case TokenKind::Number: return "number";
    case TokenKind::Param: return "param";
    case TokenKind::Operator: return "operator";
    case TokenKind::Punctuation: return "punctuation";
    case TokenKind::Other: return "other";
  }
  return "other";
}

}  // namespace mcpdb::guard
