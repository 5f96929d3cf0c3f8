#pragma once
// Keeping a stdio reader's role while its call runs (written by hand: this is the contract between
// our stdio transport and our engines, not a general facility any library offers).
//
// The stdio transport reads with leader/follower threads: the reader that read a tools/call runs
// it. Handing the reading role to another reader first costs a wake-up per call, so for a tool
// that can wait on more than its own socket (Tool::watches_input) the reader keeps the role while
// the call runs and installs a Watch for the calling thread. The tool's code then must:
//   - add the Watch's descriptors (stdin and the signal pipe) to every poll() it sleeps in, and
//     call release() as soon as one of them is readable (a ping, a cancellation, the next call or a
//     signal is waiting to be read);
//   - call release() before it blocks in any other way (waiting for a pooled connection, opening
//     one, any library call that waits on its own).
// release() hands the reading role to another reader; after it the thread is an ordinary call
// thread. A call that never waits (or whose waits end before any input arrives) keeps the role, and
// its thread goes straight back to reading when it ends. Threads without a Watch (HTTP workers, the
// worker pool, tests) see current() == nullptr and release() does nothing.
#include <array>
#include <functional>

namespace mcpdb::input_watch {

struct Watch {
  std::array<int, 2> fds{-1, -1};  // -1: unused
  std::function<void()> release;   // hands the reading role on; called at most once
};

// The calling thread's watch, or nullptr (none installed, or already released).
const Watch* current() noexcept;

// Hands the reading role on now if the calling thread holds one; otherwise does nothing.
void release();

// Installs `watch` for the calling thread until the end of the scope.
class Scope {
 public:
  explicit Scope(Watch& watch);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  const Watch* previous_;
};

}  // namespace mcpdb::input_watch
