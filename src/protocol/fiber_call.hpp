#pragma once
// A call on a fiber of the thread that read it (common/fiber.hpp), with the CallWaits it sleeps
// through: what the stdio readers (transport/stdio) and the HTTP I/O threads
// (transport/http/call_fibers.hpp) share. The runner supplies how a wait suspends the call (it
// records what the call waits for, then calls suspend()) and resumes the call, with run(), once
// that wait is over. A call that hands on (CallWaits::handOn) is moved by run() to a worker of
// the pool, still holding the slot it took (WorkerPool::tryAcquireSlot), and never comes back.
#include <memory>

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

 private:
  CallJob job_;
  CallWaits waits_;
  WorkerPool& pool_;
  std::unique_ptr<Fiber> fiber_;
  bool started_ = false;
  bool moving_ = false;  // it handed on: run() moves it to a worker
};

}  // namespace mcpdb::protocol
