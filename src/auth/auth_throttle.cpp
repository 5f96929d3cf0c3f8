#include "auth/auth_throttle.hpp"

#include <algorithm>

#include "auth/shared_limits.hpp"

namespace mcpdb::auth {

AuthThrottle::Failure AuthThrottle::onFailure(std::string_view source, Clock::time_point now) {
  if (shared_) {
    const auto d = shared_->recordFailure(source, settings_);
    Failure f;
    switch (d.verdict) {
      case SharedLimits::Verdict::Admitted:
        f.failures = static_cast<std::size_t>(d.count.failures);
        f.retry_after = d.count.retry_after;
        f.backoff_started = d.count.backoff_started;
        return f;
      case SharedLimits::Verdict::StoreDown:
      case SharedLimits::Verdict::Limited:
        f.retry_after = std::chrono::milliseconds(1000);
        f.store_down = true;
        return f;
      case SharedLimits::Verdict::PerReplica: break;
    }
  }
  return onLocalFailure(source, now);
}

AuthThrottle::Failure AuthThrottle::onLocalFailure(std::string_view source, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(source);
  if (it != index_.end() && now - it->second->last_failure > settings_.forget_after) {
    const auto node = it->second;
    index_.erase(it);
    lru_.erase(node);
    it = index_.end();
  }
  if (it == index_.end()) {
    while (!lru_.empty() && lru_.size() >= std::max<std::size_t>(1, settings_.max_sources)) {
      index_.erase(lru_.back().source);
      lru_.pop_back();
    }
    lru_.push_front(Entry{std::string(source), 0, now, now});
    it = index_.emplace(lru_.front().source, lru_.begin()).first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
  Entry& e = *it->second;
  const bool was_backing_off = e.backoff_until > now;
  ++e.failures;
  e.last_failure = now;
  Failure f;
  f.failures = e.failures;
  if (e.failures <= settings_.free_failures) return f;
  // base * 2^(failures beyond the free ones - 1), capped (the shift is capped before it overflows).
  const std::size_t doublings = std::min<std::size_t>(e.failures - settings_.free_failures - 1, 30);
  const auto backoff = std::min<std::chrono::milliseconds>(
      settings_.max_backoff, settings_.base_backoff * (std::int64_t{1} << doublings));
  e.backoff_until = std::max(e.backoff_until, now + backoff);
  f.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(e.backoff_until - now);
  f.backoff_started = !was_backing_off;
  return f;
}

std::size_t AuthThrottle::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

std::size_t AuthThrottle::inBackoff(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<std::size_t>(std::count_if(
      lru_.begin(), lru_.end(), [now](const Entry& e) { return e.backoff_until > now; }));
}

}  // namespace mcpdb::auth
