#pragma once
// A process-wide budget of memory for results in flight. Each tool call reserves what its result
// may cost before it runs (a multiple of its byte cap: the rows as JSON, their text, the response
// line that carries the text twice) and returns it when its answer is written; a call that finds
// the budget spent is refused at once with a retryable error rather than queued, so memory stays
// bounded however many calls with large caps arrive together.
#include <cstdint>
#include <mutex>
#include <optional>

namespace mcpdb {

class MemoryBudget {
 public:
  explicit MemoryBudget(std::uint64_t total) : total_(total) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Held memory, returned when destroyed.
  class Reservation {
   public:
    Reservation(Reservation&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) {
      other.budget_ = nullptr;
    }
    Reservation& operator=(Reservation&&) = delete;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation() {
      if (budget_ != nullptr) budget_->release(bytes_);
    }
    std::uint64_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Reservation(MemoryBudget* budget, std::uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    MemoryBudget* budget_;
    std::uint64_t bytes_;
  };

  // Reserves `bytes` (at most the whole budget, so one call with a cap larger than the budget
  // still runs when nothing else holds memory); nothing when that would exceed the budget.
  std::optional<Reservation> tryReserve(std::uint64_t bytes);

  std::uint64_t total() const { return total_; }
  std::uint64_t inUse() const;

 private:
  void release(std::uint64_t bytes);

  const std::uint64_t total_;
  mutable std::mutex mu_;
  std::uint64_t used_ = 0;
};

}  // namespace mcpdb
