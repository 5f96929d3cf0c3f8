#include "common/signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>

namespace mcpdb {
namespace {

int g_pipe[2] = {-1, -1};

void onSignal(int sig) {
  const char c = sig == SIGHUP ? static_cast<char>(SignalKind::Reload)
                               : static_cast<char>(SignalKind::Terminate);
  // write() is async-signal-safe; a full pipe only means a signal is already pending.
  [[maybe_unused]] auto n = ::write(g_pipe[1], &c, 1);
}

}  // namespace

int installSignalPipe() {
  if (g_pipe[0] >= 0) return g_pipe[0];
  if (::pipe(g_pipe) != 0) return -1;
  for (int fd : g_pipe) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  struct sigaction sa {};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGHUP, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return g_pipe[0];
}

}  // namespace mcpdb
