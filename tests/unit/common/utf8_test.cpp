#include "common/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace mcpdb {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_TRUE(isValidUtf8("plain ascii"));
  EXPECT_TRUE(isValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  EXPECT_TRUE(isValidUtf8(std::string("a\0b", 3)));                       // NUL is a character
  EXPECT_TRUE(isValidUtf8("\xf4\x8f\xbf\xbf"));                           // U+10FFFF
}

TEST(Utf8, RefusesEveryIllFormedClass) {
  EXPECT_FALSE(isValidUtf8("\xc3"));              // truncated sequence
  EXPECT_FALSE(isValidUtf8("\x80"));              // lone continuation byte
  EXPECT_FALSE(isValidUtf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(isValidUtf8("\xe0\x80\xaf"));      // overlong, three bytes
  EXPECT_FALSE(isValidUtf8("\xed\xa0\x80"));      // UTF-16 surrogate U+D800
  EXPECT_FALSE(isValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(isValidUtf8("\xff"));
  EXPECT_FALSE(isValidUtf8("ok then \xe2\x82"));  // truncated at the end
}

}  // namespace
}  // namespace mcpdb
