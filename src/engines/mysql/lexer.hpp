#pragma once
// A tokeniser for the MySQL / MariaDB dialect, written for the statement guard (guard.hpp): it
// finds where every string, identifier and comment starts and ends exactly as the server's own
// lexer does, and it refuses (rather than guesses) wherever that depends on the session:
//   - '...' strings: a backslash escape means one thing by default and another under
//     NO_BACKSLASH_ESCAPES, so a backslash is accepted only before % or _ (which MySQL keeps as
//     \% and \_ in both modes); a doubled '' is the same in both modes;
//   - "...": a string by default, an identifier under ANSI_QUOTES: always refused;
//   - /*! ... */, /*!50700 ... */, /*M! ... */ (executable comments: the server runs their
//     content), /*+ ... */ (optimizer hints: SET_VAR changes session variables): refused;
//   - a /* inside a comment (nesting rules have changed between versions), a carriage return
//     inside a line comment (where the line ends is not obvious), and "--" followed by a control
//     character other than whitespace (servers have disagreed on whether that opens a comment).
// Comments are dropped from the token list. The tokeniser never throws and reads every byte once.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace mcpdb::mysql::guard {

enum class TokenKind {
  Word,         // unquoted identifier or keyword (also 1abc-style identifiers, \N)
  QuotedIdent,  // `...`, text holds the decoded name
  String,       // '...', N'...'; text holds the raw literal including quotes
  Number,       // 12, 1.5e3, .5, 0x1F, 0b101, X'..', B'..'
  Variable,     // @x, @@x, @@session.x, @'x', @`x`
  Placeholder,  // ?
  Assign,       // :=
  LParen,
  RParen,
  Comma,
  Dot,
  Semicolon,
  Operator,  // any other punctuation, one or more characters
};

struct Token {
  TokenKind kind;
  std::size_t offset;  // byte offset of the token's first byte in the text
  std::size_t length;  // bytes of the token in the text
  std::string text;    // Word: as written; QuotedIdent: decoded; others: as written
  bool spaced_before;  // whitespace or a comment separates it from the previous token
};

// Why the tokeniser stopped.
enum class LexError {
  None,
  Unterminated,       // a string, identifier or comment runs to the end of the text
  ExecutableComment,  // /*! ... */ or /*M! ... */
  OptimizerHint,      // /*+ ... */
  AmbiguousQuoting,   // "..." or a backslash escape whose meaning depends on sql_mode
  AmbiguousComment,   // a /* inside a comment, \r inside a line comment, --<control>
  BadCharacter,       // a byte that starts no MySQL token (NUL, a stray backslash, ...)
  BadLiteral,         // X'..' / B'..' with wrong digits, 1.5e / 1.5x
};

struct LexResult {
  std::vector<Token> tokens;
  LexError error = LexError::None;
  std::size_t error_offset = 0;  // where the offending construct starts
  bool had_comment = false;      // at least one comment was dropped
};

// Tokenises the whole text; on an error the tokens read so far are kept.
LexResult lex(std::string_view text);

// The lower-case ASCII form of a word (keywords and function names are case-insensitive).
std::string lowerAscii(std::string_view text);

// `name` as a backtick-quoted identifier (backticks doubled): for the SQL the server writes
// itself (doctor's fixes, the byte cap's wrapper).
std::string quoteName(std::string_view name);

}  // namespace mcpdb::mysql::guard
