// The privilege self-check against the real roles: the serving role passes every check; the
// deliberately over-privileged role is reported exactly; and for every write path doctor knows,
// a throwaway role that has exactly that path is reported naming it, proved able to use it, and
// the printed fix, applied as printed, removes both the finding and the ability.
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <mutex>
#include <random>
#include <sstream>

#include "engines/postgres/pool.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

using Sev = engines::Finding::Severity;

std::map<std::string, engines::Finding> byCheck(const std::vector<engines::Finding>& findings) {
  std::map<std::string, engines::Finding> out;
  for (const auto& f : findings) out[f.check] = f;
  return out;
}

std::string describe(const std::vector<engines::Finding>& findings) {
  std::string out;
  for (const auto& f : findings) {
    if (f.severity == Sev::Ok) continue;
    out += "\n  " + f.check + ": " + f.message + (f.fix.empty() ? "" : "\n    fix: " + f.fix);
  }
  return out.empty() ? " (all ok)" : out;
}

bool allOk(const std::vector<engines::Finding>& findings) {
  for (const auto& f : findings) {
    if (f.severity != Sev::Ok) return false;
  }
  return !findings.empty();
}

const std::vector<std::string> kAllChecks = {"pg.connect",           "pg.superuser",
                                             "pg.role_attributes",   "pg.write_roles",
                                             "pg.table_write",       "pg.sequence_write",
                                             "pg.schema_create",     "pg.database_create",
                                             "pg.database_temp",     "pg.other_databases",
                                             "pg.large_objects",     "pg.remote_access",
                                             "pg.security_definer",  "pg.ownership",
                                             "pg.session_read_only", "pg.role_read_only_default"};

TEST(PostgresSelfCheck, ReaderRoleHasNoFindings) {
  auto rt = makeRuntime("version: 1\n");
  const auto findings = rt->selfCheck();
  std::vector<std::string> checks;
  for (const auto& f : findings) {
    checks.push_back(f.check);
    EXPECT_EQ(f.severity, Sev::Ok) << f.check << ": " << f.message << "\n  fix: " << f.fix;
  }
  EXPECT_EQ(checks, kAllChecks);
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
  EXPECT_EQ(f["pg.write_roles"].fix, "REVOKE pg_write_all_data FROM mcp_overpriv;");
  EXPECT_EQ(f["pg.table_write"].severity, Sev::Violation);
  // Which five tables are named depends on what other tests have created meanwhile.
  EXPECT_NE(
      f["pg.table_write"].message.find(" (INSERT, UPDATE, DELETE through role pg_write_all_data)"),
      std::string::npos)
      << f["pg.table_write"].message;
  EXPECT_NE(f["pg.table_write"].fix.find("REVOKE pg_write_all_data FROM mcp_overpriv;"),
            std::string::npos)
      << f["pg.table_write"].fix;
  EXPECT_EQ(f["pg.schema_create"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.database_create"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.database_temp"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.large_objects"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.ownership"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.session_read_only"].severity, Sev::Ok);
  EXPECT_EQ(f["pg.role_read_only_default"].severity, Sev::Warning);
  EXPECT_EQ(f.count("pg.read_server_files"), 0U);
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

// --- Every write path, one throwaway role each ---------------------------------------------

// In the SQL below, {r} is the throwaway role, {s} its schema (owned by mcp_admin, holding table
// {s}.t), {db} the database and {dsn} the role's own connection string.
struct WritePath {
  std::string name;
  std::string grant;     // run as the superuser: gives the role exactly this path
  std::string check;     // the finding that must report it
  std::string mentions;  // ... naming this
  std::string proof;     // run as the role: succeeds with the path, fails once fixed ("" = none)
  std::string fix_has = {};  // the fix must contain this (e.g. the membership it revokes)
  Sev severity = Sev::Violation;
  std::string cleanup = {};  // run as the superuser after the test (before the role is dropped)
};

void PrintTo(const WritePath& p, std::ostream* os) {
  *os << p.name;
}

std::string substitute(std::string sql, const std::map<std::string, std::string>& vars) {
  for (const auto& [key, value] : vars) {
    for (std::size_t at = sql.find(key); at != std::string::npos; at = sql.find(key, at)) {
      sql.replace(at, key.size(), value);
      at += value.size();
    }
  }
  return sql;
}

std::string randomHex() {
  std::random_device rd;
  std::uniform_int_distribution<int> d(0, 15);
  std::string s;
  for (int i = 0; i < 24; ++i) s += "0123456789abcdef"[d(rd)];
  return s;
}

// Runs `sql` on a fresh connection of `dsn`; the server's error message, empty on success.
std::string execAs(const std::string& dsn, const std::string& sql) {
  PgConnPtr c(PQconnectdb(dsn.c_str()));
  if (PQstatus(c.get()) != CONNECTION_OK) return PQerrorMessage(c.get());
  PgResultPtr r(PQexec(c.get(), sql.c_str()));
  const auto status = PQresultStatus(r.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return "";
  return PQresultErrorMessage(r.get());
}

// Drops schema `role`, what `role` and every role named `role`_* own, and the roles.
std::string dropThrowaway(const std::string& role) {
  const std::string others = adminQuery(
                                 "SELECT string_agg(quote_ident(rolname), ', ') FROM "
                                 "pg_roles WHERE rolname LIKE '" +
                                 role + "\\_%'")
                                 .value_or("");
  const std::string all = others.empty() ? role : role + ", " + others;
  return superuserExec("DROP SCHEMA IF EXISTS " + role + " CASCADE; DROP OWNED BY " + all +
                       " CASCADE; DROP ROLE " + all);
}

// Throwaway roles left by a test process that died (they are named after its pid).
void dropStaleThrowaways() {
  const std::string names = adminQuery(
                                "SELECT string_agg(rolname, ' ') FROM pg_roles WHERE "
                                "rolname ~ '^mcpdb_sc_[0-9]+_[0-9]+$'")
                                .value_or("");
  std::istringstream in(names);
  for (std::string role; in >> role;) {
    const long pid = std::stol(role.substr(std::string("mcpdb_sc_").size()));
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) (void)dropThrowaway(role);
  }
}

// A role like the reader (it can log in, read, and defaults to read-only) and a schema of its
// own, created as the superuser and dropped after the test with every role named {r}_*.
class ThrowawayRole : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::once_flag stale;
    std::call_once(stale, dropStaleThrowaways);
    static std::atomic<int> counter{0};
    role_ = "mcpdb_sc_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    password_ = randomHex();
    vars_ = {{"{r}", role_},
             {"{s}", role_},
             {"{db}", adminQuery("SELECT current_database()").value_or("mcpdemo")},
             {"{dsn}", dsnFor(role_, password_)}};
    const std::string err = superuserExec(substitute(
        "CREATE ROLE {r} LOGIN PASSWORD '" + password_ +
            "'; ALTER ROLE {r} SET default_transaction_read_only = on; "
            "GRANT CONNECT ON DATABASE {db} TO {r}; GRANT USAGE ON SCHEMA pgtest TO {r}; "
            "CREATE SCHEMA {s} AUTHORIZATION mcp_admin; CREATE TABLE {s}.t (x int); "
            "ALTER TABLE {s}.t OWNER TO mcp_admin; GRANT USAGE ON SCHEMA {s} TO {r}; "
            "GRANT SELECT ON {s}.t TO {r}",
        vars_));
    ASSERT_EQ(err, "") << "creating the throwaway role failed";
    created_ = true;
  }

  void TearDown() override {
    if (!created_) return;
    if (const std::string sql = cleanup(); !sql.empty()) {
      EXPECT_EQ(superuserExec(substitute(sql, vars_)), "") << "cleanup: " << sql;
    }
    // Every role the case created is named {r}_something.
    EXPECT_EQ(dropThrowaway(role_), "") << "dropping the throwaway roles";
  }

  std::vector<engines::Finding> check() {
    auto rt = makeRuntime("version: 1\n", envWithDsn(dsnFor(role_, password_)));
    return rt->selfCheck();
  }

  virtual std::string cleanup() const { return ""; }

  std::string role_, password_;
  std::map<std::string, std::string> vars_;
  bool created_ = false;
};

class PostgresWritePath : public ThrowawayRole, public ::testing::WithParamInterface<WritePath> {
 protected:
  std::string cleanup() const override { return GetParam().cleanup; }
};

using PostgresSelfCheckRole = ThrowawayRole;

TEST_P(PostgresWritePath, IsFoundAndItsFixRemovesIt) {
  const WritePath& p = GetParam();
  const std::string dsn = dsnFor(role_, password_);
  const std::string proof = substitute(p.proof, vars_);
  // A role like the reader passes (this also proves the cluster was provisioned hardened).
  const auto before = check();
  ASSERT_TRUE(allOk(before)) << "a fresh read-only role must pass:" << describe(before);
  if (!proof.empty()) {
    EXPECT_NE(execAs(dsn, proof), "") << "the role could already: " << proof;
  }

  ASSERT_EQ(superuserExec(substitute(p.grant, vars_)), "") << "grant: " << p.grant;
  if (!proof.empty()) {
    EXPECT_EQ(execAs(dsn, proof), "") << "the path is real: " << proof;
  }

  auto found = byCheck(check());
  ASSERT_TRUE(found.count(p.check)) << p.check << " missing";
  const engines::Finding f = found[p.check];
  EXPECT_EQ(f.severity, p.severity) << f.message;
  EXPECT_NE(f.message.find(substitute(p.mentions, vars_)), std::string::npos)
      << "expected '" << substitute(p.mentions, vars_) << "' in: " << f.message;
  ASSERT_FALSE(f.fix.empty());
  if (!p.fix_has.empty()) {
    EXPECT_NE(f.fix.find(substitute(p.fix_has, vars_)), std::string::npos) << f.fix;
  }

  // The fix exactly as printed.
  ASSERT_EQ(superuserExec(f.fix), "") << "the fix does not run: " << f.fix;
  const auto after = check();
  EXPECT_TRUE(allOk(after)) << "after the fix " << f.fix << ":" << describe(after);
  if (!proof.empty()) {
    EXPECT_NE(execAs(dsn, proof), "") << "still possible: " << proof;
  }
}

// Statements that stay inside a transaction the proof rolls back (nextval aside).
const std::string kRw = "BEGIN READ WRITE; ";
const std::string kRo = "BEGIN READ ONLY; ";
const std::string kEnd = "; ROLLBACK";

std::vector<WritePath> writePaths() {
  return {
      {"superuser", "ALTER ROLE {r} SUPERUSER", "pg.superuser", "role {r} is a superuser",
       kRw + "CREATE TABLE {s}.p (i int)" + kEnd},
      {"superuser_membership", "CREATE ROLE {r}_su SUPERUSER NOLOGIN; GRANT {r}_su TO {r}",
       "pg.superuser", "belongs to superuser role {r}_su",
       kRw + "SET LOCAL ROLE {r}_su; CREATE TABLE {s}.p (i int)" + kEnd, "REVOKE {r}_su FROM {r};"},
      {"createrole", "ALTER ROLE {r} CREATEROLE", "pg.role_attributes", "has CREATEROLE",
       kRw + "CREATE ROLE {r}_p" + kEnd},
      {"createdb", "ALTER ROLE {r} CREATEDB", "pg.role_attributes", "has CREATEDB", ""},
      // A replication slot survives a READ ONLY transaction's rollback; not created here.
      {"replication", "ALTER ROLE {r} REPLICATION", "pg.role_attributes", "has REPLICATION", ""},
      {"attribute_through_membership", "CREATE ROLE {r}_cr CREATEROLE NOLOGIN; GRANT {r}_cr TO {r}",
       "pg.role_attributes", "belongs to role {r}_cr, which has CREATEROLE",
       kRw + "SET LOCAL ROLE {r}_cr; CREATE ROLE {r}_p" + kEnd, "REVOKE {r}_cr FROM {r};"},
      {"pg_write_all_data", "GRANT pg_write_all_data TO {r}", "pg.write_roles",
       "member of pg_write_all_data", kRw + "INSERT INTO {s}.t VALUES (1)" + kEnd},
      // COPY TO a file or program is not stopped by a READ ONLY transaction.
      {"pg_write_server_files", "GRANT pg_write_server_files TO {r}", "pg.write_roles",
       "member of pg_write_server_files", kRo + "COPY (SELECT 1) TO '/dev/null'" + kEnd},
      {"pg_execute_server_program", "GRANT pg_execute_server_program TO {r}", "pg.write_roles",
       "member of pg_execute_server_program",
       kRo + "COPY (SELECT 1) TO PROGRAM 'cat >/dev/null'" + kEnd},
      {"pg_signal_backend", "GRANT pg_signal_backend TO {r}", "pg.write_roles",
       "member of pg_signal_backend", ""},
      {"write_role_inherited",
       "CREATE ROLE {r}_mid NOLOGIN; GRANT pg_write_all_data TO {r}_mid; GRANT {r}_mid TO {r}",
       "pg.write_roles", "pg_write_all_data (through {r}_mid)",
       kRw + "INSERT INTO {s}.t VALUES (1)" + kEnd, "REVOKE {r}_mid FROM {r};"},
      {"table_insert", "GRANT INSERT ON {s}.t TO {r}", "pg.table_write", "{s}.t (INSERT)",
       kRw + "INSERT INTO {s}.t VALUES (1)" + kEnd,
       "REVOKE INSERT, UPDATE, DELETE, TRUNCATE, "
       "TRIGGER ON TABLE {s}.t FROM {r};"},
      {"table_delete_truncate", "GRANT DELETE, TRUNCATE ON {s}.t TO {r}", "pg.table_write",
       "{s}.t (DELETE, TRUNCATE)", kRw + "TRUNCATE {s}.t" + kEnd},
      {"table_trigger", "GRANT TRIGGER ON {s}.t TO {r}", "pg.table_write", "{s}.t (TRIGGER)", ""},
      {"column_update", "GRANT UPDATE (x) ON {s}.t TO {r}", "pg.table_write",
       "{s}.t (column UPDATE)", kRw + "UPDATE {s}.t SET x = 1" + kEnd},
      {"table_via_parent_role",
       "CREATE ROLE {r}_w NOLOGIN; GRANT INSERT ON {s}.t TO {r}_w; GRANT {r}_w TO {r}",
       "pg.table_write", "{s}.t (INSERT through role {r}_w)",
       kRw + "INSERT INTO {s}.t VALUES (1)" + kEnd, "REVOKE {r}_w FROM {r};"},
      // Without INHERIT the privilege is not the role's own, but SET ROLE reaches it.
      {"table_via_noinherit_chain",
       "CREATE ROLE {r}_w NOLOGIN; CREATE ROLE {r}_mid NOLOGIN NOINHERIT; "
       "GRANT USAGE ON SCHEMA {s} TO {r}_w; GRANT UPDATE ON {s}.t TO {r}_w; GRANT {r}_w TO "
       "{r}_mid; "
       "GRANT {r}_mid TO {r}; "
       "ALTER ROLE {r} NOINHERIT",
       "pg.table_write", "{s}.t (UPDATE through role {r}_w)",
       kRw + "SET LOCAL ROLE {r}_w; UPDATE {s}.t SET x = 1" + kEnd, "REVOKE {r}_mid FROM {r};"},
      {"sequence_usage",
       "CREATE SEQUENCE {s}.q; ALTER SEQUENCE {s}.q OWNER TO mcp_admin; "
       "GRANT USAGE ON SEQUENCE {s}.q TO {r}",
       "pg.sequence_write", "{s}.q (USAGE)", kRw + "SELECT nextval('{s}.q')" + kEnd},
      {"sequence_update",
       "CREATE SEQUENCE {s}.q; ALTER SEQUENCE {s}.q OWNER TO mcp_admin; "
       "GRANT UPDATE ON SEQUENCE {s}.q TO {r}",
       "pg.sequence_write", "{s}.q (UPDATE)", kRw + "SELECT setval('{s}.q', 5)" + kEnd},
      {"schema_create", "GRANT CREATE ON SCHEMA {s} TO {r}", "pg.schema_create", "{s}",
       kRw + "CREATE TABLE {s}.p (i int)" + kEnd},
      {"database_create", "GRANT CREATE ON DATABASE {db} TO {r}", "pg.database_create", "{db}",
       kRw + "CREATE SCHEMA {r}_p" + kEnd},
      {"database_temp", "GRANT TEMPORARY ON DATABASE {db} TO {r}", "pg.database_temp", "{db}",
       kRw + "CREATE TEMP TABLE p (i int)" + kEnd},
      {"other_database", "GRANT CONNECT ON DATABASE postgres TO {r}", "pg.other_databases",
       "postgres", "", "REVOKE CONNECT ON DATABASE postgres FROM {r};", Sev::Inconclusive},
      // The large-object functions write inside a READ ONLY transaction.
      {"lo_creat", "GRANT EXECUTE ON FUNCTION pg_catalog.lo_creat(integer) TO {r}",
       "pg.large_objects", "pg_catalog.lo_creat(integer)",
       kRo + "SELECT pg_catalog.lo_creat(-1)" + kEnd,
       "REVOKE EXECUTE ON FUNCTION pg_catalog.lo_creat(integer) FROM {r};"},
      {"lo_from_bytea", "GRANT EXECUTE ON FUNCTION pg_catalog.lo_from_bytea(oid, bytea) TO {r}",
       "pg.large_objects", "pg_catalog.lo_from_bytea(oid, bytea)",
       kRo + "SELECT pg_catalog.lo_from_bytea(0, '\\x00')" + kEnd},
      {"large_object_update",
       "CREATE ROLE {r}_lo NOLOGIN; "
       "DO $$DECLARE n oid := pg_catalog.lo_create(0); BEGIN "
       "EXECUTE format('ALTER LARGE OBJECT %s OWNER TO {r}_lo', n); "
       "EXECUTE format('GRANT UPDATE ON LARGE OBJECT %s TO {r}', n); END$$",
       "pg.large_objects", "large object ", ""},
      // Extensions are created with PUBLIC's EXECUTE revoked in the same transaction, so that no
      // other test's role ever sees it.
      {"dblink",
       "BEGIN; CREATE EXTENSION dblink SCHEMA {s}; "
       "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA {s} FROM PUBLIC; "
       "GRANT EXECUTE ON FUNCTION {s}.dblink_connect(text) TO {r}; COMMIT",
       "pg.remote_access", "{s}.dblink_connect(text)",
       kRo + "SELECT {s}.dblink_connect($d${dsn}$d$)" + kEnd},
      {"postgres_fdw_function",
       "BEGIN; CREATE EXTENSION postgres_fdw SCHEMA {s}; "
       "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA {s} FROM PUBLIC; "
       "GRANT EXECUTE ON FUNCTION {s}.postgres_fdw_disconnect_all() TO {r}; COMMIT",
       "pg.remote_access", "{s}.postgres_fdw_disconnect_all()", ""},
      // A wrapper without handler is enough to hold servers and user mappings.
      {"foreign_server",
       "CREATE FOREIGN DATA WRAPPER {r}_fdw; CREATE SERVER {r}_srv FOREIGN DATA WRAPPER {r}_fdw; "
       "GRANT USAGE ON FOREIGN SERVER {r}_srv TO {r}",
       "pg.remote_access", "foreign server {r}_srv",
       kRw + "CREATE USER MAPPING FOR {r} SERVER {r}_srv" + kEnd,
       "REVOKE USAGE ON FOREIGN SERVER {r}_srv FROM {r};", Sev::Violation,
       "DROP FOREIGN DATA WRAPPER IF EXISTS {r}_fdw CASCADE"},
      {"foreign_data_wrapper",
       "CREATE FOREIGN DATA WRAPPER {r}_fdw; GRANT USAGE ON FOREIGN DATA WRAPPER {r}_fdw TO {r}",
       "pg.remote_access", "foreign-data wrapper {r}_fdw",
       kRw + "CREATE SERVER {r}_s2 FOREIGN DATA WRAPPER {r}_fdw" + kEnd,
       "REVOKE USAGE ON FOREIGN DATA WRAPPER {r}_fdw FROM {r};", Sev::Violation,
       "DROP FOREIGN DATA WRAPPER IF EXISTS {r}_fdw CASCADE"},
      {"security_definer",
       "CREATE FUNCTION {s}.sd() RETURNS void LANGUAGE sql SECURITY DEFINER "
       "AS 'INSERT INTO {s}.t VALUES (1)'; ALTER FUNCTION {s}.sd() OWNER TO mcp_admin; "
       "REVOKE EXECUTE ON FUNCTION {s}.sd() FROM PUBLIC; GRANT EXECUTE ON FUNCTION {s}.sd() TO {r}",
       "pg.security_definer", "{s}.sd()", kRw + "SELECT {s}.sd()" + kEnd,
       "REVOKE EXECUTE ON FUNCTION {s}.sd() FROM {r};"},
      {"owns_table", "CREATE TABLE {s}.own (i int); ALTER TABLE {s}.own OWNER TO {r}",
       "pg.ownership", "table {s}.own", kRw + "INSERT INTO {s}.own VALUES (1)" + kEnd,
       "ALTER TABLE {s}.own OWNER TO mcp_admin;"},
      {"owns_function",
       "CREATE FUNCTION {s}.f() RETURNS int LANGUAGE sql AS 'SELECT 1'; "
       "ALTER FUNCTION {s}.f() OWNER TO {r}",
       "pg.ownership", "function {s}.f()", kRw + "ALTER FUNCTION {s}.f() COST 7" + kEnd},
      {"owns_schema", "CREATE SCHEMA {r}_own AUTHORIZATION {r}", "pg.ownership", "schema {r}_own",
       kRw + "CREATE TABLE {r}_own.p (i int)" + kEnd, "ALTER SCHEMA {r}_own OWNER TO mcp_admin;",
       Sev::Violation, "DROP SCHEMA IF EXISTS {r}_own CASCADE"},
      {"owns_large_object",
       "DO $$DECLARE n oid := pg_catalog.lo_create(0); BEGIN "
       "EXECUTE format('ALTER LARGE OBJECT %s OWNER TO {r}', n); "
       "EXECUTE format('COMMENT ON LARGE OBJECT %s IS %L', n, '{r}'); END$$",
       "pg.ownership", "large object ", "", "OWNER TO mcp_admin;", Sev::Violation,
       "SELECT pg_catalog.lo_unlink(d.objoid) FROM pg_description d WHERE d.classoid = "
       "'pg_largeobject'::regclass AND d.description = '{r}'"},
      {"owns_through_membership",
       "CREATE ROLE {r}_o NOLOGIN; CREATE TABLE {s}.own (i int); "
       "ALTER TABLE {s}.own OWNER TO {r}_o; GRANT {r}_o TO {r}",
       "pg.ownership", "table {s}.own (owned by {r}_o)",
       kRw + "INSERT INTO {s}.own VALUES (1)" + kEnd, "REVOKE {r}_o FROM {r};"},
  };
}

INSTANTIATE_TEST_SUITE_P(EveryPath, PostgresWritePath, ::testing::ValuesIn(writePaths()),
                         [](const auto& param) { return param.param.name; });

// Not every SECURITY DEFINER function is a write path: one whose owner cannot write is fine.
TEST_F(PostgresSelfCheckRole, SecurityDefinerOfAnOwnerThatCannotWriteIsNotAPath) {
  ASSERT_EQ(superuserExec(
                substitute("CREATE ROLE {r}_ro NOLOGIN; GRANT USAGE ON SCHEMA {s} TO {r}_ro; "
                           "CREATE FUNCTION {s}.sd() RETURNS int LANGUAGE sql SECURITY DEFINER AS "
                           "'SELECT 1'; ALTER FUNCTION {s}.sd() OWNER TO {r}_ro; "
                           "REVOKE EXECUTE ON FUNCTION {s}.sd() FROM PUBLIC; "
                           "GRANT EXECUTE ON FUNCTION {s}.sd() TO {r}",
                           vars_)),
            "");
  auto f = byCheck(check());
  EXPECT_EQ(f["pg.security_definer"].severity, Sev::Ok) << f["pg.security_definer"].message;
}

TEST_F(PostgresSelfCheckRole, BypassRlsIsAWarningNotAWritePath) {
  ASSERT_EQ(superuserExec(substitute("ALTER ROLE {r} BYPASSRLS", vars_)), "");
  auto f = byCheck(check());
  EXPECT_EQ(f["pg.role_attributes"].severity, Sev::Warning) << f["pg.role_attributes"].message;
  EXPECT_EQ(f["pg.role_attributes"].fix, substitute("ALTER ROLE {r} NOBYPASSRLS;", vars_));
}

// More objects than a message names: five, then "...", and one statement for all of them.
TEST_F(PostgresSelfCheckRole, ManyObjectsAreNamedFiveAtATime) {
  ASSERT_EQ(superuserExec(substitute(
                "CREATE TABLE {s}.a (i int); CREATE TABLE {s}.b (i int); CREATE TABLE {s}.c "
                "(i int); CREATE TABLE {s}.d (i int); CREATE TABLE {s}.e (i int); "
                "ALTER TABLE {s}.a OWNER TO mcp_admin; ALTER TABLE {s}.b OWNER TO mcp_admin; "
                "ALTER TABLE {s}.c OWNER TO mcp_admin; ALTER TABLE {s}.d OWNER TO mcp_admin; "
                "ALTER TABLE {s}.e OWNER TO mcp_admin; "
                "GRANT INSERT ON ALL TABLES IN SCHEMA {s} TO {r}",
                vars_)),
            "");
  auto f = byCheck(check())["pg.table_write"];
  EXPECT_EQ(f.severity, Sev::Violation);
  EXPECT_NE(f.message.find(substitute("can write 6 table(s): {s}.a (INSERT), ", vars_)),
            std::string::npos)
      << f.message;
  EXPECT_EQ(f.message.substr(f.message.size() - 5), ", ...") << f.message;
  EXPECT_EQ(f.fix,
            substitute("REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER ON ALL TABLES IN SCHEMA "
                       "{s} FROM {r};",
                       vars_));
  ASSERT_EQ(superuserExec(f.fix), "");
  EXPECT_EQ(byCheck(check())["pg.table_write"].severity, Sev::Ok);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
