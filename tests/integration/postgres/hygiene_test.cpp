// Connection hygiene: nothing one call does to its session is visible to the next call on the same
// pooled connection, on every way a call can end (success, statement error, row cap, timeout).
// The statements here are ones the guard and the catalog proof refuse: the executor is driven
// directly, as if both had been bypassed, because this layer must hold on its own.
#include <gtest/gtest.h>

#include <thread>

#include "engines/postgres/executor.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using std::chrono::milliseconds;

constexpr const char* kYaml = R"(
postgres:
  pool: {size: 1}
  tools:
    one:
      description: One.
      statement: SELECT 1 AS one
)";

// Runs `sql` on the runtime's single pooled connection, past the guard.
Result<ExecResult> exec(Runtime& rt, const std::string& sql, Limits limits = {}) {
  const Clock::time_point deadline = Clock::now() + limits.timeout;
  std::stop_source never;
  auto lease = rt.pool().acquire(deadline, never.get_token());
  if (!lease) return lease.error();
  ExecOutcome outcome;
  auto r = executeReadOnly(lease->conn(), lease->cancel(),
                           {.sql = sql,
                            .params = BoundParams{},
                            .limits = limits,
                            .stop = never.get_token(),
                            .deadline = deadline,
                            .types = rt.pool().types(),
                            .prepared = lease->prepared()},
                           outcome);
  if (outcome.broken) lease->markBroken();
  return r;
}

std::string firstValue(const Result<ExecResult>& r, const char* column) {
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok() || r->rows.empty()) return "<none>";
  const Json& v = r->rows[0][column];
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string pidOf(Runtime& rt) {
  return firstValue(exec(rt, "SELECT pg_backend_pid() AS pid"), "pid");
}

// Advisory locks held by a backend, seen from another session.
std::string advisoryLocks(const std::string& pid) {
  return adminQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = " + pid)
      .value_or("?");
}

TEST(PostgresHygiene, SessionSettingsDoNotReachTheNextCall) {
  auto rt = makeRuntime(kYaml);
  const std::string pid = pidOf(*rt);
  const std::string before = firstValue(
      exec(*rt,
           "SELECT current_setting('search_path') || '|' || "
           "current_setting('application_name') || '|' || current_setting('work_mem') AS s"),
      "s");
  auto r = exec(*rt,
                "SELECT set_config('search_path', 'pg_temp, evil', false) AS a, "
                "set_config('application_name', 'leaked', false) AS b, "
                "set_config('work_mem', '64kB', false) AS c");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(pidOf(*rt), pid) << "the same connection must serve the next call";
  EXPECT_EQ(firstValue(exec(*rt,
                            "SELECT current_setting('search_path') || '|' || "
                            "current_setting('application_name') || '|' || "
                            "current_setting('work_mem') AS s"),
                       "s"),
            before);
}

// Each way a call can end, with a session-level advisory lock taken before it ends.
struct LockCase {
  const char* name;
  const char* sql;
  Limits limits;
  bool ok;
};

TEST(PostgresHygiene, AdvisoryLocksAreReleasedHoweverTheCallEnds) {
  auto rt = makeRuntime(kYaml);
  const std::string pid = pidOf(*rt);
  const LockCase cases[] = {
      {"success", "SELECT pg_advisory_lock(4201) AS l", {}, true},
      {"shared and stacked",
       "SELECT pg_advisory_lock_shared(4202), pg_advisory_lock(4202)",
       {},
       true},
      {"statement error", "SELECT pg_advisory_lock(4203), 1 / 0 AS boom", {}, false},
      {"row cap", "SELECT pg_advisory_lock(4204 + g % 3), g FROM generate_series(1, 200000) g",
       Limits{.max_rows = 1, .max_bytes = 1 << 20, .timeout = milliseconds(20000)}, true},
      {"timeout", "SELECT pg_advisory_lock(4207), pg_sleep(30)",
       Limits{.max_rows = 10, .max_bytes = 1 << 20, .timeout = milliseconds(300)}, false},
  };
  for (const LockCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = exec(*rt, c.sql, c.limits);
    EXPECT_EQ(r.ok(), c.ok) << (r.ok() ? "" : r.error().message);
    const std::string now = pidOf(*rt);
    if (now == pid) {
      EXPECT_EQ(advisoryLocks(pid), "0");
    } else {
      // A connection that could not be cleaned is closed (its locks die with it), never reused.
      EXPECT_EQ(adminQuery("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid), "0");
    }
    EXPECT_EQ(advisoryLocks(now), "0");
  }
}

TEST(PostgresHygiene, NotificationsAreDiscarded) {
  auto rt = makeRuntime(kYaml);
  using ConnPtr = Owned<PGconn, PQfinish>;
  using ResPtr = Owned<PGresult, PQclear>;
  ConnPtr listener(PQconnectdb(requireEnv("MCPDB_PG_ADMIN_DSN").c_str()));
  ASSERT_EQ(PQstatus(listener.get()), CONNECTION_OK);
  ResPtr l(PQexec(listener.get(), "LISTEN mcpdb_hygiene"));
  ASSERT_EQ(PQresultStatus(l.get()), PGRES_COMMAND_OK);
  auto r = exec(*rt, "SELECT pg_notify('mcpdb_hygiene', 'from a read-only call') AS n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  // A control notification from another session shows the listener would have seen one.
  ResPtr n(PQexec(listener.get(), "NOTIFY mcpdb_hygiene, 'control'"));
  std::this_thread::sleep_for(milliseconds(200));
  ASSERT_EQ(PQconsumeInput(listener.get()), 1);
  std::vector<std::string> seen;
  while (PGnotify* note = PQnotifies(listener.get())) {
    seen.emplace_back(note->extra);
    PQfreemem(note);
  }
  EXPECT_EQ(seen, std::vector<std::string>{"control"});
}

TEST(PostgresHygiene, PreparedStatementsSurviveTheCleanup) {
  // The hot path's prepared statements stay (no DISCARD ALL): the second run reuses the first's.
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(exec(*rt, "SELECT 41 + 1 AS v").ok());
  const std::string count =
      firstValue(exec(*rt,
                      "SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = "
                      "'SELECT 41 + 1 AS v'"),
                 "n");
  EXPECT_EQ(count, "1");
}

// The per-call unlock through the serving path, for code the proof accepts: an allowlisted
// function (the proof takes the operator's word for it, as it would for anything it missed)
// takes a session-level advisory lock; whichever way the call ends, no lock outlives it, in
// sequence on the one pooled connection. Describing a statement (a schema resource) runs Parse,
// where a domain's CHECK already runs when a literal of an array of the domain is coerced: that
// lock does not outlive the description either.
constexpr const char* kLockSchema = R"(
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS hygiene_lock;
CREATE OR REPLACE FUNCTION hygiene_lock.take(k bigint, pause float8 DEFAULT 0) RETURNS bigint
  LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(k); PERFORM pg_sleep(pause); RETURN k; END $$;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                 WHERE n.nspname = 'hygiene_lock' AND t.typname = 'locking') THEN
    CREATE DOMAIN hygiene_lock.locking AS int CHECK (hygiene_lock.take(VALUE) > 0);
  END IF;
END $$;
GRANT USAGE ON SCHEMA hygiene_lock TO mcp_reader;
GRANT EXECUTE ON FUNCTION hygiene_lock.take(bigint, float8) TO mcp_reader;
)";

constexpr const char* kLockYaml = R"(
postgres:
  pool: {size: 1}
  proof:
    allow_functions:
      - function: hygiene_lock.take
        reason: a test stand-in for code the proof cannot see takes a lock
  tools:
    pid:
      description: The backend.
      statement: SELECT pg_backend_pid() AS pid
    takes:
      description: Takes a lock and returns.
      statement: SELECT hygiene_lock.take($1) AS k
      parameters: [{name: k, type: integer, description: Key.}]
    takes_then_fails:
      description: Takes a lock, then divides by zero.
      statement: SELECT hygiene_lock.take($1) AS k, 1 / ($1 - $1) AS boom
      parameters: [{name: k, type: integer, description: Key.}]
    takes_per_row:
      description: Takes a lock per row (row cap).
      statement: SELECT hygiene_lock.take($1 + g % 3) AS k, g FROM generate_series(1, 100000) g
      parameters: [{name: k, type: integer, description: Key.}]
      limits: {max_rows: 1}
    takes_then_waits:
      description: Takes a lock, then sleeps (cancellation and timeout).
      statement: SELECT hygiene_lock.take($1, 30) AS k
      parameters: [{name: k, type: integer, description: Key.}]
      limits: {timeout_ms: 400}
    domain_array:
      description: A literal of an array of a domain whose CHECK takes a lock.
      statement: SELECT '{4261}'::hygiene_lock.locking[] AS a
)";

std::string callPid(Runtime& rt) {
  auto r = call(rt, "pid", Json::object());
  if (!r.ok()) return "<" + r.error().message + ">";
  return std::to_string(r->structured["rows"][0]["pid"].get<std::int64_t>());
}

// The advisory locks of the whole cluster on a test's own keys (each test has its own range and
// its own schema: ctest runs them at the same time).
std::string locksOnKeys(int from, int to) {
  return adminQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid BETWEEN " +
                    std::to_string(from) + " AND " + std::to_string(to))
      .value_or("?");
}

// kLockSchema or kLockYaml with the schema renamed for one test.
std::string inSchema(std::string text, const std::string& schema) {
  const std::string from = "hygiene_lock";
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + schema.size())) {
    text.replace(at, from.size(), schema);
  }
  return text;
}

TEST(PostgresHygiene, NoAdvisoryLockOutlivesAServedCall) {
  const std::string schema = "hygiene_lock_call";
  ASSERT_EQ(superuserExec(inSchema(kLockSchema, schema)), "");
  auto rt = makeRuntime(inSchema(kLockYaml, schema));
  ASSERT_TRUE(rt->requireProof("SELECT " + schema + ".take($1) AS k").ok());
  const std::string pid = callPid(*rt);
  struct Step {
    const char* tool;
    int key;
    bool ok;
  } steps[] = {{"takes", 4251, true},
               {"takes", 4251, true},
               {"takes_then_fails", 4252, false},
               {"takes_per_row", 4253, true},
               {"takes_then_waits", 4257, false},
               {"takes", 4258, true}};
  for (const Step& s : steps) {
    SCOPED_TRACE(s.tool);
    auto r = call(*rt, s.tool, Json{{"k", s.key}});
    EXPECT_EQ(r.ok(), s.ok) << (r.ok() ? "" : r.error().message);
    EXPECT_EQ(locksOnKeys(4250, 4259), "0");
  }
  // Cancelled mid-statement, while the lock is held.
  std::stop_source stop;
  std::jthread canceller([&] {
    std::this_thread::sleep_for(milliseconds(150));
    stop.request_stop();
  });
  auto cancelled =
      call(*rt, "takes_then_waits", Json{{"k", 4259}}, stop.get_token(),
           Limits{.max_rows = 10, .max_bytes = 1 << 20, .timeout = milliseconds(20000)});
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.error().code, Code::Cancelled) << cancelled.error().message;
  EXPECT_EQ(locksOnKeys(4250, 4259), "0");
  // The calls ran on the pool's one connection, or on its successor when one had to be dropped.
  const std::string now = callPid(*rt);
  EXPECT_EQ(advisoryLocks(now), "0");
  if (now != pid) {
    EXPECT_EQ(advisoryLocks(pid), "0");
  }
  EXPECT_EQ(superuserExec("DROP SCHEMA " + schema + " CASCADE"), "");
}

TEST(PostgresHygiene, NoAdvisoryLockOutlivesADescription) {
  const std::string schema = "hygiene_lock_describe";
  ASSERT_EQ(superuserExec(inSchema(kLockSchema, schema)), "");
  auto rt = makeRuntime(inSchema(kLockYaml, schema));
  const std::string sql = "SELECT '{4261}'::" + schema + ".locking[] AS a";
  const std::string pid = callPid(*rt);
  std::stop_source never;
  auto shape = rt->describeStatement(sql, {}, never.get_token(), Clock::now() + milliseconds(5000));
  // Refused by the proof (a domain CHECK it judges) or described: either way no lock remains.
  if (shape.ok()) {
    EXPECT_EQ(shape->columns.size(), 1U);
  }
  EXPECT_EQ(locksOnKeys(4260, 4269), "0");
  {
    // The executor itself, as a description reaches it: Parse runs the CHECK.
    auto lease = rt->pool().acquire(Clock::now() + milliseconds(5000), never.get_token());
    ASSERT_TRUE(lease.ok());
    ExecOutcome outcome;
    auto direct = describeReadOnly(lease->conn(), lease->cancel(),
                                   {.sql = sql,
                                    .param_types = {},
                                    .stop = never.get_token(),
                                    .deadline = Clock::now() + milliseconds(5000)},
                                   outcome);
    ASSERT_TRUE(direct.ok()) << direct.error().message;
    EXPECT_EQ(adminQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND "
                         "objid = 4261 AND pid = " +
                         pid),
              "0");
    EXPECT_EQ(locksOnKeys(4260, 4269), "0");
  }
  EXPECT_EQ(superuserExec("DROP SCHEMA " + schema + " CASCADE"), "");
}

}  // namespace
}  // namespace mcpdb::postgres::itest
