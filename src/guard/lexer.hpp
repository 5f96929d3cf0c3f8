#pragma once
// A PostgreSQL (15) lexer for query templates, written by hand: no Debian package tokenises SQL
// with PostgreSQL's quoting rules (libpg_query is not packaged), and the guardrail must see the
// same token boundaries the server will see. Implemented from the documented lexical rules
// ("Lexical Structure" in the PostgreSQL manual), not from the server's scanner source.
//
// Guarantees for any input: no crash, no out-of-bounds read, linear time, and every byte either
// belongs to a token, whitespace or a comment, or the whole input is an error.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace mcpdb::guard {

enum class TokenKind {
  Identifier,        // unquoted identifier or keyword, ASCII letters folded to lower case
  QuotedIdentifier,  // "..." or U&"..." identifier; escapes decoded, case kept
  String,            // '...', E'...', N'...', U&'...' or $tag$...$tag$; value decoded
  BitString,         // B'...' or X'...'; value is the raw digits
  Number,            // numeric literal; value is its text
  Param,             // positional placeholder $n; the number is in Token::param
  Operator,          // operator such as + <=> <-> @> (a `!=` is reported as `<>`)
  Punctuation,       // one of , ( ) [ ] ; : :: := . ..
  Other,             // a byte the server rejects as a syntax error, e.g. a stray backslash or `$`
};

struct Token {
  TokenKind kind = TokenKind::Other;
  std::string value;
  std::size_t offset = 0;   // first byte of the token in the input
  std::size_t length = 0;   // bytes covered, including string continuations and a UESCAPE clause
  std::uint32_t param = 0;  // Param only; saturates at UINT32_MAX
};

struct LexOptions {
  // The server's standard_conforming_strings: when off, backslash escapes in '...' too.
  bool standardConformingStrings = true;
};

// Splits sql into tokens, dropping whitespace and comments. Fails (InvalidArgument, a message that
// names only a byte offset) on unterminated literals/comments, bad escapes, invalid UTF-8 or NUL.
Result<std::vector<Token>> lex(std::string_view sql, LexOptions options = {});

// Stable lower-case name of a token kind, for diagnostics and tests.
std::string_view tokenKindName(TokenKind kind);

}  // namespace mcpdb::guard
