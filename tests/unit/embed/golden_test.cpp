// Token ids and vectors against the JS reference (golden.json, written by make_golden.mjs).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "test_model.hpp"

namespace mcpdb::embed {
namespace {

using testing::embedder;
using testing::loadError;
using testing::loadGolden;

constexpr double kTolerance = 1e-4;

TEST(EmbedGolden, HasEnoughCases) {
  Json g = loadGolden();
  ASSERT_FALSE(g.is_discarded()) << "tests/unit/embed/golden.json is missing or invalid";
  EXPECT_GE(g["cases"].size(), 20u);
}

TEST(EmbedGolden, TokenIdsMatchReference) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  Json g = loadGolden();
  ASSERT_FALSE(g.is_discarded());
  for (const Json& c : g["cases"]) {
    auto ids = embedder()->tokenizer().encode(c["text"].get<std::string>());
    ASSERT_TRUE(ids.ok()) << ids.error().message;
    EXPECT_EQ(*ids, c["ids"].get<std::vector<std::int32_t>>()) << "case " << c["name"];
  }
}

TEST(EmbedGolden, VectorsMatchReference) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  Json g = loadGolden();
  ASSERT_FALSE(g.is_discarded());
  std::vector<std::string> texts;
  for (const Json& c : g["cases"]) texts.push_back(c["text"].get<std::string>());

  // Once as one batch, once a text at a time: both must match the reference.
  auto batch = embedder()->embed(texts);
  ASSERT_TRUE(batch.ok()) << batch.error().message;
  ASSERT_EQ(batch->size(), texts.size());
  double maxDiff = 0;
  std::string worst;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const Json& c = g["cases"][i];
    const auto want = c["vector"].get<std::vector<double>>();
    auto single = embedder()->embedOne(texts[i]);
    ASSERT_TRUE(single.ok()) << single.error().message;
    for (const auto* got : {&(*batch)[i], &*single}) {
      ASSERT_EQ(got->size(), want.size()) << c["name"];
      double norm = 0;
      for (std::size_t j = 0; j < want.size(); ++j) {
        const double d = std::abs(static_cast<double>((*got)[j]) - want[j]);
        if (d > maxDiff) {
          maxDiff = d;
          worst = c["name"].get<std::string>();
        }
        EXPECT_LE(d, kTolerance) << "case " << c["name"] << " component " << j;
        norm += static_cast<double>((*got)[j]) * (*got)[j];
      }
      EXPECT_NEAR(norm, 1.0, 1e-5) << c["name"];
    }
  }
  std::cout << "[ embed    ] max |C++ - reference| = " << maxDiff << " (case " << worst << ")\n";
  ::testing::Test::RecordProperty("max_abs_diff", std::to_string(maxDiff));
}

}  // namespace
}  // namespace mcpdb::embed
