// The MySQL guard's API (verdict fields, toStatus, the lists) and the lexer's edge cases. The
// verdict files in guard_cases/ hold the bulk of the statement cases.
#include "engines/mysql/guard.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "engines/mysql/lexer.hpp"

namespace mcpdb::mysql::guard {
namespace {

std::vector<TokenKind> kinds(std::string_view text) {
  const LexResult r = lex(text);
  EXPECT_EQ(r.error, LexError::None) << text;
  std::vector<TokenKind> out;
  for (const Token& t : r.tokens) out.push_back(t.kind);
  return out;
}

LexError errorOf(std::string_view text) {
  return lex(text).error;
}

// --- lexer ---------------------------------------------------------------------------------

TEST(MysqlLexer, StringsWithDoubledQuotesAreOneToken) {
  const LexResult r = lex("SELECT 'it''s', 'a\\_b', N'x', _utf8mb4'y'");
  ASSERT_EQ(r.error, LexError::None);
  ASSERT_EQ(r.tokens.size(), 9U);
  EXPECT_EQ(r.tokens[1].kind, TokenKind::String);
  EXPECT_EQ(r.tokens[1].text, "'it''s'");
  EXPECT_EQ(r.tokens[3].text, "'a\\_b'");
  EXPECT_EQ(r.tokens[5].kind, TokenKind::String);
  EXPECT_EQ(r.tokens[5].text, "N'x'");
  EXPECT_EQ(r.tokens[7].kind, TokenKind::Word);  // the introducer, then the string
  EXPECT_EQ(r.tokens[8].kind, TokenKind::String);
}

TEST(MysqlLexer, BackslashEscapesOtherThanPercentAndUnderscoreAreAmbiguous) {
  for (const char* text : {"'\\''", "'a\\'b'", "'\\\\'", "'\\n'", "'\\0'", "'\\Z'", "'\\d'", "'x\\",
                           "'\\\"'", "@'\\''"}) {
    EXPECT_EQ(errorOf(text), LexError::AmbiguousQuoting) << text;
  }
  EXPECT_EQ(errorOf("'\\%'"), LexError::None);
  EXPECT_EQ(errorOf("'\\_'"), LexError::None);
}

TEST(MysqlLexer, DoubleQuotesAreAmbiguousWherever) {
  for (const char* text : {"\"x\"", "SELECT \"a\"", "SELECT @\"v\"", "SELECT a\"b"}) {
    EXPECT_EQ(errorOf(text), LexError::AmbiguousQuoting) << text;
  }
  // Inside a '...' string or a `...` name a double quote is only a character.
  EXPECT_EQ(errorOf("SELECT 'say \"hi\"', `a\"b`"), LexError::None);
}

TEST(MysqlLexer, BackquotedNamesDecodeDoubledBackticks) {
  const LexResult r = lex("`a``b` `c'd` `\\`");
  ASSERT_EQ(r.error, LexError::None);
  ASSERT_EQ(r.tokens.size(), 3U);
  EXPECT_EQ(r.tokens[0].text, "a`b");
  EXPECT_EQ(r.tokens[1].text, "c'd");
  EXPECT_EQ(r.tokens[2].text, "\\");  // no escapes inside backquotes
}

TEST(MysqlLexer, UnterminatedLiteralsAndCommentsAreErrors) {
  for (const char* text : {"'abc", "'it''", "`abc", "`a``", "/* x", "/* x *", "SELECT 1 /*", "x'ab",
                           "N'", "@'x", "@`x"}) {
    EXPECT_EQ(errorOf(text), LexError::Unterminated) << text;
  }
}

TEST(MysqlLexer, DashDashIsACommentOnlyBeforeSpaceControlOrEnd) {
  EXPECT_EQ(kinds("1 -- x"), (std::vector<TokenKind>{TokenKind::Number}));
  EXPECT_EQ(kinds("1 --\tx"), (std::vector<TokenKind>{TokenKind::Number}));
  EXPECT_EQ(kinds("1 --"), (std::vector<TokenKind>{TokenKind::Number}));
  EXPECT_EQ(errorOf("1 --\x01"), LexError::AmbiguousComment);
  EXPECT_EQ(kinds("1 --1"), (std::vector<TokenKind>{TokenKind::Number, TokenKind::Operator,
                                                    TokenKind::Operator, TokenKind::Number}));
  EXPECT_EQ(kinds("1 --x"), (std::vector<TokenKind>{TokenKind::Number, TokenKind::Operator,
                                                    TokenKind::Operator, TokenKind::Word}));
}

TEST(MysqlLexer, LineCommentsEndAtNewlineOnly) {
  EXPECT_EQ(kinds("1 # x\n2"), (std::vector<TokenKind>{TokenKind::Number, TokenKind::Number}));
  EXPECT_EQ(kinds("1 -- x\n2"), (std::vector<TokenKind>{TokenKind::Number, TokenKind::Number}));
  EXPECT_EQ(kinds("1 # x ' \" ` /*"), (std::vector<TokenKind>{TokenKind::Number}));
  EXPECT_EQ(errorOf("1 # x\r2"), LexError::AmbiguousComment);
  EXPECT_EQ(errorOf("1 -- x\r\n2"), LexError::AmbiguousComment);
  EXPECT_TRUE(lex("1 # x").had_comment);
}

TEST(MysqlLexer, ExecutableCommentsAndHintsInEverySpelling) {
  for (const char* text : {"/*! x */", "/*!50000 x */", "/*!80000SELECT*/", "/*M! x */",
                           "/*M!100100 x */", "/*m! x */", "SELECT 1 /*!*/", "/*!"}) {
    EXPECT_EQ(errorOf(text), LexError::ExecutableComment) << text;
  }
  for (const char* text : {"/*+ SET_VAR(x=1) */", "SELECT /*+ BKA(t) */ 1", "/*+"}) {
    EXPECT_EQ(errorOf(text), LexError::OptimizerHint) << text;
  }
  EXPECT_EQ(errorOf("/* ! not executable */"), LexError::None);
  EXPECT_EQ(errorOf("/**/ /***/ /* M! */"), LexError::None);
}

TEST(MysqlLexer, NestedCommentOpenersAreAmbiguous) {
  EXPECT_EQ(errorOf("/* a /* b */"), LexError::AmbiguousComment);
  EXPECT_EQ(errorOf("/* a /*! b */ */"), LexError::AmbiguousComment);
  EXPECT_EQ(errorOf("/* a * / b */"), LexError::None);
}

TEST(MysqlLexer, NumbersAndLiterals) {
  for (const char* text : {"12", "1.5", "1.", ".5", "1e3", "1.5E-3", "0x1F", "0b101", "X'0a'",
                           "x''", "B'101'", "b''"}) {
    EXPECT_EQ(kinds(text), (std::vector<TokenKind>{TokenKind::Number})) << text;
  }
  // Digits followed by letters are a name in MySQL; 0X1F (capital X) too.
  EXPECT_EQ(kinds("1abc"), (std::vector<TokenKind>{TokenKind::Word}));
  EXPECT_EQ(kinds("0X1F"), (std::vector<TokenKind>{TokenKind::Word}));
  EXPECT_EQ(kinds("0xZZ"), (std::vector<TokenKind>{TokenKind::Word}));
  for (const char* text : {"X'0g'", "X'abc'", "B'102'", "1.5abc", "1e5x"}) {
    EXPECT_EQ(errorOf(text), LexError::BadLiteral) << text;
  }
}

TEST(MysqlLexer, VariablesPlaceholdersAndAssignment) {
  EXPECT_EQ(kinds("@x @@x @@session.sql_mode @'a b' @`c` @"),
            (std::vector<TokenKind>(6, TokenKind::Variable)));
  EXPECT_EQ(kinds("? := :"), (std::vector<TokenKind>{TokenKind::Placeholder, TokenKind::Assign,
                                                     TokenKind::Operator}));
  const LexResult r = lex("@'a;b' ;");
  ASSERT_EQ(r.error, LexError::None);
  EXPECT_EQ(r.tokens.size(), 2U);
}

TEST(MysqlLexer, NullEscapeAndStrayBackslash) {
  EXPECT_EQ(kinds("\\N"), (std::vector<TokenKind>{TokenKind::Word}));
  EXPECT_EQ(errorOf("\\x"), LexError::BadCharacter);
  EXPECT_EQ(errorOf("\\"), LexError::BadCharacter);
  EXPECT_EQ(errorOf("SELECT [a]"), LexError::BadCharacter);
  EXPECT_EQ(errorOf(std::string_view("SELECT \0", 8)), LexError::BadCharacter);
}

TEST(MysqlLexer, OffsetsAndSpacingAreRecorded) {
  const LexResult r = lex("a /*c*/.b . c(");
  ASSERT_EQ(r.error, LexError::None);
  ASSERT_EQ(r.tokens.size(), 6U);
  EXPECT_EQ(r.tokens[1].offset, 7U);
  EXPECT_TRUE(r.tokens[1].spaced_before);
  EXPECT_FALSE(r.tokens[2].spaced_before);
  EXPECT_TRUE(r.tokens[3].spaced_before);
  EXPECT_EQ(r.tokens[5].kind, TokenKind::LParen);
}

TEST(MysqlLexer, NameAfterDotIsNotANumber) {
  EXPECT_EQ(kinds("t.5"),
            (std::vector<TokenKind>{TokenKind::Word, TokenKind::Dot, TokenKind::Number}));
  EXPECT_EQ(kinds("t .5"), (std::vector<TokenKind>{TokenKind::Word, TokenKind::Number}));
}

// --- the guard's API -------------------------------------------------------------------------

TEST(MysqlGuard, CountsPlaceholders) {
  const Verdict v = checkTemplate("SELECT * FROM t WHERE a = ? AND b IN (?, ?) LIMIT ? OFFSET ?");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.rule, Rule::None);
  EXPECT_TRUE(v.message.empty());
  EXPECT_EQ(v.placeholders, 5U);
}

TEST(MysqlGuard, QuestionMarksInLiteralsAndCommentsAreNotPlaceholders) {
  const Verdict v = checkTemplate("SELECT '?', `?` /* ? */ FROM t # ?\nWHERE a = ? -- ?");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.placeholders, 1U);
}

TEST(MysqlGuard, ListsUnknownFunctionsWithTheirQualification) {
  const Verdict v = checkTemplate(
      "SELECT f(a), app.g(b), `h`(c), CONCAT(a, b), COUNT(*), f(x), `app`.`g`(y) FROM t");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.called_functions, (std::vector<Name>{{"f"}, {"app", "g"}, {"h"}}));
}

TEST(MysqlGuard, BackquotedBuiltinNamesAreNotTrustedAsBuiltins) {
  // `if`(...) is not the IF() of the grammar but a generic call that may reach a stored function.
  const Verdict v = checkTemplate("SELECT `if`(a, 1, 2), `concat`(a) FROM t");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.called_functions, (std::vector<Name>{{"if"}, {"concat"}}));
}

TEST(MysqlGuard, KeywordsAndShapesBeforeParenthesesAreNotCalls) {
  const Verdict v = checkTemplate(
      "WITH c (x) AS (SELECT 1), d AS (SELECT 2) SELECT CAST(a AS DECIMAL(10, 2)), x IN (1), "
      "EXISTS (SELECT 1) FROM (SELECT 1 AS a) AS t (a) JOIN (SELECT 2) u (b) ON (1) WHERE "
      "NOT (a) AND (b) OR ROW(a, b) = ROW(1, 2)");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_TRUE(v.called_functions.empty()) << displayName(v.called_functions.front());
}

TEST(MysqlGuard, CollectsRelationsBestEffort) {
  const Verdict v = checkTemplate(
      "SELECT * FROM a, app.b AS bb JOIN `c d` ON 1 LEFT JOIN (SELECT * FROM e) x ON 1, "
      "JSON_TABLE('[]', '$[*]' COLUMNS (v INT PATH '$')) j WHERE a.x IN (SELECT y FROM f) AND "
      "EXTRACT(YEAR FROM d) = TRIM(LEADING '0' FROM s) AND SUBSTRING(s FROM 2) = ''");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.relations, (std::vector<Name>{{"a"}, {"app", "b"}, {"c d"}, {"e"}, {"f"}}));
}

TEST(MysqlGuard, RefusalCarriesPositionAndShortExcerptOnly) {
  std::string sql = "SELECT a,\n  b INTO OUTFILE '/tmp/x' FROM t WHERE c = '";
  sql += std::string(500, 's');
  sql += "'";
  const Verdict v = checkTemplate(sql);
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(ruleId(v.rule), "select_into");
  EXPECT_EQ(v.line, 2);
  EXPECT_EQ(v.column, 5);
  EXPECT_NE(v.message.find("line 2, column 5"), std::string::npos);
  EXPECT_EQ(v.message.find("/tmp/x"), std::string::npos);  // the message quotes nothing
  EXPECT_LT(v.detail.size(), 48U);
  EXPECT_NE(v.detail.find("INTO OUTFILE"), std::string::npos);
}

TEST(MysqlGuard, ToStatusIsPermissionDeniedNamingTheRule) {
  const Verdict denied = checkTemplate("SELECT SLEEP(10)");
  const Status s = toStatus(denied);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::PermissionDenied);
  EXPECT_NE(s.error().message.find("(denied_function)"), std::string::npos);
  EXPECT_NE(s.error().message.find("SLEEP"), std::string::npos);
  EXPECT_TRUE(toStatus(checkTemplate("SELECT 1")).ok());
}

TEST(MysqlGuard, EveryRuleHasADistinctSnakeCaseId) {
  std::set<std::string_view> seen;
  for (int r = 1; r <= static_cast<int>(kLastRule); ++r) {
    const std::string_view id = ruleId(static_cast<Rule>(r));
    EXPECT_FALSE(id.empty());
    EXPECT_EQ(id.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos) << id;
    EXPECT_TRUE(seen.insert(id).second) << id;
  }
  EXPECT_EQ(ruleId(Rule::None), "");
}

TEST(MysqlGuard, LengthLimit) {
  std::string sql = "SELECT 1";
  sql += std::string(kMaxTemplateBytes, ' ');
  EXPECT_EQ(ruleId(checkTemplate(sql).rule), "too_long");
  EXPECT_TRUE(checkTemplate("SELECT 1" + std::string(kMaxTemplateBytes - 8, ' ')).allowed);
}

TEST(MysqlGuard, DepthLimit) {
  const auto nested = [](int depth) {
    return "SELECT " + std::string(static_cast<std::size_t>(depth), '(') + "1" +
           std::string(static_cast<std::size_t>(depth), ')');
  };
  EXPECT_TRUE(checkTemplate(nested(kMaxDepth)).allowed);
  EXPECT_EQ(ruleId(checkTemplate(nested(kMaxDepth + 1)).rule), "too_deep");
  EXPECT_EQ(ruleId(checkTemplate(nested(20000)).rule), "too_deep");
}

TEST(MysqlGuard, InvalidUtf8AndNulAreParseErrors) {
  EXPECT_EQ(ruleId(checkTemplate("SELECT '\xff'").rule), "parse_error");
  EXPECT_EQ(ruleId(checkTemplate(std::string_view("SELECT 1\0", 9)).rule), "parse_error");
  EXPECT_TRUE(checkTemplate("SELECT 'héllo', `naïve` FROM t").allowed);
}

TEST(MysqlGuard, DenylistMatchesAnyCaseAndPrefixes) {
  ASSERT_NE(findDeniedFunction("SLEEP"), nullptr);
  EXPECT_EQ(findDeniedFunction("SLEEP")->name, "sleep");
  ASSERT_NE(findDeniedFunction("Keyring_Key_Store"), nullptr);
  EXPECT_TRUE(findDeniedFunction("keyring_key_store")->prefix);
  EXPECT_EQ(findDeniedFunction("sleepy"), nullptr);
  EXPECT_EQ(findDeniedFunction("uuid_short"), nullptr);  // harmless: not denied
}

TEST(MysqlGuard, BuiltinsAreCaseInsensitiveAndExcludeDeniedNames) {
  EXPECT_TRUE(isBuiltinFunction("CONCAT"));
  EXPECT_TRUE(isBuiltinFunction("json_extract"));
  EXPECT_FALSE(isBuiltinFunction("my_func"));
  for (const char* denied : {"sleep", "benchmark", "load_file", "get_lock", "nextval"}) {
    EXPECT_FALSE(isBuiltinFunction(denied)) << denied;
  }
}

TEST(MysqlGuard, OneServerBuiltinsCountOnlyForThatServer) {
  EXPECT_FALSE(isBuiltinFunction("regexp_like"));
  EXPECT_TRUE(isBuiltinFunction("regexp_like", Dialect::Mysql));
  EXPECT_FALSE(isBuiltinFunction("regexp_like", Dialect::Mariadb));
  EXPECT_FALSE(isBuiltinFunction("nvl"));
  EXPECT_FALSE(isBuiltinFunction("nvl", Dialect::Mysql));
  EXPECT_TRUE(isBuiltinFunction("NVL", Dialect::Mariadb));
  for (Dialect d : {Dialect::Either, Dialect::Mysql, Dialect::Mariadb}) {
    EXPECT_TRUE(isBuiltinFunction("concat", d));
  }
}

TEST(MysqlGuard, LastInsertIdOnlyWithoutArgument) {
  EXPECT_TRUE(checkTemplate("SELECT LAST_INSERT_ID()").allowed);
  EXPECT_EQ(ruleId(checkTemplate("SELECT LAST_INSERT_ID(5)").rule), "denied_function");
}

TEST(MysqlGuard, DisplayNameQuotesWhereNeeded) {
  EXPECT_EQ(displayName({"app", "f"}), "app.f");
  EXPECT_EQ(displayName({"my db", "a`b"}), "`my db`.`a``b`");
}

TEST(MysqlGuard, RoutineBodies) {
  const Verdict ret = checkRoutineBody("RETURN CONCAT(a, helper(b))");
  ASSERT_TRUE(ret.allowed) << ret.message;
  EXPECT_EQ(ret.called_functions, (std::vector<Name>{{"helper"}}));
  EXPECT_TRUE(
      checkRoutineBody("BEGIN DECLARE x INT DEFAULT 0; SET x = a + 1; RETURN x; END").allowed);
  EXPECT_EQ(ruleId(checkRoutineBody("BEGIN INSERT INTO t VALUES (1); RETURN 1; END").rule),
            "routine_statement");
  EXPECT_EQ(ruleId(checkRoutineBody("BEGIN SET y = 1; RETURN 1; END").rule), "routine_statement");
  EXPECT_EQ(ruleId(checkRoutineBody("RETURN SLEEP(1)").rule), "denied_function");
}

}  // namespace
}  // namespace mcpdb::mysql::guard
