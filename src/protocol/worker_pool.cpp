#include "protocol/worker_pool.hpp"

namespace mcpdb::protocol {

WorkerPool::WorkerPool(std::size_t threads, std::size_t max_queue) : max_queue_(max_queue) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  shutdown();
}

bool WorkerPool::trySubmit(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // At most `threads` running plus `max_queue` waiting.
    if (stopping_ || queue_.size() + busy_ >= max_queue_ + threads_.size()) return false;
    queue_.push_back(std::move(job));
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
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    job();
    std::lock_guard<std::mutex> lock(mu_);
    --busy_;
  }
}

}  // namespace mcpdb::protocol
