// The wrapper that caps values at the source (source_cap.hpp): its exact text for each kind of
// column, that it passes the statement guard, and the statement's own text kept intact.
#include <gtest/gtest.h>

#include "engines/postgres/guard/guard.hpp"
#include "engines/postgres/source_cap.hpp"

namespace mcpdb::postgres {
namespace {

constexpr std::uint64_t kCap = 262144;

TEST(SourceCap, WrapsEachColumnByItsType) {
  const CappedStatement c = capAtSource("SELECT id, body, n, data, doc, tags FROM t WHERE id = $1",
                                        {{"id", oid::kInt8},
                                         {"body", oid::kText},
                                         {"n", oid::kNumeric},
                                         {"data", oid::kBytea},
                                         {"doc", oid::kJsonb},
                                         {"tags", oid::kTextArray}},
                                        kCap);
  EXPECT_EQ(c.sql,
            "SELECT q.c1 AS \"id\", "
            "CASE WHEN pg_catalog.octet_length(q.c2) OPERATOR(pg_catalog.>) 262144 THEN NULL "
            "ELSE q.c2 END AS \"body\", "
            "q.c3 AS \"n\", "
            "CASE WHEN pg_catalog.octet_length(q.c4) OPERATOR(pg_catalog.>) 131071 THEN NULL "
            "ELSE q.c4 END AS \"data\", "
            "CASE WHEN pg_catalog.octet_length(pg_catalog.format('%s', q.c5)) "
            "OPERATOR(pg_catalog.>) 262144 THEN NULL ELSE q.c5 END AS \"doc\", "
            "CASE WHEN pg_catalog.octet_length(pg_catalog.format('%s', q.c6)) "
            "OPERATOR(pg_catalog.>) 262144 THEN NULL ELSE q.c6 END AS \"tags\", "
            "ARRAY[q.c2 IS NULL, q.c4 IS NULL, q.c5 IS NULL, q.c6 IS NULL, "
            "q.mcpdb_end IS NULL] AS mcpdb_nulls "
            "FROM (SELECT *, NULL AS mcpdb_end FROM (\n"
            "SELECT id, body, n, data, doc, tags FROM t WHERE id = $1\n"
            ") AS s OFFSET 0) AS q(c1, c2, c3, c4, c5, c6, mcpdb_end)");
  EXPECT_EQ(c.guarded, (std::vector<bool>{false, true, false, true, true, true}));
  EXPECT_EQ(c.cap, kCap);
  const guard::Verdict v = guard::checkTemplate(c.sql);
  EXPECT_TRUE(v.allowed) << guard::toStatus(v).error().message;
  EXPECT_EQ(v.placeholders.size(), 1U);
}

// varchar(n) and char(n) are bounded by their type modifier (n + 4): n characters of up to four
// bytes each. Passed through when that fits the cap, guarded otherwise and without a modifier.
TEST(SourceCap, AVarcharIsPassedThroughWhenItsLengthFits) {
  const std::vector<std::pair<std::string, Oid>> columns = {
      {"v", oid::kVarchar}, {"c", oid::kBpchar}, {"free", oid::kVarchar}, {"t", oid::kText}};
  const CappedStatement c = capAtSource("SELECT v, c, free, t FROM t", columns, 8, {6, 5, -1, 6});
  // varchar(2): 8 bytes at most, within a cap of 8; char(1): 4; varchar with no length and text
  // (a modifier on text means nothing here) are measured.
  EXPECT_EQ(c.guarded, (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(c.modifiers, (std::vector<int>{6, 5, -1, 6}));
  // varchar(3): 12 bytes at most, over the cap.
  EXPECT_EQ(capAtSource("SELECT v FROM t", {{"v", oid::kVarchar}}, 8, {7}).guarded,
            std::vector<bool>{true});
  // No modifiers given: every varchar is measured, and the modifiers read -1.
  const CappedStatement none = capAtSource("SELECT v FROM t", {{"v", oid::kVarchar}}, kCap);
  EXPECT_EQ(none.guarded, std::vector<bool>{true});
  EXPECT_EQ(none.modifiers, std::vector<int>{-1});
  // Under the default cap: varchar(65537) may hold 262,148 bytes, measured; varchar(65536) at
  // most 262,144, exactly the cap, passed through.
  EXPECT_EQ(capAtSource("SELECT v FROM t", {{"v", oid::kVarchar}}, kCap, {65537 + 4}).guarded,
            std::vector<bool>{true});
  EXPECT_EQ(capAtSource("SELECT v FROM t", {{"v", oid::kVarchar}}, kCap, {65536 + 4}).guarded,
            std::vector<bool>{false});
}

// A type whose text is bounded is passed through only when the bound is within the cap.
TEST(SourceCap, ABoundedTypeIsGuardedUnderASmallerCap) {
  const CappedStatement wide = capAtSource("SELECT n FROM t", {{"n", oid::kNumeric}}, kCap);
  EXPECT_EQ(wide.guarded, std::vector<bool>{false});
  const CappedStatement narrow = capAtSource("SELECT n FROM t", {{"n", oid::kNumeric}}, 1024);
  EXPECT_EQ(narrow.guarded, std::vector<bool>{true});
  const CappedStatement tiny = capAtSource("SELECT i FROM t", {{"i", oid::kInt8}}, 8);
  EXPECT_EQ(tiny.guarded, std::vector<bool>{true});
  // No guarded column: the NULL map is empty, and the statement still runs inside the wrapper.
  const CappedStatement none = capAtSource("SELECT i FROM t", {{"i", oid::kInt4}}, kCap);
  EXPECT_EQ(none.sql,
            "SELECT q.c1 AS \"i\", ARRAY[q.mcpdb_end IS NULL] AS mcpdb_nulls "
            "FROM (SELECT *, NULL AS mcpdb_end FROM (\nSELECT i FROM t\n) AS s OFFSET 0) "
            "AS q(c1, mcpdb_end)");
}

// Names from the catalog are quoted (a double quote doubled), duplicates keep their keys, and a
// user-defined type is measured by its text form.
TEST(SourceCap, QuotesNamesAndMeasuresUnknownTypesByText) {
  const CappedStatement c =
      capAtSource("SELECT a, a, x AS \"we\"\"ird\" FROM t",
                  {{"a", oid::kText}, {"a_2", oid::kText}, {"we\"ird", 16385}}, kCap);
  EXPECT_NE(c.sql.find("END AS \"a\", "), std::string::npos) << c.sql;
  EXPECT_NE(c.sql.find("END AS \"a_2\", "), std::string::npos) << c.sql;
  EXPECT_NE(c.sql.find("pg_catalog.format('%s', q.c3)) OPERATOR(pg_catalog.>) 262144 THEN NULL "
                       "ELSE q.c3 END AS \"we\"\"ird\""),
            std::string::npos)
      << c.sql;
  const guard::Verdict v = guard::checkTemplate(c.sql);
  EXPECT_TRUE(v.allowed) << guard::toStatus(v).error().message;
}

// What ends the statement cannot end the wrapper: a trailing line comment stays on its own line,
// trailing semicolons are dropped.
TEST(SourceCap, TheStatementsEndCannotEndTheWrapper) {
  const CappedStatement comment =
      capAtSource("SELECT t FROM x -- the last line", {{"t", oid::kText}}, kCap);
  EXPECT_NE(comment.sql.find("-- the last line\n) AS s OFFSET 0) AS q(c1, mcpdb_end)"),
            std::string::npos);
  EXPECT_TRUE(guard::checkTemplate(comment.sql).allowed);
  const CappedStatement semi = capAtSource("SELECT t FROM x ; \n", {{"t", oid::kText}}, kCap);
  EXPECT_NE(semi.sql.find("(\nSELECT t FROM x\n) AS s"), std::string::npos) << semi.sql;
  EXPECT_TRUE(guard::checkTemplate(semi.sql).allowed);
}

}  // namespace
}  // namespace mcpdb::postgres
