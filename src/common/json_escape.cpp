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

// Eight bytes at a time (written by hand: the scan is the answer's hot loop, a byte-table loop
// costs about ten instructions a byte, and no Debian library escapes a bare string into a caller's
// buffer). Each test below sets the high bit of every byte of a word that matches, exactly: the
// low seven bits are added apart from the high bit, so no carry crosses into the next byte.
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

// The bytes of `x` that are zero.
constexpr std::uint64_t zeroBytes(std::uint64_t x) {
  return ~(((x & kLow7) + kLow7) | x | kLow7);
}

// The bytes of `x` below 0x20 (their low seven bits plus 0x60 stay below 0x80).
constexpr std::uint64_t controlBytes(std::uint64_t x) {
  return ~(((x & kLow7) + kOnes * 0x60) | x | kLow7);
}

// The bytes of `x` that are '"' or '\\' (each grows by one byte when escaped).
constexpr std::uint64_t quoteBytes(std::uint64_t x) {
  return zeroBytes(x ^ (kOnes * '"')) | zeroBytes(x ^ (kOnes * '\\'));
}

// How many bytes a mask of high bits marks: the bits moved down to each byte's lowest, summed
// into the top byte by the multiplication.
constexpr std::size_t marked(std::uint64_t m) {
  return ((m >> 7) * kOnes) >> 56;
}

std::uint64_t load8(const char* p) {
  std::uint64_t x = 0;
  std::memcpy(&x, p, sizeof x);
  return x;
}

char* writeEscape(char* w, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
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
  return w;
}

// One byte, escaped if it must be.
char* put(char* w, char ch) {
  const auto c = static_cast<unsigned char>(ch);
  if (kGrowth[c] == 0) {
    *w = ch;
    return w + 1;
  }
  return writeEscape(w, c);
}

}  // namespace

std::size_t jsonEscapeGrowth(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  std::size_t growth = 0;
  for (; end - p >= 8; p += 8) {
    const std::uint64_t x = load8(p);
    growth += marked(quoteBytes(x));
    if (controlBytes(x) != 0) {
      for (int i = 0; i < 8; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (c < 0x20) growth += kGrowth[c];
      }
    }
  }
  for (; p < end; ++p) growth += kGrowth[static_cast<unsigned char>(*p)];
  return growth;
}

// Two passes: the size first, so that the output grows once and the escapes are written in place
// rather than appended piecewise (a result's JSON has a quote every few bytes). A word without a
// byte to escape is copied whole; a word with one, byte by byte.
void appendJsonEscaped(std::string& out, std::string_view s) {
  const std::size_t growth = jsonEscapeGrowth(s);
  if (growth == 0) {
    out.append(s);
    return;
  }
  const std::size_t at = out.size();
  out.resize(at + s.size() + growth);
  char* w = out.data() + at;
  const char* p = s.data();
  const char* end = p + s.size();
  // The output left is never less than the input left, so a whole word always fits.
  for (; end - p >= 8; p += 8) {
    const std::uint64_t x = load8(p);
    if ((quoteBytes(x) | controlBytes(x)) == 0) {
      std::memcpy(w, p, 8);
      w += 8;
      continue;
    }
    for (int i = 0; i < 8; ++i) w = put(w, p[i]);
  }
  for (; p < end; ++p) w = put(w, *p);
}

bool isAscii(std::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  std::uint64_t seen = 0;
  for (; end - p >= 8; p += 8) seen |= load8(p);
  for (; p < end; ++p) seen |= static_cast<unsigned char>(*p);
  return (seen & kHighBits) == 0;
}

}  // namespace mcpdb
