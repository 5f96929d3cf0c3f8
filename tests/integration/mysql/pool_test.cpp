// The pool's reset discipline on the live MariaDB: a connection comes back from its call with the
// session used and is reset after the answer was handed back (a cleaner thread, or the giving
// thread when the cleaner is busy). Whatever one call left in the session (a user variable, a
// session setting, a named lock, its open transaction) never reaches the next call: not in
// sequence, not under concurrency, not when the reset fails (the connection is closed instead),
// and not past the pool's end (every connection is closed). The session changes are made with the
// client directly: the guard refuses them in tools.
#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "engines/mysql/runtime.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

using Clock = std::chrono::steady_clock;

const Source kDefault{"default", "MYSQL_DSN", false};

std::optional<SourcePool::Lease> lease(SourcePool& pool) {
  auto l = pool.acquire(Clock::now() + std::chrono::seconds(30), {});
  if (!l.ok()) {
    ADD_FAILURE() << "acquire: " << l.error().message;
    return std::nullopt;
  }
  return std::optional<SourcePool::Lease>(std::move(*l));
}

CallLimits roomy() {
  CallLimits l;
  l.timeout = std::chrono::seconds(20);
  return l;
}

// Leaves a mark in every corner of the session a statement can reach. (The lock may still be held
// for a moment by this caller's previous connection, on its way through the reset.)
void dirty(Connection& conn, const std::string& lock) {
  auto r = conn.run("SELECT GET_LOCK(?, 10), @mark := 42", std::vector<Param>{lock}, roomy());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rows.at(0).at(0).get<std::int64_t>(), 1);
  ASSERT_TRUE(conn.queryValue("SET SESSION sql_mode = 'ANSI_QUOTES', @other = 'x'").ok());
  EXPECT_TRUE(conn.needsReset());
}

// What the next call sees: "" when the session is clean (in the READ ONLY transaction the reset
// began for it), else what leaked. Read as plain text
// (queryValue), which unlike run() never resets a used session first: what it sees is what the
// pool handed out.
std::string leaked(Connection& conn, const std::string& lock) {
  std::string out = conn.needsReset() ? " (handed out unreset)" : "";
  auto r = conn.queryValue(
      "SELECT CONCAT_WS('|', @mark IS NULL, @other IS NULL, "
      "COALESCE(IS_USED_LOCK('" +
      lock +
      "') = CONNECTION_ID(), 0), @@in_transaction, "
      "@@SESSION.tx_read_only + 0, @@SESSION.sql_mode)");
  if (!r.ok()) return "query: " + r.error().message;
  if (*r != "1|1|0|1|1|" + std::string(kSessionSqlMode)) out += " " + *r;
  return out;
}

// Whether the session `id` of the reader's account is listed (an account sees its own sessions).
bool sessionListed(Connection& observer, unsigned long id) {
  auto n = observer.queryValue("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " +
                               std::to_string(id));
  return !n.ok() || *n != "0";
}

bool sessionGone(Connection& observer, unsigned long id) {
  for (int i = 0; i < 100; ++i) {
    if (!sessionListed(observer, id)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(MysqlPool, NoSessionStateReachesTheNextCall) {
  SourcePool pool(kDefault, 1, Env::process());
  auto other = openReader();
  ASSERT_TRUE(other);
  unsigned long first = 0;
  for (int i = 0; i < 20; ++i) {
    {
      auto used = lease(pool);
      ASSERT_TRUE(used);
      if (first == 0) first = used->conn().threadId();
      dirty(used->conn(), "mcpdb_pool_lock");
    }
    auto next = lease(pool);
    ASSERT_TRUE(next);
    // The same connection (the pool holds one), reset before it was handed out again.
    EXPECT_EQ(next->conn().threadId(), first) << "the connection was replaced, not reset";
    EXPECT_EQ(leaked(next->conn(), "mcpdb_pool_lock"), "") << "round " << i;
    EXPECT_EQ(*other->queryValue("SELECT IS_FREE_LOCK('mcpdb_pool_lock')"), "1");
  }
}

// The defect class: a connection whose reset failed going back to the idle list with the last
// call's state. Killing the session makes the reset fail; the pool must close that connection and
// open another.
TEST(MysqlPool, AConnectionWhoseResetFailsIsClosedNotReused) {
  SourcePool pool(kDefault, 1, Env::process());
  auto killer = openReader();  // an account may kill its own sessions
  ASSERT_TRUE(killer);
  unsigned long killed = 0;
  {
    auto used = lease(pool);
    ASSERT_TRUE(used);
    killed = used->conn().threadId();
    dirty(used->conn(), "mcpdb_pool_lock_2");
    ASSERT_TRUE(killer->queryValue("KILL CONNECTION " + std::to_string(killed)).ok());
    ASSERT_TRUE(sessionGone(*killer, killed));
  }
  auto next = lease(pool);
  ASSERT_TRUE(next);
  EXPECT_NE(next->conn().threadId(), killed);
  EXPECT_EQ(leaked(next->conn(), "mcpdb_pool_lock_2"), "");
  EXPECT_EQ(pool.stats().open, 1u);
}

// Eight callers on two connections, each leaving marks and checking that none reached it; every
// seventh call also kills its own session, so resets fail on both paths (the cleaner and the
// giving thread) while the others run.
TEST(MysqlPool, UnderConcurrencyEveryCallStartsOnAResetSession) {
  SourcePool pool(kDefault, 2, Env::process());
  auto killer = openReader();
  ASSERT_TRUE(killer);
  std::mutex killer_mu;
  std::atomic<int> calls{0};
  std::atomic<int> kills{0};
  std::vector<std::string> leaks;
  std::mutex leaks_mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const std::string lock = "mcpdb_pool_lock_c" + std::to_string(t);
      for (int i = 0; i < 25; ++i) {
        auto held = lease(pool);
        if (!held) continue;
        if (auto what = leaked(held->conn(), lock); !what.empty()) {
          std::lock_guard<std::mutex> l(leaks_mu);
          leaks.push_back(what);
        }
        dirty(held->conn(), lock);
        ++calls;
        if ((t * 25 + i) % 7 == 0) {
          std::lock_guard<std::mutex> l(killer_mu);
          if (killer->queryValue("KILL CONNECTION " + std::to_string(held->conn().threadId()))
                  .ok()) {
            ++kills;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(leaks.empty()) << leaks.size()
                             << " calls saw another call's session, first:" << leaks.front();
  EXPECT_EQ(calls.load(), 200);
  EXPECT_GT(kills.load(), 20);
  EXPECT_LE(pool.stats().open, 2u);
  EXPECT_EQ(pool.stats().in_use, 0u);
}

// At the pool's end a connection given back but not yet reset is closed with the idle ones: its
// session ends on the server, so nothing can ever read it.
TEST(MysqlPool, ShutdownClosesEveryConnectionIncludingOnesAwaitingTheirReset) {
  auto observer = openReader();
  ASSERT_TRUE(observer);
  std::vector<unsigned long> ids;
  for (int round = 0; round < 10; ++round) {
    auto pool = std::make_unique<SourcePool>(kDefault, 2, Env::process());
    {
      auto a = lease(*pool);
      auto b = lease(*pool);
      ASSERT_TRUE(a && b);
      dirty(a->conn(), "mcpdb_pool_lock_s1");
      dirty(b->conn(), "mcpdb_pool_lock_s2");
      ids.push_back(a->conn().threadId());
      ids.push_back(b->conn().threadId());
      ASSERT_TRUE(sessionListed(*observer, ids.back()));  // the check below can fail
    }
    pool.reset();  // right after the give-backs: the cleaner may not have started
  }
  for (const auto id : ids) EXPECT_TRUE(sessionGone(*observer, id)) << "session " << id;
}

}  // namespace
}  // namespace mcpdb::mysql::itest
