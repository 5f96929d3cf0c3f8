#include "transport/http/admission.hpp"

#include <algorithm>

namespace mcpdb::transport::http {
namespace {

// Rate buckets kept at most (one per recently seen source); full buckets are dropped beyond.
constexpr std::size_t kMaxRateBuckets = 4096;

}  // namespace

Admission::Verdict Admission::admit(std::uint64_t id, std::weak_ptr<Evictable> conn,
                                    const std::string& source, bool trusted, std::size_t open,
                                    Clock::time_point now) {
  Verdict v;
  std::lock_guard<std::mutex> lock(mu_);
  if (!trusted) {
    auto it = rates_.find(source);
    if (it == rates_.end()) {
      if (rates_.size() >= kMaxRateBuckets) {
        for (auto r = rates_.begin(); r != rates_.end();) {
          r = r->second.tokens(now) >= limits_.burst ? rates_.erase(r) : std::next(r);
        }
      }
      if (rates_.size() >= kMaxRateBuckets) rates_.erase(rates_.begin());
      it = rates_.emplace(source, auth::TokenBucket(limits_.rate, limits_.burst, now)).first;
    }
    if (it->second.tryTake(now)) {
      v.reason = "connection_rate";
      return v;
    }
    if (limits_.per_source > 0) {
      const auto n = per_source_.find(source);
      if (n != per_source_.end() && n->second >= limits_.per_source) evictOldest(&source, v.evict);
    }
  }
  const std::size_t unauth_cap =
      limits_.max_connections > limits_.reserved ? limits_.max_connections - limits_.reserved : 1;
  while (!order_.empty() && order_.size() >= unauth_cap) evictOldest(nullptr, v.evict);
  // Every slot taken: make room by closing the oldest unauthenticated connection, or else an idle
  // authenticated one of the key holding the most.
  const std::size_t closing = v.evict.size();
  if (open >= limits_.max_connections + closing) {
    if (!order_.empty()) {
      evictOldest(nullptr, v.evict);
    } else if (!evictIdle(nullptr, v.evict)) {
      v.reason = "connections_full";
      return v;
    }
  }
  order_.push_back(Entry{id, std::move(conn), trusted ? std::string() : source});
  by_id_[id] = std::prev(order_.end());
  if (!trusted) ++per_source_[source];
  v.admitted = true;
  return v;
}

void Admission::erase(List::iterator it) {
  if (!it->source.empty()) {
    auto n = per_source_.find(it->source);
    if (n != per_source_.end() && --n->second == 0) per_source_.erase(n);
  }
  by_id_.erase(it->id);
  order_.erase(it);
}

void Admission::evictOldest(const std::string* source,
                            std::vector<std::shared_ptr<Evictable>>& out) {
  for (auto it = order_.begin(); it != order_.end(); ++it) {
    if (source != nullptr && it->source != *source) continue;
    if (auto c = it->conn.lock()) out.push_back(std::move(c));
    erase(it);
    return;
  }
}

bool Admission::evictIdle(const std::string* key, std::vector<std::shared_ptr<Evictable>>& out) {
  std::vector<std::pair<std::size_t, std::string>> keys;  // the keys to try, in order
  if (key != nullptr) {
    keys.emplace_back(0, *key);
  } else {
    for (const auto& [k, n] : per_key_) keys.emplace_back(n, k);
    std::sort(keys.begin(), keys.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
  }
  for (const auto& candidate : keys) {
    for (auto it = keyed_.begin(); it != keyed_.end(); ++it) {
      if (it->second.key != candidate.second) continue;
      auto conn = it->second.conn.lock();
      if (!conn || !conn->claimIfIdle()) continue;
      out.push_back(std::move(conn));
      forgetKeyed(it->first);
      return true;
    }
  }
  return false;
}

void Admission::forgetKeyed(std::uint64_t id) {
  const auto it = keyed_.find(id);
  if (it == keyed_.end()) return;
  auto n = per_key_.find(it->second.key);
  if (n != per_key_.end() && --n->second == 0) per_key_.erase(n);
  keyed_.erase(it);
}

Admission::KeyVerdict Admission::authenticated(std::uint64_t id, std::weak_ptr<Evictable> conn,
                                               const std::string& key) {
  KeyVerdict v;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_id_.find(id); it != by_id_.end()) erase(it->second);
  if (auto it = keyed_.find(id); it != keyed_.end()) {
    if (it->second.key == key) return v;
    forgetKeyed(id);
  }
  if (!key.empty() && limits_.per_key > 0) {
    const auto n = per_key_.find(key);
    if (n != per_key_.end() && n->second >= limits_.per_key && !evictIdle(&key, v.evict)) {
      v.admitted = false;
      return v;
    }
  }
  keyed_.emplace(id, Keyed{key, std::move(conn)});
  ++per_key_[key];
  return v;
}

void Admission::closed(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_id_.find(id); it != by_id_.end()) erase(it->second);
  forgetKeyed(id);
}

std::size_t Admission::ofKey(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto n = per_key_.find(key);
  return n == per_key_.end() ? 0 : n->second;
}

std::size_t Admission::unauthenticated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

}  // namespace mcpdb::transport::http
