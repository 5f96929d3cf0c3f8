#pragma once
// A call's own stack, so that one thread can hold many calls that wait for their databases and
// run each as soon as its answer arrives (the run-to-completion loops of the stdio readers and of
// the HTTP I/O threads). A fiber runs only when a thread resumes it, until it suspends itself or
// ends; no two threads run it at once, but successive resumes may come from different threads
// (the reading role, and with it the suspended calls, passes between the stdio reader threads; a
// call that must block goes on on a worker). Code that runs across such a move must not keep what
// it derived from the thread it started on: glibc declares pthread_self() and errno's address
// const, so the compiler may reuse one read before the move (read errno only right after the call
// that set it; ask the kernel for the thread, as the tests do, where the thread matters).
//
// The context switch is Boost.Context's (Debian libboost-context-dev: fcontext, a few
// instructions, no system call). What is ours: the pool of stacks (mapped once, with a guard page
// below each, reused across calls) and the AddressSanitizer annotations of every switch, which
// Debian's Boost.Context is not built with (without them ASan reports false stack errors when a
// fiber throws).
#include <cstddef>
#include <functional>
#include <memory>

namespace mcpdb {

class Fiber {
 public:
  // The body runs on the fiber's stack from the first resume(). It must not let an exception
  // escape (the process terminates) and must not block in ways its runner has not agreed to.
  explicit Fiber(std::function<void()> body);
  ~Fiber();  // a fiber that has started must have ended
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Runs the fiber on the calling thread until it suspends or ends.
  void resume();
  // Inside the fiber: back to the resume() that ran it.
  void suspend();
  bool done() const { return done_; }

  // The size of each fiber's stack (what a thread gets by default on Linux): a call's stack depth
  // is the same as on a worker thread. Only the pages a call touches are ever backed by memory.
  static constexpr std::size_t kStackBytes = 8u << 20;

 private:
  struct State;
  std::unique_ptr<State> state_;
  bool done_ = false;
};

}  // namespace mcpdb
