// checkPrivileges against the doctor's test accounts of the local MariaDB (scripts/lib/mariadb.sh):
// each holds SELECT on demo.* and one write path through a role of its own; the fix must be the
// exact REVOKE that cuts that role from the account, and applying the fixes must leave Ok.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <regex>
#include <unistd.h>

#include "engines/mysql/doctor.hpp"
#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

using Sev = GrantFinding::Severity;

std::optional<Connection> openAs(const char* variable) {
  auto c = Connection::open(dsnFrom(variable));
  if (!c.ok()) {
    ADD_FAILURE() << "cannot connect with " << variable << ": " << c.error().message;
    return std::nullopt;
  }
  return std::optional<Connection>(std::move(*c));
}

std::string describe(const std::vector<GrantFinding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    out += "  [" + std::to_string(static_cast<int>(f.severity)) + "] " + f.check + ": " +
           f.message + (f.fix.empty() ? "" : "  FIX: " + f.fix) + "\n";
  }
  return out;
}

std::size_t countOf(const std::vector<GrantFinding>& findings, Sev sev) {
  return static_cast<std::size_t>(
      std::count_if(findings.begin(), findings.end(),
                    [sev](const GrantFinding& f) { return f.severity == sev; }));
}

// No finding may carry a password hash or the IDENTIFIED tail of a GRANT line.
void expectNoSecrets(const std::vector<GrantFinding>& findings) {
  const std::regex hash(R"(\*[0-9A-Fa-f]{40})");
  for (const auto& f : findings) {
    for (const std::string* text : {&f.message, &f.fix}) {
      EXPECT_FALSE(std::regex_search(*text, hash)) << *text;
      EXPECT_EQ(text->find("IDENTIFIED"), std::string::npos) << *text;
      EXPECT_EQ(text->find("PASSWORD"), std::string::npos) << *text;
    }
  }
}

TEST(MysqlDoctor, SelectOnlyAccountIsOk) {
  auto c = openAs("MYSQL_DOCTOR_DSN_SAFE");
  ASSERT_TRUE(c);
  const auto findings = checkPrivileges(*c);
  ASSERT_EQ(findings.size(), 1u) << describe(findings);
  EXPECT_EQ(findings[0].severity, Sev::Ok);
  EXPECT_EQ(findings[0].message,
            "`mcpdb_doc_safe`@`127.0.0.1` can only read: SELECT on `demo`.* (roles included)");
  expectNoSecrets(findings);
}

struct WritePath {
  const char* variable;
  const char* user;
  const char* role;
  const char* check;    // the finding's check id
  const char* granted;  // what the message names
};

class MysqlDoctorWritePath : public testing::TestWithParam<WritePath> {};

// Each write path is one Violation whose fix is exactly the REVOKE of the role that carries it;
// nothing is Ok and nothing is left unread.
TEST_P(MysqlDoctorWritePath, IsAViolationFixedByRevokingItsRole) {
  const WritePath& p = GetParam();
  auto c = openAs(p.variable);
  ASSERT_TRUE(c);
  const auto findings = checkPrivileges(*c);
  const std::string fix = std::string("REVOKE `") + p.role + "` FROM `" + p.user + "`@`127.0.0.1`;";
  const auto it = std::find_if(findings.begin(), findings.end(), [&](const GrantFinding& f) {
    return f.severity == Sev::Violation && f.check == p.check &&
           f.message.find(p.granted) != std::string::npos;
  });
  ASSERT_NE(it, findings.end()) << describe(findings);
  EXPECT_EQ(it->fix, fix);
  EXPECT_NE(it->message.find(std::string("through role `") + p.role + "`"), std::string::npos)
      << it->message;
  EXPECT_EQ(countOf(findings, Sev::Ok), 0u) << describe(findings);
  EXPECT_EQ(countOf(findings, Sev::Inconclusive), 0u) << describe(findings);
  for (const auto& f : findings) {
    if (f.severity == Sev::Violation) {
      EXPECT_EQ(f.fix, fix) << describe(findings);
    }
  }
  expectNoSecrets(findings);
}

INSTANTIATE_TEST_SUITE_P(
    Accounts, MysqlDoctorWritePath,
    testing::Values(WritePath{"MYSQL_DOCTOR_DSN_INSERT", "mcpdb_doc_insert", "mcpdb_doc_r_insert",
                              "mysql.privilege", "holds INSERT on `demo`.*"},
                    WritePath{"MYSQL_DOCTOR_DSN_FILE", "mcpdb_doc_file", "mcpdb_doc_r_file",
                              "mysql.privilege", "holds FILE on *.*"},
                    WritePath{"MYSQL_DOCTOR_DSN_EXECUTE", "mcpdb_doc_execute",
                              "mcpdb_doc_r_execute", "mysql.privilege",
                              "holds EXECUTE on PROCEDURE `demo`.`mcpdb_doc_write_proc`"},
                    WritePath{"MYSQL_DOCTOR_DSN_PROCESS", "mcpdb_doc_process",
                              "mcpdb_doc_r_process", "mysql.privilege", "holds PROCESS on *.*"},
                    WritePath{"MYSQL_DOCTOR_DSN_TEMP", "mcpdb_doc_temp", "mcpdb_doc_r_temp",
                              "mysql.privilege", "holds CREATE TEMPORARY TABLES on `demo`.*"},
                    WritePath{"MYSQL_DOCTOR_DSN_ROLE_NESTED", "mcpdb_doc_nested",
                              "mcpdb_doc_r_outer", "mysql.privilege", "holds UPDATE on `demo`.*"},
                    WritePath{"MYSQL_DOCTOR_DSN_ROLE_NESTED", "mcpdb_doc_nested",
                              "mcpdb_doc_r_outer", "mysql.privilege", "holds DELETE on `demo`.*"},
                    WritePath{"MYSQL_DOCTOR_DSN_GRANT_OPTION", "mcpdb_doc_grant",
                              "mcpdb_doc_r_grant", "mysql.grant_option",
                              "holds GRANT OPTION on `demo`.*"}),
    [](const testing::TestParamInfo<WritePath>& param) {
      std::string name = std::string(param.param.variable).substr(sizeof("MYSQL_DOCTOR_DSN_") - 1);
      return name + "_" + std::to_string(param.index);
    });

// Roles nested two deep below the account's role are read too (MariaDB shows a role's grants only
// while it is the current role, and a nested role cannot be made current): each path names the
// role it comes from.
TEST(MysqlDoctor, NestedRolesAreFollowedToTheBottom) {
  auto c = openAs("MYSQL_DOCTOR_DSN_ROLE_NESTED");
  ASSERT_TRUE(c);
  const auto findings = checkPrivileges(*c);
  EXPECT_EQ(countOf(findings, Sev::Violation), 2u) << describe(findings);
  const std::string all = describe(findings);
  EXPECT_NE(all.find("holds UPDATE on `demo`.* through role `mcpdb_doc_r_outer`, from role "
                     "`mcpdb_doc_r_inner`: writes rows"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("holds DELETE on `demo`.* through role `mcpdb_doc_r_outer`, from role "
                     "`mcpdb_doc_r_deep`: writes rows"),
            std::string::npos)
      << all;
  // The account's default role is still the session's role.
  auto role = c->queryValue("SELECT COALESCE(CURRENT_ROLE(), 'none')");
  ASSERT_TRUE(role.ok());
  EXPECT_EQ(*role, "mcpdb_doc_r_outer");
}

// A role whose grants cannot be read leaves the account Inconclusive, never Ok (the server's
// refusal is stood in for by the reader: no account of the local server can hold a role it
// cannot read).
TEST(MysqlDoctor, UnreadableRoleIsInconclusive) {
  for (const char* variable : {"MYSQL_DOCTOR_DSN_INSERT", "MYSQL_DOCTOR_DSN_ROLE_NESTED"}) {
    auto c = openAs(variable);
    ASSERT_TRUE(c);
    PrivilegeCheckOptions options;
    int asked = 0;
    options.wrap_role_reader = [&asked](RoleReader server) -> RoleReader {
      return [server, &asked](const Account& role) -> std::optional<std::vector<std::string>> {
        if (role.user == "mcpdb_doc_r_insert" || role.user == "mcpdb_doc_r_outer") {
          ++asked;
          return std::nullopt;
        }
        return server(role);
      };
    };
    const auto findings = checkPrivileges(*c, options);
    EXPECT_EQ(asked, 1) << variable;
    EXPECT_EQ(countOf(findings, Sev::Ok), 0u) << describe(findings);
    const auto it = std::find_if(findings.begin(), findings.end(), [](const GrantFinding& f) {
      return f.severity == Sev::Inconclusive && f.check == "mysql.role";
    });
    ASSERT_NE(it, findings.end()) << describe(findings);
    EXPECT_NE(it->message.find("could not be read"), std::string::npos) << it->message;
  }
}

// The grants of an account the server refuses to show (a broken connection here) are
// Inconclusive, never Ok.
TEST(MysqlDoctor, UnreadableGrantsAreInconclusive) {
  auto c = openAs("MYSQL_DOCTOR_DSN_SAFE");
  ASSERT_TRUE(c);
  auto self = c->queryValue("SELECT CONNECTION_ID()");
  ASSERT_TRUE(self.ok());
  (void)c->queryValue("KILL CONNECTION " + *self);  // the server ends this session
  const auto findings = checkPrivileges(*c);
  ASSERT_EQ(findings.size(), 1u) << describe(findings);
  EXPECT_EQ(findings[0].severity, Sev::Inconclusive);
  EXPECT_EQ(findings[0].check, "mysql.grants");
}

// EXECUTE on a stored function that the routine check proves read-only is not a write path;
// EXECUTE on one that writes, calls a writer, recurses or hides its body is.
TEST(MysqlDoctor, ExecuteOnCheckedFunctionsOnly) {
  auto c = openAs("MYSQL_DOCTOR_DSN_ROUTINES");
  ASSERT_TRUE(c);
  RoutineChecker checker(*c, RoutineCheckOptions{{}, "demo", guard::Dialect::Mariadb});
  PrivilegeCheckOptions options;
  options.routine_is_read_only = routineCheckHook(checker);
  const auto findings = checkPrivileges(*c, options);
  const std::string all = describe(findings);
  for (const char* writes : {"mcpdb_doc_writer`", "mcpdb_doc_calls_writer`", "mcpdb_doc_cycle_a`",
                             "mcpdb_doc_cycle_b`", "mcpdb_doc_hidden`"}) {
    const auto it = std::find_if(findings.begin(), findings.end(), [&](const GrantFinding& f) {
      return f.severity == Sev::Violation && f.message.find(writes) != std::string::npos;
    });
    ASSERT_NE(it, findings.end()) << writes << "\n" << all;
    EXPECT_EQ(it->fix, std::string("REVOKE EXECUTE ON FUNCTION `demo`.`") +
                           std::string(writes).substr(0, std::string(writes).size() - 1) +
                           "` FROM `mcpdb_doc_routines`@`127.0.0.1`;");
  }
  EXPECT_EQ(countOf(findings, Sev::Violation), 5u) << all;
  EXPECT_EQ(all.find("mcpdb_doc_pure`"), std::string::npos) << all;
  EXPECT_EQ(all.find("mcpdb_doc_calls_pure`"), std::string::npos) << all;
  // Without the hook every EXECUTE is a write path.
  EXPECT_EQ(countOf(checkPrivileges(*c), Sev::Violation), 7u);
}

std::string randomHex() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 24; ++i) out += "0123456789abcdef"[rd() % 16];
  return out;
}

// A throwaway account made by the server's administrator (MYSQL_DOCTOR_ROOT_DSN), dropped again
// however the test ends.
class ThrowawayAccount {
 public:
  explicit ThrowawayAccount(Connection& root)
      : root_(root),
        user_("mcpdb_doc_tmp_" + std::to_string(::getpid())),
        account_("'" + user_ + "'@'127.0.0.1'"),
        password_(randomHex()) {}
  ~ThrowawayAccount() { (void)root_.queryValue("DROP USER IF EXISTS " + account_); }
  ThrowawayAccount(const ThrowawayAccount&) = delete;
  ThrowawayAccount& operator=(const ThrowawayAccount&) = delete;

  // Runs `sql` as the administrator; fails the test on error.
  bool exec(const std::string& sql) {
    auto r = root_.queryValue(sql);
    EXPECT_TRUE(r.ok()) << r.error().message << " in: " << sql;
    return r.ok();
  }
  bool create(const std::vector<std::string>& grants) {
    if (!exec("DROP USER IF EXISTS " + account_) ||
        !exec("CREATE USER " + account_ + " IDENTIFIED BY '" + password_ + "'")) {
      return false;
    }
    for (const auto& g : grants) {
      if (!exec("GRANT " + g + " TO " + account_)) return false;
    }
    return true;
  }
  // Connects as the account and checks it; the session's role must be the same afterwards.
  std::vector<GrantFinding> check() {
    Dsn dsn = dsnFrom("MYSQL_DOCTOR_DSN_SAFE");
    dsn.user = user_;
    dsn.password = password_;
    auto c = Connection::open(dsn);
    if (!c.ok()) {
      ADD_FAILURE() << "cannot connect as the throwaway account: " << c.error().message;
      return {};
    }
    auto findings = checkPrivileges(*c);
    auto role = c->queryValue("SELECT COALESCE(CURRENT_ROLE(), 'none')");
    EXPECT_TRUE(role.ok() && *role == "none") << (role.ok() ? *role : role.error().message);
    return findings;
  }
  const std::string& user() const { return user_; }

 private:
  Connection& root_;
  std::string user_, account_, password_;
};

// The fixes really remove the write paths: a throwaway account holding the insert and the nested
// roles (no default role: the check has to SET ROLE to read them) is checked, every fix is run as
// the server's administrator, and the account is then Ok.
TEST(MysqlDoctor, ApplyingTheFixesLeavesOk) {
  auto root = Connection::open(dsnFrom("MYSQL_DOCTOR_ROOT_DSN"));
  ASSERT_TRUE(root.ok()) << root.error().message;
  ASSERT_TRUE(root->queryValue("SET SESSION TRANSACTION READ WRITE").ok());
  ThrowawayAccount account(*root);
  ASSERT_TRUE(account.create({"SELECT ON demo.*", "mcpdb_doc_r_insert", "mcpdb_doc_r_outer"}));
  const auto before = account.check();
  std::vector<std::string> fixes;
  for (const auto& f : before) {
    if (f.severity != Sev::Ok && std::find(fixes.begin(), fixes.end(), f.fix) == fixes.end()) {
      fixes.push_back(f.fix);
    }
  }
  EXPECT_EQ(countOf(before, Sev::Violation), 3u) << describe(before);  // INSERT, UPDATE, DELETE
  // Which fixes, not their order: the server lists an account's roles in no fixed order.
  std::sort(fixes.begin(), fixes.end());
  EXPECT_EQ(fixes, (std::vector<std::string>{
                       "REVOKE `mcpdb_doc_r_insert` FROM `" + account.user() + "`@`127.0.0.1`;",
                       "REVOKE `mcpdb_doc_r_outer` FROM `" + account.user() + "`@`127.0.0.1`;"}))
      << describe(before);
  for (const std::string& fix : fixes) account.exec(fix);
  const auto after = account.check();
  ASSERT_EQ(after.size(), 1u) << describe(after);
  EXPECT_EQ(after[0].severity, Sev::Ok) << describe(after);
}

}  // namespace
}  // namespace mcpdb::mysql::itest
