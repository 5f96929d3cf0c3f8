// Schema resources of the MySQL engine on the live MariaDB with the demo data: the module's
// registration gives one resource per tool; reading one prepares the statement on the tool's
// source without executing it (a statement that would run for minutes is described at once), and
// a tool whose stored functions are refused gives an error, not a description.
#include <gtest/gtest.h>

#include <chrono>

#include "config/config.hpp"
#include "engines/mysql/module.hpp"
#include "engines/mysql/resources.hpp"
#include "integration/mysql/engine_fixture.hpp"
#include "integration/mysql/fixture.hpp"
#include "protocol/tool_registry.hpp"

namespace mcpdb::mysql {
namespace {

using itest::requireEnv;

using Engine = itest::ConfiguredEngine;

std::vector<std::string> columnNames(const Json& d) {
  std::vector<std::string> out;
  for (const auto& c : d["columns"]) out.push_back(c["name"].get<std::string>());
  return out;
}

std::string columnType(const Json& d, const std::string& name) {
  for (const auto& c : d["columns"]) {
    if (c["name"] == name) return c["type"].get<std::string>();
  }
  return "<missing>";
}

TEST(MysqlResourcesLive, DemoToolsDescribeTheirParametersAndColumns) {
  requireEnv("MYSQL_DSN");
  Engine e{std::string(defaultSectionText())};
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];

  auto doc = e.read(toolResourceUri("get_document_mysql"));
  ASSERT_TRUE(doc) << doc.error().message;
  EXPECT_EQ((*doc)["engine"], "mysql");
  EXPECT_EQ((*doc)["tool"], "get_document_mysql");
  EXPECT_EQ(columnNames(*doc),
            (std::vector<std::string>{"id", "title", "body", "category", "tags", "published"}));
  EXPECT_EQ(columnType(*doc, "id"), "string");
  EXPECT_EQ(columnType(*doc, "published"), "date");
  ASSERT_EQ((*doc)["parameters"].size(), 1U);
  EXPECT_EQ((*doc)["parameters"][0]["name"], "id");
  EXPECT_EQ((*doc)["parameters"][0]["json_type"], "string");
  EXPECT_EQ((*doc)["parameters"][0]["maxLength"], 64);
  // Described, not run: no row appears (doc-01 is only in the parameter's own description).
  EXPECT_FALSE(doc->contains("rows"));
  EXPECT_EQ(doc->dump().find("doc-02"), std::string::npos);

  auto cats = e.read(toolResourceUri("list_document_categories_mysql"));
  ASSERT_TRUE(cats) << cats.error().message;
  EXPECT_EQ(columnNames(*cats),
            (std::vector<std::string>{"category", "documents", "latest_published"}));
  EXPECT_EQ(columnType(*cats, "documents"), "int");
  EXPECT_EQ(columnType(*cats, "latest_published"), "date");
  EXPECT_TRUE((*cats)["parameters"].empty());

  auto search = e.read(toolResourceUri("search_documents_text_mysql"));
  ASSERT_TRUE(search) << search.error().message;
  EXPECT_EQ(columnNames(*search),
            (std::vector<std::string>{"id", "title", "category", "published"}));
  ASSERT_EQ((*search)["parameters"].size(), 2U);
  EXPECT_EQ((*search)["parameters"][1]["name"], "limit");
  EXPECT_EQ((*search)["parameters"][1]["position"], 2);
  EXPECT_EQ((*search)["parameters"][1]["json_type"], "integer");
}

TEST(MysqlResourcesLive, ResourcesListShowsOnePerToolAndUnknownIsNotFound) {
  requireEnv("MYSQL_DSN");
  Engine e{std::string(defaultSectionText())};
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  ASSERT_EQ(e.registry.resources().size(), e.registry.tools().size());
  ASSERT_EQ(e.registry.resources().size(), 3U);
  for (const auto& t : e.registry.tools()) {
    const protocol::Resource* r = e.registry.findResource(toolResourceUri(t->name));
    ASSERT_NE(r, nullptr) << t->name;
    EXPECT_EQ(r->tools, (std::vector<std::string>{t->name}));
    EXPECT_EQ(protocol::ToolRegistry::describe(*r)["uri"], toolResourceUri(t->name));
  }
  ASSERT_EQ(e.registry.templates().size(), 1U);
  EXPECT_EQ(e.registry.templates()[0].uri_template, "mcpdb://mysql/tools/{name}");
  auto unknown = e.read("mcpdb://mysql/tools/no_such_tool");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code, Code::NotFound);
  auto other_engine = e.read("mcpdb://postgres/tools/get_document_mysql");
  ASSERT_FALSE(other_engine);
  EXPECT_EQ(other_engine.error().code, Code::NotFound);
}

// A statement that would run for minutes is described at once: preparing never executes it.
TEST(MysqlResourcesLive, DescribingNeverExecutes) {
  requireEnv("MYSQL_DSN");
  Engine e(R"(mysql:
  tools:
    slow:
      description: d
      statement: >-
        SELECT COUNT(*) AS n FROM documents a, documents b, documents c, documents d, documents e,
        documents f WHERE CONCAT(a.id, b.id, c.id, d.id, e.id, f.id) LIKE '%zz%'
      limits: {timeout_ms: 5000}
)");
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  const auto start = std::chrono::steady_clock::now();
  auto d = e.read(toolResourceUri("slow"));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(columnNames(*d), (std::vector<std::string>{"n"}));
  EXPECT_EQ(columnType(*d, "n"), "int");
  // Executed, it would hit its 5 s time limit and fail.
  EXPECT_LT(took, std::chrono::seconds(4));
}

// The same vetting as a call: a tool reaching a writing stored function (directly or through a
// view) is refused with the reason, and nothing is described.
TEST(MysqlResourcesLive, RefusedToolGivesAnErrorNotADescription) {
  requireEnv("MYSQL_DOCTOR_DSN_ROUTINES");
  Engine e(R"(mysql:
  sources:
    routines: {dsn_env: MYSQL_DOCTOR_DSN_ROUTINES}
  tools:
    pure: {description: d, statement: SELECT demo.mcpdb_doc_pure(2) AS v}
    writer: {description: d, statement: SELECT demo.mcpdb_doc_writer() AS v}
    view_writer: {description: d, statement: SELECT * FROM demo.mcpdb_doc_v_writer}
)");
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  auto pure = e.read(toolResourceUri("pure"));
  ASSERT_TRUE(pure) << pure.error().message;
  EXPECT_EQ(columnNames(*pure), (std::vector<std::string>{"v"}));
  EXPECT_EQ((*pure)["source"], "routines");
  for (const char* tool : {"writer", "view_writer"}) {
    auto refused = e.read(toolResourceUri(tool));
    ASSERT_FALSE(refused) << tool;
    EXPECT_EQ(refused.error().code, Code::PermissionDenied) << refused.error().message;
    // The client reads no object name; the operator's detail has it.
    EXPECT_EQ(refused.error().message.find("mcpdb_doc_"), std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().detail.find("mcpdb_doc_writer"), std::string::npos)
        << refused.error().detail;
  }
}

}  // namespace
}  // namespace mcpdb::mysql
