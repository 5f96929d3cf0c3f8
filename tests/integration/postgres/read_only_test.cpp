// The read-only layers under the guardrail, each proven on its own with the deliberately
// over-privileged role (which CAN write, shown first):
//  - BEGIN READ ONLY in executeReadOnly refuses an INSERT even on a connection without the
//    read-only session default;
//  - the connect-time default_transaction_read_only=on refuses an INSERT sent outside any
//    explicit transaction;
//  - the guardrail refuses the write before any of that, on every run.
#include <gtest/gtest.h>

#include "engines/postgres/conninfo.hpp"
#include "engines/postgres/executor.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using ConnPtr = Owned<PGconn, PQfinish>;
using ResPtr = Owned<PGresult, PQclear>;

std::string scratchCount() {
  return adminQuery("SELECT count(*) FROM pgtest.scratch").value_or("?");
}

ConnPtr rawOverprivConnection() {
  ensureTestSchema();
  const std::string dsn = requireEnv("MCPDB_PG_OVERPRIV_DSN");
  ConnPtr c(PQconnectdb(dsn.c_str()));
  EXPECT_EQ(PQstatus(c.get()), CONNECTION_OK) << "cannot connect as the over-privileged role";
  return c;
}

TEST(PostgresReadOnly, TheOverprivilegedRoleCanWriteWithoutTheLayers) {
  // Control experiment: with no read-only layer the role writes (rolled back here).
  ConnPtr c = rawOverprivConnection();
  ResPtr begin(PQexecParams(c.get(), "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0));
  ResPtr ins(PQexecParams(c.get(), "INSERT INTO pgtest.scratch VALUES (1)", 0, nullptr, nullptr,
                          nullptr, nullptr, 0));
  EXPECT_EQ(PQresultStatus(ins.get()), PGRES_COMMAND_OK) << PQresultErrorMessage(ins.get());
  ResPtr rollback(PQexecParams(c.get(), "ROLLBACK", 0, nullptr, nullptr, nullptr, nullptr, 0));
}

TEST(PostgresReadOnly, ReadOnlyTransactionRefusesWritesBelowTheGuardrail) {
  ConnPtr c =
      rawOverprivConnection();  // no session options: only BEGIN READ ONLY stands in the way
  ResPtr show(PQexec(c.get(), "SHOW default_transaction_read_only"));
  ASSERT_EQ(std::string(PQgetvalue(show.get(), 0, 0)), "off");
  Owned<PGcancel, PQfreeCancel> cancel(PQgetCancel(c.get()));
  const std::string before = scratchCount();
  std::stop_source never;
  ExecOutcome outcome;
  auto r = executeReadOnly(c.get(), cancel.get(),
                           {.sql = "INSERT INTO pgtest.scratch VALUES (42)",
                            .params = BoundParams{},
                            .limits = Limits{},
                            .stop = never.get_token(),
                            .deadline = Clock::now() + std::chrono::seconds(5)},
                           outcome);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::PermissionDenied);
  EXPECT_EQ(r.error().message,
            "the database refused the query: the transaction is read-only, writes are refused "
            "(SQLSTATE 25006 "
            "read_only_sql_transaction)");
  EXPECT_EQ(scratchCount(), before);
  // The connection was brought back to idle (ROLLBACK after the error).
  EXPECT_EQ(PQtransactionStatus(c.get()), PQTRANS_IDLE);
  EXPECT_FALSE(outcome.broken);
  // A data-modifying CTE and SELECT ... INTO are refused the same way.
  for (const char* sql :
       {"WITH d AS (DELETE FROM pgtest.items RETURNING 1) SELECT count(*) FROM d",
        "SELECT 1 AS x INTO pgtest.sneaky", "UPDATE pgtest.items SET name = 'x'"}) {
    ExecOutcome o;
    auto w = executeReadOnly(c.get(), cancel.get(),
                             {.sql = sql,
                              .params = BoundParams{},
                              .limits = Limits{},
                              .stop = never.get_token(),
                              .deadline = Clock::now() + std::chrono::seconds(5)},
                             o);
    ASSERT_FALSE(w.ok()) << sql;
    EXPECT_EQ(w.error().code, Code::PermissionDenied) << sql;
  }
  EXPECT_EQ(adminQuery("SELECT count(*) FROM pgtest.items").value_or(""), "501");
}

TEST(PostgresReadOnly, ConnectTimeDefaultRefusesWritesOutsideATransaction) {
  ensureTestSchema();
  PoolSettings settings;
  Env env = envWithDsn(requireEnv("MCPDB_PG_OVERPRIV_DSN"));
  auto params = buildConnParams(settings, env, {});
  ASSERT_TRUE(params.ok()) << params.error().message;
  auto c = openConnection(*params, Clock::now() + std::chrono::seconds(5), std::stop_token{});
  ASSERT_TRUE(c.ok()) << c.error().message;
  PGconn* conn = (*c)->conn.get();
  ResPtr show(PQexecParams(conn, "SHOW default_transaction_read_only", 0, nullptr, nullptr, nullptr,
                           nullptr, 0));
  EXPECT_EQ(std::string(PQgetvalue(show.get(), 0, 0)), "on");
  ResPtr app(PQexecParams(conn, "SHOW application_name", 0, nullptr, nullptr, nullptr, nullptr, 0));
  EXPECT_EQ(std::string(PQgetvalue(app.get(), 0, 0)), "mcp-dbserver");
  ResPtr timeout(PQexecParams(conn, "SHOW idle_in_transaction_session_timeout", 0, nullptr, nullptr,
                              nullptr, nullptr, 0));
  EXPECT_EQ(std::string(PQgetvalue(timeout.get(), 0, 0)), "10s");
  const std::string before = scratchCount();
  ResPtr ins(PQexecParams(conn, "INSERT INTO pgtest.scratch VALUES (7)", 0, nullptr, nullptr,
                          nullptr, nullptr, 0));
  EXPECT_EQ(PQresultStatus(ins.get()), PGRES_FATAL_ERROR);
  EXPECT_STREQ(PQresultErrorField(ins.get(), PG_DIAG_SQLSTATE), "25006");
  EXPECT_EQ(scratchCount(), before);
}

TEST(PostgresReadOnly, GuardrailRefusesBeforeEveryExecution) {
  // Runtime::run re-checks even a statement that never went through config validation.
  auto rt = makeRuntime("version: 1\n", envWithDsn(requireEnv("MCPDB_PG_OVERPRIV_DSN")));
  std::stop_source never;
  for (const char* sql :
       {"INSERT INTO pgtest.scratch VALUES (1)", "SELECT 1; DELETE FROM pgtest.scratch",
        "SELECT pg_read_file('/etc/passwd')", "/* x */ COMMIT; DROP TABLE pgtest.scratch --",
        "SELECT * FROM pgtest.items FOR UPDATE"}) {
    auto r = rt->run(sql, BoundParams{}, Limits{}, never.get_token(),
                     Clock::now() + std::chrono::seconds(5));
    ASSERT_FALSE(r.ok()) << sql;
    EXPECT_EQ(r.error().code, Code::PermissionDenied) << sql;
    EXPECT_EQ(r.error().message.find("SQLSTATE"), std::string::npos)
        << "reached the database: " << sql;
  }
  EXPECT_EQ(rt->pool().openCount(), 0U);  // nothing even connected
}

TEST(PostgresReadOnly, GuardrailVerdictIsTheSameOnEveryRun) {
  // Allowed statements are remembered; a refusal is not, and stays a refusal however often it is
  // tried, also after an allowed statement ran.
  auto rt = makeRuntime("version: 1\n", envWithDsn(requireEnv("MCPDB_PG_OVERPRIV_DSN")));
  std::stop_source never;
  const auto deadline = [] { return Clock::now() + std::chrono::seconds(5); };
  for (int i = 0; i < 3; ++i) {
    auto ok = rt->run("SELECT 1 AS one", BoundParams{}, Limits{}, never.get_token(), deadline());
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    EXPECT_EQ(ok->rows, Json::parse(R"([{"one": 1}])"));
    auto refused = rt->run("DELETE FROM pgtest.scratch", BoundParams{}, Limits{}, never.get_token(),
                           deadline());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, Code::PermissionDenied);
    EXPECT_EQ(refused.error().message.find("SQLSTATE"), std::string::npos);
    // The remembered placeholder count is still compared with the bound parameters.
    BoundParams one;
    one.add("1", oid::kInt8);
    auto mismatch = rt->run("SELECT 1 AS one", one, Limits{}, never.get_token(), deadline());
    ASSERT_FALSE(mismatch.ok());
    EXPECT_EQ(mismatch.error().code, Code::Internal);
  }
  EXPECT_EQ(adminQuery("SELECT count(*) FROM pgtest.items").value_or(""), "501");
}

TEST(PostgresReadOnly, ReaderRoleSessionSettings) {
  auto rt = makeRuntime(R"(
postgres:
  pool: {statement_timeout_ms: 4321}
  tools:
    settings:
      description: Session settings.
      statement: >-
        SELECT current_setting('default_transaction_read_only') AS default_ro,
               current_setting('transaction_read_only') AS tx_ro,
               current_setting('statement_timeout') AS statement_timeout,
               current_setting('application_name') AS app,
               current_setting('TimeZone') AS tz
)");
  auto r = call(*rt, "settings", Json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["rows"][0], Json::parse(R"({"default_ro": "on", "tx_ro": "on",
    "statement_timeout": "4321ms", "app": "mcp-dbserver", "tz": "UTC"})"));
}

}  // namespace
}  // namespace mcpdb::postgres::itest
