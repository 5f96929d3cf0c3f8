// CallWaits (common/call_waits.hpp): a wait goes through the runner's suspend until the call hands
// on, and through poll() after; the hand-on hook runs once whatever the number of hand-ons and
// whoever asks again from the hook.
#include "common/call_waits.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <vector>

namespace mcpdb {
namespace {

struct Pipe {
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

TEST(CallWaits, WaitsGoThroughTheRunnerUntilHandedOn) {
  std::vector<int> asked;  // fd, events, timeout of each suspend
  CallWaits waits(
      [&](int fd, short events, int timeout_ms) {
        asked.insert(asked.end(), {fd, events, timeout_ms});
        return static_cast<int>(POLLIN);
      },
      [] {});
  EXPECT_TRUE(waits.suspends());
  EXPECT_EQ(waits.wait(42, POLLIN, 250), POLLIN);
  EXPECT_EQ(asked, (std::vector<int>{42, POLLIN, 250}));
  EXPECT_EQ(waitFor(&waits, 43, POLLOUT, 7), POLLIN);
  EXPECT_EQ(asked.size(), 6U);
  // Handed on: the call sleeps in poll() itself; the runner is not asked again.
  waits.handOn();
  EXPECT_FALSE(waits.suspends());
  Pipe p;
  EXPECT_EQ(waits.wait(p.fds[0], POLLIN, 20), 0) << "nothing to read: the time passed";
  ASSERT_EQ(::write(p.fds[1], "x", 1), 1);
  EXPECT_NE(waits.wait(p.fds[0], POLLIN, 1000) & POLLIN, 0);
  EXPECT_EQ(asked.size(), 6U) << "a handed-on call went through its runner";
}

TEST(CallWaits, WithoutWaitsOrASuspendTheCallPollsItself) {
  Pipe p;
  ASSERT_EQ(::write(p.fds[1], "x", 1), 1);
  EXPECT_NE(waitFor(nullptr, p.fds[0], POLLIN, 1000) & POLLIN, 0);
  CallWaits plain(nullptr, [] {});
  EXPECT_FALSE(plain.suspends());
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(plain.wait(p.fds[1], POLLIN, 30), 0);  // the write end never has input
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(25));
}

TEST(CallWaits, HandsOnOnce) {
  int runs = 0;
  CallWaits waits([](int, short, int) { return 0; }, [&] { ++runs; });
  EXPECT_FALSE(waits.handedOn());
  waits.handOn();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(waits.handedOn());
  waits.handOn();
  handOn(&waits);
  EXPECT_EQ(runs, 1) << "the runner's work was handed on twice";
}

// The hook may run code that looks at the call's waits again (a wait further down the call's
// path): it already finds them handed on, and a hand-on from inside the hook does nothing.
TEST(CallWaits, TheHookSeesTheWaitsHandedOn) {
  int runs = 0;
  bool handed_on_inside = false;
  bool suspends_inside = true;
  CallWaits* self = nullptr;
  CallWaits waits([](int, short, int) { return 0; },
                  [&] {
                    ++runs;
                    handed_on_inside = self->handedOn();
                    suspends_inside = self->suspends();
                    self->handOn();
                  });
  self = &waits;
  waits.handOn();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(handed_on_inside);
  EXPECT_FALSE(suspends_inside);
}

TEST(CallWaits, PollTimeoutsRoundUpAndAreCapped) {
  const auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(pollTimeout(now - std::chrono::milliseconds(5), 100), 0) << "already passed";
  // 0.3 ms away is 1 ms, not 0 (a poll(0) would return before the time and spin).
  EXPECT_EQ(pollTimeout(std::chrono::steady_clock::now() + std::chrono::microseconds(300), 100), 1);
  const int ms = pollTimeout(std::chrono::steady_clock::now() + std::chrono::milliseconds(40), 100);
  EXPECT_GE(ms, 39);
  EXPECT_LE(ms, 40);
  EXPECT_EQ(pollTimeout(std::chrono::steady_clock::now() + std::chrono::hours(1), 100), 100);
  EXPECT_EQ(pollTimeout(std::chrono::steady_clock::time_point::max(), 1000), 1000);
}

TEST(CallWaits, NoWaitsMeansNothingToHandOn) {
  handOn(nullptr);  // a call its runner offered nothing: nothing happens
  CallWaits hookless(nullptr, nullptr);
  hookless.handOn();
  EXPECT_TRUE(hookless.handedOn());
}

}  // namespace
}  // namespace mcpdb
