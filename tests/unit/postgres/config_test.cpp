// The `postgres:` section: golden bad configs with exact messages, the built-in default, and what
// a good section yields.
#include <gtest/gtest.h>

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

TEST(PostgresConfig, AbsentSectionHasNoTools) {
  auto p = parse("version: 1\n");
  ASSERT_TRUE(p.errors.empty());
  EXPECT_FALSE(p.section.present);
  EXPECT_TRUE(p.section.tools.empty());
  EXPECT_FALSE(p.section.search.enabled);
}

}  // namespace
}  // namespace mcpdb::postgres
