// Schema resources of the MySQL engine without a server: parameters as the config declares them,
// columns from a statement's shape, a placeholder mismatch refused, one resource per tool scoped
// to that tool, and registration never connecting.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "engines/mysql/module.hpp"
#include "engines/mysql/resources.hpp"
#include "engines/mysql/runtime.hpp"

namespace mcpdb::mysql {
namespace {

Settings parse(const std::string& text) {
  config::Diagnostics diag("r.yaml");
  config::Config cfg = config::parseConfig(text, "r.yaml", {"mysql"}, diag);
  EXPECT_TRUE(diag.ok()) << (diag.errors().empty() ? "" : diag.errors()[0]);
  config::Node root(cfg.root, "", diag);
  return parseSettings(root.child("mysql"), cfg.limits);
}

Settings builtIn() {
  return parse(std::string(defaultSectionText()));
}

const QueryTool& toolNamed(const Settings& s, const std::string& name) {
  for (const auto& t : s.tools) {
    if (t.name == name) return t;
  }
  throw std::runtime_error("no tool " + name);
}

TEST(MysqlResources, UriIsPercentEncodedUnderTheEngine) {
  EXPECT_EQ(toolResourceUri("get_document_mysql"), "mcpdb://mysql/tools/get_document_mysql");
  EXPECT_EQ(toolResourceUri("a b/c"), "mcpdb://mysql/tools/a%20b%2Fc");
}

TEST(MysqlResources, ParametersKeepPositionTypeAndConstraints) {
  const Settings s = builtIn();
  const Json params = describeParameters(toolNamed(s, "search_documents_text_mysql"));
  ASSERT_EQ(params.size(), 2U);
  EXPECT_EQ(params[0]["name"], "words");
  EXPECT_EQ(params[0]["position"], 1);
  EXPECT_EQ(params[0]["json_type"], "string");
  EXPECT_EQ(params[0]["required"], true);
  EXPECT_EQ(params[0]["minLength"], 1);
  EXPECT_EQ(params[0]["maxLength"], 200);
  EXPECT_FALSE(params[0].contains("type"));
  EXPECT_EQ(params[1]["name"], "limit");
  EXPECT_EQ(params[1]["position"], 2);
  EXPECT_EQ(params[1]["json_type"], "integer");
  EXPECT_EQ(params[1]["minimum"], 1);
  EXPECT_EQ(params[1]["maximum"], 20);
  EXPECT_EQ(params[1]["default"], 10);
  EXPECT_EQ(params[1]["required"], false);
  const Json id = describeParameters(toolNamed(s, "get_document_mysql"));
  ASSERT_EQ(id.size(), 1U);
  EXPECT_EQ(id[0]["pattern"], "^[A-Za-z0-9_.-]+$");
  EXPECT_TRUE(describeParameters(toolNamed(s, "list_document_categories_mysql")).empty());
}

TEST(MysqlResources, ColumnsComeFromTheShape) {
  const Settings s = builtIn();
  StatementShape shape;
  shape.param_count = 1;
  shape.columns = {{"id", "string"}, {"published", "date"}, {"n", "int"}};
  shape.nullable = {false, true, true};
  auto d = describeTool(toolNamed(s, "get_document_mysql"), "default", shape);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ((*d)["engine"], "mysql");
  EXPECT_EQ((*d)["tool"], "get_document_mysql");
  EXPECT_EQ((*d)["source"], "default");
  EXPECT_EQ((*d)["result_key"], "rows");
  ASSERT_EQ((*d)["columns"].size(), 3U);
  EXPECT_EQ((*d)["columns"][0], (Json{{"name", "id"}, {"type", "string"}, {"nullable", false}}));
  EXPECT_EQ((*d)["columns"][1]["type"], "date");
  EXPECT_EQ((*d)["columns"][2]["nullable"], true);
  EXPECT_EQ((*d)["parameters"].size(), 1U);
  EXPECT_TRUE((*d)["limits"].contains("max_rows"));
  EXPECT_TRUE((*d)["limits"].contains("timeout_ms"));
}

// The server's placeholder count must match the declared parameters (else the description would
// pair types with the wrong positions).
TEST(MysqlResources, PlaceholderMismatchIsAnError) {
  const Settings s = builtIn();
  for (std::size_t count : {0U, 2U}) {
    StatementShape shape;
    shape.param_count = count;
    auto d = describeTool(toolNamed(s, "get_document_mysql"), "default", shape);
    ASSERT_FALSE(d);
    EXPECT_EQ(d.error().code, Code::Internal);
  }
}

// A runtime per source of `s`, made as the module makes them (no variable set: none connects).
RuntimeOf runtimesOf(const Settings& s) {
  auto runtimes = std::make_shared<Runtimes>();
  return [runtimes, &s](const QueryTool& t) -> std::shared_ptr<Runtime> {
    const Source* source = s.sourceOf(t);
    if (source == nullptr) return nullptr;
    return runtimes->get(source->name,
                         [&] { return std::make_shared<Runtime>(s, *source, Env::fromMap({})); });
  };
}

// One resource per tool, describing exactly that tool (so visible exactly when it is), and the
// template; registering never connects (no DSN is set here).
TEST(MysqlResources, OneResourcePerToolScopedToIt) {
  const Settings s = builtIn();
  protocol::ToolRegistry reg;
  ASSERT_TRUE(registerResources(reg, s, runtimesOf(s)));
  ASSERT_EQ(reg.resources().size(), 3U);
  for (const auto& r : reg.resources()) {
    ASSERT_EQ(r->tools.size(), 1U);
    EXPECT_EQ(r->uri, toolResourceUri(r->tools[0]));
    EXPECT_EQ(r->name, r->tools[0]);
    EXPECT_EQ(r->engine, "mysql");
  }
  ASSERT_EQ(reg.templates().size(), 1U);
  EXPECT_EQ(reg.templates()[0].uri_template, "mcpdb://mysql/tools/{name}");
  EXPECT_EQ(reg.findResource("mcpdb://mysql/tools/no_such_tool"), nullptr);
  // A read without a reachable server is an error, never a description.
  protocol::CallContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto out = reg.findResource(toolResourceUri("get_document_mysql"))->read(ctx);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, Code::Unavailable);
}

TEST(MysqlResources, NoToolsNoTemplate) {
  const Settings s = parse("mysql: {}\n");
  protocol::ToolRegistry reg;
  ASSERT_TRUE(registerResources(reg, s, runtimesOf(s)));
  EXPECT_TRUE(reg.resources().empty());
  EXPECT_TRUE(reg.templates().empty());
}

}  // namespace
}  // namespace mcpdb::mysql
