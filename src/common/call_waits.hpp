#pragma once
// What the thread running a call owes whoever runs it, while the call waits.
//
// A runner may run many calls on one thread: the stdio transport runs each call of a tool that
// honours its runner's waits (Tool::honours_waits) on a fiber of the reader thread that read it,
// and the HTTP transport on a fiber of the I/O thread that read its request (common/fiber.hpp,
// transport/http/call_fibers.hpp); while one call waits for its database that thread reads the
// next message and runs other calls. It can do so only for a call that promises to
//   - sleep only through wait() (waitFor()): for input on a descriptor, with a timeout; the
//     runner suspends the call there and resumes it when the descriptor is ready or the time has
//     passed, running its other work meanwhile;
//   - call handOn() before it blocks in any other way (a lock or condition variable it sleeps on,
//     a connection it opens, a library call that waits on its own).
// handOn() frees the runner's thread for its other work (once: the stdio transport moves the call
// to a worker), and from then on the call is an ordinary one on a thread of its own: wait()
// sleeps in poll() itself, and handOn() does nothing. A call that never blocks otherwise never
// hands on, and the runner's thread goes on to its other work when the call ends. The call context
// carries a CallWaits only when the runner offers one (protocol::CallContext::waits; null on the
// worker pool).
#include <chrono>
#include <functional>

namespace mcpdb {

class CallWaits {
 public:
  // Suspends the call until `fd` has one of `events` or `timeout_ms` (-1: no limit) has passed;
  // returns the descriptor's revents (0: the time passed), or -1 with errno set.
  using Suspend = std::function<int(int fd, short events, int timeout_ms)>;

  CallWaits(Suspend suspend, std::function<void()> hand_on);
  CallWaits(const CallWaits&) = delete;
  CallWaits& operator=(const CallWaits&) = delete;

  // Sleeps as described above: through the runner until handed on, in poll() after.
  int wait(int fd, short events, int timeout_ms);
  // Whether wait() still suspends through the runner (not yet handed on).
  bool suspends() const { return !handed_on_ && static_cast<bool>(suspend_); }
  // Passes the runner's other work on: runs the hook the first time, nothing after.
  void handOn();
  // Whether handOn() has run.
  bool handedOn() const { return handed_on_; }

 private:
  bool handed_on_ = false;
  Suspend suspend_;
  std::function<void()> hand_on_;
};

// handOn() on `waits` when there are any (an engine's shorthand before a wait it cannot watch).
inline void handOn(CallWaits* waits) {
  if (waits != nullptr) waits->handOn();
}

// waits->wait(), or poll() on `fd` alone when the runner offered no waits.
int waitFor(CallWaits* waits, int fd, short events, int timeout_ms);

// A poll() timeout: the milliseconds from now until `until`, rounded up (a wait that ends early
// only to find the time not yet passed would spin), at most `cap`; 0 once it has passed.
int pollTimeout(std::chrono::steady_clock::time_point until, int cap);

}  // namespace mcpdb
