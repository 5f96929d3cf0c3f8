// The byte cap's wrapper for MySQL/MariaDB (source_cap.hpp), without a server: its exact text,
// which columns it guards and how (text by its bytes, binary by its base64), the statement's end
// (semicolons and comments dropped, a line comment kept off the wrapper's text), the LIMIT it adds
// to an ordered statement without one, the column-list form for names a derived table cannot
// carry, and the check of a prepared result against the shape it was written for. Every wrapper
// written here passes the guard with the statement's placeholders.
#include <gtest/gtest.h>

#include "engines/mysql/guard.hpp"
#include "engines/mysql/source_cap.hpp"

namespace mcpdb::mysql {
namespace {

constexpr unsigned kLong = 15;    // MYSQL_TYPE_VARCHAR
constexpr unsigned kBlob = 252;   // MYSQL_TYPE_BLOB
constexpr unsigned kInteger = 3;  // MYSQL_TYPE_LONG
constexpr std::uint64_t kMax = 4294967295ULL;

ShapeColumn text(std::string name, std::uint64_t max = kMax) {
  return {Column{std::move(name), "string"}, max, false, kBlob, "", ""};
}
ShapeColumn bytes(std::string name) {
  return {Column{std::move(name), "bytes"}, kMax, true, kBlob, "", ""};
}
ShapeColumn integer(std::string name) {
  return {Column{std::move(name), "int"}, 11, false, kInteger, "", ""};
}
// A column read from `table`.`origin`.
ShapeColumn readFrom(ShapeColumn c, std::string table, std::string origin) {
  c.table = std::move(table);
  c.origin = std::move(origin);
  return c;
}

// The statement inside the wrapper, as the wrapper carries it.
std::string inner(const CappedStatement& c) {
  const auto from = c.sql.find(" FROM (\n");
  const auto end = c.sql.rfind("\n) AS mcpdb_q");
  if (from == std::string::npos || end == std::string::npos) return "";
  return c.sql.substr(from + 8, end - from - 8);
}

// The wrapper's ORDER BY ("" when it has none).
std::string order(const CappedStatement& c) {
  const auto end = c.sql.rfind("\n) AS mcpdb_q");
  return end == std::string::npos ? "" : c.sql.substr(end + 13);
}

void expectGuardPasses(const std::string& statement, const CappedStatement& c) {
  const guard::Verdict s = guard::checkTemplate(statement, guard::Dialect::Mariadb);
  const guard::Verdict w = guard::checkTemplate(c.sql, guard::Dialect::Mariadb);
  EXPECT_TRUE(w.allowed) << c.sql << ": " << w.message;
  EXPECT_EQ(w.placeholders, s.placeholders) << c.sql;
}

TEST(MysqlSourceCap, TheWrapperText) {
  const std::string statement = "SELECT DISTINCT id, body, data FROM t WHERE id = ?";
  const auto c = capAtSource(statement, {integer("id"), text("body"), bytes("data")}, 4096);
  ASSERT_TRUE(c.wrapped);
  EXPECT_EQ(c.guarded, (std::vector<bool>{false, true, true}));
  EXPECT_EQ(c.sql,
            "SELECT mcpdb_q.`id`, "
            "CASE WHEN OCTET_LENGTH(mcpdb_q.`body`) > 4096 THEN NULL ELSE mcpdb_q.`body` END, "
            "CASE WHEN OCTET_LENGTH(mcpdb_q.`data`) > 3072 THEN NULL ELSE mcpdb_q.`data` END, "
            "CONCAT(CASE WHEN mcpdb_q.`body` IS NULL THEN '1' ELSE '0' END, "
            "CASE WHEN mcpdb_q.`data` IS NULL THEN '1' ELSE '0' END) AS mcpdb_nulls FROM (\n"
            "SELECT DISTINCT id, body, data FROM t WHERE id = ?\n) AS mcpdb_q");
  expectGuardPasses(statement, c);
}

// One plain SELECT of column references is guarded in its own select list: no derived table.
TEST(MysqlSourceCap, APlainSelectOfColumnsIsGuardedInPlace) {
  const std::string statement =
      "SELECT id, d.body, data AS payload, n + 1 AS m -- c\nFROM t d WHERE id = ? ORDER BY id;";
  const auto c =
      capAtSource(statement, {integer("id"), text("body"), bytes("payload"), integer("m")}, 4096);
  ASSERT_TRUE(c.wrapped);
  EXPECT_EQ(c.sql,
            "SELECT id, CASE WHEN OCTET_LENGTH(d.body) > 4096 THEN NULL ELSE d.body END AS "
            "`body`, CASE WHEN OCTET_LENGTH(data) > 3072 THEN NULL ELSE data END AS `payload`, "
            "n + 1 AS m -- c\n\n, CONCAT(CASE WHEN d.body IS NULL THEN '1' ELSE '0' END, "
            "CASE WHEN data IS NULL THEN '1' ELSE '0' END) AS mcpdb_nulls\n"
            "FROM t d WHERE id = ? ORDER BY id");
  expectGuardPasses(statement, c);
  // Not plain, or ordered by a guarded column: the derived table.
  for (const std::string other :
       {"SELECT * FROM t", "SELECT t.* FROM t", "SELECT UPPER(b) AS b FROM t",
        "SELECT DISTINCT b FROM t", "SELECT b FROM t UNION SELECT b FROM u",
        "SELECT b FROM t GROUP BY b", "SELECT b FROM t ORDER BY b", "SELECT b FROM t ORDER BY 1",
        "SELECT b FROM t ORDER BY LENGTH(b)", "(SELECT b FROM t)",
        "WITH w AS (SELECT 1) SELECT b FROM w"}) {
    SCOPED_TRACE(other);
    const auto d = capAtSource(other, {readFrom(text("b"), "t", "b")}, 100);
    EXPECT_TRUE(d.unwrappable || d.sql.find(") AS mcpdb_q") != std::string::npos) << d.sql;
    if (d.wrapped) expectGuardPasses(other, d);
  }
}

// Bounded columns (a VARCHAR whose longest value fits, integers, dates) need no wrapper at all.
TEST(MysqlSourceCap, BoundedColumnsRunUnwrapped) {
  const auto c = capAtSource("SELECT id, name FROM t", {integer("id"), text("name", 400)}, 4096);
  EXPECT_FALSE(c.wrapped);
  EXPECT_EQ(c.sql, "SELECT id, name FROM t");
  EXPECT_TRUE(capAtSource("SELECT n FROM t", {text("n", 4097)}, 4096).wrapped);
  EXPECT_FALSE(capAtSource("SELECT n FROM t", {text("n", 4096)}, 4096).wrapped);
  // Binary: base64 of 3,072 bytes is 4,096 characters.
  ShapeColumn b = bytes("b");
  b.max_length = 3072;
  EXPECT_FALSE(capAtSource("SELECT b FROM t", {b}, 4096).wrapped);
  b.max_length = 3073;
  EXPECT_TRUE(capAtSource("SELECT b FROM t", {b}, 4096).wrapped);
}

// How the statement ends inside the wrapper, for every shape the guard lets through, and the
// wrapper's ORDER BY, repeating the statement's (a derived table does not keep its rows' order).
TEST(MysqlSourceCap, EveryStatementShapeIsCarriedWholeInItsOrder) {
  struct Case {
    std::string statement;
    std::string inside;
    std::string order;
  };
  const std::vector<Case> cases = {
      {"SELECT b FROM t", "SELECT b FROM t", ""},
      {"SELECT b FROM t;", "SELECT b FROM t", ""},
      {"SELECT b FROM t ;  \n", "SELECT b FROM t", ""},
      {"SELECT b FROM t -- the end", "SELECT b FROM t", ""},
      {"SELECT b FROM t # the end", "SELECT b FROM t", ""},
      {"SELECT b FROM t /* the end */", "SELECT b FROM t", ""},
      {"SELECT b -- inside\nFROM t", "SELECT b -- inside\nFROM t", ""},
      {"SELECT b # inside\nFROM t", "SELECT b # inside\nFROM t", ""},
      {"SELECT b FROM t WHERE s = ';--'", "SELECT b FROM t WHERE s = ';--'", ""},
      {"SELECT b FROM t WHERE s = ')'", "SELECT b FROM t WHERE s = ')'", ""},
      {"SELECT b FROM t LIMIT 3", "SELECT b FROM t LIMIT 3", ""},
      {"SELECT b FROM t ORDER BY b", "SELECT b FROM t ORDER BY b", " ORDER BY mcpdb_q.`b`"},
      {"SELECT b FROM t ORDER BY b;", "SELECT b FROM t ORDER BY b", " ORDER BY mcpdb_q.`b`"},
      {"SELECT b FROM t ORDER BY `B` DESC", "SELECT b FROM t ORDER BY `B` DESC",
       " ORDER BY mcpdb_q.`b` DESC"},
      {"SELECT b FROM t ORDER BY t.b ASC LIMIT 3", "SELECT b FROM t ORDER BY t.b ASC LIMIT 3",
       " ORDER BY mcpdb_q.`b`"},
      {"SELECT b FROM t ORDER BY 1 DESC LIMIT ?, 3", "SELECT b FROM t ORDER BY 1 DESC LIMIT ?, 3",
       " ORDER BY mcpdb_q.`b` DESC"},
      {"SELECT b FROM t ORDER BY b FETCH FIRST 3 ROWS ONLY",
       "SELECT b FROM t ORDER BY b FETCH FIRST 3 ROWS ONLY", " ORDER BY mcpdb_q.`b`"},
      {"SELECT b FROM t WHERE a IN (SELECT a FROM u ORDER BY a LIMIT 2)",
       "SELECT b FROM t WHERE a IN (SELECT a FROM u ORDER BY a LIMIT 2)", ""},
      {"SELECT b FROM (SELECT b FROM t ORDER BY x LIMIT 5) d ORDER BY b",
       "SELECT b FROM (SELECT b FROM t ORDER BY x LIMIT 5) d ORDER BY b", " ORDER BY mcpdb_q.`b`"},
      {"SELECT b, ROW_NUMBER() OVER (ORDER BY x) FROM t",
       "SELECT b, ROW_NUMBER() OVER (ORDER BY x) FROM t", ""},
      {"WITH w AS (SELECT b FROM t ORDER BY x) SELECT b FROM w ORDER BY b DESC",
       "WITH w AS (SELECT b FROM t ORDER BY x) SELECT b FROM w ORDER BY b DESC",
       " ORDER BY mcpdb_q.`b` DESC"},
      {"SELECT b FROM t UNION SELECT b FROM u ORDER BY b",
       "SELECT b FROM t UNION SELECT b FROM u ORDER BY b", " ORDER BY mcpdb_q.`b`"},
      {"(SELECT b FROM t ORDER BY b DESC)", "(SELECT b FROM t ORDER BY b DESC)",
       " ORDER BY mcpdb_q.`b` DESC"},
      {"(SELECT b FROM t ORDER BY x) UNION (SELECT b FROM u)",
       "(SELECT b FROM t ORDER BY x) UNION (SELECT b FROM u)", ""},
  };
  // DISTINCT: not a plain select list, so the derived table (a plain one is guarded in place).
  const auto distinct = [](std::string s) {
    if (const auto p = s.find("SELECT b"); p != std::string::npos) s.insert(p + 7, "DISTINCT ");
    return s;
  };
  for (const Case& c : cases) {
    const std::string statement = distinct(c.statement);
    SCOPED_TRACE(statement);
    const auto w = capAtSource(statement, {readFrom(text("b"), "t", "b")}, 100);
    ASSERT_TRUE(w.wrapped);
    EXPECT_EQ(inner(w), distinct(c.inside));
    EXPECT_EQ(order(w), c.order);
    expectGuardPasses(statement, w);
  }
}

// An ORDER BY the derived table's wrapper cannot repeat over the result columns leaves the
// statement unwrapped (DISTINCT: not guarded in place).
TEST(MysqlSourceCap, AnOrderNotByResultColumnsIsNotWrapped) {
  const std::vector<ShapeColumn> columns = {readFrom(text("b"), "t", "b"),
                                            readFrom(integer("n"), "u", "n")};
  for (const std::string statement :
       {"SELECT DISTINCT b, n FROM t, u ORDER BY x",
        "SELECT DISTINCT b, n FROM t, u ORDER BY LENGTH(b)",
        "SELECT DISTINCT b, n FROM t, u ORDER BY u.b", "SELECT DISTINCT b, n FROM t, u ORDER BY 3",
        "SELECT DISTINCT b, n FROM t, u ORDER BY b COLLATE utf8mb4_bin",
        "SELECT DISTINCT b, n FROM t, u ORDER BY ?",
        "SELECT DISTINCT b, n FROM t, u ORDER BY db.t.b",
        "SELECT DISTINCT b, n FROM t, u ORDER BY n, x DESC"}) {
    SCOPED_TRACE(statement);
    const auto w = capAtSource(statement, columns, 100);
    EXPECT_FALSE(w.wrapped);
    EXPECT_TRUE(w.unwrappable);
    EXPECT_EQ(w.sql, statement);
  }
  // Two result columns of the name: ambiguous.
  EXPECT_TRUE(capAtSource("SELECT DISTINCT b, b FROM t ORDER BY b", {text("b"), text("b")}, 100)
                  .unwrappable);
  EXPECT_EQ(order(capAtSource("SELECT DISTINCT b, n FROM t, u ORDER BY u.n DESC, 1", columns, 100)),
            " ORDER BY mcpdb_q.`n` DESC, mcpdb_q.`b`");
}

// Names a derived table cannot carry (the same name twice, in any case; empty; too long; ending in
// a space): the statement is read through a CTE with a column list.
TEST(MysqlSourceCap, NamesADerivedTableCannotCarryGoThroughAColumnList) {
  const auto c = capAtSource("SELECT DISTINCT a.b, c.b FROM a, c", {text("b"), text("B")}, 100);
  EXPECT_EQ(c.sql,
            "SELECT CASE WHEN OCTET_LENGTH(mcpdb_q.c1) > 100 THEN NULL ELSE mcpdb_q.c1 END, "
            "CASE WHEN OCTET_LENGTH(mcpdb_q.c2) > 100 THEN NULL ELSE mcpdb_q.c2 END, "
            "CONCAT(CASE WHEN mcpdb_q.c1 IS NULL THEN '1' ELSE '0' END, "
            "CASE WHEN mcpdb_q.c2 IS NULL THEN '1' ELSE '0' END) AS mcpdb_nulls FROM (\n"
            "WITH mcpdb_c (c1, c2) AS (\nSELECT DISTINCT a.b, c.b FROM a, c\n) SELECT * FROM "
            "mcpdb_c\n"
            ") AS mcpdb_q");
  expectGuardPasses("SELECT DISTINCT a.b, c.b FROM a, c", c);
  for (const std::string& name : {std::string(""), std::string(65, 'n'), std::string("n ")}) {
    EXPECT_NE(capAtSource("SELECT 1", {text(name)}, 100).sql.find("WITH mcpdb_c"),
              std::string::npos);
  }
  // A name with a backquote is quoted.
  const auto q = capAtSource("SELECT 1", {text("a`b")}, 100);
  EXPECT_NE(q.sql.find("mcpdb_q.`a``b`"), std::string::npos) << q.sql;
  expectGuardPasses("SELECT 1", q);
}

TEST(MysqlSourceCap, APreparedResultIsCheckedAgainstItsShape) {
  const auto c = capAtSource("SELECT id, body FROM t", {integer("id"), text("body")}, 100);
  const ShapeColumn nulls = text("mcpdb_nulls", 2);
  EXPECT_TRUE(sameShape({integer("id"), text("x"), nulls}, c));
  EXPECT_FALSE(sameShape({integer("id"), text("x")}, c));                    // no NULL map
  EXPECT_FALSE(sameShape({integer("id"), text("x"), text("y"), nulls}, c));  // one more
  EXPECT_FALSE(sameShape({text("id"), text("x"), nulls}, c));                // now unbounded
  EXPECT_FALSE(sameShape({text("id", 8), text("x"), nulls}, c));             // another type
  const auto plain = capAtSource("SELECT id FROM t", {integer("id")}, 100);
  EXPECT_TRUE(sameShape({integer("id")}, plain));
  EXPECT_FALSE(sameShape({text("id")}, plain));  // a passed-through column became unbounded
}

TEST(MysqlSourceCap, TheNoteSaysWhatWasCut) {
  EXPECT_EQ(cutNote(1, 4096),
            "1 value longer than the byte cap (max_bytes, 4096 bytes) was left in the database "
            "and is null in its row; `cut` lists each by row and column.");
  EXPECT_EQ(cutNote(2, 10).substr(0, 9), "2 values ");
}

}  // namespace
}  // namespace mcpdb::mysql
