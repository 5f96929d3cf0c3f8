#include "integration/mysql/fixture.hpp"

#include <cstdlib>
#include <mutex>

namespace mcpdb::mysql::itest {
namespace {

constexpr const char* kVersionTable = "demo.mytest_fixture_version";
constexpr int kFixtureVersion = 1;

const char* kSetup[] = {
    "DROP TABLE IF EXISTS demo.mytest_numbers, demo.mytest_types",
    "CREATE TABLE demo.mytest_numbers (n INT PRIMARY KEY, pad VARCHAR(100) NOT NULL)",
    "INSERT INTO demo.mytest_numbers WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM "
    "r "
    "WHERE n < 1000) SELECT n, REPEAT('x', 100) FROM r",
    "CREATE TABLE demo.mytest_types (id INT PRIMARY KEY, i INT, u BIGINT UNSIGNED, d "
    "DECIMAL(30,10), "
    "f DOUBLE, fl FLOAT, dt DATE, ts DATETIME(6), tz TIMESTAMP(3) NULL, tm TIME, y YEAR, "
    "s VARCHAR(20), b VARBINARY(8), bl BLOB, bt BIT(12), e ENUM('a','b'), j JSON)",
    "INSERT INTO demo.mytest_types VALUES (1, -7, 18446744073709551615, "
    "12345678901234567890.0000000001, 0.1, 1.5, '2024-02-29', '2024-01-15 10:20:30.123456', "
    "'2024-01-15 10:20:30.5', '-838:59:59', 2024, 'héllo \"q\"', X'00FF4869', X'DEADBEEF', b'101', "
    "'b', '{\"a\": [1, 2]}')",
    "INSERT INTO demo.mytest_types (id) VALUES (2)",
};

void connectOrFail(std::optional<Connection>& out, const char* variable) {
  auto c = Connection::open(dsnFrom(variable));
  if (!c.ok()) {
    ADD_FAILURE() << "cannot connect with " << variable << ": " << c.error().message
                  << "; is the server running? (bash scripts/servers.sh start mariadb)";
    return;
  }
  out.emplace(std::move(*c));
}

}  // namespace

std::string requireEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    ADD_FAILURE()
        << name
        << " is not set: start the local MariaDB and export its environment first:\n"
           "  bash scripts/servers.sh start mariadb && eval \"$(bash scripts/servers.sh env)\"";
    return "mysql://missing@127.0.0.1:1/missing?connect-timeout=1";
  }
  return v;
}

Dsn dsnFrom(const char* variable) {
  auto d = parseDsn(requireEnv(variable));
  if (!d.ok()) {
    ADD_FAILURE() << variable << " does not parse: " << d.error().message;
    return Dsn{};
  }
  return *d;
}

std::optional<Connection> openRoot() {
  auto c = Connection::open(dsnFrom("MYSQL_DOCTOR_ROOT_DSN"));
  if (!c.ok()) {
    ADD_FAILURE() << "cannot connect as the administrator: " << c.error().message;
    return std::nullopt;
  }
  if (!c->queryValue("SET SESSION TRANSACTION READ WRITE").ok()) return std::nullopt;
  return std::move(*c);
}

bool rootExec(Connection& root, const std::string& sql) {
  auto r = root.queryValue(sql);
  EXPECT_TRUE(r.ok()) << r.error().message << " in: " << sql.substr(0, 200);
  return r.ok();
}

std::optional<Connection> openReader() {
  std::optional<Connection> c;
  connectOrFail(c, "MYSQL_DSN");
  return c;
}

std::optional<Connection> openAdmin() {
  std::optional<Connection> c;
  connectOrFail(c, "MYSQL_ADMIN_DSN");
  return c;
}

void adminExec(const std::string& sql) {
  auto admin = openAdmin();
  if (!admin) return;
  // The client layer's sessions are read-only; setup needs a writable one.
  auto rw = admin->queryValue("SET SESSION TRANSACTION READ WRITE");
  ASSERT_TRUE(rw.ok()) << rw.error().message;
  auto r = admin->queryValue(sql);
  ASSERT_TRUE(r.ok()) << r.error().message << " in: " << sql;
}

void ensureTestTables() {
  static std::once_flag once;
  std::call_once(once, [] {
    auto admin = openAdmin();
    if (!admin) return;
    ASSERT_TRUE(admin->queryValue("SET SESSION TRANSACTION READ WRITE").ok());
    // Another test process may be creating them: a named lock serialises the check and the setup.
    ASSERT_TRUE(admin->queryValue("SELECT GET_LOCK('mcpdb_mytest_fixture', 30)").ok());
    ASSERT_TRUE(
        admin->queryValue(std::string("CREATE TABLE IF NOT EXISTS ") + kVersionTable + " (v INT)")
            .ok());
    auto v = admin->queryValue(std::string("SELECT MAX(v) FROM ") + kVersionTable);
    ASSERT_TRUE(v.ok());
    if (*v != std::to_string(kFixtureVersion)) {
      for (const char* sql : kSetup) {
        auto r = admin->queryValue(sql);
        ASSERT_TRUE(r.ok()) << r.error().message << " in: " << sql;
      }
      ASSERT_TRUE(admin->queryValue(std::string("DELETE FROM ") + kVersionTable).ok());
      ASSERT_TRUE(admin
                      ->queryValue(std::string("INSERT INTO ") + kVersionTable + " VALUES (" +
                                   std::to_string(kFixtureVersion) + ")")
                      .ok());
    }
    ASSERT_TRUE(admin->queryValue("SELECT RELEASE_LOCK('mcpdb_mytest_fixture')").ok());
  });
}

}  // namespace mcpdb::mysql::itest
