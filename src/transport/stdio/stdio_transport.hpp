#pragma once
// MCP's stdio transport: newline-delimited JSON-RPC on the given fds (stdin/stdout); logs never
// go to stdout. Each message is written whole under a lock, so nothing is ever half-written.

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "protocol/session.hpp"

namespace mcpdb::transport {

class FdOutbox : public protocol::Outbox {
 public:
  explicit FdOutbox(int fd) : fd_(fd) {}
  void send(const Json& message) override;
  // Writes `text` and its newline with one writev under the lock: never half-written, never
  // interleaved with another message.
  void sendSerialized(std::string text, bool response) override;
  bool broken() const;

 private:
  int fd_;
  mutable std::mutex mu_;
  bool broken_ = false;
};

enum class StopReason { EndOfInput, Signal, OutputClosed, ReadError };

struct StdioOptions {
  int in_fd = 0;
  int out_fd = 1;
  int signal_fd = -1;  // from installSignalPipe(); -1 for none
  std::size_t max_line_bytes = std::size_t{4} * 1024 * 1024;
  // Reader threads (at least 2). The leader runs the calls of tools that honour their runner's
  // waits on fibers of its own thread (stdio_transport.cpp), and hands its role to an idle one
  // to run any other call itself, or when a call must block; otherwise the call goes to the
  // pool. Three keep one idle at concurrency 1 even while the last call's reader is finishing.
  std::size_t readers = 3;
  // Runs once when reading stops, while calls taken by readers may still be running: drain the
  // session here. runStdio returns after it, once every reader thread has ended.
  std::function<void(StopReason)> on_stop;
};

// Reads messages until EOF or a terminate signal, dispatching each line to `session`.
// SIGHUP bytes are passed to `on_reload` if set.
StopReason runStdio(protocol::Session& session, const std::shared_ptr<FdOutbox>& out,
                    const StdioOptions& options, const std::function<void()>& on_reload = nullptr);

}  // namespace mcpdb::transport
