#include <utility>  // before any Boost header (via the fake server)

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "common/http_client.hpp"
#include "support/fake_http_server.hpp"

namespace mcpdb {
namespace {

using namespace std::chrono_literals;
using test::FakeHttpServer;
using test::FakeRequest;
using test::FakeResponse;

TEST(HttpClient, SendsMethodHeadersBodyAndReadsResponse) {
  FakeHttpServer server([](const FakeRequest& r) {
    return FakeResponse{
        201, {{"X-Reply", "  yes  "}, {"Content-Type", "text/plain"}}, "got " + r.body};
  });
  HttpClient client;
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/a/b?x=1";
  req.headers = {{"X-Test", "42"}, {"Content-Type", "application/json"}};
  req.body = "{\"k\":1}";
  auto res = client.send(req);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 201);
  EXPECT_EQ(res->body, "got {\"k\":1}");
  EXPECT_EQ(res->header("x-reply").value_or(""), "yes");
  EXPECT_EQ(res->header("CONTENT-TYPE").value_or(""), "text/plain");

  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/a/b?x=1");
  EXPECT_EQ(seen[0].path(), "/a/b");
  EXPECT_EQ(seen[0].header("x-test").value_or(""), "42");
  EXPECT_EQ(seen[0].body, "{\"k\":1}");
  EXPECT_FALSE(seen[0].header("expect").has_value());
}

TEST(HttpClient, PutWithEmptyBodyAndGetReuseOneConnection) {
  FakeHttpServer server([](const FakeRequest& r) { return FakeResponse{200, {}, r.method}; });
  HttpClient client;
  auto put =
      client.send({.method = "PUT", .url = server.url() + "/t", .headers = {{"X-Ttl", "21600"}}});
  ASSERT_TRUE(put.ok()) << put.error().message;
  EXPECT_EQ(put->body, "PUT");
  auto get = client.send({.method = "GET", .url = server.url() + "/t"});
  ASSERT_TRUE(get.ok()) << get.error().message;
  EXPECT_EQ(get->body, "GET");
  auto seen = server.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].header("content-length").value_or(""), "0");
  EXPECT_EQ(server.connectionCount(), 1u);  // keep-alive reuse
}

TEST(HttpClient, NonSuccessStatusIsAValue) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{503, {}, "busy"}; });
  HttpClient client;
  auto res = client.send({.url = server.url()});
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->status, 503);
}

TEST(HttpClient, TimeoutIsTimedOut) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{200, {}, "late", 3s}; });
  HttpClient client;
  auto start = std::chrono::steady_clock::now();
  auto res = client.send({.url = server.url() + "/slow?token=secret", .totalTimeout = 200ms});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::TimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(res.error().message.find("secret"), std::string::npos);
  EXPECT_EQ(res.error().message.find("/slow"), std::string::npos);
}

TEST(HttpClient, ConnectionRefusedIsUnavailable) {
  HttpClient client;
  auto port = test::unusedLocalPort();
  auto res = client.send({.url = "http://127.0.0.1:" + std::to_string(port) + "/"});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::Unavailable);
}

TEST(HttpClient, DroppedConnectionIsUnavailable) {
  FakeHttpServer server([](const FakeRequest&) {
    FakeResponse r;
    r.dropConnection = true;
    return r;
  });
  HttpClient client;
  auto res = client.send({.url = server.url()});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::Unavailable);
}

TEST(HttpClient, RejectsOtherSchemes) {
  HttpClient client;
  auto res = client.send({.url = "file:///etc/passwd"});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::InvalidArgument);
}

TEST(HttpClient, StopTokenCancelsInFlightCall) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{200, {}, "late", 5s}; });
  HttpClient client;
  std::stop_source source;
  std::thread canceller([&] {
    std::this_thread::sleep_for(150ms);
    source.request_stop();
  });
  auto start = std::chrono::steady_clock::now();
  auto res = client.send({.url = server.url(), .stop = source.get_token()});
  canceller.join();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::Cancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(HttpClient, CallbackCancelsAndPreCancelledNeverSends) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{200, {}, "late", 5s}; });
  HttpClient client;
  std::atomic<bool> flag{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(150ms);
    flag = true;
  });
  auto res = client.send({.url = server.url(), .cancelled = [&] { return flag.load(); }});
  canceller.join();
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::Cancelled);

  server.clearRequests();
  auto again = client.send({.url = server.url(), .cancelled = [] { return true; }});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, Code::Cancelled);
  EXPECT_EQ(server.requestCount(), 0u);
}

TEST(HttpClient, ResponseSizeIsBounded) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{200, {}, std::string(10000, 'x')};
  });
  HttpClient client(HttpClientOptions{.maxResponseBytes = 1000});
  auto res = client.send({.url = server.url()});
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, Code::ResourceExhausted);
}

TEST(HttpClient, RedactUrlKeepsOnlyOrigin) {
  EXPECT_EQ(redactUrl("https://user:pw@host.example:8443/p/a?X-Amz-Signature=abc"),
            "https://host.example:8443");
  EXPECT_EQ(redactUrl("http://127.0.0.1:1234"), "http://127.0.0.1:1234");
  EXPECT_EQ(redactUrl("nonsense"), "<url>");
}

}  // namespace
}  // namespace mcpdb
