// Named sources, shared by every engine (config/sources.hpp): name rules, how a tool's `source:`
// resolves, and the located errors when it does not.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include "config/sources.hpp"

namespace mcpdb::config {
namespace {

struct FakeSource {
  std::string name;
  int id = 0;
};

TEST(ConfigSources, NameRules) {
  for (const char* good : {"default", "reports", "eu_west_1", "_x", "a1"}) {
    EXPECT_EQ(sourceNameProblem(good), "") << good;
  }
  for (const char* bad : {"", "Reports", "1st", "a-b", "a.b", "a b", "é"}) {
    EXPECT_NE(sourceNameProblem(bad), "") << bad;
  }
  EXPECT_NE(sourceNameProblem(std::string(64, 'a')), "");
  EXPECT_EQ(sourceNameProblem(std::string(63, 'a')), "");
  for (const char* good : {"POSTGRES_DSN", "A", "_X", "REPORTS_DSN_2"}) {
    EXPECT_EQ(envNameProblem(good), "") << good;
  }
  for (const char* bad : {"", "postgres_dsn", "2DSN", "A-B", "A B", "A=B", "A\nB"}) {
    EXPECT_NE(envNameProblem(bad), "") << bad;
  }
  EXPECT_NE(envNameProblem(std::string(129, 'A')), "");
}

TEST(ConfigSources, AnEmptyReferenceIsTheOnlySource) {
  const std::vector<FakeSource> one{{"main", 1}};
  const std::vector<FakeSource> two{{"main", 1}, {"reports", 2}};
  const std::vector<FakeSource> none;
  ASSERT_NE(findSource(one, ""), nullptr);
  EXPECT_EQ(findSource(one, "")->id, 1);
  EXPECT_EQ(findSource(one, "main")->id, 1);
  EXPECT_EQ(findSource(one, "other"), nullptr);
  EXPECT_EQ(findSource(two, ""), nullptr);  // ambiguous: never a guess
  EXPECT_EQ(findSource(two, "reports")->id, 2);
  EXPECT_EQ(findSource(two, "REPORTS"), nullptr);  // names are exact
  EXPECT_EQ(findSource(none, ""), nullptr);
}

TEST(ConfigSources, AnUnresolvedReferenceIsReportedAtTheToolsSourceKey) {
  const std::vector<FakeSource> two{{"main", 1}, {"reports", 2}};
  Diagnostics diag("t.yaml");
  YAML::Node doc =
      YAML::Load("tools:\n  a: {source: nope}\n  b: {title: x}\n  c: {source: main}\n");
  Node root(doc, "", diag);
  EXPECT_EQ(resolveSource(two, "nope", root.child("tools").child("a")), nullptr);
  EXPECT_EQ(resolveSource(two, "", root.child("tools").child("b")), nullptr);
  ASSERT_NE(resolveSource(two, "main", root.child("tools").child("c")), nullptr);
  ASSERT_EQ(diag.errors().size(), 2U);
  EXPECT_NE(diag.errors()[0].find("tools.a.source"), std::string::npos) << diag.errors()[0];
  EXPECT_NE(diag.errors()[0].find("names no source (sources: main, reports)"), std::string::npos)
      << diag.errors()[0];
  EXPECT_NE(diag.errors()[1].find("tools.b.source"), std::string::npos) << diag.errors()[1];
  // Located at the tool (line 3), though its `source:` key is absent.
  EXPECT_NE(diag.errors()[1].find(":3:"), std::string::npos) << diag.errors()[1];
  EXPECT_NE(diag.errors()[1].find("must name one of the sources (main, reports)"),
            std::string::npos)
      << diag.errors()[1];
}

}  // namespace
}  // namespace mcpdb::config
