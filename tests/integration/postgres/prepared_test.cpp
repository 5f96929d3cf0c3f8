// Prepared statements per connection (postgres.pool.prepared_statements, on by default): each
// connection parses and plans BEGIN READ ONLY, the tool's statement and ROLLBACK once,
// then runs them by name; the server's own view of the session (pg_prepared_statements) is the
// evidence. A change of a table's shape under a prepared SELECT * is absorbed (the call is run
// again on a fresh connection), and with the option off nothing is prepared.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <string>

#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

// One connection, so every call lands on the same session. `list_prepared` reads the session's
// own prepared statements; it is itself prepared by the time it runs (Parse comes first).
std::string yaml(const std::string& pool_extra, const std::string& extra_tools = "") {
  return R"(
postgres:
  pool: {size: 1)" +
         pool_extra + R"(}
  tools:
    list_prepared:
      description: The session's prepared statements.
      statement: SELECT name, statement, generic_plans + custom_plans AS plans FROM pg_prepared_statements ORDER BY statement
    divide:
      description: 100 divided by d.
      statement: SELECT 100 / $1 AS q
      parameters: [{name: d, type: integer, description: D}]
)" + extra_tools;
}

Json prepared(Runtime& rt) {
  auto r = call(rt, "list_prepared", Json::object());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r->structured["rows"] : Json::array();
}

// A prepared text, or the configured statement it wraps (a tool's statement runs inside the
// wrapper that caps values at the source, source_cap.hpp).
std::string unwrapped(const std::string& text) {
  const std::string open = " AS mcpdb_nulls FROM (SELECT *, NULL AS mcpdb_end FROM (\n";
  const std::string close = "\n) AS s OFFSET 0) AS q(";
  const auto from = text.find(open);
  const auto to = text.rfind(close);
  if (from == std::string::npos || to == std::string::npos || to < from) return text;
  return text.substr(from + open.size(), to - from - open.size());
}

std::set<std::string> statementsOf(const Json& rows) {
  std::set<std::string> out;
  for (const auto& row : rows) out.insert(unwrapped(row["statement"].get<std::string>()));
  return out;
}

TEST(PostgresPrepared, EachStatementIsPreparedOncePerConnection) {
  auto rt = makeRuntime(yaml(""));
  const std::string list_sql =
      "SELECT name, statement, generic_plans + custom_plans AS plans FROM pg_prepared_statements "
      "ORDER BY statement";
  const std::string divide_sql = "SELECT 100 / $1 AS q";

  // First call: BEGIN and the statement were parsed ahead of it in the same batch.
  EXPECT_EQ(statementsOf(prepared(*rt)), (std::set<std::string>{"BEGIN READ ONLY", list_sql}));
  for (int d : {4, 5, 10}) {
    auto r = call(*rt, "divide", Json{{"d", d}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->structured["rows"][0]["q"], 100 / d);
  }
  const Json rows = prepared(*rt);
  // The advisory-lock release runs after every call, prepared like the rest.
  EXPECT_EQ(statementsOf(rows), (std::set<std::string>{"BEGIN READ ONLY", "ROLLBACK",
                                                       "SELECT pg_catalog.pg_advisory_unlock_all()",
                                                       list_sql, divide_sql}))
      << rows.dump();
  for (const auto& row : rows) {
    EXPECT_EQ(row["name"].get<std::string>().rfind("mcpdb_", 0), 0U) << row.dump();
    // Executed by name: the three divide calls ran the one prepared statement three times.
    if (unwrapped(row["statement"].get<std::string>()) == divide_sql) {
      EXPECT_EQ(row["plans"], 3) << row.dump();
    }
  }
  EXPECT_EQ(rt->pool().openCount(), 1U);
}

TEST(PostgresPrepared, AFailedCallKeepsThePreparedStatementsConsistent) {
  auto rt = makeRuntime(yaml(""));
  // Fails at execution, after its Parse succeeded: the name is kept and reused.
  auto bad = call(*rt, "divide", Json{{"d", 0}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("SQLSTATE 22012"), std::string::npos) << bad.error().message;
  auto good = call(*rt, "divide", Json{{"d", 20}});
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->structured["rows"][0]["q"], 5);
  const Json rows = prepared(*rt);
  int divides = 0;
  for (const auto& row : rows)
    divides += unwrapped(row["statement"].get<std::string>()) == "SELECT 100 / $1 AS q" ? 1 : 0;
  EXPECT_EQ(divides, 1) << rows.dump();
  EXPECT_EQ(rt->pool().openCount(), 1U);
}

TEST(PostgresPrepared, TableShapeChangeUnderSelectStarIsRunAgainOnAFreshConnection) {
  const std::string table = "pgtest.shape_" + std::to_string(::getpid());
  ensureTestSchema();
  adminQuery("DROP TABLE IF EXISTS " + table);
  adminQuery("CREATE TABLE " + table + " (a int)");
  adminQuery("INSERT INTO " + table + " VALUES (1)");
  adminQuery("GRANT SELECT ON " + table + " TO mcp_reader");
  auto rt = makeRuntime(yaml("", R"(    shape:
      description: Every column.
      statement: SELECT * FROM )" + table +
                                     "\n"));

  auto before = call(*rt, "shape", Json::object());
  ASSERT_TRUE(before.ok()) << before.error().message;
  EXPECT_EQ(before->structured["rows"], Json::parse(R"([{"a": 1}])"));

  // The prepared plan's result type no longer matches: PostgreSQL refuses to run it
  // ("cached plan must not change result type"); the call is run again and succeeds.
  adminQuery("ALTER TABLE " + table + " ADD COLUMN b int DEFAULT 7");
  auto after = call(*rt, "shape", Json::object());
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->structured["rows"], Json::parse(R"([{"a": 1, "b": 7}])"));
  auto again = call(*rt, "shape", Json::object());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(rt->pool().openCount(), 1U);
  adminQuery("DROP TABLE IF EXISTS " + table);
}

TEST(PostgresPrepared, OffPreparesNothing) {
  auto rt = makeRuntime(yaml(", prepared_statements: false"));
  for (int i = 0; i < 2; ++i) {
    auto r = call(*rt, "divide", Json{{"d", 50}});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  EXPECT_EQ(prepared(*rt), Json::array());
}

}  // namespace
}  // namespace mcpdb::postgres::itest
