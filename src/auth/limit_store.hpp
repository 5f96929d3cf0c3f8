#pragma once
// The shared store of limits (issue #31): what several replicas behind one load balancer keep in
// one place so that a key's rate, its concurrency cap and a source's failed-key backoff hold
// across all of them. Each
// operation is one atomic step on the store's side, timed by the store's clock, so replicas'
// clocks do not matter. An interface, so the lease logic is tested against a fake store.

#include <chrono>
#include <cstdint>
#include <string_view>

#include "auth/auth_throttle.hpp"
#include "common/result.hpp"

namespace mcpdb::auth {

struct TokenGrant {
  std::int64_t granted = 0;          // tokens taken (0..want)
  std::chrono::milliseconds wait{};  // when none: until the bucket holds one again
};

struct SlotCount {
  bool admitted = false;    // the holder's count was set (always, when no cap was given)
  std::int64_t in_use = 0;  // slots of the key held by every live holder, after the step
};

struct FailureCount {
  std::int64_t failures = 0;                 // consecutive wrong keys of the source
  std::chrono::milliseconds retry_after{0};  // 0: not throttled
  bool backoff_started = false;              // this failure began a backoff period
};

class LimitStore {
 public:
  virtual ~LimitStore() = default;
  // Takes up to `want` tokens from the bucket `key` (refilled at `rate` per second, at most
  // `burst`; a new bucket starts full). Unavailable when the store cannot be reached in time.
  virtual Result<TokenGrant> takeTokens(std::string_view key, double rate, double burst,
                                        std::int64_t want) = 0;
  // Records one wrong key from the source `key` with AuthThrottle's rules (free failures, doubling
  // backoff with a ceiling, forgotten after `forget_after` quiet).
  virtual Result<FailureCount> recordFailure(std::string_view key,
                                             const AuthThrottleSettings& settings) = 0;
  // Sets how many call slots of the key `key` the holder `holder` (one replica) has, expiring
  // `ttl` from now by the store's clock unless set again; first drops every holder's expired
  // count. With `cap` > 0 the count is set only if the live holders then hold at most `cap`
  // (admitted false otherwise, nothing changed); `cap` 0 sets it unchecked (renewal, release).
  // `held` 0 removes the holder. The replica sends its own absolute count, never a delta, so a
  // lost release is repaired by the next step (SharedLimits).
  virtual Result<SlotCount> setSlots(std::string_view key, std::string_view holder,
                                     std::int64_t held, std::int64_t cap,
                                     std::chrono::milliseconds ttl) = 0;
  // True while the store answered the last attempt (for a gauge; no I/O).
  virtual bool up() const = 0;
};

}  // namespace mcpdb::auth
