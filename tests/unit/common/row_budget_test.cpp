#include "common/row_budget.hpp"

#include <gtest/gtest.h>

namespace mcpdb {
namespace {

std::uint64_t dumpedSize(const Json& row) {
  return row.dump(-1, ' ', false, Json::error_handler_t::replace).size();
}

// Rows whose serialised size is easy to get wrong: escapes, non-ASCII, invalid UTF-8 (replaced,
// so it grows), doubles, nesting.
std::vector<Json> awkwardRows() {
  return {Json{{"a", 1}},
          Json{{"text", "q\"b\\s\n\t\x01 caf\xc3\xa9"}},
          Json{{"bad", "\xff\xfe\xc3"}},
          Json{{"d", 0.1}, {"e", 1e300}, {"f", -0.0}, {"g", 123456789012345678ULL}},
          Json{{"nested", {{"arr", {1, "two", nullptr, true}}}}},
          Json::array({"x", 2.5})};
}

TEST(RowBudget, CountsExactlyTheSerialisedBytes) {
  std::uint64_t total = 0;
  RowBudget budget(Limits{100, 1000000, std::chrono::seconds(1)});
  for (const auto& row : awkwardRows()) {
    ASSERT_TRUE(budget.add(row));
    total += dumpedSize(row) + 1;
    EXPECT_EQ(budget.bytes(), total);
  }
}

TEST(RowBudget, ByteCapIsExactAtTheBoundary) {
  for (const auto& row : awkwardRows()) {
    const std::uint64_t need = dumpedSize(row) + 1;
    RowBudget fits(Limits{10, need, std::chrono::seconds(1)});
    EXPECT_TRUE(fits.add(row)) << row;
    EXPECT_FALSE(fits.truncated());
    RowBudget short_by_one(Limits{10, need - 1, std::chrono::seconds(1)});
    EXPECT_FALSE(short_by_one.add(row)) << row;
    EXPECT_TRUE(short_by_one.truncated());
    EXPECT_NE(short_by_one.note().find("max_bytes"), std::string::npos);
  }
}

TEST(RowBudget, RowCapStopsAndSaysSo) {
  RowBudget budget(Limits{2, 1000000, std::chrono::seconds(1)});
  EXPECT_TRUE(budget.add(Json{{"a", 1}}));
  EXPECT_TRUE(budget.add(Json{{"a", 2}}));
  EXPECT_FALSE(budget.add(Json{{"a", 3}}));
  EXPECT_EQ(budget.rows(), 2u);
  EXPECT_NE(budget.note().find("max_rows"), std::string::npos);
  EXPECT_EQ(budget.takeRows().size(), 2u);
}

// admits(): a lower bound of the next row's size, checked before the row is built, refuses it
// exactly when even that bound cannot fit; the truncation is then reported as add() would.
TEST(RowBudget, AdmitsChecksALowerBoundBeforeTheRowIsBuilt) {
  RowBudget budget(Limits{10, 100, std::chrono::seconds(1)});
  EXPECT_TRUE(budget.admits(100));
  ASSERT_TRUE(budget.add(Json{{"a", "0123456789"}}));  // 17 + 1 bytes
  EXPECT_TRUE(budget.admits(100 - budget.bytes()));
  EXPECT_FALSE(budget.truncated());
  EXPECT_FALSE(budget.admits(100 - budget.bytes() + 1));
  EXPECT_TRUE(budget.truncated());
  EXPECT_NE(budget.note().find("max_bytes"), std::string::npos);
  EXPECT_EQ(budget.rows(), 1u);
  // Once truncated, nothing more is admitted or added.
  EXPECT_FALSE(budget.admits(0));
  EXPECT_FALSE(budget.add(Json{{"a", 1}}));
}

TEST(RowBudget, AdmitsStopsAtTheRowCap) {
  RowBudget budget(Limits{1, 1000, std::chrono::seconds(1)});
  ASSERT_TRUE(budget.add(Json{{"a", 1}}));
  EXPECT_FALSE(budget.admits(0));
  EXPECT_NE(budget.note().find("max_rows"), std::string::npos);
}

}  // namespace
}  // namespace mcpdb
