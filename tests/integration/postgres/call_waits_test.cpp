// The PostgreSQL engine honours a call's waits (common/call_waits.hpp, CallContext::waits): every
// wait for the server's answer, and for a connection another call gives back, goes through them
// (the runner suspends the call there and runs other calls); it hands on before any other wait (a
// new connection, the proof); a call that never waits for anything but the server keeps them.
// Each wait on a call's path is made to happen here, the server's by a lock another session
// holds (describing the statement for the byte cap, then running it).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
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

// A runner's waits that count what the call asks of them: each suspend (done here with poll(), as
// the stdio transport's loop would after running other calls) and each hand-on. `suspending`
// false: waits of a runner that cannot suspend (every wait hands on first).
struct FakeRunner {
  explicit FakeRunner(bool suspending = true)
      : waits(suspending ? CallWaits::Suspend([this](int fd, short events, int timeout_ms) {
                ++suspends;
                pollfd p{fd, events, 0};
                const int n = ::poll(&p, 1, timeout_ms);
                return n < 0 ? -1 : n == 0 ? 0 : static_cast<int>(p.revents);
              })
                         : CallWaits::Suspend(),
              [this] {
                ++hand_ons;
                handed_on_at = SteadyClock::now();
              }) {}
  std::atomic<int> suspends{0};
  std::atomic<int> hand_ons{0};
  SteadyClock::time_point handed_on_at{};
  CallWaits waits;
};

TEST(PostgresCallWaits, TheExecutorSleepsThroughTheWaitsForTheServersAnswer) {
  const std::string dsn = requireEnv("POSTGRES_DSN");
  Owned<PGconn, PQfinish> conn(PQconnectdb(dsn.c_str()));
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  Owned<PGcancel, PQfreeCancel> cancel(PQgetCancel(conn.get()));
  FakeRunner runner;
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
                       .waits = &runner.waits},
                      outcome);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows[0]["n"], 3000000);
  EXPECT_GE(runner.suspends.load(), 1) << "the executor slept without its runner";
  EXPECT_EQ(runner.hand_ons.load(), 0);
}

TEST(PostgresCallWaits, ACallThatNeedsNoWaitOtherThanTheServersAnswerKeepsItsWaits) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());  // the pool's one connection is open
  FakeRunner runner;
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(call(*rt, "quick", Json::object(), {}, std::nullopt, &runner.waits).ok());
  EXPECT_FALSE(runner.waits.handedOn());
  EXPECT_EQ(runner.hand_ons.load(), 0);
  EXPECT_GE(runner.suspends.load(), 5) << "a call slept for its answer without its runner";
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
  FakeRunner runner;
  ASSERT_TRUE(call(*rt, "quick", Json::object(), {}, std::nullopt, &runner.waits).ok());
  EXPECT_EQ(runner.hand_ons.load(), 1);
}

// A call that finds every connection leased sleeps through its waits until one is given back (by
// another thread here; on the stdio transport usually by another call on the same thread).
TEST(PostgresCallWaits, ThePoolSleepsThroughTheWaitsForAConnectionGivenBack) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
  std::optional<Pool::Lease> held;
  {
    auto lease = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});  // the only one
    ASSERT_TRUE(lease.ok()) << lease.error().message;
    held.emplace(std::move(*lease));
  }
  SteadyClock::time_point given_back{};
  std::jthread giver([&] {
    std::this_thread::sleep_for(250ms);
    given_back = SteadyClock::now();
    held.reset();
  });
  FakeRunner runner;
  auto r = call(*rt, "quick", Json::object(), {}, std::nullopt, &runner.waits);
  const auto ended = SteadyClock::now();
  giver.join();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_GE(ended, given_back);
  EXPECT_LT(ended - given_back, 150ms) << "the call was not woken when the connection came back";
  EXPECT_EQ(runner.hand_ons.load(), 0);
  EXPECT_GE(runner.suspends.load(), 2) << "slept for the connection and the answer";
}

TEST(PostgresCallWaits, ThePoolTimesOutThroughTheWaits) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
  auto held = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});  // the only connection
  ASSERT_TRUE(held.ok()) << held.error().message;
  FakeRunner runner;
  Limits limits;
  limits.timeout = 300ms;
  auto r = call(*rt, "quick", Json::object(), {}, limits, &runner.waits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted) << r.error().message;
  EXPECT_EQ(runner.hand_ons.load(), 0);
  EXPECT_GE(runner.suspends.load(), 3) << "woke at least every 100 ms";
}

// A runner that cannot suspend: the pool hands on before it sleeps on its condition variable.
TEST(PostgresCallWaits, ThePoolHandsOnBeforeWaitingWhenTheRunnerCannotSuspend) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
  auto held = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});
  ASSERT_TRUE(held.ok()) << held.error().message;
  FakeRunner runner(false);
  Limits limits;
  limits.timeout = 300ms;
  auto r = call(*rt, "quick", Json::object(), {}, limits, &runner.waits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted) << r.error().message;
  EXPECT_EQ(runner.hand_ons.load(), 1);
  EXPECT_EQ(runner.suspends.load(), 0);
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
  FakeRunner runner;
  auto r = call(*rt, "quick", Json::object(), {}, std::nullopt, &runner.waits);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(runner.hand_ons.load(), 1);
}

// Steps of a call that wait on the server: each is made to wait by a table lock another session
// holds, and must sleep through the call's waits, never handing on.
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
  // Calls the tool while the table is locked, released after 600 ms. The call succeeds, having
  // slept through its waits while the lock was held.
  void callWhileLocked() {
    exec("BEGIN");
    exec("LOCK TABLE " + schema_ + ".t IN ACCESS EXCLUSIVE MODE");
    FakeRunner runner;
    SteadyClock::time_point unlocked_at{};
    {
      std::jthread unlocker([&] {
        std::this_thread::sleep_for(600ms);
        unlocked_at = SteadyClock::now();
        exec("COMMIT");
      });
      auto r = call(*rt_, "locked", Json::object(), {}, std::nullopt, &runner.waits);
      ASSERT_TRUE(r.ok()) << r.error().message;
    }
    EXPECT_GE(runner.suspends.load(), 2)
        << "slept without its runner while the server made it wait";
    // Not handed on while the server made it wait (a first run hands on after, for the guard's
    // check of the wrapped statement's new text).
    if (runner.hand_ons.load() != 0) {
      EXPECT_GT(runner.handed_on_at, unlocked_at);
    }
    hand_ons_ = runner.hand_ons.load();
  }

  int hand_ons_ = -1;

  std::string schema_;
  std::shared_ptr<Runtime> rt_;
  Owned<PGconn, PQfinish> locker_;
};

// The first call describes its statement for the byte cap (Runtime::cappedStatement): the
// description waits on the lock.
TEST_F(PostgresCallWaitsOnALock, DescribingTheStatementSleepsThroughTheCallsWaits) {
  // The guardrail's verdict on the statement remembered (a first check hands on: it waits for the
  // guard's parser thread), without describing it.
  ASSERT_TRUE(rt_->run("SELECT x FROM " + schema_ + ".t", BoundParams{}, Limits{},
                       std::stop_token{}, Clock::now() + 5s)
                  .ok());
  callWhileLocked();
}

// A later call runs the statement described before: the run waits on the lock.
TEST_F(PostgresCallWaitsOnALock, RunningTheStatementSleepsThroughTheCallsWaits) {
  ASSERT_TRUE(call(*rt_, "locked", Json::object()).ok());
  callWhileLocked();
  EXPECT_EQ(hand_ons_, 0) << "a call described and checked before handed on";
}

}  // namespace
}  // namespace mcpdb::postgres::itest
