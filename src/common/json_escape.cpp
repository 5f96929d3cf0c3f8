#include "common/json_escape.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace mcpdb {
namespace {

// The bytes each byte adds when escaped: 1 for the two-character escapes, 5 for \u00xx.
constexpr std::array<std::uint8_t, 256> kGrowth = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 5;
  for (unsigned char c : {'"', '\\', '\b', '\f', '\n', '\r', '\t'}) t[c] = 1;
  return t;
}();

}  // namespace

std::size_t jsonEscapeGrowth(std::string_view s) {
  std::size_t growth = 0;
  for (const char c : s) growth += kGrowth[static_cast<unsigned char>(c)];
  return growth;
}

// Two passes: the size first, so that the output grows once and the escapes are written in place
// rather than appended piecewise (a result's JSON has a quote every few bytes).
void appendJsonEscaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::size_t growth = jsonEscapeGrowth(s);
  const std::size_t at = out.size();
  if (growth == 0) {
    out.append(s);
    return;
  }
  out.resize(at + s.size() + growth);
  char* w = out.data() + at;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (kGrowth[c] == 0) {
      *w++ = ch;
      continue;
    }
    *w++ = '\\';
    switch (c) {
      case '"': *w++ = '"'; break;
      case '\\': *w++ = '\\'; break;
      case '\b': *w++ = 'b'; break;
      case '\f': *w++ = 'f'; break;
      case '\n': *w++ = 'n'; break;
      case '\r': *w++ = 'r'; break;
      case '\t': *w++ = 't'; break;
      default:
        std::memcpy(w, "u00", 3);
        w[3] = kHex[c >> 4];
        w[4] = kHex[c & 15];
        w += 5;
    }
  }
}

bool isAscii(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace mcpdb
