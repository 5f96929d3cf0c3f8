// The hand-written escaping and size count against the library they stand in for: every byte
// value, in strings and keys, at random positions and nestings, must give what nlohmann's own
// serializer writes (a wrong count would let a result past its byte cap, or cut it short).
#include "common/json_escape.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "common/json_text.hpp"
#include "common/row_budget.hpp"

namespace mcpdb {
namespace {

std::string dumped(const Json& v) {
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A random string over `alphabet`'s bytes.
std::string randomText(std::mt19937& rng, const std::string& alphabet, std::size_t max_len) {
  std::string s(std::uniform_int_distribution<std::size_t>(0, max_len)(rng), ' ');
  for (auto& c : s)
    c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
  return s;
}

std::string everyByte() {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  return all;
}

std::string everyAsciiByte() {
  std::string all;
  for (int c = 0; c < 128; ++c) all.push_back(static_cast<char>(c));
  return all;
}

Json randomValue(std::mt19937& rng, int depth) {
  static const std::string bytes = everyByte();
  static const std::string ascii = everyAsciiByte();
  switch (std::uniform_int_distribution<int>(0, depth > 3 ? 6 : 8)(rng)) {
    case 0: return nullptr;
    case 1: return std::uniform_int_distribution<int>(0, 1)(rng) == 1;
    case 2:
      return std::uniform_int_distribution<std::int64_t>(INT64_MIN, INT64_MAX)(rng) >>
             std::uniform_int_distribution<int>(0, 63)(rng);
    case 3: return std::uniform_int_distribution<std::uint64_t>()(rng);
    case 4: return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
    case 5: return randomText(rng, ascii, 40);
    case 6: return randomText(rng, bytes, 40);  // often invalid UTF-8: replaced by the library
    case 7: {
      Json a = Json::array();
      for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n)
        a.push_back(randomValue(rng, depth + 1));
      return a;
    }
    default: {
      Json o = Json::object();
      for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n) {
        const bool wide = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
        o[randomText(rng, wide ? bytes : ascii, 12)] = randomValue(rng, depth + 1);
      }
      return o;
    }
  }
}

TEST(JsonEscape, EveryAsciiByteEscapesAsTheLibraryDoes) {
  for (int c = 0; c < 128; ++c) {
    const std::string s = "a" + std::string(1, static_cast<char>(c)) + "b";
    std::string out = "\"";
    appendJsonEscaped(out, s);
    out += '"';
    EXPECT_EQ(out, dumped(Json(s))) << "byte " << c;
    EXPECT_EQ(s.size() + jsonEscapeGrowth(s) + 2, dumped(Json(s)).size()) << "byte " << c;
  }
}

// The reference the word scan is held to: byte by byte, as the library writes a string.
std::string escapedByteByByte(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      const std::string two = c == '\b'   ? "b"
                              : c == '\f' ? "f"
                              : c == '\n' ? "n"
                              : c == '\r' ? "r"
                              : c == '\t' ? "t"
                                          : "";
      char hex[8];
      std::snprintf(hex, sizeof hex, "u%04x", c);
      out += '\\';
      out += two.empty() ? std::string(hex) : two;
    } else {
      out += ch;
    }
  }
  return out;
}

// The escaper reads eight bytes at a time, and a byte's neighbours matter to the word tricks (a
// borrow runs into the next byte up): every byte value at every position of up to three words,
// among neighbours that borrow, nearly match a special byte or are not ASCII.
TEST(JsonEscape, EveryByteAtEveryPositionOfAWord) {
  const std::string neighbours("\x00\x01\x1f\x20\x21\x22\x23\x5b\x5c\x5d\x7f\x80\xff a", 15);
  // Within one word, one word, one word and a tail, two words, three.
  for (const int len : {1, 2, 3, 7, 8, 9, 15, 16, 17, 24}) {
    for (int pos = 0; pos < len; ++pos) {
      for (int c = 0; c < 256; ++c) {
        for (const char n : neighbours) {
          std::string s(static_cast<std::size_t>(len), n);
          s[static_cast<std::size_t>(pos)] = static_cast<char>(c);
          const std::string want = escapedByteByByte(s);
          std::string out = "x";
          appendJsonEscaped(out, s);
          ASSERT_EQ(out.substr(1), want) << "len " << len << " pos " << pos << " byte " << c;
          ASSERT_EQ(jsonEscapeGrowth(s), want.size() - s.size());
          bool ascii = true;
          for (const char b : s) ascii = ascii && static_cast<unsigned char>(b) < 0x80;
          ASSERT_EQ(isAscii(s), ascii) << "len " << len << " pos " << pos << " byte " << c;
        }
      }
    }
  }
}

// The output grows while it is written: long inputs whose escapes grow them up to six times,
// appended to a string that already holds text.
TEST(JsonEscape, LongInputsGrowTheOutputAsTheyAreWritten) {
  std::mt19937 rng(61226);
  const std::string heavy("\x01\x1f\"\\\n", 5);
  const std::string light = "plain text, no escapes at all ";
  for (int i = 0; i < 200; ++i) {
    const int len = std::uniform_int_distribution<int>(0, 5000)(rng);
    const std::string& alphabet = i % 3 == 0 ? heavy : i % 3 == 1 ? light : everyAsciiByte();
    const std::string s = randomText(rng, alphabet, len);
    std::string out(static_cast<std::size_t>(i), 'p');
    appendJsonEscaped(out, s);
    ASSERT_EQ(out, std::string(static_cast<std::size_t>(i), 'p') + escapedByteByByte(s));
  }
}

TEST(JsonEscape, ValidUtf8IsCopied) {
  const std::string s = "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \"q\"\n";
  std::string out = "\"";
  appendJsonEscaped(out, s);
  out += '"';
  EXPECT_EQ(out, dumped(Json(s)));
  EXPECT_FALSE(isAscii(s));
  EXPECT_TRUE(isAscii("plain \x7f text"));
}

TEST(JsonEscape, RandomStringsMatchTheLibrary) {
  std::mt19937 rng(20261205);
  const std::string ascii = everyAsciiByte();
  for (int i = 0; i < 2000; ++i) {
    const std::string s = randomText(rng, ascii, 64);
    std::string out = "prefix";
    appendJsonEscaped(out, s);
    EXPECT_EQ("\"" + out.substr(6) + "\"", dumped(Json(s)));
  }
}

TEST(JsonText, EqualsTheLibrarysOutputForRandomValues) {
  std::mt19937 rng(5122026);
  for (int i = 0; i < 5000; ++i) {
    const Json v = randomValue(rng, 0);
    const std::string want = dumped(v);
    ASSERT_EQ(jsonText(v), want);
    ASSERT_EQ(jsonTextSize(v), want.size()) << want;
    ASSERT_EQ(serializedSize(v), want.size()) << want;
  }
}

TEST(SerializedSize, Extremes) {
  for (const Json& v :
       {Json(INT64_MIN), Json(INT64_MAX), Json(UINT64_MAX), Json(0), Json(-1), Json::array(),
        Json::object(), Json(""), Json(std::string(1, '\0')),
        Json{{"\x01k\xff", {nullptr, false, true}}}, Json(std::numeric_limits<double>::quiet_NaN()),
        Json(1e-320), Json::binary({1, 2, 3})}) {
    EXPECT_EQ(serializedSize(v), dumped(v).size()) << dumped(v);
    EXPECT_EQ(jsonText(v), dumped(v));
  }
}

}  // namespace
}  // namespace mcpdb
