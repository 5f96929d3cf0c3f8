#pragma once
// Limits shared by several replicas (issue #31, `http.shared_limits`): each key's token bucket and
// each source's failed-key count live in one store (LimitStore: Redis or Valkey), so N replicas
// behind a load balancer allow a key its limit once, not N times.
//
// A call should not wait for the store: a replica takes a key's tokens in small leases
// (`lease_tokens` at a time) and spends them locally for at most `local_cache_ms`; a refusal the
// store gave is remembered as long (at most until the store's next token). Tokens are taken from
// the shared bucket before they are spent, so no replica ever admits more than the bucket gave;
// a lease only moves calls in time (by at most local_cache_ms) and may leave up to
// lease_tokens - 1 tokens per replica unspent (SECURITY.md states the bound). Wrong keys are
// counted in the store on every failure (no lease): spreading them over replicas gains nothing.
//
// When the store does not answer: `fail_closed` refuses (the caller answers 503), `per_replica`
// hands the decision back to the replica's own limiter, counted (fallbacks()) and logged (one
// warning per 10 s at most).
//
// Concurrency caps (max_concurrent_calls) are shared too: a counting semaphore per key in the
// store, one entry per replica holding "calls of this key in flight here", expiring `slot_ttl_ms`
// after it was last written. A call asks the store once (after the replica's own cap let it
// through: no round trip when that already refuses); the end of a call is sent by a background
// thread (never on the answer's path), which also renews the entries of keys with calls in flight
// every slot_ttl_ms / 3. A replica always sends its own absolute count, so a release the store
// missed is repaired by the next write; a crashed replica's calls stop counting at most
// slot_ttl_ms after its last renewal. Calls end by their timeout, so renewal ends with them.

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "auth/auth_throttle.hpp"
#include "auth/limit_store.hpp"
#include "config/section.hpp"

namespace mcpdb::auth {

enum class OnStoreDown { FailClosed, PerReplica };

// The environment variable holding the store's password (never the config file, never logged).
inline constexpr const char* kSharedLimitsPasswordEnv = "MCPDB_SHARED_LIMITS_PASSWORD";

struct SharedLimitsSettings {
  std::string store;                           // redis://[user@]host[:port][/db]
  std::string key_prefix = "mcpdb:";           // every key the server writes starts with it
  std::chrono::milliseconds local_cache{200};  // how long a lease or a refusal is used locally
  std::size_t lease_tokens = 4;                // tokens a replica takes from the store at once
  OnStoreDown on_store_down = OnStoreDown::FailClosed;
  std::chrono::milliseconds connect_timeout{250};
  std::chrono::milliseconds command_timeout{100};
  std::chrono::milliseconds slot_ttl{10000};  // a replica's concurrency slots live this long
};

// The `http.shared_limits` section's declaration (inlined in http_config.cpp).
const config::Section<SharedLimitsSettings>& sharedLimitsSection();

class SharedLimits {
 public:
  using Clock = std::chrono::steady_clock;

  enum class Verdict {
    Admitted,   // the key may go on (a token spent; or the store counted the failure)
    Limited,    // over the shared limit: `wait` until a retry can succeed
    StoreDown,  // fail_closed and the store did not answer: refuse (503)
    PerReplica  // per_replica and the store did not answer: the replica's own limiter decides
  };
  struct Decision {
    Verdict verdict = Verdict::Admitted;
    std::chrono::milliseconds wait{0};
  };
  struct FailureDecision {
    Verdict verdict = Verdict::Admitted;  // Admitted: `count` is the store's answer
    FailureCount count;
  };

  SharedLimits(SharedLimitsSettings settings, std::unique_ptr<LimitStore> store);
  ~SharedLimits();
  SharedLimits(const SharedLimits&) = delete;
  SharedLimits& operator=(const SharedLimits&) = delete;

  // One request of `client` (rate per second, burst).
  Decision takeToken(const std::string& client, double rate, double burst,
                     Clock::time_point now = Clock::now());
  // One wrong key from `source`, counted in the store.
  FailureDecision recordFailure(std::string_view source, const AuthThrottleSettings& settings);

  // `calls` more tool calls of `client`, capped at `cap` across replicas (one round trip).
  // Admitted and PerReplica: the calls are counted here and must be ended with leaveCalls.
  Verdict enterCalls(const std::string& client, std::size_t calls, std::size_t cap);
  // The end of calls enterCalls counted; sent to the store by the background thread.
  void leaveCalls(const std::string& client, std::size_t calls);
  // What the background thread does on each turn: sends every changed count and renews every
  // count not written for slot_ttl / 3. Called by tests to step without waiting.
  void syncSlots(Clock::time_point now = Clock::now());
  // Calls of `client` this replica counts in flight (what it announces to the store).
  std::size_t slotsHeld(const std::string& client) const;
  // This replica's name in the store (random per process: a restarted replica is a new holder).
  const std::string& holder() const { return holder_; }

  const SharedLimitsSettings& settings() const { return settings_; }
  bool storeUp() const { return store_->up(); }
  // Decisions handed back to the replica's own limits because the store did not answer.
  std::uint64_t fallbacks() const { return fallbacks_.load(std::memory_order_relaxed); }
  // Requests refused because the store did not answer (fail_closed).
  std::uint64_t storeDownRefusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  struct Lease {
    std::int64_t tokens = 0;
    Clock::time_point expires{};        // tokens unspent by then are dropped
    Clock::time_point limited_until{};  // the store's last refusal is remembered until then
    Clock::time_point retry_at{};       // when the store said a token would be there
  };
  // The store did not answer: count, warn (rate-limited) and say what the mode makes of it.
  Verdict storeFailed(const Error& e);
  void storeAnswered();

  struct Slots {
    std::int64_t held = 0;        // this replica's calls of the key in flight
    bool dirty = false;           // the store may hold another count: send `held`
    Clock::time_point written{};  // when the store last took `held`
  };
  void startWorker();

  const SharedLimitsSettings settings_;
  std::unique_ptr<LimitStore> store_;
  const std::string holder_;
  // Held across a slots round trip (acquire, release, renewal), so the absolute counts reach the
  // store in the order they were read; the store's one connection serialises them anyway.
  std::mutex wire_mu_;
  mutable std::mutex slots_mu_;  // slots_, worker state; never held across a round trip
  std::condition_variable slots_cv_;
  std::map<std::string, Slots, std::less<>> slots_;
  bool stopping_ = false;
  std::thread worker_;
  std::mutex mu_;  // leases_ and the warning's clock; never held across a store round trip
  std::map<std::string, Lease, std::less<>> leases_;
  Clock::time_point last_warning_{};
  bool warned_down_ = false;
  std::atomic<std::uint64_t> fallbacks_{0};
  std::atomic<std::uint64_t> refusals_{0};
};

}  // namespace mcpdb::auth
