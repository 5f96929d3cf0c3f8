// The read-only proof against the live catalog: a data-driven verdict file (proof/cases.test over
// the objects of proof/setup.sql), and the proof in the serving path (a refused tool is refused at
// call time, naming the object and the reason, while the other tools keep working).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <span>
#include <sstream>
#include <thread>

#include "engines/postgres/proof.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

const std::string kDir = std::string(MCPDB_SOURCE_DIR) + "/tests/integration/postgres/proof/";

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  int line = 0;
  std::string name, sql, expect;
};

std::vector<Case> loadCases() {
  std::vector<Case> out;
  std::istringstream in(readAll(kDir + "cases.test"));
  std::string line;
  int n = 0;
  enum { Between, Sql, Expect } state = Between;
  Case c;
  while (std::getline(in, line)) {
    ++n;
    if (state == Between) {
      if (line.rfind("# ", 0) == 0) {
        c = Case{n, line.substr(2), "", ""};
        state = Sql;
      }
    } else if (state == Sql) {
      if (line == "----") {
        state = Expect;
      } else {
        c.sql += (c.sql.empty() ? "" : "\n") + line;
      }
    } else {
      c.expect = line;
      out.push_back(c);
      state = Between;
    }
  }
  return out;
}

// Makes the objects of setup.sql once per version of that file: test processes running at the
// same time share them (dropping and making them again under another test's running proof made it
// fail). The schema's comment records which version of setup.sql made it; the check and the
// setup run under one session-level advisory lock.
void setUpObjects() {
  ensureTestSchema();
  using ConnPtr = Owned<PGconn, PQfinish>;
  using ResPtr = Owned<PGresult, PQclear>;
  ConnPtr c(PQconnectdb(requireEnv("MCPDB_PG_ADMIN_DSN").c_str()));
  ASSERT_EQ(PQstatus(c.get()), CONNECTION_OK);
  const std::string setup = readAll(kDir + "setup.sql");
  const std::string version = std::to_string(std::hash<std::string>{}(setup));
  ResPtr lock(PQexec(c.get(), "SELECT pg_advisory_lock(74301)"));
  ASSERT_EQ(PQresultStatus(lock.get()), PGRES_TUPLES_OK) << PQerrorMessage(c.get());
  ResPtr made(PQexec(c.get(),
                     "SELECT pg_catalog.obj_description(oid, 'pg_namespace') FROM "
                     "pg_catalog.pg_namespace WHERE nspname = 'prooftest'"));
  const bool current = PQresultStatus(made.get()) == PGRES_TUPLES_OK &&
                       PQntuples(made.get()) == 1 && version == PQgetvalue(made.get(), 0, 0);
  if (!current) {
    ResPtr r(
        PQexec(c.get(), (setup + "\nCOMMENT ON SCHEMA prooftest IS '" + version + "';").c_str()));
    ASSERT_EQ(PQresultStatus(r.get()), PGRES_COMMAND_OK) << PQerrorMessage(c.get());
  }
  PQclear(PQexec(c.get(), "SELECT pg_advisory_unlock(74301)"));
  EXPECT_EQ(superuserExec(readAll(kDir + "setup_superuser.sql")), "");
  // setup_ops.sql (an operator class needs the superuser), once per version of the file.
  const std::string ops = readAll(kDir + "setup_ops.sql");
  const std::string ops_version = std::to_string(std::hash<std::string>{}(ops));
  if (superuserQuery("SELECT pg_catalog.obj_description(oid, 'pg_namespace') FROM "
                     "pg_catalog.pg_namespace WHERE nspname = 'prooftest_ops'")
          .value_or("") != ops_version) {
    EXPECT_EQ(superuserExec(ops + "\nCOMMENT ON SCHEMA prooftest_ops IS '" + ops_version + "';"),
              "");
  }
}

// Session-level advisory locks left by the functions of issue 28's cases (setup.sql,
// setup_ops.sql) on any backend: each of them takes one whenever it runs.
std::string leftLocks() {
  return adminQuery(
             "SELECT count(*) FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND "
             "objid IN (2802801, 2802802)")
      .value_or("?");
}

// Polls `done` for up to 20 s (a background proof; no timing is asserted).
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

proof::Settings testSettings() {
  proof::Settings s;
  // prooftest_ops on the path: its `=` is then the one PostgreSQL picks for USING, IN, CASE,
  // NULLIF and IS DISTINCT FROM on its type (off the path, the built-in anyenum `=` would be).
  s.search_path = {"pg_catalog", "public", "prooftest", "prooftest_ops"};
  s.trusted_extensions = {"vector"};
  return s;
}

TEST(PostgresProof, VerdictFile) {
  setUpObjects();
  const auto cases = loadCases();
  ASSERT_GT(cases.size(), 30U);
  // The connections pin the same search_path the proof resolves names with (as a configured
  // runtime's do): PostgreSQL's analysis resolves the statement on them.
  auto rt = makeRuntime(
      "postgres:\n  pool: {size: 1}\n  search_path: [pg_catalog, public, prooftest, "
      "prooftest_ops]\n");
  auto catalog = [&](const Json& request) { return rt->catalogQuery(request); };
  auto analyze = [&](const std::string& sql) { return rt->analyzeStatement(sql); };
  std::vector<std::string> statements;
  for (const Case& c : cases) statements.push_back(c.sql);
  auto report = proof::prove(statements, testSettings(), catalog, analyze);
  ASSERT_TRUE(report.ok()) << report.error().message << " " << operatorText(report.error());
  int accepted = 0, refused = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE("cases.test:" + std::to_string(c.line) + " " + c.name);
    const auto& verdict = report->verdicts.at(c.sql);
    if (c.expect == "accept") {
      EXPECT_FALSE(verdict.has_value()) << verdict->message();
      ++accepted;
    } else {
      ASSERT_EQ(c.expect.rfind("refuse ", 0), 0U) << c.expect;
      ASSERT_TRUE(verdict.has_value()) << "accepted";
      EXPECT_NE(verdict->message().find(c.expect.substr(7)), std::string::npos)
          << verdict->message();
      ++refused;
    }
  }
  // PostgreSQL analyzed every statement the first net proved, and nothing either net judged ran
  // (preparing a statement can run a domain's check).
  EXPECT_EQ(report->analyses, accepted);
  EXPECT_EQ(report->analysed + report->unfit, accepted);
  EXPECT_EQ(leftLocks(), "0");
  std::printf(
      "[proof] %d accepted, %d refused; %d round trips, %d analyses (%zu objects only they "
      "named), %zu objects, %lld ms\n",
      accepted, refused, report->round_trips, report->analyses, report->unexpected, report->objects,
      static_cast<long long>(report->took.count() / 1000));
}

TEST(PostgresProof, RefusedToolIsRefusedAtCallTimeAndTheOthersRun) {
  setUpObjects();
  auto rt = makeRuntime(R"(
postgres:
  search_path: [pg_catalog, public, prooftest]
  tools:
    good:
      description: Reads.
      statement: SELECT prooftest.pure(id) AS p FROM prooftest.items ORDER BY id
    bad:
      description: Creates a large object through a view.
      statement: SELECT o FROM prooftest.v_lo
)");
  auto bad = call(*rt, "bad", Json::object());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Code::PermissionDenied);
  // The agent learns only that the proof refused; the operator's detail names what and why.
  EXPECT_NE(bad.error().message.find("refused by the read-only proof"), std::string::npos);
  for (const char* name : {"prooftest", "lo_creat", "v_lo"})
    EXPECT_EQ(bad.error().message.find(name), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().detail.find("function pg_catalog.lo_creat(integer)"), std::string::npos)
      << bad.error().detail;
  EXPECT_NE(bad.error().detail.find("view prooftest.v_lo"), std::string::npos);
  auto good = call(*rt, "good", Json::object());
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->structured["rows"], Json::parse(R"([{"p": 2}, {"p": 3}])"));
  const engines::Finding f = rt->proofFinding();
  EXPECT_EQ(f.severity, engines::Finding::Severity::Warning);
  EXPECT_NE(f.message.find("bad: function pg_catalog.lo_creat"), std::string::npos) << f.message;
  EXPECT_EQ(f.message.find("good:"), std::string::npos) << f.message;
  // The connection pins the configured search_path, pg_temp last.
  EXPECT_EQ(readerQuery("SELECT 1").value_or(""), "1");
}

// Issue 28 at call time: tools whose statements reach code only PostgreSQL's resolution names (a
// domain's check through arrays, composites and row types; a user type's operators supplied for
// USING, IN, DISTINCT, sorting and grouping; implicit and assignment casts) are refused, and
// nothing they reach ever ran: no advisory lock is left on any backend (each of those functions
// takes one). The ordinary reads beside them run.
TEST(PostgresProof, ImplicitCallsAreRefusedAndNeverRun) {
  setUpObjects();
  const std::pair<const char*, const char*> refused[] = {
      {"array_of_domain", "SELECT '{1}'::prooftest._ldom AS v"},
      {"composite", "SELECT '(2)'::prooftest.lcomp AS v"},
      {"row_literal", "SELECT '(2)'::prooftest.lrow AS v"},
      {"row_constructor", "SELECT ROW(3)::prooftest.lrow AS v"},
      {"populate", "SELECT a FROM jsonb_populate_record(NULL::prooftest.lrow, '{\"a\": 4}')"},
      {"domain_column", "SELECT d FROM prooftest.lcol"},
      {"using", "SELECT n FROM prooftest_ops.t1 JOIN prooftest_ops.t2 USING (k)"},
      {"natural", "SELECT n, m FROM prooftest_ops.t1 NATURAL JOIN prooftest_ops.t2"},
      {"in_subquery", "SELECT n FROM prooftest_ops.t1 WHERE k IN (SELECT k FROM prooftest_ops.t2)"},
      {"case_when", "SELECT CASE k WHEN 'a' THEN 1 END AS c FROM prooftest_ops.t1"},
      {"nullif", "SELECT NULLIF(k, 'a') AS v FROM prooftest_ops.t1"},
      {"distinct_from", "SELECT k IS DISTINCT FROM 'a' AS v FROM prooftest_ops.t1"},
      {"distinct", "SELECT DISTINCT k FROM prooftest_ops.t1"},
      {"group_by", "SELECT count(*) AS c FROM prooftest_ops.t1 GROUP BY k"},
      {"union",
       "SELECT k FROM (SELECT k FROM prooftest_ops.t1 UNION SELECT k FROM "
       "prooftest_ops.t2) u"},
      {"order_by", "SELECT n FROM prooftest_ops.t1 ORDER BY k"},
      {"implicit_cast", "SELECT prooftest_ops.takes_c(n) AS v FROM prooftest_ops.t1"},
      {"assignment_cast", "SELECT prooftest_ops.returns_d() AS v"},
  };
  const std::pair<const char*, const char*> accepted[] = {
      {"sizes",
       "SELECT pg_size_pretty(pg_total_relation_size('prooftest.items')) AS t, "
       "pg_relation_size('prooftest.items') AS r, pg_database_size(current_database()) "
       "AS d"},
      {"system", "SELECT count(*) AS c FROM prooftest.items TABLESAMPLE SYSTEM (50)"},
      {"bernoulli", "SELECT count(*) AS c FROM prooftest.items TABLESAMPLE BERNOULLI (50)"},
      {"text_equals", "SELECT id FROM prooftest.items WHERE owner = 'one'"},
  };
  std::string yaml =
      "postgres:\n  search_path: [pg_catalog, public, prooftest, prooftest_ops]\n  tools:\n";
  using Tools = std::span<const std::pair<const char*, const char*>>;
  for (const Tools list : {Tools(refused), Tools(accepted)}) {
    for (const auto& [name, sql] : list) {
      yaml += std::string("    ") + name +
              ":\n      description: Issue 28.\n      statement: >-\n        " + sql + "\n";
    }
  }
  auto rt = makeRuntime(yaml);
  for (const auto& [name, sql] : refused) {
    auto r = call(*rt, name, Json::object());
    ASSERT_FALSE(r.ok()) << name << " ran";
    EXPECT_EQ(r.error().code, Code::PermissionDenied) << name << ": " << operatorText(r.error());
    EXPECT_EQ(r.error().message.find("prooftest"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().detail.find("pg_try_advisory_lock"), std::string::npos)
        << name << ": " << r.error().detail;
  }
  for (const auto& [name, sql] : accepted) {
    auto r = call(*rt, name, Json::object());
    EXPECT_TRUE(r.ok()) << name << ": " << operatorText(r.error());
  }
  EXPECT_EQ(leftLocks(), "0");
}

TEST(PostgresProof, AnOperatorAllowlistedFunctionIsAccepted) {
  setUpObjects();
  auto rt = makeRuntime(R"(
postgres:
  search_path: [pg_catalog, public]
  proof:
    allow_functions:
      - function: prooftest.plpg
        reason: returns a constant; reviewed by the DBA
  tools:
    constant:
      description: A reviewed plpgsql function.
      statement: SELECT prooftest.plpg() AS one
)");
  auto r = call(*rt, "constant", Json::object());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["rows"], Json::parse(R"([{"one": 1}])"));
  EXPECT_TRUE(rt->requireProof("SELECT prooftest.plpg() AS one").ok());
}

TEST(PostgresProof, IsMadeAgainAfterANewConnection) {
  auto rt = makeRuntime(R"(
postgres:
  pool: {size: 1}
  tools:
    pid:
      description: The backend pid.
      statement: SELECT pg_backend_pid() AS pid
)");
  auto first = rt->latestProof();
  ASSERT_TRUE(first.ok());
  auto pid = call(*rt, "pid", Json::object());
  ASSERT_TRUE(pid.ok()) << pid.error().message;
  // The same connection, the same proof.
  ASSERT_TRUE(call(*rt, "pid", Json::object()).ok());
  EXPECT_EQ(rt->latestProof()->get(), first->get());
  // The backend goes away; the next call runs on a new connection (the server may be another one).
  readerQuery("SELECT pg_terminate_backend(" +
              std::to_string(pid->structured["rows"][0]["pid"].get<std::int64_t>()) + ")");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  auto again = call(*rt, "pid", Json::object());
  ASSERT_TRUE(again.ok()) << again.error().message;
  // The next call sees the new connection and has the proof made again, in the background: the
  // call does not wait for it.
  ASSERT_TRUE(call(*rt, "pid", Json::object()).ok());
  EXPECT_TRUE(eventually([&] { return rt->latestProof()->get() != first->get(); }))
      << "the proof was not made again";
}

// A catalog change after the proof reaches the verdict once the proof is made again (in the
// background, after a new connection), without any call waiting for it: a function that was
// harmless is redefined to create large objects, and the tool over it is then refused.
TEST(PostgresProof, ACatalogChangeReachesTheVerdictWhenTheProofIsMadeAgain) {
  ASSERT_EQ(superuserExec(R"(
SET client_min_messages = warning;
CREATE SCHEMA IF NOT EXISTS prooftest_flip;
CREATE OR REPLACE FUNCTION prooftest_flip.f() RETURNS oid LANGUAGE sql AS 'SELECT 0::oid';
GRANT USAGE ON SCHEMA prooftest_flip TO mcp_reader;
GRANT EXECUTE ON FUNCTION prooftest_flip.f() TO mcp_reader;
)"),
            "");
  auto rt = makeRuntime(R"(
postgres:
  pool: {size: 1}
  tools:
    flip:
      description: A function that changes under the proof.
      statement: SELECT prooftest_flip.f() AS o, pg_backend_pid() AS pid
)");
  auto before = call(*rt, "flip", Json::object());
  ASSERT_TRUE(before.ok()) << before.error().message;
  ASSERT_EQ(superuserExec("CREATE OR REPLACE FUNCTION prooftest_flip.f() RETURNS oid "
                          "LANGUAGE sql AS 'SELECT pg_catalog.lo_creat(-1)'"),
            "");
  readerQuery("SELECT pg_terminate_backend(" +
              std::to_string(before->structured["rows"][0]["pid"].get<std::int64_t>()) + ")");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  std::string message;
  EXPECT_TRUE(eventually([&] {
    auto r = call(*rt, "flip", Json::object());
    message = r.ok() ? "" : operatorText(r.error());
    return !r.ok() && r.error().code == Code::PermissionDenied &&
           message.find("refused by the read-only proof") != std::string::npos;
  })) << message;
  EXPECT_NE(message.find("pg_catalog.lo_creat(integer)"), std::string::npos) << message;
  EXPECT_NE(message.find("function prooftest_flip.f()"), std::string::npos) << message;
  EXPECT_EQ(superuserExec("DROP SCHEMA prooftest_flip CASCADE"), "");
}

// The real dblink extension, in a database of its own (an extension is installed once per
// database, and the doctor's tests install and drop dblink in the shared one), read by a role of
// its own (only it may connect there, so no other role's doctor check sees another database):
// reached through a SQL function, a view, or a C function that points at dblink's code under an
// innocent name, every statement is refused; a plain statement in the same database runs.
TEST(PostgresProof, RealDblinkIsRefusedWhereverItIsReached) {
  const std::string db = "mcpdb_proof_dblink";
  const std::string role = "mcpdb_proof_dblink_reader";
  const std::string password = "proof-dblink-test";
  ASSERT_EQ(superuserExec("DO $$BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '" +
                          role + "') THEN CREATE ROLE " + role + "; END IF; END$$; ALTER ROLE " +
                          role + " LOGIN PASSWORD '" + password + "'"),
            "");
  if (!superuserQuery("SELECT 1 FROM pg_database WHERE datname = '" + db + "'").has_value()) {
    // Closed to connections until PUBLIC's CONNECT is revoked: the doctor's tests, running
    // meanwhile, count only databases that allow connections.
    ASSERT_EQ(superuserExec("CREATE DATABASE " + db + " ALLOW_CONNECTIONS false"), "");
  }
  ASSERT_EQ(superuserExec("REVOKE ALL ON DATABASE " + db + " FROM PUBLIC; GRANT CONNECT ON " +
                          "DATABASE " + db + " TO " + role + "; ALTER DATABASE " + db +
                          " ALLOW_CONNECTIONS true"),
            "");
  ASSERT_EQ(
      superuserExec("SET client_min_messages = warning;"
                    "CREATE EXTENSION IF NOT EXISTS dblink SCHEMA public;"
                    "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA public FROM PUBLIC;"
                    "REVOKE CREATE ON SCHEMA public FROM PUBLIC;"
                    "CREATE SCHEMA IF NOT EXISTS t;"
                    "CREATE OR REPLACE FUNCTION t.remote_write() RETURNS text LANGUAGE sql "
                    "  AS $f$SELECT public.dblink_exec('dbname=mcpdemo', "
                    "'CREATE TABLE public.x ()')$f$;"
                    "CREATE OR REPLACE VIEW t.v AS SELECT public.dblink_connect('x') AS c;"
                    "CREATE OR REPLACE FUNCTION t.innocent(text, text) RETURNS text "
                    "  LANGUAGE c STRICT AS '$libdir/dblink', 'dblink_exec';"
                    "GRANT USAGE ON SCHEMA t TO " +
                        role +
                        ";"
                        "GRANT SELECT ON t.v TO " +
                        role +
                        ";"
                        "GRANT EXECUTE ON FUNCTION t.remote_write(), t.innocent(text, text) TO " +
                        role,
                    db),
      "");
  const std::string dsn = dsnFor(role, password) + " dbname=" + db;
  auto rt = makeRuntime(R"(
postgres:
  tools:
    through_function:
      description: Writes through dblink inside a SQL function.
      statement: SELECT t.remote_write() AS r
    through_view:
      description: Connects out through a view.
      statement: SELECT c FROM t.v
    renamed:
      description: dblink's code under another name.
      statement: SELECT t.innocent('dbname=mcpdemo', 'CREATE TABLE public.y ()') AS r
    plain:
      description: Reads nothing.
      statement: SELECT 1 AS one
)",
                        envWithDsn(dsn));
  const std::pair<const char*, const char*> refused[] = {
      {"through_function", "function public.dblink_exec(text, text) is on the denylist"},
      {"through_view", "function public.dblink_connect(text) is on the denylist"},
      {"renamed", "function t.innocent(text, text) is a C function outside pg_catalog"},
  };
  for (const auto& [tool, reason] : refused) {
    auto r = call(*rt, tool, Json::object());
    ASSERT_FALSE(r.ok()) << tool;
    EXPECT_EQ(r.error().code, Code::PermissionDenied) << tool;
    EXPECT_NE(r.error().detail.find(reason), std::string::npos)
        << tool << ": " << operatorText(r.error());
  }
  auto plain = call(*rt, "plain", Json::object());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->structured["rows"], Json::parse(R"([{"one": 1}])"));
  // Nothing was written through any of them.
  EXPECT_EQ(adminQuery("SELECT count(*) FROM pg_class WHERE relname IN ('x', 'y') AND "
                       "relnamespace = 'public'::regnamespace"),
            "0");
}

// Measures (does not assert on time): the startup proof for the demo's allowlist and for 500
// distinct statements. Run it in a release build for real figures.
TEST(PostgresProof, MeasuresTheStartupProof) {
  auto demo = makeRuntime(defaultSectionOnTestSchema());
  auto d = demo->proveNow();
  ASSERT_TRUE(d.ok()) << d.error().message;
  for (const auto& [sql, v] : (*d)->verdicts) EXPECT_FALSE(v.has_value()) << sql << v->message();
  std::printf("[proof] demo allowlist: %zu statements, %d round trips, %zu objects, %.1f ms\n",
              (*d)->verdicts.size(), (*d)->round_trips, (*d)->objects,
              static_cast<double>((*d)->took.count()) / 1000.0);
  std::string yaml = "postgres:\n  pool: {size: 1}\n  tools:\n";
  const char* shapes[] = {"lower(title)", "count(*) OVER ()", "length(body)", "upper(category)",
                          "coalesce(title, body)"};
  for (int i = 0; i < 500; ++i) {
    yaml += "    t" + std::to_string(i) +
            ":\n      description: Generated.\n      statement: " + "SELECT id, " + shapes[i % 5] +
            " AS v FROM pgtest.documents WHERE id > '" + std::to_string(i) + "' LIMIT 5\n";
  }
  auto many = makeRuntime(yaml);
  auto m = many->proveNow();
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ((*m)->verdicts.size(), 500U);
  std::printf("[proof] 500 statements: %d round trips, %zu objects, %.1f ms\n", (*m)->round_trips,
              (*m)->objects, static_cast<double>((*m)->took.count()) / 1000.0);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
