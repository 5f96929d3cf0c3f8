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

//
// Authenticated connections (issue #28) are counted per key, up to `per_key`: one key cannot
// hold the slots every other key needs. At that cap, or when every slot is taken and no
// unauthenticated connection is left to close, an idle one (between requests) is closed to make
// room: at the key's cap one of its own; when slots run out, one of the key holding the most
// connections first. A connection with a request in flight is never closed to make room.

// A connection the admission table can close (from any thread).
class Evictable {
 public:
  virtual ~Evictable() = default;
  // Closes it (on its own thread) when it is still unauthenticated, or was claimed below.
  virtual void evict() = 0;
  // When it waits for its next request, marks it as the admission's to close and returns true:
  // a request that arrives after is not served (the client sees the close, as at any keep-alive
  // timeout). False when a request is in flight (or it is already claimed).
  virtual bool claimIfIdle() { return false; }
};

struct AdmissionLimits {
  std::size_t max_connections = 256;  // all connections
  std::size_t reserved = 64;          // of those, only for authenticated connections
  std::size_t per_source = 32;        // unauthenticated connections per source
  double rate = 100;                  // new connections per second per source
  double burst = 200;                 // bucket capacity
  std::size_t per_key = 128;          // authenticated connections per key
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
  struct KeyVerdict {
    bool admitted = true;  // false: the key holds per_key connections, none of them idle
    std::vector<std::shared_ptr<Evictable>> evict;  // close these (outside any lock)
  };
  // The connection presented `key`'s valid credentials (an empty key: auth is off, no cap): it
  // leaves the unauthenticated table for good and counts against the key's cap. Called again
  // when a later request on it presents another key.
  KeyVerdict authenticated(std::uint64_t id, std::weak_ptr<Evictable> conn, const std::string& key);
  // The connection is gone.
  void closed(std::uint64_t id);
  std::size_t unauthenticated() const;
  // Authenticated connections of `key` open now.
  std::size_t ofKey(const std::string& key) const;
  std::size_t perKey() const { return limits_.per_key; }

 private:
  struct Entry {
    std::uint64_t id;
    std::weak_ptr<Evictable> conn;
    std::string source;  // empty for trusted proxies (no per-source count)
  };
  using List = std::list<Entry>;
  struct Keyed {
    std::string key;
    std::weak_ptr<Evictable> conn;
  };
  // Removes `it` from the table; the caller holds mu_.
  void erase(List::iterator it);
  void evictOldest(const std::string* source, std::vector<std::shared_ptr<Evictable>>& out);
  // Claims the oldest idle connection of `key` (of the key holding the most connections, when
  // null) and adds it to `out`; false when there is none. The caller holds mu_.
  bool evictIdle(const std::string* key, std::vector<std::shared_ptr<Evictable>>& out);
  void forgetKeyed(std::uint64_t id);

  AdmissionLimits limits_;
  mutable std::mutex mu_;
  List order_;  // oldest first
  std::unordered_map<std::uint64_t, List::iterator> by_id_;
  std::unordered_map<std::string, std::size_t> per_source_;
  std::map<std::string, auth::TokenBucket, std::less<>> rates_;
  std::map<std::uint64_t, Keyed> keyed_;  // authenticated connections, oldest (lowest id) first
  std::unordered_map<std::string, std::size_t> per_key_;
};

}  // namespace mcpdb::transport::http
