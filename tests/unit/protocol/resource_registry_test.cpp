// The registry's resources and templates: what addResource/addTemplate refuse, findResource, and
// the MCP objects describe() makes for resources/list and resources/templates/list.
#include <gtest/gtest.h>

#include "protocol/tool_registry.hpp"

namespace mcpdb::protocol {
namespace {

Resource resource(std::string uri, std::vector<std::string> tools = {"t"}) {
  Resource r;
  r.uri = std::move(uri);
  r.name = "n";
  r.engine = "postgres";
  r.tools = std::move(tools);
  r.read = [](CallContext&) -> Result<Json> { return Json{{"ok", true}}; };
  return r;
}

TEST(ResourceRegistry, AddsAndFindsByExactUri) {
  ToolRegistry reg;
  ASSERT_TRUE(reg.addResource(resource("mcpdb://postgres/tools/a")).ok());
  ASSERT_TRUE(reg.addResource(resource("mcpdb://postgres/tools/b", {"b", "c"})).ok());
  ASSERT_EQ(reg.resources().size(), 2U);
  const Resource* a = reg.findResource("mcpdb://postgres/tools/a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->uri, "mcpdb://postgres/tools/a");
  CallContext ctx;
  auto read = a->read(ctx);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, (Json{{"ok", true}}));
  EXPECT_EQ(reg.findResource("mcpdb://postgres/tools/b")->tools,
            (std::vector<std::string>{"b", "c"}));
  // Exact match only: no prefix, case or encoding equivalence.
  EXPECT_EQ(reg.findResource("mcpdb://postgres/tools/"), nullptr);
  EXPECT_EQ(reg.findResource("mcpdb://postgres/tools/A"), nullptr);
  EXPECT_EQ(reg.findResource("mcpdb://postgres/tools/%61"), nullptr);
  EXPECT_EQ(reg.findResource("MCPDB://postgres/tools/a"), nullptr);
  EXPECT_EQ(reg.findResource(""), nullptr);
}

TEST(ResourceRegistry, RefusesBadUris) {
  ToolRegistry reg;
  for (const std::string& uri : std::vector<std::string>{
           "", "mcpdb://", "http://postgres/tools/a", "mcpdb:/postgres/tools/a", "MCPDB://x",
           "mcpdb://postgres/tools/a b", "mcpdb://postgres/tools/\x01",
           "mcpdb://postgres/tools/\x7f", "mcpdb://postgres/tools/\xc3\xa9",
           std::string("mcpdb://a\0b", 11), "mcpdb://" + std::string(1017, 'x')}) {
    auto st = reg.addResource(resource(uri));
    EXPECT_FALSE(st.ok()) << uri;
    if (!st.ok()) {
      EXPECT_EQ(st.error().code, Code::InvalidArgument) << uri;
    }
  }
  EXPECT_TRUE(reg.resources().empty());
  // 1024 characters is the limit, inclusive.
  EXPECT_TRUE(reg.addResource(resource("mcpdb://" + std::string(1016, 'x'))).ok());
}

TEST(ResourceRegistry, RefusesDuplicatesAndIncompleteResources) {
  ToolRegistry reg;
  ASSERT_TRUE(reg.addResource(resource("mcpdb://mongodb/collections/c")).ok());
  auto dup = reg.addResource(resource("mcpdb://mongodb/collections/c", {"other"}));
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().message.find("duplicate"), std::string::npos);

  auto no_tools = reg.addResource(resource("mcpdb://mongodb/collections/d", {}));
  ASSERT_FALSE(no_tools.ok());
  EXPECT_NE(no_tools.error().message.find("describes no tool"), std::string::npos);

  Resource no_reader = resource("mcpdb://mongodb/collections/e");
  no_reader.read = nullptr;
  auto st = reg.addResource(std::move(no_reader));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("no reader"), std::string::npos);

  // A refused resource leaves nothing behind.
  EXPECT_EQ(reg.resources().size(), 1U);
  EXPECT_EQ(reg.findResource("mcpdb://mongodb/collections/d"), nullptr);
  EXPECT_EQ(reg.findResource("mcpdb://mongodb/collections/e"), nullptr);
}

TEST(ResourceRegistry, Templates) {
  ToolRegistry reg;
  ResourceTemplate t;
  t.uri_template = "mcpdb://postgres/tools/{name}";
  t.name = "postgres_tool_schema";
  t.engine = "postgres";
  ASSERT_TRUE(reg.addTemplate(t).ok());
  auto dup = reg.addTemplate(t);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Code::InvalidArgument);
  t.uri_template = "mcpdb://dynamodb/tables/{table}";
  ASSERT_TRUE(reg.addTemplate(t).ok());
  ASSERT_EQ(reg.templates().size(), 2U);
  EXPECT_EQ(reg.templates()[0].uri_template, "mcpdb://postgres/tools/{name}");
}

TEST(ResourceRegistry, DescribeResource) {
  Resource r = resource("mcpdb://dynamodb/tables/t1");
  r.name = "t1";
  EXPECT_EQ(ToolRegistry::describe(r), (Json{{"uri", "mcpdb://dynamodb/tables/t1"},
                                             {"name", "t1"},
                                             {"mimeType", "application/json"}}));
  r.title = "Schema of t1";
  r.description = "Key schema.";
  const Json d = ToolRegistry::describe(r);
  EXPECT_EQ(d["title"], "Schema of t1");
  EXPECT_EQ(d["description"], "Key schema.");
  // Internal fields never reach the client.
  EXPECT_FALSE(d.contains("tools"));
  EXPECT_FALSE(d.contains("engine"));
}

TEST(ResourceRegistry, DescribeTemplate) {
  ResourceTemplate t;
  t.uri_template = "mcpdb://mongodb/collections/{collection}";
  t.name = "mongodb_collection_schema";
  t.engine = "mongodb";
  EXPECT_EQ(ToolRegistry::describe(t),
            (Json{{"uriTemplate", "mcpdb://mongodb/collections/{collection}"},
                  {"name", "mongodb_collection_schema"},
                  {"mimeType", "application/json"}}));
  t.title = "T";
  t.description = "D";
  const Json d = ToolRegistry::describe(t);
  EXPECT_EQ(d["title"], "T");
  EXPECT_EQ(d["description"], "D");
  EXPECT_FALSE(d.contains("engine"));
}

}  // namespace
}  // namespace mcpdb::protocol
