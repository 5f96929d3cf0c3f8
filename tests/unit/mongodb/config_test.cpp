// Config validation: golden bad configs (configs/NAME.yaml -> every error, exactly, in
// configs/NAME.expected) and the built-in demo section. MCPDB_UPDATE_GOLDEN=1 rewrites the files.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/section_coverage.hpp"
#include "engines/mongodb/config.hpp"
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

TEST(MongoSettings, WithoutSourcesOneDefaultSourceReadsTheUsualVariables) {
  Parsed p = parseText("s", "mongodb:\n  targets:\n    t: {collection: c, projection: [a]}\n");
  ASSERT_TRUE(p.errors.empty()) << p.errors.front();
  ASSERT_EQ(p.settings.sources.size(), 1u);
  EXPECT_EQ(p.settings.sources[0].name, "default");
  EXPECT_EQ(sourceVariables(p.settings.sources[0]),
            (std::vector<std::string>{"MONGODB_URI", "MONGODB_DATABASE"}));
  EXPECT_EQ(p.settings.targets[0].source, "default");
  // No section at all: the same default source (enabled() reads it).
  config::Diagnostics diag("none");
  const Settings none = parseSettings(config::Node(YAML::Node(), "mongodb", diag), Limits{});
  ASSERT_EQ(none.sources.size(), 1u);
  EXPECT_EQ(none.sources[0].uri_env, "MONGODB_URI");
}

TEST(MongoSettings, TargetsAndSearchesResolveTheirSources) {
  Parsed one = parseText("one", R"(
mongodb:
  sources:
    only: {uri_env: ONLY_URI, database: app}
  targets:
    t:
      collection: c
      projection: [a]
      vector_search: {index: i, path: v, title_field: a, text_field: a}
)");
  ASSERT_TRUE(one.errors.empty()) << one.errors.front();
  EXPECT_EQ(one.settings.targets[0].source, "only");  // the only source, without `source:`
  EXPECT_EQ(one.settings.targets[0].vector_search->source, "only");
  EXPECT_EQ(sourceVariables(one.settings.sources[0]), (std::vector<std::string>{"ONLY_URI"}));

  Parsed two = parseText("two", R"(
mongodb:
  sources:
    a: {uri_env: A_URI, database: a}
    b: {uri_env: B_URI, database_env: B_DB}
  targets:
    t:
      collection: c
      projection: [a]
      source: a
      vector_search: {index: i, path: v, title_field: a, text_field: a, source: b}
    u: {collection: c, projection: [a], source: b}
)");
  ASSERT_TRUE(two.errors.empty()) << two.errors.front();
  EXPECT_EQ(two.settings.find("t")->source, "a");
  EXPECT_EQ(two.settings.find("t")->vector_search->source, "b");
  EXPECT_EQ(two.settings.find("u")->source, "b");
}

// A URI where its variable's name belongs is refused without being repeated.
TEST(MongoSettings, AUriLiteralIsNeverEchoed) {
  Parsed p = parseText("lit", R"(
mongodb:
  sources:
    s: {uri_env: "mongodb+srv://reader:hunter2@cluster0.example.net/app", database: app}
  targets:
    t: {collection: c, projection: [a]}
)");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].find("hunter2"), std::string::npos) << p.errors[0];
  EXPECT_NE(p.errors[0].find("mongodb.sources.s.uri_env"), std::string::npos) << p.errors[0];
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

TEST(MongoSettings, TheDeclarationDescribesTheBuiltInSection) {
  const YAML::Node doc = YAML::Load(std::string(defaultSectionYaml()));
  const Json schema = settingsSection().jsonSchema();
  testsupport::expectSchemaCovers(doc["mongodb"], schema, "mongodb");
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
