#pragma once
// Bytes as lower-case hex, two digits a byte: digests, ids, random tokens. No library the project
// uses offers it for a caller's buffer (OpenSSL's OPENSSL_buf2hexstr writes upper case with ':').

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mcpdb {

inline std::string lowerHex(std::span<const unsigned char> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

inline std::string lowerHex(std::string_view bytes) {
  return lowerHex(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

}  // namespace mcpdb
