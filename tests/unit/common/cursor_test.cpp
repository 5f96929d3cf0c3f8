#include <gtest/gtest.h>

#include "common/cursor.hpp"

namespace mcpdb {
namespace {

TEST(Cursor, RoundTripsWithinContext) {
  CursorCodec codec("k1");
  const Json pos = {{"pk", {{"S", "a"}}}};
  const std::string c = codec.encode("dynamodb:scan:orders", pos);
  auto back = codec.decode("dynamodb:scan:orders", c);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, pos);
}

// Issue #18: over HTTP a cursor is bound to the client it was issued to.
TEST(Cursor, ACursorOfOneClientIsRefusedFromAnother) {
  CursorCodec codec(std::string(32, 'k'));
  const std::string base = "mongodb:list_mongodb_documents:orders";
  const std::string c = codec.encode(clientCursorContext(base, "client-a"), Json{{"x", 1}});
  EXPECT_TRUE(codec.decode(clientCursorContext(base, "client-a"), c).ok());
  const auto other = codec.decode(clientCursorContext(base, "client-b"), c);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, Code::InvalidArgument);
  EXPECT_FALSE(codec.decode(base, c).ok());
  // A client id cannot be extended into another context ("a" + "\nclient:b" tricks).
  EXPECT_NE(clientCursorContext(base, "a\nclient:b"), clientCursorContext(base, "b"));
}

TEST(Cursor, RefusesOtherContextKeyOrTampering) {
  CursorCodec codec("k1");
  const std::string c = codec.encode("dynamodb:scan:orders", Json{{"x", 1}});
  EXPECT_FALSE(codec.decode("dynamodb:scan:customers", c).ok());
  EXPECT_FALSE(CursorCodec("k2").decode("dynamodb:scan:orders", c).ok());
  // Forge a payload with the same signature.
  const std::string forged =
      base64UrlEncode(R"({"p":{"x":2},"e":9999999999})") + c.substr(c.find('.'));
  EXPECT_FALSE(codec.decode("dynamodb:scan:orders", forged).ok());
  EXPECT_FALSE(codec.decode("dynamodb:scan:orders", "garbage").ok());
  EXPECT_FALSE(codec.decode("dynamodb:scan:orders", "").ok());
  EXPECT_FALSE(codec.decode("dynamodb:scan:orders", "%%%.%%%").ok());
}

TEST(Cursor, RefusesExpired) {
  CursorCodec codec("k1", std::chrono::seconds(-10));
  const std::string c = codec.encode("ctx", Json{{"x", 1}});
  auto r = codec.decode("ctx", c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("expired"), std::string::npos);
}

TEST(Base64Url, RoundTripsAllLengths) {
  std::string s;
  for (int i = 0; i < 20; ++i) {
    auto back = base64UrlDecode(base64UrlEncode(s));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
    s.push_back(static_cast<char>(i * 37));
  }
}

}  // namespace
}  // namespace mcpdb
