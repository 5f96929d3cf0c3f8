// The JSON-RPC parse entry shared by stdio and HTTP: lone surrogates read as U+FFFD so every
// request whose id can be read gets an answer with that id.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "protocol/jsonrpc.hpp"

namespace mcpdb::protocol {
namespace {

std::string repaired(const std::string& text) {
  auto r = replaceLoneSurrogates(text);
  return r ? *r : text;
}

TEST(LoneSurrogates, AreReplacedInsideStringsOnly) {
  EXPECT_EQ(repaired(R"({"q":"\ud800"})"), R"({"q":"\uFFFD"})");
  EXPECT_EQ(repaired(R"({"q":"\uDFFF x \uDBFF"})"), R"({"q":"\uFFFD x \uFFFD"})");
  EXPECT_EQ(repaired(R"({"\ud800":1})"), R"({"\uFFFD":1})");  // keys are strings too
  // Pairs stay; a high surrogate before a pair is lone; a low one after a pair is lone.
  EXPECT_EQ(repaired(R"(["\ud83d\ude00"])"), R"(["\ud83d\ude00"])");
  EXPECT_EQ(repaired(R"(["\ud83d\ud83d\ude00"])"), R"(["\uFFFD\ud83d\ude00"])");
  EXPECT_EQ(repaired(R"(["\ud83d\ude00\ude00"])"), R"(["\ud83d\ude00\uFFFD"])");
  // Escape state: `\\` is one escape, so `\\ud800` is a backslash then text.
  EXPECT_EQ(repaired(R"(["\\ud800"])"), R"(["\\ud800"])");
  EXPECT_EQ(repaired(R"(["\\\ud800"])"), R"(["\\\uFFFD"])");
  EXPECT_EQ(repaired(R"(["\"\ud800"])"), R"(["\"\uFFFD"])");
  // Other escapes and truncated ones are left to the parser.
  EXPECT_EQ(repaired(R"(["\u00e9\n\ud8"])"), R"(["\u00e9\n\ud8"])");
  EXPECT_FALSE(replaceLoneSurrogates(R"({"a":"plain"})"));
  EXPECT_FALSE(replaceLoneSurrogates(R"({"a":"\u0041"})"));
  EXPECT_FALSE(replaceLoneSurrogates(R"(\ud800)"));  // outside a string: not JSON, not touched
}

TEST(LoneSurrogates, ARequestWithOneIsParsedAndKeepsItsId) {
  const std::string text =
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"q":"\ud800"}}})";
  const Parsed p = parseMessage(text, ParseLimits{});
  ASSERT_TRUE(p.message) << (p.error_response ? p.error_response->dump() : "");
  EXPECT_EQ((*p.message)["id"], 7);
  EXPECT_EQ((*p.message)["params"]["arguments"]["q"], "\xef\xbf\xbd");
}

TEST(LoneSurrogates, ReplacementIsLinearAndKeepsTheLength) {
  std::string text = R"({"q":")";
  for (int i = 0; i < 200000; ++i) text += "\\ud800\\\\";
  text += R"("})";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = replaceLoneSurrogates(text);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->size(), text.size());
  EXPECT_TRUE(parseMessage(text, ParseLimits{.max_bytes = 8u << 20, .max_depth = 64}).message);
}

}  // namespace
}  // namespace mcpdb::protocol
