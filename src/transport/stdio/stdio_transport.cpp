#include "transport/stdio/stdio_transport.hpp"

#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <string_view>
#include <thread>
#include <vector>

#include "common/call_waits.hpp"
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

namespace {

// Leader/follower readers, written by hand: no Debian library offers the pattern over a pipe.
//
// One reader thread at a time, the leader, polls stdin and handles each line. A tools/call that
// passed admission is not queued for a worker: the leader hands the reading role to an idle
// follower and runs the call itself, so no thread has to be woken between reading a call and
// running it. When no follower is idle or every worker-pool slot is taken, the call goes to the
// worker pool as before; either way reading (pings, cancellations) never waits for a call, and
// the pool's thread count stays the bound on concurrent calls (WorkerPool::tryAcquireSlot).
//
// A call of a tool that honours its runner's waits (Tool::honours_waits), read when nothing else
// is buffered, is run without handing the role on first: its context carries a CallWaits
// (common/call_waits.hpp) of stdin and the signal pipe, which the call watches while it sleeps,
// and whose hand-on passes the reading role to another reader when either has something to read,
// or before the call blocks otherwise. A call that ends first leaves its thread
// leading, so a client that waits for each answer before its next call wakes no other reader at
// all (one wake-up and two context switches less per call).
class Readers {
 public:
  Readers(protocol::Session& session, std::shared_ptr<FdOutbox> out, const StdioOptions& options,
          const std::function<void()>& on_reload)
      : session_(session),
        pool_(session.core().pool()),
        out_(std::move(out)),
        options_(options),
        on_reload_(on_reload),
        readers_(std::max<std::size_t>(2, options.readers)),
        chunk_(new char[kChunk]) {}

  StopReason run() {
    session_.setDispatch(
        [this](protocol::CallJob& job, bool honours) { return dispatch(job, honours); });
    std::vector<std::thread> threads;
    threads.reserve(readers_);
    for (std::size_t i = 0; i < readers_; ++i) threads.emplace_back([this] { follow(); });
    StopReason reason;
    {
      // Nobody leads until every reader waits, so that the first call already finds an idle
      // follower (otherwise it goes to the worker pool; on a loaded machine a reader thread can
      // take milliseconds to first run).
      std::unique_lock<std::mutex> lock(mu_);
      stopped_cv_.wait(lock, [this] { return stopped_ || started_ == readers_; });
      leader_taken_ = false;
      leader_cv_.notify_one();
      stopped_cv_.wait(lock, [this] { return stopped_; });
      reason = reason_;
    }
    // Calls that readers are still running end here (the caller drains the session).
    if (options_.on_stop) options_.on_stop(reason);
    for (auto& t : threads) t.join();
    session_.setDispatch(nullptr);
    return reason;
  }

 private:
  static constexpr std::size_t kChunk = 65536;

  // A reader thread: waits to lead, leads until it takes a call or reading stops, then runs the
  // call it took (a follower leads meanwhile, or, for a call that honours its waits, once it hands
  // the role on) and waits to lead again (or, when it never handed the role on, leads on).
  void follow() {
    std::unique_lock<std::mutex> lock(mu_);
    // Held until the wait below, so run() sees every reader waiting once they all started.
    if (++started_ == readers_) stopped_cv_.notify_all();
    for (;;) {
      ++idle_;
      leader_cv_.wait(lock, [this] { return stopped_ || !leader_taken_; });
      --idle_;
      if (stopped_) return;
      leader_taken_ = true;
      lock.unlock();
      while (leadAndRun()) {
      }
      lock.lock();
    }
  }

  // Leads until a call is taken or reading stops, and runs the call. True when this thread still
  // holds the reading role afterwards (a call that honoured its waits and never handed it on).
  bool leadAndRun() {
    lead();
    protocol::CallJob job = std::move(taken_);
    taken_ = nullptr;
    const bool honours = taken_honours_;
    taken_honours_ = false;
    // Only when nothing read is left unhandled: bytes already in the buffer would not wake a poll.
    if (!job || !honours || pos_ < len_ || !buffer_.empty() || discarding_ || stopping()) {
      handOff();
      if (job) {
        job(nullptr);
        pool_.releaseSlot();
      }
      return false;
    }
    CallWaits waits({options_.in_fd, options_.signal_fd}, [this] { handOff(); });
    job(&waits);
    pool_.releaseSlot();
    if (waits.handedOn()) return false;
    if (stopping()) {
      handOff();
      return false;
    }
    return true;
  }

  // Gives the reading role to a waiting follower (or to the next reader that comes back).
  void handOff() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      leader_taken_ = false;
    }
    leader_cv_.notify_one();
  }

  bool stopping() {
    std::lock_guard<std::mutex> lock(mu_);
    return stopped_;
  }

  bool dispatch(protocol::CallJob& job, bool honours) {
    // Called only from handleText, that is on the leader. One call is taken per turn; the rest
    // of a batch goes to the pool.
    bool follower = false;
    if (!taken_) {
      std::lock_guard<std::mutex> lock(mu_);
      follower = idle_ > 0 && !stopped_;
    }
    if (follower && pool_.tryAcquireSlot()) {
      taken_ = std::move(job);
      taken_honours_ = honours;
      return true;
    }
    return pool_.trySubmit(std::move(job));
  }

  void stop(StopReason reason) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopped_) reason_ = reason;
      stopped_ = true;
    }
    leader_cv_.notify_all();
    stopped_cv_.notify_all();
  }

  // As the leader: handles what was read, reads more, until a call was taken or reading stopped.
  void lead() {
    for (;;) {
      while (pos_ < len_) {
        handleNextPiece();
        if (taken_) return;
      }
      if (out_->broken()) return stop(StopReason::OutputClosed);
      pollfd fds[2] = {{options_.in_fd, POLLIN, 0}, {options_.signal_fd, POLLIN, 0}};
      const int nfds = options_.signal_fd >= 0 ? 2 : 1;
      const int r = ::poll(fds, nfds, 1000);
      if (r < 0) {
        if (errno == EINTR) continue;
        return stop(StopReason::ReadError);
      }
      if (nfds == 2 && (fds[1].revents & POLLIN) != 0) {
        char sig = 0;
        bool terminate = false;
        while (::read(options_.signal_fd, &sig, 1) == 1) {
          if (sig == static_cast<char>(SignalKind::Reload)) {
            if (on_reload_) on_reload_();
          } else {
            terminate = true;
          }
        }
        if (terminate) return stop(StopReason::Signal);
      }
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(options_.in_fd, chunk_.get(), kChunk);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        return stop(StopReason::ReadError);
      }
      if (n == 0) {
        // EOF: a final unterminated line is still a message (a call it makes still runs).
        if (!discarding_ && !buffer_.empty()) session_.handleText(buffer_, out_);
        buffer_.clear();
        return stop(StopReason::EndOfInput);
      }
      pos_ = 0;
      len_ = static_cast<std::size_t>(n);
    }
  }

  // Consumes one line (or the rest of the read, when it holds no newline) from the chunk.
  void handleNextPiece() {
    const std::string_view data(chunk_.get() + pos_, len_ - pos_);
    const auto nl = data.find('\n');
    const std::string_view piece = data.substr(0, nl);
    // Consumed before handling, so that the next leader goes on after this line.
    pos_ += nl == std::string_view::npos ? data.size() : nl + 1;
    if (discarding_) {
      if (nl != std::string_view::npos) discarding_ = false;
    } else if (buffer_.size() + piece.size() > options_.max_line_bytes) {
      out_->send(protocol::makeErrorResponse(
          nullptr, protocol::rpc::kInvalidRequest,
          "message exceeds the " + std::to_string(options_.max_line_bytes) + "-byte limit"));
      buffer_.clear();
      discarding_ = nl == std::string_view::npos;
    } else if (buffer_.empty() && nl != std::string_view::npos) {
      // The usual case, a whole line inside this read: handled in place, not copied. The chunk
      // is not read into again before handleText returns (only a leader reads, and leadership
      // passes on after it returns).
      std::string_view line = piece;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.find_first_not_of(" \t") != std::string_view::npos) session_.handleText(line, out_);
    } else {
      buffer_.append(piece);
      if (nl != std::string_view::npos) {
        if (!buffer_.empty() && buffer_.back() == '\r') buffer_.pop_back();
        if (buffer_.find_first_not_of(" \t") != std::string::npos) {
          session_.handleText(buffer_, out_);
        }
        buffer_.clear();
      }
    }
  }

  protocol::Session& session_;
  protocol::WorkerPool& pool_;
  std::shared_ptr<FdOutbox> out_;
  const StdioOptions& options_;
  const std::function<void()>& on_reload_;

  std::mutex mu_;
  std::condition_variable leader_cv_;   // followers wait to lead
  std::condition_variable stopped_cv_;  // run() waits for every reader to start, then the end
  bool leader_taken_ = true;            // until run() has seen every reader wait
  std::size_t idle_ = 0;                // followers waiting to lead
  const std::size_t readers_;           // reader threads run() starts
  std::size_t started_ = 0;             // ... that reached their first wait
  bool stopped_ = false;
  StopReason reason_ = StopReason::EndOfInput;

  // The leader's state: touched only by the thread that leads, handed over under mu_.
  std::unique_ptr<char[]> chunk_;
  std::size_t pos_ = 0;         // the next unhandled byte of chunk_
  std::size_t len_ = 0;         // bytes of chunk_ read
  std::string buffer_;          // a line split across reads
  bool discarding_ = false;     // inside an over-long line: drop bytes until its newline
  protocol::CallJob taken_;     // the call the leader took to run itself
  bool taken_honours_ = false;  // ... and its tool honours its runner's waits
};

}  // namespace

StopReason runStdio(protocol::Session& session, const std::shared_ptr<FdOutbox>& out,
                    const StdioOptions& options, const std::function<void()>& on_reload) {
  Readers readers(session, out, options, on_reload);
  return readers.run();
}

}  // namespace mcpdb::transport
