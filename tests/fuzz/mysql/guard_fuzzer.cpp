// libFuzzer target: the MySQL statement guard (the lexer and the token judge) must never crash,
// hang or read out of bounds, and its verdicts must be deterministic and internally consistent
// on any byte string, as a template and as a stored function body.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engines/mysql/guard.hpp"
#include "engines/mysql/lexer.hpp"

namespace {

namespace guard = mcpdb::mysql::guard;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

void consistent(const guard::Verdict& v) {
  require(v.allowed == (v.rule == guard::Rule::None));
  require(v.allowed == v.message.empty());
  require(v.allowed || !guard::ruleId(v.rule).empty());
  require(v.line >= 0 && v.column >= 0);
  require(v.detail.size() <= 64);  // a short excerpt, never the text
}

bool same(const guard::Verdict& a, const guard::Verdict& b) {
  return a.allowed == b.allowed && a.rule == b.rule && a.message == b.message &&
         a.placeholders == b.placeholders && a.called_functions == b.called_functions &&
         a.relations == b.relations;
}

std::size_t countByte(std::string_view s, char c) {
  std::size_t n = 0;
  for (char x : s) n += x == c ? 1 : 0;
  return n;
}

// Tokens lie inside the text, in order, without overlapping, and (except decoded backquoted
// names) hold exactly the bytes they cover; only whitespace and comments lie between them.
void lexerConsistent(std::string_view text) {
  const guard::LexResult r = guard::lex(text);
  std::size_t end = 0;
  for (const guard::Token& t : r.tokens) {
    require(t.length > 0);
    require(t.offset >= end);
    require(t.offset + t.length <= text.size());
    if (t.kind != guard::TokenKind::QuotedIdent) {
      require(text.substr(t.offset, t.length) == t.text);
    } else {
      require(t.text.size() <= t.length - 2);
    }
    // A token right after another (nothing between) is not marked as spaced, and vice versa.
    if (&t != &r.tokens.front()) require(t.spaced_before == (t.offset != end));
    end = t.offset + t.length;
  }
  if (r.error != guard::LexError::None) {
    require(r.error_offset < text.size());
    require(r.error_offset >= (r.tokens.empty() ? 0 : r.tokens.back().offset));
  }
}

// Only whitespace and comments lie between the tokens: none of those comments may be executable
// (/*! ... */, /*M! ... */). Read here with a scanner of its own, for gaps only: "/*!" as bytes
// proves nothing, e.g. a comment's closing "*/" followed by "*!" (found by this target).
void noExecutableComment(std::string_view text, const guard::LexResult& r) {
  const auto gap = [text](std::size_t i, std::size_t to) {
    while (i < to) {
      if (text.compare(i, 2, "/*") == 0) {
        require(i + 2 >= to || (text[i + 2] != '!' && text.compare(i + 2, 2, "M!") != 0));
        const std::size_t close = text.find("*/", i + 2);
        i = close == std::string_view::npos ? to : close + 2;
      } else if (text[i] == '#' || text.compare(i, 2, "--") == 0) {
        const std::size_t newline = text.find('\n', i);
        i = newline == std::string_view::npos ? to : newline + 1;
      } else {
        ++i;
      }
    }
  };
  std::size_t at = 0;
  for (const guard::Token& t : r.tokens) {
    gap(at, t.offset);
    at = t.offset + t.length;
  }
  gap(at, text.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view sql(reinterpret_cast<const char*>(data), size);
  lexerConsistent(sql);
  const guard::Verdict verdict = guard::checkTemplate(sql);
  consistent(verdict);
  require(same(verdict, guard::checkTemplate(sql)));  // one verdict per text
  require(verdict.placeholders <= countByte(sql, '?'));
  if (verdict.allowed) {
    const std::string input(sql);
    // Text without quotes or comments can hide nothing: then no variable, no executable comment.
    if (input.find_first_of("'\"`#") == std::string::npos &&
        input.find("/*") == std::string::npos && input.find("--") == std::string::npos) {
      require(input.find('@') == std::string::npos);
      require(input.find(":=") == std::string::npos);
    }
    noExecutableComment(sql, guard::lex(sql));
    // Every literal and comment is closed, so nothing appended on a new line can hide.
    require(!guard::checkTemplate(input + "\n; DO 1").allowed);
    require(!guard::checkTemplate(input + "\nFOR UPDATE").allowed);
    require(!guard::checkTemplate(input + "\n, SLEEP(1)").allowed);
    require(!guard::checkTemplate(input + "\nINTO @x").allowed);
    require(!guard::checkTemplate(input + "\n/*!50000 x */").allowed);
  }
  const guard::Verdict body = guard::checkRoutineBody(sql);
  consistent(body);
  require(same(body, guard::checkRoutineBody(sql)));
  return 0;
}
