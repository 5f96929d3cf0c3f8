// The connection parameters: session settings always present, DSN options kept but overridden,
// and RDS IAM mode (fresh token as password, verify-full, CA bundle) without a real RDS.
#include <gtest/gtest.h>

#include "engines/postgres/conninfo.hpp"

namespace mcpdb::postgres {
namespace {

PoolSettings pool() {
  PoolSettings p;
  p.statement_timeout = std::chrono::milliseconds(4000);
  p.idle_in_transaction_timeout = std::chrono::milliseconds(9000);
  p.connect_timeout = std::chrono::milliseconds(2500);
  return p;
}

TEST(PostgresConninfo, DsnGetsReadOnlySessionSettings) {
  Env env = Env::fromMap({{"POSTGRES_DSN",
                           "postgresql://u:pw@db.example:6543/"
                           "app?options=-c%20search_path%3Dkb&application_name=evil"}});
  auto p = buildConnParams(pool(), env, {});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->iam);
  EXPECT_EQ(p->get("host"), "db.example");
  EXPECT_EQ(p->get("port"), "6543");
  EXPECT_EQ(p->get("dbname"), "app");
  EXPECT_EQ(p->get("user"), "u");
  EXPECT_EQ(p->get("password"), "pw");
  EXPECT_EQ(p->get("application_name"), "mcp-dbserver");
  EXPECT_EQ(p->get("client_encoding"), "UTF8");
  EXPECT_EQ(p->get("connect_timeout"), "3");
  EXPECT_EQ(p->get("options"),
            "-c search_path=kb -c default_transaction_read_only=on -c statement_timeout=4000 "
            "-c idle_in_transaction_session_timeout=9000 -c DateStyle=ISO -c "
            "IntervalStyle=iso_8601 -c TimeZone=UTC "
            "-c bytea_output=hex -c extra_float_digits=1 -c standard_conforming_strings=on "
            // postgres.search_path is pinned after the DSN's own, so it wins; JIT is off.
            "-c jit=off -c search_path=pg_catalog,public,pg_temp");
}

TEST(PostgresConninfo, BadDsnIsRefusedWithoutEchoingIt) {
  Env env = Env::fromMap({{"POSTGRES_DSN", "host=x password=s3cr3t bogus_key=1"}});
  auto p = buildConnParams(pool(), env, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "POSTGRES_DSN is not a valid PostgreSQL connection string");
}

// A declared source reads its DSN from its own variable only: never POSTGRES_DSN, never the
// PGHOST fallback of the implicit default, and its errors name the variable, not the value.
TEST(PostgresConninfo, ADeclaredSourceReadsOnlyItsOwnVariable) {
  Source reports;
  reports.name = "reports";
  reports.dsn_env = "REPORTS_PG_DSN";
  const Env env = Env::fromMap({{"POSTGRES_DSN", "host=main.example user=u dbname=d"},
                                {"REPORTS_PG_DSN", "host=reports.example user=r dbname=rep"}});
  auto p = buildConnParams(pool(), env, {}, reports);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->get("host"), "reports.example");
  EXPECT_EQ(p->get("dbname"), "rep");

  const Env unset = Env::fromMap({{"POSTGRES_DSN", "host=main.example user=u dbname=d"},
                                  {"PGHOST", "h"},
                                  {"PGUSER", "u"},
                                  {"PGDATABASE", "d"},
                                  {"MCPDB_PG_IAM_AUTH", "1"}});
  auto missing = buildConnParams(pool(), unset, {}, reports);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "REPORTS_PG_DSN (its DSN) is not set");

  const Env bad = Env::fromMap({{"REPORTS_PG_DSN", "host=x password=s3cr3t bogus_key=1"}});
  auto refused = buildConnParams(pool(), bad, {}, reports);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "REPORTS_PG_DSN is not a valid PostgreSQL connection string");
}

// A source's TLS and IAM settings override the pool's; what it leaves out, it inherits.
TEST(PostgresConninfo, ASourcesTlsSettingsOverrideThePools) {
  PoolSettings base = pool();
  base.sslmode = "require";
  base.sslrootcert = "/etc/ca.pem";
  Source own;
  own.sslmode = "verify-full";
  const PoolSettings p = poolFor(base, own);
  EXPECT_EQ(p.sslmode, "verify-full");
  EXPECT_EQ(p.sslrootcert, "/etc/ca.pem");
  EXPECT_FALSE(p.iam_auth.has_value());
  own.iam_auth = true;
  EXPECT_TRUE(*poolFor(base, own).iam_auth);
}

TEST(PostgresConninfo, NothingConfigured) {
  auto p = buildConnParams(pool(), Env::fromMap({}), {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, Code::FailedPrecondition);
}

TEST(PostgresConninfo, IamTokenAsPasswordWithVerifyFull) {
  Env env = Env::fromMap({{"PGHOST", "mydb.abc.eu-west-1.rds.amazonaws.com"},
                          {"PGUSER", "iam_reader"},
                          {"PGDATABASE", "app"},
                          {"MCPDB_PG_IAM_AUTH", "1"},
                          {"MCPDB_PG_SSLROOTCERT", "/etc/ssl/rds-global-bundle.pem"},
                          {"AWS_REGION", "eu-west-1"}});
  int calls = 0;
  TokenSource token = [&](const std::string& host, std::uint16_t port,
                          const std::string& user) -> Result<std::string> {
    ++calls;
    return host + ":" + std::to_string(port) + "/?Action=connect&DBUser=" + user +
           "&X-Amz-Signature=" + std::to_string(calls);
  };
  auto p = buildConnParams(pool(), env, token);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_TRUE(p->iam);
  EXPECT_EQ(p->get("password"),
            "mydb.abc.eu-west-1.rds.amazonaws.com:5432/"
            "?Action=connect&DBUser=iam_reader&X-Amz-Signature=1");
  EXPECT_EQ(p->get("sslmode"), "verify-full");
  EXPECT_EQ(p->get("sslrootcert"), "/etc/ssl/rds-global-bundle.pem");
  EXPECT_EQ(p->get("host"), "mydb.abc.eu-west-1.rds.amazonaws.com");
  EXPECT_EQ(p->get("port"), "5432");
  EXPECT_NE(p->get("options").find("default_transaction_read_only=on"), std::string::npos);
  // Every new connection gets a fresh token.
  auto p2 = buildConnParams(pool(), env, token);
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(calls, 2);
  EXPECT_NE(p2->get("password"), p->get("password"));
}

TEST(PostgresConninfo, IamOverridesDsnPasswordAndSslmode) {
  PoolSettings s = pool();
  s.iam_auth = true;
  s.sslrootcert = "/certs/ca.pem";
  Env env = Env::fromMap(
      {{"POSTGRES_DSN", "host=db.example port=5433 user=r dbname=d password=old sslmode=disable"}});
  TokenSource token = [](const std::string&, std::uint16_t port,
                         const std::string&) -> Result<std::string> {
    return "tok-" + std::to_string(port);
  };
  auto p = buildConnParams(s, env, token);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->get("password"), "tok-5433");
  EXPECT_EQ(p->get("sslmode"), "verify-full");
  EXPECT_EQ(p->get("sslrootcert"), "/certs/ca.pem");
}

TEST(PostgresConninfo, IamNeedsCaBundleAndTcpHost) {
  TokenSource token = [](const std::string&, std::uint16_t,
                         const std::string&) -> Result<std::string> { return std::string("t"); };
  Env no_ca = Env::fromMap(
      {{"PGHOST", "h"}, {"PGUSER", "u"}, {"PGDATABASE", "d"}, {"MCPDB_PG_IAM_AUTH", "1"}});
  auto p = buildConnParams(pool(), no_ca, token);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("MCPDB_PG_SSLROOTCERT"), std::string::npos);
  Env socket = Env::fromMap({{"PGHOST", "/var/run/postgresql"},
                             {"PGUSER", "u"},
                             {"PGDATABASE", "d"},
                             {"MCPDB_PG_IAM_AUTH", "1"},
                             {"MCPDB_PG_SSLROOTCERT", "/ca.pem"}});
  EXPECT_FALSE(buildConnParams(pool(), socket, token).ok());
  Env no_user = Env::fromMap({{"PGHOST", "h"},
                              {"PGDATABASE", "d"},
                              {"MCPDB_PG_IAM_AUTH", "1"},
                              {"MCPDB_PG_SSLROOTCERT", "/ca.pem"}});
  EXPECT_FALSE(buildConnParams(pool(), no_user, token).ok());
  // A token failure surfaces as is (its message is already safe).
  TokenSource failing = [](const std::string&, std::uint16_t,
                           const std::string&) -> Result<std::string> {
    return makeError(Code::FailedPrecondition, "no AWS credentials");
  };
  Env ok = Env::fromMap({{"PGHOST", "h"},
                         {"PGUSER", "u"},
                         {"PGDATABASE", "d"},
                         {"MCPDB_PG_IAM_AUTH", "1"},
                         {"MCPDB_PG_SSLROOTCERT", "/ca.pem"}});
  auto f = buildConnParams(pool(), ok, failing);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().message, "no AWS credentials");
}

TEST(PostgresConninfo, RealTokenSourceSignsWithEnvironmentCredentials) {
  Env env = Env::fromMap({{"AWS_REGION", "us-east-1"},
                          {"AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"},
                          {"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}});
  auto t = rdsTokenSource(env)("db.example.us-east-1.rds.amazonaws.com", 5432, "iam_reader");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(
      t->rfind("db.example.us-east-1.rds.amazonaws.com:5432/?Action=connect&DBUser=iam_reader&", 0),
      0U);
  EXPECT_NE(t->find("X-Amz-Signature="), std::string::npos);
  EXPECT_NE(t->find("X-Amz-Expires=900"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::postgres
