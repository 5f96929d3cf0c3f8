#pragma once
// Admission of new connections (issue #18): a connection counts as unauthenticated from accept
// until a request on it presents a valid key. Unauthenticated connections are capped per source
// and overall, below the global connection cap, so the slots above stay for authenticated
// clients; at a cap the oldest unauthenticated connection (of that source, or overall) is closed
// to make room, so a flood of half-open connections cannot keep a newer client with a valid key
// out. New connections per source are also rate limited (token bucket); that is the one refusal
// that comes before any key can be seen, so its default is generous. Trusted proxies are exempt
// from the per-source limits (their clients are told apart later, by X-Forwarded-For).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/token_bucket.hpp"

namespace mcpdb::transport::http {

// A connection the admission table can close (from any thread).
class Evictable {
 public:
  virtual ~Evictable() = default;
  virtual void evict() = 0;
};

struct AdmissionLimits {
  std::size_t max_connections = 256;  // all connections
  std::size_t reserved = 64;          // of those, only for authenticated connections
  std::size_t per_source = 32;        // unauthenticated connections per source
  double rate = 100;                  // new connections per second per source
  double burst = 200;                 // bucket capacity
};

class Admission {
 public:
  using Clock = auth::TokenBucket::Clock;

  explicit Admission(AdmissionLimits limits) : limits_(limits) {}

  struct Verdict {
    bool admitted = false;
    const char* reason = "";  // when refused: "connection_rate" or "connections_full"
    std::vector<std::shared_ptr<Evictable>> evict;  // close these (outside any lock)
  };
  // A new connection `id` from `source`; `open` connections (authenticated or not) exist now.
  Verdict admit(std::uint64_t id, std::weak_ptr<Evictable> conn, const std::string& source,
                bool trusted, std::size_t open, Clock::time_point now = Clock::now());
  // The connection presented a valid key: it leaves the unauthenticated table for good.
  void authenticated(std::uint64_t id);
  // The connection is gone.
  void closed(std::uint64_t id);
  std::size_t unauthenticated() const;

 private:
  struct Entry {
    std::uint64_t id;
    std::weak_ptr<Evictable> conn;
    std::string source;  // empty for trusted proxies (no per-source count)
  };
  using List = std::list<Entry>;
  // Removes `it` from the table; the caller holds mu_.
  void erase(List::iterator it);
  void evictOldest(const std::string* source, std::vector<std::shared_ptr<Evictable>>& out);

  AdmissionLimits limits_;
  mutable std::mutex mu_;
  List order_;  // oldest first
  std::unordered_map<std::uint64_t, List::iterator> by_id_;
  std::unordered_map<std::string, std::size_t> per_source_;
  std::map<std::string, auth::TokenBucket, std::less<>> rates_;
};

}  // namespace mcpdb::transport::http
