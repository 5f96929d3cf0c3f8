#pragma once
// A bulkhead per source (issue #28): the calls one source (a database, an account, a cluster) may
// have running or queued at once, server-wide. A call takes its source's slot before it takes a
// worker or a queue slot, and is refused at once (resource_exhausted) when its source holds all of
// its own, so a source that accepts connections and never answers can tie up only its own share of
// the workers: calls to every other source keep running. Counted over every session, key, batch
// and transport, since the slots live in the one ServerCore.

#include <atomic>
#include <cstddef>
#include <string>

namespace mcpdb::protocol {

class Bulkhead {
 public:
  // `limit` is at least 1 (a source with no slot could never be called).
  Bulkhead(std::string name, std::size_t limit);
  Bulkhead(const Bulkhead&) = delete;
  Bulkhead& operator=(const Bulkhead&) = delete;

  // One held slot, given back when destroyed or release()d; empty when none was free.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { release(); }
    explicit operator bool() const { return owner_ != nullptr; }
    void release();

   private:
    friend class Bulkhead;
    explicit Slot(Bulkhead* owner) : owner_(owner) {}
    Bulkhead* owner_ = nullptr;
  };

  // A slot, or an empty one when `limit()` are held; never more than `limit()` at once.
  Slot tryAcquire();

  // The bulkhead's name as the operator wrote it ("postgres source reports"): config, not hosts.
  const std::string& name() const { return name_; }
  std::size_t limit() const { return limit_; }
  std::size_t inUse() const { return in_use_.load(std::memory_order_relaxed); }

 private:
  std::string name_;
  std::size_t limit_;
  std::atomic<std::size_t> in_use_{0};
};

}  // namespace mcpdb::protocol
