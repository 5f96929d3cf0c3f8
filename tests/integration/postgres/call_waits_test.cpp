// The PostgreSQL engine honours a call's waits (common/call_waits.hpp, CallContext::waits): while
// the call sleeps in poll() it watches their descriptors and hands on when input arrives there;
// it hands on before any other wait (a pooled connection, a new one, the proof); a call that never
// waits for anything but the server's answer keeps them. Each wait on a call's path is made to
// happen here, the server's by a lock another session holds (describing the statement for the
// byte cap, then running it).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stop_token>
#include <thread>

#include "common/call_waits.hpp"
#include "config/config.hpp"
#include "engines/postgres/config.hpp"
#include "engines/postgres/executor.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kYaml = R"(
limits: {timeout_ms: 20000}
postgres:
  pool: {size: 1}
  tools:
    quick:
      description: One row.
      statement: SELECT 1 AS one
)";

// A pipe standing in for the runner's input (stdin), and waits on it that count hand-ons.
struct FakeInput {
  FakeInput() : waits({pipeRead(), -1}, [this] { handedOn(); }) {}
  ~FakeInput() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int pipeRead() {
    EXPECT_EQ(::pipe(fds), 0);
    return fds[0];
  }
  void handedOn() {
    ++hand_ons;
    handed_on_at = SteadyClock::now();
  }
  // Writes a byte after `after`, on a thread of its own.
  std::jthread arriveAfter(std::chrono::milliseconds after) {
    return std::jthread([this, after] {
      std::this_thread::sleep_for(after);
      ASSERT_EQ(::write(fds[1], "x", 1), 1);
    });
  }
  int fds[2] = {-1, -1};
  std::atomic<int> hand_ons{0};
  SteadyClock::time_point handed_on_at{};
  CallWaits waits;
};

TEST(PostgresCallWaits, TheExecutorHandsOnWhenInputArrivesWhileItWaits) {
  const std::string dsn = requireEnv("POSTGRES_DSN");
  Owned<PGconn, PQfinish> conn(PQconnectdb(dsn.c_str()));
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  Owned<PGcancel, PQfreeCancel> cancel(PQgetCancel(conn.get()));
  FakeInput input;
  auto writer = input.arriveAfter(50ms);
  ExecOutcome outcome;
  Limits limits;
  limits.timeout = 20s;
  Result<ExecResult> r =
      executeReadOnly(conn.get(), cancel.get(),
                      {.sql = "SELECT count(*) AS n FROM generate_series(1, 3000000) g",
                       .params = BoundParams{},
                       .limits = limits,
                       .stop = std::stop_token{},
                       .deadline = Clock::now() + 20s,
                       .waits = &input.waits},
                      outcome);
  const auto ended = SteadyClock::now();
  EXPECT_TRUE(input.waits.fds().empty()) << "nothing is watched once handed on";
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows[0]["n"], 3000000);
  EXPECT_EQ(input.hand_ons.load(), 1);
  EXPECT_LT(input.handed_on_at, ended - 100ms) << "handed on only when the statement had ended";
}

TEST(PostgresCallWaits, ACallThatNeedsNoWaitOtherThanTheServersAnswerKeepsItsWaits) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());  // the pool's one connection is open
  FakeInput input;
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(call(*rt, "quick", Json::object(), {}, std::nullopt, &input.waits).ok());
  EXPECT_FALSE(input.waits.handedOn());
  EXPECT_EQ(input.hand_ons.load(), 0);
}

TEST(PostgresCallWaits, ThePoolHandsOnBeforeOpeningAConnection) {
  auto rt = makeRuntime(kYaml);
  // The proof is made on a connection of the pool's own; close it, so the call must open one.
  ASSERT_TRUE(rt->proveNow().ok());
  {
    auto proofs = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});
    ASSERT_TRUE(proofs.ok()) << proofs.error().message;
    proofs->markBroken();
  }
  FakeInput input;
  ASSERT_TRUE(call(*rt, "quick", Json::object(), {}, std::nullopt, &input.waits).ok());
  EXPECT_EQ(input.hand_ons.load(), 1);
}

TEST(PostgresCallWaits, ThePoolHandsOnBeforeWaitingForAConnection) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
  auto held = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});  // the only connection
  ASSERT_TRUE(held.ok()) << held.error().message;
  FakeInput input;
  Limits limits;
  limits.timeout = 300ms;
  auto r = call(*rt, "quick", Json::object(), {}, limits, &input.waits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted) << r.error().message;
  EXPECT_EQ(input.hand_ons.load(), 1);
}

// A call that finds the proof older than its interval waits for the background prover: it hands
// on first (the interval is shortened to one second below the config's minimum, as in
// proof_window_test.cpp).
TEST(PostgresCallWaits, ACallHandsOnBeforeWaitingForTheProof) {
  config::Diagnostics diag("itest.yaml");
  config::Config cfg = config::parseConfig(kYaml, "itest.yaml", {"postgres"}, diag);
  ASSERT_TRUE(diag.ok());
  config::Node root(cfg.root, "", diag);
  Settings section = parseSettings(root.child("postgres"), cfg.limits);
  section.proof.interval = 1s;
  auto rt = std::make_shared<Runtime>(section, envWithDsn(requireEnv("POSTGRES_DSN")));
  ASSERT_TRUE(rt->proveNow().ok());
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());  // described and prepared: no other wait
  std::this_thread::sleep_for(1200ms);                   // the proof has expired
  FakeInput input;
  auto r = call(*rt, "quick", Json::object(), {}, std::nullopt, &input.waits);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(input.hand_ons.load(), 1);
}

// Steps of a call that wait on the server: each is made to wait by a table lock another session
// holds, and input arriving meanwhile must hand on while the lock is still held.
class PostgresCallWaitsOnALock : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    schema_ = "call_waits_" + std::to_string(std::hash<std::string>{}(test) % 1000000);
    (void)adminQuery("CREATE SCHEMA IF NOT EXISTS " + schema_);
    (void)adminQuery("CREATE TABLE IF NOT EXISTS " + schema_ + ".t (x int)");
    (void)adminQuery("GRANT USAGE ON SCHEMA " + schema_ + " TO mcp_reader");
    (void)adminQuery("GRANT SELECT ON " + schema_ + ".t TO mcp_reader");
    rt_ = makeRuntime(R"(
limits: {timeout_ms: 20000}
postgres:
  pool: {size: 1}
  tools:
    locked:
      description: Rows of a table another session locks.
      statement: SELECT x FROM )" +
                      schema_ + ".t\n");
    // The pool's one connection open and idle, so that no call here must connect (a hand-on).
    {
      auto lease = rt_->pool().acquire(Clock::now() + 5s, std::stop_token{});
      ASSERT_TRUE(lease.ok()) << lease.error().message;
    }
    ASSERT_EQ(rt_->pool().openCount(), 1U);
    locker_.reset(PQconnectdb(requireEnv("MCPDB_PG_ADMIN_DSN").c_str()));
    ASSERT_EQ(PQstatus(locker_.get()), CONNECTION_OK);
  }
  void TearDown() override {
    locker_.reset();
    (void)adminQuery("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
  }
  void exec(const std::string& sql) {
    Owned<PGresult, PQclear> r(PQexec(locker_.get(), sql.c_str()));
    ASSERT_EQ(PQresultStatus(r.get()), PGRES_COMMAND_OK) << sql;
  }
  // Calls the tool while the table is locked: input arrives after 100 ms, the lock is released
  // after 600 ms. The call succeeds, having handed on once, before the lock was released.
  void callWhileLocked() {
    exec("BEGIN");
    exec("LOCK TABLE " + schema_ + ".t IN ACCESS EXCLUSIVE MODE");
    FakeInput input;
    SteadyClock::time_point unlocked_at{};
    {
      auto writer = input.arriveAfter(100ms);
      std::jthread unlocker([&] {
        std::this_thread::sleep_for(600ms);
        unlocked_at = SteadyClock::now();
        exec("COMMIT");
      });
      auto r = call(*rt_, "locked", Json::object(), {}, std::nullopt, &input.waits);
      ASSERT_TRUE(r.ok()) << r.error().message;
    }
    EXPECT_EQ(input.hand_ons.load(), 1);
    EXPECT_LT(input.handed_on_at, unlocked_at) << "not handed on while the server made it wait";
  }

  std::string schema_;
  std::shared_ptr<Runtime> rt_;
  Owned<PGconn, PQfinish> locker_;
};

// The first call describes its statement for the byte cap (Runtime::cappedStatement): the
// description waits on the lock.
TEST_F(PostgresCallWaitsOnALock, DescribingTheStatementWatchesTheCallsWaits) {
  // The guardrail's verdict on the statement remembered (a first check hands on: it waits for the
  // guard's parser thread), without describing it.
  ASSERT_TRUE(rt_->run("SELECT x FROM " + schema_ + ".t", BoundParams{}, Limits{},
                       std::stop_token{}, Clock::now() + 5s)
                  .ok());
  callWhileLocked();
}

// A later call runs the statement described before: the run waits on the lock.
TEST_F(PostgresCallWaitsOnALock, RunningTheStatementWatchesTheCallsWaits) {
  ASSERT_TRUE(call(*rt_, "locked", Json::object()).ok());
  callWhileLocked();
}

}  // namespace
}  // namespace mcpdb::postgres::itest
