#pragma once
// A token bucket (rate per second, burst capacity). Time is passed in, so tests drive it with a
// fake clock. Not thread-safe by itself: RateLimiter (clients.hpp) locks around it.

#include <chrono>
#include <optional>

namespace mcpdb::auth {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  // `rate` tokens per second (> 0), at most `burst` (>= 1) saved up. Starts full.
  TokenBucket(double rate, double burst, Clock::time_point now);

  // Takes one token. Returns nullopt when allowed, else how long until a token is available.
  std::optional<std::chrono::milliseconds> tryTake(Clock::time_point now);
  // Changes rate/burst (config reload) keeping the tokens saved so far (capped at the new burst).
  void reconfigure(double rate, double burst, Clock::time_point now);
  double tokens(Clock::time_point now);

 private:
  void refill(Clock::time_point now);

  double rate_;
  double burst_;
  double tokens_;
  Clock::time_point last_;
};

}  // namespace mcpdb::auth
