// Config validation: golden bad configs (configs/NAME.yaml -> every error, exactly, in
// configs/NAME.expected) and the built-in demo section. MCPDB_UPDATE_GOLDEN=1 rewrites the files.
#include <gtest/gtest.h>

#include <filesystem>

#include "engines/mongodb/settings.hpp"
#include "support/golden.hpp"

namespace mcpdb::mongodb {
namespace {

namespace fs = std::filesystem;

const fs::path kConfigs = fs::path(MCPDB_SOURCE_DIR) / "tests/unit/mongodb/configs";

struct Parsed {
  Settings settings;
  std::vector<std::string> errors;
};

Parsed parseText(const std::string& name, const std::string& text, Limits limits = Limits{}) {
  config::Diagnostics diag(name);
  YAML::Node root = YAML::Load(text);
  config::Node node(root, "", diag);
  Parsed p;
  p.settings = parseSettings(node.child("mongodb"), limits);
  p.errors = diag.errors();
  return p;
}

TEST(MongoSettingsGolden, EveryBadConfigReportsExactlyItsErrors) {
  const int checked = testsupport::checkGoldenBadConfigs(
      kConfigs, ".expected", [](const std::string& text, const std::string& name) {
        return parseText(name, text).errors;
      });
  EXPECT_GE(checked, 8);
}

TEST(MongoSettings, BuiltInSectionIsValidAndServesTheDemoCollection) {
  Parsed p = parseText("builtin", std::string(defaultSectionYaml()));
  ASSERT_TRUE(p.errors.empty()) << p.errors.front();
  ASSERT_EQ(p.settings.targets.size(), 1u);
  const Target& t = p.settings.targets[0];
  EXPECT_EQ(t.name, "documents");
  EXPECT_EQ(t.collection, "documents");
  EXPECT_EQ(t.id_type, IdType::ObjectId);
  EXPECT_EQ(p.settings.read_preference, "primaryPreferred");
  EXPECT_EQ(p.settings.read_concern, "local");
  ASSERT_TRUE(t.vector_search.has_value());
  const VectorSearch& vs = *t.vector_search;
  EXPECT_EQ(vs.tool, "semantic_search_mongodb");
  EXPECT_EQ(vs.path, "embedding");
  EXPECT_EQ(vs.id_field, "doc_id");
  EXPECT_EQ(vs.method, SearchMethod::Auto);
  EXPECT_EQ(vs.filter_fields.size(), 2u);
  // The vector is never part of what list/get return.
  EXPECT_EQ(std::find(t.projection.begin(), t.projection.end(), "embedding"), t.projection.end());
}

TEST(MongoSettings, ToolLimitsMayOnlyLowerTheServerLimits) {
  Limits server;
  server.max_rows = 50;
  Parsed ok = parseText(
      "l",
      "mongodb:\n  limits: {max_rows: 10}\n  targets:\n    t: {collection: c, projection: [a]}\n",
      server);
  EXPECT_TRUE(ok.errors.empty());
  EXPECT_EQ(ok.settings.limits.max_rows, 10u);
  Parsed bad = parseText(
      "l",
      "mongodb:\n  limits: {max_rows: 500}\n  targets:\n    t: {collection: c, projection: [a]}\n",
      server);
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0], "l:2: mongodb.limits.max_rows: must be between 1 and 50");
}

TEST(MongoSettings, FieldPathRules) {
  EXPECT_EQ(fieldPathProblem("title"), "");
  EXPECT_EQ(fieldPathProblem("meta.lang"), "");
  EXPECT_EQ(fieldPathProblem("tags.0"), "");
  EXPECT_EQ(fieldPathProblem("_id"), "");
  EXPECT_NE(fieldPathProblem("$where"), "");
  EXPECT_NE(fieldPathProblem("a.$b"), "");
  EXPECT_NE(fieldPathProblem("a..b"), "");
  EXPECT_NE(fieldPathProblem(".a"), "");
  EXPECT_NE(fieldPathProblem("a."), "");
  EXPECT_NE(fieldPathProblem(""), "");
  EXPECT_NE(fieldPathProblem("a b"), "");
  EXPECT_NE(fieldPathProblem(std::string("a\0b", 3)), "");
  EXPECT_EQ(collectionNameProblem("documents"), "");
  EXPECT_EQ(collectionNameProblem("app.events"), "");
  EXPECT_NE(collectionNameProblem("system.users"), "");
  EXPECT_NE(collectionNameProblem("a$b"), "");
}

TEST(MongoSettings, FenceIsSetPerTargetAndRefusesOtherWords) {
  Parsed p = parseText("fence", R"(
mongodb:
  targets:
    notes: {collection: notes, projection: [body], fence: always}
    counts: {collection: counts, projection: [n], fence: never}
    plain: {collection: plain, projection: [a]}
    bad: {collection: bad, projection: [a], fence: sometimes}
)");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].find("fence"), std::string::npos) << p.errors[0];
  ASSERT_NE(p.settings.find("notes"), nullptr);
  EXPECT_EQ(p.settings.find("notes")->fence, Fence::Always);
  EXPECT_EQ(p.settings.find("counts")->fence, Fence::Never);
  EXPECT_EQ(p.settings.find("plain")->fence, Fence::Inherit);
}

// Every key of `yaml` is declared at that place in `schema` (properties, the entry schema of a name
// map, or the item schema of a list), and every required key of the schema is present.
void expectCovered(const YAML::Node& yaml, const Json& schema, const std::string& path) {
  if (yaml.IsSequence()) {
    if (!schema.contains("items")) return;
    for (std::size_t i = 0; i < yaml.size(); ++i) {
      expectCovered(yaml[i], schema["items"], path + "[" + std::to_string(i) + "]");
    }
    return;
  }
  if (!yaml.IsMap()) return;
  ASSERT_EQ(schema.value("type", ""), "object") << path;
  for (const auto& kv : yaml) {
    const std::string key = kv.first.as<std::string>();
    const Json* sub = nullptr;
    if (schema.contains("properties") && schema["properties"].contains(key)) {
      sub = &schema["properties"][key];
    } else if (schema.contains("additionalProperties") &&
               schema["additionalProperties"].is_object()) {
      sub = &schema["additionalProperties"];
    }
    ASSERT_NE(sub, nullptr) << path << "." << key << " is not declared";
    expectCovered(kv.second, *sub, path + "." + key);
  }
  for (const auto& r : schema.value("required", Json::array())) {
    EXPECT_TRUE(yaml[r.get<std::string>()].IsDefined()) << path << "." << r;
  }
}

TEST(MongoSettings, TheDeclarationDescribesTheBuiltInSection) {
  const YAML::Node doc = YAML::Load(std::string(defaultSectionYaml()));
  const Json schema = settingsSection().jsonSchema();
  expectCovered(doc["mongodb"], schema, "mongodb");
  EXPECT_EQ(schema["required"], Json::array({"targets"}));
  const Json target = schema["properties"]["targets"]["additionalProperties"];
  EXPECT_EQ(target["properties"]["id_type"]["enum"], Json::array({"objectId", "string", "int"}));
  EXPECT_EQ(target["properties"]["vector_search"]["properties"]["num_candidates"]["properties"]
                  ["max"]["maximum"],
            10000);
  // The reference names every key the parser accepts, nested ones included.
  std::string text;
  for (const auto& l : settingsSection().reference()) text += l + "\n";
  for (const char* key : {"`read_preference`",
                          "`read_concern`",
                          "`limits`",
                          "`targets`",
                          "`collection`",
                          "`description`",
                          "`id_type`",
                          "`projection`",
                          "`default_sort`",
                          "`field`",
                          "`order`",
                          "`count`",
                          "`exact_max`",
                          "`vector_search`",
                          "`tool`",
                          "`index`",
                          "`path`",
                          "`id_field`",
                          "`title_field`",
                          "`text_field`",
                          "`metadata_fields`",
                          "`num_candidates`",
                          "`multiplier`",
                          "`max`",
                          "`max_k`",
                          "`default_k`",
                          "`filter_fields`",
                          "`type`",
                          "`method`",
                          "`dimensions`",
                          "`fallback`",
                          "`exact_scan_max_docs`",
                          "`fence`"}) {
    EXPECT_NE(text.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace mcpdb::mongodb
