#pragma once
// Opaque, signed cursors handed to agents (DynamoDB ExclusiveStartKey, Mongo _id positions).
// The payload is JSON chosen by the engine; the cursor is base64url(payload) "."
// base64url(HMAC-SHA256) over a context string (engine, tool, target) plus the payload, so an agent
// can neither forge a position nor replay a cursor against another table, collection or tool.
// Expired cursors are refused.

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/json.hpp"
#include "common/result.hpp"

namespace mcpdb {

// The shortest signing key accepted (MCPDB_CURSOR_KEY): 32 bytes, e.g. `openssl rand -base64 32`.
inline constexpr std::size_t kMinCursorKeyBytes = 32;

// The signing context of a cursor issued to one client: `context` (engine, tool, target) plus the
// client's id, so a cursor issued to one HTTP client is refused from another (stdio has one).
std::string clientCursorContext(std::string_view context, std::string_view client_id);

class CursorCodec {
 public:
  // `key` is the server's secret (random per process, or MCPDB_CURSOR_KEY so replicas agree).
  explicit CursorCodec(std::string key, std::chrono::seconds ttl = std::chrono::hours(1))
      : key_(std::move(key)), ttl_(ttl) {}

  // Signs `position` for `context` (e.g. "dynamodb:scan_dynamodb_table:orders").
  std::string encode(std::string_view context, const Json& position) const;
  // Verifies and returns the position; InvalidArgument with a safe message on any tampering,
  // a context mismatch or expiry.
  Result<Json> decode(std::string_view context, std::string_view cursor) const;

 private:
  std::string key_;
  std::chrono::seconds ttl_;
};

std::string base64UrlEncode(std::string_view bytes);
Result<std::string> base64UrlDecode(std::string_view text);

}  // namespace mcpdb
