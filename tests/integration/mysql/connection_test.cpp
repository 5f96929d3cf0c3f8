// Connecting and the session the client layer sets up: flavour, read-only proven by the server,
// the lexing-relevant sql_mode, TLS refusals, credentials, LOCAL INFILE off.
#include <gtest/gtest.h>
#include <unistd.h>

#include "integration/mysql/fixture.hpp"

namespace mcpdb::mysql::itest {
namespace {

std::vector<Param> none() {
  return {};
}

TEST(MysqlConnection, ConnectsAndDetectsMariaDb) {
  auto c = openReader();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->server().flavour, Flavour::MariaDB);
  EXPECT_NE(c->server().version.find("MariaDB"), std::string::npos) << c->server().version;
  EXPECT_GE(c->server().version_number, 100000u);
  EXPECT_GT(c->threadId(), 0u);
  auto id = c->queryValue("SELECT CONNECTION_ID()");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, std::to_string(c->threadId()));
  auto user = c->queryValue("SELECT CURRENT_USER()");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(*user, "mcpdb_ro@127.0.0.1");
}

TEST(MysqlConnection, SessionIsReadOnlyWithFixedSqlMode) {
  auto c = openReader();
  ASSERT_TRUE(c);
  EXPECT_EQ(*c->queryValue("SELECT @@SESSION.tx_read_only"), "1");
  const std::string mode = *c->queryValue("SELECT @@SESSION.sql_mode");
  for (const char* bad : {"ANSI_QUOTES", "NO_BACKSLASH_ESCAPES", "PIPES_AS_CONCAT", "IGNORE_SPACE",
                          "ORACLE", "ANSI"}) {
    EXPECT_EQ(mode.find(bad), std::string::npos) << mode;
  }
  EXPECT_EQ(*c->queryValue("SELECT @@SESSION.time_zone"), "+00:00");
  EXPECT_EQ(*c->queryValue("SELECT @@SESSION.character_set_client"), "utf8mb4");
  // The lexing the guard assumes: "..." is a string and a backslash escapes.
  auto r = c->run("SELECT \"dq\", 'a\\'b'", none(), CallLimits{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows.at(0).at(0), "dq");
  EXPECT_EQ(r->rows.at(0).at(1), "a'b");
}

// The admin user may write demo.*: the server itself must refuse the write inside the call's
// read-only transaction (not the privileges).
TEST(MysqlConnection, WriteRefusedByReadOnlyTransaction) {
  ensureTestTables();
  auto admin = openAdmin();
  ASSERT_TRUE(admin);
  auto w = admin->run("INSERT INTO demo.mytest_numbers VALUES (?, 'y')",
                      std::vector<Param>{std::int64_t{5000}}, CallLimits{});
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, Code::PermissionDenied) << w.error().message;
  EXPECT_NE(w.error().message.find("1792"), std::string::npos) << w.error().message;
  // Outside run() the session is READ ONLY as well (after the call's reset).
  ASSERT_TRUE(admin->resetSession().ok());
  auto plain = admin->queryValue("INSERT INTO demo.mytest_numbers VALUES (5001, 'y')");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().code, Code::PermissionDenied);
  auto reader = openReader();
  ASSERT_TRUE(reader);
  EXPECT_EQ(*reader->queryValue("SELECT COUNT(*) FROM demo.mytest_numbers WHERE n >= 5000"), "0");
  // The principal's own privileges refuse it too.
  auto r = reader->run("DELETE FROM demo.mytest_numbers", none(), CallLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::PermissionDenied);
}

// Issue #32: the reset begins the next call's READ ONLY transaction (one round trip less per call).
// The call still runs in a read-only transaction that reads what is committed when it runs, and a
// statement that ended that transaction since (an implicit commit) does not leave the call
// outside one.
TEST(MysqlConnection, TheResetBeginsTheNextCallsReadOnlyTransaction) {
  ensureTestTables();
  // A scratch table of this process (the suite's canary leaves mytest_demo_* out), dropped after.
  struct Scratch {
    std::string name = "demo.mytest_demo_snapshot_" + std::to_string(::getpid());
    ~Scratch() { adminExec("DROP TABLE IF EXISTS " + name); }
  } scratch;
  adminExec("CREATE TABLE IF NOT EXISTS " + scratch.name + " (k INT PRIMARY KEY, v INT NOT NULL)");
  adminExec("REPLACE INTO " + scratch.name + " VALUES (1, 1)");
  auto admin = openAdmin();  // may write demo.*: only the transaction refuses it
  ASSERT_TRUE(admin);
  ASSERT_TRUE(admin->run("SELECT 1", none(), CallLimits{}).ok());
  ASSERT_TRUE(admin->needsReset());
  ASSERT_TRUE(admin->resetSession().ok());
  EXPECT_EQ(*admin->queryValue("SELECT @@in_transaction"), "1");
  // Committed after the transaction began, before the call's first read: the call sees it.
  adminExec("REPLACE INTO " + scratch.name + " VALUES (1, 2)");
  auto r = admin->run("SELECT v FROM " + scratch.name + " WHERE k = ?",
                      std::vector<Param>{std::int64_t{1}}, CallLimits{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0][0].get<std::int64_t>(), 2);
  // The next call, after the next reset, on the transaction the reset began: a write is refused
  // by the server inside it.
  ASSERT_TRUE(admin->resetSession().ok());
  auto w = admin->run("INSERT INTO demo.mytest_numbers VALUES (?, 'y')",
                      std::vector<Param>{std::int64_t{5002}}, CallLimits{});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("1792"), std::string::npos) << w.error().message;
  // The transaction the reset began, ended before the call: the call begins another.
  ASSERT_TRUE(admin->resetSession().ok());
  ASSERT_TRUE(admin->queryValue("COMMIT").ok());
  EXPECT_EQ(*admin->queryValue("SELECT @@in_transaction"), "0");
  w = admin->run("INSERT INTO demo.mytest_numbers VALUES (?, 'y')",
                 std::vector<Param>{std::int64_t{5003}}, CallLimits{});
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("1792"), std::string::npos) << w.error().message;
  ASSERT_TRUE(admin->resetSession().ok());
  ASSERT_TRUE(admin->queryValue("COMMIT").ok());
  r = admin->run("SELECT @@in_transaction", none(), CallLimits{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rows.at(0).at(0).get<std::int64_t>(), 1);
  auto reader = openReader();
  ASSERT_TRUE(reader);
  EXPECT_EQ(*reader->queryValue("SELECT COUNT(*) FROM demo.mytest_numbers WHERE n >= 5002"), "0");
}

TEST(MysqlConnection, OneStatementPerCall) {
  auto c = openReader();
  ASSERT_TRUE(c);
  auto r = c->run("SELECT 1; SELECT 2", none(), CallLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  auto t = c->queryValue("SELECT 1; SELECT 2");
  EXPECT_FALSE(t.ok());
  EXPECT_TRUE(c->usable());
  EXPECT_EQ(*c->queryValue("SELECT 3"), "3");
}

TEST(MysqlConnection, LocalInfileIsOff) {
  ensureTestTables();
  auto admin = openAdmin();
  ASSERT_TRUE(admin);
  ASSERT_TRUE(admin->queryValue("SET SESSION TRANSACTION READ WRITE").ok());
  auto r =
      admin->queryValue("LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE demo.mytest_numbers");
  ASSERT_FALSE(r.ok());
  // 4166 (MariaDB) or 1148 (MySQL): the client refused to offer a local file.
  EXPECT_EQ(r.error().code, Code::PermissionDenied) << r.error().message;
  EXPECT_TRUE(r.error().message.find("error 4166") != std::string::npos ||
              r.error().message.find("error 1148") != std::string::npos)
      << r.error().message;
}

TEST(MysqlConnection, WrongPasswordIsPermissionDeniedWithoutThePassword) {
  Dsn d = dsnFrom("MYSQL_DSN");
  d.password = "Wrong-Pw-7f3a9";
  auto c = Connection::open(d);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::PermissionDenied) << c.error().message;
  EXPECT_EQ(c.error().message.find(d.password), std::string::npos);
  EXPECT_EQ(c.error().detail.find(d.password), std::string::npos);
}

TEST(MysqlConnection, UnreachableIsUnavailable) {
  Dsn d = dsnFrom("MYSQL_DSN");
  d.port = 1;
  auto c = Connection::open(d);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::Unavailable) << c.error().message;
}

// The cipher of the session ("" without TLS).
std::string cipherOf(Connection& c) {
  auto v = c.queryValue(
      "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = "
      "'SSL_CIPHER'");
  EXPECT_TRUE(v.ok()) << v.error().message;
  return v.ok() ? *v : "";
}

Result<Connection> openWithTls(SslMode mode, const std::string& host, const std::string& ca) {
  Dsn d = dsnFrom("MYSQL_DSN");
  d.ssl_mode = mode;
  d.host = host;
  d.ssl_ca = ca;
  return Connection::open(d);
}

// The local server offers TLS with a certificate for IP 127.0.0.1 signed by a throwaway CA
// (scripts/lib/mariadb.sh, MCPDB_MARIADB_CA).
TEST(MysqlConnection, TlsPerSslMode) {
  const std::string ca = requireEnv("MCPDB_MARIADB_CA");
  auto disabled = openWithTls(SslMode::Disabled, "127.0.0.1", "");
  ASSERT_TRUE(disabled.ok()) << disabled.error().message;
  EXPECT_EQ(cipherOf(*disabled), "");
  for (SslMode mode : {SslMode::Preferred, SslMode::Required}) {
    auto c = openWithTls(mode, "127.0.0.1", "");
    ASSERT_TRUE(c.ok()) << sslModeName(mode) << ": " << c.error().message;
    EXPECT_NE(cipherOf(*c), "") << sslModeName(mode);
  }
  for (SslMode mode : {SslMode::VerifyCa, SslMode::VerifyIdentity}) {
    auto c = openWithTls(mode, "127.0.0.1", ca);
    ASSERT_TRUE(c.ok()) << sslModeName(mode) << ": " << c.error().message;
    EXPECT_NE(cipherOf(*c), "");
  }
}

TEST(MysqlConnection, VerifyIdentityRefusesAnotherHostName) {
  // "localhost" reaches the same server over TCP, but the certificate names only 127.0.0.1.
  for (SslMode mode : {SslMode::VerifyIdentity, SslMode::VerifyCa}) {
    auto c = openWithTls(mode, "localhost", requireEnv("MCPDB_MARIADB_CA"));
    ASSERT_FALSE(c.ok()) << sslModeName(mode);
    EXPECT_EQ(c.error().code, Code::Unavailable) << c.error().message;
  }
  // Without verification the same name connects (TLS, unverified): the refusal above is the
  // host check, not the route.
  auto plain = openWithTls(SslMode::Required, "localhost", "");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
}

TEST(MysqlConnection, VerifyIdentityRefusesAnUnknownCa) {
  auto c = openWithTls(SslMode::VerifyIdentity, "127.0.0.1", "/etc/ssl/certs/ca-certificates.crt");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Code::Unavailable) << c.error().message;
}

TEST(MysqlConnection, LostConnectionIsUnavailableAndSticks) {
  auto c = openReader();
  auto killer = openReader();
  ASSERT_TRUE(c && killer);
  ASSERT_TRUE(killer->queryValue("KILL CONNECTION " + std::to_string(c->threadId())).ok());
  auto r = c->run("SELECT 1", none(), CallLimits{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable) << r.error().message;
  EXPECT_FALSE(c->usable());
  auto again = c->run("SELECT 1", none(), CallLimits{});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Code::Unavailable);
}

}  // namespace
}  // namespace mcpdb::mysql::itest
