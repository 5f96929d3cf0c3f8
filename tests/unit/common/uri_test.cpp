#include "common/uri.hpp"

#include <gtest/gtest.h>

namespace mcpdb {
namespace {

TEST(PercentEncode, KeepsUnreservedOnly) {
  EXPECT_EQ(percentEncode("Az09-._~"), "Az09-._~");
  EXPECT_EQ(percentEncode(""), "");
  EXPECT_EQ(percentEncode("a b/c#d?e%f"), "a%20b%2Fc%23d%3Fe%25f");
  EXPECT_EQ(percentEncode("{name}"), "%7Bname%7D");
  EXPECT_EQ(percentEncode("\xc3\xa9"), "%C3%A9");  // UTF-8 bytes one by one
  EXPECT_EQ(percentEncode(std::string("a\0b", 3)), "a%00b");
  EXPECT_EQ(percentEncode("\xff"), "%FF");
}

TEST(PercentEncode, RoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  const std::string enc = percentEncode(all);
  for (char c : enc) {
    EXPECT_TRUE(c > 0x20 && c < 0x7f && c != '/') << static_cast<int>(c);
  }
  EXPECT_EQ(percentDecode(enc), all);
}

TEST(PercentDecode, AcceptsEitherCaseAndRefusesBadEscapes) {
  EXPECT_EQ(percentDecode("%2f%2F"), "//");
  EXPECT_EQ(percentDecode("plain"), "plain");
  for (const char* bad : {"%", "%2", "a%", "%zz", "%2g", "%%41"}) {
    EXPECT_EQ(percentDecode(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace mcpdb
