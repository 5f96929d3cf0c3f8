#include "auth/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace mcpdb::auth {

TokenBucket::TokenBucket(double rate, double burst, Clock::time_point now)
    : rate_(std::max(rate, 1e-6)), burst_(std::max(burst, 1.0)), tokens_(burst_), last_(now) {}

void TokenBucket::refill(Clock::time_point now) {
  if (now <= last_) return;  // a clock that goes backwards never adds tokens
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  tokens_ = std::min(burst_, tokens_ + elapsed * rate_);
  last_ = now;
}

std::optional<std::chrono::milliseconds> TokenBucket::tryTake(Clock::time_point now) {
  refill(now);
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return std::nullopt;
  }
  const double wait_s = (1.0 - tokens_) / rate_;
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(wait_s * 1000.0)));
}

void TokenBucket::reconfigure(double rate, double burst, Clock::time_point now) {
  refill(now);
  rate_ = std::max(rate, 1e-6);
  burst_ = std::max(burst, 1.0);
  tokens_ = std::min(tokens_, burst_);
}

double TokenBucket::tokens(Clock::time_point now) {
  refill(now);
  return tokens_;
}

}  // namespace mcpdb::auth
