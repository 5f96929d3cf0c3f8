// The module and its tools against a fake DynamoDB: registration, schemas, cursor tamper/replay
// refusal, truncation, the self-check verdicts.
#include <utility>  // before any Boost header (via the fake server)

#include <gtest/gtest.h>

#include <mutex>

#include "common/cursor.hpp"
#include "config/config.hpp"
#include "engines/dynamodb/module.hpp"
#include "engines/dynamodb/doctor.hpp"
#include "engines/dynamodb/tools.hpp"
#include "protocol/schema.hpp"
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
    docs:
      table: docs_table
      description: Documents
      partition_key: {name: id, type: S}
      attributes: [title]
      exact_count: {enabled: true, max_items: 5}
    events:
      table: events_table
      description: Events
      partition_key: {name: category, type: S}
      sort_key: {name: seq, type: N}
      limits: {max_rows: 3, max_bytes: 1024}
)";

std::string targetOp(const FakeRequest& r) {
  std::string t = r.header("X-Amz-Target").value_or("");
  return t.substr(t.find('.') + 1);
}

FakeResponse reply(const Json& body) {
  return FakeResponse{200, {}, body.dump()};
}
FakeResponse awsError(const std::string& type) {
  return FakeResponse{400, {}, Json{{"__type", "com.amazonaws.dynamodb.v20120810#" + type}}.dump()};
}

class DynamoTools : public ::testing::Test, protected ModuleHarness {
 protected:
  void SetUp() override {
    server_ = std::make_unique<FakeHttpServer>([this](const FakeRequest& r) {
      std::lock_guard lock(mu_);
      return handler_(r);
    });
    setUpModule(kConfig, "t.yaml",
                Env::fromMap({{"AWS_REGION", "us-east-1"},
                              {"AWS_ENDPOINT_URL_DYNAMODB", server_->url()},
                              {"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"},
                              {"AWS_SECRET_ACCESS_KEY", "secret"}}));
  }

  void onRequest(std::function<FakeResponse(const FakeRequest&)> h) {
    std::lock_guard lock(mu_);
    handler_ = std::move(h);
  }

  Result<protocol::ToolOutput> call(const std::string& tool, const Json& args) {
    return ModuleHarness::call(tool, args, "unset");
  }

  std::mutex mu_;
  std::function<FakeResponse(const FakeRequest&)> handler_ = [](const FakeRequest&) {
    return reply(Json::object());
  };
  std::unique_ptr<FakeHttpServer> server_;
};

TEST_F(DynamoTools, RegistersExactlyTheFourReadTools) {
  std::vector<std::string> names;
  for (const auto& t : registry_.tools()) {
    names.push_back(t->name);
    EXPECT_EQ(t->engine, "dynamodb");
    EXPECT_TRUE(protocol::validateSchemaSubset(t->input_schema).ok()) << t->name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"list_dynamodb_targets", "get_dynamodb_item",
                                             "scan_dynamodb_table", "count_dynamodb_items"}));
  const auto* get = registry_.find("get_dynamodb_item");
  EXPECT_EQ(get->input_schema["properties"]["target"]["enum"], (Json{"docs", "events"}));
  EXPECT_EQ(server_->requestCount(), 0U);  // registering never connects
}

TEST_F(DynamoTools, ListTargets) {
  auto r = call("list_dynamodb_targets", Json::object());
  ASSERT_TRUE(r.ok());
  const Json& t = r->structured["targets"];
  ASSERT_EQ(t.size(), 2U);
  EXPECT_EQ(t[0]["attributes"], (Json{"id", "title"}));
  EXPECT_EQ(t[1]["sort_key"], (Json{{"name", "seq"}, {"type", "N"}}));
  EXPECT_EQ(t[1]["max_rows"], 3);
  EXPECT_EQ(t[0]["source"], "default");
  EXPECT_EQ(audit_.source, "default");
}

TEST_F(DynamoTools, GetItemSendsTypedKeyAndProjection) {
  onRequest([](const FakeRequest&) {
    return reply({{"Item", {{"id", {{"S", "{\"$ne\":null}"}}}, {"title", {{"S", "T"}}}}}});
  });
  auto r =
      call("get_dynamodb_item",
           {{"target", "docs"}, {"partition_key", "{\"$ne\":null}"}, {"consistent_read", true}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["found"], true);
  EXPECT_EQ(r->structured["item"], (Json{{"id", "{\"$ne\":null}"}, {"title", "T"}}));
  auto reqs = server_->requests();
  ASSERT_EQ(reqs.size(), 1U);
  EXPECT_EQ(targetOp(reqs[0]), "GetItem");
  EXPECT_EQ(Json::parse(reqs[0].body),
            (Json{{"TableName", "docs_table"},
                  {"Key", {{"id", {{"S", "{\"$ne\":null}"}}}}},
                  {"ConsistentRead", true},
                  {"ProjectionExpression", "#a0, #a1"},
                  {"ExpressionAttributeNames", {{"#a0", "id"}, {"#a1", "title"}}}}));
}

TEST_F(DynamoTools, GetItemNotFoundAndErrors) {
  onRequest([](const FakeRequest&) { return reply(Json::object()); });
  auto r = call("get_dynamodb_item", {{"target", "docs"}, {"partition_key", "x"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["found"], false);
  EXPECT_TRUE(r->structured["item"].is_null());

  onRequest([](const FakeRequest&) { return awsError("ResourceNotFoundException"); });
  r = call("get_dynamodb_item", {{"target", "docs"}, {"partition_key", "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::NotFound);
  EXPECT_EQ(audit_.source, "default");  // also when the call fails
  EXPECT_EQ(r.error().message,
            "target 'docs': DynamoDB table not found in this region and account "
            "(ResourceNotFoundException)");

  onRequest([](const FakeRequest&) { return awsError("AccessDeniedException"); });
  r = call("get_dynamodb_item", {{"target", "docs"}, {"partition_key", "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::PermissionDenied);

  // Unknown targets are refused by the schema enum before any request.
  const auto before = server_->requestCount();
  EXPECT_FALSE(call("get_dynamodb_item", {{"target", "other_table"}, {"partition_key", "x"}}).ok());
  EXPECT_EQ(server_->requestCount(), before);
}

TEST_F(DynamoTools, GetItemLargerThanTheByteCapIsNotReturned) {
  onRequest([](const FakeRequest&) {
    return reply({{"Item",
                   {{"category", {{"S", "c"}}},
                    {"seq", {{"N", "1"}}},
                    {"body", {{"S", std::string(5000, 'x')}}}}}});
  });
  auto r =
      call("get_dynamodb_item", {{"target", "events"}, {"partition_key", "c"}, {"sort_key", "1"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["found"], true);
  EXPECT_TRUE(r->structured["item"].is_null());
  EXPECT_EQ(r->structured["truncated"], true);
  EXPECT_TRUE(audit_.truncated);
  EXPECT_EQ(audit_.source, "default");
}

Json eventItem(int seq, std::size_t body = 10) {
  return {{"category", {{"S", "c"}}},
          {"seq", {{"N", std::to_string(seq)}}},
          {"body", {{"S", std::string(body, 'b')}}}};
}

TEST_F(DynamoTools, ScanIssuesACursorBoundToTheTarget) {
  onRequest([](const FakeRequest& r) {
    Json body = Json::parse(r.body);
    if (!body.contains("ExclusiveStartKey")) {
      Json lek = {{"category", {{"S", "c"}}}, {"seq", {{"N", "2"}}}};
      return reply({{"Items", {eventItem(1), eventItem(2)}}, {"LastEvaluatedKey", lek}});
    }
    return reply({{"Items", {eventItem(3)}}});
  });
  auto first = call("scan_dynamodb_table", {{"target", "events"}, {"limit", 2}});
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->structured["count"], 2);
  EXPECT_EQ(first->structured["has_more"], true);
  EXPECT_FALSE(audit_.truncated);  // more pages are not a cut result
  EXPECT_EQ(audit_.source, "default");
  const std::string cursor = first->structured["next_cursor"].get<std::string>();
  EXPECT_EQ(cursor.find("seq"), std::string::npos);  // opaque, not the raw key

  // Replayed against another target: refused, nothing sent.
  auto before = server_->requestCount();
  auto other = call("scan_dynamodb_table", {{"target", "docs"}, {"cursor", cursor}});
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, Code::InvalidArgument);
  EXPECT_EQ(server_->requestCount(), before);

  // Tampered: refused.
  std::string tampered = cursor;
  tampered[3] = tampered[3] == 'A' ? 'B' : 'A';
  EXPECT_FALSE(call("scan_dynamodb_table", {{"target", "events"}, {"cursor", tampered}}).ok());
  EXPECT_FALSE(
      call("scan_dynamodb_table", {{"target", "events"}, {"cursor", "not-a-cursor"}}).ok());
  EXPECT_EQ(server_->requestCount(), before);

  // Genuine: continues exactly after the last item.
  auto second = call("scan_dynamodb_table", {{"target", "events"}, {"cursor", cursor}});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->structured["count"], 1);
  EXPECT_EQ(second->structured["has_more"], false);
  EXPECT_TRUE(second->structured["next_cursor"].is_null());
  auto reqs = server_->requests();
  EXPECT_EQ(Json::parse(reqs.back().body)["ExclusiveStartKey"],
            (Json{{"category", {{"S", "c"}}}, {"seq", {{"N", "2"}}}}));
}

TEST_F(DynamoTools, ForgedCursorsSignedForTheRightContextStillNeedTheRightTableAndKey) {
  CursorCodec codec("test-cursor-key");
  const std::string ctx = clientCursorContext("dynamodb:scan_dynamodb_table:events", "stdio");
  const Json good_key = {{"category", {{"S", "c"}}}, {"seq", {{"N", "2"}}}};
  // Wrong table in the payload (e.g. the operator re-pointed the target).
  auto r = call("scan_dynamodb_table",
                {{"target", "events"},
                 {"cursor", codec.encode(ctx, {{"t", "docs_table"}, {"k", good_key}})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "arguments.cursor: invalid cursor");
  // Key of the wrong shape.
  r = call("scan_dynamodb_table",
           {{"target", "events"},
            {"cursor",
             codec.encode(ctx, {{"t", "events_table"}, {"k", {{"category", {{"S", "c"}}}}}})}});
  ASSERT_FALSE(r.ok());
  // Signed with another server's key.
  CursorCodec other("another-key");
  r = call("scan_dynamodb_table",
           {{"target", "events"},
            {"cursor", other.encode(ctx, {{"t", "events_table"}, {"k", good_key}})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(server_->requestCount(), 0U);
}

TEST_F(DynamoTools, ScanLimitIsBoundedByTheTargetsMaxRows) {
  auto r = call("scan_dynamodb_table", {{"target", "events"}, {"limit", 4}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "arguments.limit: must be between 1 and 3 for target 'events'");
  EXPECT_FALSE(call("scan_dynamodb_table", {{"target", "events"}, {"limit", 0}}).ok());
}

// JSON Schema counts 2.0 as an integer, so the handler does too (it used to read only JSON
// integers: `limit: 2.0` silently became the default); 2.5 is refused by the schema and, past it,
// by the handler alike.
TEST_F(DynamoTools, ScanLimitAcceptsIntegralFloatsLikeTheSchema) {
  onRequest([](const FakeRequest&) { return reply({{"Items", Json::array()}}); });
  auto r = call("scan_dynamodb_table", {{"target", "events"}, {"limit", 2.0}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(Json::parse(server_->requests().back().body)["Limit"], 2);
  auto frac = call("scan_dynamodb_table", {{"target", "events"}, {"limit", 2.5}});
  ASSERT_FALSE(frac.ok());
  EXPECT_EQ(frac.error().message, "arguments.limit: must be an integer");
  const protocol::Tool* t = registry_.find("scan_dynamodb_table");
  protocol::CallContext ctx;
  ctx.limits = t->limits;
  ctx.deadline = std::chrono::steady_clock::now() + 5s;
  auto direct = t->handler({{"target", "events"}, {"limit", 2.5}}, ctx);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.error().code, Code::InvalidArgument);
}

TEST_F(DynamoTools, ScanByteCapTruncatesAndResumesAfterTheLastReturnedItem) {
  onRequest([](const FakeRequest&) {
    return reply({{"Items", {eventItem(1, 400), eventItem(2, 400), eventItem(3, 400)}},
                  {"LastEvaluatedKey", {{"category", {{"S", "c"}}}, {"seq", {{"N", "3"}}}}}});
  });
  auto r = call("scan_dynamodb_table", {{"target", "events"}, {"limit", 3}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["truncated"], true);
  EXPECT_EQ(r->structured["count"], 2);  // 1024-byte cap
  EXPECT_TRUE(audit_.truncated);
  EXPECT_EQ(r->structured["has_more"], true);
  EXPECT_NE(r->structured["note"].get<std::string>().find("max_bytes"), std::string::npos);
  // The cursor resumes after item 2 (not after DynamoDB's page end): nothing is lost.
  auto next =
      call("scan_dynamodb_table", {{"target", "events"}, {"cursor", r->structured["next_cursor"]}});
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(Json::parse(server_->requests().back().body)["ExclusiveStartKey"]["seq"]["N"], "2");
}

TEST_F(DynamoTools, CountApproximateAndCappedExact) {
  int scans = 0;
  onRequest([&scans](const FakeRequest& r) {
    if (targetOp(r) == "DescribeTable")
      return reply({{"Table", {{"ItemCount", 1234}, {"TableStatus", "ACTIVE"}}}});
    ++scans;
    Json body = Json::parse(r.body);
    EXPECT_EQ(body["Select"], "COUNT");
    return reply(
        {{"Count", body["Limit"].get<int>()}, {"LastEvaluatedKey", {{"id", {{"S", "k"}}}}}});
  });
  auto r = call("count_dynamodb_items", {{"target", "docs"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["approximate_count"], 1234);
  EXPECT_EQ(r->structured["approximate"], true);
  EXPECT_FALSE(r->structured.contains("exact_count"));
  EXPECT_FALSE(audit_.truncated);
  r = call("count_dynamodb_items", {{"target", "docs"}, {"exact", true}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["exact_count"]["count"], 5);
  EXPECT_EQ(r->structured["exact_count"]["capped"], true);
  EXPECT_TRUE(audit_.truncated);
  EXPECT_EQ(r->structured["exact_count"]["complete"], false);
  // Exact counting must be allowed by the config.
  auto denied = call("count_dynamodb_items", {{"target", "events"}, {"exact", true}});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, Code::FailedPrecondition);
}

TEST_F(DynamoTools, MalformedRepliesNeverThrow) {
  for (const Json& body : std::vector<Json>{Json{{"Table", "not an object"},
                                                 {"Count", "7"},
                                                 {"Items", {{"x", 1}}},
                                                 {"Item", {{"id", {{"Q", 1}}}}}},
                                            Json{{"Table", {{"ItemCount", -5}, {"TableStatus", 3}}},
                                                 {"Count", -1},
                                                 {"Items", Json::object()},
                                                 {"LastEvaluatedKey", "k"}},
                                            Json::array(), Json("text")}) {
    SCOPED_TRACE(body.dump());
    onRequest([body](const FakeRequest&) { return reply(body); });
    (void)call("count_dynamodb_items", {{"target", "docs"}, {"exact", true}});
    (void)call("scan_dynamodb_table", {{"target", "docs"}});
    (void)call("get_dynamodb_item", {{"target", "docs"}, {"partition_key", "x"}});
    (void)module_->selfCheck(services_);
  }
  onRequest([](const FakeRequest&) { return reply({{"Items", {{{"nokey", {{"S", "x"}}}}}}}); });
  auto r = call("scan_dynamodb_table", {{"target", "docs"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Internal);
}

TEST_F(DynamoTools, SelfCheckDeniedWriteIsOk) {
  onRequest([](const FakeRequest& r) {
    if (targetOp(r) == "DescribeTable") {
      return reply(
          {{"Table",
            {{"TableStatus", "ACTIVE"},
             {"KeySchema", {{{"AttributeName", "id"}, {"KeyType", "HASH"}}}},
             {"AttributeDefinitions", {{{"AttributeName", "id"}, {"AttributeType", "S"}}}}}}});
    }
    return FakeResponse{
        400, {}, R"({"__type":"com.amazon.coral.service#AccessDeniedException","Message":"no"})"};
  });
  auto findings = module_->selfCheck(services_);
  int ok_writes = 0;
  for (const auto& f : findings) {
    if (f.check == "dynamodb.write_denied") {
      EXPECT_EQ(f.severity, engines::Finding::Severity::Ok) << f.message;
      ++ok_writes;
    }
  }
  EXPECT_EQ(ok_writes, 2);
  // The events table's key schema differs from the fake's answer: warned.
  bool schema_warned = false;
  for (const auto& f : findings) schema_warned |= f.check == "dynamodb.key_schema";
  EXPECT_TRUE(schema_warned);
  for (const auto& r : server_->requests()) {
    if (targetOp(r) == "DescribeTable") continue;
    EXPECT_EQ(targetOp(r), "UpdateItem");
    EXPECT_EQ(Json::parse(r.body)["ConditionExpression"],
              "attribute_not_exists(#pk) AND attribute_exists(#pk)");
  }
}

TEST_F(DynamoTools, SelfCheckConditionFailureIsAViolation) {
  onRequest([](const FakeRequest& r) {
    if (targetOp(r) == "DescribeTable") return reply({{"Table", {{"TableStatus", "ACTIVE"}}}});
    return awsError("ConditionalCheckFailedException");
  });
  auto findings = module_->selfCheck(services_);
  int violations = 0;
  for (const auto& f : findings) {
    if (f.severity == engines::Finding::Severity::Violation) {
      ++violations;
      EXPECT_EQ(f.check, "dynamodb.write_denied");
      EXPECT_NE(f.message.find("principal may write: the write was only stopped by the condition"),
                std::string::npos);
    }
  }
  EXPECT_EQ(violations, 2);
}

// A call whose source cannot be set up (AWS_REGION unset) names the source and the variable.
TEST(DynamoModule, WithoutARegionTheCallNamesTheDefaultSource) {
  auto m = makeModule();
  config::Diagnostics diag("t.yaml");
  auto cfg = config::parseConfig(kConfig, "t.yaml", {"dynamodb"}, diag);
  m->configure(config::Node(cfg.root, "", diag).child("dynamodb"), cfg.limits);
  ASSERT_TRUE(diag.ok());
  const Env env = Env::fromMap({{"AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"}});
  engines::EngineServices services;
  services.env = &env;
  services.cursor_key = "k";
  protocol::ToolRegistry tools;
  ASSERT_TRUE(m->registerTools(tools, services).ok());
  protocol::CallContext ctx;
  ctx.limits = cfg.limits;
  auto r = tools.find(kGetItemTool)->handler({{"target", "docs"}, {"partition_key", "x"}}, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_EQ(r.error().message,
            "target 'docs': dynamodb source 'default': AWS_REGION is not set (or give the source a "
            "region)");
  EXPECT_EQ(ctx.audit.source, "default");
}

TEST(DynamoModule, EnabledByRegionOnly) {
  auto m = makeModule();
  EXPECT_EQ(m->name(), "dynamodb");
  EXPECT_TRUE(m->enabled(Env::fromMap({{"AWS_REGION", "eu-west-1"}})));
  EXPECT_FALSE(m->enabled(Env::fromMap({{"AWS_ACCESS_KEY_ID", "x"}})));
  EXPECT_EQ(m->defaultSection(), defaultSectionYaml());
}

}  // namespace
}  // namespace mcpdb::dynamodb
