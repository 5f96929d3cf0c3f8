#pragma once
// SHA-256 and HMAC-SHA256 via OpenSSL (Debian libssl-dev), the only primitives SigV4 needs.

#include <string>
#include <string_view>

namespace mcpdb::aws {

// Raw 32-byte SHA-256 digest.
std::string sha256(std::string_view data);
// Lower-case hex SHA-256 digest (64 chars).
std::string sha256Hex(std::string_view data);
// Raw 32-byte HMAC-SHA256.
std::string hmacSha256(std::string_view key, std::string_view data);
// Lower-case hex of arbitrary bytes.
std::string toHex(std::string_view bytes);

}  // namespace mcpdb::aws
