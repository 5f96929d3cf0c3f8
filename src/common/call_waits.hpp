#pragma once
// What the thread running a call owes whoever runs it, while the call waits.
//
// A runner may run a call on a thread that has other work of its own: the stdio transport, for
// example, runs a call on the reader thread that read it, keeping that thread's reading role
// rather than waking another reader for every call. It can do so only for a call that promises
// (Tool::honours_waits) to
//   - add fds() to every poll() it sleeps in, and call handOn() as soon as one of them is
//     readable (the runner's other work has arrived: for stdio, the next message or a signal);
//   - call handOn() before it blocks in any other way (a lock or condition variable it sleeps on,
//     a connection it opens, a library call that waits on its own).
// handOn() passes the runner's other work on (once), and from then on the call is an ordinary
// one: fds() is empty and handOn() does nothing. A call that never waits, or whose waits end
// before anything arrives, never hands on, and its thread goes back to the runner's work when it
// ends. The call context carries a CallWaits only when the runner offers one (protocol::CallContext
// ::waits; null on the worker pool and over HTTP).
#include <array>
#include <cstddef>
#include <functional>
#include <span>

namespace mcpdb {

class CallWaits {
 public:
  // Watches `fds` (each -1 is left out) until `hand_on` has run.
  CallWaits(std::array<int, 2> fds, std::function<void()> hand_on);
  CallWaits(const CallWaits&) = delete;
  CallWaits& operator=(const CallWaits&) = delete;

  // The descriptors whose input ends a sleep early; empty once handed on.
  std::span<const int> fds() const { return {fds_.data(), count_}; }
  // Passes the runner's other work on: runs the hook the first time, nothing after.
  void handOn();
  // Whether handOn() has run.
  bool handedOn() const { return handed_on_; }

 private:
  std::array<int, 2> fds_{-1, -1};
  std::size_t count_ = 0;  // of fds_, in use
  bool handed_on_ = false;
  std::function<void()> hand_on_;
};

// handOn() on `waits` when there are any (an engine's shorthand before a wait it cannot watch).
inline void handOn(CallWaits* waits) {
  if (waits != nullptr) waits->handOn();
}

}  // namespace mcpdb
