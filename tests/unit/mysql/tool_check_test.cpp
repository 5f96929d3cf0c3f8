// doctor's tool check (tool_check.hpp): the server's prepare errors, as classifyError keeps them,
// become Unusable findings naming the object with a fix; a server that cannot answer makes them
// Inconclusive, never Ok.
#include "engines/mysql/tool_check.hpp"

#include <gtest/gtest.h>

#include "engines/mysql/errors.hpp"

namespace mcpdb::mysql {
namespace {

using Sev = engines::Finding::Severity;

Error serverError(unsigned number, const char* sqlstate, const char* message) {
  return classifyError(number, sqlstate, message, "prepare");
}

TEST(MysqlToolCheck, TheErrorNumberIsReadBack) {
  EXPECT_EQ(errorNumberOf(serverError(1146, "42S02", "Table 'd.t' doesn't exist")), 1146U);
  EXPECT_EQ(errorNumberOf(makeError(Code::Internal, "no number here")), 0U);
}

TEST(MysqlToolCheck, EachClassNamesTheObjectAndSaysTheFix) {
  struct Case {
    unsigned number;
    const char* sqlstate;
    const char* message;
    const char* statement;
    const char* named;
    const char* fix_start;
  };
  const Case cases[] = {
      {1146, "42S02", "Table 'demo.nope' doesn't exist", "SELECT id FROM nope", "demo.nope",
       "create it"},
      {1054, "42S22", "Unknown column 'idd' in 'SELECT'", "SELECT idd FROM t", "'idd'",
       "correct the statement"},
      {1054, "42S22", "Unknown column 't.x' in 'ON'", "SELECT 1 FROM t JOIN u ON t.x = u.id",
       "'t.x'", "correct the statement"},
      {1142, "42000", "SELECT command denied to user 'p'@'h' for table `s`.`t`",
       "SELECT id FROM s.t", "`s`.`t`", "GRANT SELECT ON `s`.`t` TO 'p'@'h';"},
      // MySQL 8's form: the table bare, qualified from the statement.
      {1142, "42000", "SELECT command denied to user 'p'@'h' for table 't'",
       "SELECT id FROM other.t", "'t'", "GRANT SELECT ON `other`.`t` TO 'p'@'h';"},
      {1143, "42000", "SELECT command denied to user 'p'@'h' for column 'c' in table 't'",
       "SELECT c FROM t", "'c'", "GRANT SELECT (`c`) ON `demo`.`t` TO 'p'@'h';"},
      {1143, "42000", "SELECT command denied to user 'p'@'h' for column 'c' in table 't'",
       "SELECT id FROM x.t WHERE c = ?", "'c'", "GRANT SELECT (`c`) ON `x`.`t` TO 'p'@'h';"},
      {1370, "42000", "execute command denied to user 'p'@'h' for routine 'demo.f'", "SELECT f(1)",
       "demo.f", "GRANT EXECUTE ON FUNCTION demo.f TO 'p'@'h';"},
      {1356, "HY000",
       "View 'demo.v' references invalid table(s) or column(s) or function(s) or definer/invoker "
       "of view lack rights to use them",
       "SELECT id FROM v", "'demo.v'", "recreate view demo.v"},
      {1305, "42000", "FUNCTION demo.g does not exist", "SELECT g()", "demo.g",
       "create the function"},
  };
  for (const auto& c : cases) {
    const auto f = preparedToolFinding("tl", serverError(c.number, c.sqlstate, c.message),
                                       c.statement, "demo");
    EXPECT_EQ(f.severity, Sev::Unusable) << c.message;
    EXPECT_EQ(f.check, "mysql.tool.tl");
    EXPECT_NE(f.message.find(c.named), std::string::npos) << f.message;
    EXPECT_NE(f.message.find("'tl'"), std::string::npos) << f.message;
    EXPECT_EQ(f.fix.rfind(c.fix_start, 0), 0U) << c.message << "\n  fix: " << f.fix;
  }
}

TEST(MysqlToolCheck, AServerThatCannotAnswerProvesNothing) {
  for (const auto& e : {serverError(2013, "HY000", "Lost connection"),
                        serverError(1969, "70100", "Query execution was interrupted"),
                        makeError(Code::Unavailable, "describe: the connection is closed")}) {
    EXPECT_EQ(preparedToolFinding("tl", e, "SELECT 1", "demo").severity, Sev::Inconclusive)
        << e.message;
  }
}

// A message that may quote a value (a parse error quotes the statement) is never shown: only its
// class and number.
TEST(MysqlToolCheck, AValueTheServerQuotesIsNotRepeated) {
  const auto f = preparedToolFinding(
      "tl",
      serverError(1064, "42000", "You have an error in your SQL syntax near 'secret-value-42'"),
      "SELECT 'secret-value-42' FROM", "demo");
  EXPECT_EQ(f.severity, Sev::Unusable);
  EXPECT_EQ(f.message.find("secret-value-42"), std::string::npos) << f.message;
}

TEST(MysqlToolCheck, OkSaysWhatWasProved) {
  const auto f = preparedToolOk("tl");
  EXPECT_EQ(f.severity, Sev::Ok);
  EXPECT_EQ(f.check, "mysql.tool.tl");
  EXPECT_NE(f.message.find("prepared on the server"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::mysql
