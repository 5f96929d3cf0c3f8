#pragma once
// Failed-authentication throttling per source (issue #18): after a few wrong keys from one
// source, further wrong keys from it are answered 429 with an exponentially growing Retry-After.
// A valid key is always checked and always admitted, even from a source in backoff (a client
// behind the same NAT as a key scanner keeps working); keys carry 256 random bits, so the throttle
// is there to make a scan cheap for the server and visible (audit, metrics), not to make guessing
// feasible-but-slow. Memory is bounded: at most `max_sources` sources are tracked, the least
// recently failing one is forgotten first. With http.shared_limits (shareWith) the count lives in
// the shared store, so attempts spread over replicas add up; the per-process table then serves only
// on_store_down per_replica.

#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mcpdb::auth {

class SharedLimits;

struct AuthThrottleSettings {
  std::size_t free_failures = 5;                   // wrong keys before backoff starts
  std::chrono::milliseconds base_backoff{1000};    // first backoff; doubles per further failure
  std::chrono::milliseconds max_backoff{60000};    // backoff ceiling
  std::chrono::milliseconds forget_after{600000};  // a source quiet this long starts over
  std::size_t max_sources = 10000;                 // tracked sources (LRU beyond)
};

class AuthThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit AuthThrottle(AuthThrottleSettings settings = {}) : settings_(settings) {}

  struct Failure {
    std::size_t failures = 0;                  // consecutive failures of the source so far
    std::chrono::milliseconds retry_after{0};  // 0: not throttled (answer 401)
    bool backoff_started = false;  // this failure began a backoff period (one audit line each)
    bool store_down = false;       // the shared store did not answer (fail_closed): answer 503
  };
  // Records a wrong (or missing) key from `source`.
  Failure onFailure(std::string_view source, Clock::time_point now = Clock::now());
  // From now on failures are counted in the shared store (set before serving).
  void shareWith(std::shared_ptr<SharedLimits> shared) { shared_ = std::move(shared); }
  // Sources tracked now (bounded by max_sources).
  std::size_t size() const;
  // Sources whose backoff has not ended yet.
  std::size_t inBackoff(Clock::time_point now = Clock::now()) const;

 private:
  struct Entry {
    std::string source;
    std::size_t failures = 0;
    Clock::time_point last_failure;
    Clock::time_point backoff_until;
  };
  Failure onLocalFailure(std::string_view source, Clock::time_point now);

  AuthThrottleSettings settings_;
  std::shared_ptr<SharedLimits> shared_;  // null: per process
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // most recently failing first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index_;  // keys view lru_
};

}  // namespace mcpdb::auth
