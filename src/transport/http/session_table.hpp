#pragma once
// Open MCP sessions of the HTTP transport, keyed by an unguessable id (256 random bits from
// RAND_bytes, hex). A session belongs to the client that created it: another client presenting
// its id is told it does not exist.

#include <chrono>
#include <cstddef>
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

  explicit SessionTable(std::size_t max_sessions) : max_(max_sessions) {}

  // Adds a session; the new id, or nullopt when the table is full.
  std::optional<std::string> add(std::shared_ptr<protocol::Session> session, std::string owner,
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
  std::size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<protocol::Session> session;
    std::string owner;
    Clock::time_point last_used;
  };
  mutable std::mutex mu_;
  std::size_t max_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace mcpdb::transport::http
