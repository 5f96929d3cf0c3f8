// Issue 28, class 2, on the live MariaDB: a definer-rights view over a function that writes is
// refused wherever its name appears in a statement (parentheses, joins, a comma after JOIN ... ON
// or USING, index hints, ODBC escapes, derived tables, subqueries, nested views over a join), a
// definer-rights object is accepted only with a definer proved read-only (allowlisted functions
// too), a redefinition is judged on the next call, the agent's error names no object, and doctor
// flags what it reaches. Everything lives in a schema and three accounts of this process, made by
// the server's administrator (MYSQL_DOCTOR_ROOT_DSN) and dropped at the end:
//   W: a definer that writes (INSERT on the schema);  R: a read-only definer;
//   P: the agent's principal: SELECT and SHOW VIEW on the schema, EXECUTE on its functions, and
//      SELECT on mysql.* (so that SHOW GRANTS FOR a definer can be read).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engines/mysql/catalog.hpp"
#include "engines/mysql/doctor.hpp"
#include "engines/mysql/names.hpp"
#include "engines/mysql/guard.hpp"
#include "engines/mysql/routines.hpp"
#include "engines/mysql/runtime.hpp"
#include "integration/mysql/engine_fixture.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

using Severity = engines::Finding::Severity;
using Engine = ConfiguredEngine;

std::string randomHex() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 24; ++i) out += "0123456789abcdef"[rd() % 16];
  return out;
}

const std::string kTag = std::to_string(::getpid());
const std::string S = "mytest_i28_" + kTag;  // the schema
const std::string W = "'mytest_i28w_" + kTag + "'@'127.0.0.1'";
const std::string R = "'mytest_i28r_" + kTag + "'@'127.0.0.1'";
const std::string P_USER = "mytest_i28p_" + kTag;
const std::string P = "'" + P_USER + "'@'127.0.0.1'";
const std::string kPassword = randomHex();
constexpr const char* kDsnVariable = "MCPDB_TEST_I28_DSN";

void dropAll(Connection& root) {
  for (const std::string& sql : {"DROP DATABASE IF EXISTS " + S, "DROP USER IF EXISTS " + W,
                                 "DROP USER IF EXISTS " + R, "DROP USER IF EXISTS " + P}) {
    (void)root.queryValue(sql);
  }
}

// A source's statement counters stand for the server's for Runtime::kEpochMaxAge after they were
// read: a redefinition is judged by the first call that starts later.
void waitForCounters() {
  std::this_thread::sleep_for(Runtime::kEpochMaxAge + std::chrono::milliseconds(20));
}

const char* kWritingBody = "BEGIN INSERT INTO log () VALUES (); RETURN 1; END";

std::vector<std::string> setUpSql() {
  std::vector<std::string> sql = {
      "CREATE DATABASE " + S,
      "CREATE TABLE " + S + ".t (id INT PRIMARY KEY)",
      "INSERT INTO " + S + ".t VALUES (1)",
      "CREATE TABLE " + S + ".u (id INT PRIMARY KEY)",
      "INSERT INTO " + S + ".u VALUES (1)",
      "CREATE TABLE " + S + ".log (id INT AUTO_INCREMENT PRIMARY KEY)",
      "CREATE USER " + W + " IDENTIFIED BY '" + kPassword + "'",
      "CREATE USER " + R + " IDENTIFIED BY '" + kPassword + "'",
      "CREATE USER " + P + " IDENTIFIED BY '" + kPassword + "'",
      "GRANT SELECT, INSERT, EXECUTE ON " + S + ".* TO " + W,
      "GRANT SELECT ON " + S + ".* TO " + R,
      "GRANT SELECT, SHOW VIEW ON " + S + ".* TO " + P,
      "GRANT SELECT ON mysql.* TO " + P,
      // The writer the issue's views wrap (its body alone is refused by the guard).
      "CREATE DEFINER=" + W + " FUNCTION " + S + ".f_write() RETURNS INT MODIFIES SQL DATA " +
          kWritingBody,
      "CREATE DEFINER=" + W + " SQL SECURITY DEFINER VIEW " + S + ".v AS SELECT " + S +
          ".f_write() AS x, 1 AS id",
      // MariaDB stores these as `from (v join t)`: the view is the join's first table.
      "CREATE DEFINER=" + R + " SQL SECURITY INVOKER VIEW " + S + ".v_join AS SELECT v.x FROM " +
          S + ".v JOIN " + S + ".t ON 1",
      "CREATE DEFINER=" + R + " SQL SECURITY INVOKER VIEW " + S + ".v_over AS SELECT x FROM " + S +
          ".v_join",
      // Pure bodies under three kinds of rights.
      "CREATE DEFINER=" + W + " FUNCTION " + S + ".f_pure_w() RETURNS INT SQL SECURITY DEFINER " +
          "RETURN 1",
      "CREATE DEFINER=" + R + " FUNCTION " + S + ".f_pure_r() RETURNS INT SQL SECURITY DEFINER " +
          "RETURN 1",
      "CREATE DEFINER=" + W + " FUNCTION " + S + ".f_pure_i() RETURNS INT SQL SECURITY INVOKER " +
          "RETURN 1",
      "CREATE DEFINER=" + R + " FUNCTION " + S + ".f_redef() RETURNS INT RETURN 1",
      "CREATE DEFINER=" + W + " SQL SECURITY DEFINER VIEW " + S + ".v_pure_w AS SELECT id FROM " +
          S + ".t",
      "CREATE DEFINER=" + R + " SQL SECURITY DEFINER VIEW " + S + ".v_pure_r AS SELECT id FROM " +
          S + ".t",
      "CREATE DEFINER=" + W + " SQL SECURITY INVOKER VIEW " + S + ".v_pure_i AS SELECT id FROM " +
          S + ".t",
  };
  for (const char* f : {"f_write", "f_pure_w", "f_pure_r", "f_pure_i", "f_redef"}) {
    sql.push_back("GRANT EXECUTE ON FUNCTION " + S + "." + f + " TO " + P);
  }
  for (const char* f : {"f_pure_r", "f_redef"}) {
    sql.push_back("GRANT EXECUTE ON FUNCTION " + S + "." + f + " TO " + R);
  }
  return sql;
}

// The principal's DSN: MYSQL_DOCTOR_DSN_SAFE with P's name and password and the test's schema.
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
  return text.substr(0, scheme + 3) + P_USER + ":" + kPassword + text.substr(at, slash + 1 - at) +
         S + (query == std::string::npos ? "" : text.substr(query));
}

class MysqlDefiners : public ::testing::Test {
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
  void SetUp() override { ASSERT_TRUE(ready_) << "the test schema could not be made"; }

  static std::optional<Connection> openPrincipal() {
    auto dsn = parseDsn(principalDsn());
    if (!dsn) {
      ADD_FAILURE() << dsn.error().message;
      return std::nullopt;
    }
    auto c = Connection::open(*dsn);
    if (!c) {
      ADD_FAILURE() << "cannot connect as the principal: " << c.error().message;
      return std::nullopt;
    }
    return std::move(*c);
  }

  // The statement's verdicts as the runtime makes them: the guard's, then the vetting's.
  static std::vector<RoutineVerdict> vet(Connection& conn, const std::string& sql,
                                         std::vector<std::string> allowlist = {}) {
    const guard::Verdict g = guard::checkTemplate(sql, guard::Dialect::Mariadb);
    EXPECT_TRUE(g.allowed) << sql << ": the guard refuses it (" << g.message
                           << "); the test wants the vetting to judge it";
    RoutineChecker checker(conn,
                           RoutineCheckOptions{std::move(allowlist), S, guard::Dialect::Mariadb});
    return checker.checkStatement(sql, g.called_functions);
  }

  static const RoutineVerdict* firstRefusal(const std::vector<RoutineVerdict>& verdicts) {
    for (const auto& v : verdicts) {
      if (!v.allowed) return &v;
    }
    return nullptr;
  }

  static inline bool ready_ = false;
};

// Every position the issue found, and more: the server accepts each statement (prepared as the
// principal, never executed), and the vetting refuses it because it reaches `v`.
TEST_F(MysqlDefiners, AViewIsFoundWhereverItsNameAppears) {
  auto conn = openPrincipal();
  ASSERT_TRUE(conn);
  const std::vector<std::string> statements = {
      "SELECT x FROM v",
      "SELECT x FROM (v)",
      "SELECT t.id FROM t JOIN (v) ON 1",
      "SELECT t.id FROM t JOIN u ON 1, v",
      "SELECT t.id FROM t JOIN u USING (id), v",
      "SELECT t.id FROM t IGNORE INDEX FOR ORDER BY (PRIMARY), v",
      "SELECT t.id FROM t USE INDEX (PRIMARY) JOIN v ON 1",
      "SELECT t.id FROM {OJ v LEFT OUTER JOIN t ON 1}",
      "SELECT t.id FROM t STRAIGHT_JOIN v",
      "SELECT t.id FROM t NATURAL JOIN v",
      "SELECT t.id FROM (t JOIN (u JOIN v ON 1) ON 1)",
      "SELECT x FROM v_join",
      "SELECT x FROM v_over",
      "SELECT id FROM t WHERE id IN (SELECT id FROM v)",
      "SELECT d.x FROM (SELECT x FROM v) AS d",
      "SELECT (SELECT x FROM v LIMIT 1) AS y",
      "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM `v`)",
      "SELECT id FROM t UNION SELECT x FROM v",
      "WITH c AS (SELECT x FROM v) SELECT x FROM c",
      "SELECT x FROM " + S + ".v",
      "SELECT x FROM `" + S + "`.`v`",
      "SELECT x FROM /* a comment */ v",
      "SELECT x FROM -- a comment\n v",
      "SELECT v.x FROM t LEFT JOIN v ON v.id = t.id",
  };
  const CallLimits limits;
  for (const std::string& sql : statements) {
    // MariaDB prepares it up to locking the tables the view's function writes, which a READ
    // ONLY transaction refuses (error 1792): the name resolved to the writing view. (A file or a
    // global variable is no table: those it would not stop.)
    auto shape = conn->describe(sql, limits);
    ASSERT_FALSE(shape.ok()) << sql;
    EXPECT_NE(shape.error().message.find("error 1792"), std::string::npos)
        << sql << ": " << shape.error().message;
    (void)conn->resetSession();
    const auto verdicts = vet(*conn, sql);
    const RoutineVerdict* refusal = firstRefusal(verdicts);
    if (refusal == nullptr) {
      ADD_FAILURE() << sql << ": nothing refused";  // every missed position is reported
      continue;
    }
    EXPECT_NE(refusal->reason.find("f_write"), std::string::npos) << sql << ": " << refusal->reason;
  }
}

// No false refusals around it: the same positions over tables, and pure functions and views
// whose rights are the invoker's or a read-only definer's.
TEST_F(MysqlDefiners, ReadsThroughProvedObjectsPass) {
  auto conn = openPrincipal();
  ASSERT_TRUE(conn);
  for (const std::string sql :
       {"SELECT t.id FROM t JOIN u USING (id)", "SELECT t.id FROM {OJ t LEFT OUTER JOIN u ON 1}",
        "SELECT f_pure_r() AS y", "SELECT f_pure_i() AS y", "SELECT id FROM v_pure_r",
        "SELECT id FROM (v_pure_i)", "SELECT t.id FROM t JOIN u ON 1, v_pure_r"}) {
    const auto verdicts = vet(*conn, sql);
    const RoutineVerdict* refusal = firstRefusal(verdicts);
    EXPECT_EQ(refusal, nullptr) << sql << ": " << (refusal ? refusal->reason : "");
  }
}

// A pure body or definition is refused when it runs as a definer that can write, allowlisted or
// not: the definer's INSERT is named.
TEST_F(MysqlDefiners, AWritingDefinerIsRefusedEvenForAPureBody) {
  auto conn = openPrincipal();
  ASSERT_TRUE(conn);
  for (const std::string sql : {"SELECT f_pure_w() AS y", "SELECT id FROM v_pure_w",
                                "SELECT t.id FROM t JOIN u ON 1, v_pure_w"}) {
    const auto verdicts = vet(*conn, sql);
    const RoutineVerdict* refusal = firstRefusal(verdicts);
    ASSERT_NE(refusal, nullptr) << sql;
    EXPECT_NE(refusal->reason.find("definer's rights"), std::string::npos) << refusal->reason;
    EXPECT_NE(refusal->reason.find("mytest_i28w_"), std::string::npos) << refusal->reason;
    EXPECT_NE(refusal->reason.find("INSERT"), std::string::npos) << refusal->reason;
  }
  for (const char* allowlisted : {"f_pure_w", "f_write"}) {
    const std::string sql = std::string("SELECT ") + allowlisted + "() AS y";
    const auto verdicts = vet(*conn, sql, {allowlisted});
    const RoutineVerdict* refusal = firstRefusal(verdicts);
    ASSERT_NE(refusal, nullptr) << sql;
    EXPECT_NE(refusal->reason.find("is allowlisted by name, but it runs with its definer's"),
              std::string::npos)
        << refusal->reason;
  }
}

// Through the engine: the tool's error names nothing (its detail does), a redefinition is judged
// by the next call (past the counters' 50 ms), and an allowlisted function with a writing definer
// is refused.
TEST_F(MysqlDefiners, TheEngineRefusesWithoutNamesAndJudgesRedefinitionsAtOnce) {
  auto root = openRoot();
  ASSERT_TRUE(root);
  Engine e(std::string(R"(mysql:
  sources:
    p: {dsn_env: )") +
           kDsnVariable + R"(}
  allowed_functions: [f_write]
  tools:
    hint: {description: d, statement: "SELECT t.id FROM t IGNORE INDEX FOR ORDER BY (PRIMARY), v"}
    redef: {description: d, statement: SELECT f_redef() AS y}
    listed: {description: d, statement: SELECT f_write() AS y}
)");
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  for (const char* tool : {"hint", "listed"}) {
    auto r = e.call(tool, Json::object());
    ASSERT_FALSE(r) << tool;
    EXPECT_EQ(r.error().code, Code::PermissionDenied) << tool;
    for (const std::string& name : {S, std::string("f_write"), std::string("mytest_i28")}) {
      EXPECT_EQ(r.error().message.find(name), std::string::npos) << r.error().message;
    }
    EXPECT_NE(r.error().detail.find("f_write"), std::string::npos) << r.error().detail;
  }
  auto before = e.call("redef", Json::object());
  ASSERT_TRUE(before) << before.error().message;
  // A writing body, then a pure body under a writing definer: each refused on the next call.
  ASSERT_TRUE(rootExec(*root, "CREATE OR REPLACE DEFINER=" + R + " FUNCTION " + S +
                                  ".f_redef() RETURNS INT MODIFIES SQL DATA " + kWritingBody));
  ASSERT_TRUE(rootExec(*root, "GRANT EXECUTE ON FUNCTION " + S + ".f_redef TO " + P));
  waitForCounters();
  auto written = e.call("redef", Json::object());
  ASSERT_FALSE(written);
  EXPECT_NE(written.error().detail.find("may write"), std::string::npos) << written.error().detail;
  ASSERT_TRUE(rootExec(*root, "CREATE OR REPLACE DEFINER=" + W + " FUNCTION " + S +
                                  ".f_redef() RETURNS INT RETURN 1"));
  ASSERT_TRUE(rootExec(*root, "GRANT EXECUTE ON FUNCTION " + S + ".f_redef TO " + P));
  waitForCounters();
  auto definer = e.call("redef", Json::object());
  ASSERT_FALSE(definer);
  EXPECT_NE(definer.error().detail.find("definer"), std::string::npos) << definer.error().detail;
  ASSERT_TRUE(rootExec(*root, "CREATE OR REPLACE DEFINER=" + R + " FUNCTION " + S +
                                  ".f_redef() RETURNS INT RETURN 1"));
  ASSERT_TRUE(rootExec(*root, "GRANT EXECUTE ON FUNCTION " + S + ".f_redef TO " + P));
  ASSERT_TRUE(rootExec(*root, "GRANT EXECUTE ON FUNCTION " + S + ".f_redef TO " + R));
  waitForCounters();
  auto after = e.call("redef", Json::object());
  EXPECT_TRUE(after) << after.error().message << " (" << after.error().detail << ")";
}

// doctor: the view over the writer is a write path of this SELECT-only account (no Ok), the pure
// ones with a writing definer are flagged, and a tool reaching the view in any position is
// unusable, never "[ok] ... was checked".
TEST_F(MysqlDefiners, DoctorFlagsWritingDefinersAndTheToolsReachingThem) {
  Engine e(std::string(R"(mysql:
  sources:
    p: {dsn_env: )") +
           kDsnVariable + R"(}
  tools:
    oj: {description: d, statement: "SELECT t.id FROM {OJ v LEFT OUTER JOIN t ON 1}"}
    comma: {description: d, statement: "SELECT t.id FROM t JOIN u USING (id), v"}
    nested: {description: d, statement: SELECT x FROM v_over}
    fine: {description: d, statement: SELECT id FROM v_pure_r}
)");
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  const auto privileges = e.module->selfCheck(e.services);
  std::string all;
  for (const auto& f : privileges) all += f.check + ": " + f.message + "\n";
  bool viewViolation = false, pureWarning = false;
  for (const auto& f : privileges) {
    EXPECT_NE(f.severity, Severity::Ok) << all;
    if (f.check != "mysql.definer") continue;
    if (f.severity == Severity::Violation && f.message.find("view " + S + ".v ") == 0) {
      viewViolation = true;
    }
    if (f.severity == Severity::Warning && f.message.find(".v_pure_w") != std::string::npos) {
      pureWarning = true;
    }
  }
  EXPECT_TRUE(viewViolation) << all;
  EXPECT_TRUE(pureWarning) << all;
  const auto tools = e.module->checkTools(e.services);
  int unusable = 0, ok = 0;
  for (const auto& f : tools) {
    unusable += f.severity == Severity::Unusable ? 1 : 0;
    ok += f.severity == Severity::Ok ? 1 : 0;
  }
  EXPECT_EQ(unusable, 3);
  EXPECT_EQ(ok, 1);
}

}  // namespace
}  // namespace mcpdb::mysql::itest

namespace mcpdb::mysql::itest {
namespace {

// What the re-vetting adds to a call, measured as A/B rounds interleaved on one connection of the
// demo principal: the demo tool's statement alone (what a call ran before: begin, prepare,
// execute) against the same preceded by the per-call check (readCatalogEpoch), and the digest
// read only when definitions were counted (fingerprintObjects over the statement's names).
// Prints the figures; the assertion only guards against a check that became absurdly expensive.
TEST(MysqlVetCost, Figures) {
  auto c = openReader();
  ASSERT_TRUE(c);
  const std::string sql =
      "SELECT id, title, body, category, tags, published FROM documents WHERE id = ?";
  const std::vector<Param> params{std::string("doc-01")};
  const auto names = guard::collectNames(sql, "demo").names;
  using Clock = std::chrono::steady_clock;
  auto micros = [](Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
  };
  constexpr int kRounds = 300;
  double plain = 0, checked = 0, digest = 0, epochOnly = 0;
  bool ok = true;
  for (int i = 0; i < kRounds; ++i) {
    auto t0 = Clock::now();
    ok = ok && c->run(sql, params, CallLimits{}).ok();
    auto t1 = Clock::now();
    auto epoch = readCatalogEpoch(*c);
    auto t2 = Clock::now();
    ok = ok && epoch.ok() && c->run(sql, params, CallLimits{}).ok();
    auto t3 = Clock::now();
    ok = ok && fingerprintObjects(*c, names).ok();
    auto t4 = Clock::now();
    plain += micros(t1 - t0);
    epochOnly += micros(t2 - t1);
    checked += micros(t3 - t1);
    digest += micros(t4 - t3);
  }
  ASSERT_TRUE(ok);
  std::printf(
      "[vet cost] %d interleaved rounds, microseconds per call (mean):\n"
      "  call without the check (reset, begin, prepare, execute+read): %.0f\n"
      "  call with the check (SHOW GLOBAL STATUS first):               %.0f\n"
      "  the check alone:                                              %.0f\n"
      "  the digest (information_schema, only after counted DDL):      %.0f\n",
      kRounds, plain / kRounds, checked / kRounds, epochOnly / kRounds, digest / kRounds);
  RecordProperty("plain_us", static_cast<int>(plain / kRounds));
  RecordProperty("checked_us", static_cast<int>(checked / kRounds));
  RecordProperty("digest_us", static_cast<int>(digest / kRounds));
  EXPECT_LT(epochOnly / kRounds, 20000.0);
}

}  // namespace
}  // namespace mcpdb::mysql::itest
