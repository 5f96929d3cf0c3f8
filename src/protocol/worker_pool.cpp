#include "protocol/worker_pool.hpp"

namespace mcpdb::protocol {

WorkerPool::WorkerPool(std::size_t threads, std::size_t max_queue)
    : max_queue_(max_queue), capacity_(threads) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  shutdown();
}

bool WorkerPool::trySubmit(CallJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // At most `threads` running plus `max_queue` waiting.
    if (stopping_ || queue_.size() + busy_ >= max_queue_ + capacity_) return false;
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

bool WorkerPool::tryAcquireSlot() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || busy_ >= capacity_ || !queue_.empty()) return false;
  ++busy_;
  return true;
}

void WorkerPool::releaseSlot() {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    --busy_;
    wake = !queue_.empty();
  }
  if (wake) cv_.notify_one();  // a queued job may have been waiting for this slot
}

bool WorkerPool::submitHolding(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return false;
    holding_.push_back(std::move(work));
  }
  cv_.notify_one();
  return true;
}

std::size_t WorkerPool::busy() const {
  std::lock_guard<std::mutex> lock(mu_);
  return busy_;
}

std::size_t WorkerPool::queued() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void WorkerPool::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void WorkerPool::run() {
  for (;;) {
    CallJob job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // A queued job waits while inline jobs hold every slot (tryAcquireSlot); work that holds
      // its slot already does not.
      cv_.wait(lock, [this] {
        return stopping_ || !holding_.empty() || (!queue_.empty() && busy_ < capacity_);
      });
      if (!holding_.empty()) {
        std::function<void()> work = std::move(holding_.front());
        holding_.pop_front();
        lock.unlock();
        work();
        continue;
      }
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    job(nullptr);  // a worker has nothing else to do while the call waits
    std::lock_guard<std::mutex> lock(mu_);
    --busy_;
  }
}

}  // namespace mcpdb::protocol
