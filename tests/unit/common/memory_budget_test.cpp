#include "common/memory_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace mcpdb {
namespace {

TEST(MemoryBudget, RefusesWhatWouldExceedItAndGivesBackOnRelease) {
  MemoryBudget budget(100);
  auto a = budget.tryReserve(60);
  ASSERT_TRUE(a.has_value());
  EXPECT_FALSE(budget.tryReserve(41).has_value());
  auto b = budget.tryReserve(40);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(budget.inUse(), 100u);
  EXPECT_FALSE(budget.tryReserve(1).has_value());
  a.reset();
  EXPECT_EQ(budget.inUse(), 40u);
  EXPECT_TRUE(budget.tryReserve(60).has_value());
  EXPECT_EQ(budget.inUse(), 40u);  // that reservation was a temporary, released at once
}

// A call whose own need is larger than the whole budget runs alone, never concurrently.
TEST(MemoryBudget, ALargerNeedThanTheBudgetRunsOnlyAlone) {
  MemoryBudget budget(100);
  {
    auto big = budget.tryReserve(1000);
    ASSERT_TRUE(big.has_value());
    EXPECT_EQ(big->bytes(), 100u);
    EXPECT_FALSE(budget.tryReserve(1).has_value());
  }
  auto small = budget.tryReserve(1);
  ASSERT_TRUE(small.has_value());
  EXPECT_FALSE(budget.tryReserve(1000).has_value());
}

TEST(MemoryBudget, NeverOverCommittedUnderContention) {
  MemoryBudget budget(1000);
  std::atomic<std::uint64_t> peak{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto r = budget.tryReserve(300);
        if (!r) continue;
        const std::uint64_t now = budget.inUse();
        std::uint64_t seen = peak.load();
        while (now > seen && !peak.compare_exchange_weak(seen, now)) {
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 1000u);
  EXPECT_EQ(budget.inUse(), 0u);
}

}  // namespace
}  // namespace mcpdb
