#include "guard/lexer.hpp"

#include <gtest/gtest.h>

#include "guard/guard.hpp"

#include <string>
#include <vector>

namespace mcpdb::guard {
namespace {

// "kind:value" per token, for compact expectations.
std::vector<std::string> kinds(std::string_view sql, LexOptions options = {}) {
  auto tokens = lex(sql, options);
  EXPECT_TRUE(tokens.ok()) << (tokens.ok() ? "" : tokens.error().message);
  std::vector<std::string> out;
  if (!tokens) return out;
  for (const Token& t : *tokens) out.push_back(std::string(tokenKindName(t.kind)) + ":" + t.value);
  return out;
}

std::string lexFailure(std::string_view sql, LexOptions options = {}) {
  auto tokens = lex(sql, options);
  return tokens.ok() ? std::string("<ok>") : tokens.error().message;
}

using V = std::vector<std::string>;

TEST(Lexer, FoldsUnquotedIdentifiersOnly) {
  EXPECT_EQ(kinds("SeLeCt Foo, \"Foo\", \"a\"\"b\""),
            (V{"identifier:select", "identifier:foo", "punctuation:,", "quoted_identifier:Foo",
               "punctuation:,", "quoted_identifier:a\"b"}));
  EXPECT_EQ(kinds("a$b _x1 é"), (V{"identifier:a$b", "identifier:_x1", "identifier:é"}));
}

TEST(Lexer, SkipsCommentsIncludingNestedBlocks) {
  EXPECT_EQ(kinds("-- c\nselect /* a /* b */ still */ 1 -- end"),
            (V{"identifier:select", "number:1"}));
  EXPECT_EQ(kinds("select/**/1"), (V{"identifier:select", "number:1"}));
  EXPECT_NE(lexFailure("select /* a /* b */ 1"), "<ok>");
  EXPECT_NE(lexFailure("/*"), "<ok>");
}

TEST(Lexer, StandardStringsDoubleQuotesAndKeepBackslashes) {
  EXPECT_EQ(kinds("'it''s' 'a\\'"), (V{"string:it's", "string:a\\"}));
  EXPECT_NE(lexFailure("'abc"), "<ok>");
  EXPECT_NE(lexFailure("'abc''"), "<ok>");
}

TEST(Lexer, ExtendedStringsDecodeBackslashEscapes) {
  EXPECT_EQ(kinds("E'a\\'b' e'\\n\\t\\\\' E'\\101\\x42\\u0043\\U00000044' E'\\q'"),
            (V{"string:a'b", "string:\n\t\\", "string:ABCD", "string:q"}));
  EXPECT_EQ(kinds("E'\\uD83D\\uDE00'"), (V{"string:\xF0\x9F\x98\x80"}));
  EXPECT_NE(lexFailure("E'abc\\'"), "<ok>");
  EXPECT_NE(lexFailure("E'\\u12'"), "<ok>");
  EXPECT_NE(lexFailure("E'\\uD83D'"), "<ok>");
  EXPECT_NE(lexFailure("E'\\u0000'"), "<ok>");
}

TEST(Lexer, StringContinuationNeedsANewlineAndKeepsTheMode) {
  EXPECT_EQ(kinds("'a'\n'b'"), (V{"string:ab"}));
  EXPECT_EQ(kinds("'a' -- c\n  'b'"), (V{"string:ab"}));
  EXPECT_EQ(kinds("'a' 'b'"), (V{"string:a", "string:b"}));
  EXPECT_EQ(kinds("'a' /* c */\n'b'"), (V{"string:a", "string:b"}));
  // The continuation of an E'' string is still an E'' string: \' does not end it.
  EXPECT_EQ(kinds("E'a'\n'\\'', x"), (V{"string:a'", "punctuation:,", "identifier:x"}));
}

TEST(Lexer, UnicodeStringsAndIdentifiers) {
  EXPECT_EQ(kinds("U&'d\\0061t\\+000061'"), (V{"string:data"}));
  EXPECT_EQ(kinds("U&\"\\0070g_read_file\""), (V{"quoted_identifier:pg_read_file"}));
  EXPECT_EQ(kinds("u&\"d!0061t!+000061\" UESCAPE '!' x"),
            (V{"quoted_identifier:data", "identifier:x"}));
  EXPECT_EQ(kinds("U&'a\\\\b'"), (V{"string:a\\b"}));
  EXPECT_EQ(kinds("U&\"\\D83D\\DE00\""), (V{"quoted_identifier:\xF0\x9F\x98\x80"}));
  EXPECT_NE(lexFailure("U&\"\\00\""), "<ok>");
  EXPECT_NE(lexFailure("U&\"x\" UESCAPE 'ab'"), "<ok>");
  EXPECT_NE(lexFailure("U&\"x\" UESCAPE '+'"), "<ok>");
  EXPECT_NE(lexFailure("U&\"x\" UESCAPE"), "<ok>");
  EXPECT_NE(lexFailure("U&\"\\DE00\""), "<ok>");
  EXPECT_NE(lexFailure("U&\"\\0000\""), "<ok>");
  // `U &'x'` with a space is an identifier, an operator and a plain string.
  EXPECT_EQ(kinds("U &'x'"), (V{"identifier:u", "operator:&", "string:x"}));
}

TEST(Lexer, BitStringsAndNationalStrings) {
  EXPECT_EQ(kinds("B'1010' x'FF' N'abc'"), (V{"bit_string:1010", "bit_string:FF", "string:abc"}));
  EXPECT_EQ(kinds("B'10''01'"), (V{"bit_string:10", "string:01"}));
}

TEST(Lexer, DollarQuoting) {
  EXPECT_EQ(kinds("$$a;'b$$ $t$x$$y$t$ $T$1$t$2$T$"),
            (V{"string:a;'b", "string:x$$y", "string:1$t$2"}));
  EXPECT_EQ(kinds("a$$b"), (V{"identifier:a$$b"}));
  EXPECT_NE(lexFailure("$a$ never closed"), "<ok>");
  EXPECT_EQ(kinds("$ x"), (V{"other:$", "identifier:x"}));
}

TEST(Lexer, Placeholders) {
  auto tokens = lex("$1 $22 $99999999999999");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 3U);
  EXPECT_EQ((*tokens)[0].param, 1U);
  EXPECT_EQ((*tokens)[1].param, 22U);
  EXPECT_EQ((*tokens)[2].param, 0xFFFFFFFFU);
  EXPECT_NE(lexFailure("$1abc"), "<ok>");
  EXPECT_EQ(kinds("$1::vector"), (V{"param:$1", "punctuation:::", "identifier:vector"}));
}

TEST(Lexer, Numbers) {
  EXPECT_EQ(kinds("1 1.5 .5 1. 1e10 2.5E-3 1..2"),
            (V{"number:1", "number:1.5", "number:.5", "number:1.", "number:1e10", "number:2.5E-3",
               "number:1", "punctuation:..", "number:2"}));
  EXPECT_NE(lexFailure("1into"), "<ok>");
  EXPECT_NE(lexFailure("1e"), "<ok>");
  EXPECT_NE(lexFailure("0x1F"), "<ok>");
}

TEST(Lexer, OperatorsStopAtCommentsAndDropTrailingSigns) {
  EXPECT_EQ(kinds("a<=>b a<->b a<#>b a@>b a!=b"),
            (V{"identifier:a", "operator:<=>", "identifier:b", "identifier:a", "operator:<->",
               "identifier:b", "identifier:a", "operator:<#>", "identifier:b", "identifier:a",
               "operator:@>", "identifier:b", "identifier:a", "operator:<>", "identifier:b"}));
  EXPECT_EQ(kinds("1+--c\n2"), (V{"number:1", "operator:+", "number:2"}));
  EXPECT_EQ(kinds("1*/*c*/2"), (V{"number:1", "operator:*", "number:2"}));
  EXPECT_EQ(kinds("a=-1"), (V{"identifier:a", "operator:=", "operator:-", "number:1"}));
  EXPECT_EQ(kinds("a@-1"), (V{"identifier:a", "operator:@-", "number:1"}));
  EXPECT_EQ(kinds("a<+-+b"), (V{"identifier:a", "operator:<", "operator:+", "operator:-",
                                "operator:+", "identifier:b"}));
  EXPECT_EQ(kinds("1+-+--c\n"), (V{"number:1", "operator:+", "operator:-", "operator:+"}));
  EXPECT_EQ(kinds("x::int := ; [ ]"),
            (V{"identifier:x", "punctuation:::", "identifier:int",
               "punctuation::=", "punctuation:;", "punctuation:[", "punctuation:]"}));
}

TEST(Lexer, RefusesInvalidUtf8AndNul) {
  EXPECT_NE(lexFailure(std::string_view("select 1\0; drop", 16)), "<ok>");
  EXPECT_NE(lexFailure("select '\xC3'"), "<ok>");
  EXPECT_NE(lexFailure("select \xC0\xAF"), "<ok>");      // overlong
  EXPECT_NE(lexFailure("select \xED\xA0\x80"), "<ok>");  // surrogate
}

TEST(Lexer, StandardConformingStringsOff) {
  const LexOptions off{.standardConformingStrings = false};
  EXPECT_EQ(kinds("'a\\'b'", off), (V{"string:a'b"}));
  EXPECT_NE(lexFailure("U&'x'", off), "<ok>");
  EXPECT_EQ(kinds("U&\"x\"", off), (V{"quoted_identifier:x"}));
}

TEST(Lexer, OffsetsCoverTokens) {
  auto tokens = lex("select  'a'\n'b' , U&\"x\" UESCAPE '!'");
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 4U);
  EXPECT_EQ((*tokens)[0].offset, 0U);
  EXPECT_EQ((*tokens)[0].length, 6U);
  EXPECT_EQ((*tokens)[1].offset, 8U);
  EXPECT_EQ((*tokens)[1].length, 7U);  // both halves of the continued string
  EXPECT_EQ((*tokens)[3].offset, 18U);
  EXPECT_EQ((*tokens)[3].length, 17U);  // U&"x" UESCAPE '!'
}

TEST(Lexer, ErrorsNameOnlyAnOffset) {
  const std::string msg = lexFailure("select 'secret value");
  EXPECT_EQ(msg, "unterminated quoted string at byte 7");
}

}  // namespace
}  // namespace mcpdb::guard

namespace mcpdb::guard {
namespace {

// Pathological shapes must stay linear: a quadratic lexer would make this test time out.
TEST(Lexer, LargeInputsStayLinear) {
  auto repeat = [](std::string_view unit, std::size_t times) {
    std::string s;
    s.reserve(unit.size() * times);
    for (std::size_t i = 0; i < times; ++i) s += unit;
    return s;
  };
  constexpr std::size_t kTimes = 50000;
  EXPECT_TRUE(lex(repeat("'a'\n", kTimes)).ok());  // one long continued string
  EXPECT_TRUE(lex(repeat("'a' -- c\n", kTimes)).ok());
  EXPECT_TRUE(lex(repeat("$a$x$a$ ", kTimes)).ok());
  EXPECT_TRUE(lex(repeat("U&\"\\0061\" ", kTimes)).ok());
  EXPECT_TRUE(lex(repeat("/*", kTimes) + repeat("*/", kTimes)).ok());  // deep nesting
  EXPECT_FALSE(lex("$a$" + repeat("$b$ ", kTimes)).ok());
  EXPECT_TRUE(lex(repeat("+/**/", kTimes)).ok());
  EXPECT_TRUE(lex(repeat("+", kTimes) + "1").ok());
  EXPECT_TRUE(lex(repeat("+", kTimes) + "--").ok());
  EXPECT_TRUE(lex(repeat("\n", kTimes)).ok());
  EXPECT_FALSE(checkTemplate(repeat("SELECT 1;", kTimes)).allowed);
}

}  // namespace
}  // namespace mcpdb::guard
