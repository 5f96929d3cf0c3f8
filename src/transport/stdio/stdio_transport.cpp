#include "transport/stdio/stdio_transport.hpp"

#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "common/signals.hpp"
#include "protocol/jsonrpc.hpp"

namespace mcpdb::transport {

void FdOutbox::send(const Json& message) {
  sendSerialized(protocol::serialize(message), true);
}

void FdOutbox::sendSerialized(std::string text, bool /*response*/) {
  static char newline = '\n';
  iovec iov[2] = {{text.data(), text.size()}, {&newline, 1}};
  int first = 0;  // the first iovec not yet fully written
  std::lock_guard<std::mutex> lock(mu_);
  if (broken_) return;
  while (first < 2) {
    const ssize_t n = ::writev(fd_, iov + first, 2 - first);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd_, POLLOUT, 0};
        ::poll(&p, 1, 1000);
        continue;
      }
      broken_ = true;  // EPIPE: the client went away
      return;
    }
    auto done = static_cast<std::size_t>(n);
    while (first < 2 && done >= iov[first].iov_len) {
      done -= iov[first].iov_len;
      ++first;
    }
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
}

bool FdOutbox::broken() const {
  std::lock_guard<std::mutex> lock(mu_);
  return broken_;
}

StopReason runStdio(protocol::Session& session, const std::shared_ptr<FdOutbox>& out,
                    const StdioOptions& options, const std::function<void()>& on_reload) {
  std::string buffer;
  bool discarding = false;  // inside an over-long line: drop bytes until its newline
  char chunk[65536];
  for (;;) {
    if (out->broken()) return StopReason::OutputClosed;
    pollfd fds[2] = {{options.in_fd, POLLIN, 0}, {options.signal_fd, POLLIN, 0}};
    const int nfds = options.signal_fd >= 0 ? 2 : 1;
    const int r = ::poll(fds, nfds, 1000);
    if (r < 0) {
      if (errno == EINTR) continue;
      return StopReason::ReadError;
    }
    if (nfds == 2 && (fds[1].revents & POLLIN) != 0) {
      char sig = 0;
      bool terminate = false;
      while (::read(options.signal_fd, &sig, 1) == 1) {
        if (sig == static_cast<char>(SignalKind::Reload)) {
          if (on_reload) on_reload();
        } else {
          terminate = true;
        }
      }
      if (terminate) return StopReason::Signal;
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const ssize_t n = ::read(options.in_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return StopReason::ReadError;
    }
    if (n == 0) {
      // EOF: a final unterminated line is still a message.
      if (!discarding && !buffer.empty()) session.handleText(buffer, out);
      return StopReason::EndOfInput;
    }
    std::string_view data(chunk, static_cast<std::size_t>(n));
    while (!data.empty()) {
      const auto nl = data.find('\n');
      const std::string_view piece = data.substr(0, nl);
      if (discarding) {
        if (nl != std::string_view::npos) discarding = false;
      } else if (buffer.size() + piece.size() > options.max_line_bytes) {
        out->send(protocol::makeErrorResponse(
            nullptr, protocol::rpc::kInvalidRequest,
            "message exceeds the " + std::to_string(options.max_line_bytes) + "-byte limit"));
        buffer.clear();
        discarding = nl == std::string_view::npos;
      } else if (buffer.empty() && nl != std::string_view::npos) {
        // The usual case, a whole line inside this read: handled in place, not copied.
        std::string_view line = piece;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") != std::string_view::npos) session.handleText(line, out);
      } else {
        buffer.append(piece);
        if (nl != std::string_view::npos) {
          if (!buffer.empty() && buffer.back() == '\r') buffer.pop_back();
          if (buffer.find_first_not_of(" \t") != std::string::npos) session.handleText(buffer, out);
          buffer.clear();
        }
      }
      if (nl == std::string_view::npos) break;
      data.remove_prefix(nl + 1);
    }
  }
}

}  // namespace mcpdb::transport
