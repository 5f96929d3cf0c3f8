#pragma once
// Per-client API keys: generation, hashing and constant-time comparison (OpenSSL).
// The config stores only the SHA-256 digest of a key; the key itself is printed once.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mcpdb::auth {

using Digest = std::array<unsigned char, 32>;

inline constexpr std::string_view kKeyPrefix = "mcpdb_";

// A new key: "mcpdb_" + 43 base64url characters (256 random bits from RAND_bytes).
// Empty when the random generator fails.
std::string generateApiKey();

// SHA-256 of the key text. Keys carry 256 random bits, so a plain (fast) hash is enough: there is
// nothing to brute-force that a slow password hash would protect.
Digest sha256(std::string_view text);

std::string toHex(const Digest& d);
// `bytes` random bytes from RAND_bytes as lower-case hex (session ids, a replica's holder id);
// empty when the random generator fails.
std::string randomHex(std::size_t bytes);
// Accepts 64 hex digits (either case); nullopt otherwise.
std::optional<Digest> digestFromHex(std::string_view hex);

// Constant-time equality of two digests (CRYPTO_memcmp).
bool digestEquals(const Digest& a, const Digest& b);

// The key from an `Authorization: Bearer <key>` header value; nullopt when the scheme is not
// Bearer or the token is empty/oversized.
std::optional<std::string_view> bearerToken(std::string_view authorization);

}  // namespace mcpdb::auth
