// SideTask: work a stop callback starts runs on a thread of its own (the caller returns at once),
// only once, and its owner waits for it.
#include "common/side_task.hpp"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mcpdb {
namespace {

using namespace std::chrono_literals;

pid_t threadNow() {
  return static_cast<pid_t>(::syscall(SYS_gettid));
}

TEST(SideTask, RunsElsewhereAndTheCallerReturnsAtOnce) {
  std::atomic<bool> release{false};
  std::atomic<pid_t> ran_on{0};
  SideTask task;
  EXPECT_FALSE(task.running());
  const auto t0 = std::chrono::steady_clock::now();
  task.start([&] {
    ran_on = threadNow();
    while (!release) std::this_thread::sleep_for(1ms);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 200ms);
  EXPECT_TRUE(task.running());
  release = true;
  task.join();
  EXPECT_FALSE(task.running());
  EXPECT_NE(ran_on.load(), 0);
  EXPECT_NE(ran_on.load(), threadNow());
}

TEST(SideTask, OnlyTheFirstStartRuns) {
  std::atomic<int> runs{0};
  SideTask task;
  task.start([&] { ++runs; });
  task.start([&] { runs += 10; });
  task.join();
  EXPECT_EQ(runs.load(), 1);
}

TEST(SideTask, TheOwnerWaitsForTheWork) {
  std::atomic<bool> done{false};
  {
    SideTask task;
    task.start([&] {
      std::this_thread::sleep_for(100ms);
      done = true;
    });
  }
  EXPECT_TRUE(done);
}

TEST(SideTask, NeverStartedJoinsAtOnce) {
  SideTask task;
  task.join();
  EXPECT_FALSE(task.running());
}

}  // namespace
}  // namespace mcpdb
