// The privilege self-check against the real roles: the serving role passes every check; the
// deliberately over-privileged role is reported exactly.
#include <gtest/gtest.h>

#include <map>

#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using Sev = engines::Finding::Severity;

std::map<std::string, engines::Finding> byCheck(const std::vector<engines::Finding>& findings) {
  std::map<std::string, engines::Finding> out;
  for (const auto& f : findings) out[f.check] = f;
  return out;
}

TEST(PostgresSelfCheck, ReaderRoleHasNoFindings) {
  auto rt = makeRuntime("version: 1\n");
  const auto findings = rt->selfCheck();
  std::vector<std::string> checks;
  for (const auto& f : findings) {
    checks.push_back(f.check);
    EXPECT_EQ(f.severity, Sev::Ok) << f.check << ": " << f.message;
  }
  EXPECT_EQ(checks,
            (std::vector<std::string>{"pg.connect", "pg.superuser", "pg.role_attributes",
                                      "pg.write_roles", "pg.table_write", "pg.sequence_write",
                                      "pg.schema_create", "pg.database_create",
                                      "pg.session_read_only", "pg.role_read_only_default"}));
  EXPECT_EQ(findings[0].message, "connected as role mcp_reader");
}

TEST(PostgresSelfCheck, OverprivilegedRoleIsReportedExactly) {
  auto rt = makeRuntime("version: 1\n", envWithDsn(requireEnv("MCPDB_PG_OVERPRIV_DSN")));
  auto f = byCheck(rt->selfCheck());
  ASSERT_TRUE(f.count("pg.connect")) << "no findings";
  EXPECT_EQ(f["pg.connect"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.superuser"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.role_attributes"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.write_roles"].severity, Sev::Violation);
  EXPECT_EQ(f["pg.write_roles"].message, "role mcp_overpriv is a member of pg_write_all_data");
  EXPECT_EQ(f["pg.table_write"].severity, Sev::Violation);
  EXPECT_NE(f["pg.table_write"].message.find("pgtest.documents (INSERT, UPDATE, DELETE)"),
            std::string::npos)
      << f["pg.table_write"].message;
  EXPECT_EQ(f["pg.schema_create"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.database_create"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.session_read_only"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.role_read_only_default"].severity, Sev::Warning);
  EXPECT_EQ(f.count("pg.read_server_files"), 0U);
  EXPECT_EQ(f.count("pg.database_temp"), 0U);
}

TEST(PostgresSelfCheck, UnreachableServerIsInconclusiveNeverAPass) {
  auto rt = makeRuntime("version: 1\n", envWithDsn("postgresql://x:y@127.0.0.1:1/mcpdemo"));
  const auto findings = rt->selfCheck();
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].check, "pg.connect");
  EXPECT_EQ(findings[0].severity, Sev::Inconclusive);
  // Where and why (host:port, the server's own reason), never the password.
  EXPECT_EQ(findings[0].message,
            "could not inspect the role's privileges, so nothing was proved: cannot connect to "
            "PostgreSQL: the server is unreachable (at 127.0.0.1:1: Connection refused)");
  const auto tools = rt->checkTools();
  ASSERT_EQ(tools.size(), 1U);
  EXPECT_EQ(tools[0].severity, Sev::Inconclusive);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
