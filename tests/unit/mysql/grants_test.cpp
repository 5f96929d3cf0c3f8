// The least-privilege classifier over SHOW GRANTS transcripts written from the documented
// MySQL 8.0/8.4 and MariaDB 10.11 formats: one test per write path (directly and through roles),
// the exact REVOKE of each, role walks (nested, cycles, depth, unknown), quoting, secrets.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engines/mysql/grants.hpp"

namespace mcpdb::mysql {
namespace {

using Sev = GrantFinding::Severity;
using Lines = std::vector<std::string>;

constexpr const char* kHash = "*6BB4837EB74329105EE4568DDA7DC67ED2CA2AD9";

// Role grants by accountSql(role); a role missing from the map could not be read.
struct Roles {
  std::map<std::string, Lines> by_name;
  std::map<std::string, int> asked;
  GrantsInput::RoleLookup lookup() {
    return [this](const Account& role) -> std::optional<Lines> {
      ++asked[accountSql(role)];
      auto it = by_name.find(accountSql(role));
      if (it == by_name.end()) return std::nullopt;
      return it->second;
    };
  }
};

std::vector<GrantFinding> check(const Lines& lines, Roles* roles = nullptr) {
  GrantsInput in;
  in.lines = lines;
  if (roles != nullptr) in.role_grants = roles->lookup();
  return checkGrants(in);
}

std::vector<GrantFinding> only(const std::vector<GrantFinding>& fs, Sev sev) {
  std::vector<GrantFinding> out;
  for (const auto& f : fs) {
    if (f.severity == sev) out.push_back(f);
  }
  return out;
}

std::vector<std::string> fixes(const std::vector<GrantFinding>& fs) {
  std::vector<std::string> out;
  for (const auto& f : only(fs, Sev::Violation)) out.push_back(f.fix);
  return out;
}

bool hasFix(const std::vector<GrantFinding>& fs, const std::string& fix) {
  for (const auto& f : fs) {
    if (f.fix == fix) return true;
  }
  return false;
}

std::string dump(const std::vector<GrantFinding>& fs) {
  std::string out;
  for (const auto& f : fs) {
    out += std::to_string(static_cast<int>(f.severity)) + " " + f.check + " | " + f.message +
           " | " + f.fix + "\n";
  }
  return out;
}

// Every finding set obeys the same rules, whatever the input.
void wellFormed(const std::vector<GrantFinding>& fs) {
  int ok = 0;
  for (const auto& f : fs) {
    EXPECT_FALSE(f.message.empty());
    EXPECT_EQ(f.message.find(kHash), std::string::npos) << f.message;
    EXPECT_EQ(f.fix.find(kHash), std::string::npos) << f.fix;
    if (f.severity == Sev::Violation) {
      EXPECT_EQ(f.fix.rfind("REVOKE ", 0), 0u) << f.fix;
      EXPECT_EQ(f.fix.back(), ';') << f.fix;
    }
    if (f.severity == Sev::Ok) ++ok;
  }
  // An Ok is alone: never beside a Violation or an Inconclusive.
  if (ok > 0) {
    EXPECT_EQ(fs.size(), 1u) << dump(fs);
  }
}

void expectOk(const std::vector<GrantFinding>& fs) {
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Ok) << dump(fs);
}

// --- whole transcripts ---------------------------------------------------------------------

TEST(MysqlGrants, Mysql8ReadOnlyAgentIsOk) {
  auto fs = check({"GRANT USAGE ON *.* TO `agent`@`%`",
                   "GRANT SELECT, SHOW VIEW ON `shop`.* TO `agent`@`%`",
                   "GRANT SELECT (`id`, `name`) ON `crm`.`customers` TO `agent`@`%`"});
  expectOk(fs);
  EXPECT_NE(fs[0].message.find("`agent`@`%` can only read"), std::string::npos) << fs[0].message;
  EXPECT_NE(fs[0].message.find("SELECT on `shop`.*"), std::string::npos) << fs[0].message;
}

TEST(MysqlGrants, Mysql8RootIsAViolationPerPrivilegeWithExactRevokes) {
  auto fs = check({
      "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, RELOAD, SHUTDOWN, PROCESS, FILE, "
      "REFERENCES, INDEX, ALTER, SHOW DATABASES, SUPER, CREATE TEMPORARY TABLES, LOCK TABLES, "
      "EXECUTE, REPLICATION SLAVE, REPLICATION CLIENT, CREATE VIEW, SHOW VIEW, CREATE ROUTINE, "
      "ALTER ROUTINE, CREATE USER, EVENT, TRIGGER, CREATE TABLESPACE, CREATE ROLE, DROP ROLE ON "
      "*.* TO `root`@`localhost` WITH GRANT OPTION",
      "GRANT APPLICATION_PASSWORD_ADMIN,AUDIT_ABORT_EXEMPT,AUDIT_ADMIN,"
      "AUTHENTICATION_POLICY_ADMIN,BACKUP_ADMIN,BINLOG_ADMIN,BINLOG_ENCRYPTION_ADMIN,CLONE_ADMIN,"
      "CONNECTION_ADMIN,ENCRYPTION_KEY_ADMIN,FIREWALL_EXEMPT,FLUSH_OPTIMIZER_COSTS,FLUSH_STATUS,"
      "FLUSH_TABLES,FLUSH_USER_RESOURCES,GROUP_REPLICATION_ADMIN,GROUP_REPLICATION_STREAM,"
      "INNODB_REDO_LOG_ARCHIVE,INNODB_REDO_LOG_ENABLE,PASSWORDLESS_USER_ADMIN,"
      "PERSIST_RO_VARIABLES_ADMIN,REPLICATION_APPLIER,REPLICATION_SLAVE_ADMIN,"
      "RESOURCE_GROUP_ADMIN,RESOURCE_GROUP_USER,ROLE_ADMIN,SENSITIVE_VARIABLES_OBSERVER,"
      "SERVICE_CONNECTION_ADMIN,SESSION_VARIABLES_ADMIN,SET_USER_ID,SHOW_ROUTINE,SYSTEM_USER,"
      "SYSTEM_VARIABLES_ADMIN,TABLE_ENCRYPTION_ADMIN,TELEMETRY_LOG_ADMIN,XA_RECOVER_ADMIN ON *.* "
      "TO `root`@`localhost` WITH GRANT OPTION",
      "GRANT PROXY ON ``@`` TO `root`@`localhost` WITH GRANT OPTION",
  });
  wellFormed(fs);
  EXPECT_TRUE(only(fs, Sev::Inconclusive).empty()) << dump(fs);
  EXPECT_TRUE(only(fs, Sev::Ok).empty());
  // 30 static - SELECT, SHOW DATABASES, SHOW VIEW; 36 dynamic - SHOW_ROUTINE; PROXY; one GRANT
  // OPTION (both lines are *.*: the same REVOKE).
  EXPECT_EQ(only(fs, Sev::Violation).size(), 27u + 35u + 1u + 1u) << dump(fs);
  EXPECT_TRUE(hasFix(fs, "REVOKE FILE ON *.* FROM `root`@`localhost`;"));
  EXPECT_TRUE(hasFix(fs, "REVOKE CREATE TEMPORARY TABLES ON *.* FROM `root`@`localhost`;"));
  EXPECT_TRUE(hasFix(fs, "REVOKE BINLOG_ADMIN ON *.* FROM `root`@`localhost`;"));
  EXPECT_TRUE(hasFix(fs, "REVOKE GRANT OPTION ON *.* FROM `root`@`localhost`;"));
  EXPECT_TRUE(hasFix(fs, "REVOKE PROXY ON ''@'' FROM `root`@`localhost`;"));
  EXPECT_FALSE(hasFix(fs, "REVOKE SELECT ON *.* FROM `root`@`localhost`;"));
  EXPECT_FALSE(hasFix(fs, "REVOKE SHOW_ROUTINE ON *.* FROM `root`@`localhost`;"));
}

TEST(MysqlGrants, Mariadb1011AgentWithRoleIsOkAndTheHashNeverAppears) {
  Roles roles;
  roles.by_name["`reader`"] = {"GRANT USAGE ON *.* TO `reader`",
                               "GRANT SELECT, SHOW VIEW ON `shop`.* TO `reader`"};
  auto fs = check(
      {std::string("GRANT USAGE ON *.* TO `agent`@`%` IDENTIFIED BY PASSWORD '") + kHash + "'",
       "GRANT SELECT ON `shop`.* TO `agent`@`%`", "GRANT `reader` TO `agent`@`%`",
       "SET DEFAULT ROLE `reader` FOR `agent`@`%`"},
      &roles);
  expectOk(fs);
  EXPECT_EQ(roles.asked["`reader`"], 1);
  EXPECT_NE(fs[0].message.find("roles included"), std::string::npos);
}

TEST(MysqlGrants, MariadbRootTranscript) {
  auto fs = check({
      "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA mysql_native_password "
      "USING 'invalid' OR unix_socket WITH GRANT OPTION",
      "GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION",
  });
  wellFormed(fs);
  EXPECT_EQ(fixes(fs), (std::vector<std::string>{
                           "REVOKE ALL PRIVILEGES ON *.* FROM `root`@`localhost`;",
                           "REVOKE GRANT OPTION ON *.* FROM `root`@`localhost`;",
                           "REVOKE PROXY ON ''@`%` FROM `root`@`localhost`;",
                       }));
  for (const auto& f : fs) EXPECT_EQ(f.message.find("invalid"), std::string::npos) << f.message;
}

// Printed by MariaDB 10.11.19 (the privilege order is the server's); each fix below was run
// there and left only USAGE and SHOW VIEW.
TEST(MysqlGrants, Mariadb1011TlsLimitsAndSocketAuthTranscript) {
  const std::string hash = "*0A100121845013C56B4CC25044BA23580598E924";
  auto fs = check({
      "GRANT BINLOG MONITOR, DELETE HISTORY, SET USER, FEDERATED ADMIN, CONNECTION ADMIN, "
      "READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, REPLICATION MASTER ADMIN, BINLOG ADMIN, BINLOG "
      "REPLAY, SLAVE MONITOR ON *.* TO `o'brien`@`%` IDENTIFIED VIA unix_socket OR "
      "mysql_native_password USING '" +
          hash +
          "' REQUIRE ISSUER '/C=FI/O=x' SUBJECT '/CN=y' WITH GRANT OPTION MAX_QUERIES_PER_HOUR 10 "
          "MAX_STATEMENT_TIME 1.500000",
      "GRANT REFERENCES, INDEX, CREATE TEMPORARY TABLES, LOCK TABLES, EXECUTE, CREATE VIEW, SHOW "
      "VIEW, CREATE ROUTINE, ALTER ROUTINE, EVENT, TRIGGER ON `db\\\\_1`.* TO `o'brien`@`%`",
  });
  wellFormed(fs);
  EXPECT_TRUE(only(fs, Sev::Inconclusive).empty()) << dump(fs);
  EXPECT_EQ(only(fs, Sev::Violation).size(), 11u + 1u + 10u) << dump(fs);
  EXPECT_TRUE(hasFix(fs, "REVOKE GRANT OPTION ON *.* FROM `o'brien`@`%`;"));
  EXPECT_TRUE(hasFix(fs, "REVOKE EXECUTE ON `db\\\\_1`.* FROM `o'brien`@`%`;"));
  EXPECT_EQ(dump(fs).find(hash), std::string::npos);
  EXPECT_EQ(dump(fs).find("/CN=y"), std::string::npos);
}

TEST(MysqlGrants, MariadbSplitSuperPrivilegesAreViolations) {
  auto fs =
      check({"GRANT BINLOG MONITOR, READ_ONLY ADMIN, SLAVE MONITOR, CONNECTION ADMIN, "
             "FEDERATED ADMIN, SET USER, BINLOG ADMIN, BINLOG REPLAY, REPLICATION MASTER "
             "ADMIN, REPLICATION SLAVE ADMIN, DELETE HISTORY ON *.* TO `ops`@`%`"});
  wellFormed(fs);
  EXPECT_EQ(only(fs, Sev::Violation).size(), 11u) << dump(fs);
  EXPECT_TRUE(hasFix(fs, "REVOKE REPLICATION MASTER ADMIN ON *.* FROM `ops`@`%`;"));
  EXPECT_TRUE(hasFix(fs, "REVOKE DELETE HISTORY ON *.* FROM `ops`@`%`;"));
}

TEST(MysqlGrants, ReadPrivilegesAreOk) {
  expectOk(check({"GRANT USAGE ON *.* TO `a`@`%`",
                  "GRANT SHOW DATABASES, SHOW_ROUTINE ON *.* TO `a`@`%`",
                  "GRANT SELECT, SHOW VIEW, SHOW CREATE ROUTINE ON `shop`.* TO `a`@`%`"}));
  auto fs = check({"GRANT USAGE ON *.* TO `a`@`%`"});
  expectOk(fs);
  EXPECT_NE(fs[0].message.find("no privilege beyond USAGE"), std::string::npos);
  // The Ok message names the first six reads, each once, and counts the rest.
  Lines many = {"GRANT SELECT ON `d0`.* TO `a`@`%`"};
  for (int i = 0; i < 8; ++i)
    many.push_back("GRANT SELECT ON `d" + std::to_string(i) + "`.* TO `a`@`%`");
  auto counted = check(many);
  expectOk(counted);
  EXPECT_NE(counted[0].message.find("SELECT on `d5`.*; and 2 more"), std::string::npos)
      << counted[0].message;
}

// --- one test per direct write path ---------------------------------------------------------

struct WritePath {
  const char* privilege;
  const char* level;
};

class EachWritePrivilege : public ::testing::TestWithParam<WritePath> {};

TEST_P(EachWritePrivilege, IsAViolationRevokedAtItsLevel) {
  const auto& p = GetParam();
  auto fs =
      check({"GRANT USAGE ON *.* TO `agent`@`%`",
             std::string("GRANT SELECT, ") + p.privilege + " ON " + p.level + " TO `agent`@`%`"});
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Violation);
  EXPECT_EQ(fs[0].check, "mysql.privilege");
  EXPECT_EQ(fs[0].fix,
            std::string("REVOKE ") + p.privilege + " ON " + p.level + " FROM `agent`@`%`;");
  EXPECT_NE(fs[0].message.find(p.privilege), std::string::npos) << fs[0].message;
}

INSTANTIATE_TEST_SUITE_P(
    MysqlGrants, EachWritePrivilege,
    ::testing::Values(
        WritePath{"INSERT", "`shop`.*"}, WritePath{"UPDATE", "`shop`.`orders`"},
        WritePath{"DELETE", "`shop`.*"}, WritePath{"CREATE", "`shop`.*"},
        WritePath{"DROP", "`shop`.*"}, WritePath{"ALTER", "`shop`.`orders`"},
        WritePath{"INDEX", "`shop`.*"}, WritePath{"REFERENCES", "`shop`.*"},
        WritePath{"TRIGGER", "`shop`.`orders`"}, WritePath{"EVENT", "`shop`.*"},
        WritePath{"LOCK TABLES", "`shop`.*"}, WritePath{"CREATE TEMPORARY TABLES", "`shop`.*"},
        WritePath{"CREATE VIEW", "`shop`.*"}, WritePath{"CREATE ROUTINE", "`shop`.*"},
        WritePath{"ALTER ROUTINE", "`shop`.*"}, WritePath{"DELETE HISTORY", "`shop`.*"},
        WritePath{"ALL PRIVILEGES", "`shop`.*"}, WritePath{"EXECUTE", "`shop`.*"},
        WritePath{"FILE", "*.*"}, WritePath{"PROCESS", "*.*"}, WritePath{"SUPER", "*.*"},
        WritePath{"RELOAD", "*.*"}, WritePath{"SHUTDOWN", "*.*"}, WritePath{"CREATE USER", "*.*"},
        WritePath{"CREATE TABLESPACE", "*.*"}, WritePath{"CREATE ROLE", "*.*"},
        WritePath{"DROP ROLE", "*.*"}, WritePath{"REPLICATION SLAVE", "*.*"},
        WritePath{"REPLICATION CLIENT", "*.*"}, WritePath{"BINLOG MONITOR", "*.*"},
        WritePath{"SYSTEM_VARIABLES_ADMIN", "*.*"}, WritePath{"SET_USER_ID", "*.*"},
        WritePath{"ROLE_ADMIN", "*.*"}));

TEST(MysqlGrants, ColumnLevelUpdateIsRevokedAtColumnLevel) {
  auto fs = check({"GRANT SELECT (`a`, `b`), UPDATE (`c`, `d`) ON `db`.`t` TO `agent`@`%`"});
  wellFormed(fs);
  EXPECT_EQ(fixes(fs),
            std::vector<std::string>{"REVOKE UPDATE (`c`, `d`) ON `db`.`t` FROM `agent`@`%`;"});
  EXPECT_TRUE(only(fs, Sev::Inconclusive).empty());
}

TEST(MysqlGrants, RoutinePrivilegesAndTheReadOnlyHook) {
  const Lines lines = {"GRANT EXECUTE, ALTER ROUTINE ON PROCEDURE `db`.`p` TO `agent`@`%`",
                       "GRANT EXECUTE ON FUNCTION `db`.`f` TO `agent`@`%`"};
  auto fs = check(lines);
  wellFormed(fs);
  EXPECT_EQ(fixes(fs), (std::vector<std::string>{
                           "REVOKE EXECUTE ON PROCEDURE `db`.`p` FROM `agent`@`%`;",
                           "REVOKE ALTER ROUTINE ON PROCEDURE `db`.`p` FROM `agent`@`%`;",
                           "REVOKE EXECUTE ON FUNCTION `db`.`f` FROM `agent`@`%`;"}));
  // The operator checked both routines: EXECUTE is then a read; ALTER ROUTINE still writes.
  GrantsInput in;
  in.lines = lines;
  std::vector<std::string> asked;
  in.routine_is_read_only = [&](const Level& r) {
    asked.push_back(levelSql(r));
    return true;
  };
  auto checked = checkGrants(in);
  wellFormed(checked);
  EXPECT_EQ(fixes(checked), std::vector<std::string>{
                                "REVOKE ALTER ROUTINE ON PROCEDURE `db`.`p` FROM `agent`@`%`;"});
  EXPECT_EQ(asked, (std::vector<std::string>{"PROCEDURE `db`.`p`", "FUNCTION `db`.`f`"}));
  // Only the checked routine is exempt.
  in.lines = {"GRANT EXECUTE ON FUNCTION `db`.`f` TO `agent`@`%`",
              "GRANT EXECUTE ON FUNCTION `db`.`g` TO `agent`@`%`"};
  in.routine_is_read_only = [](const Level& r) { return r.name == "f"; };
  EXPECT_EQ(fixes(checkGrants(in)),
            std::vector<std::string>{"REVOKE EXECUTE ON FUNCTION `db`.`g` FROM `agent`@`%`;"});
  in.lines = {"GRANT EXECUTE ON FUNCTION `db`.`f` TO `agent`@`%`"};
  expectOk(checkGrants(in));
}

TEST(MysqlGrants, ExecuteOnADatabaseIsAViolationEvenWithTheHook) {
  GrantsInput in;
  in.lines = {"GRANT EXECUTE ON `db`.* TO `agent`@`%`"};
  in.routine_is_read_only = [](const Level&) { return true; };
  auto fs = checkGrants(in);
  wellFormed(fs);
  ASSERT_EQ(fixes(fs), std::vector<std::string>{"REVOKE EXECUTE ON `db`.* FROM `agent`@`%`;"});
  EXPECT_NE(fs[0].message.find("routines created later"), std::string::npos) << fs[0].message;
}

TEST(MysqlGrants, GrantOptionAloneIsAViolation) {
  auto fs = check({"GRANT SELECT ON `shop`.* TO `agent`@`%` WITH GRANT OPTION"});
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].check, "mysql.grant_option");
  EXPECT_EQ(fs[0].fix, "REVOKE GRANT OPTION ON `shop`.* FROM `agent`@`%`;");
}

TEST(MysqlGrants, ProxyIsAViolation) {
  auto fs = check({"GRANT PROXY ON `admin`@`localhost` TO `agent`@`%`"});
  wellFormed(fs);
  EXPECT_EQ(fixes(fs),
            std::vector<std::string>{"REVOKE PROXY ON `admin`@`localhost` FROM `agent`@`%`;"});
}

TEST(MysqlGrants, PartialRevokesDoNotHideAGlobalWrite) {
  auto fs = check({"GRANT SELECT, INSERT ON *.* TO `agent`@`%`",
                   "REVOKE INSERT ON `mysql`.* FROM `agent`@`%`"});
  wellFormed(fs);
  EXPECT_EQ(fixes(fs), std::vector<std::string>{"REVOKE INSERT ON *.* FROM `agent`@`%`;"});
  expectOk(
      check({"GRANT SELECT ON *.* TO `agent`@`%`", "REVOKE SELECT ON `mysql`.* FROM `agent`@`%`"}));
}

// --- through roles -------------------------------------------------------------------------

struct RolePath {
  const char* role_line;  // what the role holds
  const char* privilege;  // the privilege named in the message
};

class EachRolePath : public ::testing::TestWithParam<RolePath> {};

TEST_P(EachRolePath, IsAViolationFixedByRevokingTheRole) {
  Roles roles;
  roles.by_name["`writer`@`%`"] = {"GRANT USAGE ON *.* TO `writer`@`%`", GetParam().role_line};
  roles.by_name["`other`@`%`"] = {"GRANT USAGE ON *.* TO `other`@`%`"};
  auto fs =
      check({"GRANT USAGE ON *.* TO `agent`@`%`", "GRANT `writer`@`%` TO `agent`@`%`"}, &roles);
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Violation);
  EXPECT_EQ(fs[0].fix, "REVOKE `writer`@`%` FROM `agent`@`%`;");
  EXPECT_NE(fs[0].message.find("through role `writer`@`%`"), std::string::npos) << fs[0].message;
  EXPECT_NE(fs[0].message.find(GetParam().privilege), std::string::npos) << fs[0].message;
}

INSTANTIATE_TEST_SUITE_P(
    MysqlGrants, EachRolePath,
    ::testing::Values(
        RolePath{"GRANT INSERT ON `shop`.* TO `writer`@`%`", "INSERT"},
        RolePath{"GRANT FILE ON *.* TO `writer`@`%`", "FILE"},
        RolePath{"GRANT EXECUTE ON PROCEDURE `shop`.`p` TO `writer`@`%`", "EXECUTE"},
        RolePath{"GRANT UPDATE (`c`) ON `shop`.`t` TO `writer`@`%`", "UPDATE (`c`)"},
        RolePath{"GRANT SELECT ON `shop`.* TO `writer`@`%` WITH GRANT OPTION", "GRANT OPTION"},
        RolePath{"GRANT PROXY ON `root`@`localhost` TO `writer`@`%`", "PROXY"},
        RolePath{"GRANT `other`@`%` TO `writer`@`%` WITH ADMIN OPTION", "ADMIN OPTION"}));

TEST(MysqlGrants, MariadbRoleWithoutHost) {
  Roles roles;
  roles.by_name["`writer`"] = {"GRANT USAGE ON *.* TO `writer`",
                               "GRANT INSERT, DELETE ON `shop`.* TO `writer`"};
  auto fs = check({"GRANT `writer` TO `agent`@`%`"}, &roles);
  wellFormed(fs);
  EXPECT_EQ(fixes(fs), (std::vector<std::string>{"REVOKE `writer` FROM `agent`@`%`;",
                                                 "REVOKE `writer` FROM `agent`@`%`;"}));
}

// Checked on MariaDB 10.11.19: SHOW GRANTS FOR a role also lists its nested roles' lines, under
// their own grantees. The write is one finding, cut at the account, naming the role holding it.
TEST(MysqlGrants, Mariadb1011RoleTranscriptWithNestedRolesListedInline) {
  Roles roles;
  roles.by_name["`reader`"] = {"GRANT `writer` TO `reader`",
                               "GRANT USAGE ON *.* TO `reader`",
                               "GRANT SELECT, SHOW VIEW ON `shop`.* TO `reader`",
                               "GRANT `inner_r` TO `writer`",
                               "GRANT USAGE ON *.* TO `writer`",
                               "GRANT USAGE ON *.* TO `inner_r`",
                               "GRANT INSERT ON `shop`.* TO `inner_r`"};
  roles.by_name["`writer`"] = {"GRANT `inner_r` TO `writer`", "GRANT USAGE ON *.* TO `writer`",
                               "GRANT USAGE ON *.* TO `inner_r`",
                               "GRANT INSERT ON `shop`.* TO `inner_r`"};
  roles.by_name["`inner_r`"] = {"GRANT USAGE ON *.* TO `inner_r`",
                                "GRANT INSERT ON `shop`.* TO `inner_r`"};
  auto fs = check(
      {"GRANT `reader` TO `agent`@`%`",
       std::string("GRANT USAGE ON *.* TO `agent`@`%` IDENTIFIED BY PASSWORD '") + kHash + "'",
       "GRANT SELECT (`a`, `b`) ON `shop`.`t` TO `agent`@`%`",
       "SET DEFAULT ROLE `reader` FOR `agent`@`%`"},
      &roles);
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].fix, "REVOKE `reader` FROM `agent`@`%`;");
  EXPECT_NE(fs[0].message.find("INSERT on `shop`.* through role `reader`, from role `inner_r`"),
            std::string::npos)
      << fs[0].message;
}

TEST(MysqlGrants, NestedRolesNameThePathAndCutItAtTheAccount) {
  Roles roles;
  roles.by_name["`r1`"] = {"GRANT SELECT ON `shop`.* TO `r1`", "GRANT `r2` TO `r1`"};
  roles.by_name["`r2`"] = {"GRANT `r3` TO `r2`"};
  roles.by_name["`r3`"] = {"GRANT INSERT ON `shop`.`orders` TO `r3`"};
  auto fs = check({"GRANT `r1` TO `agent`@`%`"}, &roles);
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].fix, "REVOKE `r1` FROM `agent`@`%`;");
  EXPECT_NE(fs[0].message.find("INSERT on `shop`.`orders` through role `r1` -> `r2` -> `r3`"),
            std::string::npos)
      << fs[0].message;
}

TEST(MysqlGrants, RoleCyclesEndAndAreReadOnce) {
  Roles roles;
  roles.by_name["`a`"] = {"GRANT SELECT ON `shop`.* TO `a`", "GRANT `b` TO `a`"};
  roles.by_name["`b`"] = {"GRANT `a` TO `b`", "GRANT `b` TO `b`"};
  expectOk(check({"GRANT `a` TO `u`@`%`", "GRANT `b` TO `u`@`%`"}, &roles));
  EXPECT_EQ(roles.asked["`a`"], 1);
  EXPECT_EQ(roles.asked["`b`"], 1);

  roles.by_name["`b`"].push_back("GRANT DELETE ON `shop`.* TO `b`");
  auto fs = check({"GRANT `a` TO `u`@`%`"}, &roles);
  wellFormed(fs);
  EXPECT_EQ(fixes(fs), std::vector<std::string>{"REVOKE `a` FROM `u`@`%`;"});
}

TEST(MysqlGrants, DiamondRolesReportEachRootOnce) {
  Roles roles;
  roles.by_name["`a`"] = {"GRANT `w` TO `a`", "GRANT `b` TO `a`"};
  roles.by_name["`b`"] = {"GRANT `w` TO `b`"};
  roles.by_name["`w`"] = {"GRANT INSERT ON `shop`.* TO `w`"};
  auto fs = check({"GRANT `a` TO `u`@`%`", "GRANT `b` TO `u`@`%`"}, &roles);
  wellFormed(fs);
  // Both roles the account holds lead to the write: both must go.
  EXPECT_EQ(fixes(fs),
            (std::vector<std::string>{"REVOKE `a` FROM `u`@`%`;", "REVOKE `b` FROM `u`@`%`;"}));
}

TEST(MysqlGrants, DeepRoleChainsStopInconclusive) {
  Roles roles;
  for (int i = 0; i < 40; ++i) {
    const std::string me = "r" + std::to_string(i);
    roles.by_name["`" + me + "`"] = {"GRANT `r" + std::to_string(i + 1) + "` TO `" + me + "`"};
  }
  auto fs = check({"GRANT `r0` TO `u`@`%`"}, &roles);
  wellFormed(fs);
  ASSERT_EQ(only(fs, Sev::Inconclusive).size(), 1u) << dump(fs);
  EXPECT_EQ(only(fs, Sev::Inconclusive)[0].fix, "REVOKE `r0` FROM `u`@`%`;");
  EXPECT_LE(roles.asked.size(), static_cast<std::size_t>(kMaxRoleDepth));
}

TEST(MysqlGrants, WideRoleTreesStopInconclusive) {
  Roles roles;
  Lines hub = {"GRANT SELECT ON `shop`.* TO `hub`"};
  for (int i = 0; i < kMaxRolesPerPath + 10; ++i) {
    const std::string leaf = "leaf" + std::to_string(i);
    hub.push_back("GRANT `" + leaf + "` TO `hub`");
    roles.by_name["`" + leaf + "`"] = {"GRANT SELECT ON `shop`.* TO `" + leaf + "`"};
  }
  roles.by_name["`hub`"] = hub;
  auto fs = check({"GRANT `hub` TO `u`@`%`"}, &roles);
  wellFormed(fs);
  EXPECT_FALSE(only(fs, Sev::Inconclusive).empty()) << dump(fs);
  EXPECT_TRUE(only(fs, Sev::Ok).empty());
}

TEST(MysqlGrants, UnreadableRoleIsInconclusive) {
  Roles roles;  // knows no role
  auto fs =
      check({"GRANT SELECT ON `shop`.* TO `u`@`%`", "GRANT `mystery`@`%` TO `u`@`%`"}, &roles);
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Inconclusive);
  EXPECT_EQ(fs[0].check, "mysql.role");
  EXPECT_NE(fs[0].message.find("`mystery`@`%`"), std::string::npos);
  // No lookup at all: the same.
  auto none = check({"GRANT `mystery`@`%` TO `u`@`%`"});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].severity, Sev::Inconclusive);
}

TEST(MysqlGrants, UnreadableLineInsideARoleIsInconclusive) {
  Roles roles;
  roles.by_name["`r`"] = {"GRANT SELECT ON `shop`.* TO `r`", "GRANT SELECT ON * TO `r`"};
  auto fs = check({"GRANT `r` TO `u`@`%`"}, &roles);
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Inconclusive);
  EXPECT_NE(fs[0].message.find("line 2 of the grants of role `r`"), std::string::npos)
      << fs[0].message;
}

TEST(MysqlGrants, ImplicitRolesAreRevokedWhereTheyHoldIt) {
  Roles roles;
  roles.by_name["PUBLIC"] = {"GRANT INSERT ON `shop`.* TO PUBLIC"};
  roles.by_name["`mandatory`@`%`"] = {"GRANT `inner`@`%` TO `mandatory`@`%`"};
  roles.by_name["`inner`@`%`"] = {"GRANT DROP ON *.* TO `inner`@`%`"};
  GrantsInput in;
  in.lines = {"GRANT SELECT ON `shop`.* TO `u`@`%`"};
  in.role_grants = roles.lookup();
  in.implicit_roles = {Account{"PUBLIC", "", false, true}, Account{"mandatory", "%", true, false}};
  auto fs = checkGrants(in);
  wellFormed(fs);
  EXPECT_EQ(fixes(fs), (std::vector<std::string>{"REVOKE INSERT ON `shop`.* FROM PUBLIC;",
                                                 "REVOKE `inner`@`%` FROM `mandatory`@`%`;"}));
  EXPECT_NE(dump(fs).find("held by every account"), std::string::npos) << dump(fs);
}

TEST(MysqlGrants, AdminOptionOnTheAccountsOwnRole) {
  Roles roles;
  roles.by_name["`reader`"] = {"GRANT SELECT ON `shop`.* TO `reader`"};
  auto fs = check({"GRANT `reader` TO `u`@`%` WITH ADMIN OPTION"}, &roles);
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].check, "mysql.role");
  EXPECT_EQ(fs[0].fix, "REVOKE `reader` FROM `u`@`%`; GRANT `reader` TO `u`@`%`;");
}

// --- unknown and unreadable ----------------------------------------------------------------

TEST(MysqlGrants, UnknownPrivilegeIsInconclusiveAndNamed) {
  auto fs = check({"GRANT SELECT, FROBNICATE_ADMIN ON *.* TO `u`@`%`"});
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Inconclusive);
  EXPECT_NE(fs[0].message.find("FROBNICATE_ADMIN"), std::string::npos) << fs[0].message;
  EXPECT_EQ(fs[0].fix, "REVOKE FROBNICATE_ADMIN ON *.* FROM `u`@`%`;");
  // A word that is not plain ASCII is described, not echoed.
  auto odd = check({"GRANT SELECT, \xc3\xa9vil ON *.* TO `u`@`%`"});
  ASSERT_EQ(odd.size(), 1u) << dump(odd);
  EXPECT_EQ(odd[0].severity, Sev::Inconclusive);
  EXPECT_EQ(odd[0].message.find("\xc3\xa9"), std::string::npos) << odd[0].message;
  EXPECT_TRUE(odd[0].fix.empty());
}

TEST(MysqlGrants, UnreadableLinesAreInconclusiveWithoutEchoingThem) {
  auto fs = check({"GRANT SELECT ON `shop`.* TO `u`@`%`", "GRANT SELECT ON `sec ret TO x"});
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  EXPECT_EQ(fs[0].severity, Sev::Inconclusive);
  EXPECT_EQ(fs[0].check, "mysql.grants");
  EXPECT_NE(fs[0].message.find("line 2 of SHOW GRANTS"), std::string::npos);
  EXPECT_EQ(fs[0].message.find("sec ret"), std::string::npos);
  auto empty = check({});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].severity, Sev::Inconclusive);
}

// --- secrets and quoting --------------------------------------------------------------------

TEST(MysqlGrants, NothingAfterIdentifiedIsEverPrinted) {
  const std::string secret = "S3cr3tHashValue";
  for (const std::string& line : {
           "GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*" + secret + "'",
           "GRANT INSERT ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*" + secret +
               "' WITH GRANT OPTION",
           "GRANT INSERT ON *.* TO `u`@`%` IDENTIFIED VIA ed25519 USING '" + secret + "'",
           "GRANT INSERT ON *.* TO `u`@`%` IDENTIFIED VIA ed25519 USING PASSWORD('" + secret + "')",
           "GRANT INSERT ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*" + secret + "' WITH BOGUS",
           "GRANT INSERT ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*" + secret,  // unclosed
           "GRANT INSERT ON *.* TO `u`@`%` IDENTIFIED BY " + secret + " FOO",
           "GRANT IDENTIFIED BY PASSWORD '*" + secret + "' ON *.* TO `u`@`%`",
           "GRANT INSERT, IDENTIFIED " + secret + " ON *.* TO `u`@`%`",
           "GRANT INSERT ON *.* TO `u`@`%` identified by password '" + secret + "'",
       }) {
    auto fs = check({line});
    wellFormed(fs);
    ASSERT_FALSE(fs.empty());
    for (const auto& f : fs) {
      EXPECT_EQ(f.message.find(secret), std::string::npos) << line << "\n" << f.message;
      EXPECT_EQ(f.fix.find(secret), std::string::npos) << line << "\n" << f.fix;
    }
  }
}

TEST(MysqlGrants, QuotingEdgeCasesInFixes) {
  auto fs = check({"GRANT INSERT ON `we``ird`.`t``x` TO 'o\\'brien'@'%'",
                   "GRANT DELETE ON `db\\_1`.* TO 'o\\'brien'@'%'",
                   "GRANT UPDATE ON `db%`.* TO 'o\\'brien'@'%'",
                   "GRANT DROP ON \"ansi\".* TO \"o'brien\"@\"%\""});
  wellFormed(fs);
  EXPECT_EQ(fixes(fs),
            (std::vector<std::string>{"REVOKE INSERT ON `we``ird`.`t``x` FROM `o'brien`@`%`;",
                                      "REVOKE DELETE ON `db\\_1`.* FROM `o'brien`@`%`;",
                                      "REVOKE UPDATE ON `db%`.* FROM `o'brien`@`%`;",
                                      "REVOKE DROP ON `ansi`.* FROM `o'brien`@`%`;"}));
  EXPECT_NE(dump(fs).find("`db%`.* (a pattern"), std::string::npos) << dump(fs);
  // db\_1 names the database db_1 only.
  EXPECT_EQ(dump(fs).find("`db\\_1`.* (a pattern"), std::string::npos) << dump(fs);
  EXPECT_NE(dump(check({"GRANT DROP ON `db\\\\_1`.* TO `u`@`%`"})).find("(a pattern"),
            std::string::npos);
}

TEST(MysqlGrants, ControlCharactersInNamesNeverReachAMessage) {
  auto fs = check({"GRANT INSERT ON `a\x1b[31mb\nc`.* TO `u`@`%`"});
  wellFormed(fs);
  ASSERT_EQ(fs.size(), 1u) << dump(fs);
  for (char c : fs[0].message) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << fs[0].message;
  // The fix stays exact: it must name the database as it is.
  EXPECT_EQ(fs[0].fix, "REVOKE INSERT ON `a\x1b[31mb\nc`.* FROM `u`@`%`;");
}

}  // namespace
}  // namespace mcpdb::mysql
