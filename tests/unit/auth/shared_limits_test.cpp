// The shared limits' lease logic against a fake store (issue #31): two SharedLimits over one store
// are two replicas; the store keeps one bucket per key and one failure count per source.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <map>

#include "auth/auth_throttle.hpp"
#include "auth/rate_limiter.hpp"
#include "auth/redis_limit_store.hpp"
#include "auth/shared_limits.hpp"
#include "auth/token_bucket.hpp"
#include "support/loopback_listener.hpp"

namespace mcpdb::auth {
namespace {

using namespace std::chrono_literals;
using Clock = SharedLimits::Clock;

// One store for every replica: its own clock (`now`), token buckets and failure counts kept with
// the project's own TokenBucket and AuthThrottle, and a switch that makes it unreachable.
class FakeStore final : public LimitStore {
 public:
  struct State {
    Clock::time_point now = Clock::time_point{} + 1h;
    std::atomic<bool> reachable{true};
    // Concurrency slots, read by the replicas' background threads too: under their own lock,
    // with their own clock (milliseconds; a count expires at `expires_ms`).
    std::mutex slots_mu;
    std::atomic<std::int64_t> slot_ms{0};
    int slot_calls = 0;
    std::int64_t last_ttl_ms = 0;
    struct Held {
      std::int64_t count = 0;
      std::int64_t expires_ms = 0;
    };
    std::map<std::string, std::map<std::string, Held>, std::less<>> slots;
    int token_calls = 0;
    int failure_calls = 0;
    std::map<std::string, TokenBucket, std::less<>> buckets;
    std::map<std::string, AuthThrottle, std::less<>> throttles;
  };
  explicit FakeStore(std::shared_ptr<State> s) : s_(std::move(s)) {}

  Result<TokenGrant> takeTokens(std::string_view key, double rate, double burst,
                                std::int64_t want) override {
    ++s_->token_calls;
    if (!s_->reachable) return Error{Code::Unavailable, "the shared limits store is unavailable"};
    auto it = s_->buckets.try_emplace(std::string(key), rate, burst, s_->now).first;
    TokenGrant g;
    while (g.granted < want) {
      auto wait = it->second.tryTake(s_->now);
      if (wait) {
        if (g.granted == 0) g.wait = *wait;
        break;
      }
      ++g.granted;
    }
    return g;
  }
  Result<FailureCount> recordFailure(std::string_view key,
                                     const AuthThrottleSettings& settings) override {
    ++s_->failure_calls;
    if (!s_->reachable) return Error{Code::Unavailable, "the shared limits store is unavailable"};
    auto it = s_->throttles.try_emplace(std::string(key), settings).first;
    const auto f = it->second.onFailure(key, s_->now);
    return FailureCount{static_cast<std::int64_t>(f.failures), f.retry_after, f.backoff_started};
  }
  // RedisLimitStore's kSetSlots, step for step.
  Result<SlotCount> setSlots(std::string_view key, std::string_view holder, std::int64_t held,
                             std::int64_t cap, std::chrono::milliseconds ttl) override {
    std::lock_guard<std::mutex> lock(s_->slots_mu);
    ++s_->slot_calls;
    if (!s_->reachable) return Error{Code::Unavailable, "the shared limits store is unavailable"};
    s_->last_ttl_ms = ttl.count();
    const std::int64_t now = s_->slot_ms;
    auto& holders = s_->slots[std::string(key)];
    std::int64_t others = 0;
    for (auto it = holders.begin(); it != holders.end();) {
      if (it->second.expires_ms <= now) {
        it = holders.erase(it);
        continue;
      }
      if (it->first != holder) others += it->second.count;
      ++it;
    }
    if (cap > 0 && held > 0 && others + held > cap) return SlotCount{false, others};
    if (held > 0) {
      holders[std::string(holder)] = {held, now + ttl.count()};
    } else {
      holders.erase(std::string(holder));
    }
    return SlotCount{true, others + held};
  }
  bool up() const override { return s_->reachable; }

 private:
  std::shared_ptr<State> s_;
};

std::shared_ptr<SharedLimits> replica(const std::shared_ptr<FakeStore::State>& state,
                                      SharedLimitsSettings settings = {}) {
  settings.store = "redis://127.0.0.1:6379/0";
  return std::make_shared<SharedLimits>(settings, std::make_unique<FakeStore>(state));
}

// Leases of four tokens, spent locally for at most 200 ms.
SharedLimitsSettings leasesOf4For200ms() {
  SharedLimitsSettings s;
  s.lease_tokens = 4;
  s.local_cache = 200ms;
  return s;
}

int admitted(SharedLimits& r, int calls, Clock::time_point now, const std::string& key = "k") {
  int n = 0;
  for (int i = 0; i < calls; ++i) {
    n += r.takeToken(key, 0.001, 10, now).verdict == SharedLimits::Verdict::Admitted ? 1 : 0;
  }
  return n;
}

TEST(SharedLimits, TwoReplicasTogetherAdmitTheKeysBurstOnce) {
  auto store = std::make_shared<FakeStore::State>();
  auto a = replica(store);
  auto b = replica(store);
  const auto now = Clock::time_point{} + 1h;
  int ok = 0;
  for (int i = 0; i < 40; ++i) ok += admitted(i % 2 == 0 ? *a : *b, 1, now);
  // Leases are taken from the bucket before they are spent: never more than the burst of 10
  // (each replica's own bucket would have admitted 20).
  EXPECT_EQ(ok, 10);
  // Another key has its own bucket.
  EXPECT_EQ(admitted(*a, 1, now, "other"), 1);
}

TEST(SharedLimits, ALeaseSavesRoundTripsAndARefusalIsRemembered) {
  auto store = std::make_shared<FakeStore::State>();
  auto a = replica(store, leasesOf4For200ms());
  const auto now = Clock::time_point{} + 1h;
  EXPECT_EQ(admitted(*a, 8, now), 8);
  EXPECT_EQ(store->token_calls, 2);  // two leases of 4
  EXPECT_EQ(admitted(*a, 10, now), 2);
  const int calls = store->token_calls;
  // Refused by the store: the refusal is used locally for local_cache_ms, without a round trip.
  const auto d = a->takeToken("k", 0.001, 10, now + 100ms);
  EXPECT_EQ(d.verdict, SharedLimits::Verdict::Limited);
  EXPECT_GT(d.wait, 0ms);
  EXPECT_EQ(store->token_calls, calls);
  (void)a->takeToken("k", 0.001, 10, now + 300ms);
  EXPECT_EQ(store->token_calls, calls + 1);
}

TEST(SharedLimits, AnExpiredLeaseIsDroppedNotSpent) {
  auto store = std::make_shared<FakeStore::State>();
  auto a = replica(store, leasesOf4For200ms());
  const auto now = Clock::time_point{} + 1h;
  EXPECT_EQ(admitted(*a, 1, now), 1);  // leases 4, spends 1
  EXPECT_EQ(store->token_calls, 1);
  EXPECT_EQ(admitted(*a, 1, now + 250ms), 1);  // lease expired: asks the store again
  EXPECT_EQ(store->token_calls, 2);
}

TEST(SharedLimits, LeasesNeverExceedTheBurstOrGoPastZeroCache) {
  auto store = std::make_shared<FakeStore::State>();
  SharedLimitsSettings s;
  s.lease_tokens = 100;
  auto a = replica(store, s);
  const auto now = Clock::time_point{} + 1h;
  (void)a->takeToken("k", 1, 3, now);
  // The lease is capped at the burst (3): the bucket is empty, the other replica is refused.
  auto b = replica(store, s);
  EXPECT_EQ(b->takeToken("k", 1, 3, now).verdict, SharedLimits::Verdict::Limited);
  // local_cache_ms 0: one token per round trip.
  s.local_cache = 0ms;
  auto c = replica(store, s);
  EXPECT_EQ(admitted(*c, 3, now, "z"), 3);
  EXPECT_EQ(store->token_calls, 5);
}

TEST(SharedLimits, StoreDownFailClosedRefusesAndSaysSo) {
  auto store = std::make_shared<FakeStore::State>();
  RateLimiter rl;
  rl.shareWith(replica(store));
  const RateSettings rate{0.001, 10, 4};
  store->reachable = false;
  const auto r = rl.admit("k", rate, Clock::time_point{} + 1h);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->store_down);
  // Back again: shared again.
  store->reachable = true;
  EXPECT_FALSE(rl.admit("k", rate, Clock::time_point{} + 1h));
  EXPECT_EQ(store->buckets.size(), 1u);
}

TEST(SharedLimits, StoreDownPerReplicaFallsBackToTheReplicasOwnBucketAndCounts) {
  auto store = std::make_shared<FakeStore::State>();
  SharedLimitsSettings s;
  s.on_store_down = OnStoreDown::PerReplica;
  auto shared = replica(store, s);
  RateLimiter rl;
  rl.shareWith(shared);
  const RateSettings rate{0.001, 3, 4};
  const auto now = Clock::time_point{} + 1h;
  store->reachable = false;
  int ok = 0;
  for (int i = 0; i < 5; ++i) {
    const auto r = rl.admit("k", rate, now);
    EXPECT_FALSE(r && r->store_down);
    ok += r ? 0 : 1;
  }
  EXPECT_EQ(ok, 3);  // the replica's own bucket (burst 3) decided
  EXPECT_EQ(shared->fallbacks(), 5u);
  EXPECT_EQ(shared->storeDownRefusals(), 0u);
  store->reachable = true;
  const int calls = store->token_calls;
  EXPECT_FALSE(rl.admit("k", rate, now));  // the shared bucket (untouched: full) again
  EXPECT_EQ(store->token_calls, calls + 1);
}

TEST(SharedLimits, WrongKeysSpreadOverReplicasAddUp) {
  auto store = std::make_shared<FakeStore::State>();
  const AuthThrottleSettings settings{3, 1000ms, 8000ms, 600000ms, 100};
  AuthThrottle a(settings);
  AuthThrottle b(settings);
  a.shareWith(replica(store));
  b.shareWith(replica(store));
  EXPECT_EQ(a.onFailure("10.0.0.1").retry_after, 0ms);
  EXPECT_EQ(b.onFailure("10.0.0.1").retry_after, 0ms);
  EXPECT_EQ(a.onFailure("10.0.0.1").retry_after, 0ms);
  // The fourth wrong key, on the other replica: backoff (each replica alone has seen 2).
  auto f = b.onFailure("10.0.0.1");
  EXPECT_EQ(f.failures, 4u);
  EXPECT_EQ(f.retry_after, 1000ms);
  EXPECT_TRUE(f.backoff_started);
  EXPECT_EQ(a.onFailure("10.0.0.1").retry_after, 2000ms);
  EXPECT_EQ(a.size(), 0u);  // nothing kept per replica while the store answers
}

TEST(SharedLimits, WrongKeysWhileTheStoreIsDown) {
  auto store = std::make_shared<FakeStore::State>();
  const AuthThrottleSettings settings{1, 1000ms, 8000ms, 600000ms, 100};
  store->reachable = false;
  AuthThrottle closed(settings);
  closed.shareWith(replica(store));
  EXPECT_TRUE(closed.onFailure("10.0.0.1").store_down);
  SharedLimitsSettings s;
  s.on_store_down = OnStoreDown::PerReplica;
  AuthThrottle open(settings);
  open.shareWith(replica(store, s));
  EXPECT_EQ(open.onFailure("10.0.0.1").retry_after, 0ms);
  const auto f = open.onFailure("10.0.0.1");  // the replica's own count
  EXPECT_FALSE(f.store_down);
  EXPECT_EQ(f.retry_after, 1000ms);
}

TEST(SharedLimits, NothingSharedNothingAsked) {
  // Without shareWith the limiter and the throttle are what they were: no store, no change.
  RateLimiter rl;
  const RateSettings rate{0.001, 1, 4};
  EXPECT_FALSE(rl.admit("k", rate));
  const auto r = rl.admit("k", rate);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->store_down);
  EXPECT_GT(r->retry_after, 0ms);
}

TEST(StoreUrl, AcceptsRedisUrlsAndRefusesPasswordsAndTls) {
  auto e = parseStoreUrl("redis://10.0.0.5:6380/2");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "10.0.0.5");
  EXPECT_EQ(e->port, 6380);
  EXPECT_EQ(e->db, 2);
  EXPECT_EQ(e->display(), "10.0.0.5:6380/2");
  e = parseStoreUrl("redis://limits@cache.internal");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->user, "limits");
  EXPECT_EQ(e->port, 6379);
  EXPECT_EQ(e->db, 0);
  e = parseStoreUrl("redis://[::1]:7000/");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->display(), "[::1]:7000/0");
  const auto pw = parseStoreUrl("redis://user:hunter2@10.0.0.5/0");
  ASSERT_FALSE(pw);
  EXPECT_NE(pw.error().message.find("MCPDB_SHARED_LIMITS_PASSWORD"), std::string::npos);
  EXPECT_EQ(pw.error().message.find("hunter2"), std::string::npos);
  EXPECT_EQ(parseStoreUrl(":pw@h").ok(), false);
  EXPECT_NE(parseStoreUrl("rediss://h:6380").error().message.find("TLS"), std::string::npos);
  for (const char* bad : {"http://h", "redis://", "redis://h:0", "redis://h:70000", "redis://h:x",
                          "redis://h/x", "redis://h/-1", "redis://[::1", "redis://[::1]x"}) {
    EXPECT_FALSE(parseStoreUrl(bad)) << bad;
  }
}

TEST(RedisLimitStore, AStoreThatRefusesConnectionsIsUnavailableAtOnceThenBacksOff) {
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  RedisLimitStore store(*parseStoreUrl("redis://127.0.0.1:1/0"), "", RedisTimeouts{});
  const auto t0 = Clock::now();
  auto g = store.takeTokens("k", 1, 1, 1);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().code, Code::Unavailable);
  EXPECT_NE(g.error().detail.find("127.0.0.1:1/0"), std::string::npos);
  EXPECT_FALSE(store.up());
  // Within the backoff no connection is tried: the answer is immediate and says so.
  g = store.takeTokens("k", 1, 1, 1);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().detail.find("waiting"), std::string::npos);
  EXPECT_LT(Clock::now() - t0, 1s);
}

TEST(RedisLimitStore, AStoreThatNeverAnswersCostsACallAtMostTheCommandTimeout) {
  // A listener that never accepts: the connection completes (the kernel's backlog), the command
  // is never answered.
  std::uint16_t port = 0;
  const int fd = mcpdb::testing::listenOnLoopback(4, &port);
  ASSERT_GE(fd, 0);
  RedisLimitStore store(*parseStoreUrl("redis://127.0.0.1:" + std::to_string(port) + "/0"), "",
                        RedisTimeouts{200ms, 50ms});
  const auto t0 = Clock::now();
  auto g = store.takeTokens("k", 1, 1, 1);
  const auto took = Clock::now() - t0;
  ::close(fd);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().code, Code::Unavailable);
  EXPECT_GE(took, 40ms);
  EXPECT_LT(took, 500ms);
}

}  // namespace
}  // namespace mcpdb::auth

namespace mcpdb::auth {
namespace {

// Concurrency caps across replicas (issue #31): two RateLimiters sharing one fake store.
struct TwoReplicas {
  explicit TwoReplicas(SharedLimitsSettings s = {}) {
    a_shared = replica(store, s);
    b_shared = replica(store, s);
    a.shareWith(a_shared);
    b.shareWith(b_shared);
  }
  std::int64_t inUse(const std::string& client = "k") {
    std::lock_guard<std::mutex> lock(store->slots_mu);
    std::int64_t n = 0;
    for (const auto& [h, e] : store->slots["mcpdb:conc:" + client]) {
      n += e.expires_ms > store->slot_ms ? e.count : 0;
    }
    return n;
  }
  int slotCalls() {
    std::lock_guard<std::mutex> lock(store->slots_mu);
    return store->slot_calls;
  }
  std::shared_ptr<FakeStore::State> store = std::make_shared<FakeStore::State>();
  std::shared_ptr<SharedLimits> a_shared;
  std::shared_ptr<SharedLimits> b_shared;
  RateLimiter a;
  RateLimiter b;
};

TEST(SharedConcurrency, TheCapHoldsAcrossReplicasAndAReleaseFreesASlotForTheOther) {
  TwoReplicas r;
  EXPECT_EQ(r.a.enterCalls("k", 1, 2), RateLimiter::Slots::Entered);
  EXPECT_EQ(r.b.enterCalls("k", 1, 2), RateLimiter::Slots::Entered);
  // Each replica alone would admit a second call (its own cap is 2).
  EXPECT_EQ(r.a.enterCalls("k", 1, 2), RateLimiter::Slots::OverCap);
  EXPECT_EQ(r.b.enterCalls("k", 1, 2), RateLimiter::Slots::OverCap);
  EXPECT_EQ(r.a.inFlight("k"), 1u);  // a refusal reserves nothing here either
  EXPECT_EQ(r.inUse(), 2);
  // Another key has its own cap.
  EXPECT_EQ(r.a.enterCalls("other", 1, 2), RateLimiter::Slots::Entered);
  r.a.leaveCalls("k", 1);
  r.a_shared->syncSlots();  // what the background thread does (it may have done it already)
  EXPECT_EQ(r.inUse(), 1);
  EXPECT_EQ(r.b.enterCalls("k", 1, 2), RateLimiter::Slots::Entered);
  EXPECT_EQ(r.a_shared->slotsHeld("k"), 0u);
  EXPECT_EQ(r.b_shared->slotsHeld("k"), 2u);
}

TEST(SharedConcurrency, TheReplicasOwnCapRefusesFirstWithoutARoundTrip) {
  TwoReplicas r;
  EXPECT_EQ(r.a.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
  const int calls = r.slotCalls();
  EXPECT_EQ(r.a.enterCalls("k", 1, 1), RateLimiter::Slots::OverCap);
  EXPECT_EQ(r.slotCalls(), calls);
}

TEST(SharedConcurrency, ABatchTakesAllItsSlotsOrNone) {
  TwoReplicas r;
  EXPECT_EQ(r.a.enterCalls("k", 2, 3), RateLimiter::Slots::Entered);
  EXPECT_EQ(r.b.enterCalls("k", 2, 3), RateLimiter::Slots::OverCap);
  EXPECT_EQ(r.inUse(), 2);
  EXPECT_EQ(r.b.inFlight("k"), 0u);
  EXPECT_EQ(r.b.enterCalls("k", 1, 3), RateLimiter::Slots::Entered);
}

TEST(SharedConcurrency, ACrashedReplicasSlotsStopCountingAfterTheirTtl) {
  SharedLimitsSettings s;
  s.slot_ttl = 3000ms;
  TwoReplicas r(s);
  EXPECT_EQ(r.a.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
  EXPECT_EQ(r.store->last_ttl_ms, 3000);
  // Replica a stops answering (crashed: never releases nor renews).
  r.store->slot_ms += 2999;
  EXPECT_EQ(r.b.enterCalls("k", 1, 1), RateLimiter::Slots::OverCap);
  r.store->slot_ms += 1;
  EXPECT_EQ(r.b.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
}

TEST(SharedConcurrency, ALongCallsSlotIsRenewedWhileItRuns) {
  SharedLimitsSettings s;
  s.slot_ttl = 3000ms;
  TwoReplicas r(s);
  EXPECT_EQ(r.a.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
  r.store->slot_ms += 2000;
  r.a_shared->syncSlots(Clock::now() + 1001ms);  // a third of the ttl since the count was written
  r.store->slot_ms += 2000;                      // 4 s after the call began, 2 s after renewal
  EXPECT_EQ(r.b.enterCalls("k", 1, 1), RateLimiter::Slots::OverCap);
  // Nothing renewed before a third of the ttl: no round trip for a fresh count.
  const int calls = r.slotCalls();
  r.a_shared->syncSlots(Clock::now());
  EXPECT_EQ(r.slotCalls(), calls);
  // The call ends: nothing is renewed any more, and the key is free at once.
  r.a.leaveCalls("k", 1);
  r.a_shared->syncSlots(Clock::now() + 10s);
  EXPECT_EQ(r.inUse(), 0);
  EXPECT_EQ(r.b.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
}

TEST(SharedConcurrency, AReleaseTheStoreMissedIsSentAgainWhenItAnswers) {
  TwoReplicas r;
  EXPECT_EQ(r.a.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
  r.store->reachable = false;
  r.a.leaveCalls("k", 1);
  r.a_shared->syncSlots();
  EXPECT_EQ(r.a.inFlight("k"), 0u);  // the replica's own count is right at once
  r.store->reachable = true;
  r.a_shared->syncSlots();
  EXPECT_EQ(r.inUse(), 0);
  EXPECT_EQ(r.b.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
}

TEST(SharedConcurrency, StoreDownFailClosedRefusesAndCounts) {
  TwoReplicas r;
  r.store->reachable = false;
  // Not "over the cap" (429): the cap could not be checked (503).
  EXPECT_EQ(r.a.enterCalls("k", 1, 4), RateLimiter::Slots::Unavailable);
  EXPECT_EQ(r.a.inFlight("k"), 0u);
  EXPECT_EQ(r.a_shared->storeDownRefusals(), 1u);
  EXPECT_EQ(r.a_shared->slotsHeld("k"), 0u);
}

TEST(SharedConcurrency, StoreDownPerReplicaUsesTheReplicasCapAndAnnouncesItsCallsAfter) {
  SharedLimitsSettings s;
  s.on_store_down = OnStoreDown::PerReplica;
  TwoReplicas r(s);
  r.store->reachable = false;
  EXPECT_EQ(r.a.enterCalls("k", 1, 2), RateLimiter::Slots::Entered);
  EXPECT_EQ(r.a.enterCalls("k", 1, 2), RateLimiter::Slots::Entered);
  EXPECT_EQ(r.a.enterCalls("k", 1, 2), RateLimiter::Slots::OverCap);  // the replica's own cap
  EXPECT_EQ(r.b.enterCalls("k", 1, 2),
            RateLimiter::Slots::Entered);  // not shared while the store is down
  EXPECT_EQ(r.a_shared->fallbacks(), 2u);
  r.store->reachable = true;
  r.a_shared->syncSlots();
  // a's two calls are counted in the store again: the shared cap refuses b's next one.
  EXPECT_EQ(r.inUse(), 2);
  EXPECT_EQ(r.b.enterCalls("k", 1, 2), RateLimiter::Slots::OverCap);
  r.a.leaveCalls("k", 2);
  r.a_shared->syncSlots();
  EXPECT_EQ(r.b.enterCalls("k", 1, 2), RateLimiter::Slots::Entered);
}

TEST(SharedConcurrency, AStoppingReplicaReleasesWhatItHolds) {
  TwoReplicas r;
  EXPECT_EQ(r.a.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
  r.a.shareWith(nullptr);
  r.a_shared.reset();  // the last owner: the replica shuts down
  EXPECT_EQ(r.inUse(), 0);
  EXPECT_EQ(r.b.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
}

TEST(SharedConcurrency, NothingSharedTheReplicasCapAlone) {
  RateLimiter rl;
  EXPECT_EQ(rl.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
  EXPECT_EQ(rl.enterCalls("k", 1, 1), RateLimiter::Slots::OverCap);
  rl.leaveCalls("k", 1);
  EXPECT_EQ(rl.enterCalls("k", 1, 1), RateLimiter::Slots::Entered);
}

}  // namespace
}  // namespace mcpdb::auth
