#include "common/memory_budget.hpp"

#include <algorithm>

namespace mcpdb {

std::optional<MemoryBudget::Reservation> MemoryBudget::tryReserve(std::uint64_t bytes) {
  bytes = std::min(bytes, total_);
  std::lock_guard<std::mutex> lock(mu_);
  if (used_ + bytes > total_) return std::nullopt;
  used_ += bytes;
  return Reservation(this, bytes);
}

std::uint64_t MemoryBudget::inUse() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_;
}

void MemoryBudget::release(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  used_ -= std::min(bytes, used_);
}

}  // namespace mcpdb
