// Issue 30, item 3, on the live MariaDB: doctor proves that every MySQL tool can run as the
// configured account (its statement prepared on the server, never executed). Each defect class in
// several shapes: a missing table (bare, schema-qualified, in a subquery), a missing column (select
// list, WHERE, JOIN ... ON, GROUP BY, ORDER BY), no SELECT on a table or on a column (select list,
// WHERE), a view whose table or column is gone. Each is Unusable, names the object and carries a
// fix; the statements that can run are Ok. Everything lives in two schemas and one account of this
// process, made by the server's administrator (MYSQL_DOCTOR_ROOT_DSN) and dropped at the end:
//   S: the account has SELECT and SHOW VIEW on the whole schema;
//   C: the account has SELECT on some columns of one table only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "integration/mysql/engine_fixture.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

using Severity = engines::Finding::Severity;

const std::string kTag = std::to_string(::getpid());
const std::string S = "mytest_i30_" + kTag;
const std::string C = "mytest_i30c_" + kTag;
const std::string P_USER = "mytest_i30p_" + kTag;
const std::string P = "'" + P_USER + "'@'127.0.0.1'";
constexpr const char* kDsnVariable = "MCPDB_TEST_I30_DSN";

std::string password() {
  static const std::string kPassword = [] {
    std::random_device rd;
    std::string out;
    for (int i = 0; i < 24; ++i) out += "0123456789abcdef"[rd() % 16];
    return out;
  }();
  return kPassword;
}

void dropAll(Connection& root) {
  for (const std::string& sql : {"DROP DATABASE IF EXISTS " + S, "DROP DATABASE IF EXISTS " + C,
                                 "DROP USER IF EXISTS " + P}) {
    (void)root.queryValue(sql);
  }
}

std::vector<std::string> setUpSql() {
  return {
      "CREATE DATABASE " + S,
      "CREATE DATABASE " + C,
      "CREATE TABLE " + S + ".u (id INT PRIMARY KEY, b INT)",
      "CREATE TABLE " + S + ".t2 (id INT PRIMARY KEY)",
      "CREATE TABLE " + S + ".gone (id INT)",
      "CREATE TABLE " + S + ".w (id INT, dropped INT)",
      "CREATE SQL SECURITY INVOKER VIEW " + S + ".v_gone AS SELECT id FROM " + S + ".gone",
      "CREATE SQL SECURITY INVOKER VIEW " + S + ".v_dcol AS SELECT id, dropped FROM " + S + ".w",
      "CREATE SQL SECURITY INVOKER VIEW " + S + ".v_fine AS SELECT id, b FROM " + S + ".u",
      "DROP TABLE " + S + ".gone",
      "ALTER TABLE " + S + ".w DROP COLUMN dropped",
      "CREATE TABLE " + C + ".cols (id INT PRIMARY KEY, a INT, secret INT)",
      "CREATE TABLE " + C + ".hidden (id INT PRIMARY KEY)",
      "CREATE USER " + P + " IDENTIFIED BY '" + password() + "'",
      "GRANT SELECT, SHOW VIEW ON " + S + ".* TO " + P,
      "GRANT SELECT (id, a) ON " + C + ".cols TO " + P,
  };
}

// The account's DSN: MYSQL_DOCTOR_DSN_SAFE with P's name and password and schema S.
std::string principalDsn() {
  std::string text = requireEnv("MYSQL_DOCTOR_DSN_SAFE");
  const auto scheme = text.find("://");
  const auto at = text.find('@', scheme);
  const auto slash = text.find('/', at);
  if (scheme == std::string::npos || at == std::string::npos || slash == std::string::npos) {
    ADD_FAILURE() << "MYSQL_DOCTOR_DSN_SAFE is not a mysql:// URL";
    return {};
  }
  const auto query = text.find('?', slash);
  return text.substr(0, scheme + 3) + P_USER + ":" + password() + text.substr(at, slash + 1 - at) +
         S + (query == std::string::npos ? "" : text.substr(query));
}

class MysqlToolCheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto root = openRoot();
    if (!root) return;
    dropAll(*root);
    for (const std::string& sql : setUpSql()) {
      if (!rootExec(*root, sql)) return;
    }
    ::setenv(kDsnVariable, principalDsn().c_str(), 1);
    ready_ = true;
  }
  static void TearDownTestSuite() {
    if (auto root = openRoot()) dropAll(*root);
    ::unsetenv(kDsnVariable);
  }
  void SetUp() override { ASSERT_TRUE(ready_) << "the test schemas could not be made"; }

  // checkTools' findings for `tools` (YAML lines "name: {description: d, statement: ...}"), by
  // tool name.
  static std::map<std::string, engines::Finding> check(const std::string& tools) {
    ConfiguredEngine e(std::string("mysql:\n  sources:\n    p: {dsn_env: ") + kDsnVariable +
                       "}\n  tools:\n" + tools);
    EXPECT_TRUE(e.errors.empty()) << (e.errors.empty() ? "" : e.errors[0]);
    std::map<std::string, engines::Finding> out;
    for (auto& f : e.module->checkTools(e.services)) {
      const std::string prefix = "mysql.tool.";
      EXPECT_EQ(f.check.rfind(prefix, 0), 0U) << f.check;
      out[f.check.substr(prefix.size())] = f;
    }
    return out;
  }

  // Every tool of `expected` is Unusable, its message names the object, and it has a fix (which,
  // when given, starts with `fix_prefix`).
  static void expectUnusable(const std::map<std::string, engines::Finding>& found,
                             const std::map<std::string, std::string>& expected,
                             const std::string& fix_prefix = "") {
    for (const auto& [tool, object] : expected) {
      auto it = found.find(tool);
      ASSERT_NE(it, found.end()) << tool << ": no finding";
      const auto& f = it->second;
      EXPECT_EQ(f.severity, Severity::Unusable) << tool << ": " << f.message;
      EXPECT_NE(f.message.find(object), std::string::npos) << tool << ": " << f.message;
      EXPECT_FALSE(f.fix.empty()) << tool;
      if (!fix_prefix.empty()) {
        EXPECT_EQ(f.fix.rfind(fix_prefix, 0), 0U) << tool << ": " << f.fix;
      }
    }
  }

  static inline bool ready_ = false;
};

TEST_F(MysqlToolCheck, AMissingTableIsUnusableWhereverItIsNamed) {
  const auto found = check(R"y(    bare: {description: d, statement: SELECT id FROM no_such_table}
    qualified: {description: d, statement: "SELECT id FROM )y" +
                           S + R"y(.absent"}
    joined: {description: d, statement: "SELECT u.id FROM u JOIN missing_j ON missing_j.id = u.id"}
    subquery: {description: d, statement: "SELECT id FROM u WHERE id IN (SELECT id FROM missing_s)"}
)y");
  expectUnusable(found, {{"bare", "no_such_table"},
                         {"qualified", "absent"},
                         {"joined", "missing_j"},
                         {"subquery", "missing_s"}});
  EXPECT_NE(found.at("bare").fix.find(S), std::string::npos) << found.at("bare").fix;
}

TEST_F(MysqlToolCheck, AMissingColumnIsUnusableInEveryClause) {
  const auto found = check(R"y(    select_list: {description: d, statement: SELECT idd FROM u}
    where: {description: d, statement: "SELECT id FROM u WHERE zz = ?", parameters: [{name: z, type: integer, description: z}]}
    join_on: {description: d, statement: "SELECT u.id FROM u JOIN t2 ON t2.nope = u.id"}
    group_by: {description: d, statement: SELECT id FROM u GROUP BY grp}
    order_by: {description: d, statement: SELECT id FROM u ORDER BY ord}
)y");
  expectUnusable(found,
                 {{"select_list", "'idd'"},
                  {"where", "'zz'"},
                  {"join_on", "nope"},
                  {"group_by", "'grp'"},
                  {"order_by", "'ord'"}},
                 "correct the statement");
}

TEST_F(MysqlToolCheck, AMissingPrivilegeIsUnusableWithTheGrant) {
  const auto found =
      check(R"y(    table: {description: d, statement: "SELECT id FROM )y" + C + R"y(.hidden"}
    column: {description: d, statement: "SELECT secret FROM )y" +
            C + R"y(.cols"}
    column_where: {description: d, statement: "SELECT id FROM )y" +
            C + R"y(.cols WHERE secret = 1"}
    subquery: {description: d, statement: "SELECT id FROM u WHERE id IN (SELECT id FROM )y" +
            C + R"y(.hidden)"}
)y");
  expectUnusable(found,
                 {{"table", "hidden"},
                  {"column", "secret"},
                  {"column_where", "secret"},
                  {"subquery", "hidden"}},
                 "GRANT SELECT");
  EXPECT_EQ(found.at("table").fix.rfind(
                "GRANT SELECT ON `" + C + "`.`hidden` TO '" + P_USER + "'@'127.0.0.1';", 0),
            0U)
      << found.at("table").fix;
  EXPECT_EQ(
      found.at("column").fix.rfind(
          "GRANT SELECT (`secret`) ON `" + C + "`.`cols` TO '" + P_USER + "'@'127.0.0.1';", 0),
      0U)
      << found.at("column").fix;
}

TEST_F(MysqlToolCheck, AViewOverSomethingGoneIsUnusable) {
  const auto found = check(R"y(    table_gone: {description: d, statement: SELECT id FROM v_gone}
    column_gone: {description: d, statement: SELECT id FROM v_dcol}
    joined: {description: d, statement: "SELECT u.id FROM u JOIN v_gone ON v_gone.id = u.id"}
)y");
  expectUnusable(found, {{"table_gone", "v_gone"}, {"column_gone", "v_dcol"}, {"joined", "v_gone"}},
                 "recreate view");
}

// What can run is Ok, and a finding never carries a value: the statements' literals stay out.
TEST_F(MysqlToolCheck, WhatCanRunIsOkAndNoValueIsQuoted) {
  const auto found = check(
      R"y(    plain: {description: d, statement: "SELECT id, b FROM u WHERE id = ?", parameters: [{name: id, type: integer, description: i}]}
    view: {description: d, statement: "SELECT id, b FROM v_fine"}
    granted_columns: {description: d, statement: "SELECT id, a FROM )y" +
      C + R"y(.cols WHERE a > 0"}
    literal: {description: d, statement: "SELECT id FROM u WHERE b = 'sensitive-literal-123' AND zz2 = 1"}
)y");
  for (const char* tool : {"plain", "view", "granted_columns"}) {
    ASSERT_TRUE(found.count(tool)) << tool;
    EXPECT_EQ(found.at(tool).severity, Severity::Ok) << tool << ": " << found.at(tool).message;
  }
  ASSERT_TRUE(found.count("literal"));
  EXPECT_EQ(found.at("literal").severity, Severity::Unusable);
  EXPECT_EQ(found.at("literal").message.find("sensitive-literal-123"), std::string::npos)
      << found.at("literal").message;
}

}  // namespace
}  // namespace mcpdb::mysql::itest
