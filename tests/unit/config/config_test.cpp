#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.hpp"

namespace mcpdb::config {
namespace {

const std::vector<std::string> kSections = {"postgres", "dynamodb", "mongodb", "embedding", "http"};

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Golden bad configs: each X.yaml is refused with exactly the messages in X.expected.
TEST(ConfigGolden, BadConfigsGiveExactMessages) {
  const auto dir = std::filesystem::path(MCPDB_SOURCE_DIR) / "tests/unit/config/bad";
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++cases;
    SCOPED_TRACE(entry.path().filename().string());
    Diagnostics diag(entry.path().filename().string());
    parseConfig(readFile(entry.path()), entry.path().filename().string(), kSections, diag);
    std::string got;
    for (const auto& e : diag.errors()) got += e + "\n";
    auto expected_path = entry.path();
    expected_path.replace_extension(".expected");
    EXPECT_EQ(readFile(expected_path), got);
    EXPECT_FALSE(diag.ok());
  }
  EXPECT_GE(cases, 6);
}

TEST(Config, EmptyConfigIsValidWithDefaults) {
  Diagnostics diag("x.yaml");
  Config c = parseConfig("", "x.yaml", kSections, diag);
  EXPECT_TRUE(diag.ok());
  EXPECT_EQ(c.limits.max_rows, 100U);
  EXPECT_EQ(c.server.self_check, SelfCheckMode::Warn);
}

TEST(Config, GoodValuesAreRead) {
  Diagnostics diag("x.yaml");
  Config c = parseConfig(
      "version: 1\nserver: {self_check: refuse, workers: 3}\nlimits: {max_rows: 7, max_bytes: "
      "2048, timeout_ms: 250}\n"
      "toolsets:\n  docs: [a, b]\n",
      "x.yaml", kSections, diag);
  ASSERT_TRUE(diag.ok()) << diag.errors().front();
  EXPECT_EQ(c.server.self_check, SelfCheckMode::Refuse);
  EXPECT_EQ(c.server.workers, 3U);
  EXPECT_EQ(c.limits.max_rows, 7U);
  EXPECT_EQ(c.limits.max_bytes, 2048U);
  EXPECT_EQ(c.limits.timeout.count(), 250);
  EXPECT_EQ(c.toolsets["docs"], (std::vector<std::string>{"a", "b"}));
}

TEST(Config, ToolLimitsCannotExceedServerLimits) {
  Diagnostics diag("x.yaml");
  YAML::Node n = YAML::Load("{max_rows: 500}");
  Limits server;
  server.max_rows = 100;
  parseLimits(Node(n, "postgres.tools.t.limits", diag), server, &server);
  ASSERT_EQ(diag.errors().size(), 1U);
  EXPECT_EQ(diag.errors()[0],
            "x.yaml:1: postgres.tools.t.limits.max_rows: must be between 1 and 100");
}

TEST(Config, SecretMessagesNeverQuoteTheSecret) {
  Diagnostics diag("x.yaml");
  parseConfig("postgres:\n  note: postgresql://u:TopSecret1@h/db\n", "x.yaml", kSections, diag);
  ASSERT_FALSE(diag.ok());
  for (const auto& e : diag.errors()) EXPECT_EQ(e.find("TopSecret1"), std::string::npos) << e;
}

TEST(Config, DsnWithoutPasswordIsNotASecret) {
  Diagnostics diag("x.yaml");
  parseConfig("postgres:\n  note: see postgresql://host/db for details\n", "x.yaml", kSections,
              diag);
  EXPECT_TRUE(diag.ok());
}

}  // namespace
}  // namespace mcpdb::config
