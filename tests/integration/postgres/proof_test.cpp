// The read-only proof against the live catalog: a data-driven verdict file (proof/cases.test over
// the objects of proof/setup.sql), and the proof in the serving path (a refused tool is refused at
// call time, naming the object and the reason, while the other tools keep working).
#include <gtest/gtest.h>

#include <fstream>
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

void setUpObjects() {
  ensureTestSchema();
  using ConnPtr = Owned<PGconn, PQfinish>;
  using ResPtr = Owned<PGresult, PQclear>;
  ConnPtr c(PQconnectdb(requireEnv("MCPDB_PG_ADMIN_DSN").c_str()));
  ASSERT_EQ(PQstatus(c.get()), CONNECTION_OK);
  ResPtr r(PQexec(c.get(), readAll(kDir + "setup.sql").c_str()));
  ASSERT_EQ(PQresultStatus(r.get()), PGRES_COMMAND_OK) << PQerrorMessage(c.get());
  EXPECT_EQ(superuserExec(readAll(kDir + "setup_superuser.sql")), "");
}

proof::Settings testSettings() {
  proof::Settings s;
  s.search_path = {"pg_catalog", "public", "prooftest"};
  s.trusted_extensions = {"vector"};
  return s;
}

TEST(PostgresProof, VerdictFile) {
  setUpObjects();
  const auto cases = loadCases();
  ASSERT_GT(cases.size(), 30U);
  auto rt = makeRuntime("postgres:\n  pool: {size: 1}\n");
  auto catalog = [&](const Json& request) { return rt->catalogQuery(request); };
  std::vector<std::string> statements;
  for (const Case& c : cases) statements.push_back(c.sql);
  auto report = proof::prove(statements, testSettings(), catalog);
  ASSERT_TRUE(report.ok()) << report.error().message << " " << operatorText(report.error());
  int accepted = 0, refused = 0;
  // Nothing here is allowlisted: no statement needs its advisory locks released after it.
  EXPECT_TRUE(report->opaque.empty());
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
  std::printf("[proof] %d accepted, %d refused; %d round trips, %zu objects, %lld ms\n", accepted,
              refused, report->round_trips, report->objects,
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
  EXPECT_NE(bad.error().message.find("refused by the read-only proof: function "
                                     "pg_catalog.lo_creat(integer)"),
            std::string::npos)
      << bad.error().message;
  EXPECT_NE(bad.error().message.find("view prooftest.v_lo"), std::string::npos);
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
  // Code the proof did not judge: advisory locks are released after each call of it.
  auto proved = rt->latestProof();
  ASSERT_TRUE(proved.ok());
  EXPECT_TRUE((*proved)->opaque.contains("SELECT prooftest.plpg() AS one"));
  auto unlock = rt->requireProof("SELECT prooftest.plpg() AS one");
  ASSERT_TRUE(unlock.ok());
  EXPECT_TRUE(*unlock);
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
  ASSERT_TRUE(call(*rt, "pid", Json::object()).ok());
  EXPECT_NE(rt->latestProof()->get(), first->get()) << "the proof was not made again";
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
