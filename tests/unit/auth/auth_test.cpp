#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "auth/api_key.hpp"
#include "auth/auth_throttle.hpp"
#include "auth/clients.hpp"
#include "auth/keys_command.hpp"
#include "auth/rate_limiter.hpp"
#include "auth/scope.hpp"
#include "auth/token_bucket.hpp"
#include "config/config.hpp"

namespace mcpdb::auth {
namespace {

using namespace std::chrono_literals;

TEST(ApiKey, GeneratedKeysAreLongRandomAndUrlSafe) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string k = generateApiKey();
    ASSERT_EQ(k.rfind("mcpdb_", 0), 0u);
    ASSERT_EQ(k.size(), 6u + 43u);  // 256 bits base64url, no padding
    ASSERT_EQ(
        k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", 6),
        std::string::npos);
    ASSERT_TRUE(seen.insert(k).second);
  }
}

TEST(ApiKey, Sha256HexMatchesKnownVector) {
  EXPECT_EQ(toHex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  auto d = digestFromHex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD");
  ASSERT_TRUE(d);
  EXPECT_TRUE(digestEquals(*d, sha256("abc")));
  EXPECT_FALSE(digestEquals(*d, sha256("abd")));
  EXPECT_FALSE(digestFromHex("abc"));
  EXPECT_FALSE(digestFromHex(std::string(63, 'a') + "g"));
}

TEST(ApiKey, BearerHeaderParsing) {
  EXPECT_EQ(bearerToken("Bearer abc").value_or(""), "abc");
  EXPECT_EQ(bearerToken("bearer   abc  ").value_or(""), "abc");
  EXPECT_FALSE(bearerToken("Basic abc"));
  EXPECT_FALSE(bearerToken("Bearer"));
  EXPECT_FALSE(bearerToken("Bearer "));
  EXPECT_FALSE(bearerToken("Bearerabc"));
  EXPECT_FALSE(bearerToken("Bearer " + std::string(600, 'x')));
}

TEST(Scope, ParsesEnginesAndTools) {
  auto s = Scope::parse(
      "postgres, mongodb:get_mongodb_document:count_mongodb_documents,dynamodb:get_dynamodb_item");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_TRUE(s->allows("postgres", "anything"));
  EXPECT_TRUE(s->allows("mongodb", "get_mongodb_document"));
  EXPECT_TRUE(s->allows("mongodb", "count_mongodb_documents"));
  EXPECT_FALSE(s->allows("mongodb", "list_mongodb_documents"));
  EXPECT_TRUE(s->allows("dynamodb", "get_dynamodb_item"));
  EXPECT_FALSE(s->allows("dynamodb", "scan_dynamodb_table"));
  // A tool name alone never grants another engine's tool of the same name.
  EXPECT_FALSE(s->allows("postgres2", "get_mongodb_document"));
  auto again = Scope::parse(s->toString());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->toString(), s->toString());
}

TEST(Scope, Everything) {
  auto s = Scope::parse("*");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->allows("x", "y"));
  EXPECT_EQ(s->toString(), "*");
}

TEST(Scope, RejectsBadEntries) {
  EXPECT_FALSE(Scope::parse(""));
  EXPECT_FALSE(Scope::parse(" , "));
  EXPECT_FALSE(Scope::parse("Postgres"));
  EXPECT_FALSE(Scope::parse("postgres:"));
  EXPECT_FALSE(Scope::parse("postgres:bad tool"));
  EXPECT_FALSE(Scope::parse("post gres"));
}

TEST(TokenBucket, BurstThenRateWithFakeClock) {
  const auto t0 = TokenBucket::Clock::time_point{} + 100s;
  TokenBucket b(/*rate=*/2.0, /*burst=*/3.0, t0);
  EXPECT_FALSE(b.tryTake(t0));
  EXPECT_FALSE(b.tryTake(t0));
  EXPECT_FALSE(b.tryTake(t0));
  auto wait = b.tryTake(t0);
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->count(), 500);  // 1 token at 2/s
  wait = b.tryTake(t0 + 250ms);
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->count(), 250);
  EXPECT_FALSE(b.tryTake(t0 + 500ms));
  EXPECT_TRUE(b.tryTake(t0 + 500ms));
  // Refill is capped at the burst.
  EXPECT_NEAR(b.tokens(t0 + 1000s), 3.0, 1e-9);
  // A clock going backwards adds nothing.
  EXPECT_NEAR(b.tokens(t0), 3.0, 1e-9);
}

TEST(TokenBucket, ReconfigureKeepsTokensCapped) {
  const auto t0 = TokenBucket::Clock::time_point{} + 1s;
  TokenBucket b(1.0, 10.0, t0);
  b.reconfigure(1.0, 2.0, t0);
  EXPECT_NEAR(b.tokens(t0), 2.0, 1e-9);
}

TEST(RateLimiter, PerClientBucketsAndConcurrency) {
  RateLimiter rl;
  const auto t0 = RateLimiter::Clock::time_point{} + 5s;
  RateSettings s{1.0, 1.0, 2};
  EXPECT_FALSE(rl.admit("a", s, t0));
  EXPECT_TRUE(rl.admit("a", s, t0));
  EXPECT_FALSE(rl.admit("b", s, t0));  // b has its own bucket
  EXPECT_EQ(rl.enterCalls("a", 2, s.max_concurrent), RateLimiter::Slots::Entered);
  EXPECT_EQ(rl.enterCalls("a", 1, s.max_concurrent), RateLimiter::Slots::OverCap);
  EXPECT_EQ(rl.enterCalls("b", 1, s.max_concurrent), RateLimiter::Slots::Entered);
  rl.leaveCalls("a", 1);
  EXPECT_EQ(rl.enterCalls("a", 1, s.max_concurrent), RateLimiter::Slots::Entered);
  EXPECT_EQ(rl.inFlight("a"), 2u);
}

config::Config parse(const std::string& text, config::Diagnostics& diag) {
  return config::parseConfig(text, "test.yaml", {"http"}, diag);
}

AuthSettings parseAuth(const std::string& text, config::Diagnostics& diag) {
  config::Config cfg = parse(text, diag);
  AuthSettings a;
  if (diag.ok()) (void)authSection().parse(config::Node(cfg.root, "", diag).child("http"), a);
  return a;
}

TEST(Clients, KeysNewOutputRoundTripsThroughTheConfig) {
  std::ostringstream out;
  std::ostringstream err;
  ASSERT_EQ(runKeysNew({"reporting-agent", "postgres,mongodb:count_mongodb_documents", 5.0, 7, 3},
                       out, err),
            0)
      << err.str();
  const std::string text = out.str();
  const auto at = text.find("mcpdb_");
  ASSERT_NE(at, std::string::npos);
  const std::string key = text.substr(at, 49);
  const auto clients_at = text.find("  clients:\n");
  ASSERT_NE(clients_at, std::string::npos);
  const std::string yaml = "http:\n" + text.substr(clients_at);
  EXPECT_EQ(yaml.find(key), std::string::npos) << "the config lines must not contain the key";

  config::Diagnostics diag("test.yaml");
  AuthSettings a = parseAuth(yaml, diag);
  ASSERT_TRUE(diag.ok()) << (diag.errors().empty() ? "" : diag.errors()[0]);
  ASSERT_EQ(a.clients.size(), 1u);
  ClientTable table(a.clients);
  const ClientEntry* c = table.authenticate(key);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->name, "reporting-agent");
  EXPECT_TRUE(c->scope.allows("postgres", "x"));
  EXPECT_TRUE(c->scope.allows("mongodb", "count_mongodb_documents"));
  EXPECT_FALSE(c->scope.allows("mongodb", "list_mongodb_documents"));
  EXPECT_DOUBLE_EQ(c->rate.rate, 5.0);
  EXPECT_DOUBLE_EQ(c->rate.burst, 7.0);
  EXPECT_EQ(c->rate.max_concurrent, 3u);
  EXPECT_EQ(table.authenticate(key + "x"), nullptr);
  EXPECT_EQ(table.authenticate(""), nullptr);
}

TEST(Clients, DefaultsApplyAndProblemsAreLocated) {
  const std::string h1 = toHex(sha256("k1"));
  const std::string h2 = toHex(sha256("k2"));
  config::Diagnostics ok("test.yaml");
  AuthSettings a = parseAuth(
      "http:\n  rate_limit: {rate: 3, burst: 4}\n  max_concurrent_calls: 9\n  clients:\n"
      "    - {name: a, key_sha256: " +
          h1 + ", scope: [postgres, \"mongodb:x\"]}\n",
      ok);
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(a.clients.size(), 1u);
  EXPECT_DOUBLE_EQ(a.clients[0].rate.rate, 3.0);
  EXPECT_EQ(a.clients[0].rate.max_concurrent, 9u);
  EXPECT_TRUE(a.clients[0].scope.allows("mongodb", "x"));

  config::Diagnostics bad("test.yaml");
  parseAuth(
      "http:\n  auth: maybe\n  clients:\n"
      "    - {name: a, key_sha256: " +
          h1 +
          ", scope: postgres}\n"
          "    - {name: a, key_sha256: " +
          h2 +
          ", scope: postgres}\n"
          "    - {name: b, key_sha256: " +
          h1 +
          ", scope: postgres}\n"
          "    - {name: c, key_sha256: nothex, scope: postgres}\n"
          "    - {name: d, key_sha256: " +
          h2 +
          ", scope: \"Bad\"}\n"
          "    - {name: \"e f\", key_sha256: " +
          h2 +
          ", scope: postgres}\n"
          "    - {name: g, key_sha256: " +
          h2 + ", scope: postgres, color: red}\n",
      bad);
  EXPECT_GE(bad.errors().size(), 7u);
  for (const auto& e : bad.errors()) EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
}

TEST(Clients, KeysNewRejectsBadArguments) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(runKeysNew({"bad name", "postgres", {}, {}, {}}, out, err), 2);
  EXPECT_EQ(runKeysNew({"ok", "Bad", {}, {}, {}}, out, err), 2);
  EXPECT_EQ(runKeysNew({"ok", "postgres", -1.0, {}, {}}, out, err), 2);
  EXPECT_TRUE(out.str().empty());
}

}  // namespace
}  // namespace mcpdb::auth

namespace mcpdb::auth {
namespace {

using namespace std::chrono_literals;

TEST(AuthThrottle, BacksOffExponentiallyAfterTheFreeFailures) {
  AuthThrottle t({3, 1000ms, 8000ms, 600000ms, 100});
  const auto t0 = AuthThrottle::Clock::time_point{} + 1h;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t.onFailure("10.0.0.1", t0).retry_after, 0ms);
  auto f = t.onFailure("10.0.0.1", t0);
  EXPECT_EQ(f.retry_after, 1000ms);
  EXPECT_TRUE(f.backoff_started);
  f = t.onFailure("10.0.0.1", t0 + 10ms);  // still backing off: longer, no new audit line
  EXPECT_EQ(f.retry_after, 2000ms);
  EXPECT_FALSE(f.backoff_started);
  for (int i = 0; i < 40; ++i) f = t.onFailure("10.0.0.1", t0 + 20ms);
  EXPECT_EQ(f.retry_after, 8000ms);  // capped
  EXPECT_EQ(t.inBackoff(t0 + 20ms), 1u);
  // Other sources are not affected.
  EXPECT_EQ(t.onFailure("10.0.0.2", t0).retry_after, 0ms);
  // Quiet for longer than forget_after: the source starts over.
  EXPECT_EQ(t.onFailure("10.0.0.1", t0 + 700s).retry_after, 0ms);
}

TEST(AuthThrottle, TracksABoundedNumberOfSources) {
  AuthThrottle t({1, 1000ms, 8000ms, 600000ms, 16});
  const auto t0 = AuthThrottle::Clock::time_point{} + 1h;
  for (int i = 0; i < 10000; ++i) (void)t.onFailure("10.1." + std::to_string(i), t0);
  EXPECT_EQ(t.size(), 16u);
  // The most recent sources are the ones kept.
  EXPECT_GT(t.onFailure("10.1.9999", t0).retry_after, 0ms);
  EXPECT_EQ(t.onFailure("10.1.0", t0).retry_after, 0ms);
}

}  // namespace
}  // namespace mcpdb::auth
