// The DynamoDB engine against a local server: every tool, limits, truncation, cursor paging over a
// whole table, approximate and capped exact counts, missing tables, the self-check verdict, and the
// demo loader. The same tests run twice: against dynalite (scripts/servers.sh) and against the
// official DynamoDB Local inside a private network namespace (scripts/in-dynamodb-local.sh), which
// is the one that reports a real ItemCount. MCPDB_DYNAMODB_SERVER says which one is under test.
// The fixture creates (and drops) its own tables with raw API calls: test code may write, the
// server may not.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <thread>
#include <map>
#include <set>

#include "config/config.hpp"
#include "engines/dynamodb/module.hpp"
#include "engines/dynamodb/config.hpp"
#include "engines/dynamodb/resources.hpp"
#include "engines/dynamodb/transport.hpp"
#include "engines/dynamodb/demo_loader.hpp"
#include "protocol/schema.hpp"

namespace mcpdb::dynamodb {
namespace {

using namespace std::chrono_literals;

constexpr int kDocs = 57;
constexpr int kEvents = 23;

const std::string kSuffix = std::to_string(getpid());
const std::string kDocsTable = "itest_" + kSuffix + "_docs";
const std::string kEventsTable = "itest_" + kSuffix + "_events";
const std::string kMissingTable = "itest_" + kSuffix + "_missing";

std::string missingEnvMessage() {
  return "AWS_ENDPOINT_URL_DYNAMODB / AWS_REGION are not set: start the local servers and export "
         "their "
         "environment first: scripts/servers.sh start && eval \"$(scripts/servers.sh env)\"";
}

bool haveServer() {
  return Env::process().has("AWS_ENDPOINT_URL_DYNAMODB") && Env::process().has("AWS_REGION");
}

// "dynalite" or "dynamodb-local"; anything else fails the tests that depend on it.
std::string serverKind() {
  return Env::process().get("MCPDB_DYNAMODB_SERVER").value_or("");
}

std::unique_ptr<Transport> rawTransport() {
  const Env env = Env::process();
  TransportOptions o;
  o.region = env.get("AWS_REGION").value_or("us-east-1");
  o.endpoint = *resolveEndpoint(env, o.region);
  return std::make_unique<Transport>(o, environmentCredentials(env));
}

CallOptions opts() {
  CallOptions o;
  o.deadline = std::chrono::steady_clock::now() + 20s;
  return o;
}

// The item with every attribute type, and the JSON an agent must see for it.
const Json kAllTypesWire = {{"id", {{"S", "doc-all-types"}}},
                            {"title", {{"S", "{\"$ne\":null}"}}},
                            {"n_small", {{"N", "42"}}},
                            {"n_big", {{"N", "12345678901234567890123456789.123456789"}}},
                            {"n_dec", {{"N", "-0.5"}}},
                            {"blob", {{"B", "AAEC/w=="}}},
                            {"flag", {{"BOOL", true}}},
                            {"nothing", {{"NULL", true}}},
                            {"map", {{"M", {{"k", {{"S", "v"}}}, {"$where", {{"N", "1"}}}}}}},
                            {"odd_map", {{"M", {{"$where", {{"S", "x"}}}}}}},
                            {"list", {{"L", {{{"S", "a"}}, {{"N", "1"}}, {{"BOOL", false}}}}}},
                            {"ss", {{"SS", {"red", "blue"}}}},
                            {"ns", {{"NS", {"1", "99999999999999999999"}}}},
                            {"bs", {{"BS", {"AA==", "AQ=="}}}}};
const Json kAllTypesAgent = {{"id", "doc-all-types"},
                             {"title", "{\"$ne\":null}"},
                             {"n_small", 42},
                             {"n_big", {{"$number", "12345678901234567890123456789.123456789"}}},
                             {"n_dec", -0.5},
                             {"blob", {{"$binary", "AAEC/w=="}}},
                             {"flag", true},
                             {"nothing", nullptr},
                             {"map", {{"k", "v"}, {"$where", 1}}},
                             {"odd_map", {{"$map", {{"$where", "x"}}}}},
                             {"list", {"a", 1, false}},
                             {"ss", {{"$stringSet", {"red", "blue"}}}},
                             {"ns", {{"$numberSet", {"1", "99999999999999999999"}}}},
                             {"bs", {{"$binarySet", {"AA==", "AQ=="}}}}};

// DynamoDB sets are unordered (DynamoDB Local returns them sorted, dynalite as written): sorts the
// members of every $stringSet/$numberSet/$binarySet so two items compare by content.
Json sortedSets(Json j) {
  if (j.is_object()) {
    for (auto& [k, v] : j.items()) {
      v = sortedSets(v);
      if ((k == "$stringSet" || k == "$numberSet" || k == "$binarySet") && v.is_array())
        std::sort(v.begin(), v.end());
    }
  } else if (j.is_array()) {
    for (auto& v : j) v = sortedSets(v);
  }
  return j;
}

std::string docId(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "doc-%03d", i);
  return buf;
}

void createTable(Transport& t, const std::string& name, const Json& defs, const Json& schema) {
  auto r = t.call("CreateTable",
                  {{"TableName", name},
                   {"AttributeDefinitions", defs},
                   {"KeySchema", schema},
                   {"BillingMode", "PAY_PER_REQUEST"}},
                  opts());
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (int i = 0; i < 100; ++i) {
    auto d = t.call("DescribeTable", {{"TableName", name}}, opts());
    if (d.ok() && (*d)["Table"]["TableStatus"] == "ACTIVE") return;
    std::this_thread::sleep_for(50ms);
  }
  FAIL() << "table " << name << " never became ACTIVE";
}

void putAll(Transport& t, const std::string& table, const std::vector<Json>& items) {
  for (std::size_t i = 0; i < items.size(); i += 25) {
    Json reqs = Json::array();
    for (std::size_t j = i; j < std::min(items.size(), i + 25); ++j)
      reqs.push_back({{"PutRequest", {{"Item", items[j]}}}});
    auto r = t.call("BatchWriteItem", {{"RequestItems", {{table, reqs}}}}, opts());
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(r->value("UnprocessedItems", Json::object()).empty());
  }
}

class DynamoIntegration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!haveServer()) return;
    auto t = rawTransport();
    createTable(*t, kDocsTable, {{{"AttributeName", "id"}, {"AttributeType", "S"}}},
                {{{"AttributeName", "id"}, {"KeyType", "HASH"}}});
    createTable(*t, kEventsTable,
                {{{"AttributeName", "cat"}, {"AttributeType", "S"}},
                 {{"AttributeName", "seq"}, {"AttributeType", "N"}}},
                {{{"AttributeName", "cat"}, {"KeyType", "HASH"}},
                 {{"AttributeName", "seq"}, {"KeyType", "RANGE"}}});
    std::vector<Json> docs;
    for (int i = 1; i < kDocs; ++i) {
      docs.push_back({{"id", {{"S", docId(i)}}},
                      {"title", {{"S", "Title " + std::to_string(i)}}},
                      {"body", {{"S", std::string(200 + i, 'x')}}},
                      {"secret_note", {{"S", "not for agents"}}}});
    }
    docs.push_back(kAllTypesWire);
    putAll(*t, kDocsTable, docs);
    std::vector<Json> events;
    for (int i = 0; i < kEvents; ++i) {
      events.push_back({{"cat", {{"S", i % 2 == 0 ? "even" : "odd"}}},
                        {"seq", {{"N", std::to_string(i * 10)}}},
                        {"what", {{"S", "event " + std::to_string(i)}}}});
    }
    putAll(*t, kEventsTable, events);
  }

  static void TearDownTestSuite() {
    if (!haveServer()) return;
    auto t = rawTransport();
    for (const auto& name : {kDocsTable, kEventsTable})
      (void)t->call("DeleteTable", {{"TableName", name}}, opts());
  }

  void SetUp() override {
    ASSERT_TRUE(haveServer()) << missingEnvMessage();
    env_ = std::make_unique<Env>(Env::process());
    module_ = makeModule();
    const std::string yaml =
        "limits: {max_rows: 100, max_bytes: 262144, timeout_ms: 10000}\n"
        "dynamodb:\n"
        "  targets:\n"
        "    docs:\n"
        "      table: " +
        kDocsTable +
        "\n"
        "      description: test documents\n"
        "      partition_key: {name: id, type: S}\n"
        "      exact_count: {enabled: true, max_items: 1000}\n"
        "    docs_public:\n"
        "      table: " +
        kDocsTable +
        "\n"
        "      description: test documents, title only\n"
        "      partition_key: {name: id, type: S}\n"
        "      attributes: [title]\n"
        "      exact_count: {enabled: true, max_items: 20}\n"
        "      limits: {max_rows: 10, max_bytes: 1024}\n"
        "    docs_small:\n"
        "      table: " +
        kDocsTable +
        "\n"
        "      description: test documents under a small byte cap\n"
        "      partition_key: {name: id, type: S}\n"
        "      limits: {max_rows: 50, max_bytes: 2048}\n"
        "    events:\n"
        "      table: " +
        kEventsTable +
        "\n"
        "      description: test events\n"
        "      partition_key: {name: cat, type: S}\n"
        "      sort_key: {name: seq, type: N}\n"
        "    missing:\n"
        "      table: " +
        kMissingTable +
        "\n"
        "      description: a table that does not exist\n"
        "      partition_key: {name: id, type: S}\n"
        "      exact_count: {enabled: true, max_items: 10}\n";
    config::Diagnostics diag("itest.yaml");
    cfg_ = config::parseConfig(yaml, "itest.yaml", {"dynamodb"}, diag);
    ASSERT_TRUE(diag.ok()) << diag.errors()[0];
    module_->configure(config::Node(cfg_.root, "", diag).child("dynamodb"), cfg_.limits);
    ASSERT_TRUE(diag.ok()) << diag.errors()[0];
    services_.env = env_.get();
    services_.defaults = cfg_.limits;
    services_.cursor_key = "integration-cursor-key";
    ASSERT_TRUE(module_->registerTools(registry_, services_).ok());
  }

  Result<protocol::ToolOutput> call(const std::string& tool, const Json& args) {
    const protocol::Tool* t = registry_.find(tool);
    if (t == nullptr) return makeError(Code::NotFound, "no tool " + tool);
    if (auto st = protocol::validateJson(t->input_schema, args); !st) return st.error();
    protocol::CallContext ctx;
    ctx.limits = t->limits;
    ctx.deadline = std::chrono::steady_clock::now() + 20s;
    return t->handler(args, ctx);
  }

  // Pages through a whole target; returns every item's id, in order.
  std::vector<std::string> scanAll(const std::string& target, int limit, int* calls,
                                   bool* saw_truncation) {
    std::vector<std::string> ids;
    Json cursor = nullptr;
    for (*calls = 0; *calls < 1000; ++*calls) {
      Json args = {{"target", target}, {"limit", limit}};
      if (!cursor.is_null()) args["cursor"] = cursor;
      auto r = call("scan_dynamodb_table", args);
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (!r.ok()) break;
      EXPECT_LE(r->structured["items"].size(), static_cast<std::size_t>(limit));
      for (const auto& item : r->structured["items"]) ids.push_back(item["id"].get<std::string>());
      if (r->structured["truncated"].get<bool>()) *saw_truncation = true;
      if (!r->structured["has_more"].get<bool>()) break;
      cursor = r->structured["next_cursor"];
    }
    return ids;
  }

  std::unique_ptr<Env> env_;
  engines::EngineModulePtr module_;
  config::Config cfg_;
  engines::EngineServices services_;
  protocol::ToolRegistry registry_;
};

TEST_F(DynamoIntegration, ListTargets) {
  auto r = call("list_dynamodb_targets", Json::object());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->structured["targets"].size(), 5U);
  EXPECT_EQ(r->structured["targets"][1]["attributes"], (Json{"id", "title"}));
}

TEST_F(DynamoIntegration, GetItemEveryAttributeType) {
  auto r =
      call("get_dynamodb_item",
           {{"target", "docs"}, {"partition_key", "doc-all-types"}, {"consistent_read", true}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["found"], true);
  EXPECT_EQ(sortedSets(r->structured["item"]), sortedSets(kAllTypesAgent));
}

TEST_F(DynamoIntegration, GetItemProjectionNotFoundAndOperatorValues) {
  auto r = call("get_dynamodb_item", {{"target", "docs_public"}, {"partition_key", "doc-007"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["item"],
            (Json{{"id", "doc-007"}, {"title", "Title 7"}}));  // no body, no secret_note

  for (const char* v : {"doc-999", "{\"$ne\":null}", "a OR 1=1", "doc-00*"}) {
    r = call("get_dynamodb_item", {{"target", "docs"}, {"partition_key", v}});
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->structured["found"], false) << v;
  }
}

TEST_F(DynamoIntegration, GetItemCompositeKeyTypedAsNumber) {
  auto r = call("get_dynamodb_item",
                {{"target", "events"}, {"partition_key", "odd"}, {"sort_key", "30"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["item"], (Json{{"cat", "odd"}, {"seq", 30}, {"what", "event 3"}}));
  r = call("get_dynamodb_item", {{"target", "events"}, {"partition_key", "odd"}, {"sort_key", 30}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["found"], true);
  r = call("get_dynamodb_item",
           {{"target", "events"}, {"partition_key", "odd"}, {"sort_key", "thirty"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  r = call("get_dynamodb_item", {{"target", "events"}, {"partition_key", "odd"}});
  ASSERT_FALSE(r.ok());
}

TEST_F(DynamoIntegration, CursorPagingVisitsEveryItemExactlyOnce) {
  int calls = 0;
  bool truncated = false;
  auto ids = scanAll("docs", 7, &calls, &truncated);
  std::multiset<std::string> seen(ids.begin(), ids.end());
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kDocs));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), static_cast<std::size_t>(kDocs));
  EXPECT_EQ(seen.count("doc-all-types"), 1U);
  EXPECT_GE(calls, kDocs / 7);
  EXPECT_FALSE(truncated);
}

TEST_F(DynamoIntegration, ByteCapTruncatesExplicitlyAndPagingStillCoversEverything) {
  int calls = 0;
  bool truncated = false;
  auto ids = scanAll("docs_small", 50, &calls, &truncated);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(kDocs));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), static_cast<std::size_t>(kDocs));

  auto r = call("scan_dynamodb_table", {{"target", "docs_small"}, {"limit", 50}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["truncated"], true);
  EXPECT_LT(r->structured["count"].get<int>(), 50);
  EXPECT_NE(r->structured["note"].get<std::string>().find("max_bytes"), std::string::npos);
}

TEST_F(DynamoIntegration, ScanLimitsAndCursorBinding) {
  auto r = call("scan_dynamodb_table", {{"target", "docs_public"}, {"limit", 11}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  r = call("scan_dynamodb_table", {{"target", "docs"}, {"limit", 5}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->structured["items"].size(), 5U);
  const Json cursor = r->structured["next_cursor"];
  ASSERT_TRUE(cursor.is_string());
  // Same table, other target: the cursor does not transfer.
  r = call("scan_dynamodb_table", {{"target", "docs_public"}, {"cursor", cursor}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  // Default limit.
  r = call("scan_dynamodb_table", {{"target", "events"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->structured["count"], 23);
  EXPECT_EQ(r->structured["has_more"], false);
}

TEST_F(DynamoIntegration, CountApproximateAndExactWithCap) {
  auto r = call("count_dynamodb_items", {{"target", "docs"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["approximate"], true);
  // DynamoDB Local keeps ItemCount current; dynalite never updates it (always 0). Real DynamoDB
  // refreshes it about every six hours, which the note says.
  const std::string kind = serverKind();
  ASSERT_TRUE(kind == "dynamodb-local" || kind == "dynalite")
      << "MCPDB_DYNAMODB_SERVER must be dynalite or dynamodb-local (scripts/servers.sh env, "
         "scripts/in-dynamodb-local.sh), got '"
      << kind << "'";
  EXPECT_EQ(r->structured["approximate_count"], kind == "dynamodb-local" ? kDocs : 0);
  EXPECT_NE(r->structured["note"].get<std::string>().find("six hours"), std::string::npos);

  r = call("count_dynamodb_items", {{"target", "docs"}, {"exact", true}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["exact_count"]["count"], kDocs);
  EXPECT_EQ(r->structured["exact_count"]["complete"], true);
  EXPECT_EQ(r->structured["exact_count"]["capped"], false);

  r = call("count_dynamodb_items", {{"target", "docs_public"}, {"exact", true}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->structured["exact_count"]["count"], 20);
  EXPECT_EQ(r->structured["exact_count"]["capped"], true);
  EXPECT_EQ(r->structured["exact_count"]["complete"], false);

  r = call("count_dynamodb_items", {{"target", "events"}, {"exact", true}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
}

TEST_F(DynamoIntegration, MissingTableIsNotFound) {
  for (const auto& [tool, args] : std::vector<std::pair<std::string, Json>>{
           {"get_dynamodb_item", {{"target", "missing"}, {"partition_key", "x"}}},
           {"scan_dynamodb_table", {{"target", "missing"}}},
           {"count_dynamodb_items", {{"target", "missing"}}},
           {"count_dynamodb_items", {{"target", "missing"}, {"exact", true}}}}) {
    SCOPED_TRACE(tool);
    auto r = call(tool, args);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Code::NotFound);
    EXPECT_EQ(r.error().message,
              "target 'missing': DynamoDB table not found in this region and account "
              "(ResourceNotFoundException)");
  }
}

TEST_F(DynamoIntegration, SelfCheckReportsAViolationWithoutIamAndWritesNothing) {
  auto t = rawTransport();
  auto before = t->call("Scan", {{"TableName", kDocsTable}, {"Select", "COUNT"}}, opts());
  ASSERT_TRUE(before.ok());
  auto findings = module_->selfCheck(services_);
  // One probe per distinct table: a violation for each existing table (neither local server has
  // IAM), inconclusive (not proof either way) for the missing one.
  std::map<std::string, engines::Finding::Severity> verdicts;
  for (const auto& f : findings) {
    if (f.check != "dynamodb.write_denied") continue;
    const std::string table =
        f.message.substr(6, f.message.find(' ', 6) - 6);  // "table NAME (target ...)"
    EXPECT_EQ(verdicts.count(table), 0U) << "probed twice: " << table;
    verdicts[table] = f.severity;
    if (table != kMissingTable) {
      EXPECT_NE(f.message.find("principal may write: the write was only stopped by the condition"),
                std::string::npos)
          << f.message;
    }
  }
  EXPECT_EQ(verdicts, (std::map<std::string, engines::Finding::Severity>{
                          {kDocsTable, engines::Finding::Severity::Violation},
                          {kEventsTable, engines::Finding::Severity::Violation},
                          {kMissingTable, engines::Finding::Severity::Inconclusive}}));
  auto after = t->call("Scan", {{"TableName", kDocsTable}, {"Select", "COUNT"}}, opts());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["Count"], (*before)["Count"]);
  auto probe = t->call(
      "GetItem", {{"TableName", kDocsTable}, {"Key", {{"id", {{"S", "mcpdb-self-check-probe"}}}}}},
      opts());
  ASSERT_TRUE(probe.ok());
  EXPECT_FALSE(probe->contains("Item"));
}

std::vector<engines::DemoDocument> demoDocuments() {
  auto docs =
      engines::readDemoDocuments(std::string(MCPDB_SOURCE_DIR) + "/data/demo_documents.jsonl");
  EXPECT_TRUE(docs.ok()) << docs.error().message;
  return docs.ok() ? *docs : std::vector<engines::DemoDocument>{};
}

TEST_F(DynamoIntegration, DemoLoaderIsIdempotentAndTheDefaultSectionServesIt) {
  auto docs = demoDocuments();
  ASSERT_GE(docs.size(), 20U);
  engines::DemoLoadContext ctx;
  ctx.env = env_.get();
  for (int run = 0; run < 2; ++run) {
    auto r = dynamodb::demoLoader().load(docs, ctx);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  // The built-in section on the loaded tables.
  auto module = makeModule();
  config::Diagnostics diag("default");
  auto cfg = config::parseConfig("version: 1\n" + std::string(defaultSectionYaml()), "default",
                                 {"dynamodb"}, diag);
  module->configure(config::Node(cfg.root, "", diag).child("dynamodb"), cfg.limits);
  ASSERT_TRUE(diag.ok());
  protocol::ToolRegistry tools;
  ASSERT_TRUE(module->registerTools(tools, services_).ok());
  protocol::CallContext ctx2;
  ctx2.limits = cfg.limits;
  ctx2.deadline = std::chrono::steady_clock::now() + 20s;
  auto count = tools.find("count_dynamodb_items")
                   ->handler({{"target", "demo_events"}, {"exact", true}}, ctx2);
  ASSERT_TRUE(count.ok()) << count.error().message;
  EXPECT_EQ(count->structured["exact_count"]["count"], docs.size());
  auto item = tools.find("get_dynamodb_item")
                  ->handler({{"target", "demo_events"},
                             {"partition_key", docs[0].category},
                             {"sort_key", docs[0].published + "#" + docs[0].id}},
                            ctx2);
  ASSERT_TRUE(item.ok()) << item.error().message;
  EXPECT_EQ(item->structured["item"]["title"], docs[0].title);
  // Self-check findings for the demo tables: reachable, key schema as configured.
  for (const auto& f : module->selfCheck(services_)) {
    EXPECT_NE(f.check, "dynamodb.key_schema") << f.message;
    if (f.check == "dynamodb.reachable") {
      EXPECT_EQ(f.severity, engines::Finding::Severity::Ok) << f.message;
    }
  }
}

// ---- schema resources -----------------------------------------------------------------------

Result<Json> readResource(const protocol::ToolRegistry& reg, const std::string& uri) {
  const protocol::Resource* r = reg.findResource(uri);
  if (r == nullptr) return makeError(Code::NotFound, "no resource " + uri);
  protocol::CallContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + 20s;
  return r->read(ctx);
}

TEST_F(DynamoIntegration, ResourcesDescribeTheConfiguredTablesOnly) {
  std::vector<std::string> uris;
  for (const auto& r : registry_.resources()) uris.push_back(r->uri);
  std::vector<std::string> want = {tableResourceUri(kDocsTable), tableResourceUri(kEventsTable),
                                   tableResourceUri(kMissingTable)};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(uris, want);
  // Tables on the same server that no target reads have none.
  for (const char* other : {"mcp_demo_documents", "mcp_demo_events"}) {
    EXPECT_EQ(registry_.findResource(tableResourceUri(other)), nullptr) << other;
  }

  auto docs = readResource(registry_, tableResourceUri(kDocsTable));
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ((*docs)["table"], kDocsTable);
  EXPECT_EQ((*docs)["key_schema"],
            Json::parse(R"({"partition_key": {"name": "id", "type": "S"}, "sort_key": null})"));
  EXPECT_EQ((*docs)["indexes"], Json::array());
  ASSERT_EQ((*docs)["targets"].size(), 3U);
  std::map<std::string, Json> by_name;
  for (const Json& t : (*docs)["targets"]) by_name[t["name"].get<std::string>()] = t;
  EXPECT_EQ(by_name["docs"]["all_fields"], true);
  EXPECT_EQ(by_name["docs"]["fields"], (Json{"id"}));
  EXPECT_EQ(by_name["docs_public"]["all_fields"], false);
  EXPECT_EQ(by_name["docs_public"]["fields"], (Json{"id", "title"}));
  EXPECT_EQ(by_name["docs_public"]["max_rows"], 10);
  EXPECT_EQ(by_name["docs_public"]["exact_count"], (Json{{"enabled", true}, {"max_items", 20}}));
  for (const auto& [name, t] : by_name) EXPECT_EQ(t["key_schema_matches_table"], true) << name;
  EXPECT_EQ((*docs)["tools"], (Json{"count_dynamodb_items", "get_dynamodb_item",
                                    "list_dynamodb_targets", "scan_dynamodb_table"}));

  auto events = readResource(registry_, tableResourceUri(kEventsTable));
  ASSERT_TRUE(events.ok()) << events.error().message;
  EXPECT_EQ((*events)["key_schema"], Json::parse(R"({"partition_key": {"name": "cat", "type": "S"},
                                                     "sort_key": {"name": "seq", "type": "N"}})"));
  EXPECT_EQ((*events)["targets"][0]["fields"], (Json{"cat", "seq"}));

  // No item value and no table statistic. The table names are cut out first: their random suffix
  // may contain the item count's digits.
  std::string text = docs->dump() + events->dump();
  for (const std::string& table : {kDocsTable, kEventsTable}) {
    for (auto at = text.find(table); at != std::string::npos; at = text.find(table, at)) {
      text.erase(at, table.size());
    }
  }
  for (const std::string& v :
       {std::string("Title 7"), std::string("not for agents"), std::string("doc-001"),
        std::string("xxxxxxxx"), std::string("event 3"), std::to_string(kDocs)}) {
    EXPECT_EQ(text.find(v), std::string::npos) << v;
  }
}

TEST_F(DynamoIntegration, ResourceOfAMissingTableIsAnErrorRead) {
  auto r = readResource(registry_, tableResourceUri(kMissingTable));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::NotFound);
  EXPECT_EQ(r.error().message, "table '" + kMissingTable +
                                   "': DynamoDB table not found in this region and account "
                                   "(ResourceNotFoundException)");
}

TEST_F(DynamoIntegration, ResourceReportsTheTablesIndexes) {
  const std::string table = "itest_" + kSuffix + "_indexed";
  auto t = rawTransport();
  Json request = Json::parse(R"({
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "N"},
                                 {"AttributeName": "status", "AttributeType": "S"},
                                 {"AttributeName": "placed", "AttributeType": "N"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "by_status",
          "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
          "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["total"]}}],
        "LocalSecondaryIndexes": [{"IndexName": "by_placed",
          "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                        {"AttributeName": "placed", "KeyType": "RANGE"}],
          "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        "BillingMode": "PAY_PER_REQUEST"})");
  request["TableName"] = table;
  auto made = t->call("CreateTable", request, opts());
  ASSERT_TRUE(made.ok()) << made.error().message;
  struct Drop {
    Transport& t;
    const std::string& table;
    ~Drop() { (void)t.call("DeleteTable", {{"TableName", table}}, opts()); }
  } drop{*t, table};
  for (int i = 0; i < 100; ++i) {
    auto d = t->call("DescribeTable", {{"TableName", table}}, opts());
    if (d.ok() && (*d)["Table"]["TableStatus"] == "ACTIVE") break;
    std::this_thread::sleep_for(50ms);
  }
  auto module = makeModule();
  config::Diagnostics diag("indexed.yaml");
  auto cfg = config::parseConfig(
      "dynamodb:\n  targets:\n    orders:\n      table: " + table +
          "\n      description: orders\n      partition_key: {name: pk, type: S}\n"
          "      sort_key: {name: sk, type: N}\n",
      "indexed.yaml", {"dynamodb"}, diag);
  module->configure(config::Node(cfg.root, "", diag).child("dynamodb"), cfg.limits);
  ASSERT_TRUE(diag.ok()) << diag.errors()[0];
  protocol::ToolRegistry reg;
  ASSERT_TRUE(module->registerTools(reg, services_).ok());
  auto d = readResource(reg, tableResourceUri(table));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ((*d)["indexes"], Json::parse(R"([
    {"name": "by_placed", "kind": "local", "projection": "KEYS_ONLY",
     "partition_key": {"name": "pk", "type": "S"}, "sort_key": {"name": "placed", "type": "N"}},
    {"name": "by_status", "kind": "global", "projection": "INCLUDE", "projected_fields": ["total"],
     "partition_key": {"name": "status", "type": "S"}, "sort_key": null}])"))
      << d->dump(2);
  EXPECT_EQ((*d)["targets"][0]["key_schema_matches_table"], true);
}

TEST_F(DynamoIntegration, DefaultSectionResources) {
  auto docs = demoDocuments();
  ASSERT_GE(docs.size(), 20U);
  engines::DemoLoadContext load;
  load.env = env_.get();
  auto loaded = dynamodb::demoLoader().load(docs, load);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  auto module = makeModule();
  config::Diagnostics diag("default");
  auto cfg = config::parseConfig("version: 1\n" + std::string(defaultSectionYaml()), "default",
                                 {"dynamodb"}, diag);
  module->configure(config::Node(cfg.root, "", diag).child("dynamodb"), cfg.limits);
  ASSERT_TRUE(diag.ok());
  protocol::ToolRegistry reg;
  ASSERT_TRUE(module->registerTools(reg, services_).ok());
  ASSERT_EQ(reg.resources().size(), 2U);

  auto documents = readResource(reg, "mcpdb://dynamodb/tables/mcp_demo_documents");
  ASSERT_TRUE(documents.ok()) << documents.error().message;
  EXPECT_EQ((*documents)["key_schema"],
            Json::parse(R"({"partition_key": {"name": "id", "type": "S"}, "sort_key": null})"));
  EXPECT_EQ((*documents)["targets"][0]["fields"],
            (Json{"body", "category", "id", "published", "tags", "title"}));
  EXPECT_EQ((*documents)["targets"][0]["key_schema_matches_table"], true);

  auto events = readResource(reg, "mcpdb://dynamodb/tables/mcp_demo_events");
  ASSERT_TRUE(events.ok()) << events.error().message;
  EXPECT_EQ((*events)["key_schema"],
            Json::parse(R"({"partition_key": {"name": "category", "type": "S"},
                            "sort_key": {"name": "published_id", "type": "S"}})"));
  EXPECT_EQ((*events)["targets"][0]["all_fields"], true);
  EXPECT_EQ((*events)["targets"][0]["key_schema_matches_table"], true);

  // No demo row value (the configured descriptions may quote an example id, so titles and bodies).
  const std::string text = documents->dump() + events->dump();
  for (const auto& doc : docs) {
    EXPECT_EQ(text.find(doc.title), std::string::npos) << doc.title;
    EXPECT_EQ(text.find(doc.body.substr(0, 40)), std::string::npos) << doc.id;
  }
}

}  // namespace
}  // namespace mcpdb::dynamodb

namespace mcpdb::dynamodb {
namespace {

// Two named sources on the same local server, the second through its own variable names (set in
// the test's Env only), and a third whose key variable is unset: each source serves its own
// targets and is named in the call's audit sink; the unset one fails alone, naming its variable and
// never a value, and the others go on working.
TEST_F(DynamoIntegration, NamedSourcesServeTheirOwnTargetsAndFailAlone) {
  const Env process = Env::process();
  const std::string key_id = process.get("AWS_ACCESS_KEY_ID").value_or("");
  const std::string secret = process.get("AWS_SECRET_ACCESS_KEY").value_or("");
  ASSERT_FALSE(key_id.empty() || secret.empty()) << missingEnvMessage();
  const std::map<std::string, std::string, std::less<>> extra = {
      {"MCPDB_ITEST_DDB_URL", process.get("AWS_ENDPOINT_URL_DYNAMODB").value_or("")},
      {"MCPDB_ITEST_KEY_ID", key_id},
      {"MCPDB_ITEST_SECRET", secret}};
  const Env env([extra, process](std::string_view name) -> std::optional<std::string> {
    if (auto it = extra.find(name); it != extra.end()) return it->second;
    return process.get(name);
  });
  const std::string region = process.get("AWS_REGION").value_or("");
  const std::string target_rest =
      "table: " + kDocsTable + ", description: docs, partition_key: {name: id, type: S}";
  const std::string yaml =
      "dynamodb:\n"
      "  sources:\n"
      "    local: {}\n"
      "    second:\n"
      "      region: " +
      region +
      "\n"
      "      endpoint_env: MCPDB_ITEST_DDB_URL\n"
      "      access_key_id_env: MCPDB_ITEST_KEY_ID\n"
      "      secret_access_key_env: MCPDB_ITEST_SECRET\n"
      "    unset:\n"
      "      region: " +
      region +
      "\n"
      "      endpoint_env: MCPDB_ITEST_DDB_URL\n"
      "      access_key_id_env: MCPDB_ITEST_UNSET_KEY_ID\n"
      "      secret_access_key_env: MCPDB_ITEST_SECRET\n"
      "  targets:\n"
      "    docs_local: {source: local, " +
      target_rest +
      "}\n"
      "    docs_second: {source: second, " +
      target_rest +
      "}\n"
      "    docs_unset: {source: unset, " +
      target_rest + "}\n";
  auto module = makeModule();
  config::Diagnostics diag("sources.yaml");
  auto cfg = config::parseConfig(yaml, "sources.yaml", {"dynamodb"}, diag);
  ASSERT_TRUE(diag.ok()) << diag.errors()[0];
  module->configure(config::Node(cfg.root, "", diag).child("dynamodb"), cfg.limits);
  ASSERT_TRUE(diag.ok()) << diag.errors()[0];
  EXPECT_TRUE(module->enabled(env));
  engines::EngineServices services = services_;
  services.env = &env;
  protocol::ToolRegistry tools;
  ASSERT_TRUE(module->registerTools(tools, services).ok());

  const auto get = [&](const std::string& target, protocol::CallAudit* audit) {
    protocol::CallContext ctx;
    ctx.limits = cfg.limits;
    ctx.deadline = std::chrono::steady_clock::now() + 20s;
    auto r = tools.find("get_dynamodb_item")
                 ->handler({{"target", target}, {"partition_key", docId(3)}}, ctx);
    *audit = ctx.audit;
    return r;
  };
  protocol::CallAudit audit;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    auto local = get("docs_local", &audit);
    ASSERT_TRUE(local.ok()) << local.error().message;
    EXPECT_EQ(local->structured["item"]["title"], "Title 3");
    EXPECT_EQ(audit.source, "local");

    auto second = get("docs_second", &audit);
    ASSERT_TRUE(second.ok()) << second.error().message;
    EXPECT_EQ(second->structured["item"], local->structured["item"]);
    EXPECT_EQ(audit.source, "second");

    auto unset = get("docs_unset", &audit);
    ASSERT_FALSE(unset.ok());
    EXPECT_EQ(unset.error().code, Code::FailedPrecondition);
    EXPECT_EQ(unset.error().message,
              "target 'docs_unset': dynamodb source 'unset': MCPDB_ITEST_UNSET_KEY_ID is not set");
    EXPECT_EQ(audit.source, "unset");
    EXPECT_EQ(unset.error().message.find(secret), std::string::npos);
    EXPECT_EQ(unset.error().message.find(key_id), std::string::npos);
  }

  // doctor: one finding per target, each naming its source; only the unset source's is not ok.
  for (const auto& f : module->checkTools(services)) {
    SCOPED_TRACE(f.message);
    EXPECT_EQ(f.message.find(secret), std::string::npos);
    if (f.message.rfind("source 'unset': ", 0) == 0) {
      EXPECT_EQ(f.severity, engines::Finding::Severity::Inconclusive);
      EXPECT_NE(f.message.find("MCPDB_ITEST_UNSET_KEY_ID is not set"), std::string::npos);
    } else {
      EXPECT_TRUE(f.message.rfind("source 'local': ", 0) == 0 ||
                  f.message.rfind("source 'second': ", 0) == 0);
      EXPECT_EQ(f.severity, engines::Finding::Severity::Ok);
    }
  }
}

}  // namespace
}  // namespace mcpdb::dynamodb
