#include "common/json_escape.hpp"

#include <array>
#include <bit>
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

// One pass. The output is grown ahead of the writing, by at least a word's worst case (eight
// control characters, six bytes each, and a store's overhang) before each word, and cut to what was
// written at the end: counting first would read the input twice. Words are stored whole (the bytes
// past a run are overwritten by what follows), so a word with one quote costs a store, not eight
// byte copies.
void appendJsonEscaped(std::string& out, std::string_view s) {
  static_assert(std::endian::native == std::endian::little, "a word's first byte is its lowest");
  // A word's worst case, plus the whole-word store that may reach eight bytes past it.
  constexpr std::size_t kWorstWord = 6 * 8 + 8;
  const std::size_t at = out.size();
  out.resize(at + s.size() + s.size() / 8 + kWorstWord);
  char* w = out.data() + at;
  char* limit = out.data() + out.size();
  const char* p = s.data();
  const char* end = p + s.size();
  for (; p < end; p += 8) {
    if (limit - w < static_cast<std::ptrdiff_t>(kWorstWord)) {
      const std::size_t written = static_cast<std::size_t>(w - out.data());
      out.resize(written + static_cast<std::size_t>(end - p) * 2 + kWorstWord);
      w = out.data() + written;
      limit = out.data() + out.size();
    }
    if (end - p < 8) {  // the tail: byte by byte
      for (; p < end; ++p) w = put(w, *p);
      break;
    }
    const std::uint64_t x = load8(p);
    std::uint64_t marks = quoteBytes(x) | controlBytes(x);
    unsigned done = 0;  // bytes of this word written
    while (marks != 0) {
      const auto at_byte = static_cast<unsigned>(std::countr_zero(marks)) / 8;
      const std::uint64_t rest = x >> (8 * done);
      std::memcpy(w, &rest, 8);
      w += at_byte - done;
      w = writeEscape(w, static_cast<unsigned char>(p[at_byte]));
      done = at_byte + 1;
      marks &= marks - 1;
    }
    if (done < 8) {
      const std::uint64_t rest = x >> (8 * done);
      std::memcpy(w, &rest, 8);
      w += 8 - done;
    }
  }
  out.resize(static_cast<std::size_t>(w - out.data()));
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
