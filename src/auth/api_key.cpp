#include "auth/api_key.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cctype>
#include <vector>

#include "common/sha256_md.hpp"
#include "common/hex.hpp"

namespace mcpdb::auth {
namespace {

std::string base64Url(const unsigned char* data, std::size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const unsigned v = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (n - i == 1) {
    const unsigned v = data[i] << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (n - i == 2) {
    const unsigned v = (data[i] << 16) | (data[i + 1] << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string generateApiKey() {
  unsigned char buf[32];
  if (RAND_bytes(buf, sizeof buf) != 1) return {};
  std::string key = std::string(kKeyPrefix) + base64Url(buf, sizeof buf);
  OPENSSL_cleanse(buf, sizeof buf);
  return key;
}

Digest sha256(std::string_view text) {
  Digest d{};
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), d.data(), &len, sha256Md(), nullptr);
  return d;
}

std::string toHex(const Digest& d) {
  return lowerHex(d);
}

std::string randomHex(std::size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  if (RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1) return {};
  return lowerHex(buf);
}

std::optional<Digest> digestFromHex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Digest d{};
  for (std::size_t i = 0; i < 32; ++i) {
    const int hi = hexValue(hex[2 * i]);
    const int lo = hexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    d[i] = static_cast<unsigned char>((hi << 4) | lo);
  }
  return d;
}

bool digestEquals(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<std::string_view> bearerToken(std::string_view authorization) {
  // RFC 6750: "Bearer" is case-insensitive, one or more spaces, then the token.
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i])
      return std::nullopt;
  }
  std::string_view rest = authorization.substr(kScheme.size());
  if (rest.front() != ' ') return std::nullopt;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest.empty() || rest.size() > 512) return std::nullopt;
  return rest;
}

}  // namespace mcpdb::auth
