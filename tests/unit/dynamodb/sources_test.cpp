// Named sources against two fake DynamoDB servers: each target reads its own source (region,
// endpoint and keys from its own variables, the exact signed request), a source whose variable is
// unset fails alone and clearly without a value in the message, the audit sink names the source,
// the self-check names each source, resources are per source, and enabled() asks any source.
#include <utility>  // before any Boost header (via the fake server)

#include <gtest/gtest.h>

#include <ctime>

#include "aws/sigv4.hpp"
#include "config/config.hpp"
#include "engines/dynamodb/module.hpp"
#include "engines/dynamodb/resources.hpp"
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

constexpr const char* kEuKeyId = "AKIDEUEXAMPLE";
constexpr const char* kEuSecret = "eu/secret+value/EXAMPLEKEY";
constexpr const char* kEuToken = "eu-session-token";
constexpr const char* kBrokenKeyId = "AKIDBROKENEXAMPLE";

constexpr const char* kConfig = R"(
dynamodb:
  sources:
    main: {}
    eu:
      region: eu-central-1
      endpoint_env: EU_DDB_URL
      access_key_id_env: EU_KEY_ID
      secret_access_key_env: EU_SECRET_KEY
      session_token_env: EU_TOKEN
    broken:
      region: us-west-2
      endpoint_env: BROKEN_DDB_URL
      access_key_id_env: BROKEN_KEY_ID
      secret_access_key_env: BROKEN_SECRET_KEY
  targets:
    docs: {source: main, table: docs_table, description: Documents, partition_key: {name: id, type: S}}
    eu_docs: {source: eu, table: docs_table, description: EU documents, partition_key: {name: id, type: S}}
    gone: {source: broken, table: docs_table, description: Unreachable, partition_key: {name: id, type: S}}
)";

std::string targetOp(const FakeRequest& r) {
  std::string t = r.header("X-Amz-Target").value_or("");
  return t.substr(t.find('.') + 1);
}

FakeResponse answer(const FakeRequest& r) {
  if (targetOp(r) == "GetItem") return {200, {}, Json{{"Item", {{"id", {{"S", "a"}}}}}}.dump()};
  if (targetOp(r) == "Scan") return {200, {}, Json{{"Count", 0}, {"ScannedCount", 0}}.dump()};
  if (targetOp(r) == "DescribeTable") {
    return {200,
            {},
            Json{{"Table",
                  {{"TableStatus", "ACTIVE"},
                   {"KeySchema", {{{"AttributeName", "id"}, {"KeyType", "HASH"}}}},
                   {"AttributeDefinitions", {{{"AttributeName", "id"}, {"AttributeType", "S"}}}}}}}
                .dump()};
  }
  return {400, {}, R"({"__type":"com.amazon.coral.service#AccessDeniedException"})"};
}

// "20261202T204500Z" -> the time it names.
aws::Clock::time_point parseAmzDate(const std::string& s) {
  std::tm tm{};
  tm.tm_year = std::stoi(s.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(s.substr(4, 2)) - 1;
  tm.tm_mday = std::stoi(s.substr(6, 2));
  tm.tm_hour = std::stoi(s.substr(9, 2));
  tm.tm_min = std::stoi(s.substr(11, 2));
  tm.tm_sec = std::stoi(s.substr(13, 2));
  return aws::Clock::from_time_t(timegm(&tm));
}

class DynamoSources : public ::testing::Test, protected ModuleHarness {
 protected:
  void SetUp() override {
    main_ = std::make_unique<FakeHttpServer>(answer);
    eu_ = std::make_unique<FakeHttpServer>(answer);
    setUpModule(kConfig, "sources.yaml",
                Env::fromMap({{"AWS_REGION", "us-east-1"},
                              {"AWS_ENDPOINT_URL_DYNAMODB", main_->url()},
                              {"AWS_ACCESS_KEY_ID", "AKIDMAIN"},
                              {"AWS_SECRET_ACCESS_KEY", "main-secret"},
                              {"EU_DDB_URL", eu_->url() + "/eu/"},
                              {"EU_KEY_ID", kEuKeyId},
                              {"EU_SECRET_KEY", kEuSecret},
                              {"EU_TOKEN", kEuToken},
                              {"BROKEN_DDB_URL", main_->url()},
                              {"BROKEN_KEY_ID", kBrokenKeyId}}));
  }

  Result<protocol::ToolOutput> get(const std::string& target) {
    return call(kGetItemTool, {{"target", target}, {"partition_key", "a"}});
  }

  std::unique_ptr<FakeHttpServer> main_;
  std::unique_ptr<FakeHttpServer> eu_;
};

TEST_F(DynamoSources, EachTargetReadsItsSourceAndTheAuditNamesIt) {
  auto docs = get("docs");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ(audit_.source, "main");
  EXPECT_EQ(main_->requestCount(), 1U);
  EXPECT_EQ(eu_->requestCount(), 0U);

  auto eu = get("eu_docs");
  ASSERT_TRUE(eu.ok()) << eu.error().message;
  EXPECT_EQ(eu->structured["found"], true);
  EXPECT_EQ(audit_.source, "eu");
  EXPECT_EQ(main_->requestCount(), 1U);
  EXPECT_EQ(eu_->requestCount(), 1U);

  auto list = call(kListTargetsTool, Json::object());
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(audit_.source, "");  // several sources: the list reads none
  std::vector<std::string> sources;
  for (const auto& t : list->structured["targets"]) sources.push_back(t["source"]);
  EXPECT_EQ(sources, (std::vector<std::string>{"main", "eu", "broken"}));
}

// The eu source's request, byte for byte: its endpoint's host and path, its region in the scope,
// its own keys and session token, and the signature they give.
TEST_F(DynamoSources, ASourceSignsWithItsOwnRegionEndpointAndKeys) {
  ASSERT_TRUE(get("eu_docs").ok());
  const auto reqs = eu_->requests();
  ASSERT_EQ(reqs.size(), 1U);
  const FakeRequest& q = reqs[0];
  EXPECT_EQ(q.method, "POST");
  EXPECT_EQ(q.target, "/eu/");
  EXPECT_EQ(q.header("Host").value_or(""), "127.0.0.1:" + std::to_string(eu_->port()));
  EXPECT_EQ(q.header("X-Amz-Target").value_or(""), "DynamoDB_20120810.GetItem");
  EXPECT_EQ(q.header("X-Amz-Security-Token").value_or(""), kEuToken);
  EXPECT_EQ(Json::parse(q.body), (Json{{"TableName", "docs_table"},
                                       {"Key", {{"id", {{"S", "a"}}}}},
                                       {"ConsistentRead", false}}));

  aws::SignableRequest expected;
  expected.method = "POST";
  expected.path = "/eu/";
  expected.headers = {{"Host", *q.header("Host")},
                      {"Content-Type", "application/x-amz-json-1.0"},
                      {"X-Amz-Target", "DynamoDB_20120810.GetItem"}};
  expected.body = q.body;
  aws::Credentials creds;
  creds.accessKeyId = kEuKeyId;
  creds.secretAccessKey = kEuSecret;
  creds.sessionToken = kEuToken;
  const auto sig = aws::signHeaders(
      expected, creds, {"eu-central-1", "dynamodb", parseAmzDate(*q.header("X-Amz-Date"))});
  EXPECT_EQ(q.header("Authorization").value_or(""), sig.authorization);
  EXPECT_NE(sig.authorization.find(std::string("Credential=") + kEuKeyId + "/" +
                                   q.header("X-Amz-Date")->substr(0, 8) +
                                   "/eu-central-1/dynamodb/aws4_request"),
            std::string::npos)
      << sig.authorization;
}

TEST_F(DynamoSources, AnUnsetVariableFailsOnlyItsOwnSource) {
  auto gone = get("gone");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, Code::FailedPrecondition);
  EXPECT_EQ(gone.error().message,
            "target 'gone': dynamodb source 'broken': BROKEN_SECRET_KEY is not set");
  EXPECT_EQ(gone.error().message.find(kBrokenKeyId), std::string::npos);
  EXPECT_EQ(audit_.source, "broken");
  EXPECT_EQ(main_->requestCount(), 0U);  // nothing was sent

  // The other sources are unaffected, before and after.
  ASSERT_TRUE(get("docs").ok());
  EXPECT_EQ(audit_.source, "main");
  ASSERT_TRUE(get("eu_docs").ok());
  EXPECT_FALSE(get("gone").ok());
  ASSERT_TRUE(get("eu_docs").ok());
  EXPECT_EQ(audit_.source, "eu");
}

TEST_F(DynamoSources, AnUnsetEndpointVariableIsNamed) {
  const Env env = Env::fromMap(
      {{"AWS_REGION", "us-east-1"}, {"EU_KEY_ID", kEuKeyId}, {"EU_SECRET_KEY", kEuSecret}});
  services_.env = &env;
  auto m = makeModule();
  config::Diagnostics diag("sources.yaml");
  m->configure(config::Node(cfg_.root, "", diag).child("dynamodb"), cfg_.limits);
  protocol::ToolRegistry tools;
  ASSERT_TRUE(m->registerTools(tools, services_).ok());
  protocol::CallContext ctx;
  ctx.limits = cfg_.limits;
  auto r = tools.find(kGetItemTool)->handler({{"target", "eu_docs"}, {"partition_key", "a"}}, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "target 'eu_docs': dynamodb source 'eu': EU_DDB_URL is not set");
  EXPECT_EQ(ctx.audit.source, "eu");
}

TEST_F(DynamoSources, SelfCheckAndDoctorNameEachSource) {
  for (const auto& findings : {module_->selfCheck(services_), module_->checkTools(services_)}) {
    ASSERT_FALSE(findings.empty());
    bool main_ok = false, eu_ok = false, broken_named = false;
    for (const auto& f : findings) {
      SCOPED_TRACE(f.message);
      EXPECT_EQ(f.message.rfind("source '", 0), 0U);
      EXPECT_EQ(f.message.find(kBrokenKeyId), std::string::npos);
      EXPECT_EQ(f.message.find(kEuSecret), std::string::npos);
      if (f.message.rfind("source 'main': ", 0) == 0)
        main_ok |= f.severity == engines::Finding::Severity::Ok;
      if (f.message.rfind("source 'eu': ", 0) == 0)
        eu_ok |= f.severity == engines::Finding::Severity::Ok;
      if (f.message.rfind("source 'broken': ", 0) == 0) {
        EXPECT_EQ(f.severity, engines::Finding::Severity::Inconclusive);
        broken_named |= f.message.find("BROKEN_SECRET_KEY is not set") != std::string::npos;
      }
    }
    EXPECT_TRUE(main_ok);
    EXPECT_TRUE(eu_ok);
    EXPECT_TRUE(broken_named);
  }
}

TEST_F(DynamoSources, ResourcesArePerSource) {
  std::vector<std::string> uris;
  for (const auto& r : registry_.resources()) uris.push_back(r->uri);
  EXPECT_EQ(uris, (std::vector<std::string>{"mcpdb://dynamodb/sources/broken/tables/docs_table",
                                            "mcpdb://dynamodb/sources/eu/tables/docs_table",
                                            "mcpdb://dynamodb/sources/main/tables/docs_table"}));
  ASSERT_EQ(registry_.templates().size(), 1U);
  EXPECT_EQ(registry_.templates()[0].uri_template,
            "mcpdb://dynamodb/sources/{source}/tables/{table}");
  protocol::CallContext ctx;
  ctx.deadline = std::chrono::steady_clock::now() + 5s;
  auto eu = registry_.findResource(tableResourceUri("eu", "docs_table"))->read(ctx);
  ASSERT_TRUE(eu.ok()) << eu.error().message;
  EXPECT_EQ((*eu)["source"], "eu");
  EXPECT_EQ((*eu)["targets"].size(), 1U);
  EXPECT_EQ((*eu)["targets"][0]["name"], "eu_docs");
  EXPECT_EQ(ctx.audit.source, "eu");
  EXPECT_EQ(eu_->requestCount(), 1U);
  EXPECT_EQ(main_->requestCount(), 0U);
}

// The connection gauges add up every source's pool; sampling creates no transport.
TEST_F(DynamoSources, GaugesSumEverySource) {
  const auto gauges = module_->gauges();
  ASSERT_EQ(gauges.size(), 2U);
  EXPECT_EQ(gauges[1].name, "http_connections_idle");
  EXPECT_EQ(gauges[1].sample(), 0.0);
  ASSERT_TRUE(get("docs").ok());
  EXPECT_EQ(gauges[1].sample(), 1.0);
  ASSERT_TRUE(get("eu_docs").ok());
  EXPECT_EQ(gauges[1].sample(), 2.0);
  EXPECT_EQ(gauges[0].sample(), 0.0);  // nothing in flight
}

TEST_F(DynamoSources, EnabledWhenAnySourceIsUsable) {
  EXPECT_TRUE(module_->enabled(Env::fromMap({{"AWS_REGION", "eu-west-1"}})));  // main
  EXPECT_TRUE(module_->enabled(Env::fromMap(  // eu: its region is in the file
      {{"EU_DDB_URL", "http://x"},
       {"EU_KEY_ID", "k"},
       {"EU_SECRET_KEY", "s"},
       {"EU_TOKEN", "t"}})));
  EXPECT_FALSE(module_->enabled(Env::fromMap(  // eu without its token, broken without its secret
      {{"EU_DDB_URL", "http://x"},
       {"EU_KEY_ID", "k"},
       {"EU_SECRET_KEY", "s"},
       {"BROKEN_DDB_URL", "http://x"},
       {"BROKEN_KEY_ID", "k"}})));
  EXPECT_FALSE(module_->enabled(Env::fromMap({})));
}

}  // namespace
}  // namespace mcpdb::dynamodb
