#include "protocol/fiber_call.hpp"

#include <functional>
#include <utility>

namespace mcpdb::protocol {

FiberCall::FiberCall(CallJob job, CallWaits::Suspend suspend, WorkerPool& pool)
    : job_(std::move(job)),
      waits_(std::move(suspend),
             [this] {
               moving_ = true;  // run() moves the call to a worker, which resumes it there
               fiber_->suspend();
             }),
      pool_(pool),
      fiber_(std::make_unique<Fiber>([this] { job_(&waits_); })) {}

FiberCall::~FiberCall() {
  // Only when a runner goes away with the call still suspended (an I/O thread at shutdown, past
  // every bound): its stack is left as it is (fiber.hpp: a suspended fiber must not be destroyed;
  // the process is exiting).
  if (started_ && !fiber_->done()) (void)fiber_.release();
}

void FiberCall::beginWait(int fd, short events, int timeout_ms) {
  wait.fd = fd;
  wait.events = events;
  wait.until = timeout_ms < 0
                   ? std::chrono::steady_clock::time_point::max()
                   : std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  wait.revents = 0;
}

FiberCall::After FiberCall::run(const std::shared_ptr<FiberCall>& call) {
  call->started_ = true;
  call->fiber_->resume();
  if (call->fiber_->done()) {
    call->pool_.releaseSlot();
    return After::Ended;
  }
  if (!call->moving_) return After::Waiting;
  // A handed-on call never suspends again: on the worker it runs to its end.
  std::function<void()> work = [call] {
    call->fiber_->resume();
    call->pool_.releaseSlot();
  };
  if (!call->pool_.submitHolding(work)) work();  // the pool is stopping: finished here
  return After::Moved;
}

}  // namespace mcpdb::protocol
