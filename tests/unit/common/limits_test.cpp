// Limits combine in one place (narrowed): field by field, the tighter value wins, in either order.
#include <gtest/gtest.h>

#include "common/limits.hpp"

namespace mcpdb {
namespace {

TEST(Limits, NarrowedTakesTheTighterOfEachField) {
  const Limits tool{100, 1 << 20, std::chrono::milliseconds(5000)};
  const Limits target{25, 4 << 20, std::chrono::milliseconds(800)};
  const Limits n = narrowed(tool, target);
  EXPECT_EQ(n.max_rows, 25U);
  EXPECT_EQ(n.max_bytes, std::uint64_t{1} << 20);
  EXPECT_EQ(n.timeout, std::chrono::milliseconds(800));
  const Limits m = narrowed(target, tool);
  EXPECT_EQ(m.max_rows, n.max_rows);
  EXPECT_EQ(m.max_bytes, n.max_bytes);
  EXPECT_EQ(m.timeout, n.timeout);
  // Narrowing never raises a limit.
  const Limits same = narrowed(tool, tool);
  EXPECT_EQ(same.max_rows, tool.max_rows);
  EXPECT_EQ(same.max_bytes, tool.max_bytes);
  EXPECT_EQ(same.timeout, tool.timeout);
}

}  // namespace
}  // namespace mcpdb
