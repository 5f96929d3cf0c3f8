#include "auth/rate_limiter.hpp"

namespace mcpdb::auth {

std::optional<RateLimiter::Refusal> RateLimiter::admit(const std::string& client,
                                                       const RateSettings& settings,
                                                       Clock::time_point now) {
  if (shared_) {
    const auto d = shared_->takeToken(client, settings.rate, settings.burst, now);
    switch (d.verdict) {
      case SharedLimits::Verdict::Admitted: return std::nullopt;
      case SharedLimits::Verdict::Limited: return Refusal{d.wait, false};
      case SharedLimits::Verdict::StoreDown: return Refusal{d.wait, true};
      case SharedLimits::Verdict::PerReplica: break;
    }
  }
  return admitLocally(client, settings, now);
}

std::optional<RateLimiter::Refusal> RateLimiter::admitLocally(const std::string& client,
                                                              const RateSettings& settings,
                                                              Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  State& s = clients_[client];
  if (!s.bucket) {
    s.bucket.emplace(settings.rate, settings.burst, now);
  } else if (s.rate != settings.rate || s.burst != settings.burst) {
    s.bucket->reconfigure(settings.rate, settings.burst, now);
  }
  s.rate = settings.rate;
  s.burst = settings.burst;
  if (auto wait = s.bucket->tryTake(now)) return Refusal{*wait, false};
  return std::nullopt;
}

RateLimiter::Slots RateLimiter::enterCalls(const std::string& client, std::size_t calls,
                                           std::size_t max_concurrent) {
  {
    // The replica's own cap first: when it refuses, the store is not asked.
    std::lock_guard<std::mutex> lock(mu_);
    State& s = clients_[client];
    if (s.in_flight + calls > max_concurrent) return Slots::OverCap;
    s.in_flight += calls;
  }
  if (!shared_) return Slots::Entered;
  Slots refused = Slots::OverCap;
  switch (shared_->enterCalls(client, calls, max_concurrent)) {
    case SharedLimits::Verdict::Admitted:
    case SharedLimits::Verdict::PerReplica: return Slots::Entered;  // the own cap held above
    case SharedLimits::Verdict::Limited: break;
    case SharedLimits::Verdict::StoreDown: refused = Slots::Unavailable; break;
  }
  leaveLocally(client, calls);
  return refused;
}

void RateLimiter::leaveCalls(const std::string& client, std::size_t calls) {
  leaveLocally(client, calls);
  if (shared_) shared_->leaveCalls(client, calls);
}

void RateLimiter::leaveLocally(const std::string& client, std::size_t calls) {
  std::lock_guard<std::mutex> lock(mu_);
  State& s = clients_[client];
  s.in_flight = calls > s.in_flight ? 0 : s.in_flight - calls;
}

std::size_t RateLimiter::inFlight(const std::string& client) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = clients_.find(client);
  return it == clients_.end() ? 0 : it->second.in_flight;
}

}  // namespace mcpdb::auth
