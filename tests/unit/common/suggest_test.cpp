// "Did you mean": the distance and the cut-off that decides when a suggestion is a likely typo.
#include "common/suggest.hpp"

#include <gtest/gtest.h>

namespace mcpdb {
namespace {

TEST(Suggest, EditDistanceCountsEditsAndTranspositions) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(editDistance("refuse", "refuze"), 1u);
  EXPECT_EQ(editDistance("postgres", "postgers"), 1u);  // adjacent transposition
  EXPECT_EQ(editDistance("INFO", "info"), 0u);          // ASCII case folded
}

TEST(Suggest, SuggestsOnlyLikelyTypos) {
  const std::vector<std::string> engines = {"postgres", "dynamodb", "mongodb"};
  EXPECT_EQ(closestName("postgress", engines), "postgres");
  EXPECT_EQ(closestName("mongo_db", engines), "mongodb");
  EXPECT_EQ(closestName("postgresql", engines), "postgres");
  EXPECT_EQ(closestName("mysql", engines), std::nullopt);
  EXPECT_EQ(closestName("", engines), std::nullopt);
  EXPECT_EQ(closestName("x", {"y"}), std::nullopt);  // no edit allowed below 3 characters
  EXPECT_EQ(closestName("ab", {"cd"}), std::nullopt);
  EXPECT_EQ(didYouMean("warnign", {"warning", "error"}), "; did you mean 'warning'?");
  EXPECT_EQ(didYouMean("verbose", {"warning", "error"}), "");
}

TEST(Suggest, LongInputIsNotCompared) {
  // Bounded work for any input: nothing over 256 characters is anybody's typo.
  EXPECT_EQ(closestName(std::string(100000, 'a'), {"aaaa"}), std::nullopt);
}

}  // namespace
}  // namespace mcpdb
