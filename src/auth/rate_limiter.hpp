#pragma once
// Per-client admission at the HTTP layer: a token bucket per client (requests) and a cap on the
// tool calls it has in flight. State survives config reloads; limits are per server process
// (per replica behind a load balancer).

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "auth/clients.hpp"
#include "auth/token_bucket.hpp"

namespace mcpdb::auth {

class RateLimiter {
 public:
  using Clock = TokenBucket::Clock;

  // One request by `client`: nullopt when admitted, else the wait before a retry can succeed.
  std::optional<std::chrono::milliseconds> admit(const std::string& client,
                                                 const RateSettings& settings,
                                                 Clock::time_point now = Clock::now());
  // Reserves `calls` concurrent tool-call slots; false (nothing reserved) over the cap.
  bool enterCalls(const std::string& client, std::size_t calls, std::size_t max_concurrent);
  void leaveCalls(const std::string& client, std::size_t calls);
  std::size_t inFlight(const std::string& client) const;

 private:
  struct State {
    std::optional<TokenBucket> bucket;
    double rate = 0;
    double burst = 0;
    std::size_t in_flight = 0;
  };
  mutable std::mutex mu_;
  std::map<std::string, State, std::less<>> clients_;
};

}  // namespace mcpdb::auth
