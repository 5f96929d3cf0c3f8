#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "common/call_waits.hpp"

namespace mcpdb::protocol {

// A call's work as its runner runs it: `waits` is what the runner offers the call while it waits
// (common/call_waits.hpp), null when the runner has no other work (a pool worker).
using CallJob = std::function<void(CallWaits* waits)>;

// A fixed pool of threads with a bounded queue, so slow tool calls never block the reader
// (ping, cancellation) and a flood of calls is refused instead of queued without bound.
class WorkerPool {
 public:
  WorkerPool(std::size_t threads, std::size_t max_queue);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False when the queue is full or the pool is shutting down. A worker runs `job(nullptr)`.
  bool trySubmit(CallJob job);
  // Takes one of the pool's slots for a job the caller runs on its own thread (the stdio reader
  // that read a call runs it itself: see transport/stdio). Inline jobs count against the same
  // cap as pooled ones, so `threads` stays the bound on concurrent calls. False when every slot
  // is busy, work is queued, or the pool is shutting down; releaseSlot() ends a taken slot.
  bool tryAcquireSlot();
  void releaseSlot();
  // Runs `work` on a worker for a job that already holds a slot (tryAcquireSlot): a call on a
  // stdio reader's fiber that must block moves here (transport/stdio). Never refused while the
  // pool runs, whatever the queue: the slot bounds it, and calls holding slots never outnumber
  // the workers. `work` releases the slot itself. False once the pool is shutting down (the caller
  // runs it).
  bool submitHolding(std::function<void()> work);
  // Stops accepting work, runs what is queued, joins the threads.
  void shutdown();
  std::size_t threads() const { return threads_.size(); }
  // Workers running a job now, and jobs waiting for one (metrics gauges).
  std::size_t busy() const;
  std::size_t queued() const;

 private:
  void run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<CallJob> queue_;
  std::deque<std::function<void()>> holding_;  // submitHolding's work, run before the queue
  std::size_t max_queue_;
  std::size_t capacity_;  // the thread count, fixed before any thread starts
  std::size_t busy_ = 0;  // jobs running, on a worker or inline
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mcpdb::protocol
