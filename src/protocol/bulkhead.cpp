#include "protocol/bulkhead.hpp"

#include <algorithm>
#include <utility>

namespace mcpdb::protocol {

Bulkhead::Bulkhead(std::string name, std::size_t limit)
    : name_(std::move(name)), limit_(std::max<std::size_t>(1, limit)) {}

Bulkhead::Slot Bulkhead::tryAcquire() {
  std::size_t n = in_use_.load(std::memory_order_relaxed);
  do {
    if (n >= limit_) return Slot();
  } while (!in_use_.compare_exchange_weak(n, n + 1, std::memory_order_acquire,
                                          std::memory_order_relaxed));
  return Slot(this);
}

Bulkhead::Slot& Bulkhead::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
  }
  return *this;
}

void Bulkhead::Slot::release() {
  if (owner_ != nullptr)
    std::exchange(owner_, nullptr)->in_use_.fetch_sub(1, std::memory_order_release);
}

}  // namespace mcpdb::protocol
