#pragma once
// Open MCP sessions of the HTTP transport, keyed by an unguessable id (256 random bits from
// RAND_bytes, hex). A session belongs to the client that created it: another client presenting
// its id is told it does not exist.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/session.hpp"

namespace mcpdb::transport::http {

// 64 hex characters of RAND_bytes output; empty when the generator fails.
std::string newSessionId();
// Visible ASCII only (the spec's rule for Mcp-Session-Id), bounded.
bool wellFormedSessionId(std::string_view id);

class SessionTable {
 public:
  using Clock = std::chrono::steady_clock;

  // `max_per_owner`: sessions one client (key) may hold, so one key cannot fill the table.
  explicit SessionTable(std::size_t max_sessions, std::size_t max_per_owner = SIZE_MAX)
      : max_(max_sessions), max_per_owner_(max_per_owner) {}

  struct Added {
    std::optional<std::string> id;  // the new session's id, when added
    // At its per-owner cap, the owner's least recently used session without a call in flight
    // makes room (the caller ends it); nullptr when none had to.
    std::shared_ptr<protocol::Session> evicted;
    enum class Refused { No, TableFull, OwnerFull } refused = Refused::No;
  };
  // Adds a session owned by `owner`. Refused when the table is full, or when the owner is at its
  // cap and every one of its sessions has a call in flight (or the id generator fails: TableFull).
  Added add(std::shared_ptr<protocol::Session> session, std::string owner,
            Clock::time_point now = Clock::now());
  // The session when `id` exists and belongs to `owner`; refreshes its last use.
  std::shared_ptr<protocol::Session> find(std::string_view id, std::string_view owner,
                                          Clock::time_point now = Clock::now());
  // Removes and returns the session (same ownership rule).
  std::shared_ptr<protocol::Session> remove(std::string_view id, std::string_view owner);
  // Removes sessions unused for `idle` that have no call in flight.
  std::vector<std::shared_ptr<protocol::Session>> expire(std::chrono::milliseconds idle,
                                                         Clock::time_point now = Clock::now());
  std::vector<std::shared_ptr<protocol::Session>> all() const;
  // Removes every session whose owner `drop` names (a config reload revoked or narrowed its key),
  // returning each with its owner.
  std::vector<std::pair<std::string, std::shared_ptr<protocol::Session>>> removeIf(
      const std::function<bool(std::string_view owner)>& drop);
  std::size_t size() const;
  std::size_t countOf(std::string_view owner) const;

 private:
  struct Entry {
    std::shared_ptr<protocol::Session> session;
    std::string owner;
    Clock::time_point last_used;
  };
  using Entries = std::map<std::string, Entry, std::less<>>;
  // Removes one entry and its per-owner count; the caller holds mu_.
  void eraseLocked(Entries::iterator it);

  mutable std::mutex mu_;
  std::size_t max_;
  std::size_t max_per_owner_;
  std::map<std::string, std::size_t, std::less<>> per_owner_;
  Entries entries_;
};

}  // namespace mcpdb::transport::http
