#include "guard/guard.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "guard/denylist.hpp"
#include "guard/lexer.hpp"

namespace mcpdb::guard {
namespace {

using Tokens = std::vector<Token>;

// Statements a WITH query may hide inside a CTE (or as its main statement).
constexpr std::array<std::string_view, 4> kDataModifying = {"insert", "update", "delete", "merge"};

// Keywords that only ever begin a write, DDL or utility statement, refused anywhere unquoted. A
// column that collides can be double-quoted. Words that are also common column names (call,
// comment, lock, cluster, import, set, show...) are left to the first-keyword rule, since a single
// SELECT statement cannot contain those statements.
constexpr std::array<std::string_view, 20> kForbidden = {
    "truncate", "create",     "alter",   "drop",    "grant",   "revoke",   "copy",
    "vacuum",   "analyze",    "analyse", "reindex", "execute", "prepare",  "deallocate",
    "do",       "checkpoint", "discard", "refresh", "listen",  "unlisten",
};

// Statement keywords that the not_select message may name (anything else is not echoed).
constexpr std::array<std::string_view, 40> kStatementKeywords = {
    "insert",  "update",     "delete",  "merge",      "truncate", "create",  "alter",   "drop",
    "grant",   "revoke",     "copy",    "vacuum",     "analyze",  "analyse", "reindex", "execute",
    "prepare", "deallocate", "do",      "checkpoint", "discard",  "refresh", "listen",  "unlisten",
    "notify",  "call",       "explain", "values",     "table",    "show",    "set",     "reset",
    "begin",   "start",      "commit",  "rollback",   "end",      "abort",   "lock",    "load",
};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string upper(std::string_view word) {
  std::string out(word);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

bool isKeyword(const Tokens& t, std::size_t i, std::string_view word) {
  return i < t.size() && t[i].kind == TokenKind::Identifier && t[i].value == word;
}
bool isPunct(const Tokens& t, std::size_t i, std::string_view p) {
  return i < t.size() && t[i].kind == TokenKind::Punctuation && t[i].value == p;
}

Verdict deny(Rule rule, std::string message) {
  Verdict v;
  v.rule = rule;
  v.message = std::move(message);
  return v;
}

std::optional<Verdict> checkLexical(const Tokens& t) {
  for (const Token& token : t) {
    if (token.kind == TokenKind::Other) {
      return deny(Rule::LexError, "unexpected character at byte " + std::to_string(token.offset));
    }
  }
  return std::nullopt;
}

// Exactly one statement: a lone trailing `;` is fine, any token after it is not (comments are not
// tokens, so a trailing comment is fine).
std::optional<Verdict> checkSingleStatement(const Tokens& t, std::size_t& end) {
  end = t.size();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (isPunct(t, i, ";")) {
      end = i;
      if (i + 1 < t.size()) {
        return deny(Rule::MultipleStatements, "only one statement is allowed per template");
      }
      break;
    }
  }
  if (end == 0) return deny(Rule::Empty, "the template contains no statement");
  return std::nullopt;
}

// The first keyword, after any opening parentheses, must be SELECT or WITH.
std::optional<Verdict> checkFirstKeyword(const Tokens& t, std::size_t end, bool& isWith) {
  std::size_t i = 0;
  while (i < end && isPunct(t, i, "(")) ++i;
  if (isKeyword(t, i, "select")) return std::nullopt;
  if (isKeyword(t, i, "with")) {
    isWith = true;
    return std::nullopt;
  }
  if (i < end && t[i].kind == TokenKind::Identifier && contains(kStatementKeywords, t[i].value)) {
    return deny(Rule::NotSelect, "the statement starts with " + upper(t[i].value) +
                                     "; only SELECT or WITH is allowed");
  }
  return deny(Rule::NotSelect, "the statement must start with SELECT or WITH");
}

std::optional<Verdict> checkLocking(const Tokens& t, std::size_t end) {
  for (std::size_t i = 0; i < end; ++i) {
    if (!isKeyword(t, i, "for")) continue;
    std::string_view clause;
    if (isKeyword(t, i + 1, "update")) {
      clause = "FOR UPDATE";
    } else if (isKeyword(t, i + 1, "share")) {
      clause = "FOR SHARE";
    } else if (isKeyword(t, i + 1, "no") && isKeyword(t, i + 2, "key") &&
               isKeyword(t, i + 3, "update")) {
      clause = "FOR NO KEY UPDATE";
    } else if (isKeyword(t, i + 1, "key") && isKeyword(t, i + 2, "share")) {
      clause = "FOR KEY SHARE";
    }
    if (!clause.empty()) {
      return deny(Rule::LockingClause,
                  "locking clause " + std::string(clause) + " is not allowed in a read-only query");
    }
  }
  return std::nullopt;
}

std::optional<Verdict> checkKeywords(const Tokens& t, std::size_t end, bool isWith) {
  for (std::size_t i = 0; i < end; ++i) {
    if (t[i].kind != TokenKind::Identifier) continue;
    const std::string& word = t[i].value;
    if (word == "into") {
      return deny(Rule::SelectInto, "SELECT ... INTO is not allowed (it creates a table)");
    }
    if (contains(kDataModifying, word)) {
      if (isWith) {
        return deny(Rule::DataModifyingCte,
                    upper(word) + " is not allowed: a WITH query must not modify data");
      }
      return deny(Rule::ForbiddenKeyword,
                  "keyword " + upper(word) + " is not allowed (double-quote it if it is a name)");
    }
    if (contains(kForbidden, word)) {
      return deny(Rule::ForbiddenKeyword,
                  "keyword " + upper(word) + " is not allowed (double-quote it if it is a name)");
    }
  }
  return std::nullopt;
}

// A name followed by `(` is a call, however it is spelled or qualified: pg_catalog."PG_SLEEP" (
// and U&"\0070g_sleep" ( both land here with their decoded name.
std::optional<Verdict> checkFunctions(const Tokens& t, std::size_t end) {
  for (std::size_t i = 0; i + 1 < end; ++i) {
    const bool name =
        t[i].kind == TokenKind::Identifier || t[i].kind == TokenKind::QuotedIdentifier;
    if (!name || !isPunct(t, i + 1, "(")) continue;
    if (const DeniedFunction* entry = findDeniedFunction(t[i].value)) {
      std::string shown(entry->name);
      if (entry->match == NameMatch::Prefix) shown += '*';
      return deny(Rule::DeniedFunction,
                  "function " + shown + " is not allowed (" + std::string(entry->reason) + ")");
    }
  }
  return std::nullopt;
}

std::vector<std::uint32_t> collectPlaceholders(const Tokens& t) {
  std::vector<std::uint32_t> numbers;
  for (const Token& token : t) {
    if (token.kind == TokenKind::Param) numbers.push_back(token.param);
  }
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  return numbers;
}

std::optional<Verdict> checkPlaceholders(const std::vector<std::uint32_t>& numbers) {
  if (numbers.empty()) return std::nullopt;
  if (numbers.front() == 0 || numbers.back() > kMaxPlaceholder) {
    return deny(Rule::PlaceholderRange, "placeholders must be numbered from $1 to at most $" +
                                            std::to_string(kMaxPlaceholder));
  }
  // Sorted and distinct, so contiguous from 1 exactly when the largest equals the count.
  if (numbers.back() != numbers.size()) {
    std::uint32_t missing = 1;
    while (missing - 1 < numbers.size() && numbers[missing - 1] == missing) ++missing;
    return deny(Rule::PlaceholderGap, "placeholders must be $1..$N without gaps; $" +
                                          std::to_string(missing) + " is missing");
  }
  return std::nullopt;
}

// With standard_conforming_strings off the server reads '...\'...' differently. If a backslash
// would move a token boundary, refuse the template rather than trust the session setting.
std::optional<Verdict> checkBackslashAmbiguity(std::string_view sql, const Tokens& t) {
  if (sql.find('\\') == std::string_view::npos) return std::nullopt;
  auto other = lex(sql, LexOptions{.standardConformingStrings = false});
  if (!other) return std::nullopt;  // the server would refuse it in that mode too
  const Tokens& o = *other;
  bool same = o.size() == t.size();
  for (std::size_t i = 0; same && i < t.size(); ++i) {
    same = o[i].kind == t[i].kind && o[i].offset == t[i].offset && o[i].length == t[i].length;
  }
  if (same) return std::nullopt;
  return deny(Rule::AmbiguousString,
              "a backslash in a '...' string changes the query when standard_conforming_strings is "
              "off; use E'...' or avoid the backslash");
}

Verdict checkTokens(std::string_view sql, const Tokens& t) {
  if (auto v = checkLexical(t)) return *v;
  std::size_t end = 0;
  if (auto v = checkSingleStatement(t, end)) return *v;
  bool isWith = false;
  if (auto v = checkFirstKeyword(t, end, isWith)) return *v;
  if (auto v = checkLocking(t, end)) return *v;
  if (auto v = checkKeywords(t, end, isWith)) return *v;
  if (auto v = checkFunctions(t, end)) return *v;
  if (auto v = checkPlaceholders(collectPlaceholders(t))) return *v;
  if (auto v = checkBackslashAmbiguity(sql, t)) return *v;
  Verdict ok;
  ok.allowed = true;
  return ok;
}

}  // namespace

std::string_view ruleId(Rule rule) {
  switch (rule) {
    case Rule::None: return "";
    case Rule::LexError: return "lex_error";
    case Rule::Empty: return "empty";
    case Rule::MultipleStatements: return "multiple_statements";
    case Rule::NotSelect: return "not_select";
    case Rule::DataModifyingCte: return "data_modifying_cte";
    case Rule::ForbiddenKeyword: return "forbidden_keyword";
    case Rule::SelectInto: return "select_into";
    case Rule::LockingClause: return "locking_clause";
    case Rule::DeniedFunction: return "denied_function";
    case Rule::PlaceholderGap: return "placeholder_gap";
    case Rule::PlaceholderRange: return "placeholder_range";
    case Rule::AmbiguousString: return "ambiguous_string";
  }
  return "unknown";
}

Verdict checkTemplate(std::string_view sql) {
  auto tokens = lex(sql);
  if (!tokens) return deny(Rule::LexError, tokens.error().message);
  Verdict verdict = checkTokens(sql, *tokens);
  verdict.placeholders = collectPlaceholders(*tokens);
  return verdict;
}

Status toStatus(const Verdict& verdict) {
  if (verdict.allowed) return {};
  return makeError(Code::PermissionDenied, "query template refused by the SQL guardrail (" +
                                               std::string(ruleId(verdict.rule)) +
                                               "): " + verdict.message);
}

}  // namespace mcpdb::guard
