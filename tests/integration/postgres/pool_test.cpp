// The pool: reconnect after the server side of a connection dies (pg_terminate_backend by the
// admin role: the shared server is not restarted), a clear Unavailable error when the server is
// unreachable, and the pool size bound.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

constexpr const char* kPidYaml = R"(
postgres:
  pool: {size: 1}
  tools:
    pid:
      description: The backend pid.
      statement: SELECT pg_backend_pid() AS pid
    slow:
      description: Slow.
      statement: SELECT count(*) AS n FROM generate_series(1, 200004) a, generate_series(1, 200000) b
      limits: {timeout_ms: 1500}
)";

std::int64_t pidOf(Runtime& rt) {
  auto r = call(rt, "pid", Json::object());
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? r->structured["rows"][0]["pid"].get<std::int64_t>() : -1;
}

TEST(PostgresPool, ReusesOneConnection) {
  auto rt = makeRuntime(kPidYaml);
  const auto a = pidOf(*rt);
  const auto b = pidOf(*rt);
  EXPECT_EQ(a, b);
  EXPECT_EQ(rt->pool().openCount(), 1U);
}

TEST(PostgresPool, ReconnectsAfterTheBackendIsTerminated) {
  auto rt = makeRuntime(kPidYaml);
  const auto pid = pidOf(*rt);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(readerQuery("SELECT pg_terminate_backend(" + std::to_string(pid) + ")").value_or(""),
            "t");
  for (int i = 0; i < 50; ++i) {
    if (readerQuery("SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid))
            .value_or("1") == "0")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // The next call notices the dead pooled connection before running anything and retries on a
  // new one: it succeeds, on another backend.
  const auto next = pidOf(*rt);
  EXPECT_GT(next, 0);
  EXPECT_NE(next, pid);
  EXPECT_EQ(rt->pool().openCount(), 1U);
}

TEST(PostgresPool, OutageDuringAStatementIsUnavailableThenRecovers) {
  auto rt = makeRuntime(kPidYaml);
  const auto pid = pidOf(*rt);
  std::optional<Result<protocol::ToolOutput>> result;
  std::thread worker([&] { result.emplace(call(*rt, "slow", Json::object())); });
  for (int i = 0; i < 100; ++i) {
    if (readerQuery("SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND pid = " +
                    std::to_string(pid))
            .value_or("0") == "1") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(readerQuery("SELECT pg_terminate_backend(" + std::to_string(pid) + ")").value_or(""),
            "t");
  worker.join();
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->error().code, Code::Unavailable) << result->error().message;
  EXPECT_EQ(result->error().message.find("127.0.0.1"), std::string::npos);
  EXPECT_EQ(result->error().message.find("mcp_reader"), std::string::npos);
  EXPECT_GT(pidOf(*rt), 0);
}

TEST(PostgresPool, UnreachableServerIsUnavailableWithoutDetails) {
  // A port nothing listens on (the server's port + 1 would be a guess; port 1 is never Postgres).
  auto rt = makeRuntime(kPidYaml,
                        envWithDsn("postgresql://mcp_reader:not-the-password@127.0.0.1:1/mcpdemo"));
  const auto t0 = Clock::now();
  auto r = call(*rt, "pid", Json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable);
  EXPECT_EQ(r.error().message, "cannot connect to PostgreSQL: the server is unreachable");
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(3));
  EXPECT_EQ(rt->pool().openCount(), 0U);
}

TEST(PostgresPool, WrongPasswordIsAClearErrorWithoutTheCredentials) {
  std::string dsn = requireEnv("POSTGRES_DSN");
  const auto at = dsn.find('@');
  const auto colon = dsn.rfind(':', at);
  ASSERT_NE(at, std::string::npos);
  dsn.replace(colon + 1, at - colon - 1, "wrong-password");
  auto rt = makeRuntime(kPidYaml, envWithDsn(dsn));
  auto r = call(*rt, "pid", Json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_EQ(r.error().message,
            "cannot connect to PostgreSQL: authentication failed for the configured role (check "
            "the credentials in "
            "the environment)");
}

TEST(PostgresPool, BusyPoolIsResourceExhaustedAtTheDeadline) {
  auto rt = makeRuntime(kPidYaml);
  std::thread worker([&] { (void)call(*rt, "slow", Json::object()); });
  // Until the slow statement holds the only connection (a fixed sleep was too short once on a
  // loaded machine: the first connect and the proof came after the second call).
  for (int i = 0; i < 200; ++i) {
    const auto active = superuserQuery(
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE "
        "'%generate_series(1, 200004)%' AND pid <> pg_backend_pid()");
    if (active && *active != "0") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  auto r =
      call(*rt, "pid", Json::object(), {}, Limits{100, 1 << 20, std::chrono::milliseconds(200)});
  worker.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted);
  EXPECT_GT(pidOf(*rt), 0);
}

// A listener that accepts TCP connections (the kernel does, into its backlog) and never answers:
// libpq's connect waits for the server's first reply until a deadline ends it.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 16) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return;
    port_ = ntohs(a.sin_port);
  }
  ~SilentListener() {
    if (fd_ >= 0) ::close(fd_);
  }
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

Result<Pool::Lease> acquireFrom(int port, std::chrono::milliseconds connect_timeout,
                                std::chrono::milliseconds call_timeout) {
  PoolSettings settings;
  settings.size = 1;
  settings.connect_timeout = connect_timeout;
  Pool pool(settings, [port]() -> Result<ConnParams> {
    ConnParams p;
    p.set("host", "127.0.0.1");
    p.set("port", std::to_string(port));
    p.set("dbname", "none");
    p.set("user", "none");
    p.set("sslmode", "disable");
    return p;
  });
  std::stop_source never;
  return pool.acquire(Clock::now() + call_timeout, never.get_token());
}

// Which limit ended the wait for a silent server decides the error: the call's own deadline is a
// timeout of the call (a slow first connection under a short tool timeout), the pool's
// connect_timeout_ms is the database being unreachable.
TEST(PostgresPool, TheCallsDeadlineWhileConnectingIsATimeout) {
  SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  const auto t0 = Clock::now();
  auto r =
      acquireFrom(silent.port(), std::chrono::milliseconds(10000), std::chrono::milliseconds(300));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::TimedOut) << r.error().message;
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
}

TEST(PostgresPool, TheConnectTimeoutIsUnavailable) {
  SilentListener silent;
  ASSERT_GT(silent.port(), 0);
  auto r =
      acquireFrom(silent.port(), std::chrono::milliseconds(300), std::chrono::milliseconds(10000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable) << r.error().message;
  EXPECT_EQ(r.error().message, "cannot connect to PostgreSQL: connecting timed out");
}

}  // namespace
}  // namespace mcpdb::postgres::itest
