// Child processes for the benchmark: spawn a server with pipes, read its resident memory, stop it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace mcpdb::bench {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int in_fd = -1;   // our end of the child's stdin (-1 when the child reads /dev/null)
  int out_fd = -1;  // our end of the child's stdout (-1 when not captured)
};

struct SpawnOptions {
  bool pipe_stdio = true;  // false: stdin/stdout are /dev/null (an HTTP server)
  std::string stderr_path = "/dev/null";
};

// Starts argv[0] (PATH lookup) with the given options; throws on failure to fork/pipe.
Child spawnChild(const std::vector<std::string>& argv, const SpawnOptions& options);

// Closes our pipe ends, sends SIGTERM to the child's process group, waits up to `grace`, then
// SIGKILL.
void stopChild(Child& child, std::chrono::milliseconds grace);

struct Memory {
  long rss_kb = 0;  // VmRSS summed over the process and its descendants
  long hwm_kb = 0;  // VmHWM (peak RSS) summed likewise
  int processes = 0;
};

// Resident memory of `pid` and every descendant (a launcher script plus its real server count).
Memory processTreeMemory(pid_t pid);

// Nanoseconds between two time points.
inline long long nanosBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

}  // namespace mcpdb::bench
