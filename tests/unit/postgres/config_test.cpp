// The `postgres:` section: golden bad configs with exact messages, the built-in default, and what
// a good section yields.
#include <gtest/gtest.h>

#include <set>

#include "support/section_coverage.hpp"
#include "engines/postgres/module.hpp"
#include "engines/postgres/guard/guard.hpp"
#include "support/golden.hpp"
#include "unit/postgres/test_util.hpp"

namespace mcpdb::postgres {
namespace {

namespace fs = std::filesystem;
using test::parse;

const fs::path kConfigs = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/postgres/configs";

TEST(PostgresConfig, GoldenBadConfigs) {
  const int cases = testsupport::checkGoldenBadConfigs(
      kConfigs, ".errors",
      [](const std::string& text, const std::string& name) { return parse(text, name).errors; });
  EXPECT_GE(cases, 10);
}

TEST(PostgresConfig, DefaultSectionIsValidAndServesTheDemo) {
  auto p = parse("version: 1\n" + std::string(defaultSectionText()), "default");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  std::vector<std::string> names;
  for (const auto& t : p.section.tools) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"list_document_categories", "get_document",
                                             "list_recent_documents", "search_documents_by_tag",
                                             "list_documents_published_between"}));
  ASSERT_TRUE(p.section.search.enabled);
  EXPECT_EQ(p.section.search.tool, "semantic_search_documents");
  EXPECT_EQ(p.section.search.table, (std::vector<std::string>{"demo", "documents"}));
  // Every template, including the generated search statement, passes the guardrail.
  for (const auto& t : p.section.tools)
    EXPECT_TRUE(guard::checkTemplate(t.statement).allowed) << t.name;
  EXPECT_TRUE(guard::checkTemplate(p.section.search.statement).allowed);
  EXPECT_TRUE(guard::checkTemplate(p.section.search.model_statement).allowed);
}

TEST(PostgresConfig, ParsesParametersAndLimits) {
  auto p = parse(R"(
limits: {max_rows: 100, max_bytes: 100000, timeout_ms: 5000}
postgres:
  pool: {size: 2, connect_timeout_ms: 1500, statement_timeout_ms: 4000, prepared_statements: false}
  tools:
    find:
      description: Finds things.
      statement: SELECT * FROM t WHERE a = $1 AND b = ANY($2) AND ($3::date IS NULL OR c > $3)
      parameters:
        - {name: a, type: string, description: A, max_length: 10, pattern: "^[a-z]+$", enum: [x, y]}
        - {name: b, type: array, description: B, items: {type: integer, min: 1, max: 9}, max_items: 3}
        - {name: c, type: date, description: C, required: false}
      limits: {max_rows: 7, timeout_ms: 100}
)");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.section.tools.size(), 1U);
  const QueryTool& t = p.section.tools[0];
  EXPECT_EQ(t.title, "Find");
  ASSERT_EQ(t.parameters.size(), 3U);
  EXPECT_EQ(t.parameters[0].scalar.max_length, 10U);
  EXPECT_EQ(t.parameters[0].scalar.enum_values, (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(t.parameters[1].is_array);
  EXPECT_EQ(t.parameters[1].scalar.type, ScalarType::Integer);
  EXPECT_EQ(*t.parameters[1].scalar.max_int, 9);
  EXPECT_EQ(t.parameters[1].max_items, 3U);
  EXPECT_FALSE(t.parameters[2].required);
  EXPECT_EQ(t.limits.max_rows, 7U);
  EXPECT_EQ(t.limits.max_bytes, 100000U);
  EXPECT_EQ(t.limits.timeout.count(), 100);
  EXPECT_EQ(p.section.pool.size, 2U);
  EXPECT_EQ(p.section.pool.connect_timeout.count(), 1500);
  EXPECT_EQ(p.section.pool.statement_timeout.count(), 4000);
  EXPECT_FALSE(p.section.pool.prepared_statements);
  EXPECT_TRUE(PoolSettings{}.prepared_statements) << "on unless the config turns it off";
}

TEST(PostgresConfig, SearchStatementQuotesConfiguredIdentifiersOnly) {
  auto p = parse(R"(
postgres:
  semantic_search:
    table: kb.chunks
    id_column: chunk_id
    text_column: content
    vector_column: emb
    metadata_columns: [source]
    distance: l2
    filters:
      - {name: source, column: source, type: string, description: S}
)");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  EXPECT_EQ(
      p.section.search.statement,
      "SELECT coalesce(\"chunk_id\"::text, '') AS id, coalesce(\"content\"::text, '') AS text, "
      "jsonb_build_object('source', \"source\") AS metadata, (-(\"emb\" <-> $1::vector))::float8 "
      "AS score "
      "FROM \"kb\".\"chunks\" WHERE \"emb\" IS NOT NULL AND ($3 IS NULL OR \"source\" = $3) "
      "ORDER BY \"emb\" <-> $1::vector LIMIT $2");
  EXPECT_TRUE(p.section.search.model_statement.empty());
}

// Every key name of `yaml`, nested ones included, but not the names of a name map's entries (a
// tool's name) nor parameters' keys (the SQL engines' shared kit, described by one line of the
// tool's `parameters`).
void collectKeys(const YAML::Node& yaml, std::set<std::string>& keys, bool skip, bool names) {
  if (yaml.IsSequence()) {
    for (const auto& e : yaml) collectKeys(e, keys, skip, false);
    return;
  }
  if (!yaml.IsMap()) return;
  for (const auto& kv : yaml) {
    const std::string key = kv.first.as<std::string>();
    if (!skip && !names) keys.insert(key);
    collectKeys(kv.second, keys, skip || key == "parameters",
                !names && (key == "tools" || key == "sources"));
  }
}

TEST(PostgresConfig, TheDeclarationDescribesTheBuiltInSection) {
  const YAML::Node doc = YAML::Load(std::string(defaultSectionText()));
  const Json schema = settingsSection().jsonSchema();
  testsupport::expectSchemaCovers(doc["postgres"], schema, "postgres");
  const Json pool = schema["properties"]["pool"];
  EXPECT_EQ(pool["properties"]["size"]["maximum"], 256);
  EXPECT_EQ(pool["properties"]["sslmode"]["enum"].size(), 6U);
  const Json search = schema["properties"]["semantic_search"];
  EXPECT_EQ(search["required"], Json::array({"table"}));
  EXPECT_EQ(search["properties"]["distance"]["enum"],
            Json::array({"cosine", "l2", "inner_product"}));
  // The reference names every key of the built-in section, and every key the parser accepts.
  std::string text;
  for (const auto& l : settingsSection().reference()) text += l + "\n";
  std::set<std::string> keys;
  collectKeys(doc["postgres"], keys, false, false);
  for (const char* k : {"search_path",
                        "proof",
                        "trusted_extensions",
                        "allow_functions",
                        "interval_s",
                        "function",
                        "reason",
                        "statement_timeout_ms",
                        "idle_in_transaction_timeout_ms",
                        "iam_auth",
                        "sslmode",
                        "sslrootcert",
                        "prepared_statements",
                        "jit",
                        "limits",
                        "fence",
                        "sources",
                        "dsn_env",
                        "source",
                        "op",
                        "min",
                        "max",
                        "min_length",
                        "pattern",
                        "enum"}) {
    keys.insert(k);
  }
  for (const auto& key : keys) {
    if (key == "postgres" || key == "pool" || key == "tools" || key == "semantic_search") continue;
    EXPECT_NE(text.find("`" + key + "`"), std::string::npos) << key;
  }
  for (const char* top : {"`pool`", "`tools`", "`semantic_search`"})
    EXPECT_NE(text.find(top), std::string::npos) << top;
}

TEST(PostgresConfig, SourcesAndTheToolsThatReadThem) {
  auto p = parse(R"(
postgres:
  pool: {sslrootcert: /etc/ca.pem}
  sources:
    main: {dsn_env: POSTGRES_DSN}
    reports: {dsn_env: REPORTS_PG_DSN, iam_auth: true, sslmode: verify-full}
  tools:
    a: {source: main, description: d, statement: SELECT 1}
    b: {source: reports, description: d, statement: SELECT 2}
  semantic_search: {source: reports, table: docs}
)");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.section.sources.size(), 2U);
  EXPECT_FALSE(p.section.sources[0].implicit);
  EXPECT_EQ(p.section.sources[1].dsn_env, "REPORTS_PG_DSN");
  const Settings reports = settingsFor(p.section, p.section.sources[1]);
  ASSERT_EQ(reports.tools.size(), 1U);
  EXPECT_EQ(reports.tools[0].name, "b");
  EXPECT_TRUE(reports.search.enabled);
  EXPECT_EQ(reports.sources.size(), 1U);
  const Settings main = settingsFor(p.section, p.section.sources[0]);
  ASSERT_EQ(main.tools.size(), 1U);
  EXPECT_EQ(main.tools[0].name, "a");
  EXPECT_FALSE(main.search.enabled) << "the search tool reads reports only";

  // Without `sources:`, one implicit source `default` reads POSTGRES_DSN as before.
  auto plain = parse("postgres:\n  tools:\n    a: {description: d, statement: SELECT 1}\n");
  ASSERT_TRUE(plain.errors.empty()) << plain.errors[0];
  ASSERT_EQ(plain.section.sources.size(), 1U);
  EXPECT_EQ(plain.section.sources[0].name, "default");
  EXPECT_EQ(plain.section.sources[0].dsn_env, "POSTGRES_DSN");
  EXPECT_TRUE(plain.section.sources[0].implicit);
  EXPECT_EQ(settingsFor(plain.section, plain.section.sources[0]).tools.size(), 1U);
}

TEST(PostgresConfig, AbsentSectionHasNoTools) {
  auto p = parse("version: 1\n");
  ASSERT_TRUE(p.errors.empty());
  EXPECT_FALSE(p.section.present);
  EXPECT_TRUE(p.section.tools.empty());
  EXPECT_FALSE(p.section.search.enabled);
}

}  // namespace
}  // namespace mcpdb::postgres
