// What the client layer sends and how it reads errors, without a server: the limited text
// for both flavours (MySQL is not tested against a real server here: this is its exact text), the
// cancelling side's statements, error classes and their safe messages, cell encodings.
#include <gtest/gtest.h>

#include "engines/mysql/cancel.hpp"
#include "engines/mysql/connection.hpp"
#include "engines/mysql/errors.hpp"
#include "engines/mysql/params.hpp"
#include "engines/mysql/row_reader.hpp"
#include "engines/mysql/time_limit.hpp"

namespace mcpdb::mysql {
namespace {

using std::chrono::milliseconds;

TEST(MysqlStatementLimits, MariaDbPrefixesSetStatement) {
  auto t =
      withStatementLimits(Flavour::MariaDB, "SELECT a FROM t WHERE b = ?", milliseconds(1500), 100);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t,
            "SET STATEMENT max_statement_time=1.500, sql_select_limit=101 FOR SELECT a FROM t "
            "WHERE b = ?");
  EXPECT_EQ(*withStatementLimits(Flavour::MariaDB, "WITH x AS (SELECT 1) SELECT * FROM x",
                                 milliseconds(250), 7),
            "SET STATEMENT max_statement_time=0.250, sql_select_limit=8 FOR WITH x AS (SELECT 1) "
            "SELECT * FROM x");
  // 0 would mean "no limit" to the server; the row limit never wraps.
  EXPECT_EQ(*withStatementLimits(Flavour::MariaDB, "SELECT 1", milliseconds(0), 0xFFFFFFFFu),
            "SET STATEMENT max_statement_time=0.001, sql_select_limit=4294967296 FOR SELECT 1");
}

TEST(MysqlStatementLimits, MySqlPutsTheHintsAfterSelect) {
  EXPECT_EQ(*withStatementLimits(Flavour::MySQL, "SELECT a FROM t", milliseconds(1500), 100),
            "SELECT /*+ MAX_EXECUTION_TIME(1500) SET_VAR(sql_select_limit=101) */ a FROM t");
  EXPECT_EQ(*withStatementLimits(Flavour::MySQL, "  select\n*", milliseconds(7), 0),
            "  select /*+ MAX_EXECUTION_TIME(7) SET_VAR(sql_select_limit=1) */\n*");
  EXPECT_EQ(*withStatementLimits(Flavour::MySQL, "SELECT 1", milliseconds(0), 5),
            "SELECT /*+ MAX_EXECUTION_TIME(1) SET_VAR(sql_select_limit=6) */ 1");
  for (const char* sql : {"WITH x AS (SELECT 1) SELECT * FROM x", "SELECTED", "SELECT_x",
                          "(SELECT 1)", "SHOW TABLES", "", "SEL"}) {
    auto t = withStatementLimits(Flavour::MySQL, sql, milliseconds(5), 10);
    ASSERT_FALSE(t.ok()) << sql;
    EXPECT_EQ(t.error().code, Code::InvalidArgument);
  }
}

TEST(MysqlCancel, SideStatementsByFlavour) {
  EXPECT_EQ(
      processlistProbe(Flavour::MariaDB, 42),
      "SELECT QUERY_ID FROM information_schema.PROCESSLIST WHERE ID = 42 AND COMMAND = 'Execute'");
  EXPECT_EQ(killStatement(Flavour::MariaDB, 42, "9001"), "KILL QUERY ID 9001");
  EXPECT_EQ(processlistProbe(Flavour::MySQL, 42),
            "SELECT ID FROM information_schema.PROCESSLIST WHERE ID = 42 AND COMMAND = 'Execute'");
  EXPECT_EQ(killStatement(Flavour::MySQL, 42, "42"), "KILL QUERY 42");
}

TEST(MysqlFlavour, FromVersionString) {
  EXPECT_EQ(flavourOf("10.11.19-MariaDB-0+deb12u1"), Flavour::MariaDB);
  EXPECT_EQ(flavourOf("5.5.5-10.6.12-MariaDB"), Flavour::MariaDB);
  EXPECT_EQ(flavourOf("8.0.36"), Flavour::MySQL);
  EXPECT_EQ(flavourOf("8.4.0-commercial"), Flavour::MySQL);
}

TEST(MysqlErrors, ClassesAndSafeMessages) {
  EXPECT_EQ(classifyError(1969, "70100", "", "execute").code, Code::TimedOut);
  EXPECT_EQ(classifyError(3024, "HY000", "", "execute").code, Code::TimedOut);
  EXPECT_EQ(classifyError(1317, "70100", "", "execute").code, Code::Cancelled);
  EXPECT_EQ(classifyError(1045, "28000", "", "connect").code, Code::PermissionDenied);
  // A refused login says so (not "refused the statement"), for both numbers MariaDB uses.
  for (unsigned n : {1045U, 1698U}) {
    const Error login = classifyError(n, "28000", "Access denied for user 'u'@'h'", "connect");
    EXPECT_NE(login.message.find("connect: the database refused the login (wrong user or "
                                 "password"),
              std::string::npos)
        << login.message;
    EXPECT_EQ(login.message.find("statement"), std::string::npos) << login.message;
  }
  EXPECT_NE(classifyError(1142, "42000", "", "execute").message.find("refused the statement"),
            std::string::npos);
  EXPECT_EQ(classifyError(1142, "42000", "", "execute").code, Code::PermissionDenied);
  EXPECT_EQ(classifyError(1792, "25006", "", "execute").code, Code::PermissionDenied);
  EXPECT_EQ(classifyError(2013, "HY000", "", "fetch").code, Code::Unavailable);
  EXPECT_EQ(classifyError(2003, "HY000", "", "connect").code, Code::Unavailable);
  EXPECT_EQ(classifyError(1210, "HY000", "", "execute").code, Code::InvalidArgument);
  EXPECT_EQ(classifyError(1366, "22007", "", "execute").code, Code::InvalidArgument);
  EXPECT_EQ(classifyError(9999, "08S01", "", "x").code, Code::Unavailable);
  EXPECT_EQ(classifyError(9998, "22003", "", "x").code, Code::InvalidArgument);
  EXPECT_EQ(classifyError(9997, "HY000", "", "x").code, Code::Internal);

  // A data error quotes the value: the message must not.
  const Error e = classifyError(
      1366, "22007", "Incorrect string value: '\\xC3(SECRETVALUE' for column `x`", "execute");
  EXPECT_EQ(e.message.find("SECRETVALUE"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("1366"), std::string::npos);
  EXPECT_NE(e.message.find("22007"), std::string::npos);
  // A privilege error names objects only: kept for the operator (detail), never for the agent.
  const Error p = classifyError(1142, "42000",
                                "SELECT command denied to user 'r'@'h' for table `t`", "execute");
  EXPECT_NE(p.detail.find("command denied"), std::string::npos);
  EXPECT_EQ(p.message.find("`t`"), std::string::npos) << p.message;
  EXPECT_EQ(p.message.find("'r'@'h'"), std::string::npos) << p.message;
}

TEST(MysqlParams, RefusesInvalidTextAndNonFiniteDoubles) {
  std::vector<Param> ok = {nullptr, std::int64_t{-5}, 2.5, std::string("a\0b", 3),
                           Bytes{"\xff\x00"}};
  auto b = ParamBinds::make(ok);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), 5u);
  EXPECT_EQ(b->data()[0].buffer_type, MYSQL_TYPE_NULL);
  EXPECT_EQ(b->data()[1].buffer_type, MYSQL_TYPE_LONGLONG);
  EXPECT_EQ(b->data()[3].buffer_type, MYSQL_TYPE_STRING);
  EXPECT_EQ(*b->data()[3].length, 3u);
  EXPECT_EQ(b->data()[4].buffer_type, MYSQL_TYPE_BLOB);

  std::vector<Param> bad = {std::int64_t{1}, std::string("ok \xC3\x28 SECRET")};
  auto r = ParamBinds::make(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  EXPECT_NE(r.error().message.find("parameter 2"), std::string::npos);
  EXPECT_EQ(r.error().message.find("SECRET"), std::string::npos);

  std::vector<Param> nan = {std::numeric_limits<double>::quiet_NaN()};
  EXPECT_FALSE(ParamBinds::make(nan).ok());
}

TEST(MysqlCells, Base64) {
  EXPECT_EQ(base64Encode(""), "");
  EXPECT_EQ(base64Encode("f"), "Zg==");
  EXPECT_EQ(base64Encode("fo"), "Zm8=");
  EXPECT_EQ(base64Encode("foo"), "Zm9v");
  EXPECT_EQ(base64Encode(std::string("\0\xff\x10", 3)), "AP8Q");
}

}  // namespace
}  // namespace mcpdb::mysql
