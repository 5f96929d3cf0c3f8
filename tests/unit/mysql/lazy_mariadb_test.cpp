// The server binary's libmariadb forwarders (src/engines/mysql/lazy_mariadb.cpp) when libmariadb
// cannot be loaded: this binary compiles them against a library name that does not exist. The
// first call must fail cleanly with a clear error, never crash.
#include <gtest/gtest.h>
#include <mysql.h>

#include "engines/mysql/connection.hpp"

namespace mcpdb::mysql {
namespace {

TEST(MysqlLazyMariadb, ConnectFailsWithClearError) {
  auto dsn = parseDsn("mysql://u:pw@127.0.0.1:1/db");
  ASSERT_TRUE(dsn.ok());
  auto c = Connection::open(*dsn);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::Unavailable);
  EXPECT_NE(c.error().message.find("libmariadb could not be loaded"), std::string::npos)
      << c.error().message;
  // A second attempt gives the same answer (the failed load is remembered, not retried into a
  // crash).
  auto again = Connection::open(*dsn);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Code::Unavailable);
}

TEST(MysqlLazyMariadb, ForwardersAnswerWithoutAHandle) {
  EXPECT_EQ(mysql_init(nullptr), nullptr);
  EXPECT_EQ(mysql_stmt_init(nullptr), nullptr);
  EXPECT_NE(mysql_errno(nullptr), 0u);
  ASSERT_NE(mysql_error(nullptr), nullptr);
  EXPECT_STREQ(mysql_error(nullptr), "libmariadb could not be loaded");
  EXPECT_STREQ(mysql_sqlstate(nullptr), "HY000");
  EXPECT_NE(mysql_real_query(nullptr, "SELECT 1", 8), 0);
  EXPECT_EQ(mysql_store_result(nullptr), nullptr);
  EXPECT_NE(mysql_reset_connection(nullptr), 0);
  EXPECT_NE(mysql_stmt_prepare(nullptr, "SELECT 1", 8), 0);
  EXPECT_NE(mysql_stmt_execute(nullptr), 0);
  EXPECT_NE(mysql_stmt_fetch(nullptr), 0);
  EXPECT_EQ(mysql_stmt_result_metadata(nullptr), nullptr);
  EXPECT_EQ(mysql_get_ssl_cipher(nullptr), nullptr);
  mysql_close(nullptr);
  mysql_free_result(nullptr);
  (void)mysql_stmt_close(nullptr);
}

}  // namespace
}  // namespace mcpdb::mysql
