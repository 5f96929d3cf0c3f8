// The `dynamodb:` section: golden bad configs with exact messages, and what a good one yields.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <regex>

#include "support/section_coverage.hpp"
#include "config/config.hpp"
#include "engines/dynamodb/config.hpp"
#include "support/golden.hpp"

namespace mcpdb::dynamodb {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/dynamodb/configs";

struct Parsed {
  Settings registry;
  std::vector<std::string> errors;
};

Parsed parse(const std::string& text, const std::string& file) {
  config::Diagnostics diag(file);
  config::Config cfg = config::parseConfig(text, file, {"dynamodb"}, diag);
  Parsed p;
  if (diag.ok()) {
    config::Node root(cfg.root, "", diag);
    p.registry = parseSettings(root.child("dynamodb"), cfg.limits);
  }
  p.errors = diag.errors();
  return p;
}

TEST(DynamoRegistry, GoldenBadConfigs) {
  const int cases = testsupport::checkGoldenBadConfigs(
      kConfigs, ".errors",
      [](const std::string& text, const std::string& name) { return parse(text, name).errors; });
  EXPECT_GE(cases, 24);
}

// The name checks are plain loops; they must accept exactly what the documented regular
// expressions accept (random strings near the boundaries: lengths, first letter, other bytes).
TEST(DynamoRegistry, NameChecksAgreeWithTheRegularExpressions) {
  const std::regex table("[A-Za-z0-9_.-]{3,255}");
  const std::regex target("[A-Za-z][A-Za-z0-9_-]{0,63}");
  const std::string alphabet = std::string("aZz09_.-A ~/@\x7f\xc3\xa9") + '\0';
  std::mt19937 rng(20261130);
  const std::vector<std::size_t> lengths = {0, 1, 2, 3, 4, 63, 64, 65, 254, 255, 256};
  for (int i = 0; i < 20000; ++i) {
    const std::size_t n = i % 2 == 0 ? lengths[rng() % lengths.size()] : rng() % 80;
    std::string s;
    for (std::size_t k = 0; k < n; ++k) {
      // Mostly valid characters, so that long valid names occur too.
      s += rng() % 8 == 0 ? alphabet[rng() % alphabet.size()] : alphabet[rng() % 7];
    }
    EXPECT_EQ(validTableName(s), std::regex_match(s, table)) << s;
    EXPECT_EQ(validTargetName(s), std::regex_match(s, target)) << s;
  }
  EXPECT_TRUE(validTableName("prod.orders-v2"));
  EXPECT_FALSE(validTableName("ab"));
  EXPECT_TRUE(validTargetName("demo_documents"));
  EXPECT_FALSE(validTargetName("9lives"));
}

TEST(DynamoRegistry, DefaultSectionIsValid) {
  Parsed p = parse("version: 1\n" + std::string(defaultSectionYaml()), "default");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.registry.targets.size(), 2U);
  const Target& docs = p.registry.targets[0];
  EXPECT_EQ(docs.name, "demo_documents");
  EXPECT_EQ(docs.table, kDemoDocumentsTable);
  EXPECT_EQ(docs.partition_key.name, "id");
  EXPECT_FALSE(docs.sort_key.has_value());
  EXPECT_TRUE(docs.exact_count.enabled);
  const Target& events = p.registry.targets[1];
  EXPECT_EQ(events.table, kDemoEventsTable);
  ASSERT_TRUE(events.sort_key.has_value());
  EXPECT_EQ(events.sort_key->name, "published_id");
  EXPECT_TRUE(events.attributes.empty());
}

TEST(DynamoRegistry, GoodConfigFields) {
  Parsed p = parse(R"(
limits: {max_rows: 80, max_bytes: 100000, timeout_ms: 4000}
dynamodb:
  limits: {max_rows: 60}
  targets:
    orders:
      table: prod.orders-v2
      description: Orders
      partition_key: {name: customer, type: B}
      sort_key: {name: seq, type: N}
      attributes: [total, status]
      exact_count: {enabled: true, max_items: 500}
      limits: {max_rows: 10, max_bytes: 2048}
)",
                   "good.yaml");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.registry.targets.size(), 1U);
  const Target& t = p.registry.targets[0];
  EXPECT_EQ(t.table, "prod.orders-v2");
  EXPECT_EQ(t.partition_key.type, KeyType::B);
  EXPECT_EQ(t.sort_key->type, KeyType::N);
  // Key attributes are always part of the projection, first.
  EXPECT_EQ(t.attributes, (std::vector<std::string>{"customer", "seq", "total", "status"}));
  EXPECT_EQ(t.exact_count.max_items, 500U);
  EXPECT_EQ(t.limits.max_rows, 10U);
  EXPECT_EQ(t.limits.max_bytes, 2048U);
  EXPECT_EQ(t.limits.timeout.count(), 4000);
  EXPECT_EQ(p.registry.limits.max_rows, 60U);
}

TEST(DynamoRegistry, NamedSources) {
  Parsed p = parse(R"(
dynamodb:
  sources:
    main: {}
    eu:
      region: eu-central-1
      endpoint_env: EU_DDB_URL
      access_key_id_env: EU_KEY_ID
      secret_access_key_env: EU_SECRET_KEY
      session_token_env: EU_TOKEN
  targets:
    docs: {source: main, table: docs, description: Docs, partition_key: {name: id, type: S}}
    eu_docs: {source: eu, table: docs, description: Docs, partition_key: {name: id, type: S}}
)",
                   "sources.yaml");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.registry.sources.size(), 2U);
  const Source& eu = p.registry.sources[1];
  EXPECT_EQ(eu.name, "eu");
  EXPECT_EQ(eu.region, "eu-central-1");
  EXPECT_EQ(eu.endpoint_env, "EU_DDB_URL");
  EXPECT_EQ(eu.access_key_id_env, "EU_KEY_ID");
  EXPECT_EQ(eu.secret_access_key_env, "EU_SECRET_KEY");
  EXPECT_EQ(eu.session_token_env, "EU_TOKEN");
  EXPECT_EQ(p.registry.sourceOf(*p.registry.find("eu_docs")), &eu);
  EXPECT_EQ(p.registry.sourceOf(*p.registry.find("docs"))->name, "main");
  EXPECT_TRUE(p.registry.sources[0].region.empty());
}

// Without `sources:` there is one source `default` with every setting empty: AWS_REGION, the
// standard endpoint variables and the standard credential chain, as before sources existed.
TEST(DynamoRegistry, WithoutSourcesOneDefaultSource) {
  Parsed p = parse("version: 1\n" + std::string(defaultSectionYaml()), "default");
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  ASSERT_EQ(p.registry.sources.size(), 1U);
  const Source& s = p.registry.sources[0];
  EXPECT_EQ(s.name, "default");
  EXPECT_TRUE(s.region.empty() && s.endpoint_env.empty() && s.access_key_id_env.empty() &&
              s.secret_access_key_env.empty() && s.session_token_env.empty());
  for (const auto& t : p.registry.targets) EXPECT_EQ(p.registry.sourceOf(t), &s);
  EXPECT_TRUE(sourceUsable(s, Env::fromMap({{"AWS_REGION", "eu-west-1"}})));
  EXPECT_FALSE(sourceUsable(s, Env::fromMap({{"AWS_ACCESS_KEY_ID", "x"}})));
  EXPECT_EQ(parse("version: 1\n", "none.yaml").registry.sources.size(), 1U);
}

TEST(DynamoRegistry, RegionNames) {
  for (const char* ok : {"eu-west-1", "us-gov-west-1", "cn-north-1", "ap-southeast-10"})
    EXPECT_TRUE(validRegion(ok)) << ok;
  for (const char* bad : {"", "eu", "eu-west", "EU-WEST-1", "eu-west-x", "eu--1", "eu-west-1-",
                          "e1-west-1", "eu-west-1/x", "eu_west_1"})
    EXPECT_FALSE(validRegion(bad)) << bad;
}

TEST(DynamoRegistry, AbsentSectionMeansNoTargets) {
  Parsed p = parse("version: 1\n", "none.yaml");
  EXPECT_TRUE(p.errors.empty());
  EXPECT_TRUE(p.registry.targets.empty());
}

TEST(DynamoRegistry, FenceIsSetPerTargetAndRefusesOtherWords) {
  Parsed p = parse(R"(
dynamodb:
  targets:
    notes: {table: notes, description: Notes, partition_key: {name: id, type: S}, fence: always}
    plain: {table: plain, description: Plain, partition_key: {name: id, type: S}}
)",
                   "fence.yaml");
  ASSERT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(p.registry.find("notes")->fence, Fence::Always);
  EXPECT_EQ(p.registry.find("plain")->fence, Fence::Inherit);
  Parsed bad = parse(R"(
dynamodb:
  targets:
    notes: {table: notes, description: Notes, partition_key: {name: id, type: S}, fence: maybe}
)",
                     "fence.yaml");
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_NE(bad.errors[0].find("fence"), std::string::npos) << bad.errors[0];
}

}  // namespace
}  // namespace mcpdb::dynamodb

namespace mcpdb::dynamodb {
namespace {

TEST(DynamoRegistry, TheDeclarationDescribesTheBuiltInSection) {
  const YAML::Node doc = YAML::Load(std::string(defaultSectionYaml()));
  const Json schema = settingsSection().jsonSchema();
  testsupport::expectSchemaCovers(doc["dynamodb"], schema, "dynamodb");
  EXPECT_EQ(schema["required"], Json::array({"targets"}));
  const Json target = schema["properties"]["targets"]["additionalProperties"];
  EXPECT_EQ(target["properties"]["partition_key"]["properties"]["type"]["enum"],
            Json::array({"S", "N", "B"}));
  // The reference names every key the parser accepts, nested ones included.
  std::string text;
  for (const auto& l : settingsSection().reference()) text += l + "\n";
  for (const char* key :
       {"`targets`", "`table`", "`partition_key`", "`sort_key`", "`attributes`", "`exact_count`",
        "`max_items`", "`limits`", "`fence`", "`sources`", "`source`", "`region`", "`endpoint_env`",
        "`access_key_id_env`", "`secret_access_key_env`", "`session_token_env`"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key;
  }
  // Named sources: optional, each entry with exactly the keys a source reads, none required.
  EXPECT_FALSE(schema["properties"].contains("source"));
  const Json source = schema["properties"]["sources"]["additionalProperties"];
  std::vector<std::string> keys;
  for (const auto& [k, v] : source["properties"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"access_key_id_env", "endpoint_env", "region",
                                            "secret_access_key_env", "session_token_env"}));
  EXPECT_FALSE(source.contains("required") && !source["required"].empty());
  EXPECT_EQ(target["properties"]["source"]["type"], "string");
}

}  // namespace
}  // namespace mcpdb::dynamodb
