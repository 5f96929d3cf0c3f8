#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/handle.hpp"
#include "common/result.hpp"

namespace mcpdb {
namespace {

Result<int> parsePositive(int v) {
  if (v <= 0) return makeError(Code::InvalidArgument, "must be positive");
  return v;
}

TEST(Result, CarriesValueOrError) {
  auto good = parsePositive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  auto bad = parsePositive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Code::InvalidArgument);
  EXPECT_EQ(bad.error().message, "must be positive");
}

TEST(Result, StatusDefaultsToOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  Status f = makeError(Code::TimedOut, "late");
  EXPECT_FALSE(f.ok());
  EXPECT_EQ(codeName(f.error().code), "timed_out");
}

int g_freed = 0;
void freeInt(int* p) {
  ++g_freed;
  delete p;
}

TEST(Owned, FreesExactlyOnceAndSkipsNull) {
  g_freed = 0;
  {
    Owned<int, freeInt> a(new int(1));
    Owned<int, freeInt> b = std::move(a);
    Owned<int, freeInt> none;
  }
  EXPECT_EQ(g_freed, 1);
}

}  // namespace
}  // namespace mcpdb
