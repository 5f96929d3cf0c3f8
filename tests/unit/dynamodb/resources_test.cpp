// Schema resources of the DynamoDB engine against a fake DynamoDB: one per table (targets sharing
// a table merged), the key schema and indexes from DescribeTable (nothing else of its answer),
// the cache, failures, and that registering never connects.
#include <utility>  // before any Boost header (via the fake server)

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include "config/config.hpp"
#include "engines/dynamodb/module.hpp"
#include "engines/dynamodb/resources.hpp"
#include "support/fake_http_server.hpp"
#include "unit/dynamodb/module_harness.hpp"

namespace mcpdb::dynamodb {
namespace {

using namespace std::chrono_literals;
using test::FakeHttpServer;
using test::FakeRequest;
using test::FakeResponse;

constexpr const char* kConfig = R"(
dynamodb:
  targets:
    orders:
      table: orders.v2
      description: Orders
      partition_key: {name: customer, type: S}
      sort_key: {name: order_no, type: N}
      attributes: [total, status]
    orders_lite:
      table: orders.v2
      description: Orders, keys only
      partition_key: {name: customer, type: S}
      sort_key: {name: order_no, type: S}
      attributes: [status]
    blobs:
      table: blobs
      description: Blobs
      partition_key: {name: hash, type: B}
)";

std::string targetOp(const FakeRequest& r) {
  std::string t = r.header("X-Amz-Target").value_or("");
  return t.substr(t.find('.') + 1);
}

// A DescribeTable answer for orders.v2 with both kinds of index and the statistics a real one has.
Json ordersTable() {
  return Json::parse(R"({"Table": {
    "TableName": "orders.v2", "TableStatus": "ACTIVE", "ItemCount": 4242,
    "TableSizeBytes": 123456, "CreationDateTime": 1700000000.5,
    "KeySchema": [{"AttributeName": "order_no", "KeyType": "RANGE"},
                  {"AttributeName": "customer", "KeyType": "HASH"}],
    "AttributeDefinitions": [{"AttributeName": "customer", "AttributeType": "S"},
                             {"AttributeName": "order_no", "AttributeType": "N"},
                             {"AttributeName": "status", "AttributeType": "S"},
                             {"AttributeName": "placed", "AttributeType": "N"}],
    "GlobalSecondaryIndexes": [
      {"IndexName": "z_by_status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
       "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["total", "customer"]},
       "ItemCount": 99, "IndexStatus": "ACTIVE"}],
    "LocalSecondaryIndexes": [
      {"IndexName": "a_by_placed", "KeySchema": [{"AttributeName": "customer", "KeyType": "HASH"},
                                                 {"AttributeName": "placed", "KeyType": "RANGE"}],
       "Projection": {"ProjectionType": "KEYS_ONLY"}}]}})");
}

class DynamoResources : public ::testing::Test, protected ModuleHarness {
 protected:
  void SetUp() override {
    server_ = std::make_unique<FakeHttpServer>([this](const FakeRequest& r) {
      ++requests_;
      std::lock_guard lock(mu_);
      if (targetOp(r) != "DescribeTable") return FakeResponse{500, {}, "{}"};
      const std::string table = Json::parse(r.body).value("TableName", "");
      if (table == "orders.v2" && !orders_missing_)
        return FakeResponse{200, {}, ordersTable().dump()};
      return FakeResponse{
          400,
          {},
          Json{{"__type", "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"}}.dump()};
    });
    setUpModule(kConfig, "t.yaml",
                Env::fromMap({{"AWS_REGION", "us-east-1"},
                              {"AWS_ENDPOINT_URL_DYNAMODB", server_->url()},
                              {"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"},
                              {"AWS_SECRET_ACCESS_KEY", "secret"}}));
  }

  Result<Json> read(const std::string& uri, std::stop_token stop = {}) {
    const protocol::Resource* r = registry_.findResource(uri);
    EXPECT_NE(r, nullptr) << uri;
    if (r == nullptr) return makeError(Code::NotFound, "no resource");
    protocol::CallContext ctx;
    ctx.stop = std::move(stop);
    ctx.deadline = std::chrono::steady_clock::now() + 5s;
    return r->read(ctx);
  }

  std::mutex mu_;
  bool orders_missing_ = false;
  std::atomic<int> requests_{0};
  std::unique_ptr<FakeHttpServer> server_;
};

TEST_F(DynamoResources, OnePerTableWithoutConnecting) {
  std::vector<std::string> uris;
  for (const auto& r : registry_.resources()) {
    uris.push_back(r->uri);
    EXPECT_EQ(r->tools, (std::vector<std::string>{"count_dynamodb_items", "get_dynamodb_item",
                                                  "list_dynamodb_targets", "scan_dynamodb_table"}));
  }
  EXPECT_EQ(uris, (std::vector<std::string>{"mcpdb://dynamodb/tables/blobs",
                                            "mcpdb://dynamodb/tables/orders.v2"}));
  ASSERT_EQ(registry_.templates().size(), 1U);
  EXPECT_EQ(registry_.templates()[0].uri_template, "mcpdb://dynamodb/tables/{table}");
  EXPECT_EQ(requests_.load(), 0);  // registering never connects
  EXPECT_EQ(tableResourceUri("a b"), "mcpdb://dynamodb/tables/a%20b");
}

TEST_F(DynamoResources, KeySchemaIndexesAndTargets) {
  auto d = read("mcpdb://dynamodb/tables/orders.v2");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, Json::parse(R"({
    "engine": "dynamodb", "source": "default", "table": "orders.v2",
    "key_schema": {"partition_key": {"name": "customer", "type": "S"},
                   "sort_key": {"name": "order_no", "type": "N"}},
    "indexes": [
      {"name": "a_by_placed", "kind": "local", "projection": "KEYS_ONLY",
       "partition_key": {"name": "customer", "type": "S"},
       "sort_key": {"name": "placed", "type": "N"}},
      {"name": "z_by_status", "kind": "global", "projection": "INCLUDE",
       "projected_fields": ["customer", "total"],
       "partition_key": {"name": "status", "type": "S"}, "sort_key": null}],
    "targets": [
      {"name": "orders", "description": "Orders",
       "partition_key": {"name": "customer", "type": "S"},
       "sort_key": {"name": "order_no", "type": "N"}, "key_schema_matches_table": true,
       "fields": ["customer", "order_no", "status", "total"], "all_fields": false,
       "exact_count": {"enabled": false, "max_items": 100000}, "max_rows": 100},
      {"name": "orders_lite", "description": "Orders, keys only",
       "partition_key": {"name": "customer", "type": "S"},
       "sort_key": {"name": "order_no", "type": "S"}, "key_schema_matches_table": false,
       "fields": ["customer", "order_no", "status"], "all_fields": false,
       "exact_count": {"enabled": false, "max_items": 100000}, "max_rows": 100}],
    "tools": ["count_dynamodb_items", "get_dynamodb_item", "list_dynamodb_targets",
              "scan_dynamodb_table"]})"))
      << d->dump(2);
  // Statistics of DescribeTable's answer are never described.
  const std::string text = d->dump();
  for (const char* never : {"4242", "123456", "ItemCount", "ACTIVE", "1700000000"}) {
    EXPECT_EQ(text.find(never), std::string::npos) << never;
  }
}

TEST_F(DynamoResources, CachedAfterTheFirstReadFailuresNot) {
  {
    std::lock_guard lock(mu_);
    orders_missing_ = true;
  }
  auto missing = read("mcpdb://dynamodb/tables/orders.v2");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::NotFound);
  EXPECT_NE(missing.error().message.find("table 'orders.v2'"), std::string::npos);
  const int after_failure = requests_.load();
  {
    std::lock_guard lock(mu_);
    orders_missing_ = false;
  }
  auto first = read("mcpdb://dynamodb/tables/orders.v2");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(requests_.load(), after_failure + 1);  // the failure was not kept
  auto second = read("mcpdb://dynamodb/tables/orders.v2");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(requests_.load(), after_failure + 1);  // kept
  EXPECT_EQ(second->dump(), first->dump());
}

TEST_F(DynamoResources, ReadHonoursStop) {
  std::stop_source stop;
  stop.request_stop();
  auto d = read("mcpdb://dynamodb/tables/blobs", stop.get_token());
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, Code::Cancelled);
  EXPECT_EQ(requests_.load(), 0);
}

}  // namespace
}  // namespace mcpdb::dynamodb
