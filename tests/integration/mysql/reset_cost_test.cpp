// The cost behind resetSession's trade-off (connection.cpp): a whole call, the reset + set-up
// alone, and preparing per call against keeping a prepared statement. Prints the figures; the
// assertions only guard against a reset that became absurdly expensive.
#include <gtest/gtest.h>

#include <cstdio>

#include "engines/mysql/raw_client.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

using Clock = std::chrono::steady_clock;
using StmtPtr = Owned<MYSQL_STMT, mysql_stmt_close>;
constexpr int kRounds = 200;

template <typename F>
double microsPerRound(F&& f) {
  const auto t0 = Clock::now();
  for (int i = 0; i < kRounds; ++i) f();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kRounds;
}

bool executeOnce(MYSQL_STMT* s) {
  if (mysql_stmt_execute(s) != 0) return false;
  while (mysql_stmt_fetch(s) == 0) {
  }
  return mysql_stmt_free_result(s) == 0;
}

TEST(MysqlResetCost, Figures) {
  ensureTestTables();
  auto c = openReader();
  ASSERT_TRUE(c);
  const std::string sql = "SELECT n FROM demo.mytest_numbers WHERE n = 7";
  bool ok = true;
  const double call = microsPerRound([&] { ok = ok && c->run(sql, {}, CallLimits{}).ok(); });
  const double reset = microsPerRound([&] { ok = ok && c->resetSession().ok(); });
  ASSERT_TRUE(ok);

  auto raw = connectRaw(dsnFrom("MYSQL_DSN"), std::chrono::seconds(10));
  ASSERT_TRUE(raw.ok()) << raw.error().message;
  const double prepareEach = microsPerRound([&] {
    StmtPtr s(mysql_stmt_init(raw->get()));
    ok = ok && mysql_stmt_prepare(s.get(), sql.data(), sql.size()) == 0 && executeOnce(s.get());
  });
  const double resetOnly =
      microsPerRound([&] { ok = ok && mysql_reset_connection(raw->get()) == 0; });
  StmtPtr kept(mysql_stmt_init(raw->get()));
  ASSERT_EQ(mysql_stmt_prepare(kept.get(), sql.data(), sql.size()), 0);
  const double keptEach = microsPerRound([&] { ok = ok && executeOnce(kept.get()); });
  ASSERT_TRUE(ok);

  std::printf(
      "[reset cost] %d rounds, microseconds per round:\n"
      "  whole call (the last call's reset and SET, begin, prepare, execute+read): %.0f\n"
      "  reset + set-up alone (mysql_reset_connection, SET):                   %.0f\n"
      "  mysql_reset_connection alone:                                         %.0f\n"
      "  prepare + execute + close per call:                                   %.0f\n"
      "  execute on a kept prepared statement:                                 %.0f\n",
      kRounds, call, reset, resetOnly, prepareEach, keptEach);
  RecordProperty("call_us", static_cast<int>(call));
  RecordProperty("reset_us", static_cast<int>(reset));
  RecordProperty("reset_only_us", static_cast<int>(resetOnly));
  RecordProperty("prepare_each_us", static_cast<int>(prepareEach));
  RecordProperty("kept_us", static_cast<int>(keptEach));
  EXPECT_LT(reset, 20000.0);
  EXPECT_GT(call, reset);
}

}  // namespace
}  // namespace mcpdb::mysql::itest
