// The SHOW GRANTS line reader: the shapes MySQL 8.0/8.4 and MariaDB 10.6-11.x print, their
// quoting, and refusal (never a guess) of everything else.

#include <gtest/gtest.h>

#include <string>

#include "engines/mysql/grant_line.hpp"

namespace mcpdb::mysql {
namespace {

GrantLine parsed(const std::string& line) {
  auto g = parseGrantLine(line);
  EXPECT_TRUE(g.ok()) << line << ": " << (g.ok() ? "" : g.error().message);
  return g.ok() ? *g : GrantLine{};
}

std::vector<std::string> names(const GrantLine& g) {
  std::vector<std::string> out;
  for (const auto& p : g.privileges) out.push_back(privilegeSql(p));
  return out;
}

TEST(GrantLine, MysqlDatabaseLevelList) {
  GrantLine g = parsed("GRANT SELECT, INSERT, UPDATE ON `db1`.* TO `jeffrey`@`localhost`");
  EXPECT_EQ(g.kind, LineKind::Privileges);
  EXPECT_EQ(names(g), (std::vector<std::string>{"SELECT", "INSERT", "UPDATE"}));
  EXPECT_EQ(g.level.kind, ObjectKind::Database);
  EXPECT_EQ(g.level.db, "db1");
  EXPECT_EQ(accountSql(g.grantee), "`jeffrey`@`localhost`");
  EXPECT_FALSE(g.grant_option);
}

TEST(GrantLine, MultiWordAndGlobalWithGrantOption) {
  GrantLine g = parsed(
      "GRANT SHOW DATABASES, CREATE TEMPORARY TABLES, LOCK TABLES, REPLICATION SLAVE ON *.* TO "
      "`root`@`localhost` WITH GRANT OPTION");
  EXPECT_EQ(names(g), (std::vector<std::string>{"SHOW DATABASES", "CREATE TEMPORARY TABLES",
                                                "LOCK TABLES", "REPLICATION SLAVE"}));
  EXPECT_EQ(g.level.kind, ObjectKind::Global);
  EXPECT_EQ(levelSql(g.level), "*.*");
  EXPECT_TRUE(g.grant_option);
}

TEST(GrantLine, DynamicPrivilegesWithoutSpaces) {
  GrantLine g = parsed("GRANT BACKUP_ADMIN,BINLOG_ADMIN,SHOW_ROUTINE ON *.* TO `u`@`%`");
  EXPECT_EQ(names(g), (std::vector<std::string>{"BACKUP_ADMIN", "BINLOG_ADMIN", "SHOW_ROUTINE"}));
}

TEST(GrantLine, ColumnPrivileges) {
  GrantLine g = parsed("GRANT SELECT (`a`, `b`), UPDATE (`c`) ON `db`.`t` TO `u`@`%`");
  ASSERT_EQ(g.privileges.size(), 2u);
  EXPECT_EQ(g.privileges[0].columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(privilegeSql(g.privileges[1]), "UPDATE (`c`)");
  EXPECT_EQ(g.level.kind, ObjectKind::Table);
  EXPECT_EQ(levelSql(g.level), "`db`.`t`");
}

TEST(GrantLine, RoutineLevels) {
  EXPECT_EQ(levelSql(parsed("GRANT EXECUTE, ALTER ROUTINE ON PROCEDURE `db`.`p` TO `u`@`%`").level),
            "PROCEDURE `db`.`p`");
  GrantLine f = parsed("GRANT EXECUTE ON FUNCTION `db`.`f` TO `u`@`%`");
  EXPECT_EQ(f.level.kind, ObjectKind::Function);
  EXPECT_EQ(f.level.name, "f");
  EXPECT_EQ(parsed("GRANT EXECUTE ON PACKAGE BODY `db`.`k` TO `u`@`%`").level.kind,
            ObjectKind::PackageBody);
  EXPECT_EQ(parsed("GRANT SELECT ON TABLE `db`.`t` TO `u`@`%`").level.kind, ObjectKind::Table);
}

TEST(GrantLine, ProxyInBothDialects) {
  GrantLine my = parsed("GRANT PROXY ON ``@`` TO `root`@`localhost` WITH GRANT OPTION");
  EXPECT_EQ(my.kind, LineKind::Proxy);
  EXPECT_EQ(accountSql(my.proxied), "''@''");
  EXPECT_TRUE(my.grant_option);
  GrantLine maria = parsed("GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION");
  EXPECT_EQ(accountSql(maria.proxied), "''@`%`");
  EXPECT_EQ(accountSql(maria.grantee), "`root`@`localhost`");
}

TEST(GrantLine, RoleGrants) {
  GrantLine my = parsed("GRANT `r1`@`%`,`r2`@`%` TO `u`@`%` WITH ADMIN OPTION");
  EXPECT_EQ(my.kind, LineKind::Roles);
  ASSERT_EQ(my.roles.size(), 2u);
  EXPECT_EQ(accountSql(my.roles[1]), "`r2`@`%`");
  EXPECT_TRUE(my.admin_option);
  GrantLine maria = parsed("GRANT `reader` TO `u`@`%`");
  ASSERT_EQ(maria.roles.size(), 1u);
  EXPECT_FALSE(maria.roles[0].has_host);
  EXPECT_EQ(accountSql(maria.roles[0]), "`reader`");
  // Written by hand (bare words) the role keeps its case.
  GrantLine bare = parsed("grant Reader to agent@localhost");
  ASSERT_EQ(bare.roles.size(), 1u);
  EXPECT_EQ(bare.roles[0].user, "Reader");
  EXPECT_EQ(accountSql(bare.grantee), "`agent`@`localhost`");
}

TEST(GrantLine, MariadbTailsAreReadAndTheHashIsNotKept) {
  GrantLine g = parsed(
      "GRANT USAGE ON *.* TO `agent`@`%` IDENTIFIED BY PASSWORD "
      "'*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9' REQUIRE SSL WITH MAX_QUERIES_PER_HOUR 100 "
      "MAX_USER_CONNECTIONS 5 MAX_STATEMENT_TIME 0.5");
  EXPECT_EQ(names(g), std::vector<std::string>{"USAGE"});
  EXPECT_FALSE(g.grant_option);
  GrantLine root = parsed(
      "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA mysql_native_password "
      "USING 'invalid' OR unix_socket WITH GRANT OPTION");
  EXPECT_TRUE(root.grant_option);
  // A WITH inside the quoted hash is not the WITH clause.
  GrantLine quoted =
      parsed("GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD ' WITH GRANT OPTION'");
  EXPECT_FALSE(quoted.grant_option);
  parsed("GRANT USAGE ON *.* TO `u`@`%` REQUIRE ISSUER '/C=FI' AND SUBJECT '/CN=x' CIPHER 'EDH'");
}

TEST(GrantLine, PartialRevokeAndDefaultRole) {
  GrantLine r = parsed("REVOKE INSERT, UPDATE ON `mysql`.* FROM `u`@`%`");
  EXPECT_EQ(r.kind, LineKind::PartialRevoke);
  EXPECT_EQ(names(r), (std::vector<std::string>{"INSERT", "UPDATE"}));
  GrantLine d = parsed("SET DEFAULT ROLE `reader` FOR `agent`@`%`");
  EXPECT_EQ(d.kind, LineKind::DefaultRole);
  ASSERT_EQ(d.roles.size(), 1u);
  EXPECT_EQ(parsed("SET DEFAULT ROLE NONE FOR `agent`@`%`").roles.size(), 0u);
}

TEST(GrantLine, QuotingIsUndoneAndRedoneExactly) {
  GrantLine g = parsed("GRANT SELECT ON `we``ird`.`t``x` TO 'o\\'brien'@'%'");
  EXPECT_EQ(g.level.db, "we`ird");
  EXPECT_EQ(levelSql(g.level), "`we``ird`.`t``x`");
  EXPECT_EQ(g.grantee.user, "o'brien");
  EXPECT_EQ(accountSql(g.grantee), "`o'brien`@`%`");
  EXPECT_EQ(parsed("GRANT SELECT ON 'it''s'.* TO `u`@`%`").level.db, "it's");
  // Wildcard escapes in database names are part of the name, kept for the REVOKE.
  EXPECT_EQ(levelSql(parsed("GRANT SELECT ON `db\\_1`.* TO `u`@`%`").level), "`db\\_1`.*");
  // ANSI_QUOTES output.
  EXPECT_EQ(levelSql(parsed("GRANT SELECT ON \"shop\".* TO \"u\"@\"%\"").level), "`shop`.*");
  // An identifier made of one backtick.
  EXPECT_EQ(parsed("GRANT SELECT ON ````.* TO `u`@`%`").level.db, "`");
  EXPECT_EQ(accountSql(parsed("GRANT SELECT ON *.* TO PUBLIC").grantee), "PUBLIC");
  parsed("GRANT SELECT ON `shop`.* TO `u`@`%`;");
}

TEST(GrantLine, RefusesWhatItCannotReadExactly) {
  for (const char* line : {
           "",
           "SELECT 1",
           "GRANT SELECT ON * TO `u`@`%`",            // the current database: ambiguous
           "GRANT SELECT ON `db` TO `u`@`%`",         // a table in the current database
           "GRANT SELECT ON `db`.* TO",               // no grantee
           "GRANT SELECT ON `db`.* TO `u`@`%` WITH",  // empty WITH
           "GRANT SELECT ON `db`.* TO `u`@`%` WITH GRANT OPTIONS",
           "GRANT SELECT ON `db`.* TO `u`@`%`, `v`@`%`",  // never printed by SHOW GRANTS
           "GRANT SELECT ON `db`.* TO `u`@`%` AS `x`",
           "GRANT SELECT ON `db`.* TO `u`@`%`; DROP TABLE t",
           "GRANT SELECT (`a` ON `db`.`t` TO `u`@`%`",
           "GRANT SELECT ON `db.* TO `u`@`%`",
           "GRANT `r`, SELECT ON `db`.* TO `u`@`%`",
           "GRANT SELECT ON PROCEDURE `db`.* TO `u`@`%`",
           "GRANT IDENTIFIED BY PASSWORD '*AB' ON *.* TO `u`@`%`",
       }) {
    EXPECT_FALSE(parseGrantLine(line).ok()) << line;
  }
}

}  // namespace
}  // namespace mcpdb::mysql
