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
// warning per 10 s at most). Concurrency caps (max_concurrent_calls) stay per replica.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

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

  // One request of `client` (rate per second, burst).
  Decision takeToken(const std::string& client, double rate, double burst,
                     Clock::time_point now = Clock::now());
  // One wrong key from `source`, counted in the store.
  FailureDecision recordFailure(std::string_view source, const AuthThrottleSettings& settings);

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

  const SharedLimitsSettings settings_;
  std::unique_ptr<LimitStore> store_;
  std::mutex mu_;  // leases_ and the warning's clock; never held across a store round trip
  std::map<std::string, Lease, std::less<>> leases_;
  Clock::time_point last_warning_{};
  bool warned_down_ = false;
  std::atomic<std::uint64_t> fallbacks_{0};
  std::atomic<std::uint64_t> refusals_{0};
};

}  // namespace mcpdb::auth
