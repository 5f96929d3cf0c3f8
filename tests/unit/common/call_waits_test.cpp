// CallWaits (common/call_waits.hpp): the descriptors a call watches until it hands on, and the
// hand-on hook, run once whatever the number of hand-ons and whoever asks again from the hook.
#include "common/call_waits.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace mcpdb {
namespace {

std::vector<int> fdsOf(const CallWaits& waits) {
  return {waits.fds().begin(), waits.fds().end()};
}

TEST(CallWaits, OffersItsDescriptorsLeavingOutUnusedOnes) {
  const CallWaits both({4, 7}, [] {});
  EXPECT_EQ(fdsOf(both), (std::vector<int>{4, 7}));
  const CallWaits first({-1, 9}, [] {});
  EXPECT_EQ(fdsOf(first), (std::vector<int>{9}));
  const CallWaits none({-1, -1}, [] {});
  EXPECT_TRUE(none.fds().empty());
  EXPECT_FALSE(none.handedOn());
}

TEST(CallWaits, HandsOnOnceAndWatchesNothingAfter) {
  int runs = 0;
  CallWaits waits({3, 5}, [&] { ++runs; });
  EXPECT_FALSE(waits.handedOn());
  waits.handOn();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(waits.handedOn());
  EXPECT_TRUE(waits.fds().empty());
  waits.handOn();
  handOn(&waits);
  EXPECT_EQ(runs, 1) << "the runner's work was handed on twice";
  EXPECT_TRUE(waits.fds().empty());
}

// The hook may run code that looks at the call's waits again (a wait further down the call's
// path): it already finds them handed on, and a hand-on from inside the hook does nothing.
TEST(CallWaits, TheHookSeesTheWaitsHandedOn) {
  int runs = 0;
  bool handed_on_inside = false;
  std::size_t fds_inside = 99;
  CallWaits* self = nullptr;
  CallWaits waits({3, -1}, [&] {
    ++runs;
    handed_on_inside = self->handedOn();
    fds_inside = self->fds().size();
    self->handOn();
  });
  self = &waits;
  waits.handOn();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(handed_on_inside);
  EXPECT_EQ(fds_inside, 0U);
}

TEST(CallWaits, NoWaitsMeansNothingToHandOn) {
  handOn(nullptr);  // a call its runner offered nothing: nothing happens
  CallWaits hookless({3, 4}, nullptr);
  hookless.handOn();
  EXPECT_TRUE(hookless.handedOn());
  EXPECT_TRUE(hookless.fds().empty());
}

}  // namespace
}  // namespace mcpdb
