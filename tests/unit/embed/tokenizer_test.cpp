// The tokenizer's rules on a tiny vocabulary, one quirk of the reference per test.
#include <gtest/gtest.h>

#include "embed/tokenizer.hpp"

namespace mcpdb::embed {
namespace {

using Ids = std::vector<std::int32_t>;

// Ids: 0 unknown, 1-5 reserved, then the pieces below in order (6, 7, ...).
Tokenizer makeTokenizer(const std::string& pieces) {
  const std::string json =
      R"([["\ufffd",0],["<s>",0],["</s>",0],["r3",0],["r4",0],["r5",0],)" + pieces + "]";
  auto t = Tokenizer::fromJson(json);
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t.value());
}

Ids encode(const Tokenizer& t, std::string_view text) {
  auto r = t.encode(text);
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : Ids{};
}

TEST(EmbedTokenizer, EmptyTextHasNoTokens) {
  auto t = makeTokenizer(R"(["▁",-2],["▁a",-1])");
  EXPECT_EQ(encode(t, ""), Ids{});
}

TEST(EmbedTokenizer, SpacesBecomeWordBoundaries) {
  auto t = makeTokenizer(R"(["▁",-2],["▁a",-1])");
  EXPECT_EQ(encode(t, "   "), (Ids{6, 6, 6, 6}));  // leading boundary + one per space
  EXPECT_EQ(encode(t, "a a"), (Ids{7, 7}));
}

TEST(EmbedTokenizer, OtherWhitespaceIsNotABoundary) {
  auto t = makeTokenizer(R"(["▁",-2],["▁a",-1])");
  EXPECT_EQ(encode(t, "a\ta"), (Ids{7, 0}));  // "\t" and "a" are unknown, collapsed into one
}

TEST(EmbedTokenizer, RunsOfUnknownCollapse) {
  auto t = makeTokenizer(R"(["▁",-2],["▁a",-1],["b",-1])");
  EXPECT_EQ(encode(t, "a☃☃b☃"), (Ids{7, 0, 8, 0}));
}

// A null score reads as 0, and a best score of exactly 0 counts as "nothing yet": any later
// candidate for the same end replaces it, even a worse one. (Expectations checked against the
// JS reference.)
TEST(EmbedTokenizer, ZeroScoreIsOverwrittenByLaterCandidates) {
  EXPECT_EQ(encode(makeTokenizer(R"(["▁c",null])"), "c"),
            (Ids{0}));  // the unknown "c" replaces "▁c"
  EXPECT_EQ(encode(makeTokenizer(R"(["▁",-2],["c",-1],["▁c",null])"), "c"), (Ids{6, 7}));
  EXPECT_EQ(encode(makeTokenizer(R"(["▁",-2],["▁c",null])"), "c c"), (Ids{6, 0, 7}));
}

TEST(EmbedTokenizer, RepeatedPieceLaterEntryWins) {
  auto t = makeTokenizer(R"(["▁",-2],["d",-1],["d",-1])");
  EXPECT_EQ(encode(t, "d"), (Ids{6, 8}));
}

TEST(EmbedTokenizer, TiesGoToTheLaterCandidate) {
  // "▁ab" = ▁ + ab (-2) or ▁a + b (-2): the candidate starting later wins the tie.
  auto t = makeTokenizer(R"(["▁",-1],["▁a",-1],["b",-1],["ab",-1])");
  EXPECT_EQ(encode(t, "ab"), (Ids{7, 8}));
}

TEST(EmbedTokenizer, HigherScoreWins) {
  auto t = makeTokenizer(R"(["▁",-1],["▁a",-1],["b",-1],["ab",-0.5])");
  EXPECT_EQ(encode(t, "ab"), (Ids{6, 9}));
}

TEST(EmbedTokenizer, NfkcNormalisesFirst) {
  auto t = makeTokenizer(R"(["▁",-2],["▁fi",-1],["1",-1])");
  EXPECT_EQ(encode(t, "ﬁ"), (Ids{7}));       // U+FB01 ligature -> "fi"
  EXPECT_EQ(encode(t, "ﬁ１"), (Ids{7, 8}));  // full-width digit -> "1"
}

TEST(EmbedTokenizer, IllFormedUtf8IsReadAsReplacementCharacter) {
  auto t = makeTokenizer(R"(["▁",-2],["x",-1])");
  EXPECT_EQ(encode(t, std::string("\xff\xfe", 2)), (Ids{6, 0}));
  EXPECT_EQ(encode(t, std::string("x\xc0", 2)), (Ids{6, 7, 0}));
  EXPECT_EQ(encode(t, std::string("\0x", 2)), (Ids{6, 0, 7}));
}

TEST(EmbedTokenizer, ReservedPiecesAreNeverProduced) {
  auto t = makeTokenizer(R"(["▁",-2])");
  EXPECT_EQ(encode(t, "<s>"), (Ids{6, 0}));
}

TEST(EmbedTokenizer, RejectsBadVocabularies) {
  EXPECT_FALSE(Tokenizer::fromJson("not json").ok());
  EXPECT_FALSE(Tokenizer::fromJson("{}").ok());
  EXPECT_FALSE(Tokenizer::fromJson(R"([["a",0]])").ok());  // too few
  auto bad = Tokenizer::fromJson(
      R"([["\ufffd",0],["<s>",0],["</s>",0],["r3",0],["r4",0],["r5",0],["x","high"]])");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("entry 6"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(
      Tokenizer::fromJson(R"([["",0],["<s>",0],["</s>",0],["r3",0],["r4",0],["r5",0],["x",0]])")
          .ok());
  EXPECT_FALSE(Tokenizer::fromFile("/nonexistent/vocab.json").ok());
}

TEST(EmbedTokenizer, LongInputIsLinear) {
  auto t = makeTokenizer(R"(["▁",-2],["a",-1],["aa",-1.5])");
  const std::string text(200000, 'a');
  auto ids = t.encode(text);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->size(), 100001u);
}

}  // namespace
}  // namespace mcpdb::embed
