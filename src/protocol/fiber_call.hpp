#pragma once
// A call on a fiber of the thread that read it (common/fiber.hpp), with the CallWaits it sleeps
// through: what the stdio readers (transport/stdio) and the HTTP I/O threads
// (transport/http/call_fibers.hpp) share. The runner supplies how a wait suspends the call (it
// records what the call waits for, then calls suspend()) and resumes the call, with run(), once
// that wait is over. A call that hands on (CallWaits::handOn) is moved by run() to a worker of
// the pool, still holding the slot it took (WorkerPool::tryAcquireSlot), and never comes back.
#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "common/call_waits.hpp"
#include "common/fiber.hpp"
#include "protocol/worker_pool.hpp"

namespace mcpdb::protocol {

class FiberCall {
 public:
  // `suspend` runs on the fiber when the call waits (CallWaits::Suspend) and must end by calling
  // suspend(); the call holds one of `pool`'s slots, given back when it ends.
  FiberCall(CallJob job, CallWaits::Suspend suspend, WorkerPool& pool);
  virtual ~FiberCall();
  FiberCall(const FiberCall&) = delete;
  FiberCall& operator=(const FiberCall&) = delete;

  enum class After {
    Ended,    // the call is over and its slot given back
    Waiting,  // suspended in a wait: the runner resumes it with run() when the wait is over
    Moved,    // it must block: it goes on on a worker (or, when the pool is stopping, ended here)
  };
  // Runs `call` on the calling thread until it suspends, ends or hands on.
  static After run(const std::shared_ptr<FiberCall>& call);

  // On the fiber, inside the runner's suspend: back to the run() that resumed it.
  void suspend() { fiber_->suspend(); }
  CallWaits& waits() { return waits_; }

  // The wait the call is suspended in, as its runner's suspend records it (beginWait) and fills
  // in when it is over (revents; 0: the time passed).
  struct Wait {
    int fd = -1;
    short events = 0;
    std::chrono::steady_clock::time_point until{};  // max: no limit
    int revents = 0;
  };
  Wait wait;
  // Records a CallWaits::Suspend's arguments in `wait` (timeout_ms -1: no limit).
  void beginWait(int fd, short events, int timeout_ms);

 private:
  CallJob job_;
  CallWaits waits_;
  WorkerPool& pool_;
  std::unique_ptr<Fiber> fiber_;
  bool started_ = false;
  bool moving_ = false;  // it handed on: run() moves it to a worker
};

// Moves the calls of `waiting` for which `over(call)` holds to the end of `into`, keeping the
// order both ways (the runners resume calls in the order they suspended, and take them out of
// the waiting list first: a call resumed may wait again).
template <class Call, class Over>
void takeOver(std::vector<std::shared_ptr<Call>>& waiting, std::vector<std::shared_ptr<Call>>& into,
              Over over) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if (over(*waiting[i])) {
      into.push_back(std::move(waiting[i]));
    } else {
      if (kept != i) waiting[kept] = std::move(waiting[i]);
      ++kept;
    }
  }
  waiting.resize(kept);
}

}  // namespace mcpdb::protocol
