#pragma once
// Per-client admission at the HTTP layer: a token bucket per client (requests) and a cap on the
// tool calls it has in flight. State survives config reloads. The buckets and the caps are per
// server process unless shared (shareWith: http.shared_limits, one bucket and one cap per key for
// every replica; the replica's own cap is still checked first, so a refusal costs no round trip).

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "auth/clients.hpp"
#include "auth/shared_limits.hpp"
#include "auth/token_bucket.hpp"

namespace mcpdb::auth {

class RateLimiter {
 public:
  using Clock = TokenBucket::Clock;

  struct Refusal {
    std::chrono::milliseconds retry_after{0};  // the wait before a retry can succeed
    bool store_down = false;  // the shared store did not answer (fail_closed): answer 503
  };
  // One request by `client`: nullopt when admitted.
  std::optional<Refusal> admit(const std::string& client, const RateSettings& settings,
                               Clock::time_point now = Clock::now());
  // From now on the buckets are the shared ones (set before serving; the per-process buckets
  // remain for on_store_down per_replica).
  void shareWith(std::shared_ptr<SharedLimits> shared) { shared_ = std::move(shared); }
  enum class Slots {
    Entered,      // reserved: end them with leaveCalls
    OverCap,      // this replica's cap, or the shared one, is reached (answer 429)
    Unavailable,  // the shared store did not answer (fail_closed): answer 503
  };
  // Reserves `calls` concurrent tool-call slots; nothing is reserved unless Entered. This
  // replica's cap is checked first, then the shared one.
  Slots enterCalls(const std::string& client, std::size_t calls, std::size_t max_concurrent);
  void leaveCalls(const std::string& client, std::size_t calls);
  std::size_t inFlight(const std::string& client) const;

 private:
  struct State {
    std::optional<TokenBucket> bucket;
    double rate = 0;
    double burst = 0;
    std::size_t in_flight = 0;
  };
  void leaveLocally(const std::string& client, std::size_t calls);
  std::optional<Refusal> admitLocally(const std::string& client, const RateSettings& settings,
                                      Clock::time_point now);

  std::shared_ptr<SharedLimits> shared_;  // null (the default): nothing shared, nothing asked
  mutable std::mutex mu_;
  std::map<std::string, State, std::less<>> clients_;
};

}  // namespace mcpdb::auth
