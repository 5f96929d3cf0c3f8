#include "protocol/bulkhead.hpp"

#include <algorithm>
#include <deque>
#include <vector>

namespace mcpdb::protocol {

// ---- WaitTimer -------------------------------------------------------------------------------

WaitTimer::WaitTimer() : thread_([this] { run(); }) {}

WaitTimer::~WaitTimer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

WaitTimer::Key WaitTimer::at(Clock::time_point when, std::function<void()> job) {
  bool earliest = false;
  Key key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    key = Key{when, next_++};
    earliest = jobs_.empty() || key < jobs_.begin()->first;
    jobs_.emplace(key, std::move(job));
  }
  if (earliest) cv_.notify_one();
  return key;
}

void WaitTimer::cancel(const Key& key) {
  std::function<void()> dropped;  // destroyed after the lock: it may own anything
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = jobs_.find(key); it != jobs_.end()) {
    dropped = std::move(it->second);
    jobs_.erase(it);
  }
}

void WaitTimer::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const auto now = Clock::now();
    if (jobs_.empty() || jobs_.begin()->first.first > now) {
      if (stopping_) return;  // what is due ran; later jobs are dropped
      if (jobs_.empty()) {
        cv_.wait(lock);
      } else {
        const Clock::time_point next = jobs_.begin()->first.first;  // a copy: cancel() may erase it
        cv_.wait_until(lock, next);
      }
      continue;
    }
    std::function<void()> job = std::move(jobs_.begin()->second);
    jobs_.erase(jobs_.begin());
    lock.unlock();
    job();
    job = nullptr;  // whatever it owned goes before the lock is taken again
    lock.lock();
  }
}

// ---- Bulkhead --------------------------------------------------------------------------------

Bulkhead::Bulkhead(std::string name, std::size_t limit, std::size_t max_waiting, WaitTimer* timer)
    : name_(std::move(name)),
      // The held count has half a word.
      limit_(std::clamp<std::size_t>(limit, 1, kWaiter / 2)),
      max_waiting_(timer != nullptr ? std::min<std::size_t>(max_waiting, kWaiter / 2) : 0),
      timer_(timer) {}

Bulkhead::~Bulkhead() {
  close();
}

Bulkhead::Slot Bulkhead::tryAcquire() {
  std::uint64_t s = state_.load(std::memory_order_relaxed);
  do {
    if (waiters(s) != 0 || held(s) >= limit_) return Slot();
  } while (!state_.compare_exchange_weak(s, s + 1, std::memory_order_acquire,
                                         std::memory_order_relaxed));
  return Slot(this);
}

Bulkhead::Admission Bulkhead::acquireOrWait(Clock::time_point deadline, Waiter& waiter) {
  Admission admission;
  admission.slot = tryAcquire();
  if (admission.slot || max_waiting_ == 0) return admission;
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return admission;
  // Under the lock the waiter count is ours to change; a slot may still free meanwhile (a
  // release that saw nobody waiting), and then this call takes it instead of queueing.
  std::uint64_t s = state_.load(std::memory_order_relaxed);
  for (;;) {
    if (waiters(s) == 0 && held(s) < limit_) {
      if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        admission.slot = Slot(this);
        return admission;
      }
      continue;
    }
    if (waiters(s) >= max_waiting_) return admission;  // full
    if (state_.compare_exchange_weak(s, s + kWaiter, std::memory_order_acq_rel,
                                     std::memory_order_relaxed))
      break;
  }
  const Ticket ticket = next_ticket_++;
  const WaitTimer::Key key = timer_->at(deadline, [this, ticket] { expire(ticket); });
  queue_.emplace(ticket, Queued{std::move(waiter), key});
  admission.ticket = ticket;
  return admission;
}

void Bulkhead::release() {
  std::uint64_t s = state_.load(std::memory_order_relaxed);
  while (waiters(s) == 0) {
    if (state_.compare_exchange_weak(s, s - 1, std::memory_order_release,
                                     std::memory_order_relaxed))
      return;
  }
  // Someone waits: the slot goes to the first in the queue, still held (no thundering herd, and
  // no newcomer can take it meanwhile: tryAcquire refuses while anyone waits).
  Waiter next;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) {
      // The last waiter left (expired, cancelled) between the look and the lock.
      state_.fetch_sub(1, std::memory_order_release);
      return;
    }
    auto first = queue_.begin();
    next = std::move(first->second.waiter);
    timer_->cancel(first->second.deadline);
    queue_.erase(first);
    state_.fetch_sub(kWaiter, std::memory_order_acq_rel);
  }
  handOff(std::move(next));
}

void Bulkhead::handOff(Waiter waiter) {
  // Slots handed on while a granted() runs on this thread wait here, so a granted() that drops its
  // slot (the pool refused its job) does not recurse once per waiter.
  thread_local std::deque<std::pair<Bulkhead*, Waiter>>* pending = nullptr;
  if (pending != nullptr) {
    pending->emplace_back(this, std::move(waiter));
    return;
  }
  std::deque<std::pair<Bulkhead*, Waiter>> queue;
  queue.emplace_back(this, std::move(waiter));
  struct Scope {
    explicit Scope(std::deque<std::pair<Bulkhead*, Waiter>>* q) { pending = q; }
    ~Scope() { pending = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  } scope(&queue);
  while (!queue.empty()) {
    auto [owner, next] = std::move(queue.front());
    queue.pop_front();
    next.granted(Slot(owner));
  }
}

void Bulkhead::expire(Ticket ticket) {
  Waiter expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = queue_.find(ticket);
    if (it == queue_.end()) return;  // handed a slot or cancelled first
    expired = std::move(it->second.waiter);
    queue_.erase(it);
    state_.fetch_sub(kWaiter, std::memory_order_acq_rel);
  }
  expired.refused(Refusal::TimedOut);
}

void Bulkhead::cancel(Ticket ticket) {
  Waiter cancelled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = queue_.find(ticket);
    if (it == queue_.end()) return;
    cancelled = std::move(it->second.waiter);
    timer_->cancel(it->second.deadline);
    queue_.erase(it);
    state_.fetch_sub(kWaiter, std::memory_order_acq_rel);
  }
  // The caller may hold a lock the answer takes (a session cancelling under its own): the
  // refusal runs on the timer's thread, and the waiter (whatever it owns) goes there with it.
  auto shared = std::make_shared<Waiter>(std::move(cancelled));
  timer_->post([shared] {
    Waiter waiter = std::move(*shared);
    waiter.refused(Refusal::Cancelled);
  });
}

void Bulkhead::close() {
  std::map<Ticket, Queued> waiting;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    waiting.swap(queue_);
    for (const auto& [ticket, queued] : waiting) timer_->cancel(queued.deadline);
    state_.fetch_sub(kWaiter * waiting.size(), std::memory_order_acq_rel);
  }
  for (auto& [ticket, queued] : waiting) queued.waiter.refused(Refusal::Closed);
}

Bulkhead::Slot& Bulkhead::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
  }
  return *this;
}

void Bulkhead::Slot::release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->release();
}

}  // namespace mcpdb::protocol
