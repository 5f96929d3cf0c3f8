// Schema resources of the MongoDB engine, built from the registry: one per collection (targets
// sharing a collection merged), names that need percent-encoding round-trip, nothing connects.
#include <gtest/gtest.h>

#include "common/uri.hpp"
#include "engines/mongodb/resources.hpp"
#include "unit/mongodb/tool_harness.hpp"

namespace mcpdb::mongodb {
namespace {

using testing::ToolHarness;

// Collection names MongoDB accepts that are not unreserved URI characters.
constexpr const char* kHostile = "notes/2024#q1?x=%41&y\xc3\xa9{id}";

std::string config() {
  return std::string(R"(
mongodb:
  targets:
    plain:
      collection: docs
      description: Plain.
      id_type: string
      projection: [title, body]
    hostile:
      collection: ")") +
         kHostile + R"("
      description: Hostile name.
      id_type: int
      projection: [b, a]
    again:
      collection: docs
      description: The same collection, other fields.
      projection: [category]
      default_sort: {field: _id, order: desc}
      vector_search:
        tool: search_docs
        index: docs_index
        path: embedding
        id_field: doc_id
        title_field: title
        text_field: body
        metadata_fields: [tags, category]
        filter_fields:
          - {path: tags, type: string}
          - {path: category, type: string}
)";
}

Result<Json> readUri(ToolHarness& h, const std::string& uri) {
  const protocol::Resource* r = h.registry().findResource(uri);
  if (r == nullptr) return makeError(Code::NotFound, "no resource " + uri);
  protocol::CallContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  return r->read(ctx);
}

TEST(MongoResources, OnePerCollectionAndATemplate) {
  // No MONGODB_URI: registering and reading never connect.
  ToolHarness h(config(), {});
  ASSERT_TRUE(h.ok()) << (h.diag().errors().empty() ? "" : h.diag().errors()[0]);
  std::vector<std::string> uris;
  for (const auto& r : h.registry().resources()) {
    uris.push_back(r->uri);
    EXPECT_EQ(r->engine, "mongodb");
    EXPECT_EQ(r->mime_type, "application/json");
  }
  EXPECT_EQ(uris, (std::vector<std::string>{"mcpdb://mongodb/collections/docs",
                                            "mcpdb://mongodb/collections/"
                                            "notes%2F2024%23q1%3Fx%3D%2541%26y%C3%A9%7Bid%7D"}));
  ASSERT_EQ(h.registry().templates().size(), 1U);
  EXPECT_EQ(h.registry().templates()[0].uri_template, "mcpdb://mongodb/collections/{collection}");
}

TEST(MongoResources, HostileCollectionNameRoundTrips) {
  ToolHarness h(config(), {});
  ASSERT_TRUE(h.ok());
  const std::string uri = collectionResourceUri(kHostile);
  const std::string prefix = "mcpdb://mongodb/collections/";
  ASSERT_EQ(uri.rfind(prefix, 0), 0U);
  EXPECT_EQ(percentDecode(uri.substr(prefix.size())), std::string(kHostile));
  const protocol::Resource* r = h.registry().findResource(uri);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->name, kHostile);
  // The raw name is not a URI of ours.
  EXPECT_EQ(h.registry().findResource(prefix + kHostile), nullptr);
  auto d = readUri(h, uri);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)["collection"], kHostile);
  EXPECT_EQ((*d)["targets"].size(), 1U);
  EXPECT_EQ((*d)["targets"][0]["name"], "hostile");
  EXPECT_EQ((*d)["targets"][0]["id"], (Json{{"field", "_id"}, {"type", "int"}}));
  EXPECT_EQ((*d)["targets"][0]["fields"], (Json{"_id", "a", "b"}));
}

TEST(MongoResources, SharedCollectionListsEveryTargetAndTool) {
  ToolHarness h(config(), {});
  ASSERT_TRUE(h.ok());
  const protocol::Resource* r = h.registry().findResource("mcpdb://mongodb/collections/docs");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->tools, (std::vector<std::string>{"count_mongodb_documents", "get_mongodb_document",
                                                "list_mongodb_documents", "list_mongodb_targets",
                                                "search_docs"}));
  // The hostile collection has no semantic search: its tool is not listed there.
  const protocol::Resource* other = h.registry().findResource(collectionResourceUri(kHostile));
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(std::count(other->tools.begin(), other->tools.end(), "search_docs"), 0);
  auto d = readUri(h, r->uri);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, Json::parse(R"({
    "engine": "mongodb", "collection": "docs",
    "targets": [
      {"name": "plain", "description": "Plain.", "source": "default",
       "id": {"field": "_id", "type": "string"},
       "fields": ["_id", "body", "title"], "sort": {"field": "_id", "order": "asc"},
       "count_exact_max": 100000, "semantic_search": null},
      {"name": "again", "description": "The same collection, other fields.", "source": "default",
       "id": {"field": "_id", "type": "objectId"}, "fields": ["_id", "category"],
       "sort": {"field": "_id", "order": "desc"}, "count_exact_max": 100000,
       "semantic_search": {"tool": "search_docs", "source": "default", "index": "docs_index",
         "vector_field": "embedding",
         "id_field": "doc_id", "title_field": "title", "text_field": "body",
         "metadata_fields": ["category", "tags"],
         "filters": [{"field": "category", "type": "string"}, {"field": "tags", "type": "string"}],
         "method": "auto", "default_k": 5, "max_k": 20,
         "num_candidates": {"multiplier": 10, "max": 1000}, "exact_scan_max_docs": 10000,
         "dimensions": null}}],
    "tools": ["count_mongodb_documents", "get_mongodb_document", "list_mongodb_documents",
              "list_mongodb_targets", "search_docs"]})"))
      << d->dump(2);
  // Deterministic: the same bytes every time.
  EXPECT_EQ(readUri(h, r->uri)->dump(), d->dump());
}

TEST(MongoResources, ReadHonoursStop) {
  ToolHarness h(config(), {});
  ASSERT_TRUE(h.ok());
  const protocol::Resource* r = h.registry().findResource("mcpdb://mongodb/collections/docs");
  ASSERT_NE(r, nullptr);
  std::stop_source stop;
  stop.request_stop();
  protocol::CallContext ctx;
  ctx.stop = stop.get_token();
  auto d = r->read(ctx);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Code::Cancelled);
}

TEST(MongoResources, NoSectionNoResources) {
  ToolHarness h("other: 1\n", {});
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h.registry().resources().empty());
  EXPECT_TRUE(h.registry().templates().empty());
}

}  // namespace
}  // namespace mcpdb::mongodb
