#include "engines/mysql/names.hpp"

#include <array>
#include <set>
#include <utility>

#include "engines/mysql/lexer.hpp"

namespace mcpdb::mysql::guard {
namespace {

// Reserved in MySQL 8.0 and MariaDB 10.6+ alike (their manuals' reserved-word lists). A word
// missing here only costs a look-up; one wrongly here would hide a name, so the list is short.
constexpr std::array<std::string_view, 52> kReserved = {
    "all",           "and",      "as",    "asc",     "between",
    "binary",        "by",       "case",  "collate", "cross",
    "desc",          "distinct", "div",   "else",    "exists",
    "false",         "for",      "force", "from",    "group",
    "having",        "ignore",   "in",    "index",   "inner",
    "interval",      "into",     "is",    "join",    "key",
    "left",          "like",     "limit", "mod",     "natural",
    "not",           "null",     "on",    "or",      "order",
    "outer",         "regexp",   "right", "rlike",   "select",
    "straight_join", "then",     "true",  "union",   "using",
    "when",          "where",
};

bool isIdentifier(const Token& t) {
  if (t.kind == TokenKind::QuotedIdent) return true;
  return t.kind == TokenKind::Word && !isReservedEverywhere(t.text);
}

class Collector {
 public:
  explicit Collector(std::string_view default_schema) : schema_(default_schema) {}

  void add(std::string schema, std::string name) {
    Name n{std::move(schema), std::move(name)};
    if (seen_.insert(n).second) out_.push_back(std::move(n));
  }
  std::vector<Name> take() { return std::move(out_); }
  const std::string& schema() const { return schema_; }

 private:
  std::string schema_;
  std::set<Name> seen_;
  std::vector<Name> out_;
};

}  // namespace

bool isReservedEverywhere(std::string_view word) {
  const std::string lower = lowerAscii(word);
  for (std::string_view r : kReserved) {
    if (r == lower) return true;
  }
  return false;
}

NameCandidates collectNames(std::string_view sql, std::string_view default_schema) {
  const LexResult lexed = lex(sql);
  Collector c(default_schema);
  const std::vector<Token>& tokens = lexed.tokens;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const Token& t = tokens[i];
    // Any word, reserved or not, may follow a dot as an object name (`db`.select is an object).
    const bool afterDot =
        i >= 2 && tokens[i - 1].kind == TokenKind::Dot &&
        (tokens[i - 2].kind == TokenKind::Word || tokens[i - 2].kind == TokenKind::QuotedIdent);
    if (afterDot && (t.kind == TokenKind::Word || t.kind == TokenKind::QuotedIdent)) {
      c.add(tokens[i - 2].text, t.text);
    }
    if (isIdentifier(t)) c.add(c.schema(), t.text);
  }
  return NameCandidates{c.take(), lexed.error == LexError::None};
}

}  // namespace mcpdb::mysql::guard
