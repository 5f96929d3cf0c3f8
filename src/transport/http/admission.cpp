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
  // Every slot taken: make room by closing the oldest unauthenticated connection, if any.
  const std::size_t closing = v.evict.size();
  if (open >= limits_.max_connections + closing) {
    if (order_.empty()) {
      v.reason = "connections_full";
      return v;
    }
    evictOldest(nullptr, v.evict);
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

void Admission::authenticated(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find(id);
  if (it != by_id_.end()) erase(it->second);
}

void Admission::closed(std::uint64_t id) {
  authenticated(id);
}

std::size_t Admission::unauthenticated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

}  // namespace mcpdb::transport::http
