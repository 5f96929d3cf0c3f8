// Documents prebuilt at build time (src/config/prebuilt.hpp) are what yaml-cpp's parser makes of
// the same text.
#include "config/prebuilt.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "support/golden.hpp"
#include "support/yaml_compare.hpp"
#include "unit/config/prebuilt_sample.hpp"

namespace mcpdb::config {
namespace {

TEST(Prebuilt, SampleIsTheParsedDocument) {
  const std::string text = testsupport::readFile(std::filesystem::path(MCPDB_SOURCE_DIR) /
                                                 "tests/unit/config/prebuilt/sample.yaml");
  EXPECT_EQ(sample::sampleText(), text);
  const YAML::Node parsed = YAML::Load(text);
  const YAML::Node built = sample::sampleDocument();
  EXPECT_EQ(testsupport::yamlDifference(parsed, built), "");
  // Spot checks, in case the comparison itself were wrong.
  EXPECT_TRUE(built.IsMap());
  EXPECT_EQ(built["quoted"].Scalar(), "a \"quoted\" \\ value with a ? and a tab\there");
  EXPECT_EQ(built["unicode"].Scalar(), "caf\xc3\xa9 \xe2\x80\x94 \xe2\x98\x95");
  EXPECT_EQ(built["literal"].Scalar(), "line one\n  indented line two\n");
  EXPECT_TRUE(built["empty_value"].IsNull());
  EXPECT_TRUE(built["empty_map"].IsMap());
  EXPECT_EQ(built["empty_map"].size(), 0U);
  EXPECT_TRUE(built["empty_seq"].IsSequence());
  EXPECT_TRUE(built["nested"][2].IsNull());
  EXPECT_EQ(built["aliased"]["x"].Scalar(), "1");
  EXPECT_EQ(built[""].Scalar(), "empty key");
}

TEST(Prebuilt, BuiltDocumentIsIndependentAndMutable) {
  YAML::Node a = sample::sampleDocument();
  const YAML::Node b = sample::sampleDocument();
  a["nested"][0]["name"] = "changed";
  EXPECT_EQ(b["nested"][0]["name"].Scalar(), "first");
}

TEST(Prebuilt, ComparisonSeesDifferences) {
  const auto differ = [](const char* a, const char* b) {
    return !testsupport::yamlDifference(YAML::Load(a), YAML::Load(b)).empty();
  };
  EXPECT_TRUE(differ("a: 1", "a: 2"));
  EXPECT_TRUE(differ("a: [1]", "a: 1"));
  EXPECT_TRUE(differ("{a: 1, b: 2}", "{b: 2, a: 1}"));
  EXPECT_TRUE(differ("a: [1, 2]", "a: [1]"));
  EXPECT_TRUE(differ("a: ~", "a: ''"));
  EXPECT_FALSE(differ("{a: [1, {b: c}]}", "a:\n  - 1\n  - b: c\n"));
}

TEST(Prebuilt, EmptyDocument) {
  const YAML::Node built = buildDocument({});
  EXPECT_EQ(testsupport::yamlDifference(YAML::Load(""), built), "");
}

TEST(Prebuilt, SourceRefusesWhatItCannotReproduce) {
  const PrebuiltNames names{"ns", "text", "node", "h.hpp"};
  EXPECT_THROW((void)prebuiltSource("a: 1\na: 2\n", names), std::invalid_argument);
  EXPECT_THROW((void)prebuiltSource("? [a, b]\n: 1\n", names), std::invalid_argument);
  EXPECT_THROW((void)prebuiltSource("a: [\n", names), YAML::Exception);
  const std::string src = prebuiltSource("k: v\n", names);
  EXPECT_NE(src.find("namespace ns {"), std::string::npos);
  EXPECT_NE(src.find("std::string_view text()"), std::string::npos);
  EXPECT_NE(src.find("YAML::Node node()"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb::config
