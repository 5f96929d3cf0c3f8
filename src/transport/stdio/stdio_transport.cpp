#include "transport/stdio/stdio_transport.hpp"

#include <poll.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <string_view>
#include <thread>
#include <vector>

#include "common/call_waits.hpp"
#include "common/signals.hpp"
#include "protocol/fiber_call.hpp"
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

using Clock = std::chrono::steady_clock;

// Leader/follower readers with a run-to-completion loop, written by hand: no Debian library offers
// the pattern over a pipe.
//
// One reader thread at a time, the leader, polls stdin and handles each line. A tools/call of a
// tool that honours its runner's waits (Tool::honours_waits), once it has a worker-pool slot,
// runs on a fiber of the leader (common/fiber.hpp): the call runs until it would wait for its
// database, where it suspends (CallWaits::wait) and the leader goes on reading and running the
// other calls; one poll() watches stdin, the signal pipe and every suspended call's socket, and
// a call is resumed when its socket is ready or its wait's time has passed. A call, from reading
// it to writing its answer, stays on the one thread, and the thread sleeps only when every call
// it holds waits and no input is there: at concurrency 8 the server no longer pays a thread wake
// per call. A call that must block in another way (opening a connection, the proof, the guard's
// parser thread) hands on first (CallWaits::handOn): its fiber is suspended and resumed on a
// worker of the pool (WorkerPool::submitHolding, with the slot it holds), where it blocks and
// ends, while the leader reads on.
//
// Calls of other tools are not run on fibers: the leader hands the reading role to an idle
// follower and runs the call itself when one is idle and a pool slot is free, or the call goes
// to the worker pool. Either way the pool's thread count bounds concurrent calls
// (WorkerPool::tryAcquireSlot), and reading (pings, cancellations) never waits for a database.
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
      // Nobody leads until every reader waits, so that the first plain call already finds an
      // idle follower (otherwise it goes to the worker pool; on a loaded machine a reader thread
      // can take milliseconds to first run).
      std::unique_lock<std::mutex> lock(mu_);
      stopped_cv_.wait(lock, [this] { return stopped_ || started_ == readers_; });
      leader_taken_ = false;
      leader_cv_.notify_one();
      stopped_cv_.wait(lock, [this] { return stopped_; });
      reason = reason_;
    }
    // Calls still running end here (the caller drains the session; the readers drive the calls
    // on fibers to their end meanwhile).
    if (options_.on_stop) options_.on_stop(reason);
    for (auto& t : threads) t.join();
    session_.setDispatch(nullptr);
    return reason;
  }

 private:
  static constexpr std::size_t kChunk = 65536;

  // A call on a fiber, and where it waits while suspended.
  struct Task : protocol::FiberCall {
    Task(protocol::CallJob job, protocol::WorkerPool& pool)
        : FiberCall(
              std::move(job),
              [this](int fd, short events, int timeout_ms) {
                beginWait(fd, events, timeout_ms);
                suspend();
                return wait.revents;
              },
              pool) {}
  };

  // A reader thread: waits to lead, leads until it hands the role on, and waits again. Once
  // reading has stopped and no call is left on a fiber, every reader ends.
  void follow() {
    std::unique_lock<std::mutex> lock(mu_);
    // Held until the wait below, so run() sees every reader waiting once they all started.
    if (++started_ == readers_) stopped_cv_.notify_all();
    for (;;) {
      ++idle_;
      leader_cv_.wait(lock, [this] { return drained_ || !leader_taken_; });
      --idle_;
      if (drained_) return;
      leader_taken_ = true;
      lock.unlock();
      lead();
      lock.lock();
    }
  }

  // Gives the reading role (and the calls on fibers) to a waiting follower, or to the next reader
  // that comes back.
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
    // Called only from handleText, that is on the leader.
    if (honours) {
      if (!pool_.tryAcquireSlot()) return pool_.trySubmit(std::move(job));
      starting_.push_back(std::make_shared<Task>(std::move(job), pool_));
      return true;
    }
    bool follower = false;
    if (!taken_) {
      std::lock_guard<std::mutex> lock(mu_);
      follower = idle_ > 0 && !stopped_;
    }
    if (follower && pool_.tryAcquireSlot()) {
      taken_ = std::move(job);
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

  // As the leader: starts the calls taken, handles what was read, reads more and resumes calls
  // whose waits are over, until it hands the role on (or, once reading stopped, no call is left).
  void lead() {
    for (;;) {
      while (!starting_.empty()) {
        std::shared_ptr<Task> t = std::move(starting_.front());
        starting_.pop_front();
        runTask(std::move(t));
      }
      if (taken_) {
        // A plain call: another reader leads while this thread runs it.
        protocol::CallJob job = std::move(taken_);
        taken_ = nullptr;
        handOff();
        job(nullptr);
        pool_.releaseSlot();
        return;
      }
      const bool reading = !stopping();
      if (reading && pos_ < len_) {
        handleNextPiece();
        continue;
      }
      if (!reading && waiting_.empty()) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          drained_ = true;
        }
        leader_cv_.notify_all();
        return;
      }
      if (reading && out_->broken()) {
        stop(StopReason::OutputClosed);
        continue;
      }
      if (!pollOnce(reading)) return;
    }
  }

  // Runs a call on its fiber until it suspends or ends. A call that must block in a way it
  // cannot sleep through its waits (CallWaits::handOn) goes on on a worker, holding its slot,
  // while this thread keeps the reading role and the other calls (protocol::FiberCall).
  void runTask(std::shared_ptr<Task> t) {
    if (protocol::FiberCall::run(t) == protocol::FiberCall::After::Waiting) {
      waiting_.push_back(std::move(t));
    }
  }

  // One poll() of stdin and the signal pipe (while reading) and of every suspended call; then
  // reads, and resumes each call whose wait is over. False when this thread no longer leads.
  bool pollOnce(bool reading) {
    fds_.clear();
    if (reading) {
      fds_.push_back({options_.in_fd, POLLIN, 0});
      if (options_.signal_fd >= 0) fds_.push_back({options_.signal_fd, POLLIN, 0});
    }
    const std::size_t first_task = fds_.size();
    int timeout = 1000;
    for (const auto& t : waiting_) {
      fds_.push_back({t->wait.fd, t->wait.events, 0});
      timeout = std::min(timeout, pollTimeout(t->wait.until, timeout));
    }
    const int r = ::poll(fds_.data(), fds_.size(), timeout);
    if (r < 0) {
      if (errno == EINTR) return true;
      stop(StopReason::ReadError);
      for (auto& f : fds_) f.revents = 0;  // the calls' own deadlines still end their waits
    }
    if (reading && options_.signal_fd >= 0 && (fds_[1].revents & POLLIN) != 0) {
      char sig = 0;
      bool terminate = false;
      bool reload = false;
      while (::read(options_.signal_fd, &sig, 1) == 1) {
        if (sig == static_cast<char>(SignalKind::Reload)) {
          reload = true;
        } else {
          terminate = true;
        }
      }
      if (terminate) {
        stop(StopReason::Signal);
      } else if (reload && on_reload_) {
        // A reload may take a while: another reader leads (and resumes the calls) meanwhile.
        handOff();
        on_reload_();
        return false;
      }
    }
    if (reading && !stopping() && (fds_[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      readInput();
    }
    // The calls whose wait is over, out of the waiting list first (a call resumed may suspend
    // again), then resumed in the order they suspended.
    const Clock::time_point now = Clock::now();
    for (std::size_t i = 0; i < waiting_.size(); ++i) {
      waiting_[i]->wait.revents = fds_[first_task + i].revents;
    }
    protocol::takeOver(waiting_, ready_,
                       [now](const Task& t) { return t.wait.revents != 0 || now >= t.wait.until; });
    for (auto& t : ready_) runTask(std::move(t));
    ready_.clear();
    return true;
  }

  void readInput() {
    const ssize_t n = ::read(options_.in_fd, chunk_.get(), kChunk);
    if (n < 0) {
      if (errno != EINTR && errno != EAGAIN) stop(StopReason::ReadError);
      return;
    }
    if (n == 0) {
      // EOF: a final unterminated line is still a message (a call it makes still runs).
      if (!discarding_ && !buffer_.empty()) session_.handleText(buffer_, out_);
      buffer_.clear();
      stop(StopReason::EndOfInput);
      return;
    }
    pos_ = 0;
    len_ = static_cast<std::size_t>(n);
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
  bool drained_ = false;  // reading stopped and no call is left on a fiber: every reader ends
  StopReason reason_ = StopReason::EndOfInput;

  // The leader's state: touched only by the thread that leads, handed over under mu_.
  std::unique_ptr<char[]> chunk_;
  std::size_t pos_ = 0;      // the next unhandled byte of chunk_
  std::size_t len_ = 0;      // bytes of chunk_ read
  std::string buffer_;       // a line split across reads
  bool discarding_ = false;  // inside an over-long line: drop bytes until its newline
  protocol::CallJob taken_;  // a plain call the leader took to run itself
  std::deque<std::shared_ptr<Task>> starting_;  // calls taken to run on fibers, not started yet
  std::vector<std::shared_ptr<Task>> waiting_;  // calls on fibers, suspended
  std::vector<pollfd> fds_;                     // pollOnce's scratch
  std::vector<std::shared_ptr<Task>> ready_;    // ... and the calls it resumes
};

}  // namespace

StopReason runStdio(protocol::Session& session, const std::shared_ptr<FdOutbox>& out,
                    const StdioOptions& options, const std::function<void()>& on_reload) {
  Readers readers(session, out, options, on_reload);
  return readers.run();
}

}  // namespace mcpdb::transport
