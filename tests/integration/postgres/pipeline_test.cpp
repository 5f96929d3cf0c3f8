// The pipelined transaction (BEGIN READ ONLY, statement, ROLLBACK, unlock in one batch, one sync):
// every way it can fail must leave the connection clean for the next call — out of pipeline mode,
// out of any transaction, on the same backend (not silently replaced by a new connection) — and
// report the failure with its own class.
#include <gtest/gtest.h>

#include <thread>

#include "engines/postgres/executor.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using std::chrono::milliseconds;
using ConnPtr = Owned<PGconn, PQfinish>;
using ResPtr = Owned<PGresult, PQclear>;

constexpr const char* kYaml = R"(
limits: {timeout_ms: 30000}
postgres:
  pool: {size: 1, statement_timeout_ms: 300}
  tools:
    pid:
      description: The backend pid.
      statement: SELECT pg_backend_pid() AS pid
    divide:
      description: 100 divided by d.
      statement: SELECT 100 / $1 AS q
      parameters: [{name: d, type: integer, description: D}]
    divide_late:
      description: Fails after two rows were sent.
      statement: SELECT 10 / (g - 3) AS q FROM generate_series(1, 5) g
    slow:
      description: Runs into the server-side statement_timeout.
      statement: SELECT count(*) AS n FROM generate_series(1, 200005) a, generate_series(1, 200000) b
      limits: {timeout_ms: 10000}
    huge:
      description: A hundred million rows.
      statement: SELECT generate_series(1, 100000000) AS g
      limits: {max_rows: 5, timeout_ms: 20000}
)";

std::int64_t pidOf(Runtime& rt) {
  auto r = call(rt, "pid", Json::object());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r->structured["rows"][0]["pid"].get<std::int64_t>() : -1;
}

// The server's view of the backend: "idle" (not "idle in transaction", not "active").
std::string backendState(std::int64_t pid) {
  return readerQuery("SELECT state FROM pg_stat_activity WHERE pid = " + std::to_string(pid))
      .value_or("gone");
}

TEST(PostgresPipeline, StatementErrorLeavesTheConnectionUsable) {
  auto rt = makeRuntime(kYaml);
  const auto pid = pidOf(*rt);
  ASSERT_GT(pid, 0);
  auto r = call(*rt, "divide", Json{{"d", 0}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  EXPECT_EQ(r.error().message,
            "the database refused the query: the query divided by zero for these arguments "
            "(SQLSTATE 22012 division_by_zero)");
  EXPECT_EQ(backendState(pid), "idle");
  // The same connection serves the next call (it was not dropped and reopened).
  EXPECT_EQ(pidOf(*rt), pid);
  auto ok = call(*rt, "divide", Json{{"d", 4}});
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->structured["rows"], Json::parse(R"([{"q": 25}])"));
  EXPECT_EQ(rt->pool().openCount(), 1U);
}

TEST(PostgresPipeline, ErrorAfterRowsWereSentIsAnErrorNotAPartialResult) {
  auto rt = makeRuntime(kYaml);
  const auto pid = pidOf(*rt);
  auto r = call(*rt, "divide_late", Json::object());
  ASSERT_FALSE(r.ok()) << "rows before the error were returned as if complete";
  EXPECT_NE(r.error().message.find("SQLSTATE 22012"), std::string::npos) << r.error().message;
  EXPECT_EQ(backendState(pid), "idle");
  EXPECT_EQ(pidOf(*rt), pid);
}

TEST(PostgresPipeline, ServerStatementTimeoutIsReportedThenTheNextCallSucceeds) {
  auto rt = makeRuntime(kYaml);
  const auto pid = pidOf(*rt);
  const auto t0 = Clock::now();
  auto r = call(*rt, "slow", Json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::TimedOut);
  EXPECT_EQ(r.error().message,
            "the database refused the query: the statement was cancelled (timeout) (SQLSTATE 57014 "
            "query_canceled)");
  EXPECT_LT(Clock::now() - t0, milliseconds(5000));
  EXPECT_EQ(backendState(pid), "idle");
  EXPECT_EQ(pidOf(*rt), pid);
}

TEST(PostgresPipeline, ClientTimeoutIsReportedThenTheNextCallSucceeds) {
  auto rt = makeRuntime(kYaml);
  const auto pid = pidOf(*rt);
  // The call's own timeout (150 ms) is shorter than the server's statement_timeout (300 ms).
  auto r = call(*rt, "slow", Json::object(), {}, Limits{100, 1 << 20, milliseconds(150)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::TimedOut);
  EXPECT_EQ(r.error().message,
            "the statement exceeded the tool's timeout of 150 ms and was cancelled on the server");
  EXPECT_EQ(pidOf(*rt), pid);
  EXPECT_EQ(backendState(pid), "idle");
}

TEST(PostgresPipeline, RowCapTruncatesExplicitlyAndTheConnectionStays) {
  auto rt = makeRuntime(kYaml);
  const auto pid = pidOf(*rt);
  for (int i = 0; i < 2; ++i) {
    auto r = call(*rt, "huge", Json::object());
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->structured["rows"], Json::parse(R"([{"g":1},{"g":2},{"g":3},{"g":4},{"g":5}])"));
    EXPECT_EQ(r->structured["row_count"], 5);
    EXPECT_EQ(r->structured["truncated"], true);
    EXPECT_EQ(r->structured["note"],
              "Result truncated at 5 rows (max_rows). Narrow the request or page with the cursor "
              "to see more.");
    EXPECT_EQ(backendState(pid), "idle");
    EXPECT_EQ(pidOf(*rt), pid);
  }
}

TEST(PostgresPipeline, ManyCallsInARowStayOnOneConnection) {
  // Alternating successes and failures: no state leaks from one pipeline into the next.
  auto rt = makeRuntime(kYaml);
  const auto pid = pidOf(*rt);
  for (int i = 0; i < 50; ++i) {
    auto r = call(*rt, "divide", Json{{"d", i % 3}});
    if (i % 3 == 0) {
      ASSERT_FALSE(r.ok()) << i;
      EXPECT_EQ(r.error().code, Code::InvalidArgument) << i;
    } else {
      ASSERT_TRUE(r.ok()) << i << ": " << r.error().message;
      EXPECT_EQ(r->structured["rows"][0]["q"], 100 / (i % 3)) << i;
    }
  }
  EXPECT_EQ(pidOf(*rt), pid);
  EXPECT_EQ(rt->pool().openCount(), 1U);
}

// Below the guardrail, on a raw connection of the over-privileged role (no read-only session
// default): the pipelined BEGIN READ ONLY alone refuses writes, and the connection comes back out
// of pipeline mode and idle, usable by plain libpq.
class RawPipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    ensureTestSchema();
    const std::string dsn = requireEnv("MCPDB_PG_OVERPRIV_DSN");
    conn_.reset(PQconnectdb(dsn.c_str()));
    ASSERT_EQ(PQstatus(conn_.get()), CONNECTION_OK);
    cancel_.reset(PQgetCancel(conn_.get()));
  }
  Result<ExecResult> run(const char* sql, ExecOutcome& outcome, Limits limits = Limits{}) {
    std::stop_source never;
    return executeReadOnly(conn_.get(), cancel_.get(),
                           {.sql = sql,
                            .params = BoundParams{},
                            .limits = limits,
                            .stop = never.get_token(),
                            .deadline = Clock::now() + std::chrono::seconds(5)},
                           outcome);
  }
  void expectClean() {
    EXPECT_EQ(PQpipelineStatus(conn_.get()), PQ_PIPELINE_OFF);
    EXPECT_EQ(PQtransactionStatus(conn_.get()), PQTRANS_IDLE);
    // Plain synchronous libpq works again (it is refused in pipeline mode).
    ResPtr r(PQexec(conn_.get(), "SELECT 1"));
    EXPECT_EQ(PQresultStatus(r.get()), PGRES_TUPLES_OK);
  }
  ConnPtr conn_;
  Owned<PGcancel, PQfreeCancel> cancel_;
};

TEST_F(RawPipeline, WriteIsRefusedWithTheReadOnlySqlstate) {
  const std::string before = adminQuery("SELECT count(*) FROM pgtest.scratch").value_or("?");
  ExecOutcome outcome;
  auto r = run("INSERT INTO pgtest.scratch VALUES (25006)", outcome);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::PermissionDenied);
  EXPECT_NE(r.error().message.find("SQLSTATE 25006"), std::string::npos) << r.error().message;
  EXPECT_FALSE(outcome.broken);
  EXPECT_FALSE(outcome.stale);
  EXPECT_EQ(adminQuery("SELECT count(*) FROM pgtest.scratch").value_or("?"), before);
  expectClean();
  // And the next pipelined call on the same connection runs.
  ExecOutcome next;
  auto ok = run("SELECT count(*) AS n FROM generate_series(1, 501)", next);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->rows, Json::parse(R"([{"n": 501}])"));
  expectClean();
}

TEST_F(RawPipeline, StatementEndingTheTransactionCannotWriteAfterIt) {
  // A statement that commits the read-only transaction early: what follows in the batch is our
  // COMMIT (a no-op warning), never a write; the connection ends idle.
  ExecOutcome outcome;
  auto r = run("COMMIT", outcome);
  EXPECT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(outcome.broken);
  expectClean();
}

TEST_F(RawPipeline, SuccessLeavesPipelineModeAndReturnsColumns) {
  ExecOutcome outcome;
  auto r = run("SELECT g AS id, 'item-' || g AS name FROM generate_series(1, 3) g", outcome);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows, Json::parse(R"([{"id":1,"name":"item-1"},{"id":2,"name":"item-2"},
                                      {"id":3,"name":"item-3"}])"));
  EXPECT_EQ(r->columns,
            Json::parse(R"([{"name":"id","type":"int4"},{"name":"name","type":"text"}])"));
  EXPECT_FALSE(r->truncated);
  expectClean();
}

TEST_F(RawPipeline, ByteCapCancelsAndTheConnectionIsClean) {
  ExecOutcome outcome;
  auto r = run("SELECT generate_series(1, 100000000) AS g, repeat('x', 100) AS pad", outcome,
               Limits{1000, 1024, milliseconds(10000)});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->truncated);
  EXPECT_LT(r->row_count, 10U);
  EXPECT_NE(r->note.find("max_bytes"), std::string::npos);
  EXPECT_TRUE(outcome.cancel_sent);
  EXPECT_FALSE(outcome.broken);
  expectClean();
}

TEST_F(RawPipeline, DeadServerSideIsStaleBeforeAnythingIsSent) {
  // The backend is terminated while the connection is idle: the next call notices before it
  // sends, so the caller may retry elsewhere (stale), and reports a lost connection.
  ResPtr pid(PQexec(conn_.get(), "SELECT pg_backend_pid()"));
  const std::string backend = PQgetvalue(pid.get(), 0, 0);
  // Terminated by a second session of the same role (a role may signal its own backends).
  ConnPtr killer(PQconnectdb(requireEnv("MCPDB_PG_OVERPRIV_DSN").c_str()));
  ResPtr killed(PQexec(killer.get(), ("SELECT pg_terminate_backend(" + backend + ")").c_str()));
  ASSERT_EQ(PQresultStatus(killed.get()), PGRES_TUPLES_OK) << PQresultErrorMessage(killed.get());
  ASSERT_STREQ(PQgetvalue(killed.get(), 0, 0), "t");
  for (int i = 0; i < 50; ++i) {
    ResPtr n(PQexec(killer.get(),
                    ("SELECT count(*) FROM pg_stat_activity WHERE pid = " + backend).c_str()));
    if (std::string(PQgetvalue(n.get(), 0, 0)) == "0") break;
    std::this_thread::sleep_for(milliseconds(20));
  }
  ExecOutcome outcome;
  auto r = run("SELECT 1 AS x", outcome);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable);
  EXPECT_TRUE(outcome.broken);
  EXPECT_TRUE(outcome.stale);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
