#include "integration/postgres/fixture.hpp"

#include <cmath>
#include <cstdlib>
#include <mutex>

#include "config/config.hpp"
#include "engines/postgres/module.hpp"
#include "engines/postgres/config.hpp"

namespace mcpdb::postgres::itest {
namespace {

using ConnPtr = Owned<PGconn, PQfinish>;
using ResPtr = Owned<PGresult, PQclear>;

const char* kSetupSql = R"sql(
CREATE SCHEMA IF NOT EXISTS pgtest;
DROP TABLE IF EXISTS pgtest.types, pgtest.items, pgtest.documents, pgtest.embedding_model, pgtest.scratch, pgtest.fixture_version;
CREATE TABLE pgtest.types (
  i2 int2, i4 int4, i8_small int8, i8_big int8, num numeric, f4 float4, f8 float8, f8_nan float8, b bool,
  t text, vc varchar(10), d date, ts timestamp, tstz timestamptz, iv interval, u uuid, ba bytea,
  j json, jb jsonb, ta text[], ia int4[], ia2 int4[], v vector(3), n text);
INSERT INTO pgtest.types VALUES (
  -7, 2147483647, 9007199254740991, 9223372036854775807, 12345678901234567890.000000000001, 1.5, 0.1,
  'NaN', true, 'héllo "q"', 'v', '2024-02-29', '2024-01-15 10:20:30.123456',
  '2024-01-15 10:20:30+02', '1 day 2 hours', '123e4567-e89b-12d3-a456-426614174000', '\x00ff4869',
  '{"a": [1, 2]}', '{"b": {"c": null}}', ARRAY['x', 'y z', NULL, 'q"t'], ARRAY[1, 2, 3],
  ARRAY[[1, 2], [3, 4]], '[0.5, -1, 2.25]', NULL);
CREATE TABLE pgtest.items (id int PRIMARY KEY, name text NOT NULL, tag text NOT NULL, created date NOT NULL,
  u uuid NOT NULL, flag bool NOT NULL, score float8 NOT NULL, tags text[] NOT NULL, pad text NOT NULL);
INSERT INTO pgtest.items
  SELECT g, 'item-' || g, CASE WHEN g % 2 = 0 THEN 'even' ELSE 'odd' END, DATE '2024-01-01' + g,
         md5(g::text)::uuid, g % 3 = 0, g / 10.0, ARRAY['t' || (g % 5), 'all'], repeat('x', 200)
  FROM generate_series(1, 500) g;
INSERT INTO pgtest.items VALUES (1001, 'x'' OR ''1''=''1', 'special', '2030-01-01',
  '00000000-0000-0000-0000-000000000001', false, -1, ARRAY['a"b', 'c,d}'], '');
CREATE TABLE pgtest.documents (id text PRIMARY KEY, title text, body text, category text, tags text[],
  published date, embedding vector(4));
INSERT INTO pgtest.documents VALUES
  ('doc-a', 'Databases', 'Indexes and query plans.', 'databases', ARRAY['sql', 'performance'], '2024-01-10', '[1,0,0,0]'),
  ('doc-b', 'Kubernetes', 'Pods and deployments.', 'infrastructure', ARRAY['kubernetes'], '2024-03-05', '[0,1,0,0]'),
  ('doc-c', 'Security', 'Least privilege for roles.', 'security', ARRAY['sql', 'security'], '2024-02-20', '[0,0,1,0]'),
  ('doc-d', 'Mixed', 'Databases on Kubernetes.', 'databases', ARRAY['kubernetes', 'sql'], '2024-04-01', '[0.7,0.7,0,0]');
CREATE INDEX ON pgtest.documents USING hnsw (embedding vector_cosine_ops);
CREATE TABLE pgtest.embedding_model (model_id text, dimension int);
INSERT INTO pgtest.embedding_model VALUES ('fake-4@test', 4);
CREATE TABLE pgtest.scratch (x int);
CREATE TABLE pgtest.fixture_version (v int);
INSERT INTO pgtest.fixture_version VALUES (3);
GRANT USAGE ON SCHEMA pgtest TO mcp_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA pgtest TO mcp_reader;
)sql";

constexpr int kFixtureVersion = 3;

ConnPtr adminConnection() {
  const std::string dsn = requireEnv("MCPDB_PG_ADMIN_DSN");
  ConnPtr c(PQconnectdb(dsn.c_str()));
  if (PQstatus(c.get()) != CONNECTION_OK) {
    ADD_FAILURE()
        << "cannot connect as the admin role (MCPDB_PG_ADMIN_DSN); is the server running?";
  }
  return c;
}

}  // namespace

std::string requireEnv(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') {
    ADD_FAILURE() << name
                  << " is not set: start the local servers and export their environment first:\n"
                     "  bash scripts/servers.sh start && eval \"$(bash scripts/servers.sh env)\"";
    return "host=127.0.0.1 port=1 dbname=missing connect_timeout=1";
  }
  return v;
}

Env envWithDsn(const std::string& dsn) {
  return Env([dsn](std::string_view name) -> std::optional<std::string> {
    if (name == "POSTGRES_DSN") return dsn;
    if (name == "MCPDB_PG_IAM_AUTH") return std::nullopt;
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  });
}

void ensureTestSchema() {
  static std::once_flag once;
  std::call_once(once, [] {
    ConnPtr c = adminConnection();
    if (PQstatus(c.get()) != CONNECTION_OK) return;
    // Parallel test processes: one sets up, the others wait on the lock and then see the version.
    ResPtr begin(PQexec(c.get(), "BEGIN; SELECT pg_advisory_xact_lock(74201)"));
    ResPtr v(PQexec(c.get(), "SELECT v FROM pgtest.fixture_version"));
    const bool current = PQresultStatus(v.get()) == PGRES_TUPLES_OK && PQntuples(v.get()) == 1 &&
                         std::atoi(PQgetvalue(v.get(), 0, 0)) == kFixtureVersion;
    if (!current) {
      PQclear(PQexec(c.get(), "ROLLBACK"));
      PQclear(PQexec(c.get(), "BEGIN; SELECT pg_advisory_xact_lock(74201)"));
      ResPtr r(PQexec(c.get(), kSetupSql));
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK &&
          PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
        ADD_FAILURE() << "test schema setup failed: " << PQresultErrorMessage(r.get());
      }
    }
    ResPtr end(PQexec(c.get(), "COMMIT"));
  });
}

namespace {

std::optional<std::string> firstValue(PGconn* conn, const std::string& sql) {
  ResPtr r(PQexec(conn, sql.c_str()));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK)
      ADD_FAILURE() << "test query failed: " << PQresultErrorMessage(r.get());
    return std::nullopt;
  }
  if (PQntuples(r.get()) == 0 || PQgetisnull(r.get(), 0, 0)) return std::nullopt;
  return std::string(PQgetvalue(r.get(), 0, 0));
}

}  // namespace

std::optional<std::string> readerQuery(const std::string& sql) {
  static std::mutex mu;
  static ConnPtr conn;
  std::lock_guard<std::mutex> lock(mu);
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    const std::string dsn = requireEnv("POSTGRES_DSN");
    conn.reset(PQconnectdb(dsn.c_str()));
    if (PQstatus(conn.get()) != CONNECTION_OK) {
      ADD_FAILURE() << "cannot connect as the reader role (POSTGRES_DSN)";
      return std::nullopt;
    }
  }
  return firstValue(conn.get(), sql);
}

std::optional<std::string> adminQuery(const std::string& sql) {
  ConnPtr c = adminConnection();
  return firstValue(c.get(), sql);
}

namespace {

// The superuser's connection, to `database` when one is named (later keywords override what the
// DSN says: libpq's expand_dbname rule).
ConnPtr superuserConnection(const std::string& database) {
  const std::string dsn = requireEnv("MCPDB_PG_SUPERUSER_DSN");
  const char* keys[] = {"dbname", database.empty() ? nullptr : "dbname", nullptr};
  const char* values[] = {dsn.c_str(), database.c_str(), nullptr};
  return ConnPtr(PQconnectdbParams(keys, values, 1));
}

}  // namespace

std::string superuserExec(const std::string& sql, const std::string& database) {
  ConnPtr c = superuserConnection(database);
  if (PQstatus(c.get()) != CONNECTION_OK) {
    return "cannot connect as the superuser (MCPDB_PG_SUPERUSER_DSN): " +
           std::string(PQerrorMessage(c.get()));
  }
  // One at a time across test processes: concurrent GRANTs and DROP OWNED on the same shared
  // object (the database) fail with "tuple concurrently updated". The lock goes with the
  // connection.
  PQclear(PQexec(c.get(), "SET client_min_messages = error; SELECT pg_advisory_lock(74202)"));
  ResPtr r(PQexec(c.get(), sql.c_str()));
  const auto status = PQresultStatus(r.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return "";
  return PQresultErrorMessage(r.get());
}

std::optional<std::string> superuserQuery(const std::string& sql) {
  ConnPtr c = superuserConnection("");
  return firstValue(c.get(), sql);
}

std::string dsnFor(const std::string& user, const std::string& password) {
  const std::string base = requireEnv("POSTGRES_DSN");
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(base.c_str(), &err);
  if (opts == nullptr) {
    ADD_FAILURE() << "cannot parse POSTGRES_DSN: " << (err != nullptr ? err : "");
    PQfreemem(err);
    return base;
  }
  // Keyword values are single-quoted with \ and ' escaped (libpq's conninfo syntax).
  auto quoted = [](const std::string& v) {
    std::string out = "'";
    for (char ch : v) {
      if (ch == '\\' || ch == '\'') out += '\\';
      out += ch;
    }
    return out + "'";
  };
  std::string dsn;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    const std::string key = o->keyword;
    if (key == "user" || key == "password" || o->val == nullptr || *o->val == '\0') continue;
    dsn += key + "=" + quoted(o->val) + " ";
  }
  PQconninfoFree(opts);
  return dsn + "user=" + quoted(user) + " password=" + quoted(password);
}

std::shared_ptr<Runtime> makeRuntime(const std::string& yaml, const Env& env) {
  ensureTestSchema();
  config::Diagnostics diag("itest.yaml");
  config::Config cfg = config::parseConfig(yaml, "itest.yaml", {"postgres"}, diag);
  Settings section;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    section = parseSettings(root.child("postgres"), cfg.limits);
  }
  for (const auto& e : diag.errors()) ADD_FAILURE() << e;
  auto rt = std::make_shared<Runtime>(section, env);
  // As the server does at startup (the self-check), so that no test's first call pays for it; a
  // runtime that cannot reach the server fails here and again, with the same error, on its call.
  (void)rt->proveNow();
  return rt;
}

std::shared_ptr<Runtime> makeRuntime(const std::string& yaml) {
  return makeRuntime(yaml, envWithDsn(requireEnv("POSTGRES_DSN")));
}

Result<protocol::ToolOutput> call(Runtime& rt, const std::string& tool, const Json& args,
                                  std::stop_token stop, std::optional<Limits> limits,
                                  CallWaits* waits) {
  protocol::CallContext ctx;
  ctx.stop = std::move(stop);
  ctx.waits = waits;
  for (const auto& t : rt.section().tools) {
    if (t.name != tool) continue;
    ctx.limits = limits.value_or(t.limits);
    ctx.deadline = Clock::now() + ctx.limits.timeout;
    return rt.callQuery(t, args, ctx);
  }
  if (rt.section().search.enabled && rt.section().search.tool == tool) {
    ctx.limits = limits.value_or(rt.section().search.limits);
    ctx.deadline = Clock::now() + ctx.limits.timeout;
    return rt.callSearch(args, ctx, fakeEmbedder());
  }
  return makeError(Code::NotFound, "no such tool in the test config: " + tool);
}

Result<std::vector<embed::Vector>> FakeEmbedder::embed(std::span<const std::string> texts) const {
  std::vector<embed::Vector> out;
  for (const auto& t : texts) {
    embed::Vector v{0, 0, 0, 0};
    if (t.find("database") != std::string::npos) v[0] += 1;
    if (t.find("kubernetes") != std::string::npos) v[1] += 1;
    if (t.find("security") != std::string::npos) v[2] += 1;
    if (v == embed::Vector{0, 0, 0, 0}) v[3] = 1;
    float norm = 0;
    for (float x : v) norm += x * x;
    for (float& x : v) x /= std::sqrt(norm);
    out.push_back(v);
  }
  return out;
}

EmbedderFn fakeEmbedder(std::string id) {
  auto e = std::make_shared<FakeEmbedder>(std::move(id));
  return [e]() -> Result<std::shared_ptr<embed::Embedder>> {
    return std::shared_ptr<embed::Embedder>(e);
  };
}

std::string defaultSectionOnTestSchema() {
  std::string s(defaultSectionText());
  for (const std::string from : {"demo.documents", "demo.embedding_model"}) {
    const std::string to = "pgtest." + from.substr(5);
    for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
      s.replace(p, from.size(), to);
  }
  return "version: 1\n" + s;
}

}  // namespace mcpdb::postgres::itest
