// OpenAI-compatible provider against a local fake server: request shape, retries, errors, secrecy.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <mutex>

#include "common/json.hpp"
#include "embed/openai_embedder.hpp"
#include "support/fake_http_server.hpp"

namespace mcpdb::embed {
namespace {

using test::FakeHttpServer;
using test::FakeRequest;
using test::FakeResponse;
using namespace std::chrono_literals;

constexpr const char* kKey = "sk-test-SECRET-7f3a9c";

// Answers like the OpenAI API: one `dim`-wide vector per input, [i+1, 1, 1, ...], in reverse order.
FakeResponse okResponse(const FakeRequest& r, std::size_t dim) {
  Json body = Json::parse(r.body);
  Json data = Json::array();
  const std::size_t n = body["input"].size();
  for (std::size_t i = n; i-- > 0;) {
    std::vector<double> v(dim, 1.0);
    v[0] = static_cast<double>(i + 1);
    data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", v}});
  }
  Json out = {{"object", "list"}, {"data", data}, {"model", body["model"]}};
  return FakeResponse{200, {{"Content-Type", "application/json"}}, out.dump()};
}

struct Fixture {
  std::vector<std::chrono::milliseconds> sleeps;
  std::mutex mu;

  OpenAiOptions options(const std::string& url, std::size_t dim = 4) {
    OpenAiOptions o;
    o.url = resolveEmbeddingsUrl(url);
    o.model = "text-embedding-test";
    o.apiKey = kKey;
    o.dimension = dim;
    o.timeout = 2000ms;
    o.sleep = [this](std::chrono::milliseconds d) {
      std::lock_guard lock(mu);
      sleeps.push_back(d);
    };
    return o;
  }
};

std::unique_ptr<OpenAiEmbedder> make(OpenAiOptions o) {
  auto e = OpenAiEmbedder::create(std::move(o));
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e.value()) : nullptr;
}

void expectNoSecret(const Error& e) {
  EXPECT_EQ(e.message.find(kKey), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("SECRET"), std::string::npos) << e.message;
}

TEST(EmbedOpenAi, ResolvesEndpointUrl) {
  EXPECT_EQ(resolveEmbeddingsUrl("https://api.openai.com"), "https://api.openai.com/v1/embeddings");
  EXPECT_EQ(resolveEmbeddingsUrl("https://api.openai.com/v1/"),
            "https://api.openai.com/v1/embeddings");
  EXPECT_EQ(resolveEmbeddingsUrl("http://h:8080/v1/embeddings"), "http://h:8080/v1/embeddings");
  EXPECT_EQ(resolveEmbeddingsUrl("http://h/openai/deployments/x/embeddings"),
            "http://h/openai/deployments/x/embeddings");
}

TEST(EmbedOpenAi, SendsRequestAndNormalisesInOrder) {
  FakeHttpServer server([](const FakeRequest& r) { return okResponse(r, 4); });
  Fixture f;
  auto e = make(f.options(server.url()));
  ASSERT_NE(e, nullptr);
  std::vector<std::string> texts{"alpha", "beta", "데이터"};
  auto v = e->embed(texts);
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const double first = static_cast<double>(i + 1);
    const double norm = std::sqrt(first * first + 3);
    EXPECT_NEAR((*v)[i][0], first / norm, 1e-6);
    EXPECT_NEAR((*v)[i][1], 1 / norm, 1e-6);
  }
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path(), "/v1/embeddings");
  EXPECT_EQ(reqs[0].header("authorization").value_or(""), std::string("Bearer ") + kKey);
  EXPECT_EQ(reqs[0].header("content-type").value_or(""), "application/json");
  Json body = Json::parse(reqs[0].body);
  EXPECT_EQ(body["model"], "text-embedding-test");
  EXPECT_EQ(body["input"], Json::array({"alpha", "beta", "데이터"}));
  EXPECT_FALSE(body.contains("dimensions"));
  EXPECT_EQ(e->modelId(), "openai:text-embedding-test:4");
}

TEST(EmbedOpenAi, SplitsLargeBatches) {
  FakeHttpServer server([](const FakeRequest& r) { return okResponse(r, 4); });
  Fixture f;
  auto o = f.options(server.url());
  o.maxBatch = 2;
  o.sendDimensions = true;
  auto e = make(o);
  std::vector<std::string> texts{"a", "b", "c", "d", "e"};
  auto v = e->embed(texts);
  ASSERT_TRUE(v.ok()) << v.error().message;
  ASSERT_EQ(v->size(), 5u);
  EXPECT_EQ(server.requestCount(), 3u);
  EXPECT_NEAR((*v)[4][0], 1 / std::sqrt(4.0), 1e-6);  // "e" is the first of its request
  EXPECT_EQ(Json::parse(server.requests()[0].body)["dimensions"], 4);
}

TEST(EmbedOpenAi, DimensionMismatchIsAClearError) {
  FakeHttpServer server([](const FakeRequest& r) { return okResponse(r, 1536); });
  Fixture f;
  auto e = make(f.options(server.url(), 512));
  auto v = e->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::FailedPrecondition);
  EXPECT_NE(v.error().message.find("1536-dimensional"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("embedding.dimension is 512"), std::string::npos)
      << v.error().message;
}

TEST(EmbedOpenAi, RetriesRateLimitsWithBackoff) {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const FakeRequest& r) {
    if (++calls <= 2)
      return FakeResponse{429,
                          {{"Content-Type", "application/json"}},
                          R"({"error":{"code":"rate_limit_exceeded"}})"};
    return okResponse(r, 4);
  });
  Fixture f;
  auto e = make(f.options(server.url()));
  auto v = e->embedOne("x");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(server.requestCount(), 3u);
  EXPECT_EQ(f.sleeps, (std::vector<std::chrono::milliseconds>{250ms, 500ms}));
}

TEST(EmbedOpenAi, HonoursRetryAfter) {
  std::atomic<int> calls{0};
  FakeHttpServer server([&](const FakeRequest& r) {
    if (++calls == 1) return FakeResponse{503, {{"Retry-After", "2"}}, ""};
    return okResponse(r, 4);
  });
  Fixture f;
  auto e = make(f.options(server.url()));
  ASSERT_TRUE(e->embedOne("x").ok());
  EXPECT_EQ(f.sleeps, (std::vector<std::chrono::milliseconds>{2000ms}));
}

TEST(EmbedOpenAi, GivesUpAfterMaxRetries) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{502, {}, "bad gateway"}; });
  Fixture f;
  auto o = f.options(server.url());
  o.maxRetries = 2;
  auto e = make(o);
  auto v = e->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::Unavailable);
  EXPECT_EQ(server.requestCount(), 3u);
  EXPECT_NE(v.error().message.find("HTTP 502"), std::string::npos) << v.error().message;
  EXPECT_EQ(f.sleeps.size(), 2u);
}

TEST(EmbedOpenAi, RateLimitExhaustedIsResourceExhausted) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{429, {}, ""}; });
  Fixture f;
  auto o = f.options(server.url());
  o.maxRetries = 1;
  auto v = make(o)->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::ResourceExhausted);
}

TEST(EmbedOpenAi, BadKeyIsNeverEchoed) {
  // Real providers quote (part of) the key back in the message: it must not reach our error.
  FakeHttpServer server([](const FakeRequest& r) {
    Json body = {
        {"error",
         {{"message", "Incorrect API key provided: " + r.header("authorization").value_or("")},
          {"type", "invalid_request_error"},
          {"code", "invalid_api_key"}}}};
    return FakeResponse{401, {{"Content-Type", "application/json"}}, body.dump()};
  });
  Fixture f;
  auto v = make(f.options(server.url()))->embedOne("confidential input text");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::PermissionDenied);
  EXPECT_NE(v.error().message.find("invalid_api_key"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("MCPDB_EMBED_API_KEY"), std::string::npos) << v.error().message;
  EXPECT_EQ(v.error().message.find("confidential"), std::string::npos);
  expectNoSecret(v.error());
  EXPECT_EQ(server.requestCount(), 1u);  // no retry
}

TEST(EmbedOpenAi, ClientErrorsAreNotRetried) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{
        400,
        {},
        R"({"error":{"message":"input 'secret row value' too long","code":"context_length_exceeded"}})"};
  });
  Fixture f;
  auto v = make(f.options(server.url()))->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::InvalidArgument);
  EXPECT_EQ(v.error().message.find("secret row value"), std::string::npos);
  EXPECT_NE(v.error().message.find("context_length_exceeded"), std::string::npos);
  EXPECT_EQ(server.requestCount(), 1u);
}

TEST(EmbedOpenAi, NotFoundPointsAtTheUrlSetting) {
  FakeHttpServer server([](const FakeRequest&) { return FakeResponse{404, {}, "nope"}; });
  Fixture f;
  auto v = make(f.options(server.url() + "/wrong/embeddings"))->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::FailedPrecondition);
  EXPECT_NE(v.error().message.find("MCPDB_EMBED_URL"), std::string::npos);
  EXPECT_EQ(v.error().message.find("/wrong"), std::string::npos);  // only scheme://host:port
}

TEST(EmbedOpenAi, MalformedResponses) {
  for (const std::string& body :
       {std::string("not json"), std::string(R"({"data": 5})"),
        std::string(R"({"data": [{"embedding": [1, 2, 3, "x"]}]})"),
        std::string(R"({"data": [{"embedding": [1, 2, 3, 4], "index": 7}]})"),
        std::string(R"({"data": []})")}) {
    FakeHttpServer server([&](const FakeRequest&) { return FakeResponse{200, {}, body}; });
    Fixture f;
    auto v = make(f.options(server.url()))->embedOne("x");
    ASSERT_FALSE(v.ok()) << body;
    EXPECT_EQ(v.error().code, Code::Unavailable) << body;
  }
}

TEST(EmbedOpenAi, ConnectionRefusedIsRetriedThenUnavailable) {
  Fixture f;
  auto o = f.options("http://127.0.0.1:" + std::to_string(test::unusedLocalPort()));
  o.maxRetries = 1;
  auto v = make(o)->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::Unavailable);
  EXPECT_EQ(f.sleeps.size(), 1u);
  expectNoSecret(v.error());
}

TEST(EmbedOpenAi, TimeoutIsNotRetried) {
  FakeHttpServer server([](const FakeRequest& r) {
    auto resp = okResponse(r, 4);
    resp.delay = 1500ms;
    return resp;
  });
  Fixture f;
  auto o = f.options(server.url());
  o.timeout = 200ms;
  auto v = make(o)->embedOne("x");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::TimedOut);
  EXPECT_TRUE(f.sleeps.empty());
}

TEST(EmbedOpenAi, ConcurrentCallers) {
  FakeHttpServer server([](const FakeRequest& r) { return okResponse(r, 4); });
  Fixture f;
  auto e = make(f.options(server.url()));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (!e->embedOne("x").ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(server.requestCount(), 40u);
}

TEST(EmbedOpenAi, OversizedTextIsRefusedLocally) {
  FakeHttpServer server([](const FakeRequest& r) { return okResponse(r, 4); });
  Fixture f;
  auto o = f.options(server.url());
  o.maxInputBytes = 8;
  auto v = make(o)->embedOne("123456789");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, Code::InvalidArgument);
  EXPECT_EQ(server.requestCount(), 0u);
}

}  // namespace
}  // namespace mcpdb::embed
