// Cancellation from another thread: the running statement stops, the call reports Cancelled, the
// same connection runs the next statement, and a late cancel cannot reach a later call.
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "engines/mysql/cancel.hpp"

#include "integration/mysql/fixture.hpp"
#include "support/loopback_listener.hpp"

namespace mcpdb::mysql::itest {
namespace {

using namespace std::chrono_literals;

CallLimits longLimit() {
  CallLimits l;
  l.timeout = 60s;
  return l;
}

TEST(MysqlCancel, StopsTheRunningStatementAndTheConnectionGoesOn) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  std::stop_source stop;
  std::jthread canceller([&stop] {
    std::this_thread::sleep_for(300ms);
    stop.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = c->run(kSlowSql, {}, longLimit(), stop.get_token());
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Cancelled) << r.error().message;
  // The server interrupted it (KILL QUERY ID), not the client giving up on the socket.
  EXPECT_NE(r.error().detail.find("error 1317"), std::string::npos) << r.error().detail;
  EXPECT_LT(took, 10s);
  EXPECT_GE(took, 250ms);
  ASSERT_TRUE(c->usable());
  auto next = c->run("SELECT 11", {}, longLimit());
  ASSERT_TRUE(next.ok()) << next.error().message;
  EXPECT_EQ(next->rows[0][0].get<std::int64_t>(), 11);
}

// The defect class: a stop callback runs on the thread that requests the stop (the stdio reader
// that read notifications/cancelled, the HTTP I/O thread that saw its client go), and the cancel
// connected, probed and killed there, so that thread waited for the database (seconds, with a
// server slow to answer). Against a server that accepts the connection and never greets,
// cancel() must return at once; the end of the statement's scope waits for the side connection
// instead, so no KILL is sent after it.
TEST(MysqlCancel, TheThreadAskingNeverWaitsForTheDatabase) {
  std::uint16_t port = 0;
  const int listener = testing::listenOnLoopback(8, &port);  // accepted, never answered
  ASSERT_GE(listener, 0);
  Dsn silent;
  silent.host = "127.0.0.1";
  silent.port = port;
  silent.user = "nobody";
  silent.ssl_mode = SslMode::Disabled;
  silent.connect_timeout = 2s;
  const auto t0 = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration asked{};
  {
    Canceller canceller(silent, 4242, Flavour::MariaDB);
    canceller.executing(true);
    std::stop_source stop;
    std::stop_callback onStop(stop.get_token(), [&canceller] { canceller.cancel(); });
    stop.request_stop();
    asked = std::chrono::steady_clock::now() - t0;
    EXPECT_TRUE(canceller.fired());
    canceller.executing(false);
  }
  const auto scope = std::chrono::steady_clock::now() - t0;
  ::close(listener);
  EXPECT_LT(asked, 300ms) << "the thread requesting the stop waited for the side connection";
  EXPECT_GE(scope, 1s) << "the statement's scope ended before the side connection gave up";
  EXPECT_LT(scope, 20s);
}

TEST(MysqlCancel, StopBeforeTheCallRunsNothing) {
  auto c = openReader();
  ASSERT_TRUE(c);
  std::stop_source stop;
  stop.request_stop();
  auto r = c->run("SELECT 1", {}, longLimit(), stop.get_token());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Cancelled);
  EXPECT_TRUE(c->run("SELECT 1", {}, longLimit()).ok());
}

// The defect class: a cancel meant for one call killing the next one. A stop requested after a
// call returned (its stop_callback is gone) must leave later calls alone.
TEST(MysqlCancel, LateStopDoesNotReachTheNextCall) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  for (int i = 0; i < 5; ++i) {
    std::stop_source first;
    auto quick = c->run("SELECT 1", {}, longLimit(), first.get_token());
    ASSERT_TRUE(quick.ok());
    first.request_stop();  // too late for that call
    CallLimits l = longLimit();
    auto second =
        c->run("SELECT COUNT(*) FROM demo.mytest_numbers a, demo.mytest_numbers b", {}, l);
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(second->rows[0][0].get<std::int64_t>(), 1000000);
  }
}

}  // namespace
}  // namespace mcpdb::mysql::itest
