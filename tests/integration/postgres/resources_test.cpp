// Schema resources of the Postgres engine on the real server: the demo tools' parameters and
// result columns as PostgreSQL describes them, nothing run, nothing beyond the allowlist, no row
// value; a statement the read-only proof refuses is refused here exactly as its call is; the
// cached description is made again with the proof.
#include <gtest/gtest.h>
#include <unistd.h>

#include <stop_token>

#include "config/config.hpp"
#include "engines/postgres/module.hpp"
#include "engines/postgres/resources.hpp"
#include "integration/postgres/fixture.hpp"

namespace mcpdb::postgres::itest {
namespace {

// Objects of this file's own schema, made by the admin role once per version (serialised by an
// advisory lock, as proof_test does). Nothing is executable by PUBLIC.
constexpr const char* kSetupSql = R"sql(
SET client_min_messages = warning;
BEGIN;
SELECT pg_advisory_xact_lock(74302);
DROP SCHEMA IF EXISTS restest CASCADE;
CREATE SCHEMA restest;
CREATE TYPE restest.mood AS ENUM ('calm', 'stormy');
CREATE TABLE restest.moods (m restest.mood, n numeric(6, 2), at timestamptz, raw bytea, doc jsonb);
INSERT INTO restest.moods VALUES ('stormy', 12.5, '2024-05-06 07:08:09+00', '\x01', '{"secret": "row-value-7431"}');
CREATE FUNCTION restest.makes_lo() RETURNS oid LANGUAGE sql AS 'SELECT lo_creat(-1)';
CREATE VIEW restest.v_lo AS SELECT 1 AS id, restest.makes_lo() AS o;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA restest FROM PUBLIC;
GRANT USAGE ON SCHEMA restest TO mcp_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA restest TO mcp_reader;
COMMENT ON SCHEMA restest IS 'v1';
COMMIT;
)sql";

void setUpObjects() {
  ensureTestSchema();
  if (adminQuery("SELECT pg_catalog.obj_description(oid, 'pg_namespace') FROM "
                 "pg_catalog.pg_namespace WHERE nspname = 'restest'")
          .value_or("") == "v1") {
    return;
  }
  (void)adminQuery(kSetupSql);
  ASSERT_EQ(adminQuery("SELECT pg_catalog.obj_description(oid, 'pg_namespace') FROM "
                       "pg_catalog.pg_namespace WHERE nspname = 'restest'")
                .value_or(""),
            "v1");
}

Result<Json> readResource(const protocol::ToolRegistry& reg, const std::string& uri,
                          std::stop_token stop = {}) {
  const protocol::Resource* r = reg.findResource(uri);
  if (r == nullptr) return makeError(Code::NotFound, "no resource " + uri);
  protocol::CallContext ctx;
  ctx.stop = std::move(stop);
  ctx.deadline = Clock::now() + std::chrono::seconds(20);
  return r->read(ctx);
}

// Row values of the pgtest copy of the demo data: no description may contain any of them.
const char* const kRowValues[] = {"doc-a",
                                  "doc-d",
                                  "Indexes and query plans.",
                                  "Least privilege",
                                  "Pods and deployments",
                                  "2024-01-10",
                                  "infrastructure",
                                  "performance",
                                  "fake-4@test"};

class DemoResources : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = makeRuntime(defaultSectionOnTestSchema());
    ASSERT_TRUE(registerResources(reg_, rt_).ok());
  }
  Json read(const std::string& tool) {
    auto r = readResource(reg_, toolResourceUri(tool));
    EXPECT_TRUE(r.ok()) << tool << ": " << (r.ok() ? "" : r.error().message);
    if (!r.ok()) return Json();
    const std::string text = r->dump();
    for (const char* v : kRowValues)
      EXPECT_EQ(text.find(v), std::string::npos) << tool << ": " << v;
    return *r;
  }
  std::shared_ptr<Runtime> rt_;
  protocol::ToolRegistry reg_;
};

TEST_F(DemoResources, OneResourcePerToolAndNothingElse) {
  std::vector<std::string> uris;
  for (const auto& r : reg_.resources()) {
    uris.push_back(r->uri);
    EXPECT_EQ(r->tools, std::vector<std::string>{r->name});
    EXPECT_EQ(r->engine, "postgres");
  }
  EXPECT_EQ(uris,
            (std::vector<std::string>{"mcpdb://postgres/tools/list_document_categories",
                                      "mcpdb://postgres/tools/get_document",
                                      "mcpdb://postgres/tools/list_recent_documents",
                                      "mcpdb://postgres/tools/search_documents_by_tag",
                                      "mcpdb://postgres/tools/list_documents_published_between",
                                      "mcpdb://postgres/tools/semantic_search_documents"}));
  ASSERT_EQ(reg_.templates().size(), 1U);
  EXPECT_EQ(reg_.templates()[0].uri_template, "mcpdb://postgres/tools/{name}");
  // No table, schema or catalog object has a resource, however it is spelled.
  for (const char* uri :
       {"mcpdb://postgres/tools/documents", "mcpdb://postgres/tables/documents",
        "mcpdb://postgres/tools/pgtest.documents", "mcpdb://postgres/tools/pg_catalog.pg_class",
        "mcpdb://postgres/tables/pgtest.items"}) {
    EXPECT_EQ(reg_.findResource(uri), nullptr) << uri;
  }
}

TEST_F(DemoResources, GetDocument) {
  EXPECT_EQ(read("get_document"), Json::parse(R"({
    "engine": "postgres", "tool": "get_document", "result_key": "rows",
    "parameters": [{"name": "id", "position": 1, "required": true, "json_type": "string",
                    "pg_type": "text", "description": "The document id, e.g. doc-01.",
                    "maxLength": 64, "pattern": "^[A-Za-z0-9_.-]+$"}],
    "columns": [{"name": "id", "pg_type": "text", "json_type": "string"},
                {"name": "title", "pg_type": "text", "json_type": "string"},
                {"name": "body", "pg_type": "text", "json_type": "string"},
                {"name": "category", "pg_type": "text", "json_type": "string"},
                {"name": "tags", "pg_type": "text[]", "json_type": "array"},
                {"name": "published", "pg_type": "date", "json_type": "string"}],
    "limits": {"max_rows": 100, "max_bytes": 262144, "timeout_ms": 5000}})"));
}

TEST_F(DemoResources, ColumnsAreWhatTheCallReturns) {
  for (const auto& [tool, args] : std::vector<std::pair<std::string, Json>>{
           {"list_document_categories", Json::object()},
           {"get_document", {{"id", "doc-a"}}},
           {"list_recent_documents", Json::object()},
           {"search_documents_by_tag", {{"tag", "sql"}}},
           {"list_documents_published_between", {{"from", "2024-01-01"}, {"to", "2024-12-31"}}}}) {
    SCOPED_TRACE(tool);
    const Json d = read(tool);
    auto call_result = call(*rt_, tool, args);
    ASSERT_TRUE(call_result.ok()) << call_result.error().message;
    Json columns = Json::array();
    for (const Json& c : d["columns"])
      columns.push_back({{"name", c["name"]}, {"type", c["pg_type"]}});
    EXPECT_EQ(columns, call_result->structured["columns"]);
  }
  const Json cats = read("list_document_categories");
  EXPECT_EQ(cats["parameters"], Json::array());
  EXPECT_EQ(cats["columns"], Json::parse(R"([
    {"name": "category", "pg_type": "text", "json_type": "string"},
    {"name": "documents", "pg_type": "int8", "json_type": ["integer", "string"]},
    {"name": "latest_published", "pg_type": "date", "json_type": "string"}])"));
}

TEST_F(DemoResources, ParametersWithDefaultsAndDates) {
  const Json recent = read("list_recent_documents");
  EXPECT_EQ(recent["parameters"], Json::parse(R"([
    {"name": "category", "position": 1, "required": false, "json_type": "string", "pg_type": "text",
     "description": "Only documents of this category (see list_document_categories); omit for all.",
     "maxLength": 64},
    {"name": "limit", "position": 2, "required": false, "json_type": "integer", "pg_type": "int8",
     "description": "How many documents to return.", "minimum": 1, "maximum": 50, "default": 10}])"));
  const Json between = read("list_documents_published_between");
  ASSERT_EQ(between["parameters"].size(), 2U);
  EXPECT_EQ(between["parameters"][0]["pg_type"], "date");
  EXPECT_EQ(between["parameters"][0]["json_type"], "string");
  EXPECT_EQ(between["parameters"][0]["format"], "date");
  EXPECT_EQ(between["parameters"][1]["name"], "to");
}

TEST_F(DemoResources, SemanticSearch) {
  const Json d = read("semantic_search_documents");
  EXPECT_EQ(d["result_key"], "results");
  EXPECT_EQ(d["semantic_search"],
            Json::parse(R"({"distance": "cosine", "k_default": 5, "k_max": 20})"));
  EXPECT_EQ(d["columns"], Json::parse(R"([
    {"name": "id", "pg_type": "text", "json_type": "string"},
    {"name": "title", "pg_type": "text", "json_type": "string"},
    {"name": "text", "pg_type": "text", "json_type": "string"},
    {"name": "metadata", "pg_type": "jsonb", "json_type": "any"},
    {"name": "score", "pg_type": "float8", "json_type": ["number", "string"]}])"));
  ASSERT_EQ(d["parameters"].size(), 4U);
  // The query text is embedded: the statement receives a vector (the type PostgreSQL inferred).
  EXPECT_EQ(d["parameters"][0]["name"], "query");
  EXPECT_EQ(d["parameters"][0]["pg_type"], "vector");
  EXPECT_EQ(d["parameters"][0]["embedded"], true);
  EXPECT_EQ(d["parameters"][1]["name"], "k");
  EXPECT_EQ(d["parameters"][1]["pg_type"], "int8");
  EXPECT_EQ(d["parameters"][2]["name"], "category");
  EXPECT_EQ(d["parameters"][2]["column"], "category");
  EXPECT_EQ(d["parameters"][3]["match"], "contains");
}

TEST_F(DemoResources, DeterministicAndCached) {
  const Json first = read("get_document");
  const Json second = read("get_document");
  EXPECT_EQ(first.dump(), second.dump());
}

TEST_F(DemoResources, HonoursStop) {
  std::stop_source stop;
  stop.request_stop();
  auto r = readResource(reg_, toolResourceUri("search_documents_by_tag"), stop.get_token());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Cancelled);
}

TEST(PostgresResources, DescribingDoesNotRunTheStatement) {
  auto rt = makeRuntime(R"(
postgres:
  tools:
    boom:
      description: Divides by zero on every row.
      statement: SELECT id / 0 AS boom FROM pgtest.items WHERE id > $1
      parameters:
        - {name: after, type: integer, description: Lower bound.}
)");
  protocol::ToolRegistry reg;
  ASSERT_TRUE(registerResources(reg, rt).ok());
  auto called = call(*rt, "boom", Json{{"after", 0}});
  ASSERT_FALSE(called.ok()) << "the statement should fail when it runs";
  auto d = readResource(reg, toolResourceUri("boom"));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)["columns"],
            Json::parse(R"([{"name": "boom", "pg_type": "int4", "json_type": "integer"}])"));
  EXPECT_EQ((*d)["parameters"][0]["pg_type"], "int8");
}

TEST(PostgresResources, AStatementTheProofRefusesIsNotDescribed) {
  setUpObjects();
  auto rt = makeRuntime(R"(
postgres:
  tools:
    good:
      description: Reads.
      statement: SELECT m FROM restest.moods
    bad:
      description: Creates a large object through a view.
      statement: SELECT o FROM restest.v_lo
)");
  protocol::ToolRegistry reg;
  ASSERT_TRUE(registerResources(reg, rt).ok());
  auto called = call(*rt, "bad", Json::object());
  ASSERT_FALSE(called.ok());
  for (int attempt = 0; attempt < 2; ++attempt) {  // the refusal is never cached away
    auto d = readResource(reg, toolResourceUri("bad"));
    ASSERT_FALSE(d.ok()) << d->dump();
    EXPECT_EQ(d.error().code, called.error().code);
    EXPECT_EQ(d.error().message, called.error().message);
    EXPECT_NE(d.error().message.find("refused by the read-only proof"), std::string::npos)
        << d.error().message;
  }
  // The proof's verdict is per statement: the other tool is described.
  auto good = readResource(reg, toolResourceUri("good"));
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ((*good)["columns"][0]["pg_type"], "restest.mood");
}

TEST(PostgresResources, TypeNamesFromTheCatalogAndNoRowValue) {
  setUpObjects();
  auto rt = makeRuntime(R"(
postgres:
  tools:
    moods:
      description: Moods.
      statement: SELECT m, n, at, raw, doc FROM restest.moods WHERE m::text = $1
      parameters:
        - {name: mood, type: string, description: A mood., enum: [calm, stormy]}
)");
  protocol::ToolRegistry reg;
  ASSERT_TRUE(registerResources(reg, rt).ok());
  auto d = readResource(reg, toolResourceUri("moods"));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)["columns"], Json::parse(R"([
    {"name": "m", "pg_type": "restest.mood", "json_type": "string"},
    {"name": "n", "pg_type": "numeric", "json_type": "string"},
    {"name": "at", "pg_type": "timestamptz", "json_type": "string"},
    {"name": "raw", "pg_type": "bytea", "json_type": "string"},
    {"name": "doc", "pg_type": "jsonb", "json_type": "any"}])"))
      << d->dump(2);
  EXPECT_EQ((*d)["parameters"][0]["enum"], Json::parse(R"(["calm", "stormy"])"));
  const std::string text = d->dump();
  for (const char* v : {"row-value-7431", "12.5", "2024-05-06", "secret"}) {
    EXPECT_EQ(text.find(v), std::string::npos) << v;
  }
}

TEST(PostgresResources, ANewProofMakesTheDescriptionAgain) {
  setUpObjects();
  const std::string table = "restest.shape_" + std::to_string(::getpid());
  (void)adminQuery("SET client_min_messages = warning; DROP TABLE IF EXISTS " + table);
  (void)adminQuery("CREATE TABLE " + table + " (a int)");
  (void)adminQuery("GRANT SELECT ON " + table + " TO mcp_reader");
  auto rt = makeRuntime(
      "postgres:\n  tools:\n    shape:\n      description: Everything.\n"
      "      statement: SELECT * FROM " +
      table + "\n");
  protocol::ToolRegistry reg;
  ASSERT_TRUE(registerResources(reg, rt).ok());
  auto names = [&]() {
    std::vector<std::string> out;
    auto d = readResource(reg, toolResourceUri("shape"));
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    if (d.ok()) {
      for (const Json& c : (*d)["columns"]) out.push_back(c["name"].get<std::string>());
    }
    return out;
  };
  EXPECT_EQ(names(), (std::vector<std::string>{"a"}));
  (void)adminQuery("ALTER TABLE " + table + " ADD COLUMN b text");
  // Kept while the proof it was made under is current...
  EXPECT_EQ(names(), (std::vector<std::string>{"a"}));
  // ...and made again under the next one.
  ASSERT_TRUE(rt->proveNow().ok());
  EXPECT_EQ(names(), (std::vector<std::string>{"a", "b"}));
  (void)adminQuery("DROP TABLE IF EXISTS " + table);
}

TEST(PostgresResources, TheModuleRegistersThemWithoutConnecting) {
  // A server that does not exist: registering must not try it; reading fails cleanly.
  config::Diagnostics diag("itest.yaml");
  config::Config cfg =
      config::parseConfig(defaultSectionOnTestSchema(), "itest.yaml", {"postgres"}, diag);
  ASSERT_TRUE(diag.ok());
  auto module = makeModule();
  module->configure(config::Node(cfg.root, "", diag).child("postgres"), cfg.limits);
  ASSERT_TRUE(diag.ok());
  const Env env = Env::fromMap(
      {{"POSTGRES_DSN", "host=127.0.0.1 port=1 dbname=none user=none connect_timeout=1"}});
  engines::EngineServices services;
  services.env = &env;
  services.defaults = cfg.limits;
  protocol::ToolRegistry reg;
  ASSERT_TRUE(module->registerTools(reg, services).ok());
  EXPECT_EQ(reg.resources().size(), reg.size());
  for (const auto& t : reg.tools()) EXPECT_NE(reg.findResource(toolResourceUri(t->name)), nullptr);
  auto d = readResource(reg, toolResourceUri("get_document"));
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Code::Unavailable) << d.error().message;
  EXPECT_EQ(d.error().message.find("port=1"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::postgres::itest
