#include "engines/postgres/guard/guard.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "engines/postgres/guard/denylist.hpp"

namespace mcpdb::postgres::guard {
namespace {

TEST(Guard, ReportsContiguousPlaceholders) {
  const Verdict v = checkTemplate("SELECT * FROM t WHERE a = $2 AND b = $1 OR c = $2");
  ASSERT_TRUE(v.allowed) << v.message;
  EXPECT_EQ(v.rule, Rule::None);
  EXPECT_TRUE(v.message.empty());
  EXPECT_EQ(v.placeholders, (std::vector<std::uint32_t>{1, 2}));
}

TEST(Guard, NamesTheMissingPlaceholder) {
  const Verdict v = checkTemplate("SELECT $1, $3");
  EXPECT_FALSE(v.allowed);
  EXPECT_EQ(ruleId(v.rule), "placeholder_gap");
  EXPECT_NE(v.message.find("$2"), std::string::npos);
  EXPECT_EQ(v.placeholders, (std::vector<std::uint32_t>{1, 3}));
}

TEST(Guard, NoPlaceholdersIsFine) {
  const Verdict v = checkTemplate("SELECT 1");
  EXPECT_TRUE(v.allowed);
  EXPECT_TRUE(v.placeholders.empty());
}

TEST(Guard, MessagesNeverEchoTheSql) {
  // Each template carries a marker in a string, identifier or comment; no message may repeat it.
  const char* templates[] = {
      "SELECT 'SECRETMARK'; DROP TABLE x",
      "DELETE FROM secretmark_table WHERE x = 'SECRETMARK'",
      "SELECT pg_read_file('SECRETMARK')",
      "SELECT * FROM secretmark INTO t",
      "SELECT * FROM secretmark FOR UPDATE",
      "SELECT 'SECRETMARK",
      "SELECT \"SECRETMARK\"(1) FROM secretmark WHERE x = $2",
      "SELECT pg_sleep_secretmark(1)",
      "secretmark",
      "WITH secretmark AS (DELETE FROM t RETURNING *) SELECT 1",
  };
  for (const char* sql : templates) {
    const Verdict v = checkTemplate(sql);
    EXPECT_FALSE(v.allowed) << sql;
    std::string lower = v.message;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(lower.find("secretmark"), std::string::npos) << sql << " -> " << v.message;
  }
}

TEST(Guard, DeniedFunctionMessageNamesTheEntry) {
  const Verdict v = checkTemplate("SELECT pg_catalog.PG_SLEEP_FOR('1s')");
  EXPECT_EQ(ruleId(v.rule), "denied_function");
  EXPECT_EQ(v.message, "function pg_sleep* is not allowed (sleeps or takes locks)");
}

TEST(Guard, ToStatus) {
  EXPECT_TRUE(toStatus(checkTemplate("SELECT 1")).ok());
  const Status s = toStatus(checkTemplate("SELECT 1 FOR SHARE"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::PermissionDenied);
  EXPECT_NE(s.error().message.find("locking_clause"), std::string::npos);
}

TEST(Guard, EveryRuleHasADistinctId) {
  std::set<std::string_view> ids;
  for (int r = static_cast<int>(Rule::None); r <= static_cast<int>(kLastRule); ++r) {
    EXPECT_TRUE(ids.insert(ruleId(static_cast<Rule>(r))).second) << r;
  }
}

TEST(Guard, ParseErrorsGiveLineAndColumnInCharacters) {
  // The parser counts characters: the two-byte é before the error must count once.
  const Verdict v = checkTemplate("SELECT 'é',\n  'abc");
  ASSERT_FALSE(v.allowed);
  EXPECT_EQ(ruleId(v.rule), "parse_error");
  EXPECT_EQ(v.line, 2);
  EXPECT_EQ(v.column, 3);
  EXPECT_NE(v.message.find("line 2, column 3"), std::string::npos) << v.message;
  EXPECT_NE(v.detail.find("unterminated quoted string"), std::string::npos) << v.detail;
  // The client-facing status keeps the parser's words (which quote the text) operator-only.
  const Status s = toStatus(v);
  EXPECT_EQ(s.error().message.find("abc"), std::string::npos);
  EXPECT_NE(s.error().detail.find("abc"), std::string::npos);
}

TEST(Guard, RefusesOversizedAndNulTextUnparsed) {
  const std::string big = "SELECT 1" + std::string(kMaxTemplateBytes, ' ');
  EXPECT_EQ(ruleId(checkTemplate(big).rule), "too_long");
  EXPECT_EQ(ruleId(checkTemplate(std::string("SELECT 1\0; DROP TABLE t", 24)).rule), "parse_error");
}

// The worst depth a text can reach within its size cap (one tree level per two bytes) and the
// parser's own nesting limit all end in a verdict, never a crash, whatever the caller's stack.
std::string deepestChain(std::size_t cap) {
  std::string chain = "SELECT 1";
  while (chain.size() + 2 <= cap) chain += "+1";
  return chain;
}

TEST(Guard, DeepestTemplateWithinTheCapGetsAVerdict) {
  EXPECT_TRUE(checkTemplate(deepestChain(kMaxTemplateBytes)).allowed);
  const std::string parens = "SELECT " + std::string(20000, '(') + "1" + std::string(20000, ')');
  EXPECT_EQ(ruleId(checkTemplate(parens).rule), "parse_error");
  std::string nots = "SELECT ";
  for (int i = 0; i < 15000; ++i) nots += "NOT ";
  EXPECT_FALSE(checkTemplate(nots + "true").allowed);
}

TEST(Guard, DeepestBodyWithinTheCapGetsAVerdict) {
  EXPECT_TRUE(analyseBody(deepestChain(kMaxBodyBytes), BodyKind::View).allowed);
  EXPECT_EQ(ruleId(analyseBody(deepestChain(kMaxBodyBytes) + "+1", BodyKind::View).rule),
            "too_long");
}

TEST(Guard, CollectsEveryNameTheStatementReaches) {
  const Verdict v = checkTemplate(
      "WITH c AS (SELECT * FROM s.t1) "
      "SELECT f(a), pg_catalog.lower(b), x OPERATOR(public.+) y, z BETWEEN 1 AND 2, "
      "w = ANY (SELECT v FROM t2), CASE k WHEN 1 THEN 2 END, $1::myschema.mytype, r.attr_fn, "
      "count(*) "
      "FROM c, U&\"\\0074\\0033\"(), t4 r TABLESAMPLE bernoulli(5)");
  ASSERT_TRUE(v.allowed) << v.message << v.detail;
  const References& r = v.references;
  auto has = [](const std::vector<Name>& list, const Name& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  EXPECT_TRUE(has(r.functions, Name{"f"}));
  EXPECT_TRUE(has(r.functions, (Name{"pg_catalog", "lower"})));
  EXPECT_TRUE(has(r.functions, Name{"count"}));
  EXPECT_TRUE(has(r.functions, Name{"t3"}));  // U&"\0074\0033" decoded by the parser
  EXPECT_TRUE(has(r.operators, (Name{"public", "+"})));
  EXPECT_TRUE(has(r.operators, Name{">="}));
  EXPECT_TRUE(has(r.operators, Name{"<="}));
  EXPECT_TRUE(has(r.operators, Name{"="}));
  EXPECT_TRUE(has(r.relations, (Name{"s", "t1"})));
  EXPECT_TRUE(has(r.relations, Name{"t2"}));
  EXPECT_TRUE(has(r.relations, Name{"c"}));
  EXPECT_TRUE(has(r.relations, Name{"t4"}));
  EXPECT_TRUE(has(r.types, (Name{"myschema", "mytype"})));
  EXPECT_TRUE(has(r.attribute_functions, Name{"attr_fn"}));
  EXPECT_TRUE(has(r.tablesample, Name{"bernoulli"}));
  // Each name once.
  EXPECT_EQ(std::count(r.operators.begin(), r.operators.end(), Name{"="}), 1);
}

TEST(Guard, BodiesFollowTheirOwnRules) {
  // A SQL function may hold several SELECTs, numbered arguments with gaps, or nothing.
  EXPECT_TRUE(analyseBody("SELECT $2; SELECT 1", BodyKind::SqlFunction).allowed);
  EXPECT_TRUE(analyseBody("", BodyKind::SqlFunction).allowed);
  EXPECT_EQ(ruleId(analyseBody("SELECT 1; INSERT INTO t VALUES (1)", BodyKind::SqlFunction).rule),
            "not_select");
  EXPECT_EQ(ruleId(analyseBody("SELECT 1; SELECT 2", BodyKind::View).rule), "multiple_statements");
  const Verdict e = analyseBody("(owner = current_user AND f(x))", BodyKind::Expression);
  ASSERT_TRUE(e.allowed) << e.message;
  EXPECT_EQ(e.references.functions, std::vector<Name>{Name{"f"}});
  EXPECT_FALSE(analyseBody("1) ; DELETE FROM t; SELECT (1", BodyKind::Expression).allowed);
}

TEST(Guard, DisplayNameQuotesOnlyWhereNeeded) {
  EXPECT_EQ(displayName({"public", "f"}), "public.f");
  EXPECT_EQ(displayName({"My Schema", "F\"x"}), "\"My Schema\".\"F\"\"x\"");
  EXPECT_EQ(displayName({"pg_catalog", "<->"}), "pg_catalog.<->");  // operators are never quoted
}

TEST(Denylist, EntriesAreLowerCaseAndUnique) {
  std::set<std::string_view> names;
  for (const DeniedFunction& entry : deniedFunctions()) {
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
    for (char c : entry.name) EXPECT_FALSE(c >= 'A' && c <= 'Z') << entry.name;
    EXPECT_FALSE(entry.reason.empty()) << entry.name;
  }
  EXPECT_GT(names.size(), 50U);
}

TEST(Denylist, MatchesExactAndPrefixEntries) {
  EXPECT_NE(findDeniedFunction("pg_read_file"), nullptr);
  EXPECT_NE(findDeniedFunction("PG_LS_WALDIR"), nullptr);
  EXPECT_NE(findDeniedFunction("dblink_exec"), nullptr);
  EXPECT_NE(findDeniedFunction("pg_stat_reset_shared"), nullptr);
  EXPECT_EQ(findDeniedFunction("pg_read_files_list"), nullptr);
  EXPECT_EQ(findDeniedFunction("lo_something"), nullptr);
  EXPECT_EQ(findDeniedFunction("currval"), nullptr);
  EXPECT_EQ(findDeniedFunction("now"), nullptr);
}

}  // namespace
}  // namespace mcpdb::postgres::guard
