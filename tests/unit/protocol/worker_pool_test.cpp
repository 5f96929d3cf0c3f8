// WorkerPool (protocol/worker_pool.hpp): the slot cap holds for pooled and inline jobs alike, and
// work that already holds a slot (a stdio call moved off a reader's fiber) runs on a worker even
// when every slot is held and the queue is full; once the pool shuts down it is refused.
#include "protocol/worker_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace mcpdb::protocol {
namespace {

using namespace std::chrono_literals;

TEST(WorkerPool, HoldingWorkRunsWhenEverySlotIsHeldAndTheQueueIsFull) {
  WorkerPool pool(2, 1);
  ASSERT_TRUE(pool.tryAcquireSlot());
  ASSERT_TRUE(pool.tryAcquireSlot());
  EXPECT_FALSE(pool.tryAcquireSlot()) << "more slots than threads";
  std::atomic<bool> queued_ran{false};
  ASSERT_TRUE(pool.trySubmit([&](CallWaits*) { queued_ran = true; }));  // waits for a slot
  EXPECT_FALSE(pool.trySubmit([](CallWaits*) {})) << "the queue holds one";
  std::promise<std::thread::id> ran_on;
  ASSERT_TRUE(pool.submitHolding([&] {
    ran_on.set_value(std::this_thread::get_id());
    pool.releaseSlot();  // the work ends its own slot
  }));
  auto f = ran_on.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready) << "holding work waited for a slot";
  EXPECT_NE(f.get(), std::this_thread::get_id());
  // Its slot given back, the queued job runs.
  for (int i = 0; i < 500 && !queued_ran; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(queued_ran.load());
  EXPECT_EQ(pool.busy(), 1U);  // the first slot, still held
  pool.releaseSlot();
  pool.shutdown();
  EXPECT_FALSE(pool.submitHolding([] { ADD_FAILURE() << "ran after shutdown"; }));
}

TEST(WorkerPool, ShutdownRunsTheHoldingWorkAlreadySubmitted) {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(1, 0);
    ASSERT_TRUE(pool.tryAcquireSlot());
    ASSERT_TRUE(pool.tryAcquireSlot() == false);
    ASSERT_TRUE(pool.submitHolding([&] {
      std::this_thread::sleep_for(50ms);
      ++ran;
      pool.releaseSlot();
    }));
    pool.shutdown();
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(pool.busy(), 0U);
  }
}

}  // namespace
}  // namespace mcpdb::protocol
