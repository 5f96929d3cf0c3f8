// Generated tool schemas: exact shape, within the validator's keyword subset, and enforcing what
// the config declares (the registry validates arguments against them before any handler runs).
#include <gtest/gtest.h>

#include "common/env.hpp"
#include "engines/engine.hpp"
#include "engines/postgres/module.hpp"
#include "engines/postgres/schema_gen.hpp"
#include "unit/postgres/test_util.hpp"
#include "protocol/schema.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::postgres {
namespace {

using test::parse;

TEST(PostgresSchema, InputSchemaOfEveryParameterType) {
  auto p = parse(R"(
postgres:
  tools:
    all_types:
      description: Every type.
      statement: SELECT $1, $2, $3, $4, $5, $6, $7, $8
      parameters:
        - {name: s, type: string, description: S, min_length: 1, max_length: 8, pattern: "^[a-z]+$"}
        - {name: i, type: integer, description: I, min: -5, max: 5, default: 3}
        - {name: f, type: float, description: F, min: 0.5}
        - {name: b, type: boolean, description: B, required: false}
        - {name: d, type: date, description: D}
        - {name: ts, type: timestamp, description: TS}
        - {name: u, type: uuid, description: U}
        - {name: tags, type: array, description: Tags, items: {type: string, enum: [a, b]}, min_items: 1, max_items: 2}
)");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  const Json s = inputSchema(p.section.tools[0]);
  const Json expected = Json::parse(R"({
    "type": "object", "additionalProperties": false,
    "required": ["s", "f", "d", "ts", "u", "tags"],
    "properties": {
      "s": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]+$", "description": "S"},
      "i": {"type": "integer", "minimum": -5, "maximum": 5, "default": 3, "description": "I"},
      "f": {"type": "number", "minimum": 0.5, "description": "F"},
      "b": {"type": "boolean", "description": "B"},
      "d": {"type": "string", "format": "date", "description": "D"},
      "ts": {"type": "string", "format": "date-time", "description": "TS"},
      "u": {"type": "string", "format": "uuid", "description": "U"},
      "tags": {"type": "array", "items": {"type": "string", "maxLength": 1024, "enum": ["a", "b"]},
               "minItems": 1, "maxItems": 2, "description": "Tags"}
    }})");
  EXPECT_EQ(s, expected) << s.dump(2);
  EXPECT_TRUE(protocol::validateSchemaSubset(s).ok());
  EXPECT_TRUE(protocol::validateSchemaSubset(queryOutputSchema()).ok());
}

TEST(PostgresSchema, SchemasRefuseWhatTheConfigForbids) {
  auto p = parse(R"(
postgres:
  tools:
    t:
      description: T.
      statement: SELECT $1, $2
      parameters:
        - {name: id, type: string, description: Id, max_length: 4}
        - {name: n, type: integer, description: N, min: 1, max: 10, default: 5}
)");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  const Json s = inputSchema(p.section.tools[0]);
  EXPECT_TRUE(protocol::validateJson(s, Json{{"id", "abcd"}}).ok());
  EXPECT_FALSE(protocol::validateJson(s, Json{{"id", "abcde"}}).ok());
  EXPECT_FALSE(protocol::validateJson(s, Json{{"id", "a"}, {"n", 11}}).ok());
  EXPECT_FALSE(protocol::validateJson(s, Json{{"id", "a"}, {"sql", "DROP TABLE t"}}).ok());
  EXPECT_FALSE(protocol::validateJson(s, Json::object()).ok());
}

TEST(PostgresSchema, SearchSchemas) {
  auto p = parse("version: 1\n" + std::string(defaultSectionText()));
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  const Json in = searchInputSchema(p.section.search);
  EXPECT_EQ(in["properties"]["k"]["maximum"], 20);
  EXPECT_EQ(in["properties"]["k"]["default"], 5);
  EXPECT_EQ(in["properties"]["query"]["maxLength"], 1000);
  EXPECT_TRUE(in["properties"].contains("category"));
  EXPECT_TRUE(in["properties"].contains("tag"));
  EXPECT_FALSE(in["properties"].contains("table"));  // identifiers never come from arguments
  EXPECT_FALSE(in["properties"].contains("column"));
  EXPECT_EQ(in["additionalProperties"], false);
  EXPECT_EQ(in["required"], Json::array({"query"}));
  EXPECT_TRUE(protocol::validateSchemaSubset(in).ok());
  EXPECT_TRUE(protocol::validateSchemaSubset(searchOutputSchema(p.section.search)).ok());
  EXPECT_FALSE(protocol::validateJson(in, Json{{"query", "x"}, {"k", 21}}).ok());
  EXPECT_FALSE(protocol::validateJson(in, Json{{"query", "x"}, {"table", "pg_authid"}}).ok());
}

TEST(PostgresModule, RegistersTheDefaultToolsWithoutConnecting) {
  auto p = parse("version: 1\n" + std::string(defaultSectionText()));
  ASSERT_TRUE(p.errors.empty());
  config::Diagnostics diag("default");
  YAML::Node root = YAML::Load(std::string(defaultSectionText()));
  auto module = makeModule();
  module->configure(config::Node(root, "", diag).child("postgres"), Limits{});
  ASSERT_TRUE(diag.ok());
  Env env =
      Env::fromMap({{"POSTGRES_DSN", "host=127.0.0.1 port=1 dbname=x user=y connect_timeout=1"}});
  EXPECT_TRUE(module->enabled(env));
  EXPECT_FALSE(module->enabled(Env::fromMap({})));
  EXPECT_FALSE(
      module->enabled(Env::fromMap({{"PGHOST", "h"}, {"PGUSER", "u"}, {"PGDATABASE", "d"}})));
  EXPECT_TRUE(module->enabled(Env::fromMap({{"PGHOST", "h"},
                                            {"PGUSER", "u"},
                                            {"PGDATABASE", "d"},
                                            {"MCPDB_PG_IAM_AUTH", "1"},
                                            {"AWS_REGION", "eu-west-1"}})));
  engines::EngineServices services;
  services.env = &env;
  protocol::ToolRegistry registry;
  ASSERT_TRUE(module->registerTools(registry, services).ok());
  std::vector<std::string> names;
  for (const auto& t : registry.tools()) {
    names.push_back(t->name);
    EXPECT_EQ(t->engine, "postgres");
    EXPECT_EQ(t->input_schema["additionalProperties"], false) << t->name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_document_categories", "get_document",
                                             "list_recent_documents", "search_documents_by_tag",
                                             "list_documents_published_between",
                                             "semantic_search_documents"}));
}

}  // namespace
}  // namespace mcpdb::postgres
