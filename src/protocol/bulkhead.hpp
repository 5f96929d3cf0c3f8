#pragma once
// A bulkhead per source (issue #28): the calls one source (a database, an account, a cluster) may
// have running at once, server-wide. A call takes its source's slot before it takes a worker or a
// queue slot; when its source holds all of its own, the call waits in that source's own bounded
// FIFO queue (holding no worker) until a slot is handed to it, its deadline passes or it is
// cancelled. So a source that accepts connections and never answers can tie up only its own
// share of the workers: calls to every other source keep running. Counted over every session,
// key, batch and transport, since the slots live in the one ServerCore.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace mcpdb::protocol {

// One thread running jobs at given times, for the bulkheads' waiting calls: a waiter whose
// deadline passes is answered although no slot ever frees (a hung source), and a cancelled waiter
// is answered off the thread that cancelled it (which may hold a session's lock).
class WaitTimer {
 public:
  using Clock = std::chrono::steady_clock;
  using Key = std::pair<Clock::time_point, std::uint64_t>;

  WaitTimer();
  // Runs the jobs already due (a posted refusal is still delivered), drops later ones, joins.
  ~WaitTimer();
  WaitTimer(const WaitTimer&) = delete;
  WaitTimer& operator=(const WaitTimer&) = delete;

  // Runs `job` on the timer's thread at `when` (at once when it has passed).
  Key at(Clock::time_point when, std::function<void()> job);
  // As soon as possible, after the jobs already due.
  void post(std::function<void()> job) { at(Clock::now(), std::move(job)); }
  // A job not yet started never runs (one running or done: nothing).
  void cancel(const Key& key);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::function<void()>> jobs_;
  std::uint64_t next_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

class Bulkhead {
 public:
  using Clock = std::chrono::steady_clock;

  // `limit` is at least 1 (a source with no slot could never be called). At most `max_waiting`
  // calls wait for a slot (0: none, a call over the limit is refused at once); waiting needs a
  // `timer` (none: nobody waits), which must outlive the bulkhead.
  Bulkhead(std::string name, std::size_t limit, std::size_t max_waiting = 0,
           WaitTimer* timer = nullptr);
  // Refuses every call still waiting (Refusal::Closed).
  ~Bulkhead();
  Bulkhead(const Bulkhead&) = delete;
  Bulkhead& operator=(const Bulkhead&) = delete;

  // One held slot, given back when destroyed or release()d (to the first waiter, if any); empty
  // when none was free.
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

  // Why a waiting call got no slot.
  enum class Refusal { TimedOut, Cancelled, Closed };
  // A call waiting for a slot, told exactly once: `granted` with its slot, on the thread that gave
  // the slot back, or `refused`, on the timer's thread (on the closing thread for Closed). Both
  // run with no lock of the bulkhead held.
  struct Waiter {
    std::function<void(Slot)> granted;
    std::function<void(Refusal)> refused;
  };
  using Ticket = std::uint64_t;
  // What acquireOrWait did: a slot at once, or a place in the queue (ticket != 0), or neither
  // (the queue is full, or the bulkhead closed).
  struct Admission {
    Slot slot;
    Ticket ticket = 0;
  };

  // A slot when one is free and nobody waits for one (no barging past the queue); never more than
  // `limit()` at once. Lock-free.
  Slot tryAcquire();
  // A slot at once, or `waiter` queued (moved from only then) until a slot is handed to it or
  // `deadline` passes.
  Admission acquireOrWait(Clock::time_point deadline, Waiter& waiter);
  // Ends a wait: the waiter is refused (Cancelled) on the timer's thread; nothing when it already
  // got its slot or its answer. Safe under the caller's own locks.
  void cancel(Ticket ticket);
  // Refuses every waiting call (Closed) and queues no more (shutdown).
  void close();

  // The bulkhead's name as the operator wrote it ("postgres source reports"): config, not hosts.
  const std::string& name() const { return name_; }
  std::size_t limit() const { return limit_; }
  std::size_t maxWaiting() const { return max_waiting_; }
  std::size_t inUse() const { return held(state_.load(std::memory_order_relaxed)); }
  std::size_t waiting() const { return waiters(state_.load(std::memory_order_relaxed)); }

 private:
  // The state is one word so that a release sees at once whether anyone waits: the low half
  // counts held slots, the high half waiters. The waiter count changes only under `mu_`, and
  // while anyone waits every slot is held (a release hands its slot on instead of freeing it).
  static constexpr std::uint64_t kWaiter = std::uint64_t{1} << 32;
  static std::size_t held(std::uint64_t s) { return static_cast<std::size_t>(s & (kWaiter - 1)); }
  static std::size_t waiters(std::uint64_t s) { return static_cast<std::size_t>(s >> 32); }

  void release();
  void expire(Ticket ticket);
  // Gives a slot to `waiter` (its granted() call), trampolined so that a waiter that drops its
  // slot at once hands it on without recursing through the queue.
  void handOff(Waiter waiter);

  struct Queued {
    Waiter waiter;
    WaitTimer::Key deadline;
  };

  std::string name_;
  std::size_t limit_;
  std::size_t max_waiting_;
  WaitTimer* timer_;
  std::atomic<std::uint64_t> state_{0};
  std::mutex mu_;
  std::map<Ticket, Queued> queue_;  // FIFO: tickets rise
  Ticket next_ticket_ = 1;
  bool closed_ = false;
};

}  // namespace mcpdb::protocol
