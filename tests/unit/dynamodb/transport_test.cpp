// The JSON API transport against a fake server: headers and signing, connection reuse, the retry
// policy (throttling and 5xx only), and the error mapping.
#include <utility>  // before any Boost header (via the fake server)

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "engines/dynamodb/transport.hpp"
#include "support/fake_http_server.hpp"

namespace mcpdb::dynamodb {
namespace {

using namespace std::chrono_literals;
using test::FakeHttpServer;
using test::FakeRequest;
using test::FakeResponse;

constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

CredentialSource fixedCredentials() {
  return []() -> Result<aws::Credentials> {
    aws::Credentials c;
    c.accessKeyId = "AKIDEXAMPLE";
    c.secretAccessKey = kSecret;
    c.sessionToken = "session-token-example";
    c.source = "test";
    return c;
  };
}

std::unique_ptr<Transport> transportFor(const FakeHttpServer& server, int max_attempts = 4) {
  TransportOptions o;
  o.region = "us-east-1";
  auto e = parseEndpoint(server.url());
  EXPECT_TRUE(e.ok());
  o.endpoint = *e;
  o.retry.max_attempts = max_attempts;
  o.retry.base = 1ms;
  o.retry.cap = 5ms;
  return std::make_unique<Transport>(o, fixedCredentials());
}

FakeResponse awsError(int status, const std::string& type, const std::string& message = "details") {
  return FakeResponse{
      status,
      {{"Content-Type", "application/x-amz-json-1.0"}},
      Json{{"__type", "com.amazonaws.dynamodb.v20120810#" + type}, {"message", message}}.dump()};
}

FakeResponse okReply(const Json& body) {
  return FakeResponse{200, {{"Content-Type", "application/x-amz-json-1.0"}}, body.dump()};
}

TEST(DynamoTransport, SendsTheJsonApiRequestSigned) {
  FakeHttpServer server([](const FakeRequest&) {
    return okReply({{"Table", {{"TableStatus", "ACTIVE"}}}});
  });
  auto t = transportFor(server);
  CallInfo info;
  auto r = t->call("DescribeTable", {{"TableName", "tbl"}}, CallOptions{}, &info);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["Table"]["TableStatus"], "ACTIVE");
  EXPECT_EQ(info.attempts, 1);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1U);
  const auto& q = reqs[0];
  EXPECT_EQ(q.method, "POST");
  EXPECT_EQ(q.target, "/");
  EXPECT_EQ(q.body, R"({"TableName":"tbl"})");
  EXPECT_EQ(q.header("X-Amz-Target").value_or(""), "DynamoDB_20120810.DescribeTable");
  EXPECT_EQ(q.header("Content-Type").value_or(""), "application/x-amz-json-1.0");
  EXPECT_EQ(q.header("Host").value_or(""), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(q.header("X-Amz-Security-Token").value_or(""), "session-token-example");
  const std::string auth = q.header("Authorization").value_or("");
  EXPECT_EQ(auth.rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0U) << auth;
  EXPECT_NE(auth.find("/us-east-1/dynamodb/aws4_request"), std::string::npos);
  EXPECT_NE(auth.find("x-amz-target"), std::string::npos);  // the operation is signed
  EXPECT_EQ(auth.find(kSecret), std::string::npos);
}

TEST(DynamoTransport, ReusesTheConnection) {
  FakeHttpServer server([](const FakeRequest&) { return okReply(Json::object()); });
  auto t = transportFor(server);
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(t->call("Scan", {{"TableName", "tbl"}}, CallOptions{}).ok());
  EXPECT_EQ(server.requestCount(), 5U);
  EXPECT_EQ(server.connectionCount(), 1U);
}

// The connection gauges: a request holds one connection while it runs; afterwards it is idle
// in the pool. A failed connection is dropped and no longer counted as in use.
TEST(DynamoTransport, ConnectionStatsCountLeasedAndIdleConnections) {
  std::promise<void> arrived;
  std::promise<void> answer;
  std::shared_future<void> answer_now = answer.get_future().share();
  std::atomic<int> n{0};
  FakeHttpServer server([&](const FakeRequest&) {
    if (n++ == 0) {
      arrived.set_value();
      answer_now.wait();
    }
    return okReply(Json::object());
  });
  auto t = transportFor(server);
  EXPECT_EQ(t->connectionStats().in_use, 0U);
  EXPECT_EQ(t->connectionStats().idle, 0U);
  std::thread call([&] {
    EXPECT_TRUE(t->call("Scan", {{"TableName", "tbl"}}, CallOptions{}).ok());
  });
  arrived.get_future().wait();
  EXPECT_EQ(t->connectionStats().in_use, 1U);
  answer.set_value();
  call.join();
  EXPECT_EQ(t->connectionStats().in_use, 0U);
  EXPECT_EQ(t->connectionStats().idle, 1U);

  TransportOptions o;
  o.region = "us-east-1";
  o.endpoint = *parseEndpoint("http://127.0.0.1:" + std::to_string(test::unusedLocalPort()));
  Transport refused(o, fixedCredentials());
  EXPECT_FALSE(refused.call("Scan", {{"TableName", "tbl"}}, CallOptions{}).ok());
  EXPECT_EQ(refused.connectionStats().in_use, 0U);
  EXPECT_EQ(refused.connectionStats().idle, 0U);
}

TEST(DynamoTransport, RetriesThrottlingThenSucceeds) {
  for (const char* type :
       {"ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded"}) {
    SCOPED_TRACE(type);
    std::atomic<int> n{0};
    FakeHttpServer server([&](const FakeRequest&) {
      return n++ == 0 ? awsError(400, type) : okReply({{"Count", 3}});
    });
    auto t = transportFor(server);
    CallInfo info;
    auto r = t->call("Scan", {{"TableName", "tbl"}}, CallOptions{}, &info);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)["Count"], 3);
    EXPECT_EQ(info.attempts, 2);
    EXPECT_EQ(server.requestCount(), 2U);
  }
}

TEST(DynamoTransport, Retries5xxThenSucceeds) {
  std::atomic<int> n{0};
  FakeHttpServer server([&](const FakeRequest&) {
    const int i = n++;
    if (i == 0) return FakeResponse{503, {}, "Service Unavailable"};
    if (i == 1) return awsError(500, "InternalServerError");
    return okReply({{"Items", Json::array()}});
  });
  auto t = transportFor(server);
  CallInfo info;
  auto r = t->call("Scan", {{"TableName", "tbl"}}, CallOptions{}, &info);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(info.attempts, 3);
}

TEST(DynamoTransport, DoesNotRetryValidationOrAccessErrors) {
  for (auto [type, code] : std::vector<std::pair<std::string, Code>>{
           {"ValidationException", Code::InvalidArgument},
           {"AccessDeniedException", Code::PermissionDenied},
           {"UnrecognizedClientException", Code::PermissionDenied},
           {"ResourceNotFoundException", Code::NotFound},
           {"ConditionalCheckFailedException", Code::FailedPrecondition}}) {
    SCOPED_TRACE(type);
    FakeHttpServer server([&](const FakeRequest&) {
      return awsError(400, type, "One or more parameter values were invalid: secret-value-xyz");
    });
    auto t = transportFor(server);
    CallInfo info;
    auto r = t->call("GetItem", {{"TableName", "tbl"}}, CallOptions{}, &info);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, code);
    EXPECT_EQ(info.attempts, 1);
    EXPECT_EQ(info.error_type, type);
    EXPECT_EQ(server.requestCount(), 1U);
    // AWS's message text (which can quote values) is never passed on.
    EXPECT_EQ(r.error().message.find("secret-value-xyz"), std::string::npos);
  }
}

TEST(DynamoTransport, ThrottledAfterAllAttemptsIsResourceExhausted) {
  FakeHttpServer server([](const FakeRequest&) { return awsError(400, "ThrottlingException"); });
  auto t = transportFor(server, 3);
  CallInfo info;
  auto r = t->call("Scan", {{"TableName", "tbl"}}, CallOptions{}, &info);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted);
  EXPECT_EQ(r.error().message,
            "DynamoDB throttled the request (ThrottlingException) after 3 attempts; retry in a few "
            "seconds");
  EXPECT_EQ(server.requestCount(), 3U);
}

TEST(DynamoTransport, Persistent5xxIsUnavailable) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{502, {}, "bad gateway"}; });
  auto t = transportFor(server, 2);
  auto r = t->call("Scan", {{"TableName", "tbl"}}, CallOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable);
  EXPECT_EQ(r.error().message, "DynamoDB returned HTTP 502 after 2 attempts");
  EXPECT_EQ(server.requestCount(), 2U);
}

TEST(DynamoTransport, RetriesStopAtTheDeadline) {
  FakeHttpServer server([](const FakeRequest&) { return awsError(400, "ThrottlingException"); });
  TransportOptions o;
  o.region = "us-east-1";
  o.endpoint = *parseEndpoint(server.url());
  o.retry.max_attempts = 50;
  o.retry.base = 200ms;
  o.retry.cap = 200ms;
  Transport t(o, fixedCredentials());
  CallOptions opts;
  opts.deadline = std::chrono::steady_clock::now() + 600ms;
  const auto start = std::chrono::steady_clock::now();
  auto r = t.call("Scan", {{"TableName", "tbl"}}, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_LT(server.requestCount(), 50U);
}

// A retry that the call's deadline cuts short still reports the throttling that made it retry.
TEST(DynamoTransport, ARetryCutShortByTheDeadlineReportsWhatMadeItRetry) {
  std::atomic<int> seen{0};
  FakeHttpServer server([&seen](const FakeRequest&) {
    if (seen++ == 0) return awsError(400, "ThrottlingException");
    FakeResponse r = okReply(Json::object());
    r.delay = 1500ms;
    return r;
  });
  TransportOptions o;
  o.region = "us-east-1";
  o.endpoint = *parseEndpoint(server.url());
  o.retry.base = 1ms;
  o.retry.cap = 1ms;
  Transport t(o, fixedCredentials());
  CallOptions opts;
  opts.deadline = std::chrono::steady_clock::now() + 300ms;
  CallInfo info;
  auto r = t.call("Scan", {{"TableName", "tbl"}}, opts, &info);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::ResourceExhausted) << r.error().message;
  EXPECT_EQ(info.attempts, 2);
}

TEST(DynamoTransport, ConnectionRefusedIsUnavailableAndNotRetried) {
  TransportOptions o;
  o.region = "us-east-1";
  o.endpoint = *parseEndpoint("http://127.0.0.1:" + std::to_string(test::unusedLocalPort()));
  o.retry.base = 1ms;
  Transport t(o, fixedCredentials());
  CallInfo info;
  auto r = t.call("Scan", {{"TableName", "tbl"}}, CallOptions{}, &info);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::Unavailable);
  EXPECT_EQ(info.attempts, 1);
}

TEST(DynamoTransport, SlowServerTimesOut) {
  FakeHttpServer server([](const FakeRequest&) {
    FakeResponse r = okReply(Json::object());
    r.delay = 1500ms;
    return r;
  });
  auto t = transportFor(server);
  CallOptions opts;
  opts.deadline = std::chrono::steady_clock::now() + 200ms;
  auto r = t->call("Scan", {{"TableName", "tbl"}}, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::TimedOut);
  EXPECT_EQ(r.error().message, "DynamoDB call exceeded its time limit");
}

TEST(DynamoTransport, CredentialErrorsPassThroughWithoutACall) {
  FakeHttpServer server([](const FakeRequest&) { return okReply(Json::object()); });
  TransportOptions o;
  o.region = "us-east-1";
  o.endpoint = *parseEndpoint(server.url());
  Transport t(o, environmentCredentials(Env::fromMap({})));
  auto r = t.call("Scan", {{"TableName", "tbl"}}, CallOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::FailedPrecondition);
  EXPECT_EQ(server.requestCount(), 0U);
}

TEST(DynamoTransport, ErrorTypeParsing) {
  EXPECT_EQ(
      errorTypeOf(R"({"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException"})"),
      "ResourceNotFoundException");
  EXPECT_EQ(errorTypeOf(R"({"__type":"ThrottlingException"})"), "ThrottlingException");
  EXPECT_EQ(errorTypeOf("<html>"), "");
  EXPECT_TRUE(isRetryable(500, ""));
  EXPECT_TRUE(isRetryable(400, "ThrottlingException"));
  EXPECT_FALSE(isRetryable(400, "ValidationException"));
  EXPECT_FALSE(isRetryable(403, "AccessDeniedException"));
  // A garbage exception name is not echoed.
  EXPECT_EQ(mapServiceError(400, "<script>value", 1).message,
            "unexpected DynamoDB reply: HTTP 400 (unknown error)");
}

TEST(DynamoEndpoint, Resolution) {
  auto e = resolveEndpoint(Env::fromMap({{"AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:28000"},
                                         {"AWS_ENDPOINT_URL", "http://other:1"}}),
                           "us-east-1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->url, "http://127.0.0.1:28000/");
  EXPECT_EQ(e->host, "127.0.0.1:28000");
  e = resolveEndpoint(Env::fromMap({{"AWS_ENDPOINT_URL", "https://ddb.local/base"}}), "us-east-1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->url, "https://ddb.local/base");
  EXPECT_EQ(e->path, "/base");
  e = resolveEndpoint(Env::fromMap({}), "eu-west-1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->url, "https://dynamodb.eu-west-1.amazonaws.com/");
  e = resolveEndpoint(Env::fromMap({}), "cn-north-1");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->url, "https://dynamodb.cn-north-1.amazonaws.com.cn/");
  EXPECT_FALSE(resolveEndpoint(Env::fromMap({}), "evil.com/x").ok());
  EXPECT_FALSE(
      resolveEndpoint(Env::fromMap({{"AWS_ENDPOINT_URL_DYNAMODB", "ftp://x"}}), "us-east-1").ok());
  EXPECT_FALSE(resolveEndpoint(Env::fromMap({{"AWS_ENDPOINT_URL_DYNAMODB", "http://user:pw@x"}}),
                               "us-east-1")
                   .ok());
}

}  // namespace
}  // namespace mcpdb::dynamodb
