#include "proc.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

namespace mcpdb::bench {

Child spawnChild(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw std::runtime_error("empty server command");
  int in_pipe[2] = {-1, -1};
  int out_pipe[2] = {-1, -1};
  if (options.pipe_stdio &&
      (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)) {
    throw std::runtime_error("pipe failed");
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);  // own process group: stopChild signals launcher and server together
    if (options.pipe_stdio) {
      ::dup2(in_pipe[0], 0);
      ::dup2(out_pipe[1], 1);
    } else {
      const int devnull = ::open("/dev/null", O_RDWR);
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
    }
    const int err = ::open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (err >= 0) ::dup2(err, 2);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "loadgen: exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  Child c;
  c.pid = pid;
  if (options.pipe_stdio) {
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    c.in_fd = in_pipe[1];
    c.out_fd = out_pipe[0];
  }
  return c;
}

void stopChild(Child& child, std::chrono::milliseconds grace) {
  const bool had_pipes = child.in_fd >= 0;
  if (child.in_fd >= 0) ::close(child.in_fd);
  if (child.out_fd >= 0) ::close(child.out_fd);
  child.in_fd = child.out_fd = -1;
  if (child.pid <= 0) return;
  // Closing stdin lets a stdio server exit on its own; give it a moment before signalling.
  const auto start = Clock::now();
  const auto deadline = start + grace;
  const auto term_at = had_pipes ? start + grace / 4 : start;
  bool signalled = false;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(child.pid, &status, WNOHANG);
    if (r == child.pid || r < 0) break;
    if (!signalled && Clock::now() >= term_at) {
      ::kill(-child.pid, SIGTERM);
      signalled = true;
    }
    if (Clock::now() >= deadline) {
      ::kill(-child.pid, SIGKILL);
      ::waitpid(child.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(-child.pid, SIGKILL);  // any descendant left behind in the group
  child.pid = -1;
}

namespace {

long statusField(const std::string& path, const char* field) {
  std::ifstream in(path);
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0) return std::atol(line.c_str() + n);
  }
  return 0;
}

}  // namespace

Memory processTreeMemory(pid_t root) {
  // Parent links of every process, from /proc/PID/stat (field 4).
  std::multimap<pid_t, pid_t> children;
  if (DIR* d = ::opendir("/proc")) {
    while (dirent* e = ::readdir(d)) {
      const pid_t p = static_cast<pid_t>(std::atoi(e->d_name));
      if (p <= 0) continue;
      std::ifstream st("/proc/" + std::string(e->d_name) + "/stat");
      std::string all;
      std::getline(st, all);
      const auto close = all.rfind(')');
      if (close == std::string::npos) continue;
      char state = 0;
      int ppid = 0;
      if (std::sscanf(all.c_str() + close + 1, " %c %d", &state, &ppid) == 2)
        children.emplace(ppid, p);
    }
    ::closedir(d);
  }
  Memory m;
  std::vector<pid_t> todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    const std::string path = "/proc/" + std::to_string(p) + "/status";
    m.rss_kb += statusField(path, "VmRSS:");
    m.hwm_kb += statusField(path, "VmHWM:");
    ++m.processes;
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) todo.push_back(it->second);
  }
  return m;
}

}  // namespace mcpdb::bench
