// The PostgreSQL engine's side of the input_watch contract (common/input_watch.hpp): while a call
// holds a stdio reader's role, the executor watches the reader's descriptors as it sleeps and hands
// the role on when input arrives there; the pool hands it on before it waits for or opens a
// connection; a call that never has to do either keeps it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <thread>

#include "common/input_watch.hpp"
#include "engines/postgres/executor.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using namespace std::chrono_literals;

constexpr const char* kYaml = R"(
limits: {timeout_ms: 20000}
postgres:
  pool: {size: 1}
  tools:
    quick:
      description: One row.
      statement: SELECT 1 AS one
)";

// A pipe standing in for stdin, and a watch on it that counts releases.
struct FakeInput {
  FakeInput() {
    EXPECT_EQ(::pipe(fds), 0);
    watch.fds = {fds[0], -1};
    watch.release = [this] {
      ++releases;
      released_at = std::chrono::steady_clock::now();
    };
  }
  ~FakeInput() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int fds[2] = {-1, -1};
  input_watch::Watch watch;
  std::atomic<int> releases{0};
  std::chrono::steady_clock::time_point released_at{};
};

TEST(PostgresInputWatch, TheExecutorHandsTheRoleOnWhenInputArrivesWhileItWaits) {
  const std::string dsn = requireEnv("POSTGRES_DSN");
  Owned<PGconn, PQfinish> conn(PQconnectdb(dsn.c_str()));
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
  Owned<PGcancel, PQfreeCancel> cancel(PQgetCancel(conn.get()));
  FakeInput input;
  std::jthread writer([&] {
    std::this_thread::sleep_for(50ms);
    ASSERT_EQ(::write(input.fds[1], "x", 1), 1);
  });
  ExecOutcome outcome;
  Limits limits;
  limits.timeout = 20s;
  Result<ExecResult> r = makeError(Code::Internal, "not run");
  {
    input_watch::Scope scope(input.watch);
    r = executeReadOnly(conn.get(), cancel.get(),
                        {.sql = "SELECT count(*) AS n FROM generate_series(1, 3000000) g",
                         .params = BoundParams{},
                         .limits = limits,
                         .stop = std::stop_token{},
                         .deadline = Clock::now() + 20s},
                        outcome);
    EXPECT_EQ(input_watch::current(), nullptr) << "the watch is gone once released";
  }
  const auto ended = std::chrono::steady_clock::now();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows[0]["n"], 3000000);
  EXPECT_EQ(input.releases.load(), 1);
  EXPECT_LT(input.released_at, ended - 100ms) << "released only when the statement had ended";
}

TEST(PostgresInputWatch, ACallThatNeedsNoWaitOtherThanTheServersAnswerKeepsTheRole) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());  // the pool's one connection is open
  FakeInput input;
  {
    input_watch::Scope scope(input.watch);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
    EXPECT_NE(input_watch::current(), nullptr);
  }
  EXPECT_EQ(input.releases.load(), 0);
}

TEST(PostgresInputWatch, ThePoolHandsTheRoleOnBeforeOpeningAConnection) {
  auto rt = makeRuntime(kYaml);
  // The proof is made on a connection of the pool's own; close it, so the call must open one.
  ASSERT_TRUE(rt->proveNow().ok());
  {
    auto proofs = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});
    ASSERT_TRUE(proofs.ok()) << proofs.error().message;
    proofs->markBroken();
  }
  FakeInput input;
  {
    input_watch::Scope scope(input.watch);
    ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
  }
  EXPECT_EQ(input.releases.load(), 1);
}

TEST(PostgresInputWatch, ThePoolHandsTheRoleOnBeforeWaitingForAConnection) {
  auto rt = makeRuntime(kYaml);
  ASSERT_TRUE(call(*rt, "quick", Json::object()).ok());
  auto held = rt->pool().acquire(Clock::now() + 5s, std::stop_token{});  // the only connection
  ASSERT_TRUE(held.ok()) << held.error().message;
  FakeInput input;
  Limits limits;
  limits.timeout = 300ms;
  {
    input_watch::Scope scope(input.watch);
    auto r = call(*rt, "quick", Json::object(), {}, limits);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Code::ResourceExhausted) << r.error().message;
  }
  EXPECT_EQ(input.releases.load(), 1);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
