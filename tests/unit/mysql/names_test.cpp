// The name collector of the view and routine vetting (names.hpp): every position where MariaDB
// or MySQL resolves a view or a function name yields the name, including the positions a
// table-position scanner missed (issue 28), and MariaDB's stored form of a view over a join.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engines/mysql/names.hpp"

namespace mcpdb::mysql::guard {
namespace {

bool has(const NameCandidates& c, const Name& n) {
  return std::find(c.names.begin(), c.names.end(), n) != c.names.end();
}

std::string all(const NameCandidates& c) {
  std::string out;
  for (const auto& n : c.names) out += displayName(n) + " ";
  return out;
}

TEST(MysqlNames, TheNameIsFoundInEveryPosition) {
  const std::vector<std::string> statements = {
      "SELECT x FROM v",
      "SELECT x FROM (v)",
      "SELECT x FROM ((((v))))",
      "SELECT t.id FROM t JOIN (v) ON 1",
      "SELECT t.id FROM t JOIN u ON 1, v",
      "SELECT t.id FROM t JOIN u USING (id), v",
      "SELECT t.id FROM t IGNORE INDEX FOR ORDER BY (PRIMARY), v",
      "SELECT t.id FROM t FORCE KEY FOR JOIN (k1, k2) ,v",
      "SELECT t.id FROM {OJ v LEFT OUTER JOIN t ON 1}",
      "SELECT t.id FROM {oj t LEFT OUTER JOIN v ON 1}",
      "SELECT t.id FROM t STRAIGHT_JOIN v",
      "SELECT t.id FROM t NATURAL LEFT JOIN v",
      "SELECT id FROM t WHERE id IN (SELECT id FROM v)",
      "SELECT d.x FROM (SELECT x FROM v) AS d",
      "SELECT (SELECT x FROM v LIMIT 1) AS y",
      "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM `v`)",
      "SELECT id FROM t UNION ALL (SELECT x FROM v)",
      "WITH c AS (SELECT x FROM v) SELECT x FROM c",
      "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c, v) SELECT n FROM c",
      "SELECT x FROM /* a comment */ v",
      "SELECT x FROM -- a comment\nv",
      "SELECT x FROM # a comment\nv",
      "SELECT x FROM`v`",
      "SELECT v(1) AS y",
      "SELECT COUNT(*) FROM t GROUP BY v(id) HAVING MAX(v.x) > 0",
      "SELECT JSON_ARRAYAGG(x) FROM t, LATERAL (SELECT x FROM v) AS l",
      "SELECT * FROM t WHERE id = ANY (TABLE v)",
  };
  for (const std::string& sql : statements) {
    const NameCandidates c = collectNames(sql, "db");
    EXPECT_TRUE(c.complete) << sql;
    EXPECT_TRUE(has(c, {"db", "v"})) << sql << " -> " << all(c);
  }
}

TEST(MysqlNames, QualifiedNamesGiveTheirSchema) {
  EXPECT_TRUE(has(collectNames("SELECT x FROM s.v", "db"), {"s", "v"}));
  EXPECT_TRUE(has(collectNames("SELECT x FROM `s`.`v`", "db"), {"s", "v"}));
  EXPECT_TRUE(has(collectNames("SELECT x FROM s . v", "db"), {"s", "v"}));
  EXPECT_TRUE(has(collectNames("SELECT x FROM s./* c */v", "db"), {"s", "v"}));
  EXPECT_TRUE(has(collectNames("SELECT s.f(1) AS y", "db"), {"s", "f"}));
  // a.b.c: schema a's b, and (as over-approximation) b's c.
  const auto c = collectNames("SELECT a.b.c FROM a.b", "db");
  EXPECT_TRUE(has(c, {"a", "b"}));
  EXPECT_TRUE(has(c, {"b", "c"}));
  // A reserved word names an object after a dot or in backquotes, never bare.
  EXPECT_TRUE(has(collectNames("SELECT x FROM s.select", "db"), {"s", "select"}));
  EXPECT_TRUE(has(collectNames("SELECT x FROM `select`", "db"), {"db", "select"}));
  EXPECT_FALSE(has(collectNames("SELECT x FROM v", "db"), {"db", "SELECT"}));
  EXPECT_FALSE(has(collectNames("SELECT x FROM v", "db"), {"db", "from"}));
  // Non-reserved keywords can be names.
  EXPECT_TRUE(has(collectNames("SELECT x FROM status", "db"), {"db", "status"}));
  EXPECT_TRUE(has(collectNames("SELECT x FROM `we``ird`", "db"), {"db", "we`ird"}));
}

// MariaDB stores every join of a view as `from (a join b ...)`, fully qualified: a view over a
// join whose first table is a view must give that view.
TEST(MysqlNames, MariadbViewDefinitionsGiveEveryTable) {
  const auto c = collectNames(
      "select `v`.`x` AS `x` from (`s`.`v` join `s`.`t` on(1)) where `s`.`f`(`v`.`x`) > 0", "s");
  EXPECT_TRUE(c.complete);
  for (const Name& n : {Name{"s", "v"}, Name{"s", "t"}, Name{"s", "f"}}) {
    EXPECT_TRUE(has(c, n)) << displayName(n) << " in " << all(c);
  }
}

TEST(MysqlNames, EachNameOnceAndStringsAreNotNames) {
  const auto c = collectNames("SELECT v.x, v.y FROM v WHERE z = 'w'", "db");
  EXPECT_EQ(std::count(c.names.begin(), c.names.end(), Name{"db", "v"}), 1);
  EXPECT_FALSE(has(c, {"db", "w"}));
  EXPECT_FALSE(has(c, {"db", "'w'"}));
}

TEST(MysqlNames, TextThatDoesNotLexIsIncomplete) {
  EXPECT_FALSE(collectNames("SELECT x FROM v WHERE a = 'open", "db").complete);
  EXPECT_FALSE(collectNames("SELECT x FROM /*! v */ t", "db").complete);
  EXPECT_FALSE(collectNames("SELECT \"x\" FROM v", "db").complete);
}

}  // namespace
}  // namespace mcpdb::mysql::guard
